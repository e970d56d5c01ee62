"""Named SQL statements from the top-level `sql/` folder, one statement per file."""

from __future__ import annotations

from functools import lru_cache
from importlib import resources

SCHEMA = ("create_documents", "create_chunks", "create_embedding_spaces", "create_ingest_runs", "create_source_events")


def sql_names() -> list[str]:
    return sorted(p.name[:-4] for p in resources.files("static_rag_sql").iterdir() if p.name.endswith(".sql"))


@lru_cache(maxsize=None)
def load_sql(name: str) -> str:
    """The text of `sql/<name>.sql`; an unknown name is a programming error and fails loudly."""
    path = resources.files("static_rag_sql") / f"{name}.sql"
    if not path.is_file():
        raise KeyError(f"no SQL statement named {name!r}; known: {', '.join(sql_names())}")
    return path.read_text(encoding="utf-8")
