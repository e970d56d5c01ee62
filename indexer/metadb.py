"""meta.duckdb of a new generation: written afresh, or the previous generation's file updated.

A run that changed 1% of 10,000 documents spent 8 s of its 12 s of writing inserting every
document and chunk row again. When the previous generation's file has this version's schema and
no space was compacted, it is copied and only what changed is deleted and inserted: the rows of
documents this run wrote (or removed), and the chunk rows whose vector ids did not stay as they
were (indexer/segments.py `SpaceWrite.unmoved`). Compaction writes the file afresh, which also
gives back the space deleted rows leave behind.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from itertools import islice
from pathlib import Path

import numpy as np

from indexer.documents import Chunk, Document, chunk_id, utc_naive
from indexer.sql import SCHEMA, load_sql, upgrade_in_place
from indexer.textspill import SpilledText, TextSpill, text_holder


# Rows per INSERT: one statement per table took seconds less than row by row, but one for all
# 108k chunk rows of a 10,000-document run held every text twice more (the Python lists and
# DuckDB's copy) at the run's peak memory. A statement's parameters cost several times their
# text: 8,192 chunk rows (512 documents) peaked 40-50 MB above 2,048 (128), in the same time.
INSERT_BATCH = 2048
IDS_PER_QUERY = 1024  # chunks read back by vector id at a time (32 MB of text at 8,000 tokens a chunk)
IDS_PER_CONNECTION = 16_384
DOCUMENT_BATCH = 128  # documents carry their whole text
# Statements per transaction: DuckDB holds a transaction's rows until it commits. The file is the
# run's own until the generation is published, so committing as it goes loses no guarantee
# (2,000 harness documents: peak RSS 312-320 -> 287-294 MB, 5.4-5.8 -> 4.8-5.1 s, against one
# transaction for the whole file).
BATCHES_PER_COMMIT = 4
# DuckDB's buffers while writing, bounded by what the rows need: its unique-key indexes grow with
# the chunk rows and must fit (bench/writer_memory.py, 1M rows: failed to commit at 92 MB, passed at
# 100, 115 and 146 MB; 2M passed at 268), and so must
# every text over 16 KiB it writes — DuckDB 2.0 keeps such strings in memory until they are
# written (80 Markdown files of 1.2 MB failed the run at 64 MB: "failed to pin block"). Shorter
# text need not fit: it is spilled (2,000 harness documents: peak RSS 334-345 MB at a 64 MB
# base, 286-290 at 24 MB, as fast; 10,000 documents, 108k chunks: 630 MB at 128 MB, 555 at 64).
WRITER_MEMORY_BASE = 24 << 20
WRITER_MEMORY_PER_ROW = 128  # bytes per chunk row: 14 MB at 108k rows, 128 MB at 1M (1.6x what 1M rows needed)
LONG_TEXT_BYTES = 16 << 10  # DuckDB's overflow strings: longer than a sixteenth of its 256 KiB block


@dataclass(frozen=True)
class MetaUpdate:
    """The previous generation's meta.duckdb (schema as this version writes it) and the documents
    whose rows this run writes: new or changed in any column. Documents of the previous generation
    that are not in this one are removed. `copy`: the file already being copied (EarlyCopy)."""

    previous: Path
    rewritten: frozenset[str]
    copy: EarlyCopy | None = field(default=None, compare=False)


class EarlyCopy:
    """A copy of the previous generation's meta.duckdb, made on another thread while the run
    chunks and embeds, for the write to update: the copy waits on the disk, not on the GIL, and
    the 118 MB file of 10,000 documents took 0.22–0.33 s to copy into a new file on the team's
    machine (0.03 s into space just freed), up to a third of a run that changed 1% of them. It is
    named like a run's temporary folder (`.tmp-*`), so what a killed run leaves is swept the same
    way; `take` moves it where the write wants it, `discard` removes it on every other path."""

    def __init__(self, source: Path, folder: Path):
        self.path = folder / f".tmp-meta-{secrets.token_hex(6)}.duckdb"
        self._error: OSError | None = None
        self._thread = threading.Thread(target=self._copy, args=(source,), name="copy-meta", daemon=True)
        self._thread.start()

    def _copy(self, source: Path) -> None:
        try:
            shutil.copyfile(source, self.path)
        except OSError as exc:  # no room, a folder gone: the write copies it itself, and reports what fails then
            self._error = exc

    def take(self, target: Path) -> bool:
        """Move the finished copy to `target`; False when it failed (nothing is left of it then)."""
        self._thread.join()
        if self._error is not None:
            self.discard()
            return False
        os.replace(self.path, target)
        return True

    def copied(self) -> int:
        """Bytes of the copy on the disk so far (a failed copy's part is removed before the write copies it again)."""
        try:
            return self.path.stat().st_size
        except FileNotFoundError:
            return 0

    def discard(self) -> None:
        self._thread.join()
        self.path.unlink(missing_ok=True)

    def __enter__(self) -> EarlyCopy:
        return self

    def __exit__(self, *exc_info) -> None:
        self.discard()


def stored_chunks(generation: Path, space_id: str, vector_ids: np.ndarray, spill: TextSpill | None = None) -> list[Chunk]:
    """A generation's chunks of a space by vector id, in the order of `vector_ids`. With `spill`,
    their texts wait there until read (a compaction rewrites every chunk of a space: 400k chunks
    of 50,000 documents held 725 MB of texts and rows in memory; indexer/textspill.py)."""
    import duckdb

    found = {}
    wanted = np.unique(np.asarray(vector_ids, dtype=np.int64)).tolist()
    sql = load_sql("chunks_by_vector_id_list")
    # DuckDB holds a query's whole result, and keeps the blocks it read cached while the connection
    # lives: a few chunks a query, a new connection now and then (400k chunks with their texts
    # spilled: peak RSS 0.42 GB so, 0.66 GB on one connection; 1.05 GB in one query with their texts held).
    for connection_start in range(0, len(wanted), IDS_PER_CONNECTION):
        db = duckdb.connect(str(generation / "meta.duckdb"), read_only=True)
        try:
            for first in range(connection_start, min(connection_start + IDS_PER_CONNECTION, len(wanted)), IDS_PER_QUERY):
                ids = wanted[first : first + IDS_PER_QUERY]
                for vid, doc_id, ordinal, path, start, end, tokens, text in db.execute(
                        sql, {"space_id": space_id, "vector_ids": ids, "low": ids[0], "high": ids[-1]}).fetchall():
                    if spill is None:
                        found[vid] = Chunk(doc_id, ordinal, start, end, text, tuple(path), tokens)
                    else:
                        found[vid] = Chunk(doc_id, ordinal, start, end, None, tuple(path), tokens, document=_Placed(spill.hold(text), start))
        finally:
            db.close()
    return [found[int(vid)] for vid in vector_ids]


class _Placed:
    """A chunk's text kept alone, sliced as if it stood at `start` in its document (`Chunk.text`
    slices its document from the chunk's start to its end)."""

    __slots__ = ("text", "start")

    def __init__(self, text: str | SpilledText, start: int):
        self.text, self.start = text, start

    def __getitem__(self, span: slice) -> str:
        return self.text[span.start - self.start : span.stop - self.start]


def write_metadata(path: Path, generation_id: str, documents: list[Document], spaces: list, writes: dict, run, now: datetime,
                   update: MetaUpdate | None) -> bool:
    """Write meta.duckdb at `path` (`spaces`: SpaceBuild, `writes`: their SpaceWrite by space id);
    True when it updated a copy of the previous generation's."""
    import duckdb

    incremental = update is not None and not any(w.compacted for w in writes.values())
    early = update.copy if update is not None else None
    if incremental:
        if early is None or not early.take(path):
            shutil.copyfile(update.previous, path)
    elif early is not None:
        early.discard()  # a compaction writes every row: no copy to update
    db = duckdb.connect(str(path))
    try:
        # DuckDB's buffers, bounded: 108k chunk rows took ~500 MB more without a limit (the run's peak).
        written = [d for d in documents if d.doc_id in update.rewritten] if incremental else documents
        chunks = (c for b in spaces for _, c in writes[b.space_id].rows if (c.end - c.start) * 4 > LONG_TEXT_BYTES)
        long_text = long_text_bytes(text_holder(d) for d in written) + long_text_bytes(c.text for c in chunks)
        if incremental:  # rewriting the copied table's storage holds its long texts too, not only the new ones
            long_text += stored_long_text_bytes(db)
        db.execute(f"SET memory_limit = '{writer_memory(sum(b.size for b in spaces), long_text) >> 20}MB'")
        if incremental:
            upgrade_in_place(db)  # a file from before the latest documents columns
        else:
            for name in SCHEMA:
                db.execute(load_sql(name))
            if update is not None:  # rows kept as they are come from the previous file, not from Python
                quoted = "'" + str(update.previous).replace("'", "''") + "'"  # ATTACH takes a literal, not a parameter
                db.execute(f"ATTACH {quoted} AS previous (READ_ONLY)")
        # Commits only append to the WAL; the CHECKPOINT at the end writes each table as one set of
        # row groups. DuckDB's automatic checkpoints between commits left 2-3 row groups per table at
        # 10,000 documents, and the next run's update of that file took 0.15 s and 50 MB more.
        db.execute("SET checkpoint_threshold = '64GB'")
        db.execute("BEGIN TRANSACTION")
        if incremental:
            _remove_changed(db, update, documents, spaces)
        # One statement per table, columns as lists: row-by-row inserts took seconds per 10k chunks.
        inserted = 0

        def insert(sql: str, params: dict) -> None:
            nonlocal inserted
            db.execute(sql, params)
            inserted += 1
            if inserted % BATCHES_PER_COMMIT == 0:
                db.execute("COMMIT")
                db.execute("BEGIN TRANSACTION")

        if written:
            for part in _batches(written, DOCUMENT_BATCH):
                insert(load_sql("documents_insert"), {**_columns([_document_row(d) for d in part]), "indexed_at": now})
        for build in spaces:
            write = writes[build.space_id]
            if incremental:
                rows = _remove_moved(db, build.space_id, write)
            else:
                rows = write.rows
                if len(write.unmoved):
                    db.execute(load_sql("chunks_copy_unmoved"), {"space_id": build.space_id, "vector_ids": write.unmoved.tolist()})
            if rows:
                for part in _batches(rows):
                    insert(load_sql("chunks_insert"), {**_columns([_chunk_row(build.space_id, i, c) for i, c in part]), "space_id": build.space_id})
            _insert_space(db, build)
        _insert_run(db, generation_id, run, len(documents), sum(b.size for b in spaces), now)
        db.execute("COMMIT")
        db.execute("CHECKPOINT")
    finally:
        db.close()
    return incremental


def writer_memory(chunk_rows: int, long_text: int = 0) -> int:
    """Bytes of buffers DuckDB may use to write a generation of `chunk_rows` chunk rows and
    `long_text` bytes of texts it must hold (`long_text_bytes`), with a quarter more of those for
    the blocks around them."""
    return WRITER_MEMORY_BASE + WRITER_MEMORY_PER_ROW * chunk_rows + long_text + long_text // 4


def long_text_bytes(texts: Iterable[str | SpilledText]) -> int:
    """UTF-8 bytes of the texts longer than LONG_TEXT_BYTES (a chunk of the default 450 tokens never
    is). A text kept on disk knows its size: it is not read for this."""
    total = 0
    for text in texts:
        if len(text) * 4 > LONG_TEXT_BYTES:  # only then can it be that long
            if isinstance(text, SpilledText):
                size = text.size
            else:
                size = len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
            total += size if size > LONG_TEXT_BYTES else 0
    return total


def stored_long_text_bytes(db) -> int:
    """At least the bytes of the stored document texts longer than LONG_TEXT_BYTES: from the
    column's storage statistics, every text of a segment whose longest one is (~2 ms; summing
    the lengths themselves read every text, ~100 ms at 10,000 documents)."""
    try:
        segments = [stats for (stats,) in db.execute(load_sql("document_text_segments")).fetchall()]
        return sum(int(s["total_string_length"]) for s in segments if int(s["max_string_length"]) > LONG_TEXT_BYTES)
    except (KeyError, TypeError, ValueError):  # statistics shaped otherwise (another DuckDB version): count them
        (total,) = db.execute(load_sql("document_long_text_bytes"), {"longer_than": LONG_TEXT_BYTES}).fetchone()
        return int(total)


def _remove_changed(db, update: MetaUpdate, documents: list[Document], spaces: list) -> None:
    """Delete, from the copied file, the rows this run writes again or removes."""
    current = {d.doc_id for d in documents}
    gone = [doc_id for (doc_id,) in db.execute(load_sql("document_ids")).fetchall() if doc_id not in current]
    db.execute(load_sql("documents_delete"), {"doc_ids": sorted(update.rewritten) + gone})
    db.execute(load_sql("chunks_delete_other_spaces"), {"space_ids": [b.space_id for b in spaces]})
    for table in ("embedding_spaces", "ingest_runs", "source_events"):  # one row set per generation
        db.execute(f"DELETE FROM {table}")


def _remove_moved(db, space_id: str, write) -> Iterable[tuple[int, Chunk]]:
    """Delete the space's chunk rows that did not stay as they were; returns the rows to insert."""
    if write.dropped is None:
        db.execute(load_sql("chunks_delete_space"), {"space_id": space_id})
        return write.rows
    db.execute(load_sql("chunks_delete"), {"space_id": space_id, "vector_ids": write.dropped.tolist()})
    unmoved = set(write.unmoved.tolist())
    return [(vid, c) for vid, c in write.rows if vid not in unmoved]


def _insert_space(db, build) -> None:
    m = build.manifest
    db.execute(
        load_sql("embedding_spaces_insert"),
        {
            "space_id": build.space_id,
            "provider": m["provider"],
            "model": m["model"],
            "dimension": m["dimension"],
            "metric": m["metric"],
            "normalized": m["normalized"],
            "chunk_tokens": m["chunking"]["chunk_tokens"],
            "chunk_overlap": m["chunking"]["chunk_overlap"],
            "vector_count": build.size,
            "manifest": json.dumps(m),
        },
    )


def _insert_run(db, generation_id: str, run, documents: int, chunks: int, now: datetime) -> None:
    """The run that built this generation, and what went wrong in it."""
    summary = run.summary
    failures = [e for e in run.errors if e.level == "error"]
    db.execute(
        load_sql("ingest_runs_insert"),
        {
            "run_id": run.run_id,
            "generation_id": generation_id,
            "started_at": utc_naive(run.started_at),
            "finished_at": now,
            "status": "partial" if failures else "success",  # exit 4 or 0; runs that published nothing are only in runs.jsonl
            "providers": run.providers,
            **{k: summary["documents"].get(k, 0) for k in ("added", "updated", "metadata_only", "skipped", "deleted", "failed")},
            "documents": documents,
            "chunks": chunks,
            "chunks_embedded": summary["chunks"]["embedded"],
            "chunks_reused": summary["chunks"]["reused"],
            "tokens_embedded": summary["tokens_embedded"],
            "cost_usd": summary["cost_usd"],
            "errors": len(failures),
            "report": json.dumps(summary, default=str),
        },
    )
    if run.errors:
        db.executemany(
            load_sql("source_events_insert"),
            [
                {**{k: e.as_dict()[k] for k in ("source", "doc_id", "code", "step", "retryable", "message")}, "run_id": run.run_id, "level": e.level, "occurred_at": now}
                for e in run.errors
            ],
        )


def _batches(rows: Iterable, size: int = INSERT_BATCH) -> Iterator[list]:
    rows = iter(rows)
    while part := list(islice(rows, size)):
        yield part


def _columns(rows: list[dict]) -> dict[str, list]:
    """Rows → one list per column; row keys are already the SQL parameter names."""
    return {key: [row[key] for row in rows] for key in rows[0]}


def _document_row(d: Document) -> dict:
    """One document as the `documents_insert` parameters (each a column list) expect it."""
    anchors = d.anchors  # a kept document reads them from disk (indexer/textspill.py): once
    return {
        "doc_ids": d.doc_id,
        "sources": d.source,
        "source_types": d.source_type,
        "titles": d.title,
        "urls": d.url,
        "paths": d.path,
        "tags": list(d.tags),
        "authors": list(d.authors),
        "updated_ats": utc_naive(d.updated_at),
        "metadatas": json.dumps(d.metadata, default=str),
        "content_hashes": d.content_hash,
        "metadata_hashes": d.metadata_hash,
        "texts": d.text,
        "etags": d.etag,
        "last_modifieds": d.last_modified,
        "fetched_ats": utc_naive(d.fetched_at),
        "links": list(d.links),
        "page_starts": list(d.pages),
        "anchor_offsets": [offset for offset, _ in anchors],
        "anchor_names": [name for _, name in anchors],
    }


def _chunk_row(space_id: str, vector_id: int, c: Chunk) -> dict:
    """One chunk as the `chunks_insert` parameters (each a column list) expect it."""
    return {
        "vector_ids": vector_id,
        "chunk_ids": chunk_id(space_id, c.doc_id, c.ordinal, c.chunk_hash),
        "doc_ids": c.doc_id,
        "ordinals": c.ordinal,
        "heading_paths": list(c.heading_path),
        "start_offsets": c.start,
        "end_offsets": c.end,
        "token_counts": c.token_count,
        "chunk_hashes": c.chunk_hash,
        "texts": c.text,
    }


