"""BM25 over a space's segments, scored at query time so that segments can be shared between
generations.

A segment's `lexical/` folder stores what does not depend on the rest of the space — each term's
postings (chunk row, term frequency) and each chunk's length in terms. What does depend on it —
the number of live chunks N, their average length, each term's document frequency — is computed
from the live rows when a generation is opened (each posting's weight) and when a query is scored
(idf), so a search across segments (with deleted rows filtered out) scores every chunk exactly as
one index freshly built from the same chunks would.
Lucene's variant (k1 1.2, b 0.75), as bm25s computes it:

    score(chunk, term) = idf · tf / (tf + k1 · (1 − b + b · length / average length))
    idf = ln(1 + (N − df + 0.5) / (df + 0.5))

Segment files (artifacts/README.md):

    lexical/analyzer.json         the analyzer (indexer/lexical.py), "format": "postings-v1", "documents": rows
    lexical/terms.json            the vocabulary: term id → term
    lexical/postings.indptr.npy   int64, terms + 1: term t's postings are entries indptr[t]:indptr[t + 1]
    lexical/postings.rows.npy     int32, the chunk row of each posting (ascending within a term)
    lexical/postings.tf.npy       int32, the term's frequency in that chunk
    lexical/lengths.npy           int32, one per row: the chunk's number of terms
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Sequence
from itertools import repeat
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from indexer.lexical import ANALYZER, ANALYZERS, CJK_CHARACTER, PAIRED, READABLE, WHOLE_WORDS, analyze_words, cjk_words, scored_terms, words

FORMAT = "postings-v1"
BUILD_BATCH = 2048  # rows whose occurrences are sorted at once (~18 MB of keys): bounds the build's memory, not its result
# Postings put in term order at a time when writing (~8 MB of them in flight): a million held
# ~40 MB, the build's peak (2,000 documents: 64 → 31 MB traced), and were no faster.
TERM_RANGE = 1 << 18
K1, B = ANALYZER["k1"], ANALYZER["b"]
_NEW = -2  # a word not looked up yet (-1: a stopword; below -2: an identifier, _Words)


def build_lexical_segment(texts: Sequence[str], folder: Path, analyzer: str = ANALYZER["name"]) -> None:
    """Write the postings of `texts` (row i = texts[i]) into `folder` (`analyzer`: another of
    lexical.ANALYZERS, for tests of what earlier versions wrote)."""
    vocabulary: dict[str, int] = {}  # term (stem) → term id, in order of first occurrence
    words = _Words(vocabulary, analyzer)
    lengths = np.zeros(len(texts), dtype=np.int32)
    batches = [_batch_postings(texts, first, words, lengths) for first in range(0, len(texts), BUILD_BATCH)]
    counts = np.zeros(len(vocabulary), dtype=np.int64)
    for _, terms, term_counts, _, _ in batches:
        counts[terms] += term_counts
    indptr = np.zeros(len(vocabulary) + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    folder.mkdir(parents=True, exist_ok=True)
    np.save(folder / "postings.indptr.npy", indptr)
    with open(folder / "postings.rows.npy", "wb") as rows_file, open(folder / "postings.tf.npy", "wb") as tf_file:
        for f in (rows_file, tf_file):
            np.lib.format.write_array_header_1_0(f, {"descr": np.lib.format.dtype_to_descr(np.dtype(np.int32)), "fortran_order": False, "shape": (int(indptr[-1]),)})
        for rows, tf in _term_major(batches, indptr):
            rows_file.write(rows.tobytes())
            tf_file.write(tf.tobytes())
    np.save(folder / "lengths.npy", lengths)
    (folder / "terms.json").write_text(json.dumps(sorted(vocabulary, key=vocabulary.__getitem__), ensure_ascii=False), encoding="utf-8")
    (folder / "analyzer.json").write_text(json.dumps({**ANALYZERS[analyzer], "format": FORMAT, "documents": len(texts)}, indent=2) + "\n")


class _Words:
    """Each word token as written → the ids of its terms, `analyze_words` once per distinct word.
    Most words are one term, looked up as one number (its id; -1 a stopword); an identifier's
    several terms are a code below _NEW for `ids` to expand."""

    def __init__(self, vocabulary: dict[str, int], analyzer: str):
        self.vocabulary, self.analyzer = vocabulary, analyzer
        self.codes: dict[str, int] = {}
        self.several: list[np.ndarray] = []  # the term ids of identifier i, whose code is _NEW - 1 - i
        self.paired = analyzer in PAIRED

    def tokens(self, text: str) -> list[str]:
        """The word tokens of `text`, a run of Chinese, Japanese or Korean already in its pairs:
        looked up as whole runs, nearly every clause was a new word to analyse and hold (20,000
        chunks of Japanese: 19.7 s and 540 MB)."""
        found = words(text)
        return [word for token in found for word in cjk_words(token)] if self.paired and not text.isascii() and CJK_CHARACTER.search(text) else found

    def ids(self, tokens: list[str]) -> np.ndarray:
        """The term ids of `tokens` (an identifier's whole word and its parts), in no set order:
        the postings count them, and a chunk's length is how many there are."""
        ids = np.fromiter(map(self.codes.get, tokens, repeat(_NEW)), dtype=np.int64, count=len(tokens))
        unseen = np.flatnonzero(ids == _NEW)
        if len(unseen):  # words no earlier chunk had: analysed once, then looked up where they occur
            self._learn(list(dict.fromkeys(tokens[i] for i in unseen.tolist())))
            ids[unseen] = [self.codes[tokens[i]] for i in unseen.tolist()]
        several = ids < _NEW
        if several.any():
            return np.concatenate([ids[ids >= 0], *(self.several[_NEW - 1 - code] for code in ids[several].tolist())])
        return ids[ids >= 0]

    def _learn(self, new: list[str]) -> None:
        vocabulary, codes = self.vocabulary, self.codes
        for word, terms in zip(new, analyze_words(new, self.analyzer)):
            if len(terms) == 1:
                codes[word] = vocabulary.setdefault(terms[0], len(vocabulary))
            elif not terms:
                codes[word] = -1
            else:
                self.several.append(np.asarray([vocabulary.setdefault(term, len(vocabulary)) for term in terms], dtype=np.int64))
                codes[word] = _NEW - len(self.several)


def _batch_postings(texts: Sequence[str], first: int, words_of: _Words, lengths: np.ndarray) -> tuple:
    """The postings of rows first … first + BUILD_BATCH − 1, term-major, rows ascending within a
    term: (first, the batch's term ids ascending, each one's number of postings, rows within the
    batch, tf), in the smallest types that hold them: 4 bytes a posting, ~16M of them at 108k chunks."""
    batch = texts[first : first + BUILD_BATCH]
    keys = []
    for row, text in enumerate(batch):
        ids = words_of.ids(words_of.tokens(text))
        lengths[first + row] = len(ids)
        keys.append(ids * len(batch) + row)
    # One key per occurrence, sorted and counted: the batch's postings, term-major.
    unique, tf = np.unique(np.concatenate(keys) if keys else np.zeros(0, np.int64), return_counts=True)
    terms, term_counts = np.unique(unique // len(batch), return_counts=True)
    small = np.uint16 if len(tf) == 0 or tf.max() <= np.iinfo(np.uint16).max else np.int32
    return first, terms.astype(np.int32), term_counts, (unique % len(batch)).astype(np.uint16), tf.astype(small)


def _term_major(batches: list[tuple], indptr: np.ndarray, step: int = TERM_RANGE):
    """The postings of every batch in the files' order (term-major, rows ascending), ~`step` at a
    time: each batch's postings of a range of terms are one slice of it, and batches are in row
    order. Only the batches and one range are in memory, never a second copy of all postings."""
    ends = [np.concatenate([[0], np.cumsum(term_counts)]) for _, _, term_counts, _, _ in batches]  # posting offset of each batch term
    start, vocabulary = 0, len(indptr) - 1
    while start < vocabulary:
        end = min(vocabulary, max(start + 1, int(np.searchsorted(indptr, indptr[start] + step, side="right")) - 1))
        parts = []
        for (first, terms, term_counts, rows, tf), offsets in zip(batches, ends):
            lo, hi = np.searchsorted(terms, [start, end])
            span = slice(offsets[lo], offsets[hi])
            parts.append((np.repeat(terms[lo:hi], term_counts[lo:hi]), rows[span].astype(np.int32) + first, tf[span].astype(np.int32)))
        term_of, rows, tf = (np.concatenate(column) for column in zip(*parts))
        order = np.argsort(term_of, kind="stable")
        yield rows[order], tf[order]
        start = end


@dataclass(frozen=True)
class _Segment:
    base: int  # vector id of row 0
    analyzer: str  # its name: how the segment's text became terms, and so a query must
    vocabulary: dict[str, int]
    indptr: np.ndarray
    rows: np.ndarray
    tf: np.ndarray
    lengths: np.ndarray
    live: np.ndarray | None  # bool per row; None when no row is deleted

    @classmethod
    def open(cls, folder: Path, base: int, deleted_rows: np.ndarray) -> "_Segment":
        analyzer = segment_analyzer(folder)
        lengths = np.load(folder / "lengths.npy", mmap_mode="r")
        live = None
        if len(deleted_rows):
            live = np.ones(len(lengths), dtype=bool)
            live[deleted_rows] = False
        terms = json.loads((folder / "terms.json").read_text(encoding="utf-8"))
        return cls(
            base, analyzer, {t: i for i, t in enumerate(terms)}, np.load(folder / "postings.indptr.npy", mmap_mode="r"),
            np.load(folder / "postings.rows.npy", mmap_mode="r"), np.load(folder / "postings.tf.npy", mmap_mode="r"), lengths, live,
        )

    def live_lengths(self) -> np.ndarray:
        return self.lengths if self.live is None else self.lengths[self.live]


_NONE = np.zeros(0, dtype=np.int32)


def segment_analyzer(folder: Path) -> str:
    """The name of the analyzer that wrote the postings in `folder` (a segment's `lexical/`),
    refused unless this version can query it."""
    info = json.loads((folder / "analyzer.json").read_text())
    if info.get("name") not in READABLE or info.get("format") != FORMAT:
        raise ValueError(f"{folder}: lexical index {info.get('name')!r}/{info.get('format')!r}; this version reads {'/'.join(READABLE)} in {FORMAT!r} "
                         "(written by a newer indexer? upgrade the servers first)")
    return info["name"]


def lexical_rows(folder: Path) -> int:
    """The rows of the segment whose `lexical/` folder this is, its files opened and their format checked."""
    return len(_Segment.open(folder, 0, _NONE).lengths)


class LexicalIndex:
    """BM25 over segments (folder, base vector id) with some vector ids deleted. `scores(query)`
    returns one score per vector id and the query's ceiling: the sum over the query's terms of each
    term's highest score over the live chunks, a term no live chunk holds counted as the rarest
    term would score (it could have matched)."""

    def __init__(self, segments: list[tuple[Path, int, np.ndarray]], id_space: int):
        """`segments`: per segment, its `lexical/` folder, base vector id and deleted rows."""
        self.id_space = id_space
        opened = [_Segment.open(folder, base, deleted) for folder, base, deleted in segments]
        analyzers = {s.analyzer for s in opened}
        if len(analyzers) > 1:  # a query's terms would differ from segment to segment
            raise ValueError(f"the space's lexical segments were written by different analyzers ({', '.join(sorted(analyzers))}); run `index run` to rewrite them")
        self.analyzer = analyzers.pop() if analyzers else ANALYZER["name"]
        lengths = [s.live_lengths() for s in opened]
        self.size = sum(len(x) for x in lengths)  # live chunks: BM25's N
        self.average_length = float(sum(int(x.sum()) for x in lengths)) / max(self.size, 1) or 1.0
        # Each posting's score but for its term's idf, once per generation (the average length
        # depends on every segment): a query then costs one multiply and one scatter per posting
        # (5× less than computing it per query: p50 0.43 → 0.08 ms at 108k chunks). The term
        # frequencies are not kept.
        self.segments = [_Weights.of(s, self.average_length) for s in opened]
        self.unknown_term = _unknown_term(self.size)

    def known(self, term: str) -> bool:
        return any(len(s.postings(term)[0]) for s in self.segments)

    def scores(self, query: str) -> tuple[np.ndarray, float]:
        """(BM25 score per vector id, ceiling): no chunk can score above the ceiling, so
        score / ceiling is a 0–1 measure of how much of the query a chunk matches. A query
        whose every word is a function word ("what can I get?") matches nothing: ceiling 0.
        A term repeated in the query counts as often as it is repeated."""
        totals = np.zeros(self.id_space, dtype=np.float32)
        ceiling = 0.0
        for term, repeats in Counter(scored_terms(query, self.analyzer) if self.size else []).items():
            found = [s.postings(term) for s in self.segments]
            df = sum(len(rows) for rows, _, _ in found)
            if not df:
                ceiling += repeats * self.unknown_term
                continue
            idf = math.log(1 + (self.size - df + 0.5) / (df + 0.5))
            best = 0.0
            for segment, (rows, weights, top) in zip(self.segments, found):
                if len(rows):
                    totals[segment.base + rows if segment.base else rows] += weights * np.float32(repeats * idf)
                    best = max(best, top)
            ceiling += repeats * idf * best
        return totals, ceiling


@dataclass(frozen=True)
class _Weights:
    """A segment's postings with each one's tf / (tf + k1 · (1 − b + b · length / average length)),
    deleted rows left out, and each term's highest weight."""

    base: int  # vector id of row 0
    row_count: int  # the segment's rows, deleted ones included
    vocabulary: dict[str, int]
    indptr: np.ndarray
    rows: np.ndarray
    weights: np.ndarray  # float32, one per posting
    best: np.ndarray  # float32, one per term

    @classmethod
    def of(cls, segment: _Segment, average_length: float, step: int = 1 << 20) -> "_Weights":
        rows, tf, indptr = segment.rows, segment.tf, np.asarray(segment.indptr)
        if segment.live is not None:
            keep = segment.live[rows]
            rows, tf = rows[keep], tf[keep]
            indptr = np.concatenate(([0], np.cumsum(keep, dtype=np.int64)))[indptr]
        norms = (K1 * (1 - B + B * np.asarray(segment.lengths, dtype=np.float64) / average_length)).astype(np.float32)
        weights = np.empty(len(rows), dtype=np.float32)
        for start in range(0, len(rows), step):  # a block at a time: no copy of every posting's tf at once
            block = np.asarray(tf[start : start + step], dtype=np.float32)
            # clip: postings naming rows a damaged segment lacks are refused by open_lexical's row check, not here
            weights[start : start + step] = block / (block + np.take(norms, rows[start : start + step], mode="clip"))
        best = np.zeros(len(indptr) - 1, dtype=np.float32)
        present = indptr[:-1] < indptr[1:]
        if present.any():
            best[present] = np.maximum.reduceat(weights, indptr[:-1][present])
        return cls(segment.base, len(segment.lengths), segment.vocabulary, indptr, rows, weights, best)

    def postings(self, term: str) -> tuple[np.ndarray, np.ndarray, float]:
        """Live rows holding `term`, their weights, and the highest of them (0.0 for none)."""
        t = self.vocabulary.get(term)
        if t is None:
            return _NONE, _NONE, 0.0
        start, end = self.indptr[t], self.indptr[t + 1]
        return self.rows[start:end], self.weights[start:end], float(self.best[t])


class LegacyLexicalIndex:
    """The bm25s index of a generation written before segments (schema 1): scores precomputed
    per (term, chunk), each term's maximum in `term_max.npy` (computed here when absent)."""

    def __init__(self, folder: Path):
        import bm25s

        info = json.loads((folder / "analyzer.json").read_text())
        if info.get("name") != WHOLE_WORDS:  # the only analyzer of the versions that wrote bm25s indexes
            raise ValueError(f"lexical index uses analyzer {info.get('name')!r}; this version reads {WHOLE_WORDS!r} in this form")
        self.analyzer = WHOLE_WORDS
        self.size = self.id_space = int(info["documents"])
        self.retriever = bm25s.BM25.load(str(folder), mmap=True, show_progress=False)
        saved = folder / "term_max.npy"
        self.term_max = np.load(saved) if saved.exists() else _term_max(self.retriever.scores)
        self.unknown_term = _unknown_term(self.size)

    def known(self, term: str) -> bool:
        return term in self.retriever.vocab_dict

    def scores(self, query: str) -> tuple[np.ndarray, float]:
        terms = scored_terms(query, self.analyzer) if self.size else []
        vocabulary = self.retriever.vocab_dict
        term_ids = [vocabulary[t] for t in terms if t in vocabulary]
        ceiling = float(self.term_max[term_ids].sum()) + (len(terms) - len(term_ids)) * self.unknown_term
        if not term_ids:
            return np.zeros(self.size, dtype=np.float32), ceiling
        return np.asarray(self.retriever.get_scores(term_ids), dtype=np.float32), ceiling


def _unknown_term(chunks: int) -> float:
    """What a query term no chunk holds counts toward the ceiling: a term in one chunk only, once,
    in a chunk of average length scores its idf (Lucene's form)."""
    return math.log(1 + (max(chunks, 1) - 1 + 0.5) / 1.5)


def _term_max(scores: dict) -> np.ndarray:
    """The highest BM25 contribution of each vocabulary term over all chunks (0 for a term in none)."""
    data, indptr = np.asarray(scores["data"]), np.asarray(scores["indptr"])
    maxima = np.zeros(len(indptr) - 1, dtype=np.float32)
    present = indptr[:-1] < indptr[1:]
    if present.any():
        maxima[present] = np.maximum.reduceat(data, indptr[:-1][present])
    return maxima
