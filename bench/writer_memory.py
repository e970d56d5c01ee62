"""How much DuckDB memory meta.duckdb's chunks table needs: whether N chunk rows, inserted and
committed as `index run` inserts them (indexer/metadb.py: batches of INSERT_BATCH rows,
BATCHES_PER_COMMIT per commit, one CHECKPOINT at the end), commit under a memory limit of
WRITER_MEMORY_BASE + PER_ROW × N.

    .venv/bin/python bench/writer_memory.py --rows 1000000 --per-row 128   # ~30 s, ~300 MB of disk under --work

Rows are of realistic length: a 60-character URL doc id, three heading levels, a 1,900-character
text. Prints the limit, ok or DuckDB's error, seconds and the process's peak RSS.
"""

from __future__ import annotations

import argparse
import hashlib
import resource
import tempfile
import time
from pathlib import Path

import duckdb

from indexer.metadb import BATCHES_PER_COMMIT, INSERT_BATCH, WRITER_MEMORY_BASE, WRITER_MEMORY_PER_ROW
from indexer.sql import SCHEMA, load_sql

TEXT = "lorem ipsum dolor sit amet " * 70


def batch(ids: list[int]) -> dict:
    return {
        "space_id": "openai-text-embedding-3-small-256",
        "vector_ids": ids,
        "chunk_ids": [hashlib.sha256(str(i).encode()).hexdigest()[:24] for i in ids],
        "doc_ids": [f"url:https://docs.example.com/guides/some-section/page-{i // 10}.html" for i in ids],
        "ordinals": [i % 10 for i in ids],
        "heading_paths": [[f"A rather long document title number {i // 10}", f"Section heading {i % 7} of the page", "Subsection about configuration"]
                          for i in ids],
        "start_offsets": [0] * len(ids),
        "end_offsets": [len(TEXT)] * len(ids),
        "token_counts": [450] * len(ids),
        "chunk_hashes": [hashlib.sha256(str(-i).encode()).hexdigest() for i in ids],
        "texts": [TEXT + str(i) for i in ids],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--per-row", type=int, default=WRITER_MEMORY_PER_ROW, help="bytes of memory limit per row (default: the indexer's)")
    parser.add_argument("--work", type=Path, default=None, help="folder for the database (default: a temporary one)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.work) as folder:
        db = duckdb.connect(str(Path(folder) / "meta.duckdb"))
        for name in SCHEMA:
            db.execute(load_sql(name))
        limit = (WRITER_MEMORY_BASE + args.per_row * args.rows) >> 20
        db.execute(f"SET memory_limit = '{limit}MB'")
        db.execute("SET checkpoint_threshold = '64GB'")
        started, outcome = time.perf_counter(), "ok"
        try:
            db.execute("BEGIN TRANSACTION")
            for number, start in enumerate(range(0, args.rows, INSERT_BATCH), start=1):
                db.execute(load_sql("chunks_insert"), batch(list(range(start, min(args.rows, start + INSERT_BATCH)))))
                if number % BATCHES_PER_COMMIT == 0:
                    db.execute("COMMIT")
                    db.execute("BEGIN TRANSACTION")
            db.execute("COMMIT")
            db.execute("CHECKPOINT")
        except duckdb.Error as exc:
            outcome = f"failed: {str(exc).splitlines()[0]}"
        finally:
            db.close()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    print(f"{args.rows:,} rows, {args.per_row} B/row: limit {limit} MB: {outcome} ({time.perf_counter() - started:.1f} s, peak RSS {peak} MB)")


if __name__ == "__main__":
    main()
