"""A space's FAISS indexes, one per segment, searched as one index with deleted rows filtered out.

Vector id = the segment's base + the row in its segment. Each segment is searched for the best
`k` of its live rows (FAISS `IDSelector`s keep deleted rows, or rows a filter excludes, out of
the search itself, so a deletion never costs a result) and the lists are merged by score.
`search` and `ntotal` behave as a FAISS index's do, for tools that expect one.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

IVF_PROBE_SHARE = 8  # an IVF segment is searched in the nearest 1/8 of its lists: recall@10 0.98–0.99 (bench/README.md "Serving")
HNSW_EF_SEARCH = 384  # graph segments (written before IVF replaced them): candidates explored per query, at least
EXACT_FILTERED_MAX = 20_000  # a filter allowing at most this many vectors of an approximate segment is searched exactly


def open_index(path: Path):
    """A published index.faiss, memory-mapped read-only: zero-copy, shared through the page cache."""
    import faiss

    return faiss.read_index(str(path), faiss.IO_FLAG_MMAP_IFC | faiss.IO_FLAG_READ_ONLY)


class DenseSegments:
    def __init__(self, parts: list[tuple[object, int, np.ndarray]], dimension: int):
        """`parts`: per segment, in vector-id order, its FAISS index, base vector id and deleted rows."""
        import faiss

        self.d = dimension
        self.parts = parts
        self._live_only = []  # per segment: a selector of its live rows (None: all are live), built once
        for index, _, gone in parts:
            selector = None
            if len(gone):
                live = np.ones(index.ntotal, dtype=bool)
                live[gone] = False
                bits = np.packbits(live, bitorder="little")  # kept alive beside the selector that points into it
                selector = (faiss.IDSelectorBitmap(index.ntotal, faiss.swig_ptr(bits)), bits)
            self._live_only.append(selector)
        self.ntotal = sum(int(index.ntotal) - len(gone) for index, _, gone in self.parts)  # live vectors

    def top(self, vector: np.ndarray, depth: int, allowed: np.ndarray | None = None) -> dict[int, float]:
        """The `depth` best live ids by inner product, best first; with `allowed`, only among those ids."""
        scores, ids = self._search(vector.reshape(1, -1).astype(np.float32), depth, allowed)
        return {int(i): float(s) for s, i in zip(scores[0], ids[0]) if i >= 0}

    def search(self, queries: np.ndarray, k: int, params=None):
        """FAISS's `search`: (scores, ids) arrays of shape (queries, k), -1 where fewer than k exist."""
        return self._search(np.ascontiguousarray(queries, dtype=np.float32), k, None)

    def cosines(self, vector: np.ndarray, ids: list[int]) -> list[float]:
        """Inner products of `vector` with the stored vectors of `ids` (cosines: vectors are normalized)."""
        if not len(ids):
            return []
        return [float(x) for x in self.reconstruct_batch(ids) @ vector.reshape(-1)]

    def reconstruct_batch(self, ids) -> np.ndarray:
        ids = np.asarray(ids, dtype=np.int64)
        out = np.zeros((len(ids), self.d), dtype=np.float32)
        for index, base, _ in self.parts:
            mine = np.flatnonzero((ids >= base) & (ids < base + index.ntotal))
            if len(mine):
                out[mine] = index.reconstruct_batch(ids[mine] - base)
        return out

    def _search(self, queries: np.ndarray, k: int, allowed: np.ndarray | None):
        import faiss

        found_scores, found_ids = [], []
        for (index, base, gone), live_only in zip(self.parts, self._live_only):
            rows = int(index.ntotal)
            local = None if allowed is None else allowed[(allowed >= base) & (allowed < base + rows)] - base
            live = rows - len(gone) if local is None else len(local)
            if live == 0 or k == 0:
                continue
            approximate = not isinstance(index, faiss.IndexFlat)
            if approximate and local is not None and len(local) <= EXACT_FILTERED_MAX:
                # A narrow filter would leave the probed lists (or the graph walk) nearly empty: score the allowed vectors exactly.
                stored = index.reconstruct_batch(local)
                scores = queries @ stored.T
                order = np.argsort(-scores, axis=1, kind="stable")[:, :k]
                found_scores.append(np.take_along_axis(scores, order, axis=1))
                found_ids.append(local[order] + base)
                continue
            params = _search_parameters(index, k)
            # Locals: params does not own its selector.
            if local is not None:
                selector = faiss.IDSelectorBatch(local)
                params.sel = selector
            elif live_only is not None:
                params.sel = live_only[0]
            wanted = min(k, live)
            scores, ids = index.search(queries, wanted, params=params)
            if isinstance(index, faiss.IndexIVF) and (ids < 0).any():
                # The probed lists held fewer than `wanted` allowed rows (a wide filter, many deletions): scan every list.
                params.nprobe = index.nlist
                scores, ids = index.search(queries, wanted, params=params)
            found_scores.append(scores)
            found_ids.append(np.where(ids >= 0, ids + base, -1))
        if not found_scores:
            return np.full((len(queries), k), -np.inf, np.float32), np.full((len(queries), k), -1, np.int64)
        scores, ids = np.concatenate(found_scores, axis=1), np.concatenate(found_ids, axis=1)
        scores = np.where(ids >= 0, scores, -np.inf)
        order = np.argsort(-scores, axis=1, kind="stable")[:, :k]
        scores, ids = np.take_along_axis(scores, order, axis=1), np.take_along_axis(ids, order, axis=1)
        if scores.shape[1] < k:
            pad = k - scores.shape[1]
            scores = np.pad(scores, ((0, 0), (0, pad)), constant_values=-np.inf)
            ids = np.pad(ids, ((0, 0), (0, pad)), constant_values=-1)
        return scores.astype(np.float32), ids.astype(np.int64)


def _search_parameters(index, k: int):
    import faiss

    if isinstance(index, faiss.IndexIVF):
        return faiss.SearchParametersIVF(nprobe=max(1, index.nlist // IVF_PROBE_SHARE))
    if isinstance(index, faiss.IndexHNSW):
        return faiss.SearchParametersHNSW(efSearch=max(HNSW_EF_SEARCH, k))
    return faiss.SearchParameters()
