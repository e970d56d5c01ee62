"""BM25 over a space's segments, scored at query time so that segments can be shared between
generations.

A segment's `lexical/` folder stores what does not depend on the rest of the space — each term's
postings (chunk row, term frequency) and each chunk's length in terms. What does depend on it —
the number of live chunks N, their average length, each term's document frequency — is computed
from the live rows when a query is scored, so a search across segments (with deleted rows
filtered out) scores every chunk exactly as one index freshly built from the same chunks would.
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
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from indexer.lexical import ANALYZER, TOKEN, analyze, query_terms

FORMAT = "postings-v1"
BUILD_BATCH = 8192  # rows whose occurrences are sorted at once: bounds the build's memory, not its result
K1, B = ANALYZER["k1"], ANALYZER["b"]


def build_lexical_segment(texts: list[str], folder: Path) -> None:
    """Write the postings of `texts` (row i = texts[i]) into `folder`."""
    vocabulary: dict[str, int] = {}  # term (stem) → term id, in order of first occurrence
    word_ids: dict[str, int] = {}  # lowercased word → its term's id, -1 for a stopword: `analyze` once per distinct word
    lengths = np.zeros(len(texts), dtype=np.int32)
    triples = []  # per batch of rows: (term, row, tf) of each distinct (term, row), int32
    for first in range(0, len(texts), BUILD_BATCH):
        batch = texts[first : first + BUILD_BATCH]
        keys = []
        for row, text in enumerate(batch):
            words = TOKEN.findall(text.lower())
            try:
                ids = np.fromiter(map(word_ids.__getitem__, words), dtype=np.int64, count=len(words))
            except KeyError:
                new = [w for w in dict.fromkeys(words) if w not in word_ids]
                for word, terms in zip(new, map(analyze, new)):
                    word_ids[word] = vocabulary.setdefault(terms[0], len(vocabulary)) if terms else -1
                ids = np.fromiter(map(word_ids.__getitem__, words), dtype=np.int64, count=len(words))
            ids = ids[ids >= 0]
            lengths[first + row] = len(ids)
            keys.append(ids * len(batch) + row)
        # One key per occurrence, sorted and counted: the batch's postings, term-major.
        unique, tf = np.unique(np.concatenate(keys), return_counts=True)
        triples.append(((unique // len(batch)).astype(np.int32), (unique % len(batch) + first).astype(np.int32), tf.astype(np.int32)))
    # Into one array per column, each batch's copy dropped as it goes: at 108k chunks the postings
    # are ~16M (term, row, tf) triples, and holding the batches, their concatenation and the sorted
    # copies at once was the run's memory peak.
    total = sum(len(part[0]) for part in triples)
    term_of, rows, tf = (np.empty(total, np.int32) for _ in range(3))
    at = 0
    while triples:
        batch_terms, batch_rows, batch_tf = triples.pop(0)
        end = at + len(batch_terms)
        term_of[at:end], rows[at:end], tf[at:end] = batch_terms, batch_rows, batch_tf
        at = end
    indptr = np.zeros(len(vocabulary) + 1, dtype=np.int64)
    np.cumsum(np.bincount(term_of, minlength=len(vocabulary)), out=indptr[1:])
    order = np.argsort(term_of, kind="stable")  # batches are in row order, so rows stay ascending within a term
    del term_of
    rows, tf = rows[order], tf[order]
    del order
    folder.mkdir(parents=True, exist_ok=True)
    np.save(folder / "postings.indptr.npy", indptr)
    np.save(folder / "postings.rows.npy", rows)
    np.save(folder / "postings.tf.npy", tf)
    np.save(folder / "lengths.npy", lengths)
    (folder / "terms.json").write_text(json.dumps(sorted(vocabulary, key=vocabulary.__getitem__), ensure_ascii=False), encoding="utf-8")
    (folder / "analyzer.json").write_text(json.dumps({**ANALYZER, "format": FORMAT, "documents": len(texts)}, indent=2) + "\n")


@dataclass(frozen=True)
class _Segment:
    base: int  # vector id of row 0
    vocabulary: dict[str, int]
    indptr: np.ndarray
    rows: np.ndarray
    tf: np.ndarray
    lengths: np.ndarray
    live: np.ndarray | None  # bool per row; None when no row is deleted

    @classmethod
    def open(cls, folder: Path, base: int, deleted_rows: np.ndarray) -> "_Segment":
        info = json.loads((folder / "analyzer.json").read_text())
        if info.get("name") != ANALYZER["name"] or info.get("format") != FORMAT:
            raise ValueError(f"{folder}: lexical index {info.get('name')!r}/{info.get('format')!r}; this version reads {ANALYZER['name']!r}/{FORMAT!r}")
        lengths = np.load(folder / "lengths.npy", mmap_mode="r")
        live = None
        if len(deleted_rows):
            live = np.ones(len(lengths), dtype=bool)
            live[deleted_rows] = False
        terms = json.loads((folder / "terms.json").read_text(encoding="utf-8"))
        return cls(
            base, {t: i for i, t in enumerate(terms)}, np.load(folder / "postings.indptr.npy", mmap_mode="r"),
            np.load(folder / "postings.rows.npy", mmap_mode="r"), np.load(folder / "postings.tf.npy", mmap_mode="r"), lengths, live,
        )

    def postings(self, term: str) -> tuple[np.ndarray, np.ndarray]:
        """Live rows holding `term` and its frequency there."""
        t = self.vocabulary.get(term)
        if t is None:
            return _NONE, _NONE
        rows, tf = self.rows[self.indptr[t] : self.indptr[t + 1]], self.tf[self.indptr[t] : self.indptr[t + 1]]
        if self.live is not None:
            keep = self.live[rows]
            rows, tf = rows[keep], tf[keep]
        return rows, tf

    def live_lengths(self) -> np.ndarray:
        return self.lengths if self.live is None else self.lengths[self.live]


_NONE = np.zeros(0, dtype=np.int32)


class LexicalIndex:
    """BM25 over segments (folder, base vector id) with some vector ids deleted. `scores(query)`
    returns one score per vector id and the query's ceiling: the sum over the query's terms of each
    term's highest score over the live chunks, a term no live chunk holds counted as the rarest
    term would score (it could have matched)."""

    def __init__(self, segments: list[tuple[Path, int, np.ndarray]], id_space: int):
        """`segments`: per segment, its `lexical/` folder, base vector id and deleted rows."""
        self.id_space = id_space
        self.segments = [_Segment.open(folder, base, deleted) for folder, base, deleted in segments]
        lengths = [s.live_lengths() for s in self.segments]
        self.size = sum(len(x) for x in lengths)  # live chunks: BM25's N
        self.average_length = float(sum(int(x.sum()) for x in lengths)) / max(self.size, 1) or 1.0
        # Each row's length term, once per generation: k1 · (1 − b + b · length / average length).
        self.norms = [K1 * (1 - B + B * np.asarray(s.lengths, dtype=np.float64) / self.average_length) for s in self.segments]
        self.unknown_term = _unknown_term(self.size)

    def known(self, term: str) -> bool:
        return any(len(s.postings(term)[0]) for s in self.segments)

    def scores(self, query: str) -> tuple[np.ndarray, float]:
        """(BM25 score per vector id, ceiling): no chunk can score above the ceiling, so
        score / ceiling is a 0–1 measure of how much of the query a chunk matches. A query
        whose every word is a function word ("what can I get?") matches nothing: ceiling 0.
        A term repeated in the query counts as often as it is repeated."""
        totals = np.zeros(self.id_space, dtype=np.float64)
        ceiling = 0.0
        for term, repeats in Counter(query_terms(query) if self.size else []).items():
            found = [(s, *s.postings(term)) for s in self.segments]
            df = sum(len(rows) for _, rows, _ in found)
            if not df:
                ceiling += repeats * self.unknown_term
                continue
            idf = math.log(1 + (self.size - df + 0.5) / (df + 0.5))
            best = 0.0
            for (segment, rows, tf), norms in zip(found, self.norms):
                if len(rows):
                    tf = tf.astype(np.float64)
                    contribution = idf * tf / (tf + norms[rows])
                    totals[segment.base + rows] += repeats * contribution
                    best = max(best, float(contribution.max()))
            ceiling += repeats * best
        return totals.astype(np.float32), ceiling


class LegacyLexicalIndex:
    """The bm25s index of a generation written before segments (schema 1): scores precomputed
    per (term, chunk), each term's maximum in `term_max.npy` (computed here when absent)."""

    def __init__(self, folder: Path):
        import bm25s

        info = json.loads((folder / "analyzer.json").read_text())
        if info.get("name") != ANALYZER["name"]:
            raise ValueError(f"lexical index uses analyzer {info.get('name')!r}; this version reads {ANALYZER['name']!r}")
        self.size = self.id_space = int(info["documents"])
        self.retriever = bm25s.BM25.load(str(folder), mmap=True, show_progress=False)
        saved = folder / "term_max.npy"
        self.term_max = np.load(saved) if saved.exists() else _term_max(self.retriever.scores)
        self.unknown_term = _unknown_term(self.size)

    def known(self, term: str) -> bool:
        return term in self.retriever.vocab_dict

    def scores(self, query: str) -> tuple[np.ndarray, float]:
        terms = query_terms(query) if self.size else []
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
