"""Hits link to the place they quote: the nearest linkable heading above the passage (HTML ids,
`<a name>`, Markdown slugs), a Notion block, a PDF page (tests/test_pdf_docx.py). A docs folder
built by a site generator links as the site publishes it: tests/test_docs_sites.py."""

import re

import pytest

from indexer.config import SourceConfig, load_config
from indexer.pipeline import run_index
from indexer.sources.notion import crawl_notion
from server.links import deep_link
from tests.conftest import LOOPBACK_WEB, api_client, first_hit, write_config
from tests.fakes.notion_server import heading, paragraph

LOREM = "Each answer is checked twice before it is sent to the customer, and agents keep notes in the ticket. "
PAGE = f"""<html><head><title>Shipping help</title></head><body><nav><a href="#top">Top</a></nav><main>
<h1 id="top">Shipping help</h1><p>{LOREM * 3}</p>
<h2 id="rates">Rates by zone</h2><p>Parcels inside the country cost five euros; Europe costs twelve euros. {LOREM * 3}</p>
<a name="islands"></a><h2>Islands</h2><p>Parcels to islands travel by ferry and take three extra days. {LOREM * 3}</p>
<section id="customs"><h2>Customs</h2><p>Orders outside the European Union may owe import duty on arrival. {LOREM * 3}</p></section>
<h2>Returns</h2><p>Returned parcels need the printed label from the order page. {LOREM * 3}</p>
</main></body></html>"""
GUIDE = f"""---
title: Setup guide
url: https://docs.example.com/setup/
---
# Setup guide

{LOREM * 2}

## Installing the agent {{#install}}

Download the installer and run it with administrator rights. {LOREM * 3}

## Connecting to Wi-Fi & VPN!

Join the office network, then open the VPN client and sign in with your badge number. {LOREM * 3}

## FAQ

Questions about printers go to the help desk. {LOREM * 3}

## FAQ

Questions about badges go to reception at the main entrance. {LOREM * 3}

## The cl100k_base tokenizer

Token counts for embedding budgets come from the byte-pair vocabulary. {LOREM * 3}
"""


@pytest.fixture(scope="module")
def linked(tmp_path_factory, local_embedder):
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            body = PAGE.encode() if self.path == "/shipping" else b""
            self.send_response(200 if body else 404)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_port}/shipping"
    folder = tmp_path_factory.mktemp("links")
    (folder / "docs").mkdir()
    (folder / "docs" / "setup.md").write_text(GUIDE)
    (folder / "docs" / "offline.md").write_text("# Offline notes\n\n## Badges\n\nLost badges are replaced by reception within a day.\n")
    config = load_config(write_config(folder, f"""
[[sources]]
name = "site"
type = "urls"
{LOOPBACK_WEB}urls = ["{url}"]
[[sources]]
name = "docs"
type = "files"
path = "docs"
[[spaces]]
provider = "local"
"""))
    report = run_index(config)
    assert not report.errors
    with api_client(config.artifacts) as client:
        yield client, url
    server.shutdown()


@pytest.mark.parametrize("query, fragment", [
    ("how much does a parcel to Europe cost", "rates"),  # the heading's own id
    ("ferry to the islands extra days", "islands"),  # an empty <a name> just before the heading
    ("import duty outside the European Union", "customs"),  # the id of the section the heading opens
    ("printed return label from the order page", "customs"),  # a heading without an id: the nearest one above
])
def test_html_hits_link_to_the_nearest_heading_with_an_id(linked, query, fragment):
    client, url = linked
    hit = first_hit(client, query)
    assert hit["url"] == url and hit["link"] == f"{url}#{fragment}"
    assert re.search(rf'(id|name)="{fragment}"', PAGE), "the fragment is an anchor of the page"


@pytest.mark.parametrize("query, fragment", [
    ("run the installer with administrator rights", "install"),  # an explicit {#id}
    ("open the VPN client and sign in with your badge number", "connecting-to-wi-fi--vpn"),  # the slug site generators make
    ("printers help desk", "faq"),
    ("badges reception main entrance", "faq-1"),  # a repeated heading's slug is numbered
    ("token counts for embedding budgets byte-pair vocabulary", "the-cl100k_base-tokenizer"),  # `_` inside a word is kept
])
def test_markdown_with_a_url_links_to_heading_slugs(linked, query, fragment):
    client, _ = linked
    hit = first_hit(client, query)
    assert hit["link"] == f"https://docs.example.com/setup/#{fragment}"
    assert "{#install}" not in " ".join(hit["heading_path"]) + hit["text"], "the id is a link target, not words"


def test_a_file_without_a_url_has_no_link(linked):
    client, _ = linked
    hit = first_hit(client, "lost badge replaced within a day")
    assert hit["url"] is None and hit["link"] is None


def test_notion_hits_link_to_their_block(notion):
    ws = notion.workspace
    root = ws.page("Office guide", paragraph("Welcome to the office."), heading(2, "Parking"), paragraph("Visitors park on level two."))
    document = crawl_notion(SourceConfig(name="wiki", type="notion", roots=(root,), requests_per_second=1000.0)).documents[0]
    offset = document.text.index("Visitors park")
    link = deep_link(document.url, offset, None, [a for a, _ in document.anchors], [n for _, n in document.anchors])
    block_id = link.rsplit("#", 1)[1]
    assert link.startswith(document.url + "#") and re.fullmatch(r"[0-9a-f]{32}", block_id)
    assert document.text[dict((n, a) for a, n in document.anchors)[block_id]:].startswith("Visitors park"), "the paragraph's own block"
    assert block_id in {b.replace("-", "") for b in ws.pages[root]["blocks"]}
