"""Every named SQL statement runs on a fresh DuckDB; hashes follow the data contract."""

import hashlib
import re
from datetime import datetime, timezone

import duckdb
import pytest

from indexer.documents import Document, content_hash, metadata_hash
from indexer.sql import SCHEMA, load_sql, sql_names

PARAMS = {
    # bulk inserts: one list per column
    "doc_ids": ["file:a.md"], "sources": ["s"], "source_types": ["files"], "titles": ["T"], "urls": [None], "paths": ["a.md"],
    "tags": [["x"]], "authors": [[]], "updated_ats": [datetime(2026, 1, 1)], "metadatas": ["{}"], "content_hashes": ["c"],
    "metadata_hashes": ["m"], "texts": ["hello"], "indexed_at": datetime(2026, 1, 2), "etags": ['"v1"'], "last_modifieds": [None],
    "fetched_ats": [datetime(2026, 1, 2)], "links": [["page:1"]], "page_starts": [[0, 3]], "anchor_offsets": [[0]], "anchor_names": [["intro"]],
    "space_id": "sp", "vector_ids": [0], "chunk_ids": ["ch"], "ordinals": [0], "heading_paths": [["H"]], "start_offsets": [0],
    "end_offsets": [5], "token_counts": [1], "chunk_hashes": ["h"],
    # single rows and queries
    "doc_id": "file:a.md", "source": "s", "chunk_id": "ch", "provider": "local", "model": "m", "dimension": 3, "metric": "inner_product",
    "normalized": True, "chunk_tokens": 200, "chunk_overlap": 40, "vector_count": 1, "manifest": "{}", "run_id": "r", "generation_id": "g",
    "started_at": datetime(2026, 1, 1), "finished_at": datetime(2026, 1, 1), "status": "ok", "documents": 1, "chunks": 1, "errors": 0,
    "report": "{}", "level": "error", "code": "X", "step": "fetch", "retryable": False, "message": "m", "source_type": None,
    "updated_after": None, "updated_before": None, "providers": ["local"], "added": 1, "updated": 0, "metadata_only": 0, "skipped": 0,
    "deleted": 0, "failed": 0, "chunks_embedded": 1, "chunks_reused": 0, "tokens_embedded": 10, "cost_usd": 0.0,
    "occurred_at": datetime(2026, 1, 2), "scope_sources": None, "space_ids": ["sp"], "limit": 10, "offset": 0, "longer_than": 16384,
    "low": 0, "high": 0,
}


def params_for(sql: str) -> dict:
    return {name: PARAMS[name] for name in set(re.findall(r"\$(\w+)", sql))}


@pytest.fixture
def fresh_db():
    db = duckdb.connect(":memory:")
    for name in SCHEMA:
        db.execute(load_sql(name))
    db.execute("ATTACH ':memory:' AS previous")  # a run's copy of the previous generation's rows reads it
    db.execute("CREATE TABLE previous.chunks AS SELECT * FROM chunks")
    yield db
    db.close()


@pytest.mark.parametrize("name", [n for n in sql_names() if n not in SCHEMA])
def test_every_statement_runs_on_a_fresh_database(fresh_db, name):
    sql = load_sql(name)
    fresh_db.execute(sql, params_for(sql))


def test_inserted_rows_come_back_through_the_read_queries(fresh_db):
    for name in ("documents_insert", "chunks_insert"):
        sql = load_sql(name)
        fresh_db.execute(sql, params_for(sql))
    rows = fresh_db.execute(load_sql("chunks_by_vector_ids"), {"space_id": "sp", "vector_ids": [0]}).fetchall()
    assert len(rows) == 1 and rows[0][1] == "ch" and rows[0][3] == ["H"]
    by_list = load_sql("chunks_by_vector_id_list")
    assert fresh_db.execute(by_list, {"space_id": "sp", "vector_ids": [0], "low": 0, "high": 0}).fetchall() == [(0, "file:a.md", 0, ["H"], 0, 5, 1, "hello")]
    assert fresh_db.execute(by_list, {"space_id": "sp", "vector_ids": [0], "low": 1, "high": 9}).fetchall() == [], "ids outside the bounds are not read"
    assert [r[0] for r in fresh_db.execute(load_sql("document_citations")).fetchall()] == [rows[0][2]]
    filtered = {"space_id": "sp", "source": "s", "source_type": None, "doc_id": None, "updated_after": datetime(2025, 12, 31), "updated_before": None, "scope_sources": ["s"]}
    assert fresh_db.execute("SELECT tags, heading_path, page_starts, anchor_names FROM documents, chunks").fetchall() == [(["x"], ["H"], [0, 3], ["intro"])], \
        "list columns survive the bulk insert"
    assert fresh_db.execute(load_sql("vector_ids_filtered"), filtered).fetchall() == [(0,)]
    assert fresh_db.execute(load_sql("vector_ids_filtered"), {**filtered, "source": "other"}).fetchall() == []


def test_unknown_statement_name_fails_loudly():
    with pytest.raises(KeyError, match="no SQL statement named 'nope'"):
        load_sql("nope")


def test_content_hash_is_sha256_of_doc_id_newline_text():
    expected = hashlib.sha256(b"file:a.md\nhello").hexdigest()
    assert content_hash("file:a.md", "hello") == expected


def test_metadata_hash_tracks_metadata_not_text_or_fetch_time():
    base = Document("file:a.md", "s", "files", "Title", "text", tags=("a",), updated_at=datetime(2026, 1, 1, tzinfo=timezone.utc))
    same_meta_other_text = Document("file:a.md", "s", "files", "Title", "other text", tags=("a",), updated_at=base.updated_at)
    retitled = Document("file:a.md", "s", "files", "New title", "text", tags=("a",), updated_at=base.updated_at)
    assert metadata_hash(base) == metadata_hash(same_meta_other_text)
    assert metadata_hash(base) != metadata_hash(retitled)
    assert base.content_hash != same_meta_other_text.content_hash


def test_pages_and_anchors_count_as_metadata_and_leave_other_hashes_as_they_were():
    from dataclasses import replace

    base = Document("file:a.html", "s", "files", "Title", "# A\n\ntext", updated_at=datetime(2026, 1, 1, tzinfo=timezone.utc))
    anchored = replace(base, anchors=((0, "a"),))
    assert metadata_hash(anchored) != metadata_hash(base) != metadata_hash(replace(base, pages=(0,)))
    assert metadata_hash(replace(anchored, anchors=((0, "a-2"),))) != metadata_hash(anchored), "a renamed id is a metadata change"
    # A document without either hashes exactly as before they existed: an upgrade re-writes nothing.
    before = hashlib.sha256(b'{"authors":[],"metadata":{},"tags":[],"title":"Title","updated_at":"2026-01-01T00:00:00","url":null}').hexdigest()
    assert metadata_hash(base) == before
