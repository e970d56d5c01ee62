"""Hybrid search over one generation: the code path the API, `index search` and evaluation share."""

from __future__ import annotations

import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from itertools import chain
from typing import TYPE_CHECKING

import numpy as np

from indexer.embedders import Embedder
from indexer.lexical import query_terms, words
from server.answers import AnswerHit, pick
from server.fusion import DENSE_WEIGHT, floored, fuse
from server.links import body_start, deep_link, page_span
from server.relevance import relevance, threshold
from indexer.documents import utc_naive
from server.reader import Generation, SpaceIndex
from server.snippets import readable_name, snippet

if TYPE_CHECKING:
    from server.timeparse import TimeFilter

MODES = ("hybrid", "dense", "lexical")
MIN_CANDIDATES = 100  # per retriever, before fusion and filtering to top_k
MAX_CHUNKS_PER_DOC = 2  # hits one document may take in a result, by default
SCORE_DIGITS = 6
MAX_MERGED = 3  # overlapping chunks merged into one hit, at most (a hit stays a passage, not a document)
RECENCY_HALF_LIFE_DAYS = 30  # recency_weight: a document's freshness halves every 30 days
_BM25_THREADS = ThreadPoolExecutor(max_workers=4, thread_name_prefix="bm25")  # hybrid searches' lexical halves


@dataclass(frozen=True)
class SearchFilters:
    source: str | None = None
    source_type: str | None = None
    doc_id: str | None = None
    updated_after: datetime | None = None
    updated_before: datetime | None = None
    sources: tuple[str, ...] | None = None  # the caller's scope (an API key's sources)

    def active(self) -> bool:
        return any(v is not None for v in vars(self).values())

    def as_params(self) -> dict:
        params = dict(vars(self))
        sources = params.pop("sources")
        params["scope_sources"] = list(sources) if sources is not None else None
        params["updated_after"] = utc_naive(self.updated_after)
        params["updated_before"] = utc_naive(self.updated_before)
        return params


@dataclass(frozen=True)
class SearchHit:
    chunk_id: str  # the best-scoring chunk of the hit
    doc_id: str
    title: str
    url: str | None
    path: str | None
    source: str
    heading_path: tuple[str, ...]
    text: str  # the chunk's text, or the union of overlapping chunks merged into this hit
    start: int
    end: int
    score: float  # 0–1
    dense: float | None
    lexical: float | None
    updated_at: datetime | None
    chunk_ids: tuple[str, ...] = ()  # every chunk merged into this hit, in document order
    snippet: str = ""  # HTML: the best part of `text`, query terms in <mark>
    relevance: float = 0.0  # calibrated 0–1: about this share of hits at this value are relevant
    stale: bool = False  # the space has not embedded this document's latest version yet
    link: str | None = None  # url pointed at the passage: #page=N of a PDF, or the nearest heading's #fragment
    page_start: int | None = None  # paged documents (PDF): the pages the passage spans, from 1
    page_end: int | None = None


@dataclass(frozen=True)
class Fallback:
    """The generation CURRENT names could not be opened, so an older one answers: each search
    response says so (`fallback`), as a chatbot cannot read the log or /v1/info."""

    instead_of: str  # the generation CURRENT names
    reason: str  # why it could not be served


@dataclass(frozen=True)
class SearchResult:
    hits: list[SearchHit]
    generation: str
    space: str
    mode: str
    took_ms: float = 0.0
    more: bool = False  # another page exists after these hits
    candidates: int = 0  # chunks scored before collapsing to hits
    answerable: bool = False  # the best hit reaches the space's relevance threshold
    degraded_reason: str | None = None  # set when a dense or hybrid request was answered lexically
    answers: list[AnswerHit] = field(default_factory=list)  # curated answers that match, before the hits
    time_filter: TimeFilter | None = None  # what parse_time read from the query
    fallback: Fallback | None = None  # set when an older generation answered because CURRENT's cannot be read


def search(
    generation: Generation,
    space: SpaceIndex,
    query_vector: np.ndarray | None,
    query: str,
    top_k: int = 10,
    mode: str = "hybrid",
    filters: SearchFilters = SearchFilters(),
    offset: int = 0,
    max_chunks_per_doc: int | None = MAX_CHUNKS_PER_DOC,
    min_score: float = 0.0,
    dense_weight: float | None = None,
    min_relevance: float | None = None,
    recency_weight: float = 0.0,
    repeated_texts: bool = False,
) -> SearchResult:
    """Rank chunks of `space` for `query` and return hits `offset` to `offset + top_k`.

    Scores are 0–1 in every mode: the cosine (negative counts as 0), BM25 over the query's ceiling,
    or their blend. Filters restrict the candidates before ranking, and when collapsing leaves too
    few hits the candidate pool widens, so a page is short only when nothing more matches.
    Overlapping chunks of one document merge into one hit; a document gives at most
    `max_chunks_per_doc` hits (None: no limit); a passage a hit already holds is not a hit again
    unless `repeated_texts` (evaluation: a labeled set judges each copy by its id). `query_vector`
    is needed unless mode is lexical.

    Each hit gets a calibrated `relevance`; the result is `answerable` when the best hit's reaches
    `min_relevance`. `dense_weight` and `min_relevance` default to the space's settings, then the product's.
    `recency_weight` (0–1) nudges fresher documents up (`_fresher`)."""
    settings = space.search
    weight = dense_weight if dense_weight is not None else settings.get("hybrid_weight", DENSE_WEIGHT)
    needed = min_relevance if min_relevance is not None else threshold(settings, space.chance is not None, mode)
    started = time.perf_counter()
    allowed = generation.allowed_vector_ids(space.space_id, filters.as_params()) if filters.active() else None
    pool = space.size if allowed is None else len(allowed)
    wanted = offset + top_k + 1  # one more than the page: is there a next page?
    depth = min(pool, max(MIN_CANDIDATES, wanted * 10))
    # BM25 scores every chunk at once and does not depend on depth: once, whatever the widening.
    # In hybrid mode it runs on another thread while FAISS searches: both spend most of their time
    # outside the GIL, and a search is ~1 ms faster at 100k chunks (bench/README.md, "Serving").
    bm25 = None
    if mode in ("hybrid", "lexical") and pool:
        bm25 = _BM25_THREADS.submit(_bm25, space, query, allowed, depth) if mode == "hybrid" else _finished(_bm25(space, query, allowed, depth))
    while True:
        ranked, dense, lexical, cut = _rank(space, query_vector, bm25, mode, depth, allowed, weight)
        if recency_weight > 0 and ranked:
            ranked = _fresher(generation, space.space_id, ranked, recency_weight, datetime.now(timezone.utc))
        # By keywords alone a curated answer is only a hit: no threshold matched answers by their words
        # without giving a wrong one, with authority, to a fifth to a third of the paraphrases (bench/README.md).
        aside: dict[str, tuple] | None = {} if mode != "lexical" else None
        hits = _collapse(generation, space.space_id, ranked, wanted, dense, lexical, max_chunks_per_doc, min_score, aside, repeated_texts)
        below = bool(ranked) and ranked[-1][1] < min_score  # deeper candidates would score lower still
        if len(hits) >= wanted or not cut or depth >= pool or below:
            break
        depth = min(pool, depth * 4)
    relevances = _relevances(space, hits, query, mode)
    page = [replace(h, relevance=r, stale=h.doc_id in space.stale, snippet=snippet(h.text, query, shown=(h.title, *h.heading_path), analyzer=space.lexical.analyzer))  # one copy of each hit shown
            for h, r in zip(hits[offset : offset + top_k], relevances[offset : offset + top_k])]
    # A curated answer is judged on its cosine alone where there is one: paraphrases of its question
    # are told from near misses better that way (bench/README.md, "Curated answers").
    answers = pick(generation.curated, {doc_id: (row, score, relevance(d, None, "dense") if d is not None else relevance(None, lx, "lexical"))
                                        for doc_id, (row, score, d, lx) in aside.items()}) if offset == 0 and aside else []
    return SearchResult(
        hits=page,
        generation=generation.id,
        space=space.space_id,
        mode=mode,
        took_ms=(time.perf_counter() - started) * 1000,
        more=len(hits) > offset + top_k,
        candidates=len(ranked),
        answerable=bool(answers) or (bool(hits) and max(relevances) >= needed),
        answers=answers,
    )


def _relevances(space: SpaceIndex, hits: list[SearchHit], query: str, mode: str) -> list[float]:
    """Each hit's calibrated relevance. Where the space has a chance level and the search a cosine,
    the cosine is read against it: how far above what a question of this many terms without an
    answer scores in this space (indexer/chance.py)."""
    if space.chance is None or mode == "lexical":
        return [relevance(h.dense, h.lexical, mode) for h in hits]
    terms = len(query_terms(query, space.lexical.analyzer))
    return [relevance(h.dense, h.lexical, mode, above_chance=space.chance.z(max(0.0, h.dense or 0.0), terms)) for h in hits]


def _rank(space: SpaceIndex, vector: np.ndarray | None, bm25: Future | None, mode: str, depth: int, allowed: np.ndarray | None, weight: float):
    """Candidates best first with their 0–1 scores, each side's scores, and whether a retriever was
    cut at `depth` (so a deeper search could find more). `bm25`: what `_bm25` found, for the modes
    that use it."""
    dense: dict[int, float] = {}
    lexical: dict[int, float] = {}
    lexical_scores, ceiling = None, 0.0
    if mode in ("hybrid", "dense") and depth:
        dense = space.dense.top(vector, depth, allowed)  # nothing when `allowed` is empty
    if bm25 is not None and depth:
        lexical_scores, ceiling, lexical, found_at = bm25.result()
        if depth > found_at:  # the pool widened
            lexical = _top(lexical_scores, depth)
    cut = len(dense) >= depth or len(lexical) >= depth
    if mode == "hybrid":
        return (*_fused(space, vector, dense, lexical, lexical_scores, ceiling, weight), cut)
    dense = {vid: max(0.0, score) for vid, score in dense.items()}
    lexical = {vid: score / ceiling for vid, score in lexical.items()} if ceiling else {}
    scores = dense if mode == "dense" else lexical
    # Rounded here, not only on output: a score a client saw and sends back as min_score keeps its hit.
    ranked = sorted(((vid, round(score, SCORE_DIGITS)) for vid, score in scores.items()), key=lambda kv: -kv[1])
    return ranked, dense, lexical, cut


def _fused(space: SpaceIndex, vector: np.ndarray, dense: dict[int, float], lexical: dict[int, float], lexical_scores: np.ndarray | None,
           ceiling: float, weight: float) -> tuple[list[tuple[int, float]], dict[int, float], dict[int, float]]:
    """The hybrid ranking of every candidate either retriever found, with exact scores on both
    sides (a chunk just below one retriever's cut is not treated as a zero there), computed as
    arrays: dictionaries per step cost ~0.3 ms of a query with 220 candidates."""
    missing = [vid for vid in lexical if vid not in dense]  # FAISS already scored its own top ids
    ids = [*dense, *missing]
    if not ids:
        return [], {}, {}
    cosines = floored(np.fromiter(chain(dense.values(), space.dense.cosines(vector, missing)), dtype=np.float64, count=len(ids)))
    lexicals = lexical_scores[ids].astype(np.float64) / ceiling if ceiling else np.zeros(len(ids))
    # Rounded here, not only on output: a score a client saw and sends back as min_score keeps its hit.
    scores = [round(score, SCORE_DIGITS) for score in fuse(cosines, lexicals, weight).tolist()]
    order = np.argsort(-np.asarray(scores), kind="stable").tolist()
    return [(ids[i], scores[i]) for i in order], dict(zip(ids, cosines.tolist())), dict(zip(ids, lexicals.tolist())) if ceiling else {}


def recent(generation: Generation, space: SpaceIndex, filters: SearchFilters, top_k: int = 10, offset: int = 0) -> SearchResult:
    """A question only about time ("what changed last week?"): the documents that pass `filters`,
    newest first, each as its first chunk."""
    started = time.perf_counter()
    allowed = generation.allowed_vector_ids(space.space_id, filters.as_params())
    ids = generation.first_chunks_newest_first(space.space_id, allowed, top_k + 1, offset)
    rows = generation.hits(space.space_id, ids)
    hits = [replace(_Hit(rows[vid], 1.0, None, None).freeze(), relevance=1.0, stale=rows[vid]["doc_id"] in space.stale) for vid in ids]
    page = [replace(h, snippet=snippet(h.text, "", shown=(h.title, *h.heading_path))) for h in hits[:top_k]]
    return SearchResult(hits=page, generation=generation.id, space=space.space_id, mode="recent", took_ms=(time.perf_counter() - started) * 1000,
                        more=len(hits) > top_k, candidates=len(hits), answerable=bool(page))


def _fresher(generation: Generation, space_id: str, ranked: list[tuple[int, float]], weight: float, now: datetime) -> list[tuple[int, float]]:
    """`recency_weight`: each score times (1 − weight + weight · 2^(−age / RECENCY_HALF_LIFE_DAYS)),
    so a document updated today keeps its score and a year-old one loses about `weight` of it."""
    rows = generation.hits(space_id, [vid for vid, _ in ranked])
    rescored = []
    for vid, score in ranked:
        updated = rows[vid]["updated_at"]
        age = max(0.0, (now - updated).total_seconds() / 86400) if updated is not None else float("inf")
        rescored.append((vid, score * (1 - weight + weight * 0.5 ** (age / RECENCY_HALF_LIFE_DAYS))))
    rescored.sort(key=lambda item: -item[1])
    return rescored


def embed_query(embedder: Embedder, query: str) -> np.ndarray:
    return np.asarray(embedder.embed_query(query), dtype=np.float32)


def _bm25(space: SpaceIndex, query: str, allowed: np.ndarray | None, depth: int) -> tuple[np.ndarray, float, dict[int, float], int]:
    """BM25 score of every chunk (0 outside `allowed`), the query's ceiling, the best `depth` of them, and `depth`."""
    scores, ceiling = space.lexical.scores(query)
    if allowed is not None:
        masked = np.zeros_like(scores)
        masked[allowed] = scores[allowed]
        scores = masked
    return scores, ceiling, _top(scores, depth), depth


def _finished(result) -> Future:
    future: Future = Future()
    future.set_result(result)
    return future


def _top(scores: np.ndarray, depth: int) -> dict[int, float]:
    """The `depth` best scores above zero (a chunk sharing no term with the query is no match), best
    first; among equal scores the lower vector id, at the cut too. The cut is the depth-th best
    score, found by partitioning the values: NumPy's argpartition took ~6 ms on some queries' BM25
    scores (108k chunks, 73k of them scoring, many equal) where partitioning takes ~0.1 ms. When
    most chunks score, the whole array is partitioned; when few do, only their scores are
    (partitioning an array of mostly equal zeros is slow: ~2 ms)."""
    positive = scores > 0
    count = int(np.count_nonzero(positive))
    ids, values = (None, scores) if count > len(scores) // 2 else (np.flatnonzero(positive), scores[positive])
    if count > depth:
        cut = np.partition(values, len(values) - depth)[len(values) - depth]
        above = np.flatnonzero(values > cut)
        chosen = np.concatenate([above, np.flatnonzero(values == cut)[: depth - len(above)]])
    else:
        chosen = np.flatnonzero(values > 0)
    chosen = np.sort(chosen if ids is None else ids[chosen])
    order = chosen[np.argsort(-scores[chosen], kind="stable")]
    return {int(i): float(scores[i]) for i in order}


def _collapse(generation: Generation, space_id: str, ranked: list[tuple[int, float]], wanted: int, dense: dict, lexical: dict,
              max_chunks_per_doc: int | None, min_score: float, aside: dict[str, tuple] | None, repeated_texts: bool = False) -> list[SearchHit]:
    """Walk the ranking into at most `wanted` hits: a chunk overlapping a hit of its document is
    merged into it (up to MAX_MERGED chunks), a document past `max_chunks_per_doc` hits is skipped.
    A curated answer's best chunk is set `aside` (doc_id → row, score, dense, lexical), never a hit;
    with `aside` None (a search by keywords alone) answers are hits like any chunk. A chunk whose
    words the hits already hold (a page served at two addresses, a file copied into the folder
    twice, a docs folder's Markdown beside the site built from it) adds nothing a chatbot can use:
    it is skipped (`_Shown`), unless `repeated_texts`."""
    hits: list[_Hit] = []
    by_doc: dict[str, list[_Hit]] = {}
    shown = _NothingShown() if repeated_texts else _Shown()  # the chunks in the hits so far
    batch = max(wanted * 2, 20)
    for offset in range(0, len(ranked), batch):
        part = [(vid, score) for vid, score in ranked[offset : offset + batch] if score >= min_score]
        if not part:
            break
        rows = generation.hits(space_id, [vid for vid, _ in part])
        for vid, score in part:
            row = rows[vid]
            if aside is not None and row["source_type"] == "answers":
                aside.setdefault(row["doc_id"], (row, score, dense.get(vid), lexical.get(vid)))
                continue
            mine = by_doc.setdefault(row["doc_id"], [])
            touching = [h for h in mine if row["start_offset"] < h.end and h.start < row["end_offset"]]
            if touching:
                target = touching[0]
                if len(touching) == 1 and len(target.chunks) < MAX_MERGED:
                    target.merge(row)
                    shown.add(row["text"])
                continue
            if (max_chunks_per_doc is not None and len(mine) >= max_chunks_per_doc) or shown.holds(row["text"]):
                continue
            if len(hits) == wanted:
                return [h.freeze() for h in hits]
            shown.add(row["text"])
            hit = _Hit(row, score, dense.get(vid), lexical.get(vid))
            mine.append(hit)
            hits.append(hit)
    return [h.freeze() for h in hits]


class _Shown:
    """The words of the chunks in a result so far, to tell a chunk that repeats them in another
    form: the same section as the Markdown file and as the HTML page built from it differ in
    markup, not in words. A chunk repeats the hits above when every word of it is among theirs and
    every run of three of its words (lower case, markup and punctuation left out) but at most
    MAX_NEW_RUNS is too: such twins had 0 or 1 new runs, passages cut at other places 9 or more
    (bench/README.md, "Repeated passages"). A page made from the same template as one above that
    differs in a single word inside (Lisbon's opening hours beside Porto's) has three new runs, or
    a new word, and stays a hit: a chatbot must not lose the fact that differs.

    The runs cost more to build than the words, and most chunks have a word the hits above lack:
    they are built only for a chunk whose words are all shown, and the hits' runs only then."""

    MAX_NEW_RUNS = 1
    MIN_RUNS = 5  # a chunk of fewer runs is told only by its exact text: a short line is easily held by chance

    def __init__(self) -> None:
        self.texts: set[str] = set()
        self.words: set[str] = set()
        self.runs: set[tuple[str, str, str]] = set()
        self._not_run: list[list[str]] = []  # the words of shown chunks whose runs are not in `runs` yet
        self._read: tuple[str, list[str]] | None = None  # the last text read, kept for `add` after `holds`

    def holds(self, text: str) -> bool:
        if text in self.texts:
            return True
        found = self._words(text)
        if not self.words.issuperset(found):
            return False
        runs = runs_of(found)
        if len(runs) < self.MIN_RUNS:
            return False
        for earlier in self._not_run:
            self.runs |= runs_of(earlier)
        self._not_run.clear()
        return len(runs - self.runs) <= self.MAX_NEW_RUNS

    def add(self, text: str) -> None:
        found = self._words(text)
        self.texts.add(text)
        self.words.update(found)
        self._not_run.append(found)

    def _words(self, text: str) -> list[str]:
        if self._read is None or self._read[0] is not text:
            self._read = (text, words(text.lower()))
        return self._read[1]


class _NothingShown:
    """What an evaluation's search tells repeats by (`repeated_texts`): nothing, and no word is read."""

    def holds(self, text: str) -> bool:
        return False

    def add(self, text: str) -> None:
        pass


def word_runs(text: str) -> tuple[list[str], set[tuple[str, str, str]]]:
    """A text's words (lower case, markup and punctuation left out) and its runs of three of them."""
    found = words(text.lower())
    return found, runs_of(found)


def runs_of(found: list[str]) -> set[tuple[str, str, str]]:
    return set(zip(found, found[1:], found[2:]))


class _Hit:
    """A hit being assembled: the best chunk's row and scores, plus chunks merged into its span."""

    def __init__(self, row: dict, score: float, dense: float | None, lexical: float | None):
        self.row, self.score, self.dense, self.lexical = row, score, dense, lexical
        self.start, self.end, self.text = row["start_offset"], row["end_offset"], row["text"]
        self.chunks = [(row["start_offset"], row["chunk_id"])]

    def merge(self, row: dict) -> None:
        """Extend the span by an overlapping chunk (chunk text is document text at its offsets)."""
        s, e, text = row["start_offset"], row["end_offset"], row["text"]
        if s < self.start:
            self.text = text[: self.start - s] + self.text
            self.start = s
        if e > self.end:
            self.text = self.text + text[len(text) - (e - self.end) :]
            self.end = e
        self.chunks.append((s, row["chunk_id"]))

    def freeze(self) -> SearchHit:
        row = self.row
        first, last = page_span(row.get("page_starts"), self.start, self.end)
        return SearchHit(
            chunk_id=row["chunk_id"],
            doc_id=row["doc_id"],
            title=readable_name(row["title"]) if row["title"] else row["title"],
            url=row["url"],
            path=row["path"],
            source=row["source"],
            heading_path=tuple(map(readable_name, row["heading_path"])),
            text=self.text,
            start=self.start,
            end=self.end,
            score=self.score,
            dense=self.dense,
            lexical=self.lexical,
            updated_at=row["updated_at"],
            chunk_ids=tuple(c for _, c in sorted(self.chunks)),
            link=deep_link(row["url"], body_start(self.text, self.start), first, row.get("anchor_offsets"), row.get("anchor_names")),
            page_start=first,
            page_end=last,
        )
