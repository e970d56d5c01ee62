"""Incremental runs through the CLI: each decision's effect on the published generation."""

import json
import re
import shutil

from click.testing import CliRunner

from indexer.cli import cli
from tests.conftest import LOOPBACK_WEB, Site, write_config

LOCAL = '[[spaces]]\nprovider = "local"\n'


def run(*args: str):
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert "Traceback" not in result.output
    return result


def run_json(*args: str) -> tuple[int, dict]:
    result = run(*args, "--json")
    return result.exit_code, json.loads(result.output) if result.output.startswith("{") else {}


def corpus(folder, n: int = 5):
    docs = folder / "docs"
    docs.mkdir(exist_ok=True)
    topics = ["refunds within thirty days", "shipping from Lisbon", "sizes run small", "gift cards never expire", "store opening hours"]
    for i in range(n):
        (docs / f"d{i}.md").write_text(f"---\ntitle: Page {i}\n---\n# Page {i}\n\nThis page is about {topics[i]}.\n")
    return write_config(folder, '[[sources]]\nname = "shop"\ntype = "files"\npath = "docs"\n' + LOCAL)


def search_titles(config, query: str) -> list[str]:
    return [h["title"] for h in json.loads(run("search", query, "-c", str(config), "--json").output)["hits"]]


def indexed_then_edited(tmp_path, old: str, new: str) -> tuple:
    """The corpus indexed, then page d3 edited (`old` → `new`) and indexed again: (config, exit code, report)."""
    config = corpus(tmp_path)
    run("run", "-c", str(config))
    page = tmp_path / "docs" / "d3.md"
    page.write_text(page.read_text().replace(old, new))
    return config, *run_json("run", "-c", str(config))


def test_a_metadata_only_change_rewrites_the_row_and_embeds_nothing(tmp_path, local_embedder):
    config, code, report = indexed_then_edited(tmp_path, "---\n#", "url: https://shop.example/gift-cards/\n---\n#")
    assert code == 0
    assert report["documents"] == {"added": 0, "updated": 0, "metadata_only": 1, "skipped": 4, "deleted": 0, "failed": 0}
    space = report["spaces"]["local-all-minilm-l6-v2-384"]
    assert (space["embedded"], space["carried"]) == (0, 5)
    hit = json.loads(run("search", "do gift cards expire", "-c", str(config), "--json").output)["hits"][0]
    assert (hit["title"], hit["url"]) == ("Page 3", "https://shop.example/gift-cards/")


def test_a_new_title_is_searched_by_its_words_and_embeds_nothing(tmp_path, local_embedder):
    """A title is indexed with its page's chunks (lexical.indexed_text): retitling a page updates
    it, its chunk texts and their vectors unchanged."""
    config, code, report = indexed_then_edited(tmp_path, "title: Page 3", "title: Gift card policy")
    assert code == 0
    assert report["documents"] == {"added": 0, "updated": 1, "metadata_only": 0, "skipped": 4, "deleted": 0, "failed": 0}
    decisions = json.loads((tmp_path / "artifacts" / "generations" / report["generation"] / "report.json").read_text())["decisions"]
    assert [d["reason"] for d in decisions if d["doc_id"] == "file:d3.md"] == ["title changed"]
    assert report["spaces"]["local-all-minilm-l6-v2-384"]["embedded"] == 0
    lexical = run("search", "policy", "-c", str(config), "--mode", "lexical", "--json").output
    assert [h["title"] for h in json.loads(lexical)["hits"]] == ["Gift card policy"]


def test_content_edits_and_additions_embed_only_new_text(tmp_path, local_embedder):
    config = corpus(tmp_path)
    run("run", "-c", str(config))
    (tmp_path / "docs" / "d1.md").write_text("---\ntitle: Page 1\n---\n# Page 1\n\nThis page is about shipping from Porto.\n")
    (tmp_path / "docs" / "new.md").write_text("# Returns desk\n\nThe returns desk is on the second floor.\n")
    code, report = run_json("run", "-c", str(config))
    assert code == 0 and report["documents"]["updated"] == 1 and report["documents"]["added"] == 1 and report["documents"]["skipped"] == 4
    assert report["spaces"]["local-all-minilm-l6-v2-384"]["embedded"] == 2


def test_a_removed_file_is_deleted_and_the_guard_stops_mass_deletion(tmp_path, local_embedder):
    config = corpus(tmp_path)
    first = json.loads(run("run", "-c", str(config), "--json").output)["generation"]
    (tmp_path / "docs" / "d4.md").unlink()
    code, report = run_json("run", "-c", str(config))
    assert code == 0 and report["documents"]["deleted"] == 1 and report["total_documents"] == 4
    for name in ("d0.md", "d1.md", "d2.md"):
        (tmp_path / "docs" / name).unlink()
    guarded = run("run", "-c", str(config))
    assert guarded.exit_code == 3
    assert "would delete 3 of 4 documents (75%) of source 'shop'" in guarded.output and "--allow-mass-delete" in guarded.output
    current = (tmp_path / "artifacts" / "CURRENT").read_text().strip()
    assert current == report["generation"] != first, "nothing was published by the guarded run"
    code, allowed = run_json("run", "-c", str(config), "--allow-mass-delete")
    assert code == 0 and allowed["documents"]["deleted"] == 3 and allowed["total_documents"] == 1


def test_the_copy_of_meta_duckdb_a_run_makes_while_it_works_is_used_or_removed_never_left(tmp_path, local_embedder):
    """A run with changes starts copying the last meta.duckdb as soon as it knows (indexer/metadb.py
    `EarlyCopy`); whether the run publishes, finds nothing to publish or stops, no copy stays behind."""
    config = corpus(tmp_path)
    generations = tmp_path / "artifacts" / "generations"

    def leftovers() -> list[str]:
        return sorted(p.name for p in generations.iterdir() if p.name.startswith("."))

    run("run", "-c", str(config))
    (tmp_path / "docs" / "d1.md").write_text("---\ntitle: Page 1\n---\n# Page 1\n\nThis page is about shipping from Porto.\n")
    code, report = run_json("run", "-c", str(config))
    assert code == 0 and report["documents"]["updated"] == 1 and leftovers() == []
    (tmp_path / "docs" / "d2.md").write_bytes(b"\xff\xfe not text")  # fails: keeps its last good version
    code, report = run_json("run", "-c", str(config))
    assert code == 4 and report["documents"]["failed"] == 1 and leftovers() == []
    for name in ("d0.md", "d3.md", "d4.md"):  # past the deletion guard: the run stops
        (tmp_path / "docs" / name).unlink()
    assert run("run", "-c", str(config)).exit_code == 3 and leftovers() == []


def test_an_early_copy_moves_into_place_or_fails_leaving_nothing(tmp_path):
    from indexer.metadb import EarlyCopy

    source = tmp_path / "meta.duckdb"
    source.write_bytes(b"x" * 100_000)
    (tmp_path / "gen").mkdir()
    assert EarlyCopy(source, tmp_path).take(tmp_path / "gen" / "meta.duckdb")
    assert (tmp_path / "gen" / "meta.duckdb").read_bytes() == source.read_bytes()
    failed = EarlyCopy(tmp_path / "gone.duckdb", tmp_path)  # the write then copies the file itself
    assert not failed.take(tmp_path / "gen" / "other.duckdb")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gen", "meta.duckdb"]


def test_files_moved_to_another_folder_are_moved_not_lost_to_the_guard(tmp_path, local_embedder):
    """Three of five pages moved into a subfolder (`git mv`): the delete guard stopped the night
    ("would delete 3 of 5 documents") though nothing was lost, and an admin had to overrule it."""
    config = corpus(tmp_path)
    run("run", "-c", str(config))
    (tmp_path / "docs" / "shop").mkdir()
    for i in (0, 1, 2):
        (tmp_path / "docs" / f"d{i}.md").rename(tmp_path / "docs" / "shop" / f"d{i}.md")
    result = run("run", "-c", str(config))
    assert result.exit_code == 0 and "(3 added, 2 skipped, 3 deleted, 3 of them moved)" in result.output, result.output
    generation = (tmp_path / "artifacts" / "CURRENT").read_text().strip()
    report = json.loads((tmp_path / "artifacts" / "generations" / generation / "report.json").read_text())
    assert report["summary"]["chunks"]["embedded"] == 0, "their vectors are reused"
    assert {d["doc_id"]: d["reason"] for d in report["decisions"] if d["decision"] == "delete"} == {
        f"file:d{i}.md": f"moved: now indexed as file:shop/d{i}.md (the same text)" for i in (0, 1, 2)}
    for i in (3, 4):  # moved and emptied: that is a loss
        (tmp_path / "docs" / f"d{i}.md").rename(tmp_path / "docs" / "shop" / f"d{i}.md")
        (tmp_path / "docs" / "shop" / f"d{i}.md").write_text(f"---\ntitle: Page {i}\n---\n# Page {i}\n\nGone.\n")
    (tmp_path / "docs" / "shop" / "d0.md").unlink()
    result = run("run", "-c", str(config))
    assert result.exit_code == 3 and "would delete 3 of 5 documents" in result.output, result.output


def test_a_source_that_cannot_be_listed_deletes_nothing(tmp_path, local_embedder):
    config = corpus(tmp_path)
    run("run", "-c", str(config))
    shutil.move(tmp_path / "docs", tmp_path / "docs-moved")
    code, report = run_json("run", "-c", str(config))
    assert code == 4
    assert report["documents"] == {"added": 0, "updated": 0, "metadata_only": 0, "skipped": 5, "deleted": 0, "failed": 0}
    assert [e["code"] for e in report["errors"]] == ["SOURCE_LISTING_FAILED"]
    assert "Page 3" in search_titles(config, "gift cards")


def test_a_page_that_starts_failing_keeps_its_last_good_version(tmp_path, site, local_embedder):
    site.routes = {
        "/a": (200, "text/plain", b"Warranty\n\nEvery pair of shoes has a two year warranty."),
        "/b": (200, "text/plain", b"Repairs\n\nWe resole boots in our workshop."),
        "/c": (200, "text/plain", b"Care\n\nClean leather with a damp cloth."),
    }
    urls = ", ".join(f'"{site.url(p)}"' for p in ("/a", "/b", "/c"))
    config = write_config(tmp_path, f'[[sources]]\nname = "w"\ntype = "urls"\n{LOOPBACK_WEB}urls = [{urls}]\n' + LOCAL)
    run("run", "-c", str(config))
    site.routes["/a"] = (500, "text/plain", b"oops")
    site.routes["/b"] = (200, "application/octet-stream", b"\x00\x01binary")
    site.routes["/c"] = (200, "text/plain", lambda: b"Care\n\n" + b"x" * (50 * 1024 * 1024))  # 50 MB, no Content-Length
    code, report = run_json("run", "-c", str(config))
    assert code == 4
    assert report["documents"]["failed"] == 3 and report["total_documents"] == 3
    assert sorted(e["code"] for e in report["errors"]) == ["WEB_HTTP_STATUS", "WEB_TOO_LARGE"]
    assert [w["code"] for w in report["warnings"]] == ["WEB_UNSUPPORTED_TYPE"], "now binary: skipped, but the indexed version stays"
    assert "more than max_bytes (10,485,760 bytes); not downloaded further" in " ".join(e["message"] for e in report["errors"])
    assert search_titles(config, "leather cleaning")[0] == "Care"
    assert search_titles(config, "how long is the warranty")[0] == "Warranty"
    assert search_titles(config, "boot resoling workshop")[0] == "Repairs"


def test_a_page_that_starts_saying_noindex_or_answers_410_is_removed_not_kept(tmp_path, site, local_embedder):
    """Unlike a page that fails or turns binary: the site asks for it to be left out."""
    site.routes = {p: (200, "text/plain", f"{t}\n\n{body}".encode()) for p, t, body in [
        ("/a", "Warranty", "Every pair of shoes has a two year warranty."), ("/b", "Repairs", "We resole boots in our workshop."),
        ("/c", "Care", "Clean leather with a damp cloth."), ("/d", "Sizes", "Our boots run half a size small."),
        ("/e", "Laces", "Spare laces come in three colours.")]}
    urls = ", ".join(f'"{site.url(p)}"' for p in ("/a", "/b", "/c", "/d", "/e"))
    config = write_config(tmp_path, f'[[sources]]\nname = "w"\ntype = "urls"\n{LOOPBACK_WEB}urls = [{urls}]\n' + LOCAL)
    run("run", "-c", str(config))
    site.routes["/b"] = (*site.routes["/b"], {"X-Robots-Tag": "noindex"})
    code, report = run_json("run", "-c", str(config))
    assert code == 0 and report["documents"]["deleted"] == 1 and report["total_documents"] == 4, report
    assert [w["code"] for w in report["warnings"]] == ["WEB_NOINDEX"]
    assert "Repairs" not in search_titles(config, "boot resoling workshop")
    site.routes["/c"] = (410, "text/plain", b"gone")  # removed for good: unlike a 404, which may be a bad deploy
    code, report = run_json("run", "-c", str(config))
    assert code == 0 and report["documents"]["deleted"] == 1 and report["total_documents"] == 3, report
    assert sorted(w["code"] for w in report["warnings"]) == ["WEB_GONE", "WEB_NOINDEX"]


def test_the_run_is_recorded_in_the_generation(tmp_path, local_embedder):
    import duckdb

    config = corpus(tmp_path)
    run("run", "-c", str(config))
    (tmp_path / "docs" / "d0.md").write_text("---\ntitle: Page 0\n---\n# Page 0\n\nRefunds within sixty days now.\n")
    (tmp_path / "docs" / "d1.md").unlink()
    (tmp_path / "docs" / "broken.md").write_text("---\ntitle: [unclosed\n---\nx")
    code, summary = run_json("run", "-c", str(config))
    assert code == 4
    assert {k: summary[k] for k in ("documents", "chunks", "tokens_embedded")} == {
        "documents": {"added": 0, "updated": 1, "metadata_only": 0, "skipped": 3, "deleted": 1, "failed": 1},
        "chunks": {"embedded": 1, "reused": 3},
        "tokens_embedded": 0,
    }
    assert [(e["doc_id"], e["code"]) for e in summary["errors"]] == [("file:broken.md", "FILE_EXTRACTION_FAILED")]
    folder = tmp_path / "artifacts" / "generations" / summary["generation"]
    report = json.loads((folder / "report.json").read_text())
    assert {d["doc_id"]: (d["decision"], d["reason"]) for d in report["decisions"]} == {
        "file:d0.md": ("full", "content changed"),
        "file:d1.md": ("delete", "no longer listed by its source"),
        "file:d2.md": ("skip", "not modified since the last run (same bytes)"),
        "file:d3.md": ("skip", "not modified since the last run (same bytes)"),
        "file:d4.md": ("skip", "not modified since the last run (same bytes)"),
        "file:broken.md": ("failed", "FILE_EXTRACTION_FAILED; no previous version to keep"),
    }
    db = duckdb.connect(str(folder / "meta.duckdb"), read_only=True)
    row = db.execute("SELECT status, providers, added, updated, metadata_only, skipped, deleted, failed, documents, chunks_embedded, chunks_reused FROM ingest_runs").fetchone()
    assert row == ("partial", ["local"], 0, 1, 0, 3, 1, 1, 4, 1, 3)
    assert db.execute("SELECT doc_id, step, code FROM source_events").fetchall() == [("file:broken.md", "extract", "FILE_EXTRACTION_FAILED")]
    db.close()


def test_dry_run_shows_the_plan_writes_nothing_and_calls_no_provider(tmp_path, local_embedder, monkeypatch):
    config = corpus(tmp_path)
    first = json.loads(run("run", "-c", str(config), "--json").output)["generation"]
    (tmp_path / "docs" / "d0.md").write_text("---\ntitle: Page 0\n---\n# Page 0\n\nRefunds within sixty days.\n")
    for name in ("d1.md", "d2.md", "d3.md"):
        (tmp_path / "docs" / name).unlink()
    before = sorted(p.name for p in (tmp_path / "artifacts" / "generations").iterdir())
    code, plan = run_json("run", "-c", str(config), "--dry-run")
    assert code == 3 and plan["dry_run"] is True, "the real run would be stopped by the delete guard: so is the dry run's exit"
    assert plan["documents"] == {"added": 0, "updated": 1, "metadata_only": 0, "skipped": 1, "deleted": 3, "failed": 0}
    assert plan["spaces"]["local-all-minilm-l6-v2-384"]["chunks_to_embed"] == 1
    assert "would delete 3 of 5 documents (60%)" in plan["delete_guard"]
    decided = {d["doc_id"]: d["decision"] for d in plan["decisions"]}
    assert decided == {"file:d0.md": "full", "file:d1.md": "delete", "file:d2.md": "delete", "file:d3.md": "delete", "file:d4.md": "skip"}
    text = run("run", "-c", str(config), "--dry-run")
    assert text.exit_code == 3 and "full     file:d0.md  (content changed)" in text.output and "delete   file:d1.md" in text.output
    assert "file:d4.md" not in text.output, "unchanged documents are left out of the listing"
    assert sorted(p.name for p in (tmp_path / "artifacts" / "generations").iterdir()) == before
    assert (tmp_path / "artifacts" / "CURRENT").read_text().strip() == first


def test_dry_run_estimates_remote_cost_without_a_key(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# A\n\n" + "word " * 1000)
    config = write_config(tmp_path, '[[sources]]\nname = "d"\ntype = "files"\npath = "docs"\n[[spaces]]\nprovider = "openai"\nmodel = "text-embedding-3-large"\n')
    code, plan = run_json("run", "-c", str(config), "--dry-run")
    estimate = plan["spaces"]["openai-text-embedding-3-large-3072"]
    assert code == 0 and estimate["chunks_to_embed"] == 3
    assert estimate["estimated_cost_usd"] == round(estimate["tokens_to_embed"] * 0.13 / 1e6, 8) > 0


def test_status_runs_diff_and_rollback(tmp_path, local_embedder):
    config = corpus(tmp_path)
    for command in ("diff", "rollback"):  # before the first run: said "no generation older than None is kept"
        early = run(command, "-c", str(config))
        assert early.exit_code == 1 and "nothing is published in" in early.output and "run `index run` first" in early.output, early.output
    first = json.loads(run("run", "-c", str(config), "--json").output)["generation"]
    (tmp_path / "docs" / "d0.md").write_text("---\ntitle: Page 0\n---\n# Page 0\n\nRefunds within sixty days.\n")
    (tmp_path / "docs" / "d5.md").write_text("# Page 5\n\nA new page.\n")
    second = json.loads(run("run", "-c", str(config), "--json").output)["generation"]

    status = json.loads(run("status", "-c", str(config), "--json").output)
    assert status["generation"] == second and status["documents"] == 6 and status["generations"] == [first, second]
    assert (status["last_run"]["added"], status["last_run"]["updated"], status["last_run"]["skipped"]) == (1, 1, 4)

    runs = json.loads(run("runs", "-c", str(config), "--json", "--limit", "5").output)
    assert [(r["generation"], r["current"]) for r in runs] == [(second, True), (first, False)]

    diff = json.loads(run("diff", first, second, "-c", str(config), "--json").output)
    assert diff == {"from": first, "to": second, "added": ["file:d5.md"], "changed": ["file:d0.md"], "metadata_changed": [], "removed": [],
                    "titles": {"file:d5.md": "Page 5", "file:d0.md": "Page 0"}}
    unique = first[: next(i for i, (x, y) in enumerate(zip(first, second)) if x != y) + 1]
    assert json.loads(run("diff", unique, "current", "-c", str(config), "--json").output) == diff, "a unique prefix and `current`"
    assert json.loads(run("diff", "-c", str(config), "--json").output) == diff, "by default: previous -> current"
    text = run("diff", "-c", str(config)).output
    assert "  file:d5.md  Page 5" in text and f"From {first} to {second}" in text
    ambiguous = run("diff", first[:4], "current", "-c", str(config))
    assert ambiguous.exit_code == 1 and "matches 2 kept generations" in ambiguous.output

    rolled = json.loads(run("rollback", "-c", str(config), "--json").output)
    assert rolled == {"from": second, "to": first}
    assert search_titles(config, "refund")[0] == "Page 0"
    assert json.loads(run("status", "-c", str(config), "--json").output)["documents"] == 5
    assert run("rollback", second, "-c", str(config)).exit_code == 0
    missing = run("rollback", "20990101T000000.000000Z-000000", "-c", str(config))
    assert missing.exit_code == 1 and "no generation '20990101T000000.000000Z-000000'" in missing.output
    no_older = run("rollback", first, "-c", str(config)).exit_code == 0 and run("rollback", "-c", str(config))
    assert no_older.exit_code == 1 and "no generation older than" in no_older.output


def test_unchanged_web_pages_are_not_downloaded_again(tmp_path, site, local_embedder):
    site.routes = {
        "/a": (200, "text/plain", b"Warranty\n\nTwo year warranty on all shoes.", {"ETag": '"v1"'}),
        "/b": (200, "text/plain", b"Repairs\n\nWe resole boots.", {"Last-Modified": "Wed, 21 Oct 2026 07:28:00 GMT"}),
        "/c": (200, "text/plain", b"Care\n\nClean leather with a damp cloth."),
    }
    urls = ", ".join(f'"{site.url(p)}"' for p in ("/a", "/b", "/c"))
    config = write_config(tmp_path, f'[[sources]]\nname = "w"\ntype = "urls"\n{LOOPBACK_WEB}urls = [{urls}]\n' + LOCAL)
    run("run", "-c", str(config))
    assert site.not_modified == []
    code, report = run_json("run", "-c", str(config))
    assert code == 0 and report["documents"]["skipped"] == 3 and report["total_documents"] == 3
    assert sorted(site.not_modified) == ["/a", "/b"], "validators were sent and answered with 304"
    folder = tmp_path / "artifacts" / "generations" / report["generation"]
    reasons = {d["doc_id"].rsplit("/", 1)[-1]: d["reason"] for d in json.loads((folder / "report.json").read_text())["decisions"]}
    assert reasons == {"a": "not modified since the last fetch (HTTP 304)", "b": "not modified since the last fetch (HTTP 304)", "c": "unchanged"}
    assert search_titles(config, "warranty length")[0] == "Warranty"

    site.routes["/a"] = (200, "text/plain", b"Warranty\n\nThree year warranty on all shoes.", {"ETag": '"v2"'})
    code, report = run_json("run", "-c", str(config))
    assert report["documents"]["updated"] == 1 and report["documents"]["skipped"] == 2

    # New chunking: the page answering 304 is chunked again from the text the last generation stored.
    write_config(tmp_path, f'[[sources]]\nname = "w"\ntype = "urls"\n{LOOPBACK_WEB}urls = [{urls}]\n' + LOCAL + "chunk_tokens = 64\n")
    site.not_modified.clear()
    code, report = run_json("run", "-c", str(config))
    assert code == 0 and report["documents"]["skipped"] == 3 and sorted(site.not_modified) == ["/a", "/b"]
    import duckdb

    db = duckdb.connect(str(tmp_path / "artifacts" / "generations" / report["generation"] / "meta.duckdb"), read_only=True)
    texts = dict(db.execute("SELECT regexp_extract(doc_id, '[a-z]$'), string_agg(text, '' ORDER BY ordinal) FROM chunks GROUP BY ALL").fetchall())
    db.close()
    assert texts == {"a": "Warranty\n\nThree year warranty on all shoes.", "b": "Repairs\n\nWe resole boots.", "c": "Care\n\nClean leather with a damp cloth."}


def test_an_unchanged_space_reuses_its_index_files_and_the_manifest_stays_true(tmp_path, local_embedder):
    import hashlib

    config = corpus(tmp_path)
    first = json.loads(run("run", "-c", str(config), "--json").output)["generation"]
    page = tmp_path / "docs" / "d1.md"
    page.write_text(page.read_text().replace("---\n#", "url: https://shop.example/shipping/\n---\n#"))  # a new generation whose chunks did not change
    second = json.loads(run("run", "-c", str(config), "--json").output)["generation"]
    assert second != first
    old, new = (tmp_path / "artifacts" / "generations" / g for g in (first, second))
    space = "spaces/local-all-minilm-l6-v2-384"
    segment_files = sorted(p.relative_to(new) for p in (new / space / "segments").rglob("*") if p.is_file())
    assert any(p.name == "index.faiss" for p in segment_files)
    assert all((new / p).stat().st_ino == (old / p).stat().st_ino for p in segment_files), "hard-linked, not rebuilt"
    manifest = json.loads((new / "manifest.json").read_text())
    for name, info in manifest["files"].items():
        data = (new / name).read_bytes()
        assert (len(data), hashlib.sha256(data).hexdigest()) == (info["bytes"], info["sha256"]), name
    assert search_titles(config, "gift cards")[0] == "Page 3"
    (tmp_path / "docs" / "d0.md").unlink()  # prune the old generation later: the new one keeps its files
    shutil.rmtree(old)
    assert search_titles(config, "gift cards")[0] == "Page 3"


def test_a_run_that_finds_nothing_changed_writes_nothing(tmp_path, local_embedder):
    config = corpus(tmp_path)
    code, first = run_json("run", "-c", str(config))
    generations = tmp_path / "artifacts" / "generations"
    written = {p: p.stat().st_mtime_ns for p in (tmp_path / "artifacts").rglob("*") if p.is_file() and p.name != "runs.jsonl"}
    code, second = run_json("run", "-c", str(config))
    assert code == 0 and second["unchanged"] and second["generation"] == first["generation"]
    assert not [step for step in second["seconds"] if step.startswith(("load_model", "embed"))], "no model loaded, nothing embedded"
    assert [g.name for g in generations.iterdir()] == [first["generation"]]
    now = {p: p.stat().st_mtime_ns for p in (tmp_path / "artifacts").rglob("*") if p.is_file() and p.name != "runs.jsonl"}
    assert now == written, "no file was written again"
    said = run("run", "-c", str(config)).output
    assert "Nothing changed" in said and re.search(r"nothing was written  \(\d+\.\d+s, peak memory \d+ MB\)", said), said
    runs = json.loads(run("runs", "-c", str(config), "--json").output)
    assert [r["unchanged"] for r in runs] == [True, True, False] and all(r["current"] for r in runs)
    assert search_titles(config, "gift cards")[0] == "Page 3"
    (tmp_path / "docs" / "d0.md").unlink()
    code, third = run_json("run", "-c", str(config))
    assert code == 0 and not third["unchanged"] and third["documents"]["deleted"] == 1, "a change publishes again"


def test_a_crawl_follows_the_links_of_pages_that_did_not_change(tmp_path, site, local_embedder):
    home = b"<html><head><title>Home</title></head><body><article><h1>Home</h1><p>Welcome to the shoe shop help pages, where every question about orders is answered.</p><a href='/returns'>Returns</a></article></body></html>"
    returns = b"<html><head><title>Returns</title></head><body><article><h1>Returns</h1><p>Shoes can be returned within sixty days of delivery for a full refund.</p></article></body></html>"
    site.routes = {"/": (200, "text/html", home, {"ETag": '"h1"'}), "/returns": (200, "text/html", returns, {"ETag": '"r1"'})}
    config = write_config(tmp_path, f'[[sources]]\nname = "w"\ntype = "urls"\n{LOOPBACK_WEB}urls = ["{site.url("/")}"]\ncrawl = true\n' + LOCAL)
    run("run", "-c", str(config))
    code, report = run_json("run", "-c", str(config))
    assert code == 0 and sorted(site.not_modified) == ["/", "/returns"], "both fetched conditionally"
    assert report["total_documents"] == 2 and report["documents"]["deleted"] == 0, "the 304 home page's stored links still lead to /returns"


def test_pages_that_moved_are_indexed_at_their_new_address_and_the_guard_sees_a_move_not_a_loss(tmp_path, site, local_embedder):
    """A help site restructured with 301s: every page stayed indexed at its old address, so the
    chatbot cited links that redirect, and a page listed at two addresses was indexed twice."""
    topics = {"returns": "Shoes can be returned within sixty days.", "sizes": "Our boots run half a size small.",
              "care": "Clean leather with a damp cloth.", "gifts": "Gift cards never expire."}

    def article(name: str) -> tuple:
        html = f"<html><head><title>{name}</title></head><body><article><h1>{name}</h1><p>{topics[name]}</p></article></body></html>"
        return 200, "text/html", html.encode(), {"ETag": f'"{name}"'}

    def redirect(to: str) -> tuple:
        return 301, "text/html", b"", {"Location": to}

    for name in topics:  # each page served at two addresses, both listed (a sitemap with old and new URLs)
        site.routes[f"/{name}"] = site.routes[f"/help/{name}"] = article(name)
    urls = ", ".join(f'"{site.url(p)}"' for name in topics for p in (f"/{name}", f"/help/{name}"))
    config = write_config(tmp_path, f'[[sources]]\nname = "w"\ntype = "urls"\n{LOOPBACK_WEB}urls = [{urls}]\n' + LOCAL)
    assert run_json("run", "-c", str(config))[1]["total_documents"] == 8

    def hit_urls() -> list[str]:
        result = run("search", "how long can shoes be returned", "-c", str(config), "--json", "--top-k", "10")
        return sorted(h["url"].removeprefix(site.base) for h in json.loads(result.output)["hits"])

    for name in topics:
        site.routes[f"/{name}"] = redirect(f"/help/{name}")
    code, report = run_json("run", "-c", str(config))
    assert code == 0 and report["total_documents"] == 4 and report["documents"]["deleted"] == 4, "half of the source, moved: not stopped"
    assert report["chunks"]["embedded"] == 0, "their vectors are reused"
    reasons = {d["doc_id"].removeprefix(f"url:{site.base}"): d["reason"] for d in report_decisions(tmp_path, report)}
    assert reasons["/returns"] == f"moved: now indexed as url:{site.url('/help/returns')}"
    assert hit_urls() == ["/help/care", "/help/gifts", "/help/returns", "/help/sizes"], "cited where they live"

    for name in topics:  # every page moves again
        site.routes[f"/help/{name}"], site.routes[f"/guide/{name}"] = redirect(f"/guide/{name}"), article(name)
    code, report = run_json("run", "-c", str(config))
    assert code == 0 and report["documents"]["deleted"] == 4 and hit_urls() == ["/guide/care", "/guide/gifts", "/guide/returns", "/guide/sizes"]
    site.not_modified.clear()
    code, report = run_json("run", "-c", str(config))
    assert code == 0 and report["unchanged"], "nothing changed"
    assert sorted(set(site.not_modified)) == [f"/guide/{name}" for name in sorted(topics)], "asked with each address's own validators"

    for name in topics:  # a sign-in wall in front of every page: moved to pages that all read alike — lost, not moved
        site.routes[f"/guide/{name}"] = 302, "text/html", b"", {"Location": f"/login?next=/guide/{name}"}
        site.routes[f"/login?next=/guide/{name}"] = (200, "text/html", b"<html><head><title>Sign in</title></head><body><main><h1>Sign in</h1>"
                                                     b"<p>Sign in with your work account to read the help centre.</p></main></body></html>")
    result = run("run", "-c", str(config))
    assert result.exit_code == 3 and "reading one and the same text" in result.output, result.output


def test_a_site_that_moved_to_a_new_domain_is_crawled_there_without_a_loss(tmp_path, site, local_embedder):
    """The help centre moved to a new domain and redirects every old address: the crawl stayed on
    the old host, found only the home page there, and the delete guard stopped every night."""
    new = Site()
    try:
        pages = {"/": ("Help", "Welcome to the help centre."), "/returns": ("Returns", "Shoes can be returned within sixty days."),
                 "/sizes": ("Sizes", "Our boots run half a size small."), "/care": ("Care", "Clean leather with a damp cloth.")}
        links = "".join(f"<a href='{path}'>{title}</a>" for path, (title, _) in pages.items())
        for path, (title, text) in pages.items():
            site.routes[path] = new.routes[path] = (200, "text/html", f"<html><head><title>{title}</title></head><body><article><h1>{title}</h1>"
                                                                     f"<p>{text}</p>{links}</article></body></html>".encode())
        config = write_config(tmp_path, f'[[sources]]\nname = "w"\ntype = "urls"\n{LOOPBACK_WEB}urls = ["{site.url("/")}"]\ncrawl = true\n' + LOCAL)
        assert run_json("run", "-c", str(config))[1]["total_documents"] == 4
        for path in pages:
            site.routes[path] = (301, "text/html", b"", {"Location": new.url(path)})
        code, report = run_json("run", "-c", str(config))
        assert code == 0 and report["total_documents"] == 4 and report["chunks"]["embedded"] == 0, report.get("errors")
        assert {d["reason"] for d in report_decisions(tmp_path, report) if d["decision"] == "delete"} == {
            f"moved: now indexed as url:{new.url(path)}" for path in pages}
        hits = json.loads(run("search", "how long can shoes be returned", "-c", str(config), "--json").output)["hits"]
        assert hits[0]["url"] == new.url("/returns")
    finally:
        new.close()


def test_a_robots_txt_that_disallows_the_whole_site_is_stopped_and_the_guard_says_why(tmp_path, site, local_embedder):
    """A staging site's `Disallow: /` deployed to the live one: the run stopped with "would delete
    5 of 6 documents" and nothing about why."""
    names = ["returns", "sizes", "care", "gifts", "hours"]
    links = "".join(f"<a href='/{name}'>{name}</a>" for name in names)
    site.routes["/"] = (200, "text/html", f"<html><head><title>Help</title></head><body><article><h1>Help</h1><p>Questions about orders.</p>{links}</article></body></html>".encode())
    for name in names:
        site.routes[f"/{name}"] = (200, "text/html", f"<html><head><title>{name}</title></head><body><article><h1>{name}</h1><p>All about {name} at the shoe shop.</p></article></body></html>".encode())
    config = write_config(tmp_path, f'[[sources]]\nname = "w"\ntype = "urls"\n{LOOPBACK_WEB}urls = ["{site.url("/")}"]\ncrawl = true\n' + LOCAL)
    assert run_json("run", "-c", str(config))[1]["total_documents"] == 6
    site.routes["/robots.txt"] = (200, "text/plain", b"User-agent: *\nDisallow: /hours\n")  # one page: removed, as before
    code, report = run_json("run", "-c", str(config))
    assert code == 0 and report["documents"]["deleted"] == 1
    site.routes["/robots.txt"] = (200, "text/plain", b"User-agent: *\nDisallow: /\n")
    result = run("run", "-c", str(config))
    assert result.exit_code == 3 and "4 of them for WEB_ROBOTS_DISALLOWED (e.g. " in result.output and "robots.txt now disallows it" in result.output, result.output


def report_decisions(tmp_path, report: dict) -> list[dict]:
    return json.loads((tmp_path / "artifacts" / "generations" / report["generation"] / "report.json").read_text())["decisions"]


def test_a_generation_written_before_fetch_state_columns_is_still_reused(tmp_path, local_embedder):
    import duckdb

    config = corpus(tmp_path)
    run("run", "-c", str(config))
    folder = next((tmp_path / "artifacts" / "generations").iterdir())
    db = duckdb.connect(str(folder / "meta.duckdb"))
    db.execute("ALTER TABLE documents DROP COLUMN links")
    db.execute("ALTER TABLE documents DROP COLUMN fetched_at")
    db.execute("CHECKPOINT")
    db.close()
    manifest = json.loads((folder / "manifest.json").read_text())
    if "meta.duckdb" in manifest["files"]:
        manifest["files"]["meta.duckdb"]["bytes"] = (folder / "meta.duckdb").stat().st_size
        (folder / "manifest.json").write_text(json.dumps(manifest))
    code, report = run_json("run", "-c", str(config))
    assert code == 0 and report["documents"]["skipped"] == 5
    assert report["spaces"]["local-all-minilm-l6-v2-384"]["embedded"] == 0, "nothing embedded again after an upgrade"


def test_a_failure_that_repeats_says_since_when_and_a_fixed_one_starts_over(tmp_path, local_embedder):
    """A document that fails night after night keeps its last good version and the run exits 4,
    each report reading like the first: a blip and a page stale for a month looked the same."""
    from indexer.reporting import markdown

    config = corpus(tmp_path)
    run("run", "-c", str(config))
    broken = tmp_path / "docs" / "broken.md"
    broken.write_text("---\ntitle: [unclosed\n---\nx")
    streaks = []
    for _ in range(3):
        code, summary = run_json("run", "-c", str(config))
        assert code == 4
        [error] = summary["errors"]
        streaks.append((error["failed_runs"], error["failing_since"]))
    assert [runs for runs, _ in streaks] == [1, 2, 3] and len({since for _, since in streaks}) == 1, streaks
    said = run("run", "-c", str(config))  # what the admin reads
    assert f"(failed in 4 runs in a row, since {streaks[0][1][:10]})" in said.output, said.output
    assert "| longest failing |" in markdown(json.loads(run("report", "-c", str(config), "--json").output)), "the nightly job's summary"
    status = run("status", "-c", str(config)).output  # the admin's morning look
    assert f"Failing: 1 error(s) in that run, each document keeping its last good version; file:broken.md has failed 4 run(s) in a row, since {streaks[0][1][:10]}" in status, status
    broken.write_text("---\ntitle: Fixed\n---\n# Fixed\n\nNow it reads.\n")
    assert run_json("run", "-c", str(config))[0] == 0
    broken.write_text("---\ntitle: [unclosed again\n---\nx")
    code, summary = run_json("run", "-c", str(config))
    assert code == 4 and summary["errors"][0]["failed_runs"] == 1, "a failure after a good run starts a new count"
