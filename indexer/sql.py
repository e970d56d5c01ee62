"""Named SQL statements from the top-level `sql/` folder, one statement per file."""

from __future__ import annotations

from functools import lru_cache
from importlib import resources

SCHEMA = ("create_documents", "create_chunks", "create_embedding_spaces", "create_ingest_runs", "create_source_events")
# documents columns added after the first generations were written, and what an older file reads them as
ADDED_DOCUMENT_COLUMNS = {
    "fetched_at": ("TIMESTAMP", "NULL"),
    "links": ("VARCHAR[]", "[]"),
    "page_starts": ("INTEGER[]", "[]"),
    "anchor_offsets": ("INTEGER[]", "[]"),
    "anchor_names": ("VARCHAR[]", "[]"),
}


def missing_document_columns(db) -> list[str]:
    present = {row[0] for row in db.execute("SELECT column_name FROM information_schema.columns WHERE table_name = 'documents'").fetchall()}
    return [name for name in ADDED_DOCUMENT_COLUMNS if name not in present]


def read_as_current(db) -> None:
    """On a read-only connection to an older meta.duckdb, a temporary `documents` view that has
    every column this version reads (the missing ones empty), so the named queries run unchanged."""
    missing = missing_document_columns(db)
    if missing:
        catalog = db.execute("SELECT current_database()").fetchone()[0]
        added = ", ".join(f"{ADDED_DOCUMENT_COLUMNS[c][1]}::{ADDED_DOCUMENT_COLUMNS[c][0]} AS {c}" for c in missing)
        db.execute(f'CREATE TEMP VIEW documents AS SELECT *, {added} FROM "{catalog}".main.documents')


def upgrade_in_place(db) -> None:
    """On a writable copy of an older meta.duckdb, add the columns it lacks, NULL in the old rows
    (readers take NULL as empty). Not `DEFAULT []`: DuckDB then rewrites the table, 345 s for
    the 10,000 documents of the peer harness, against no time at all."""
    for name in missing_document_columns(db):
        db.execute(f"ALTER TABLE documents ADD COLUMN {name} {ADDED_DOCUMENT_COLUMNS[name][0]}")


def sql_names() -> list[str]:
    return sorted(p.name[:-4] for p in resources.files("static_rag_sql").iterdir() if p.name.endswith(".sql"))


@lru_cache(maxsize=None)
def load_sql(name: str) -> str:
    """The text of `sql/<name>.sql`; an unknown name is a programming error and fails loudly."""
    path = resources.files("static_rag_sql") / f"{name}.sql"
    if not path.is_file():
        raise KeyError(f"no SQL statement named {name!r}; known: {', '.join(sql_names())}")
    return path.read_text(encoding="utf-8")
