"""`index run` end to end through the CLI: the generation on disk, publishing, and what goes wrong."""

import hashlib
import json
import os
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import duckdb
import faiss
import numpy as np
import pytest
from click.testing import CliRunner

from indexer.cli import cli
from indexer.documents import MAX_TITLE_CHARS
from tests.conftest import LOOPBACK_WEB, stored_vectors, write_config

LOCAL = '[[spaces]]\nprovider = "local"\n'


def run_cli(*args: str):
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert "Traceback" not in result.output
    return result


def small_corpus(folder: Path, keep: int = 3) -> Path:
    docs = folder / "docs"
    docs.mkdir(parents=True, exist_ok=True)
    (docs / "refunds.md").write_text("---\ntitle: Refunds\n---\n# Refunds\n\nCustomers can ask for a refund within 30 days of purchase.\n")
    (docs / "shipping.txt").write_text("Shipping\n\nOrders ship from our warehouse in Lisbon within two business days.\n")
    return write_config(folder, f'keep_generations = {keep}\n[[sources]]\nname = "docs"\ntype = "files"\npath = "docs"\n' + LOCAL)


def edit(folder: Path, n: int) -> None:
    """A change, so that the next run publishes a generation (a run that finds none writes nothing)."""
    (folder / "docs" / "shipping.txt").write_text(f"Shipping\n\nOrders ship from our warehouse in Lisbon within {n + 2} business days.\n")


def generation_ids(artifacts: Path) -> list[str]:
    return sorted(p.name for p in (artifacts / "generations").iterdir())


def test_examples_generation_matches_the_artifact_contract(examples_artifacts):
    current = (examples_artifacts / "CURRENT").read_text().strip()
    folder = examples_artifacts / "generations" / current
    manifest = json.loads((folder / "manifest.json").read_text())
    space_id = "local-all-minilm-l6-v2-384"
    assert manifest["generation_id"] == current and manifest["schema_version"] == 2
    assert manifest["counts"]["documents"] == 28
    for name, info in manifest["files"].items():
        data = (folder / name).read_bytes()
        assert (len(data), hashlib.sha256(data).hexdigest()) == (info["bytes"], info["sha256"]), name

    space = json.loads((folder / "spaces" / space_id / "space.json").read_text())
    assert {k: space[k] for k in ("provider", "model", "dimension", "metric", "normalized")} == {
        "provider": "local", "model": "all-MiniLM-L6-v2", "dimension": 384, "metric": "inner_product", "normalized": True,
    }
    assert space["chunking"]["chunk_tokens"] == 200 and space["tokenizer"]["max_input_tokens"] == 256

    db = duckdb.connect(str(folder / "meta.duckdb"), read_only=True)
    chunks = db.execute("SELECT count(*) FROM chunks WHERE space_id = ?", [space_id]).fetchone()[0]
    assert db.execute("SELECT count(*) FROM documents").fetchone()[0] == 28
    assert chunks == manifest["counts"]["chunks"] == space["vector_count"]
    assert db.execute("SELECT min(vector_id), max(vector_id) FROM chunks").fetchone() == (0, chunks - 1)
    # Offsets are honest: each chunk is exactly its slice of the document text.
    mismatched = db.execute(
        "SELECT count(*) FROM chunks c JOIN documents d USING (doc_id) WHERE substr(d.text, c.start_offset + 1, c.end_offset - c.start_offset) <> c.text"
    ).fetchone()[0]
    assert mismatched == 0
    assert db.execute("SELECT status, documents, errors FROM ingest_runs").fetchall() == [("success", 28, 0)]
    doc = db.execute("SELECT title, tags, path FROM documents WHERE doc_id = 'file:generations.md'").fetchone()
    assert doc == ("Generations, CURRENT and rollback", ["operations", "artifacts"], "generations.md")
    db.close()

    # A first run writes one segment holding every chunk, vector ids in document order.
    layout = json.loads((folder / "spaces" / space_id / "segments.json").read_text())
    assert layout["deleted"] == 0 and [s["rows"] for s in layout["segments"]] == [chunks]
    segment = folder / "spaces" / space_id / "segments" / layout["segments"][0]["name"]
    index = faiss.read_index(str(segment / "index.faiss"), faiss.IO_FLAG_MMAP_IFC)
    assert index.ntotal == chunks and index.d == 384
    assert json.loads((segment / "lexical" / "analyzer.json").read_text())["documents"] == chunks

    # chunks.jsonl: line i is vector i's chunk row, as the chunks table has it.
    db = duckdb.connect(str(folder / "meta.duckdb"), read_only=True)
    rows = db.execute("SELECT chunk_id, doc_id, heading_path, start_offset, end_offset, text FROM chunks WHERE space_id = ? ORDER BY vector_id", [space_id]).fetchall()
    db.close()
    lines = (segment / "chunks.jsonl").read_bytes().splitlines(keepends=True)
    offsets = np.load(segment / "chunks.offsets.npy")
    assert len(lines) == len(rows) == len(offsets) - 1 and offsets[0] == 0
    assert list(np.diff(offsets)) == [len(line) for line in lines]
    keys = ("chunk_id", "doc_id", "heading_path", "start_offset", "end_offset", "text")
    assert [tuple(json.loads(line)[k] for k in keys) for line in lines] == [(*r[:2], list(r[2]), *r[3:]) for r in rows]


def test_a_compacting_run_keeps_the_text_of_every_document_it_did_not_read_again(tmp_path):
    """Unchanged files are not read again and their stored texts are read only when needed: a run
    that deletes enough to compact the space writes every document row again, texts included."""
    config = small_corpus(tmp_path)
    (tmp_path / "docs" / "returns.md").write_text("# Returns\n\nReturn an unworn item within 60 days for store credit.\n")
    first = json.loads(run_cli("run", "-c", str(config), "--json").output)["generation"]
    (tmp_path / "docs" / "shipping.txt").unlink()
    report = json.loads(run_cli("run", "-c", str(config), "--json", "--allow-mass-delete").output)
    assert report["documents"]["skipped"] == 2 and report["documents"]["deleted"] == 1, report["documents"]
    assert report["spaces"]["local-all-minilm-l6-v2-384"]["compacted"] is True, "a third of the rows deleted: one new segment"
    texts = {}
    for generation in (first, report["generation"]):
        db = duckdb.connect(str(tmp_path / "artifacts" / "generations" / generation / "meta.duckdb"), read_only=True)
        texts[generation] = dict(db.execute("SELECT doc_id, text FROM documents").fetchall())
        db.close()
    assert texts[report["generation"]] == {k: v for k, v in texts[first].items() if k != "file:shipping.txt"}
    hit = json.loads(run_cli("search", "unworn item store credit", "-c", str(config), "-k", "1", "--json").output)["hits"][0]
    assert hit["title"] == "Returns" and "60 days" in hit["text"]


def test_two_runs_leave_two_generations_and_current_names_the_second(tmp_path):
    config = small_corpus(tmp_path)
    first = json.loads(run_cli("run", "-c", str(config), "--json").output)
    edit(tmp_path, 1)
    second = json.loads(run_cli("run", "-c", str(config), "--json").output)
    artifacts = tmp_path / "artifacts"
    assert generation_ids(artifacts) == sorted([first["generation"], second["generation"]])
    assert (artifacts / "CURRENT").read_text().strip() == second["generation"]
    assert second["total_documents"] == 2 and second["errors"] == []


def test_only_the_newest_generations_are_kept(tmp_path):
    config = small_corpus(tmp_path, keep=2)
    ids = []
    for n in range(3):
        edit(tmp_path, n)
        ids.append(json.loads(run_cli("run", "-c", str(config), "--json", "--artifacts", str(tmp_path / "out")).output)["generation"])
    assert generation_ids(tmp_path / "out") == sorted(ids[1:])
    assert not (tmp_path / "artifacts").exists(), "--artifacts overrides the config's folder"


def test_url_source_indexes_pages_and_records_failures(tmp_path, site):
    article = "<html><head><title>Returns | Shop</title></head><body><nav>Home Cart</nav><article><h1>Returns</h1>" + (
        "<p>Unworn shoes can be returned within 60 days for a full refund to the original card.</p>" * 3
    ) + "</article></body></html>"
    site.routes = {
        "/returns": (200, "text/html; charset=utf-8", article.encode()),
        "/notes.txt": (200, "text/plain", b"Opening hours\n\nWe are open from nine to five on weekdays."),
        "/moved": (301, "text/html", b"", {"Location": "/returns"}),
        "/gone": (404, "text/html", b"gone"),
        "/broken": (503, "text/html", b"down"),
        "/blank": (200, "text/html", b"<html><body></body></html>"),
        "/image.png": (200, "image/png", b"\x89PNG"),
    }
    urls = ", ".join(f'"{site.url(p)}"' for p in ["/returns", "/notes.txt", "/gone", "/broken", "/blank", "/image.png"])
    config = write_config(tmp_path, f'[[sources]]\nname = "shop"\ntype = "urls"\n{LOOPBACK_WEB}urls = [{urls}, "{site.base.upper().replace("HTTP", "http")}/returns#top"]\n' + LOCAL)
    result = run_cli("run", "-c", str(config), "--json")
    assert result.exit_code == 4, "published, with document errors"
    report = json.loads(result.output)
    assert report["total_documents"] == 2, "the uppercased, fragment-carrying duplicate normalizes to the same page"
    codes = sorted((e["code"], e["doc_id"].rsplit("/", 1)[-1], e["retryable"]) for e in report["errors"])
    assert codes == [
        ("WEB_HTTP_STATUS", "broken", True),
        ("WEB_HTTP_STATUS", "gone", False),
    ]
    warnings = sorted((w["code"], w["level"], w["doc_id"].rsplit("/", 1)[-1]) for w in report["warnings"])
    assert warnings == [("FILE_EXTRACTION_EMPTY", "warning", "blank"), ("WEB_UNSUPPORTED_TYPE", "warning", "image.png")], "a page that never had text is left out"
    folder = tmp_path / "artifacts" / "generations" / report["generation"]
    db = duckdb.connect(str(folder / "meta.duckdb"), read_only=True)
    docs = dict(db.execute("SELECT doc_id, title FROM documents").fetchall())
    assert docs == {f"url:{site.base}/returns": "Returns", f"url:{site.base}/notes.txt": "Opening hours"}
    text = db.execute("SELECT text FROM documents WHERE doc_id = ?", [f"url:{site.base}/returns"]).fetchone()[0]
    assert text.startswith("# Returns\n\nUnworn shoes") and "Home Cart" not in text
    assert db.execute("SELECT level, count(*) FROM source_events GROUP BY level ORDER BY level").fetchall() == [("error", 2), ("warning", 2)]
    assert db.execute("SELECT errors, status FROM ingest_runs").fetchone() == (2, "partial")
    db.close()


def test_warnings_alone_do_not_fail_a_run(tmp_path, site):
    site.routes = {"/ok": (200, "text/plain", b"Reachable page\n\nThis page answers."), "/logo.png": (200, "image/png", b"\x89PNG")}
    config = write_config(tmp_path, f'[[sources]]\nname = "w"\ntype = "urls"\n{LOOPBACK_WEB}urls = ["{site.url("/ok")}", "{site.url("/logo.png")}"]\n' + LOCAL)
    result = run_cli("run", "-c", str(config))
    assert result.exit_code == 0, result.output
    assert "warning: WEB_UNSUPPORTED_TYPE" in result.output and "image/png" in result.output


def test_a_file_name_that_is_not_utf8_is_indexed_under_a_mended_id(tmp_path):
    """Linux hands Python an undecodable file name with surrogates in it (caf\\udce9.txt), which no
    UTF-8 database can store: before, it failed the whole run."""
    config = small_corpus(tmp_path)
    (tmp_path / "docs" / os.fsdecode(b"caf\xe9.txt")).write_text("Cafe menu\n\nWe serve espresso all day.\n")
    result = run_cli("run", "-c", str(config))
    assert result.exit_code == 0, result.output
    assert "warning: TEXT_NOT_UNICODE file:caf\ufffd.txt: its doc_id and path held lone UTF-16 surrogates" in result.output
    hits = json.loads(run_cli("search", "espresso all day", "-c", str(config), "--json").output)["hits"]
    assert hits[0]["doc_id"] == "file:caf\ufffd.txt" and "espresso" in hits[0]["text"]
    again = run_cli("run", "-c", str(config), "--json")
    assert json.loads(again.output)["documents"]["skipped"] == 3, "the mended id is the same every run: nothing changed"


def test_a_file_name_that_is_not_utf8_gets_its_url_and_its_errors_a_mended_id(tmp_path):
    """With a url_template, quoting the name for its URL failed the file ("surrogates not allowed"),
    and that error, naming it, failed the whole run's record ("Malformed JSON … invalid high
    surrogate"): nothing was published, night after night."""
    config = small_corpus(tmp_path)
    config.write_text(config.read_text().replace('path = "docs"\n', 'path = "docs"\nurl_template = "https://help.example.com/{slug}/"\n'))
    (tmp_path / "docs" / os.fsdecode(b"caf\xe9.txt")).write_text("Cafe menu\n\nWe serve espresso all day.\n")
    (tmp_path / "docs" / os.fsdecode(b"men\xfc.txt")).write_bytes(b"Men\x80\x81 of the day\n")
    result = run_cli("run", "-c", str(config), "--json")
    report = json.loads(result.output)
    assert result.exit_code == 4 and [(e["code"], e["doc_id"]) for e in report["errors"]] == [("FILE_EXTRACTION_FAILED", "file:men\ufffd.txt")], report
    hit = json.loads(run_cli("search", "espresso all day", "-c", str(config), "--json").output)["hits"][0]
    assert (hit["doc_id"], hit["url"]) == ("file:caf\ufffd.txt", "https://help.example.com/caf%E9/"), "the name's own bytes, as a web server serves it"


def test_an_unreachable_host_is_a_document_error_not_a_failed_run(tmp_path, site):
    site.routes = {"/ok": (200, "text/plain", b"Reachable page\n\nThis page answers.")}
    site_url = site.url("/ok")
    config = write_config(tmp_path, f'[[sources]]\nname = "w"\ntype = "urls"\n{LOOPBACK_WEB}urls = ["{site_url}", "http://127.0.0.1:9/closed"]\ntimeout_seconds = 2\n' + LOCAL)
    result = run_cli("run", "-c", str(config))
    assert result.exit_code == 4
    assert "WEB_FETCH_FAILED [fetch] http://127.0.0.1:9/closed" in result.output
    assert "1 document(s) failed" in result.output


def test_a_first_run_that_finds_no_text_publishes_nothing(tmp_path):
    config = small_corpus(tmp_path)
    for f in (tmp_path / "docs").iterdir():
        f.write_text("   \n")
    result = run_cli("run", "-c", str(config))
    assert result.exit_code == 1
    assert "the generation would be empty: no document could be indexed; first problem: FILE_EXTRACTION_EMPTY" in result.output
    artifacts = tmp_path / "artifacts"
    assert not (artifacts / "CURRENT").exists()
    assert not (artifacts / "generations").exists() or generation_ids(artifacts) == [], "the refused generation left nothing behind"


def test_a_run_that_finds_nothing_names_where_it_looked(tmp_path, site):
    """The message ends with each source and where it reads; a sitemap or Notion source showed "help ()"."""
    sitemap = site.url("/sitemap.xml")  # the site answers 404: the listing fails
    config = write_config(tmp_path, f'[[sources]]\nname = "help"\ntype = "urls"\n{LOOPBACK_WEB}sitemaps = ["{sitemap}"]\n' + LOCAL)
    result = run_cli("run", "-c", str(config))
    assert result.exit_code == 1 and f"Sources: help ({sitemap}). Nothing was published." in result.output, result.output


@pytest.mark.parametrize("path, said", [("docs/a.md", "{folder} is a file, not a folder: a files source reads a folder"),
                                        ("x" * 300, "folder not found: {folder} (File name too long)")], ids=["a-file", "a-name-too-long"])
def test_a_files_path_that_is_no_folder_says_what_it_is(tmp_path, path, said):
    """A file's path, or a name too long for the disk, was "folder not found" or "unexpected OSError"."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("# Refunds\n\nRefunds take five business days.\n")
    config = write_config(tmp_path, f'[[sources]]\nname = "docs"\ntype = "files"\npath = "{path}"\n' + LOCAL)
    result = run_cli("run", "-c", str(config))
    assert result.exit_code == 1 and "unexpected" not in result.output, result.output
    assert "first problem: SOURCE_LISTING_FAILED " + said.format(folder=tmp_path / path) in result.output, result.output


def test_a_source_that_finds_nothing_is_named_while_the_others_publish(tmp_path):
    """An empty folder and a header-only answers file added nothing, in silence: the run said "2
    documents" and the admin had to guess which source was missing."""
    config = small_corpus(tmp_path)
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    (tmp_path / "faq.csv").write_text("question,answer\n")
    config.write_text(config.read_text().replace("[[spaces]]", '[[sources]]\nname = "drafts"\ntype = "files"\npath = "empty"\n'
                                                 '[[sources]]\nname = "faq"\ntype = "answers"\npath = "faq.csv"\n[[spaces]]', 1))
    for _ in range(2):  # the second run finds the docs unchanged: no document read, still not "nothing"
        result = run_cli("run", "-c", str(config), "--json")
        report = json.loads(result.output)
        empty = [(w["source"], w["message"]) for w in report["warnings"] if w["code"] == "SOURCE_EMPTY"]
        assert result.exit_code == 0 and empty == [
            ("drafts", f"drafts: found nothing to index: {tmp_path / 'empty'} holds no file of a format it reads that is not hidden or ignored by git"),
            ("faq", "faq: found nothing to index: faq.csv holds no answers")], report["warnings"]


def test_a_run_leaves_the_garbage_collector_as_the_calling_program_set_it(tmp_path):
    # A run collects less often while it works (indexer/collector.py); whatever the caller had is back after it, refused or not.
    import gc

    before = gc.get_threshold()
    gc.set_threshold(1234, 5, 6)
    try:
        config = small_corpus(tmp_path)
        for f in (tmp_path / "docs").iterdir():
            f.write_text("   \n")
        assert run_cli("run", "-c", str(config)).exit_code == 1  # nothing to publish: refused
        assert gc.get_threshold() == (1234, 5, 6)
        config = small_corpus(tmp_path / "again")
        assert run_cli("run", "-c", str(config)).exit_code == 0
        assert gc.get_threshold() == (1234, 5, 6)
    finally:
        gc.set_threshold(*before)


def test_documents_that_fail_keep_their_last_good_version(tmp_path):
    config = small_corpus(tmp_path)
    run_cli("run", "-c", str(config))
    (tmp_path / "docs" / "refunds.md").write_text("   \n")  # emptied by a bad edit
    result = run_cli("run", "-c", str(config), "--json")
    assert result.exit_code == 4
    report = json.loads(result.output)
    assert report["documents"] == {"added": 0, "updated": 0, "metadata_only": 0, "skipped": 1, "deleted": 0, "failed": 1}
    assert [(e["code"], e["doc_id"]) for e in report["errors"]] == [("FILE_EXTRACTION_EMPTY", "file:refunds.md")]
    hit = json.loads(run_cli("search", "money back within 30 days", "-c", str(config), "-k", "1", "--json").output)["hits"][0]
    assert hit["doc_id"] == "file:refunds.md" and "refund within 30 days" in hit["text"]


def test_index_report_summarizes_any_kept_run(tmp_path):
    config = small_corpus(tmp_path)
    first = json.loads(run_cli("run", "-c", str(config), "--json").output)
    (tmp_path / "docs" / "refunds.md").write_text("   \n")
    run_cli("run", "-c", str(config))

    text = run_cli("report", "-c", str(config)).output  # the current generation's run
    assert "1 skipped, 1 failed" in text and "Errors by code" in text and "FILE_EXTRACTION_EMPTY" in text
    again = json.loads(run_cli("report", first["run_id"], "-c", str(config), "--json").output)
    assert again["documents"]["added"] == 2 and again["errors"] == []
    assert {d["doc_id"] for d in again["slowest_documents"]} == {"file:refunds.md", "file:shipping.txt"}
    markdown = run_cli("report", first["generation"], "-c", str(config), "--markdown").output
    assert "| 2 | 0 | 0 | 0 | 0 | 0 |" in markdown and "#### Slowest documents to fetch" in markdown
    unknown = run_cli("report", "run-nope", "-c", str(config))
    assert unknown.exit_code == 1 and first["generation"] in unknown.output


def test_config_errors_exit_2_with_the_key_named(tmp_path, monkeypatch):
    config = write_config(tmp_path, '[[sources]]\nname = "d"\ntype = "files"\npath = "d"\n[[spaces]]\nprovider = "local"\nchunk_tokens = 5000\n')
    result = run_cli("run", "-c", str(config))
    assert result.exit_code == 2
    assert "spaces[0].chunk_tokens: must be between 32 and 254; got 5000" in result.output
    (tmp_path / "empty").mkdir()
    monkeypatch.chdir(tmp_path / "empty")
    missing = run_cli("run")
    assert missing.exit_code == 2 and "no config file" in missing.output


@pytest.mark.parametrize(
    "damage, message",
    [
        (lambda a: (a / "CURRENT").unlink(), "CURRENT is missing, though 1 generation(s) are kept: `index rollback 20"),
        (lambda a: (a / "CURRENT").write_text("\n"), "is empty or corrupt"),
        (lambda a: (a / "CURRENT").write_text("20990101T000000Z-000000\n"), "names generation 20990101T000000Z-000000, but"),
        (lambda a: (a / "CURRENT").write_text("../../etc\n"), "is empty or corrupt"),
    ],
)
def test_a_missing_or_corrupt_current_is_a_clear_error(tmp_path, damage, message):
    config = small_corpus(tmp_path)
    run_cli("run", "-c", str(config))
    damage(tmp_path / "artifacts")
    result = run_cli("search", "refund", "-c", str(config))
    assert result.exit_code == 1
    assert message in result.output


def test_a_generation_with_a_damaged_file_is_refused_by_readers(tmp_path):
    config = small_corpus(tmp_path)
    generation = json.loads(run_cli("run", "-c", str(config), "--json").output)["generation"]
    faiss_file = next((tmp_path / "artifacts" / "generations" / generation / "spaces").glob("*/segments/*/index.faiss"))
    faiss_file.write_bytes(faiss_file.read_bytes()[:100])
    result = run_cli("search", "refund", "-c", str(config))
    assert result.exit_code == 1 and "has the wrong size: the generation is damaged" in result.output


def test_search_from_the_shell_uses_the_current_generation(tmp_path):
    config = small_corpus(tmp_path)
    run_cli("run", "-c", str(config))
    result = run_cli("search", "how long do I have to send something back?", "-c", str(config), "-k", "1", "--json")
    hit = json.loads(result.output)["hits"][0]
    assert (hit["title"], hit["doc_id"]) == ("Refunds", "file:refunds.md")


def test_stored_vectors_are_unit_length(examples_artifacts):
    import numpy as np

    folder = examples_artifacts / "generations" / (examples_artifacts / "CURRENT").read_text().strip()
    norms = np.linalg.norm(np.stack(list(stored_vectors(folder / "spaces/local-all-minilm-l6-v2-384").values())), axis=1)
    assert np.allclose(norms, 1.0, atol=1e-5), "inner product equals cosine only for normalized vectors"


def test_a_space_whose_vectors_do_not_match_its_chunk_rows_is_never_published(tmp_path):
    import numpy as np

    from indexer import artifacts
    from indexer.documents import Chunk, Document
    from indexer.errors import PublishRefused

    doc = Document("file:a.md", "s", "files", "A", "alpha beta")
    chunks = [Chunk("file:a.md", 0, 0, 5, "alpha", (), 1), Chunk("file:a.md", 1, 6, 10, "beta", (), 1)]
    manifest = {"provider": "local", "model": "m", "dimension": 4, "metric": "inner_product", "normalized": True, "chunking": {"chunk_tokens": 8, "chunk_overlap": 0}}
    summary = {"documents": {"added": 1}, "chunks": {"embedded": 1, "reused": 0}, "tokens_embedded": 2, "cost_usd": 0.0, "errors": []}
    run = artifacts.RunRecord("run-x", datetime.now(timezone.utc), [], summary, [], ["local"])
    one_vector = artifacts.SpaceBuild("sp", manifest, np.zeros(0), chunks, np.ones((1, 4), dtype=np.float32))  # two rows
    with pytest.raises(ValueError, match="2 chunks but 1 vectors to add"):
        artifacts.write_generation(tmp_path, "g0", [doc], [one_vector], run)
    assert not list((tmp_path / "generations").iterdir()), "nothing left behind"

    build = artifacts.SpaceBuild("sp", manifest, np.zeros(0), chunks, np.ones((2, 4), dtype=np.float32) / 2)
    folder, _ = artifacts.write_generation(tmp_path, "g1", [doc], [build], run)
    artifacts.verify_generation(folder)
    (segment,) = (folder / "spaces" / "sp" / "segments").iterdir()
    faiss.write_index(faiss.IndexFlatIP(4), str(segment / "index.faiss"))  # a writer bug: the vectors went missing…
    manifest = json.loads((folder / "manifest.json").read_text())
    data = (segment / "index.faiss").read_bytes()  # …from a manifest that vouches for the file as written
    manifest["files"][f"spaces/sp/segments/{segment.name}/index.faiss"] = {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    (folder / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(PublishRefused, match="space sp: segment .*: 0 index.faiss vectors, but 2 rows listed"):
        artifacts.verify_generation(folder)


def test_long_documents_are_written_and_updated_whatever_their_total_size(tmp_path):
    # DuckDB holds every text over 16 KiB in memory until it is written, and again to rewrite a table
    # holding such texts: 80 Markdown files of 1.2 MB failed a run ("failed to pin block") under
    # the writer's fixed memory limit, and then so did every run after one that wrote them.
    import random
    from dataclasses import replace

    import numpy as np

    from indexer import artifacts
    from indexer.documents import Chunk, Document
    from indexer.metadb import LONG_TEXT_BYTES, WRITER_MEMORY_BASE, MetaUpdate, stored_long_text_bytes
    from indexer.sql import load_sql

    words = "refund shipping warehouse invoice account password vector chunk order".split()
    size, count = 1_200_000, 2 * WRITER_MEMORY_BASE // 1_200_000 + 1

    def long_text(i: int) -> str:
        rng = random.Random(i)
        return " ".join(f"{rng.choice(words)}{rng.randint(0, 9999)}" for _ in range(size // 9))

    docs = [Document(f"file:big{i:02d}.md", "s", "files", f"Big {i}", long_text(i)) for i in range(count)]
    chunks = [Chunk(d.doc_id, 0, 0, 40, d.text[:40], (), 8) for d in docs]
    manifest = {"provider": "local", "model": "m", "dimension": 4, "metric": "inner_product", "normalized": True, "chunking": {"chunk_tokens": 8, "chunk_overlap": 0}}
    summary = {"documents": {"added": count}, "chunks": {"embedded": count, "reused": 0}, "tokens_embedded": 8 * count, "cost_usd": 0.0, "errors": []}
    run = artifacts.RunRecord("run-x", datetime.now(timezone.utc), [], summary, [], ["local"])
    vectors = np.full((count, 4), 0.5, dtype=np.float32)
    first, _ = artifacts.write_generation(tmp_path, "g1", docs, [artifacts.SpaceBuild("sp", manifest, np.zeros(0), chunks, vectors)], run)
    artifacts.verify_generation(first)
    db = duckdb.connect(str(first / "meta.duckdb"), read_only=True)
    (exact,) = db.execute(load_sql("document_long_text_bytes"), {"longer_than": LONG_TEXT_BYTES}).fetchone()
    assert stored_long_text_bytes(db) >= exact == sum(len(d.text) for d in docs), "the storage statistics bound the long texts"
    db.close()

    edited = replace(docs[0], text=docs[0].text + " and one more sentence")
    build = artifacts.SpaceBuild("sp", manifest, np.arange(1, count), [Chunk(edited.doc_id, 0, 0, 40, edited.text[:40], (), 8)],
                                 np.full((1, 4), 0.5, dtype=np.float32), previous=first / "spaces" / "sp")
    update = MetaUpdate(first / "meta.duckdb", frozenset({edited.doc_id}))
    second, _ = artifacts.write_generation(tmp_path, "g2", [edited, *docs[1:]], [build], run, update=update)
    artifacts.verify_generation(second)
    db = duckdb.connect(str(second / "meta.duckdb"), read_only=True)
    stored = dict(db.execute("SELECT doc_id, text FROM documents").fetchall())
    db.close()
    assert stored == {d.doc_id: d.text for d in [edited, *docs[1:]]}


def test_a_metadata_write_of_many_transactions_keeps_every_row(tmp_path):
    # meta.duckdb is written in transactions of BATCHES_PER_COMMIT statements (indexer/metadb.py): none may be lost.
    import numpy as np

    from indexer import artifacts
    from indexer.documents import Chunk, Document
    from indexer.metadb import BATCHES_PER_COMMIT, DOCUMENT_BATCH

    count = 2 * BATCHES_PER_COMMIT * DOCUMENT_BATCH + 7  # documents alone span two commits and a part
    docs = [Document(f"file:d{i:04d}.md", "s", "files", f"D {i}", f"document number {i}") for i in range(count)]
    chunks = [Chunk(d.doc_id, 0, 0, len(d.text), d.text, (), 3) for d in docs]
    manifest = {"provider": "local", "model": "m", "dimension": 4, "metric": "inner_product", "normalized": True, "chunking": {"chunk_tokens": 8, "chunk_overlap": 0}}
    summary = {"documents": {"added": count}, "chunks": {"embedded": count, "reused": 0}, "tokens_embedded": 3 * count, "cost_usd": 0.0, "errors": []}
    run = artifacts.RunRecord("run-x", datetime.now(timezone.utc), [], summary, [], ["local"])
    build = artifacts.SpaceBuild("sp", manifest, np.zeros(0), chunks, np.full((count, 4), 0.5, dtype=np.float32))
    folder, _ = artifacts.write_generation(tmp_path, "g1", docs, [build], run)
    artifacts.verify_generation(folder)
    db = duckdb.connect(str(folder / "meta.duckdb"), read_only=True)
    stored = dict(db.execute("SELECT doc_id, text FROM documents").fetchall())
    rows = db.execute("SELECT vector_id, doc_id FROM chunks ORDER BY vector_id").fetchall()
    db.close()
    assert stored == {d.doc_id: d.text for d in docs}
    assert rows == [(i, d.doc_id) for i, d in enumerate(docs)]


def test_one_bad_file_never_fails_the_run(tmp_path):
    config = small_corpus(tmp_path)
    (tmp_path / "docs" / "latin1.md").write_bytes("Caf\xe9 menu".encode("latin-1"))
    (tmp_path / "docs" / "empty.md").write_text("---\ntitle: Only metadata\n---\n")
    (tmp_path / "docs" / "bad-front-matter.md").write_text("---\ntitle: [unclosed\n---\nBody text.")
    result = run_cli("run", "-c", str(config), "--json")
    assert result.exit_code == 4
    report = json.loads(result.output)
    assert report["total_documents"] == 2
    assert sorted((e["code"], e["doc_id"]) for e in report["errors"]) == [
        ("FILE_EXTRACTION_FAILED", "file:bad-front-matter.md"),
        ("FILE_EXTRACTION_FAILED", "file:latin1.md"),
    ]
    assert [(w["code"], w["doc_id"]) for w in report["warnings"]] == [("FILE_EXTRACTION_EMPTY", "file:empty.md")], "never had text: left out"
    said = next(e["message"] for e in report["errors"] if e["doc_id"] == "file:latin1.md")
    assert said.startswith("latin1.md: not UTF-8 text (byte 3: invalid continuation byte); save it as UTF-8") and 'fallback_encoding = "cp1252"' in said


def test_a_page_whose_text_is_marked_up_as_its_title_is_cited_with_a_title_of_a_line(tmp_path):
    """Broken HTML that leaves its <title> and <h1> open, or a Markdown heading that lost its
    newline, turns a page's text into its title and heading: every hit of the page carried
    thousands of characters twice, and the lexical index read them before each of its chunks."""
    config = small_corpus(tmp_path)
    prose = " ".join(f"clause{i} of the terms and conditions" for i in range(300))
    body = "Parcels to the islands travel by ferry and take three extra days. " * 40
    (tmp_path / "docs" / "broken.html").write_text(f"<html><head><title>{prose}</title></head><body><h1>{prose}<p>{body}</p></h1></body></html>")
    (tmp_path / "docs" / "run-on.md").write_text(f"# {prose} Returns are accepted within thirty days of delivery.\n\n{'Keep the receipt. ' * 30}\n")
    assert run_cli("run", "-c", str(config)).exit_code == 0
    for query, path in (("ferry to the islands extra days", "broken.html"), ("keep the receipt", "run-on.md")):
        hit = json.loads(run_cli("search", query, "-c", str(config), "--json", "-k", "1").output)["hits"][0]
        assert hit["path"] == path
        assert hit["title"].startswith("clause0 of the terms") and hit["title"].endswith("…") and len(hit["title"]) <= MAX_TITLE_CHARS, hit["title"]
        assert all(len(h) <= MAX_TITLE_CHARS for h in hit["heading_path"]) and hit["heading_path"][-1].endswith("…"), hit["heading_path"]
    assert "Returns are accepted within thirty days" in json.loads(run_cli("search", "returns accepted thirty days", "-c", str(config), "--json").output)["hits"][0]["text"], \
        "the heading's words stay in the page's text"


def test_a_folder_of_files_saved_by_windows_is_read_with_a_fallback_encoding(tmp_path):
    """Notepad and older Office save "ANSI" text: cp1252 in Western Europe and the Americas. Such
    files failed as "not UTF-8" however many there were; `fallback_encoding` reads them, and the
    folder's UTF-8 files stay read as UTF-8."""
    config = small_corpus(tmp_path)
    (tmp_path / "docs" / "menu.txt").write_bytes("Caf\u00e9 cr\u00e8me br\u00fbl\u00e9e \u2013 the chef\u2019s dessert of the day.\n".encode("cp1252"))
    assert run_cli("run", "-c", str(config)).exit_code == 4, "not UTF-8: one error, the run goes on"
    config.write_text(config.read_text().replace('path = "docs"\n', 'path = "docs"\nfallback_encoding = "windows-1252"\n'))
    (tmp_path / "docs" / "refunds.md").write_text("# Refunds\n\nA refund is paid within 30 days \u2013 na\u00efve or not.\n")  # UTF-8 beside it
    result = run_cli("run", "-c", str(config), "--json")
    assert result.exit_code == 0, result.output
    hits = {h["title"]: h["text"] for h in json.loads(run_cli("search", "crème brûlée dessert", "-c", str(config), "--json").output)["hits"]}
    assert "Caf\u00e9 cr\u00e8me br\u00fbl\u00e9e \u2013 the chef\u2019s dessert of the day." in hits["Caf\u00e9 cr\u00e8me br\u00fbl\u00e9e \u2013 the chef\u2019s dessert of the day."]
    assert "30 days \u2013 na\u00efve" in hits["Refunds"], "a UTF-8 file is not read as cp1252 (it would read \u00e2\u20ac\u201c)"
    config.write_text(config.read_text().replace('"windows-1252"', '"hex"'))
    refused = run_cli("run", "-c", str(config))
    assert refused.exit_code == 2 and "fallback_encoding: 'hex' is not a text encoding" in refused.output, refused.output


def test_the_index_command_ends_with_the_runs_exit_code_and_all_it_printed_and_wrote(tmp_path):
    # The console script ends an `index run` without the interpreter's teardown (indexer/cli/base.py
    # `end_without_teardown`): its report, exit code, run log and generation must all be whole.
    config = small_corpus(tmp_path)
    (tmp_path / "docs" / "latin1.md").write_bytes("Caf\xe9 menu".encode("latin-1"))
    index = Path(sys.executable).parent / "index"
    done = subprocess.run([str(index), "run", "-c", str(config), "--json"], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "HF_HUB_OFFLINE": "1"})
    assert done.returncode == 4, done.stderr
    report = json.loads(done.stdout)
    assert report["documents"]["added"] == 2 and report["documents"]["failed"] == 1
    hit = json.loads(run_cli("search", "money back within 30 days", "-c", str(config), "-k", "1", "--json").output)["hits"][0]
    assert hit["doc_id"] == "file:refunds.md"
    logged = json.loads(run_cli("runs", "-c", str(config), "--json").output)
    assert logged[0]["run_id"] == report["run_id"] and logged[0]["exit_code"] == 4, logged
    # The most memory the run took, for sizing the machine that runs it nightly: in its report,
    # its line of the run log, and the whole headline of the job summary (which once cut it off).
    assert 50 < report["peak_rss_mb"] < 4096 and logged[0]["peak_rss_mb"] == report["peak_rss_mb"], report["peak_rss_mb"]
    (tmp_path / "run.json").write_text(done.stdout)
    summary = run_cli("report", str(tmp_path / "run.json"), "--markdown").output
    assert f"; peak memory {report['peak_rss_mb']:.0f} MB." in summary, summary
    (tmp_path / "run.json").write_text(done.stdout, encoding="utf-16")  # what PowerShell 5's `> run.json` writes: was "unexpected UnicodeDecodeError"
    assert run_cli("report", str(tmp_path / "run.json"), "--markdown").output == summary
    newest = run_cli("runs", "-c", str(config)).output.splitlines()[1]
    assert f" {report['peak_rss_mb']:.0f} " in newest, newest
