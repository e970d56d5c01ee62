"""PowerPoint decks, as a shared drive and a help site hold them: searchable slide by slide, each hit
naming its slide, speaker notes included, hidden slides left out; a deck that cannot be read says
why. (A crawl's linked workbook, Writer file, Office 97–2003, Rich Text and EPUB files are checked here beside the deck.)"""

from datetime import datetime
from pathlib import Path

import pytest
from click.testing import CliRunner

from indexer.cli import cli
from indexer.config import load_config
from indexer.pipeline import run_index
from tests.conftest import LOOPBACK_WEB, api_client, indexed_and_served, search_hits as search, write_config
from tests.fakes.epub import make_epub
from tests.fakes.opendocument import make_odt
from tests.fakes.sheets import make_xlsx
from tests.fakes.slides import make_pptx
from tests.test_epub import CHAPTERS
from tests.test_legacy_office import TEXTEDIT
from tests.test_sheets import PRICES

PPTX = "application/vnd.openxmlformats-officedocument.presentationml.presentation"
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
WINTER_SALE = [
    {"title": "Winter sale 2026"},
    {"title": "Pricing", "bullets": [(0, "Boots are thirty percent off from the second of January"), (1, "The Alpine range keeps its full price")],
     "notes": "Remind the staff that the discount ends on the last day of January, and that gift cards cannot pay for sale items."},
    {"title": "Store hours", "table": [["Store", "Opening hours"], ["Lisbon", "9:00 to 21:00"], ["Oslo", "10:00 to 18:00"]]},
    {"title": "Returns at the till", "smartart": ["Scan the receipt", "Check the soles for wear", "Refund to the original card"]},
    {"title": "Draft margins", "bullets": [(0, "Margins fall to eleven percent on discounted snowshoes")], "hidden": True},
    {"group": ["Click and collect orders wait at the counter for seven days", "Sale items are exchanged, never refunded"],
     "textbox": "Questions go to the retail operations channel", "alternate": "Staff discounts do not stack with the sale"},
]
CONFIG = '[[sources]]\nname = "drive"\ntype = "files"\npath = "drive"\n[[spaces]]\nprovider = "local"\n'


@pytest.fixture(scope="module")
def drive(tmp_path_factory, local_embedder):
    folder = tmp_path_factory.mktemp("slides")
    (folder / "drive").mkdir()
    make_pptx(folder / "drive" / "winter-sale.pptx", WINTER_SALE, title="Winter sale briefing", author="Retail team",
              keywords="sale, stores", modified=datetime(2026, 11, 2, 8, 0))
    # PowerPoint saves a deck with a password inside an OLE compound file: its header, then encrypted streams
    (folder / "drive" / "salaries.pptx").write_bytes(bytes.fromhex("d0cf11e0a1b11ae1") + b"\0" * 504)
    make_pptx(folder / "drive" / "pictures.pptx", [{"picture": True}, {"picture": True}])  # slides saved as images
    with indexed_and_served(folder, CONFIG) as served:
        yield served


def test_each_hit_names_its_slide_and_the_speaker_notes_are_searchable(drive):
    _, client = drive
    hit = search(client, "when does the boot discount end")[0]
    assert hit["title"] == "Winter sale briefing" and hit["heading_path"] == ["Slide 2: Pricing"]
    assert "Speaker notes: Remind the staff that the discount ends on the last day of January" in hit["text"]
    assert "- Boots are thirty percent off from the second of January\n  - The Alpine range keeps its full price" in hit["text"]
    assert hit["updated_at"].startswith("2026-11-02T08:00:00") and hit["page_start"] is None
    assert hit["link"] == hit["url"], "a deck has no place a link can open at"
    hit = search(client, "opening hours of the Oslo store")[0]
    assert hit["heading_path"] == ["Slide 3: Store hours"] and "Oslo | 10:00 to 18:00" in hit["text"]
    document = client.get(f"/v1/documents/{hit['doc_id']}").json()
    assert document["tags"] == ["sale", "stores"] and document["authors"] == ["Retail team"]


def test_text_boxes_groups_and_smartart_are_read_and_a_hidden_slide_is_not(drive):
    _, client = drive
    hit = search(client, "how long do click and collect orders wait")[0]
    assert hit["heading_path"] == ["Slide 6"], "a slide without a title keeps its number: the hidden one before it counts"
    assert "Click and collect orders wait at the counter for seven days" in hit["text"]
    assert "Sale items are exchanged, never refunded" in hit["text"] and "retail operations channel" in hit["text"]
    assert hit["text"].count("Staff discounts do not stack with the sale") == 1, "newer markup and its fallback are one shape"
    hit = search(client, "what to check on returned boots at the till")[0]
    assert hit["heading_path"] == ["Slide 4: Returns at the till"]
    assert "- Scan the receipt\n- Check the soles for wear\n- Refund to the original card" in hit["text"]
    texts = [h["text"] for h in search(client, "margins eleven percent snowshoes", mode="lexical", top_k=10)]
    assert texts and not any("snowshoes" in t or "Draft margins" in t for t in texts)


def test_a_deck_saved_with_a_password_or_as_pictures_is_named_and_the_run_goes_on(drive, tmp_path):
    report, _ = drive
    assert [(e.code, e.doc_id) for e in report.errors] == [("FILE_EXTRACTION_FAILED", "file:salaries.pptx")]
    assert "salaries.pptx: not a readable PowerPoint (.pptx) deck (" in report.errors[0].message, report.errors[0].message
    assert report.counts["added"] == 1
    (empty,) = [w for w in report.warnings if w.doc_id == "file:pictures.pptx"]
    assert empty.code == "FILE_EXTRACTION_EMPTY" and "no text on its 2 slide(s), only 2 picture(s) (slides saved as images?)" in empty.message
    make_pptx(tmp_path / "whole.pptx", WINTER_SALE[:2])
    (tmp_path / "half.pptx").write_bytes((tmp_path / "whole.pptx").read_bytes()[:4000])
    result = CliRunner().invoke(cli, ["extract", str(tmp_path / "half.pptx")])
    assert result.exit_code == 1 and "half.pptx: not a readable PowerPoint (.pptx) deck" in result.output, result.output
    assert "unexpected" not in result.output
    result = CliRunner().invoke(cli, ["extract", str(tmp_path / "whole.pptx")])
    assert result.exit_code == 0 and "# Slide 2: Pricing" in result.output and "Speaker notes:" in result.output, result.output


def test_decks_workbooks_and_documents_linked_from_a_crawled_page_are_indexed(tmp_path, site, local_embedder):
    legacy = Path(__file__).parent / "data" / "legacy_office"  # Office 97–2003 files LibreOffice wrote
    make_pptx(tmp_path / "deck.pptx", WINTER_SALE, title="Winter sale briefing")
    make_xlsx(tmp_path / "prices.xlsx", {"Prices": PRICES}, title="Winter price list")
    make_odt(tmp_path / "staff.odt", [("h1", "Staff rota"), ("p", "Two staff members open the store, and one of them keeps the keys.")])
    site.routes["/"] = (200, "text/html", b'<html><head><title>Stores</title></head><body><main><h1>Store staff</h1>'
                        b'<p>Everything the stores need for the winter sale, from prices to opening hours, is in the briefing.</p>'
                        b'<p><a href="/files/winter-sale.pptx">Winter sale briefing (slides)</a> <a href="/files/prices.xlsx">Price list</a>'
                        b' <a href="/files/staff.odt">Staff rota</a> <a href="/files/travel.doc">Travel</a> <a href="/files/old-prices.xls">Old prices</a> <a href="/files/opening.rtf">Opening</a> <a href="/files/handbook.epub">Handbook</a>'
                        b' <a href="/files/store-briefing.ppt">Store briefing (old slides)</a>'
                        b'</p></main></body></html>')
    site.routes["/files/winter-sale.pptx"] = (200, PPTX, (tmp_path / "deck.pptx").read_bytes())
    site.routes["/files/prices.xlsx"] = (200, XLSX, (tmp_path / "prices.xlsx").read_bytes())
    site.routes["/files/staff.odt"] = (200, "application/vnd.oasis.opendocument.text", (tmp_path / "staff.odt").read_bytes())
    site.routes["/files/travel.doc"] = (200, "application/msword", (legacy / "handbook.doc").read_bytes())
    site.routes["/files/old-prices.xls"] = (200, "application/vnd.ms-excel", (legacy / "prices.xls").read_bytes())
    site.routes["/files/opening.rtf"] = (200, "text/rtf", TEXTEDIT)
    site.routes["/files/store-briefing.ppt"] = (200, "application/vnd.ms-powerpoint", (legacy / "briefing.ppt").read_bytes())
    make_epub(tmp_path / "handbook.epub", CHAPTERS, title="Customer handbook", author="Support team")
    site.routes["/files/handbook.epub"] = (200, "application/epub+zip", (tmp_path / "handbook.epub").read_bytes())
    config = load_config(write_config(tmp_path, f'[[sources]]\nname = "help"\ntype = "urls"\ncrawl = true\n{LOOPBACK_WEB}'
                                                 f'urls = ["{site.url("/")}"]\n[[spaces]]\nprovider = "local"\n'))
    report = run_index(config)
    assert not report.errors and not report.warnings
    with api_client(config.artifacts) as client:
        hit = search(client, "can gift cards pay for sale items")[0]
        row = search(client, "price of three pairs of wool socks")[0]
        rota = search(client, "who keeps the keys when the store opens")[0]
        travel = search(client, "how much is the daily meal allowance")[0]
        hours = search(client, "when does the Porto store open")[0]
        note = search(client, "who arrives at half past eight")[0]
        book = search(client, "how long does delivery to the islands take")[0]
        alarm = search(client, "who keeps the alarm keys")[0]
    assert hit["url"] == hit["link"] == site.url("/files/winter-sale.pptx")
    assert hit["title"] == "Winter sale briefing" and hit["heading_path"] == ["Slide 2: Pricing"]
    assert row["url"] == site.url("/files/prices.xlsx") and row["title"] == "Winter price list"
    assert "Product: Wool socks, three pairs; Price (EUR): 24" in row["text"]
    assert rota["url"] == site.url("/files/staff.odt") and rota["title"] == "Staff rota"
    assert travel["url"] == site.url("/files/travel.doc") and travel["title"] == "Travel handbook" and travel["heading_path"][-1] == "Per diem"
    assert hours["url"] == site.url("/files/old-prices.xls") and "Store: Porto; Hours: 10 to 20" in hours["text"]
    assert note["url"] == site.url("/files/opening.rtf") and "- Café staff arrive at half past eight." in note["text"]
    assert book["url"] == site.url("/files/handbook.epub") and book["heading_path"] == ["Shipping", "Islands"]
    assert alarm["url"] == site.url("/files/store-briefing.ppt") and alarm["heading_path"] == ["Slide 2: Before nine"], alarm
