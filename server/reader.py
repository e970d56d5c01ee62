"""Open one published generation read-only: DuckDB metadata, memory-mapped FAISS and BM25 per space."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import numpy as np

from indexer.artifacts import current_generation, damaged, read_manifest, read_stale, space_rebuilt_at
from indexer.bm25 import LegacyLexicalIndex, LexicalIndex
from indexer.chance import ChanceLevel, read_level
from indexer.chunkstore import SegmentStores
from indexer.dense import DenseSegments
from indexer.documents import utc_aware
from indexer.segments import open_chunks, open_dense, open_lexical, read_layout
from indexer.probe import read_probe
from indexer.sql import load_sql, read_as_current
from server.answers import load_curated
from server.fusion import DENSE_WEIGHT
from server.links import followable
from server.relevance import threshold


@dataclass(frozen=True)
class SpaceIndex:
    space_id: str
    manifest: dict
    dense: DenseSegments  # the segments' FAISS indexes, memory-mapped
    lexical: LexicalIndex | LegacyLexicalIndex
    chunks: SegmentStores | None  # None in generations written before chunks.jsonl: DuckDB answers instead
    stale: frozenset[str] = frozenset()  # documents whose chunks here are an older version's
    rebuilt_at: str = ""  # when a run last embedded this space (ISO 8601)
    search: dict = field(default_factory=dict)  # hybrid_weight / min_relevance / min_lexical_relevance set in the config
    chance: ChanceLevel | None = None  # what a question without an answer scores here (indexer/chance.py); None: not measured
    probe: dict | None = None  # the probe sentences as the space's model embedded them (indexer/probe.py); None: none kept

    @property
    def size(self) -> int:
        return int(self.dense.ntotal)


class Generation:
    """A published generation, safe to share between threads (each thread gets its own DuckDB cursor).

    Requests hold a lease on it (`acquire` / `release`); a retired generation closes when its
    last lease ends, so a swap never pulls files from under a request."""

    def __init__(self, folder: Path):
        import duckdb

        self.folder = folder
        self._leases, self._retired, self.closed = 0, False, False
        self._lease_lock = threading.Lock()
        self.manifest = read_manifest(folder)
        self.id = self.manifest["generation_id"]
        try:
            self.db = duckdb.connect(str(folder / "meta.duckdb"), read_only=True)
            # One thread and a bounded cache per worker: queries are small, and N workers share the machine.
            # (SET, not connect(config=...): the indexer may hold the same file open in this process.)
            self.db.execute("SET threads = 1")
            self.db.execute("SET memory_limit = '512MB'")
        except duckdb.Error as exc:
            raise damaged(folder, exc) from None
        self._local = threading.local()
        # Every hit cites its document: a dict lookup here, not a join per search (1.8 ms of 5.4 at 100k chunks).
        # each url once per generation: one no reader may follow (an older generation's `javascript:`) is cited as none
        self.citations = {row["doc_id"]: {**row, "url": followable(row["url"])} for row in self.query("document_citations")}
        self.sources = frozenset(row["source"] for row in self.citations.values())
        self.curated = load_curated(self.query("answers"))  # curated answers: few, and each answer's full text is returned
        self.spaces: dict[str, SpaceIndex] = {}
        for space_id, info in self.manifest["spaces"].items():
            space_dir = folder / info["path"]
            manifest = json.loads((space_dir / "space.json").read_text(encoding="utf-8"))
            layout = read_layout(space_dir)
            self.spaces[space_id] = SpaceIndex(space_id, manifest, open_dense(layout, int(manifest["dimension"])), open_lexical(layout), open_chunks(layout),
                                               read_stale(space_dir), space_rebuilt_at(self.manifest, space_id), info.get("search", {}),
                                               ChanceLevel.of(read_level(space_dir)), read_probe(space_dir))

    @classmethod
    def open_current(cls, artifacts: Path) -> "Generation":
        return cls(current_generation(artifacts))

    @property
    def cursor(self):
        cursor = getattr(self._local, "cursor", None)
        if cursor is None:
            cursor = self._local.cursor = self.db.cursor()
            read_as_current(cursor)  # temporary views are per connection
        return cursor

    def query(self, name: str, params: dict | None = None) -> list[dict]:
        """Rows as dicts; stored timestamps are naive UTC and come back tz-aware so clients see the zone."""
        result = self.cursor.execute(load_sql(name), params or {})
        columns = [d[0] for d in result.description]
        return [{c: _aware(v) for c, v in zip(columns, row)} for row in result.fetchall()]

    def allowed_vector_ids(self, space_id: str, filters: dict) -> np.ndarray:
        rows = self.cursor.execute(load_sql("vector_ids_filtered"), {"space_id": space_id, **filters}).fetchall()
        return np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))

    def first_chunks_newest_first(self, space_id: str, allowed: np.ndarray, limit: int, offset: int) -> list[int]:
        """Of the `allowed` vector ids, each document's first chunk, newest document first (curated answers left out)."""
        params = {"space_id": space_id, "vector_ids": allowed.tolist(), "limit": limit, "offset": offset}
        return [row[0] for row in self.cursor.execute(load_sql("recent_documents"), params).fetchall()]

    def hits(self, space_id: str, vector_ids: list[int]) -> dict[int, dict]:
        """What a chatbot needs to cite each chunk: its text, span and heading path, and its document's title, url, …"""
        store, ids = self.spaces[space_id].chunks, [int(v) for v in vector_ids]
        if store is not None:
            rows = store.rows(ids)
        else:
            rows = {row["vector_id"]: row for row in self.query("chunks_by_vector_ids", {"space_id": space_id, "vector_ids": ids})}
        return {vid: {**self.citations[row["doc_id"]], **row} for vid, row in rows.items()}

    def default_space(self, preferred: str | None = None) -> SpaceIndex:
        """The space a request without `space` searches: `preferred` (the config's default_space)
        when this generation has it, else the one a run embedded most recently (first listed on a tie)."""
        if preferred in self.spaces:
            return self.spaces[preferred]
        newest = max(s.rebuilt_at for s in self.spaces.values())
        return next(s for s in self.spaces.values() if s.rebuilt_at == newest)

    def info(self) -> dict:
        counts = self.manifest["counts"]
        return {
            "generation": self.id,
            "built_at": self.manifest["created_at"],
            "documents": counts["documents"],
            "chunks": counts["chunks"],
            "sources": sorted(self.sources),
            "spaces": [
                {
                    "space_id": s.space_id,
                    "provider": s.manifest["provider"],
                    "model": s.manifest["model"],
                    "dimension": s.manifest["dimension"],
                    "vectors": s.size,
                    "rebuilt_at": s.rebuilt_at,
                    "stale_documents": len(s.stale),
                    "chance_level": s.chance is not None,  # False: relevance uses the fixed calibration (server/relevance.py)
                    # what `answerable` and the hybrid score mean here: the space's settings, else the product's defaults
                    "min_relevance": threshold(s.search, s.chance is not None),
                    "min_lexical_relevance": threshold(s.search, mode="lexical"),  # by keywords alone: lexical mode, a degraded search
                    "hybrid_weight": s.search.get("hybrid_weight", DENSE_WEIGHT),
                }
                for s in self.spaces.values()
            ],
        }

    def acquire(self) -> bool:
        """Take a lease; False if the generation is already closed (the caller takes the newer one)."""
        with self._lease_lock:
            if self.closed:
                return False
            self._leases += 1
            return True

    def release(self) -> None:
        with self._lease_lock:
            self._leases -= 1
            close = self._retired and self._leases == 0
        if close:
            self.close()

    def retire(self) -> None:
        """No new leases will be asked for: close now if none is held, else when the last one ends."""
        with self._lease_lock:
            self._retired = True
            close = self._leases == 0
        if close:
            self.close()

    def close(self) -> None:
        with self._lease_lock:
            if self.closed:
                return
            self.closed = True
        self.db.close()
        for space in self.spaces.values():
            if space.chunks is not None:
                space.chunks.close()


def _aware(value):
    return utc_aware(value) if isinstance(value, datetime) else value
