"""The Notion source, through the real notion-client against a loopback fake of the API."""

import json
import time
from datetime import datetime, timedelta, timezone

import pytest

from indexer.config import SourceConfig
from indexer.documents import FetchState
from indexer.sources.notion import RateLimiter, crawl_notion
from tests.fakes.notion_server import (
    bookmark, bullet, callout, code, columns, embed, equation, heading, link_to_page,
    mention_paragraph, numbered, paragraph, quote, synced_copy, synced_original, table, to_do, toggle,
)


def source(*roots: str, **keys) -> SourceConfig:
    return SourceConfig(name="wiki", type="notion", roots=roots, **{"requests_per_second": 1000.0, "max_depth": 4, **keys})


def test_blocks_become_structured_text(notion):
    ws = notion.workspace
    ws.page("Linked", paragraph("A page only a link leads to."), page_id="0000000a-0000-4000-8000-00000000000a")
    root = ws.page(
        "Onboarding",
        heading(1, "Welcome"),
        paragraph("First week at the company."),
        bullet("Laptop", bullet("Charger")),
        numbered("Sign the contract"),
        numbered("Meet the team"),
        to_do("Set up email", checked=True),
        toggle("Where is the office?", paragraph("Rua Augusta 10, Lisbon.")),
        quote("Ask questions early."),
        callout("Badges at reception.", emoji="🪪"),
        code("make setup", "shell"),
        table(["Tool", "Owner"], ["Slack", "IT"]),
        columns([paragraph("Left column")], [paragraph("Right column")]),
        equation("E = mc^2"),
        bookmark("https://example.com/handbook", caption="Handbook"),
        embed("https://example.com/video"),
        heading(2, "Benefits", paragraph("Twenty-five days of holiday.")),
        link_to_page("0000000a-0000-4000-8000-00000000000a"),
    )
    result = crawl_notion(source(root))
    assert not result.errors and not result.warnings
    onboarding, linked = result.documents
    assert onboarding.doc_id == f"notion:{root}" and onboarding.title == "Onboarding" and onboarding.source_type == "notion"
    assert onboarding.text == "\n".join([
        "# Welcome", "", "First week at the company.", "", "- Laptop", "  - Charger", "1. Sign the contract", "2. Meet the team",
        "- [x] Set up email", "Where is the office?", "Rua Augusta 10, Lisbon.", "", "> Ask questions early.", "", "> 🪪 Badges at reception.", "",
        "```shell", "make setup", "```", "", "Tool | Owner", "Slack | IT", "", "Left column", "", "Right column", "", "E = mc^2", "",
        "Handbook (https://example.com/handbook)", "", "https://example.com/video", "", "## Benefits", "", "Twenty-five days of holiday.",
    ])
    assert onboarding.url.startswith("https://www.notion.so/Onboarding-") and onboarding.last_modified == "2026-11-01T09:00:00.000Z"
    assert linked.title == "Linked", "link_to_page is followed"


def test_synced_blocks_mentions_and_unknown_types(notion):
    ws = notion.workspace
    target = ws.page("Pricing", paragraph("Plans start at ten euros."))
    source_page = ws.page("Policies", synced_original(paragraph("Refunds within thirty days.")))
    original_id = ws.blocks[ws.pages[source_page]["blocks"][0]]["id"]
    root = ws.page("Home", synced_copy(original_id), mention_paragraph("See ", target, "Pricing"))
    ws.pages[root]["blocks"].append(ws._store({"type": "meeting_notes", "meeting_notes": {}, "children": []}, None, root))
    result = crawl_notion(source(root))
    home, pricing = result.documents
    assert home.text == "Refunds within thirty days.\n\nSee Pricing", "the copy shows its original's content; the mention's text stays"
    assert pricing.title == "Pricing", "a page mention is followed"
    assert [(w.code, w.level) for w in result.warnings] == [("NOTION_BLOCK_UNSUPPORTED", "warning")]
    assert "meeting_notes" in result.warnings[0].message and not result.errors
    assert [d.title for d in crawl_notion(source(root, follow_links=False)).documents] == ["Home"]


def test_depth_limit_cycles_and_max_pages(notion):
    ws = notion.workspace
    root = ws.page("Level 0", paragraph("Top."))
    parent = root
    for level in range(1, 7):
        parent = ws.page(f"Level {level}", paragraph(f"Depth {level}."), parent=parent)
    ws.set_blocks(parent, paragraph("Deepest."), link_to_page(root))  # a cycle back to the top
    result = crawl_notion(source(root, max_depth=3))
    assert [d.title for d in result.documents] == ["Level 0", "Level 1", "Level 2", "Level 3"]
    assert not result.warnings
    assert len(notion.requests("children")) == 4, "pages past the limit are never read"
    assert len(notion.requests("search")) == 1 and notion.requests("page") == [], "one search lists every page with its last_edited_time"

    everything = crawl_notion(source(root, max_depth=50))
    assert len(everything.documents) == 7, "the link back to the root is harmless"
    limited = crawl_notion(source(root, max_depth=50, max_pages=2))
    assert [d.title for d in limited.documents] == ["Level 0", "Level 1"]
    assert [w.code for w in limited.warnings] == ["SOURCE_LIMIT_REACHED"]


def test_a_database_with_hundreds_of_rows_is_read_through_every_cursor(notion):
    ws = notion.workspace
    root = ws.page("Team", paragraph("The team space."))
    db = ws.database("Tickets", parent=root)
    for i in range(260):
        ws.row(db, f"Ticket {i}", *([paragraph(f"Details of ticket {i}.")] if i % 50 == 0 else []), Status={"status": "Done" if i % 2 else "Open"}, Tags=["billing"], Points=i)
    result = crawl_notion(source(root, max_pages=1000))
    assert len(result.documents) == 261
    assert len(notion.requests("query")) == 3, "260 rows at 100 a page"
    assert len(notion.requests("search")) == 3 and notion.requests("page") == [], "page objects come from search and queries: no GET per page"
    row = next(d for d in result.documents if d.title == "Ticket 50")
    assert row.text == "Status: Open\nTags: billing\nPoints: 50\n\nDetails of ticket 50."
    assert row.tags == ("billing",) and row.metadata == {"database": "Tickets"}

    only_rows = crawl_notion(source(db, max_pages=1000))  # a database as the root
    assert len(only_rows.documents) == 260 and not only_rows.errors


def test_database_rows_the_team_has_not_published_are_not_indexed(notion):
    """A help centre kept as a Notion database marks its unpublished articles with a Published box
    or a Draft status; the chatbot cited them before the site showed them."""
    ws = notion.workspace
    root = ws.page("Help", paragraph("The help centre."))
    db = ws.database("Articles", parent=root)
    ws.row(db, "Refunds", paragraph("Refunds take five days."), Published=True)
    ws.row(db, "Price rise", paragraph("Prices go up in March."), Published=False)
    ws.row(db, "Boot launch", paragraph("The new boot launches soon."), Status={"status": "Draft"})
    ws.row(db, "Shipping", paragraph("Parcels ship daily."), Status={"status": "Done"})
    result = crawl_notion(source(root))
    assert sorted(d.title for d in result.documents) == ["Help", "Refunds", "Shipping"]
    said = sorted(w.message.split(": ", 1)[1] for w in result.warnings if w.code == "NOTION_DRAFT")
    assert said == ["its Published box is unchecked, so it is a draft; not indexed (set include_drafts = true to index drafts)",
                    "its Status is Draft, so it is a draft; not indexed (set include_drafts = true to index drafts)"]
    assert all(w.level == "warning" and w.doc_id for w in result.warnings)
    assert len(crawl_notion(source(root, include_drafts=True)).documents) == 5


def test_a_page_search_does_not_list_yet_is_fetched_on_its_own(notion):
    ws = notion.workspace
    root = ws.page("Home", paragraph("Hello."))
    fresh = ws.page("Just created", paragraph("Search has not caught up with me."), parent=root)
    ws.pages[fresh]["unlisted"] = True
    result = crawl_notion(source(root))
    assert [d.title for d in result.documents] == ["Home", "Just created"]
    assert [c.path for c in notion.requests("page")] == [f"/v1/pages/{fresh}"]


def test_missing_and_forbidden_pages_are_document_errors_with_a_hint(notion):
    ws = notion.workspace
    secret = ws.page("Secret", paragraph("Hidden."))
    ws.pages[secret]["forbidden"] = True
    root = ws.page("Home", paragraph("Hello."), link_to_page("0000dead-0000-4000-8000-000000000000"), link_to_page(secret))
    result = crawl_notion(source(root))
    assert [d.title for d in result.documents] == ["Home"]
    assert [(e.code, e.doc_id) for e in result.errors] == [
        ("NOTION_OBJECT_NOT_FOUND", "notion:0000dead-0000-4000-8000-000000000000"), ("NOTION_FORBIDDEN", f"notion:{secret}"),
    ]
    assert all("share the page with the integration" in e.message for e in result.errors)
    assert result.listing_complete


def test_429_with_retry_after_and_a_500_are_retried(notion):
    ws = notion.workspace
    root = ws.page("Home", paragraph("Hello."))
    notion.path_faults["/v1/search"] = [{"status": 429, "headers": {"Retry-After": "1"}}, {"status": 429, "headers": {"Retry-After": "1"}}]
    notion.path_faults[f"/v1/blocks/{root}/children"] = [{"status": 500}]
    started = time.monotonic()
    result = crawl_notion(source(root))
    assert [d.title for d in result.documents] == ["Home"] and not result.errors
    assert time.monotonic() - started >= 2.0, "each Retry-After was waited out"
    assert [c.status for c in notion.calls] == [429, 429, 200, 500, 200]


def test_a_503_that_says_when_to_come_back_is_retried_then_not_before(notion):
    """Notion in maintenance answers 503 with a Retry-After: the next attempt waits that long, as
    the web and embedding clients do, not the 0.25 s of the first backoff step."""
    ws = notion.workspace
    root = ws.page("Home", paragraph("Hello."))
    notion.path_faults[f"/v1/blocks/{root}/children"] = [{"status": 503, "headers": {"Retry-After": "2"}}]
    result = crawl_notion(source(root))
    assert [d.title for d in result.documents] == ["Home"] and not result.errors
    failed, retried = notion.requests("children")
    assert failed.status == 503 and retried.status == 200 and retried.at - failed.at >= 2.0


def test_a_long_rate_limit_storm_is_waited_out_not_counted_as_failures(notion):
    """Twelve 429s in a row (twice MAX_ATTEMPTS) and three 503s on one page: the API asked us to
    slow down, it did not fail — the page arrives. A Retry-After given as an HTTP date is honoured."""
    from email.utils import format_datetime

    ws = notion.workspace
    root = ws.page("Home", paragraph("Hello."))
    # A date 4-5 s ahead (whole seconds): the three 503s' backoff (1.75-2.6 s) ends before it. (At
    # 2 s ahead it had often passed when its 429 came, and the test held without reading it.)
    started, started_at = time.monotonic(), datetime.now(timezone.utc)
    soon = (started_at + timedelta(seconds=5)).replace(microsecond=0)
    notion.path_faults[f"/v1/blocks/{root}/children"] = ([{"status": 429, "headers": {"Retry-After": "0"}}] * 12
                                                         + [{"status": 503}] * 3 + [{"status": 429, "headers": {"Retry-After": format_datetime(soon, usegmt=True)}}])
    result = crawl_notion(source(root))
    assert [d.title for d in result.documents] == ["Home"] and not result.errors
    requests = notion.requests("children")
    assert [c.status for c in requests].count(429) == 13 and requests[-1].status == 200
    dated, answered = requests[-2].at - started, requests[-1].at - started
    waited_until = (soon - started_at).total_seconds()
    assert dated < waited_until - 0.5 and answered >= waited_until - 0.05, f"the HTTP-date Retry-After was waited out: {dated:.2f} s, then {answered:.2f} s; the date {waited_until:.2f} s"


def test_a_page_read_in_the_minute_it_was_edited_is_read_again(notion):
    """Notion rounds last_edited_time down to the minute: a page read at 10:00:20 and edited again at
    10:00:40 still says 10:00. Read within SETTLE (3 minutes) of its time, it is read again next run,
    and skipped only once a read came later than that."""
    ws = notion.workspace
    now = datetime.now(timezone.utc).replace(second=0, microsecond=0)
    edited = now.strftime("%Y-%m-%dT%H:%M:00.000Z")
    root = ws.page("Home", paragraph("Draft one."), edited=edited)
    first = crawl_notion(source(root))
    state = {d.doc_id: FetchState(last_modified=d.last_modified, fetched_at=d.fetched_at, links=d.links) for d in first.documents}
    ws.set_blocks(root, paragraph("Draft two, the same minute."))  # last_edited_time unchanged
    second = crawl_notion(source(root), fetch_state=state)
    assert [d.text for d in second.documents] == ["Draft two, the same minute."] and not second.not_modified
    settled = {i: FetchState(last_modified=f.last_modified, fetched_at=now + timedelta(minutes=3), links=f.links) for i, f in state.items()}
    assert crawl_notion(source(root), fetch_state=settled).not_modified == [f"notion:{root}"]


def test_an_expired_cursor_restarts_the_listing(notion):
    ws = notion.workspace
    root = ws.page("Long page", *[paragraph(f"Paragraph {i}.") for i in range(150)])
    notion.path_faults[f"/v1/blocks/{root}/children"] = [{}, {"expire_cursor": True}]
    result = crawl_notion(source(root))
    assert result.documents[0].text.count("Paragraph") == 150
    assert [c.status for c in notion.requests("children")] == [200, 400, 200, 200]


def test_unchanged_pages_are_not_fetched_again(notion):
    ws = notion.workspace
    root = ws.page("Home", paragraph("Hello."), edited="2026-11-01T09:00:00.000Z")
    child = ws.page("Child", paragraph("Child text."), parent=root, edited="2026-11-01T09:00:00.000Z")
    first = crawl_notion(source(root))
    state = {d.doc_id: FetchState(last_modified=d.last_modified, fetched_at=d.fetched_at, links=d.links) for d in first.documents}
    notion.calls.clear()
    second = crawl_notion(source(root), fetch_state=state)
    assert not second.documents and sorted(second.not_modified) == sorted([f"notion:{root}", f"notion:{child}"])
    assert notion.requests("children") == [], "no block requests for unchanged pages; the child is found through the stored links"

    ws.set_blocks(child, paragraph("Child text, edited."), edited="2026-11-21T10:00:00.000Z")
    third = crawl_notion(source(root), fetch_state=state)
    assert [d.title for d in third.documents] == ["Child"]

    just_edited = {k: FetchState(v.last_modified, datetime_after(v.last_modified, seconds=50), v.links) for k, v in state.items()}
    fourth = crawl_notion(source(root), fetch_state=just_edited)
    assert len(fourth.documents) == 2, "fetched within the same minute as the edit: fetched again, compared by hash"


def datetime_after(timestamp: str, seconds: int):
    from datetime import timedelta

    from indexer.extract import parse_timestamp

    return parse_timestamp(timestamp) + timedelta(seconds=seconds)


def test_the_limiter_keeps_the_average_rate_with_small_bursts():
    limiter = RateLimiter(rate=20.0, burst=3)
    started = time.monotonic()
    stamps = []
    for _ in range(23):
        limiter.acquire()
        stamps.append(time.monotonic() - started)
    assert stamps[2] < 0.05, "a burst of three goes at once"
    assert stamps[-1] >= 0.95, f"then 20 a second: {stamps[-1]:.2f}s for 20 more"


def test_a_bad_token_stops_the_run_with_a_config_error(notion, monkeypatch):
    from indexer.errors import ConfigError

    root = notion.workspace.page("Home", paragraph("Hello."))
    monkeypatch.setenv("NOTION_TOKEN", "wrong")
    with pytest.raises(ConfigError, match="Notion refused NOTION_TOKEN"):
        crawl_notion(source(root))
    monkeypatch.delenv("NOTION_TOKEN")
    with pytest.raises(ConfigError, match="set NOTION_TOKEN"):
        crawl_notion(source(root))


def test_index_run_indexes_the_workspace_and_a_second_run_fetches_no_blocks(notion, tmp_path, local_embedder):
    from click.testing import CliRunner

    from indexer.cli import cli
    from tests.conftest import write_config

    ws = notion.workspace
    root = ws.page("Handbook", heading(1, "Handbook"), paragraph("How the team works."))
    ws.page("Refunds", paragraph("Customers get refunds within thirty days."), parent=root)
    db = ws.database("FAQ", parent=root)
    ws.row(db, "Do gift cards expire?", paragraph("Gift cards never expire."))
    config = write_config(tmp_path, f'[[sources]]\nname = "wiki"\ntype = "notion"\nroots = ["https://www.notion.so/Handbook-{root.replace("-", "")}"]\n'
                                    'requests_per_second = 100\n[[spaces]]\nprovider = "local"\n')
    runner = CliRunner()
    first = runner.invoke(cli, ["run", "-c", str(config), "--json"])
    assert first.exit_code == 0, first.output
    assert json.loads(first.output)["documents"]["added"] == 3
    hits = json.loads(runner.invoke(cli, ["search", "when do gift cards expire", "-c", str(config), "--json"]).output)["hits"]
    assert hits[0]["title"] == "Do gift cards expire?" and hits[0]["url"].startswith("https://www.notion.so/")

    notion.calls.clear()
    second = runner.invoke(cli, ["run", "-c", str(config), "--json"])
    assert second.exit_code == 0 and json.loads(second.output)["documents"]["skipped"] == 3
    assert notion.requests("children") == [], "no block fetches for unchanged pages"
    assert [len(notion.requests(k)) for k in ("search", "database", "query", "page")] == [1, 1, 1, 0], "listing calls only"

    notion.calls.clear()
    refreshed = runner.invoke(cli, ["run", "-c", str(config), "--full-refresh", "--json"])
    assert refreshed.exit_code == 0 and len(notion.requests("children")) == 3


def test_a_page_whose_text_is_not_unicode_is_mended_and_the_run_publishes_every_page(notion, tmp_path, local_embedder):
    """JSON can carry a lone UTF-16 surrogate ("\\ud800") that no UTF-8 file or database can hold:
    before, such a page failed the whole run (a traceback, nothing published)."""
    from click.testing import CliRunner

    from indexer.cli import cli
    from tests.conftest import write_config

    ws = notion.workspace
    root = ws.page("Handbook", heading(1, "Handbook"), paragraph("How the team works."))
    broken = ws.page("Refunds \ud800policy", paragraph("Customers get refunds \udc00within thirty days."), parent=root)
    config = write_config(tmp_path, f'[[sources]]\nname = "wiki"\ntype = "notion"\nroots = ["{root}"]\nrequests_per_second = 100\n'
                                    '[[spaces]]\nprovider = "local"\n')
    runner = CliRunner()
    run = runner.invoke(cli, ["run", "-c", str(config), "--json"])
    assert run.exit_code == 0, run.output
    report = json.loads(run.output)
    assert report["documents"]["added"] == 2
    assert [(w["code"], w["doc_id"]) for w in report["warnings"]] == [("TEXT_NOT_UNICODE", f"notion:{broken}")]
    hits = json.loads(runner.invoke(cli, ["search", "refunds within thirty days", "-c", str(config), "--json"]).output)["hits"]
    assert hits[0]["title"] == "Refunds \ufffdpolicy" and "refunds \ufffdwithin thirty days" in hits[0]["text"]


def test_recorded_api_responses_render(tmp_path):
    """Real block and page JSON recorded from api.notion.com (../shared/data/notion, notion_ruby_mapping)."""
    from tests.conftest import SHARED_DATA

    folder = SHARED_DATA / "notion" / "notion_ruby_mapping" / "fixtures-current"
    if not folder.is_dir():
        pytest.skip(f"shared data absent: {folder} (present in CI beside the repository)")
    from indexer.sources.notion_render import page_title, render_page

    page = json.loads((folder / "retrieve_page_block_test_page.json").read_text())
    blocks = json.loads((folder / "retrieve_block_children_block_test_page.json").read_text())["results"]
    text, links, unsupported, anchors = render_page(page, blocks)
    lines = text.splitlines()
    assert page_title(page) == "Block test page"
    for expected in ("# Heading 1", "## Heading 2", "### Heading 3", "- Bulleted list", "1. Numbered list", "> Quote", "```shell", "% ls -l",
                     "x = \\frac{-b\\pm\\sqrt{b^2-4ac}}{2a}", "https://hkob.notion.site/"):
        assert expected in lines, expected
    assert "Inline contents: @Hiroyuki KOBAYASHI, notion_ruby_mapping_test_data" in text, "mentions keep their visible text"
    assert "- [ ]" not in lines, "an empty to-do is not indexed"
    assert {"page:0f3e5073-22d8-48eb-926b-e808df84c169", "database:ea525a78-4669-470d-b425-8c4d7cb95667", "page:c01166c6-13ae-45cb-b968-18b4ef2f5a77"} <= set(links)
    assert unsupported == {"unsupported": 1}, "the API's own `unsupported` block is reported, media and layout blocks are not"
    by_block = {block["id"].replace("-", ""): block for block in blocks}
    heading = next(b for b in blocks if b["type"] == "heading_2")
    offset = dict((name, at) for at, name in anchors)[heading["id"].replace("-", "")]
    assert text[offset:].startswith("## Heading 2"), "a hit below the heading links to its block"
    assert all(name in by_block for _, name in anchors) and [a for a, _ in anchors] == sorted(a for a, _ in anchors)
    assert "\x00" not in text and "\x01" not in text


def test_a_page_moved_to_the_trash_is_no_longer_listed(notion):
    ws = notion.workspace
    root = ws.page("Home", paragraph("Hello."))
    child = ws.page("Old policy", paragraph("Outdated."), parent=root)
    first = crawl_notion(source(root))
    state = {d.doc_id: FetchState(last_modified=d.last_modified, fetched_at=d.fetched_at, links=d.links) for d in first.documents}
    ws.pages[child]["in_trash"] = True
    second = crawl_notion(source(root), fetch_state=state)
    assert second.not_modified == [f"notion:{root}"] and not second.documents and not second.errors
    assert second.listing_complete, "so the plan deletes the trashed page's stored version"


def test_an_api_answer_of_another_shape_fails_its_source_not_the_run(tmp_path, monkeypatch, local_embedder):
    """A Notion API that answers with JSON of a shape the client code does not expect (an API change, a
    proxy): before, the whole run failed with "unexpected TypeError" and no source was refreshed; and
    an answers database without data sources read as an empty one, which would delete every answer."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from click.testing import CliRunner

    from indexer.cli import cli
    from tests.conftest import write_config

    class Odd(BaseHTTPRequestHandler):
        def answer(self):
            body = json.dumps({"object": "list", "results": 5, "has_more": False, "next_cursor": None, "id": "x", "properties": 3}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = answer

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Odd)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("NOTION_TOKEN", "secret")
    monkeypatch.setenv("NOTION_BASE_URL", f"http://127.0.0.1:{server.server_address[1]}")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "refunds.md").write_text("# Refunds\n\nRefunds take five days.\n")
    try:
        config = write_config(tmp_path, '[[sources]]\nname = "wiki"\ntype = "notion"\nroots = ["0123456789abcdef0123456789abcdef"]\nrequests_per_second = 100\n'
                                        '[[sources]]\nname = "faq"\ntype = "answers"\ndatabase = "0123456789abcdef0123456789abcdef"\nrequests_per_second = 100\n'
                                        '[[sources]]\nname = "docs"\ntype = "files"\npath = "docs"\n[[spaces]]\nprovider = "local"\n')
        result = CliRunner().invoke(cli, ["run", "-c", str(config), "--json"])
    finally:
        server.shutdown()
        server.server_close()
    assert result.exit_code == 4, result.output
    report = json.loads(result.output)
    assert report["total_documents"] == 1, "the files source published"
    errors = {e["source"]: e for e in report["errors"]}
    assert errors["wiki"]["code"] == "SOURCE_LISTING_FAILED" and "unexpected TypeError" in errors["wiki"]["message"]
    assert errors["faq"]["code"] == "SOURCE_LISTING_FAILED" and "lists no data sources" in errors["faq"]["message"]


def test_an_untitled_page_is_named_by_its_first_heading(notion):
    ws = notion.workspace
    root = ws.page("Handbook", paragraph("The team handbook."))
    ws.page("", heading(1, "Expense claims"), paragraph("Claims are paid monthly."), parent=root)
    ws.page("", paragraph("No heading here at all."), parent=root)
    titles = sorted(d.title for d in crawl_notion(source(root)).documents)
    assert titles == ["Expense claims", "Handbook", "Untitled"], "was: two pages titled Untitled"
