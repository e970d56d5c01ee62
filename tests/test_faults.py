"""Runs that cannot quietly go wrong: faults injected into loopback services (real clients) never
turn into lost documents, and every run, failed or not, can be seen afterwards."""

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from indexer.cli import cli
from indexer.config import load_config
from indexer.sources import count_items, crawl
from tests.conftest import write_config
from tests.fakes.notion_server import paragraph


def run(config, *args: str) -> tuple[int, dict]:
    result = CliRunner().invoke(cli, ["run", "-c", str(config), "--json", *args])
    assert "Traceback" not in result.output
    return result.exit_code, json.loads(result.output) if result.output.strip().startswith("{") else {"output": result.output}


def last_logged(config) -> dict:
    """The newest run in `index runs`: what an admin sees the morning after."""
    return json.loads(CliRunner().invoke(cli, ["runs", "-c", str(config), "--json"]).output)[0]


@pytest.mark.parametrize("flags", [(), ("--full-refresh",)])
def test_a_notion_page_that_keeps_failing_deletes_nothing_below_it(notion, tmp_path, local_embedder, flags):
    ws = notion.workspace
    root = ws.page("Handbook", paragraph("How the team works."), public_url="https://acme.notion.site/Handbook-0123")
    guides = ws.page("Guides", paragraph("Everything we wrote down."), parent=root)
    for i in range(5):
        ws.page(f"Guide {i}", paragraph(f"Guide number {i} explains step {i}."), parent=guides)
    config = write_config(tmp_path, f'[[sources]]\nname = "wiki"\ntype = "notion"\nroots = ["{root}"]\nrequests_per_second = 100\n'
                                    '[[spaces]]\nprovider = "local"\n')
    code, first = run(config)
    assert code == 0 and first["documents"]["added"] == 7
    said = CliRunner().invoke(cli, ["status", "-c", str(config)]).output  # would the chatbot's links open for a visitor?
    assert "wiki (notion): 7, 6 linking to notion.so pages only your workspace's members can open" in said, said

    ws.set_blocks(guides, paragraph("Everything we wrote down, revised."), edited="2026-11-20T10:00:00.000Z")  # so a normal run reads it too
    # Every retry fails; the Retry-After spares the test the backoff's 8-12 s (the path is the same).
    notion.path_faults[f"/v1/blocks/{guides}/children"] = [{"status": 503, "headers": {"Retry-After": "0"}}] * 50
    code, second = run(config, *flags)
    assert code == 4, second
    assert second["documents"]["deleted"] == 0, "a page that could not be read proves nothing about the pages below it"
    status = json.loads(CliRunner().invoke(cli, ["status", "-c", str(config), "--json"]).output)
    assert status["documents"] == 7
    logged = last_logged(config)
    assert logged["status"] == "partial" and logged["exit_code"] == 4 and logged["error_count"] == 1


# ---------------------------------------------------------------- one input never sinks a run

def files_config(tmp_path, extra: str = "") -> object:
    return write_config(tmp_path, f'[[sources]]\nname = "docs"\ntype = "files"\npath = "docs"\n{extra}[[spaces]]\nprovider = "local"\n')


def test_hostile_front_matter_and_oversized_or_outside_files_fail_alone(tmp_path, local_embedder):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "good.md").write_text("# Refunds\n\nRefunds take five days.\n")
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(f"{c}: &{c} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n" for p, c in zip("abcdefgh", "bcdefghi"))
    (docs / "bomb.md").write_text(f"---\n{bomb}---\n# Bomb\n\nText.\n")
    (docs / "deep.md").write_text("---\nkey: " + "[" * 20000 + "]" * 20000 + "\n---\n# Deep\n\nText.\n")
    (docs / "big.txt").write_text("word " * 300_000)  # 1.5 MB
    outside = tmp_path / "secret.md"
    outside.write_text("# Secret\n\nNot part of the docs.\n")
    (docs / "link.md").symlink_to(outside)
    config = files_config(tmp_path, "max_bytes = 1048576\n")
    code, report = run(config)
    assert code == 4, report
    assert report["documents"]["added"] == 1, "the good page is published"
    errors = {e["doc_id"]: e for e in report["errors"]}
    assert "expands to more than 10000 values" in errors["file:bomb.md"]["message"]
    assert "nests deeper than 32 levels" in errors["file:deep.md"]["message"]
    assert errors["file:big.txt"]["code"] == "FILE_TOO_LARGE"
    warning = next(w for w in report["warnings"] if w["doc_id"] == "file:link.md")
    assert warning["code"] == "FILE_OUTSIDE_SOURCE" and "follow_symlinks" in warning["message"]
    assert last_logged(config)["status"] == "partial" and last_logged(config)["error_count"] == 3

    followed = files_config(tmp_path, "max_bytes = 1048576\nfollow_symlinks = true\n")
    code, report = run(followed)
    assert report["documents"]["added"] == 1 and not any(w["doc_id"] == "file:link.md" for w in report["warnings"]), "followed when asked"


def test_a_link_whose_target_moved_is_warned_about_not_dropped_silently(tmp_path, local_embedder):
    """`latest.md -> versions/v2.md`, and v2 renamed to v3: the link's page vanished from search at
    the next run, and nothing in the report said why."""
    docs = tmp_path / "docs"
    (docs / "versions").mkdir(parents=True)
    (docs / "refunds.md").write_text("# Refunds\n\nRefunds take five days.\n")
    (docs / "versions" / "v2.md").write_text("# Release 2\n\nRelease 2 adds gift cards.\n")
    (docs / "latest.md").symlink_to("versions/v2.md")
    config = files_config(tmp_path)
    code, report = run(config)
    assert code == 0 and report["documents"]["added"] == 3, report
    (docs / "versions" / "v2.md").rename(docs / "versions" / "v3.md")
    (docs / "old.md").symlink_to("versions/v1.md")  # never there: a new link to nothing
    code, report = run(config)
    warnings = {w["doc_id"]: w for w in report["warnings"]}
    assert code == 0 and warnings["file:latest.md"]["code"] == "FILE_LINK_BROKEN", report
    assert "a link to versions/v2.md, which does not exist" in warnings["file:latest.md"]["message"]
    assert warnings["file:old.md"]["code"] == "FILE_LINK_BROKEN" and report["documents"]["failed"] == 0
    served = tmp_path / "artifacts" / "generations" / (tmp_path / "artifacts" / "CURRENT").read_text().strip()
    decided = {d["doc_id"]: d["decision"] for d in json.loads((served / "report.json").read_text())["decisions"]}
    assert decided["file:latest.md"] == "delete" and decided["file:versions/v3.md"] == "full" and "file:old.md" not in decided, decided


def test_office_files_the_indexer_cannot_read_are_named_and_lock_files_are_not_failures(tmp_path, local_embedder):
    """A shared folder of documents: a deck and a spreadsheet were left out without a word (a user
    asks why the deck is never found), one listed in `extensions` failed as "not UTF-8 text … save
    it as UTF-8", and the "~$" owner file Word keeps beside a document someone has open failed the
    run (exit 4) as "not a readable Word (.docx) document"."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "refunds.md").write_text("# Refunds\n\nRefunds take five days.\n")
    (docs / "winter-sale.key").write_bytes(b"PK\x03\x04 an Apple Keynote deck")
    (docs / "prices.numbers").write_bytes(b"PK\x03\x04 an Apple Numbers spreadsheet")
    (docs / "~$refunds.docx").write_bytes(b"\x0bJane Doe  ")  # Word's owner file, 162 bytes in life
    (docs / "notes.png").write_bytes(b"\x89PNG")  # an image is no document: not listed at all
    (docs / "roadmap.gdoc").write_text('{"doc_id": "1AbC", "email": "ana@example.com"}')  # Google Drive for desktop's shortcut
    code, report = run(files_config(tmp_path))
    warnings = {w["doc_id"]: w for w in report["warnings"]}
    assert code == 0 and report["documents"] | {"added": 1, "failed": 0} == report["documents"], report
    assert set(warnings) == {"file:winter-sale.key", "file:prices.numbers", "file:roadmap.gdoc"}, warnings
    deck = warnings["file:winter-sale.key"]
    assert deck["code"] == "FILE_TYPE_UNREAD" and "a Keynote file, a format this version does not read" in deck["message"]
    assert "export it as .pptx or PDF" in deck["message"] and "a Numbers file" in warnings["file:prices.numbers"]["message"]
    assert "a Google Docs shortcut file" in warnings["file:roadmap.gdoc"]["message"]
    assert "its text is in Google Drive: download it as .docx" in warnings["file:roadmap.gdoc"]["message"]
    source = load_config(files_config(tmp_path)).sources[0]
    ticks = []
    crawl(source, ticks.append)
    assert sum(ticks) == count_items(source) == 4, "the reading bar ends full: the files left out count (it stopped at 1/4)"
    config = write_config(tmp_path, '[[sources]]\nname = "docs"\ntype = "files"\npath = "docs"\nextensions = [".md", ".key"]\n'
                                    '[[spaces]]\nprovider = "local"\n')
    code, said = run(config)
    assert code == 2 and ".key files (Keynote) are not text" in said["output"] and "UTF-8" not in said["output"], said


def test_git_lfs_pointers_are_named_and_never_indexed_as_the_text(tmp_path, local_embedder):
    """The nightly job checks the repository out without LFS (actions/checkout's default): a PDF kept
    in LFS failed as "not a readable PDF (… Data format error)", and a Markdown page in LFS was
    indexed as its pointer — "version https://git-lfs.github.com/spec/v1 oid sha256:…" — cited as
    the answer, over its last good version."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "refunds.md").write_text("# Refunds\n\nRefunds reach the card within five business days.\n")
    (docs / "hours.md").write_text("# Hours\n\nThe shop opens at nine.\n")
    config = files_config(tmp_path)
    assert run(config)[0] == 0
    pointer = b"version https://git-lfs.github.com/spec/v1\noid sha256:" + b"4d7a2146" * 8 + b"\nsize 48213\n"
    (docs / "refunds.md").write_bytes(pointer)
    (docs / "manual.pdf").write_bytes(pointer)
    code, report = run(config)
    errors = {e["doc_id"]: e for e in report["errors"]}
    assert code == 4 and set(errors) == {"file:refunds.md", "file:manual.pdf"}, report
    assert all(e["code"] == "FILE_LFS_POINTER" for e in errors.values())
    said = errors["file:manual.pdf"]["message"]
    assert "a Git LFS pointer to a 48,213-byte file, not the file itself" in said and "`lfs: true`" in said and "git lfs pull" in said
    found = json.loads(CliRunner().invoke(cli, ["search", "how long do refunds take?", "-c", str(config), "--json"]).output)
    assert "five business days" in found["hits"][0]["text"] and not any("git-lfs" in h["text"] for h in found["hits"]), found["hits"]
    extracted = CliRunner().invoke(cli, ["extract", str(docs / "manual.pdf")])
    assert extracted.exit_code == 1 and "FILE_LFS_POINTER" in extracted.output and "Traceback" not in extracted.output


def test_a_folder_source_lists_what_a_reader_expects_and_reads_whole_files(tmp_path):
    import os

    from indexer.config import load_config
    from indexer.sources.files import list_files, read_bytes

    docs = tmp_path / "docs"
    (docs / "guide" / "deep").mkdir(parents=True)
    (docs / ".drafts").mkdir()
    (tmp_path / "elsewhere").mkdir()
    for name in ("a.md", "b.txt", "guide/c.MD", "guide/deep/d.md", ".drafts/e.md", ".f.md", "image.png", "../elsewhere/x.md"):
        (docs / name).write_text("# Text\n\nWords.\n")
    (docs / "alias.md").symlink_to(docs / "a.md")  # a link to a file is a file
    (docs / "gone.md").symlink_to(tmp_path / "nothing.md")  # a dangling link is listed, to be warned about (FILE_LINK_BROKEN)
    (docs / "linked").symlink_to(tmp_path / "elsewhere")  # a linked folder is not entered
    source = load_config(files_config(tmp_path)).sources[0]
    listed = [os.path.relpath(path, docs) for path in list_files(source).paths]
    assert listed == ["a.md", "alias.md", "b.txt", "gone.md", "guide/c.MD", "guide/deep/d.md"]

    big = docs / "big.txt"
    big.write_bytes(os.urandom(3 << 20))
    assert read_bytes(str(big), 10) == read_bytes(str(big), big.stat().st_size) == big.read_bytes(), "a file longer than its stat said is read to its end"


def test_pages_that_break_parsers_are_each_one_documents_error(tmp_path, local_embedder, site):
    import gzip

    from tests.conftest import LOOPBACK_WEB

    good = b"<html><head><title>Refunds</title></head><body><main><h1>Refunds</h1><p>Refunds take five business days to reach your card.</p></main></body></html>"
    links = (b'<html><head><title>Links</title><link rel="canonical" href="http://[::1"></head><body><main><h1>Links</h1>'
             b'<p>See <a href="http://127.0.0.1:99999/x">a bad port</a>, <a href="http://[::1/y">a bad IPv6 host</a> and <a href="/refunds">refunds</a>. '
             b'These words are here so that the page has enough text to be indexed as an article.</p></main></body></html>')
    charset = b'<html><head><meta charset="x-no-such-charset"><title>Odd</title></head><body><main><h1>Odd charset</h1><p>A page that declares a charset nobody knows, with enough words to be its main content.</p></main></body></html>'
    site.routes["/refunds"] = (200, "text/html; charset=utf-8", good)
    site.routes["/links"] = (200, "text/html; charset=utf-8", links)
    site.routes["/odd"] = (200, "text/html", charset)
    site.routes["/odd-header"] = (200, "text/html; charset=x-unknown-42", good.replace(b"Refunds", b"Returns"))
    bomb = gzip.compress(gzip.compress(b"\0" * (200 * 1024 * 1024)))  # about 200 KB that expand to 200 MB
    site.routes["/sitemap.xml.gz"] = (200, "application/gzip", bomb)
    pages = [site.url(p) for p in ("/refunds", "/links", "/odd", "/odd-header")]
    config = write_config(tmp_path, f'[[sources]]\nname = "web"\ntype = "urls"\nurls = {json.dumps(pages)}\nsitemaps = ["{site.url("/sitemap.xml.gz")}"]\n'
                                    f'{LOOPBACK_WEB}[[spaces]]\nprovider = "local"\n')
    code, report = run(config)
    assert code == 4, report.get("output", report.get("errors"))  # the sitemap's failure is reported, the pages are published
    assert report["documents"]["added"] == 4, (report["errors"], report["warnings"])
    assert any("more than 10 MB once decompressed" in e["message"] for e in report["errors"])
    assert last_logged(config)["status"] == "partial"


# ---------------------------------------------------------------- every run can be seen

def test_every_run_is_logged_with_its_outcome_even_when_nothing_was_published(tmp_path, local_embedder, monkeypatch):
    docs = tmp_path / "docs"
    docs.mkdir()
    for i in range(4):
        (docs / f"page{i}.md").write_text(f"# Page {i}\n\nPage {i} explains topic number {i}.\n")
    config = files_config(tmp_path)
    assert run(config)[0] == 0                                   # success
    (docs / "page0.md").write_bytes(b"# Bad\n\n\xff\xfe not UTF-8\n")
    assert run(config)[0] == 4                                   # partial: published, one document failed
    for i in range(1, 4):
        (docs / f"page{i}.md").unlink()
    assert run(config)[0] == 3                                   # failed: the delete guard stopped it
    openai = write_config(tmp_path, '[[sources]]\nname = "docs"\ntype = "files"\npath = "docs"\n[[spaces]]\nprovider = "openai"\n')
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert run(openai)[0] == 2                                   # failed: no key

    runs = json.loads(CliRunner().invoke(cli, ["runs", "-c", str(config), "--json"]).output)
    assert [r["status"] for r in runs] == ["failed", "failed", "partial", "success"]
    assert [r["exit_code"] for r in runs] == [2, 3, 4, 0]
    assert "OPENAI_API_KEY" in runs[0]["error"] and "would delete 3 of 4" in runs[1]["error"]
    assert runs[2]["generation"] and runs[2]["current"] and runs[2]["error_count"] == 1 and runs[1]["generation"] is None
    table = CliRunner().invoke(cli, ["runs", "-c", str(config)]).output
    assert "status" in table.splitlines()[0] and "failed" in table and "* = the generation being served" in table
    report = CliRunner().invoke(cli, ["report", runs[1]["run_id"], "-c", str(config)])
    text = " ".join(report.output.split())
    assert report.exit_code == 0 and "failed (exit 3) and published nothing: this run would delete 3 of 4" in text


# ---------------------------------------------------------------- stable dates for files

def git(folder, *args: str) -> None:
    import subprocess

    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org",
           "GIT_AUTHOR_DATE": "2026-03-04T05:06:07+00:00", "GIT_COMMITTER_DATE": "2026-03-04T05:06:07+00:00", "PATH": "/usr/bin:/bin"}
    subprocess.run(["git", "-C", str(folder), *args], check=True, capture_output=True, env=env)


def test_file_dates_come_from_git_and_a_new_mtime_alone_changes_nothing(tmp_path, local_embedder):
    import os

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "committed.md").write_text("# Refunds\n\nRefunds take five days.\n")
    (docs / "dated.md").write_text("---\nupdated_at: 2025-01-02\n---\n# Hours\n\nOpen at nine.\n")
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", "docs")
    git(tmp_path, "commit", "-q", "-m", "docs")
    (docs / "loose.md").write_text("# Loose\n\nNot committed yet.\n")
    config = files_config(tmp_path)
    assert run(config)[0] == 0
    def status() -> dict[str, str]:
        import duckdb

        from indexer.artifacts import current_generation

        db = duckdb.connect(str(current_generation(tmp_path / "artifacts") / "meta.duckdb"), read_only=True)
        try:
            return {doc_id: str(updated_at) for doc_id, updated_at in db.execute("SELECT doc_id, updated_at FROM documents").fetchall()}
        finally:
            db.close()

    dates = status()
    assert dates["file:committed.md"] == "2026-03-04 05:06:07", "the last commit's date"
    assert dates["file:dated.md"].startswith("2025-01-02"), "front matter wins"

    for name in ("committed.md", "dated.md", "loose.md"):  # what a fresh checkout does to every file
        os.utime(docs / name, (2_000_000_000, 2_000_000_000))
    code, again = run(config)
    assert code == 0 and again["documents"]["skipped"] == 3 and again["documents"]["metadata_only"] == 0
    assert status() == dates, "no date moved to 'now'"


def test_files_git_ignores_are_left_out_as_a_fresh_checkout_would_leave_them(tmp_path):
    """A docs folder with its built site beside it (MkDocs' `site/`, ignored): before, every page was
    indexed twice, once as Markdown and once as the built HTML — and not on the nightly's checkout.
    (Sphinx's `_build/` and Jekyll's `_site/` are never listed: tests/test_docs_sites.py.)"""
    docs = tmp_path / "docs"
    (docs / "site" / "html").mkdir(parents=True)
    (docs / ".gitignore").write_text("site/\n*.draft.md\n")
    (docs / "refunds.md").write_text("# Refunds\n\nRefunds take five days.\n")
    (docs / "site" / "html" / "refunds.html").write_text("<html><body><h1>Refunds</h1><p>Refunds take five days.</p></body></html>")
    (docs / "pricing.draft.md").write_text("# Pricing\n\nNot decided yet.\n")
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", "docs")
    git(tmp_path, "commit", "-q", "-m", "docs")
    (docs / "shipping.md").write_text("# Shipping\n\nNot committed, not ignored.\n")

    def planned(config) -> list[str]:
        code, plan = run(config, "--dry-run")
        assert code == 0, plan
        return sorted(d["doc_id"] for d in plan["decisions"])

    assert planned(files_config(tmp_path)) == ["file:refunds.md", "file:shipping.md"]
    everything = planned(files_config(tmp_path, "respect_gitignore = false\n"))
    assert everything == ["file:pricing.draft.md", "file:refunds.md", "file:shipping.md", "file:site/html/refunds.html"]


def test_a_wikis_sidebar_and_a_books_table_of_contents_are_not_pages(tmp_path):
    """A GitHub wiki's _Sidebar.md and an mdBook's SUMMARY.md list every page's title: indexed,
    they matched the words of every question and were cited instead of the pages. A docs folder's
    requirements.txt (the theme Read the Docs installs) is no page either."""
    docs = tmp_path / "docs"
    (docs / "book").mkdir(parents=True)
    (docs / "_Sidebar.md").write_text("* [Home](Home)\n* [Refunds](Refunds)\n")
    (docs / "book" / "SUMMARY.md").write_text("# Summary\n\n- [Refunds](./refunds.md)\n- [Shipping](./shipping.md)\n  - [Customs](./customs.md)\n")
    (docs / "book" / "refunds.md").write_text("# Refunds\n\nRefunds take five days.\n")
    (docs / "summary.md").write_text("# Summary of the year\n\nSales grew; [details](report.md) are in the report.\n")  # a page
    (docs / "requirements.txt").write_text("# the theme Read the Docs installs\nsphinx>=7\nfuro==2024.1.29\nmyst-parser[linkify]\n")
    (docs / "system-requirements.txt").write_text("The agent needs 8 GB of memory.\n")  # a page
    code, plan = run(files_config(tmp_path), "--dry-run")
    assert code == 0 and sorted(d["doc_id"] for d in plan["decisions"]) == ["file:book/refunds.md", "file:summary.md",
                                                                           "file:system-requirements.txt"], plan
    said = sorted((w["code"], w["message"]) for w in plan["warnings"])
    assert said == [("FILE_NAVIGATION", "_Sidebar.md: a wiki sidebar, not a page: not indexed"),
                    ("FILE_NAVIGATION", "book/SUMMARY.md: a table of contents (3 links), not a page: not indexed"),
                    ("FILE_NAVIGATION", "requirements.txt: a pip requirements file, not a page: not indexed")]


def test_installed_packages_are_never_indexed_even_outside_git(tmp_path):
    """A docs site's folder copied to a server, or unpacked from an archive, has no .gitignore at
    work: its node_modules (and a Python virtualenv's site-packages) were indexed, thousands of
    package READMEs and licences beside the team's few pages."""
    docs = tmp_path / "docs"
    for folder in ("node_modules/left-pad", "venv/lib/python3.11/site-packages/requests-2.0.dist-info", "guide"):
        (docs / folder).mkdir(parents=True)
    (docs / "node_modules" / "left-pad" / "README.md").write_text("# left-pad\n\nPads strings on the left.\n")
    (docs / "venv" / "lib" / "python3.11" / "site-packages" / "requests-2.0.dist-info" / "LICENSE.txt").write_text("Apache License 2.0\n")
    (docs / "guide" / "refunds.md").write_text("# Refunds\n\nRefunds take five days.\n")
    code, plan = run(files_config(tmp_path), "--dry-run")
    assert code == 0 and [d["doc_id"] for d in plan["decisions"]] == ["file:guide/refunds.md"], plan


# ---------------------------------------------------------------- web retries within a run

def test_a_web_page_that_fails_for_a_moment_is_fetched_again_in_the_same_run(tmp_path, local_embedder, site):
    from tests.conftest import LOOPBACK_WEB

    page = b"<html><head><title>Refunds</title></head><body><main><h1>Refunds</h1><p>Refunds take five business days to reach your card.</p></main></body></html>"
    answers = [(503, "text/plain", b"busy", {"Retry-After": "1"}), (500, "text/plain", b"oops"), (200, "text/html; charset=utf-8", page)]
    served = []

    def flaky():
        served.append(answers[min(len(served), 2)])
        return served[-1]

    site.routes["/refunds"] = flaky
    always = (503, "text/plain", b"down")
    site.routes["/down"] = always
    config = write_config(tmp_path, f'[[sources]]\nname = "web"\ntype = "urls"\nurls = ["{site.url("/refunds")}", "{site.url("/down")}"]\n'
                                    f'{LOOPBACK_WEB}[[spaces]]\nprovider = "local"\n')
    code, report = run(config)
    assert code == 4 and report["documents"]["added"] == 1, "the flaky page is in; the dead one is the run's only error"
    assert len(served) == 3 and report["retries"] == {"web": 4}, "2 retries each"
    assert report["errors"][0]["message"].endswith("HTTP 503 (after 3 attempts)")
    markdown = CliRunner().invoke(cli, ["report", "-c", str(config), "--markdown"]).output
    assert "Fetches retried in the run" in markdown


def test_an_error_page_served_with_200_keeps_the_last_good_version(tmp_path, local_embedder, site):
    """A CMS or single-page app answers a missing page with 200 and "Page not found": after a bad
    deploy, the refunds page's text became "Sorry, we couldn't find that page" and the chatbot lost
    its answer, with nothing in the run to say so."""
    from tests.conftest import LOOPBACK_WEB

    article = b"<html><head><title>Refunds | Shop</title></head><body><main><h1>Refunds</h1><p>Refunds take five business days to reach your card.</p></main></body></html>"
    missing = (b'<html><head><title>Page not found | Shop</title><meta name="robots" content="noindex"></head><body><main><h1>Oops! Page not found</h1>'
               b"<p>Sorry, we couldn't find that page. Try the search box or go back home.</p></main></body></html>")
    site.routes["/refunds"] = (200, "text/html; charset=utf-8", article)
    config = write_config(tmp_path, f'[[sources]]\nname = "web"\ntype = "urls"\nurls = ["{site.url("/refunds")}"]\n'
                                    f'{LOOPBACK_WEB}[[spaces]]\nprovider = "local"\n')
    assert run(config)[0] == 0
    site.routes["/refunds"] = (200, "text/html; charset=utf-8", missing)
    code, report = run(config)
    assert code == 4 and [e["code"] for e in report["errors"]] == ["WEB_HTTP_STATUS"], report
    assert 'reads as an error page ("Oops! Page not found"): a soft 404' in report["errors"][0]["message"]
    found = json.loads(CliRunner().invoke(cli, ["search", "how long do refunds take?", "-c", str(config), "--json"]).output)
    assert "five business days" in found["hits"][0]["text"], "the last good version is still what the chatbot reads"



def test_a_consent_wall_in_place_of_every_page_is_stopped_by_the_delete_guard(tmp_path, local_embedder, site):
    """A cookie-consent wall (or a login page) answered with 200 for every page of a site — as some
    CDNs do for a crawler's address — replaced each page's text and was published as "4 updated",
    exit 0: the chatbot lost every answer of that site, and nothing said so."""
    from tests.conftest import LOOPBACK_WEB

    topics = ["Refunds take five business days to reach your card.", "Parcels leave the Lisbon warehouse every weekday.",
              "Gift cards never expire and work in every store.", "Boots run small: order half a size up."]
    for i, line in enumerate(topics):
        site.routes[f"/p{i}"] = (200, "text/html", f"<html><head><title>Page {i}</title></head><body><main><h1>Page {i}</h1>"
                                                   f"<p>{line * 12}</p></main></body></html>".encode())
    urls = ", ".join(f'"{site.url(f"/p{i}")}"' for i in range(4))
    config = write_config(tmp_path, f'[[sources]]\nname = "web"\ntype = "urls"\nurls = [{urls}]\n{LOOPBACK_WEB}[[spaces]]\nprovider = "local"\n')
    code, first = run(config)
    assert code == 0
    wall = (b"<html><head><title>Before you continue</title></head><body><main><h1>Before you continue</h1><p>We use cookies to deliver "
            b"our services. Select Accept all to continue, or Reject all.</p></main></body></html>")
    for i in range(3):
        site.routes[f"/p{i}"] = (200, "text/html", wall)
    code, report = run(config)
    assert code == 3, report
    message = last_logged(config)["error"]
    assert "leave 3 of the 4 documents of source 'web' (75%) with less than a quarter of their text" in message
    assert '3 of them now read the same text ("Before you continue' in message and "--allow-mass-delete" in message
    assert "…\"): a consent wall, a login page or an error page" in message
    found = json.loads(CliRunner().invoke(cli, ["search", "how long do refunds take?", "-c", str(config), "--json"]).output)
    assert "five business days" in found["hits"][0]["text"], "nothing was published: the chatbot still reads the pages"
    code, allowed = run(config, "--allow-mass-delete")
    assert code == 0 and allowed["documents"]["updated"] == 3, "what the admin asks for, the run does"



def test_a_login_page_as_long_as_the_pages_it_replaces_is_stopped_too(tmp_path, local_embedder, site):
    """A site behind a single sign-on page, or in maintenance, answers 200 with one page for every
    address. The guard counted only pages left with less than a quarter of their text, so a login
    page with a screenful of terms, as long as the help pages, replaced all of them: "4 updated",
    exit 0, and the chatbot quoted the terms of use. Documents that were different and now read
    one same text count as lost too; pages that were copies of each other, edited alike, do not."""
    from tests.conftest import LOOPBACK_WEB

    def page(title: str, text: str) -> tuple:
        return 200, "text/html", f"<html><head><title>{title}</title></head><body><main><h1>{title}</h1><p>{text}</p></main></body></html>".encode()

    topics = ["Refunds take five business days to reach your card.", "Parcels leave the Lisbon warehouse every weekday.",
              "Gift cards never expire and work in every store.", "Boots run small: order half a size up."]
    for i, line in enumerate(topics):
        site.routes[f"/p{i}"] = page(f"Page {i}", line * 4)
    for i in range(3):  # the same notice on three pages, as a site's versions of one page may be
        site.routes[f"/v{i}"] = page("Notice", "Our offices close at noon on public holidays. " * 4)
    urls = ", ".join(f'"{site.url(p)}"' for p in [*(f"/p{i}" for i in range(4)), *(f"/v{i}" for i in range(3))])
    config = write_config(tmp_path, f'[[sources]]\nname = "web"\ntype = "urls"\nurls = [{urls}]\n{LOOPBACK_WEB}[[spaces]]\nprovider = "local"\n')
    assert run(config)[0] == 0
    for i in range(3):
        site.routes[f"/v{i}"] = page("Notice", "Our offices close at one on public holidays. " * 4)
    code, edited = run(config)
    assert code == 0 and edited["documents"]["updated"] == 3, "copies of one page edited alike are an edit"
    login = page("Sign in", "Sign in with your company account to continue. By signing in you accept the terms of use. " * 3)
    for i in range(4):
        site.routes[f"/p{i}"] = login
    code, report = run(config)
    assert code == 3, report
    message = last_logged(config)["error"]
    assert "leave 4 of the 7 documents of source 'web' (57%) reading one and the same text" in message, message
    assert '4 of them now read the same text ("Sign in Sign in with your company account' in message, message
    found = json.loads(CliRunner().invoke(cli, ["search", "how long do refunds take?", "-c", str(config), "--json"]).output)
    assert "five business days" in found["hits"][0]["text"], "nothing was published"



def test_a_site_that_asks_not_to_be_indexed_all_at_once_is_stopped_and_told_why(tmp_path, local_embedder, site):
    """A staging site's `noindex` deployed to the live one: the guard stopped the run, and said only
    "would delete 4 of 4 documents" — the admin could not tell an outage from a robots tag."""
    from tests.conftest import LOOPBACK_WEB

    def page(i: int, robots: str = "") -> tuple:
        return 200, "text/html", (f"<html><head><title>Page {i}</title>{robots}</head><body><main><h1>Page {i}</h1>"
                                  f"<p>Help topic number {i} explains one thing well.</p></main></body></html>").encode()

    for i in range(4):
        site.routes[f"/p{i}"] = page(i)
    urls = ", ".join(f'"{site.url(f"/p{i}")}"' for i in range(4))
    config = write_config(tmp_path, f'[[sources]]\nname = "web"\ntype = "urls"\nurls = [{urls}]\n{LOOPBACK_WEB}[[spaces]]\nprovider = "local"\n')
    assert run(config)[0] == 0
    for i in range(4):
        site.routes[f"/p{i}"] = page(i, '<meta name="robots" content="noindex">')
    code, _ = run(config)
    message = last_logged(config)["error"]
    assert code == 3 and "would delete 4 of 4 documents (100%) of source 'web'" in message, message
    assert "4 of them for WEB_NOINDEX (e.g. " in message and "its robots meta tag says noindex" in message
    dry = CliRunner().invoke(cli, ["run", "-c", str(config), "--dry-run"])  # said "the generation would be empty", exit 1
    assert dry.exit_code == 3 and "4 of them for WEB_NOINDEX" in dry.output, dry.output


# ---------------------------------------------------------------- time limits are totals

@pytest.fixture
def drip():
    """A loopback server that answers every request one byte per 0.2 s — in the headers (path
    /headers) or in the body (any other path) — for at most 60 s, then closes."""
    import socket
    import threading
    import time

    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    stop = threading.Event()

    def serve(conn):
        with conn:
            conn.settimeout(5)
            try:
                request = conn.recv(65536).decode("latin-1")
                body = b"<html><head><title>Slow</title></head><body><main><h1>Slow</h1><p>" + b"word " * 400 + b"</p></main></body></html>"
                head = f"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {len(body)}\r\n\r\n".encode()
                slow, fast = (head + body, b"") if " /headers " in request else (body, head)
                conn.sendall(fast)
                ends = time.monotonic() + 60
                for i in range(len(slow)):
                    if stop.is_set() or time.monotonic() > ends:
                        return
                    conn.sendall(slow[i : i + 1])
                    time.sleep(0.2)
            except OSError:
                return

    def accept():
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    stop.set()
    listener.close()


def test_a_page_that_drips_is_cut_off_at_its_total_time_limit(drip):
    import time

    import httpx

    from indexer.sources.netguard import guarded_transport
    from indexer.sources.web import fetch_document

    with httpx.Client(transport=guarded_transport(["127.0.0.0/8"]), timeout=httpx.Timeout(2.0)) as client:
        for path in ("/headers", "/body"):
            started = time.monotonic()
            fetched = fetch_document(client, f"{drip}{path}", "web")
            took = time.monotonic() - started
            assert fetched.problem is not None and fetched.problem.retryable and "timed out" in fetched.problem.message, fetched
            assert took < 4, f"{path}: {took:.1f} s against a 2 s limit (each byte came within the per-read timeout)"


def test_a_redirect_to_a_non_http_url_says_so(site):
    import httpx

    from indexer.sources.netguard import guarded_transport
    from indexer.sources.robots import RobotsRules
    from indexer.sources.web import fetch_document

    site.routes["/to-file"] = (302, "text/plain", b"", {"Location": "file:///etc/hostname"})
    site.routes["/to-gopher"] = (301, "text/plain", b"", {"Location": "gopher://127.0.0.1/1"})
    with httpx.Client(transport=guarded_transport(["127.0.0.0/8"]), follow_redirects=True) as client:
        client.event_hooks["request"].append(RobotsRules(client).check)
        for path, scheme in (("/to-file", "file:"), ("/to-gopher", "gopher:")):
            problem = fetch_document(client, site.url(path), "web").problem
            assert problem.code == "WEB_FETCH_FAILED" and f"redirected to {scheme}" in problem.message and "which is not an http(s) URL" in problem.message


def test_two_folders_with_the_same_file_name_say_how_to_keep_both(tmp_path, local_embedder):
    for folder, text in (("a", "Refunds take five days."), ("b", "Parcels ship from Lisbon.")):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "index.md").write_text(f"# {folder.upper()}\n\n{text}\n")
    tables = '[[sources]]\nname = "a"\ntype = "files"\npath = "a"\n[[sources]]\nname = "b"\ntype = "files"\npath = "b"\n{}'
    code, report = run(write_config(tmp_path, tables.format("") + '[[spaces]]\nprovider = "local"\n'))
    assert code == 4 and report["total_documents"] == 1
    (error,) = report["errors"]
    assert error["code"] == "DUPLICATE_DOCUMENT" and 'id_prefix = "b/"' in error["message"] and "only 'a'" in error["message"]
    code, report = run(write_config(tmp_path, tables.format('id_prefix = "b/"\n') + '[[spaces]]\nprovider = "local"\n'))
    assert code == 0 and report["total_documents"] == 2 and report["documents"]["added"] == 1, "b's page joins under file:b/index.md"


def test_drafts_are_not_indexed_and_a_page_turned_draft_is_removed(tmp_path):
    """A Hugo, Jekyll or Docusaurus repository's drafts are kept off the published site; a chatbot
    citing them leaked what was not yet public."""
    docs = tmp_path / "docs"
    docs.mkdir()
    for topic in ("Refunds", "Shipping", "Sizes"):
        (docs / f"{topic.lower()}.md").write_text(f"# {topic}\n\nAll about {topic.lower()}.\n")
    (docs / "pricing.md").write_text("---\ntitle: Pricing\n---\n# Pricing\n\nPlans start at ten euros.\n")
    (docs / "launch.md").write_text("---\ndraft: true\n---\n# Launch\n\nThe new boot launches in March.\n")
    (docs / "old.md").write_text("---\npublished: false\n---\n# Old\n\nRetired page.\n")
    (docs / "hugo.md").write_text("+++\ntitle = 'Roadmap'\ndraft = true\n+++\n# Roadmap\n\nNext year's boots.\n")  # Hugo's TOML
    config = files_config(tmp_path)
    code, first = run(config)
    assert code == 0 and first["documents"]["added"] == 4, first
    assert sorted(w["code"] for w in first["warnings"]) == ["FILE_DRAFT", "FILE_DRAFT", "FILE_DRAFT"]
    (docs / "pricing.md").write_text("---\ntitle: Pricing\ndraft: true\n---\n# Pricing\n\nNew plans, not yet public.\n")
    code, second = run(config)
    assert code == 0 and second["documents"]["deleted"] == 1 and second["total_documents"] == 3, second
    code, everything = run(files_config(tmp_path, "include_drafts = true\n"))
    assert code == 0 and everything["total_documents"] == 7


def test_a_notebook_that_is_no_notebook_fails_alone(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "forecast.ipynb").write_bytes((Path(__file__).parent / "fakes" / "forecast.ipynb").read_bytes())
    (docs / "broken.ipynb").write_text('{"cells": [')  # a save cut short
    (docs / "old.ipynb").write_text('{"worksheets": [], "nbformat": 3}')
    code, plan = run(files_config(tmp_path), "--dry-run")
    assert code == 0 and plan["documents"]["added"] == 1 and plan["documents"]["failed"] == 2, plan
    said = sorted(e["message"] for e in plan["errors"])
    assert said[0].startswith("broken.ipynb: not a Jupyter notebook: its JSON cannot be read (Expecting value"), said
    assert said[1] == "old.ipynb: not a Jupyter notebook: no list of cells (nbformat 4 writes one; open and save it in Jupyter to convert an older one)"


def test_a_sphinx_page_built_from_elsewhere_says_how_to_index_it(tmp_path):
    """An autodoc page (`.. automodule::`, CMake's `.. cmake-module::`) has no text of its own in
    its .rst: "no text found" left the admin guessing."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "client.rst").write_text(".. automodule:: acme.client\n   :members:\n")
    (docs / "guide.rst").write_text("Guide\n=====\n\nThe guide has words of its own.\n")
    code, plan = run(files_config(tmp_path), "--dry-run")
    assert code == 0 and [d["doc_id"] for d in plan["decisions"]] == ["file:guide.rst"], plan
    said = [e["message"] for e in plan["errors"] + plan["warnings"]]
    assert said == ["client.rst: no text of its own: Sphinx builds it from elsewhere (.. automodule::); "
                    "to index such pages, index the built site (a urls source with its sitemap); left out"], said
