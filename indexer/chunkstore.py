"""A space's chunks by vector id, for serving: one JSON line per chunk and their byte offsets.

DuckDB holds the same rows, but fetching 20 scattered chunks from 100k rows costs it ~3.6 ms
(it decompresses whole column segments); a memory-mapped slice and `json.loads` per chunk cost
~0.1 ms for the same 20, and every worker shares the pages. bench/README.md, "Serving".

    <segment>/chunks.jsonl        line i: {"chunk_id", "doc_id", "heading_path", "start_offset", "end_offset", "text"} of row i
    <segment>/chunks.offsets.npy  int64, n + 1 entries: line i is bytes offsets[i]:offsets[i + 1]
"""

from __future__ import annotations

import json
import mmap
import os
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from indexer.documents import Chunk, chunk_id
from indexer.lexical import indexed_text

LINES = "chunks.jsonl"
OFFSETS = "chunks.offsets.npy"


def write_chunk_store(folder: Path, space_id: str, chunks: list[Chunk]) -> None:
    offsets = np.zeros(len(chunks) + 1, dtype=np.int64)
    with open(folder / LINES, "wb") as out:
        for i, c in enumerate(chunks):
            line = json.dumps({
                "chunk_id": chunk_id(space_id, c.doc_id, c.ordinal, c.chunk_hash), "doc_id": c.doc_id, "heading_path": list(c.heading_path),
                "start_offset": c.start, "end_offset": c.end, "text": c.text,
            }, ensure_ascii=False).encode("utf-8") + b"\n"
            out.write(line)
            offsets[i + 1] = offsets[i] + len(line)
    np.save(folder / OFFSETS, offsets)


class ChunkStore:
    """Read-only and safe to share between threads (slicing a mmap takes no position)."""

    def __init__(self, folder: Path):
        # A plain array over the mapped file: numpy.memmap's own indexing was a third of a lookup.
        self.offsets = np.load(folder / OFFSETS, mmap_mode="r").view(np.ndarray)
        self._file = open(folder / LINES, "rb")
        size = (folder / LINES).stat().st_size
        if size != int(self.offsets[-1]):
            self._file.close()
            raise ValueError(f"{folder / LINES} has {size} bytes; its offsets end at {int(self.offsets[-1])}")
        self._map = mmap.mmap(self._file.fileno(), 0, access=mmap.ACCESS_READ) if size else b""

    def rows(self, rows: list[int], base: int = 0) -> dict[int, dict]:
        """Rows `rows` of this store by vector id (`base` + row), each with its `vector_id`."""
        out = {}
        for row in rows:
            start, end = self.offsets[row : row + 2].tolist()
            found = json.loads(self._map[start:end])
            found["vector_id"] = base + row
            out[base + row] = found
        return out

    def read(self, row: int) -> dict:
        """Row `row` read from the file, not the map: for a one-off pass over rows spread through
        the store, whose mapped pages would count in the process's memory until it closes."""
        start, end = self.offsets[row : row + 2].tolist()
        return json.loads(os.pread(self._file.fileno(), end - start, start))

    def close(self) -> None:
        if isinstance(self._map, mmap.mmap):
            self._map.close()
        self._file.close()


class StoredTexts:
    """The chunk texts of a store as a sequence (`build_lexical_segment` reads a slice at a
    time), read from the file when asked for; `close()` when done. With `titles` (doc_id →
    title), each as the lexical index reads it: `lexical.indexed_text`."""

    def __init__(self, folder: Path, titles: Mapping[str, str] | None = None):
        self.store = ChunkStore(folder)
        self.titles = titles

    def __len__(self) -> int:
        return len(self.store.offsets) - 1

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self._text(row) for row in range(*i.indices(len(self)))]
        return self._text(i)

    def _text(self, row: int) -> str:
        found = self.store.read(row)
        if self.titles is None:
            return found["text"]
        return indexed_text(self.titles.get(found["doc_id"], ""), found["heading_path"], found["text"])

    def close(self) -> None:
        self.store.close()


class SegmentStores:
    """The chunk stores of a space's segments, looked up by vector id (segment base + row)."""

    def __init__(self, stores: list[tuple[ChunkStore, int]]):
        self.stores = stores
        self.bases = np.asarray([base for _, base in stores], dtype=np.int64)

    def rows(self, vector_ids: list[int]) -> dict[int, dict]:
        """Rows by vector id, in the order asked for."""
        if len(self.stores) == 1:
            store, base = self.stores[0]
            return store.rows([vid - base for vid in vector_ids], base)
        where = (np.searchsorted(self.bases, vector_ids, side="right") - 1).tolist()
        out = {}
        for vid, i in zip(vector_ids, where):
            store, base = self.stores[i]
            out.update(store.rows([vid - base], base))
        return out

    def read(self, vector_id: int) -> dict:
        """One row by vector id, read from its file (ChunkStore.read)."""
        store, base = self.stores[int(np.searchsorted(self.bases, vector_id, side="right")) - 1]
        return store.read(vector_id - base)

    def close(self) -> None:
        for store, _ in self.stores:
            store.close()
