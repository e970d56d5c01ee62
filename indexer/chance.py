"""A space's chance level: how well text made of the corpus's own words, but about nothing, matches it.

A cosine means little on its own. A long question scores higher against anything than a short one,
a corpus dense in one field scores any question of that field high, and each model has its own
scale. So each space measures, when its generation is written, what a question *without* an answer
scores there: word salad drawn from its own chunks, `SAMPLES` of each of `LENGTHS` words, embedded
as queries and compared with every vector of the space except the chunks its words came from. Per
number of query terms it keeps the mean and spread of the best cosine.
A hit's cosine is then read as a z-score against that (`ChanceLevel.z`): how far above chance for a
question of that length in that corpus (bench/README.md, "Abstaining").

Word salad is not a real off-topic question: its words all come from the corpus, so it is the
*hardest* question without an answer there, and a real one usually scores below it. Its own source
chunks are left out because in a small space they are most of it: a salad of two pages' words is
those pages shuffled, and compared with them it set the level so high that real questions about
them looked like chance (a shop's two pages: 4 of 5 visitors' questions abstained; bench/README.md,
"Small corpora"). In the three BEIR corpora it moves the level by at most 0.005.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from indexer.lexical import ANALYZER, language_of, query_terms

FILE = "chance.json"  # spaces/<id>/chance.json (artifacts/README.md)
VERSION = 1
# What each sample was compared with. A level without this key (written before 2026-11-28) compared
# each with its own source chunks too: it is still read (by older servers as well: the format is
# the same), and the next run that rebuilds the space measures it again.
COMPARED = "other-chunks"
# Words in a sample (a short question to a long paste), and samples of each length: short ones
# vary most (the best cosine's spread is ~0.10 at one term, ~0.04 at fifty), long ones cost most
# to embed. 3,632 words in all: 1.2 s with the local model on two cores.
LENGTHS = (1, 2, 3, 5, 8, 13, 21, 34, 55, 89)
SAMPLES = (32, 32, 32, 32, 24, 24, 24, 16, 12, 12)
SAMPLED_CHUNKS = 2000  # the word pool comes from at most this many chunks, spread over the space
SEED = 20261126  # the same corpus gives the same samples, so the same chance level
GRID_TERMS = (1, 2, 3, 5, 8, 13, 21, 34, 55, 89)  # query terms at which a level is kept (read in between by interpolation)
MIN_BIN = 8  # samples without a term needed to keep their own point
MIN_SD = 0.02  # a spread below this (a tiny corpus, a bin of near-copies) would make every z huge
REMEASURE_CHANGE = 0.1  # a space whose size moved less than this share since it was measured keeps its level
# A sample is measured only when this many chunks are left to compare it with: compared with a single
# other chunk its "best" cosine is no best of anything, and a space of two pages read every question
# against that too-low level (7 of 173 everyday questions answered, "what day is it today" among them).
MIN_COMPARED = 2

WORD = re.compile(r"\w+")


def sample_texts(chunk_texts: Iterable[str], seed: int = SEED) -> list[str]:
    """`SAMPLES` texts of each of `LENGTHS` words (pairwise), drawn with replacement from the words of
    `chunk_texts` (in proportion to how often they occur there); none when there are no words."""
    return [text for text, _ in samples(chunk_texts, seed)]


def samples(chunk_texts: Iterable[str], seed: int = SEED) -> list[tuple[str, np.ndarray]]:
    """`sample_texts`, each with the positions in `chunk_texts` of the chunks its words came from.

    Word i of the chunks read in order is found by counting, not by listing every word: a list of
    the ~600,000 words of 2,000 chunks put a 2,000-document run's peak RSS at 276-279 MB, against
    266-269 MB so (the same samples)."""
    texts = list(chunk_texts)
    starts = np.concatenate([[0], np.cumsum([sum(1 for _ in WORD.finditer(t)) for t in texts], dtype=np.int64)])
    total = int(starts[-1])
    if not total:
        return []
    rng = np.random.default_rng(seed)
    picks = [rng.integers(0, total, n) for n, count in zip(LENGTHS, SAMPLES) for _ in range(count)]
    wanted = np.unique(np.concatenate(picks))
    chunk_of = np.searchsorted(starts, wanted, side="right") - 1
    chunks, firsts = np.unique(chunk_of, return_index=True)  # `wanted` is sorted: each chunk's words are a run of it
    word: dict[int, str] = {}
    for chunk, first, last in zip(chunks, firsts, np.append(firsts[1:], len(wanted))):
        found = WORD.findall(texts[chunk])
        word.update((int(i), found[int(i - starts[chunk])]) for i in wanted[first:last])
    return [(" ".join(word[int(i)] for i in row), np.unique(np.searchsorted(starts, row, side="right") - 1)) for row in picks]


def measure(texts: Sequence[str], best_cosines: np.ndarray, vectors: int, analyzer: str = ANALYZER["name"]) -> dict:
    """The chance level of a space of `vectors` vectors, from `texts` (sample_texts) and each one's
    best cosine there, at GRID_TERMS query terms (those within the samples' range). Samples
    without a term (all function words) are their own group; over the others, the mean best cosine
    is a quadratic in log(1 + terms), never falling as terms grow, and its spread a line: fitted
    over every sample at once, a level varies far less from one draw of samples to the next than
    per-group means do (which moved the worst pair's AUROC by 0.01–0.05). In a space of a few
    chunks most samples are left out (MIN_COMPARED) and those kept may hold only one or two numbers
    of terms: the mean is then a line or a constant. With fewer than MIN_BIN samples that have a
    term the level has no points at all: a level of function words alone would read every question
    against it (bench/README.md, "How much the draw of samples matters")."""
    terms = np.array([len(query_terms(t, analyzer)) for t in texts])  # as a question's are counted, in the space's language
    best = np.asarray(best_cosines, dtype=np.float64)
    points = []
    empty, some = terms == 0, terms > 0
    if some.sum() >= MIN_BIN:
        if empty.sum() >= MIN_BIN:
            points.append([0.0, float(best[empty].mean()), float(best[empty].std())])
        degree = min(2, len(np.unique(terms[some])) - 1)
        x = np.log1p(terms[some])
        mean_fit = np.polyfit(x, best[some], degree)
        spread_fit = np.polyfit(x, np.abs(best[some] - np.polyval(mean_fit, x)) * np.sqrt(np.pi / 2), min(1, degree))  # E|r|·√(π/2) = σ for normal r
        grid = np.log1p([t for t in GRID_TERMS if terms[some].min() <= t <= terms[some].max()] or [terms[some].min()])  # none of the grid between: the fewest
        means = np.maximum.accumulate(np.maximum(np.polyval(mean_fit, grid), points[0][1] if points else -1.0))
        spreads = np.polyval(spread_fit, grid)
        points += [[float(np.expm1(x)), float(m), float(sd)] for x, m, sd in zip(grid, means, spreads)]
    points = [[round(t, 1), round(m, 5), round(max(sd, MIN_SD), 5)] for t, m, sd in points]
    level = {"version": VERSION, "compared": COMPARED, "vectors": int(vectors), "samples": len(texts), "points": points}
    language = language_of(analyzer)
    return level | ({"language": language} if language != "english" else {})


def still_valid(level: dict | None, vectors: int, analyzer: str = ANALYZER["name"]) -> bool:
    """Whether a level measured earlier still stands for a space of `vectors` vectors whose
    questions' terms `analyzer` counts (same model and chunking: the caller's to check)."""
    if not level or level.get("version") != VERSION or level.get("compared") != COMPARED or _function_words_only(level):
        return False
    if level.get("language", "english") != language_of(analyzer):  # another language counts a sample's terms otherwise
        return False
    measured = max(1, int(level["vectors"]))
    return abs(vectors - measured) / measured < REMEASURE_CHANGE


def _function_words_only(level: dict) -> bool:
    """A level whose only point is that of questions without a term: written before 2026-11-29 by a
    space of a few chunks whose kept samples held fewer than three numbers of terms. Read, it put
    every question against the level of function words, far below that of real ones: a shop of
    three chunks then answered 32 of 173 everyday questions (bench/README.md). Not served (the fixed
    calibration is), and measured again by the next run that rebuilds the space."""
    points = level.get("points") or []
    return bool(points) and all(point[0] == 0 for point in points)


def chance_level(chunk_texts: Iterable[str], embed_queries: Callable[[list[str]], np.ndarray],
                 best_cosines: Callable[[np.ndarray, list[np.ndarray]], np.ndarray], vectors: int, analyzer: str = ANALYZER["name"]) -> dict:
    """Measure a space's chance level: sample, embed as queries, find each one's best cosine among
    the chunks it was not drawn from (`best_cosines(queries, sources)`); a sample that leaves fewer
    than MIN_COMPARED of the space's `vectors` is left out, before it is embedded. A space without
    words, or of one or two chunks, gets a level without points (its relevance uses the fixed
    calibration; it is not measured again until it grows)."""
    drawn = [(text, sources) for text, sources in samples(chunk_texts) if vectors - len(sources) >= MIN_COMPARED]
    texts = [text for text, _ in drawn]
    best = best_cosines(np.asarray(embed_queries(texts), dtype=np.float32), [sources for _, sources in drawn]) if drawn else np.zeros(0)
    return measure(texts, best, vectors, analyzer)


def measure_space(space_dir: Path, dimension: int, embed_queries: Callable[[list[str]], np.ndarray], analyzer: str = ANALYZER["name"]) -> dict | None:
    """The chance level of a written space folder: words from up to SAMPLED_CHUNKS of its live
    chunks, evenly spread over its vector ids, and each sample's best cosine among its vectors."""
    from indexer.segments import open_chunks, read_layout

    layout = read_layout(space_dir)
    live = np.setdiff1d(np.arange(layout.id_space, dtype=np.int64), layout.deleted)
    stores = open_chunks(layout)
    if stores is None:  # a schema-1 space without a chunk store: only written by older versions, never measured
        return None
    picked = live[np.unique(np.linspace(0, len(live) - 1, min(len(live), SAMPLED_CHUNKS)).astype(np.int64))]
    try:
        texts = [stores.read(vid)["text"] for vid in picked.tolist()]
    finally:
        stores.close()
    return chance_level(texts, embed_queries, lambda queries, sources: _best_cosines(layout, dimension, queries, [picked[s] for s in sources]),
                        len(live), analyzer)


def _best_cosines(layout, dimension: int, queries: np.ndarray, left_out: list[np.ndarray]) -> np.ndarray:
    """Each query's best cosine among the space's live vectors but those of its `left_out` vector
    ids (-inf when none is left), exact: every segment's vectors
    read a block at a time (a flat index's array, an IVF index's lists), their pages given back as
    each block is done. Searching kept the pages of index.faiss it touched in the process's
    memory until the index closed: for 240 queries nearly all of it (a cold 2,000-document run:
    peak RSS 262-267 MB, 254-261 read so, 247-250 without measuring)."""
    import faiss

    from indexer.dense import open_index

    best = np.full(len(queries), -np.inf, dtype=np.float32)
    pairs = np.array([(int(v), q) for q, ids in enumerate(left_out) for v in ids], dtype=np.int64).reshape(-1, 2)  # (vector id, query)
    for segment in layout.segments:
        index, gone = open_index(segment.folder / "index.faiss"), layout.deleted_rows(segment)
        inside = (pairs[:, 0] >= segment.base) & (pairs[:, 0] < segment.base + segment.rows)
        skip = pairs[inside] - [segment.base, 0]  # (row of the segment, query)
        if isinstance(index, faiss.IndexFlat):
            blocks = [(faiss.rev_swig_ptr(index.get_xb(), index.ntotal * dimension).reshape(index.ntotal, dimension), None)] if index.ntotal else []
        else:
            lists = faiss.extract_index_ivf(index).invlists
            blocks = ((np.frombuffer(faiss.rev_swig_ptr(lists.get_codes(i), n * dimension * 4), dtype=np.float32).reshape(n, dimension),
                       faiss.rev_swig_ptr(lists.get_ids(i), n)) for i in range(lists.nlist) if (n := lists.list_size(i)))
        for stored, rows in blocks:
            np.maximum(best, _block_best(queries, stored, rows, gone, skip), out=best)
        del index
    return best


def _block_best(queries: np.ndarray, stored: np.ndarray, rows: np.ndarray | None, gone: np.ndarray, skip: np.ndarray,
                block: int = 8192) -> np.ndarray:
    """The best inner product of each query with `stored` (rows `rows` of the segment; None: rows
    0…), leaving out rows in `gone`, and for each (row, query) pair of `skip` that row for that
    query; `stored` lies in a read-only file mapping, whose pages are given back as each block is
    done (read again, they come back from the file)."""
    import mmap

    best = np.full(len(queries), -np.inf, dtype=np.float32)
    row_bytes, page = stored.strides[0], mmap.PAGESIZE
    for start in range(0, len(stored), block):
        stop = min(start + block, len(stored))
        scores = stored[start:stop] @ queries.T
        ids = np.arange(start, stop) if rows is None else np.asarray(rows[start:stop], dtype=np.int64)
        if len(gone):
            scores[np.isin(ids, gone)] = -np.inf
        if len(skip):
            order = np.argsort(ids)
            at = np.minimum(np.searchsorted(ids[order], skip[:, 0]), len(ids) - 1)
            found = ids[order][at] == skip[:, 0]
            scores[order[at[found]], skip[found, 1]] = -np.inf
        np.maximum(best, scores.max(axis=0), out=best)
        first = -(-(stored.ctypes.data + start * row_bytes) // page) * page  # whole pages inside the block
        last = (stored.ctypes.data + stop * row_bytes) // page * page
        if last > first:
            _madvise()(first, last - first, mmap.MADV_DONTNEED)
    return best


@lru_cache(maxsize=1)
def _madvise():
    import ctypes

    madvise = ctypes.CDLL(None, use_errno=True).madvise
    madvise.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
    return madvise


def read_level(space_dir: Path) -> dict | None:
    """A space folder's measured chance level (None when it has none: written before this existed, or nothing to measure)."""
    path = Path(space_dir) / FILE
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


@dataclass(frozen=True)
class ChanceLevel:
    """A measured level, read back: `z(cosine, terms)`."""

    x: np.ndarray  # log(1 + query terms) of each point, increasing
    mean: np.ndarray
    sd: np.ndarray

    @classmethod
    def of(cls, level: dict | None) -> ChanceLevel | None:
        if not level or level.get("version") != VERSION or not level.get("points") or _function_words_only(level):
            return None
        points = np.asarray(sorted(level["points"]), dtype=np.float64)
        return cls(np.log1p(points[:, 0]), points[:, 1], np.maximum(points[:, 2], MIN_SD))

    def z(self, cosine: float, terms: int) -> float:
        """How many chance spreads `cosine` lies above the chance mean of a question with `terms` terms."""
        x = np.log1p(terms)
        return (cosine - float(np.interp(x, self.x, self.mean))) / float(np.interp(x, self.x, self.sd))
