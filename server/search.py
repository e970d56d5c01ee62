"""Hybrid search over one generation: the code path the API, `index search` and evaluation share."""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime

import numpy as np

from indexer.embedders import Embedder
from server.fusion import convex_combination
from indexer.documents import utc_naive
from server.reader import Generation, SpaceIndex

MODES = ("hybrid", "dense", "lexical")
MIN_CANDIDATES = 100  # per retriever, before fusion and filtering to top_k


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
    chunk_id: str
    doc_id: str
    title: str
    url: str | None
    path: str | None
    source: str
    heading_path: tuple[str, ...]
    text: str
    start: int
    end: int
    score: float
    dense: float | None
    lexical: float | None
    updated_at: datetime | None


@dataclass(frozen=True)
class SearchResult:
    hits: list[SearchHit]
    generation: str
    space: str
    mode: str
    took_ms: float = 0.0


def search(
    generation: Generation,
    space: SpaceIndex,
    query_vector: np.ndarray | None,
    query: str,
    top_k: int = 10,
    mode: str = "hybrid",
    filters: SearchFilters = SearchFilters(),
) -> SearchResult:
    """Rank chunks of `space` for `query`. Filters apply before the cut to top_k; overlapping
    chunks of one document collapse to the best one. `query_vector` is needed unless mode is lexical."""
    started = time.perf_counter()
    allowed = generation.allowed_vector_ids(space.space_id, filters.as_params()) if filters.active() else None
    depth = min(space.size, max(MIN_CANDIDATES, top_k * 10))

    dense: dict[int, float] = {}
    lexical: dict[int, float] = {}
    lexical_scores, ceiling = None, 0.0  # the full score array: only hybrid needs it after the cut
    if mode in ("hybrid", "dense") and depth:
        dense = _dense(space, query_vector, depth, allowed)
    if mode in ("hybrid", "lexical") and depth:
        lexical_scores, ceiling = _lexical_scores(space, query, allowed)
        lexical = _top(lexical_scores, depth)

    if mode == "dense":
        ranked = sorted(dense.items(), key=lambda kv: -kv[1])
    elif mode == "lexical":
        ranked = sorted(lexical.items(), key=lambda kv: -kv[1])
    else:
        # Exact scores on both sides for every candidate either retriever found, so a chunk
        # just below one retriever's cut is not treated as a zero there.
        missing = [vid for vid in lexical if vid not in dense]  # FAISS already scored its own top ids
        dense = {**dense, **dict(zip(missing, _cosines(space, query_vector, missing)))}
        lexical = {vid: float(lexical_scores[vid]) for vid in dense}
        normalized = {vid: score / ceiling for vid, score in lexical.items()} if ceiling else {}
        fused = convex_combination(dense, normalized)
        ranked = sorted(fused.items(), key=lambda kv: -kv[1])

    hits = _collapse(generation, space.space_id, ranked, top_k, dense, lexical)
    return SearchResult(
        hits=hits,
        generation=generation.id,
        space=space.space_id,
        mode=mode,
        took_ms=(time.perf_counter() - started) * 1000,
    )


def embed_query(embedder: Embedder, query: str) -> np.ndarray:
    return np.asarray(embedder.embed_query(query), dtype=np.float32)


def _dense(space: SpaceIndex, vector: np.ndarray, depth: int, allowed: np.ndarray | None) -> dict[int, float]:
    """Top `depth` by inner product, in rank order; with filters, only among allowed ids."""
    import faiss

    if allowed is not None and len(allowed) == 0:
        return {}
    params = faiss.SearchParameters(sel=faiss.IDSelectorBatch(allowed)) if allowed is not None else None
    scores, ids = space.dense.search(vector.reshape(1, -1), depth, params=params)
    return {int(i): float(s) for s, i in zip(scores[0], ids[0]) if i >= 0}


def _cosines(space: SpaceIndex, vector: np.ndarray, ids: list[int]) -> list[float]:
    """Inner products of `vector` with the stored vectors of `ids` (cosines: vectors are normalized)."""
    if not ids:
        return []
    stored = space.dense.reconstruct_batch(np.asarray(ids, dtype=np.int64))
    return [float(x) for x in stored @ vector.reshape(-1)]


def _lexical_scores(space: SpaceIndex, query: str, allowed: np.ndarray | None) -> tuple[np.ndarray, float]:
    """BM25 score of every chunk (0 outside `allowed`) and the query's ceiling."""
    scores, ceiling = space.lexical.scores(query)
    if allowed is not None:
        masked = np.zeros_like(scores)
        masked[allowed] = scores[allowed]
        scores = masked
    return scores, ceiling


def _top(scores: np.ndarray, depth: int) -> dict[int, float]:
    """The `depth` best scores above zero (a chunk sharing no term with the query is no match), best first."""
    positive = np.flatnonzero(scores > 0)
    if len(positive) > depth:
        positive = positive[np.argpartition(-scores[positive], depth - 1)[:depth]]
    order = positive[np.argsort(-scores[positive], kind="stable")]
    return {int(i): float(scores[i]) for i in order}


def _collapse(generation: Generation, space_id: str, ranked: list[tuple[int, float]], top_k: int, dense: dict, lexical: dict) -> list[SearchHit]:
    """Walk the ranking, skipping chunks that overlap a better chunk of the same document."""
    hits: list[SearchHit] = []
    kept: dict[str, list[tuple[int, int]]] = {}
    batch = max(top_k * 2, 20)
    for offset in range(0, len(ranked), batch):
        part = ranked[offset : offset + batch]
        rows = generation.hits(space_id, [vid for vid, _ in part])
        for vid, score in part:
            row = rows[vid]
            spans = kept.setdefault(row["doc_id"], [])
            if any(row["start_offset"] < e and s < row["end_offset"] for s, e in spans):
                continue
            spans.append((row["start_offset"], row["end_offset"]))
            hits.append(
                SearchHit(
                    chunk_id=row["chunk_id"],
                    doc_id=row["doc_id"],
                    title=row["title"],
                    url=row["url"],
                    path=row["path"],
                    source=row["source"],
                    heading_path=tuple(row["heading_path"]),
                    text=row["text"],
                    start=row["start_offset"],
                    end=row["end_offset"],
                    score=score,
                    dense=dense.get(vid),
                    lexical=lexical.get(vid),
                    updated_at=row["updated_at"],
                )
            )
            if len(hits) == top_k:
                return hits
    return hits
