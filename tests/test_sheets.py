"""Excel workbooks, as a shop keeps its price list and its support team its FAQ: searchable a row at a
time with the columns' names, hidden sheets left out; a workbook of questions and answers is a
source of curated answers, read as its CSV would be."""

from datetime import date, datetime

import pytest
from click.testing import CliRunner

from indexer.cli import cli
from indexer.config import load_config
from indexer.pipeline import run_index
from tests.conftest import LOOPBACK_WEB, api_client, write_config

XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
PRICES = [["Winter prices, valid from the second of January"], ["Product", "Price (EUR)", "On sale since"],
          ["Alpine boots", 189, date(2026, 1, 2)], ["Trail runners", 119.5, None], ["Wool socks, three pairs", 24, date(2026, 1, 9)]]
HOURS = [["Store", "Opens", "Closes"], ["Lisbon", "9:00", "21:00"], ["Oslo", "10:00", "18:00"]]
MARGINS = [["Product", "Margin"], ["Alpine boots", "eleven percent on discounted snowshoes"]]


def make_xlsx(path, sheets: dict[str, list[list]], hidden: tuple[str, ...] = (), title: str | None = None,
              author: str | None = None, modified: datetime | None = None, used_range: str | None = None) -> None:
    """`used_range`: the range each sheet declares it uses, as some programs write it wrong ("A1")."""
    from openpyxl import Workbook

    book = Workbook()
    book.remove(book.active)
    for name, rows in sheets.items():
        sheet = book.create_sheet(name)
        for row in rows:
            sheet.append(row)
        if name in hidden:
            sheet.sheet_state = "hidden"
    book.properties.title, book.properties.creator = title, author
    book.save(path)
    if modified is not None or used_range is not None:  # openpyxl stamps the time of saving, as Excel does
        _rewrite(path, modified, used_range)


def _rewrite(path, modified: datetime | None, used_range: str | None) -> None:
    import re
    import zipfile

    with zipfile.ZipFile(path) as book:
        parts = [(info, book.read(info)) for info in book.infolist()]
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as book:
        for info, data in parts:
            if info.filename == "docProps/core.xml" and modified is not None:
                stamp = modified.strftime("%Y-%m-%dT%H:%M:%SZ").encode()
                data = re.sub(rb"(<dcterms:modified[^>]*>)[^<]*", rb"\g<1>" + stamp, data)
            elif info.filename.startswith("xl/worksheets/sheet") and used_range is not None:
                data = re.sub(rb'<dimension ref="[^"]*"', b'<dimension ref="' + used_range.encode() + b'"', data)
            book.writestr(info, data)


def search(client, query: str, **body) -> dict:
    response = client.post("/v1/search", json={"query": query, "top_k": 3, **body})
    assert response.status_code == 200, response.text
    return response.json()


@pytest.fixture(scope="module")
def drive(tmp_path_factory, local_embedder):
    folder = tmp_path_factory.mktemp("sheets")
    (folder / "drive").mkdir()
    make_xlsx(folder / "drive" / "winter-prices.xlsx", {"Prices": PRICES, "Store hours": HOURS, "Margins": MARGINS}, hidden=("Margins",),
              title="Winter price list", author="Retail team", modified=datetime(2026, 11, 2, 8, 0), used_range="A1")
    make_xlsx(folder / "faq.xlsx", {"FAQ": [
        ["Question", "Answer", "URL", "Tags"],
        ["How long does a refund take?\nWhen do I get my money back?", "Refunds reach your card 3 to 5 business days after we receive the parcel.",
         "https://shop.example/help/refunds", "returns, money"],
        ["Do you ship to islands?", "Yes: parcels to islands travel by ferry and take three extra days.", None, None],
    ]})
    (folder / "drive" / "old-prices.xlsx").write_bytes(bytes.fromhex("d0cf11e0a1b11ae1") + b"\0" * 504)  # an .xls renamed
    config = load_config(write_config(folder, '[[sources]]\nname = "drive"\ntype = "files"\npath = "drive"\n'
                                              '[[sources]]\nname = "faq"\ntype = "answers"\npath = "faq.xlsx"\n'
                                              '[[spaces]]\nprovider = "local"\n'))
    report = run_index(config)
    with api_client(config.artifacts) as client:
        yield report, client


def test_each_row_of_a_price_list_says_what_its_numbers_are(drive):
    _, client = drive
    hit = search(client, "how much are the Alpine boots")["hits"][0]
    assert hit["title"] == "Winter price list" and hit["heading_path"] == ["Prices"]
    assert "Winter prices, valid from the second of January\nProduct: Alpine boots; Price (EUR): 189; On sale since: 2026-01-02" in hit["text"]
    assert "Product: Trail runners; Price (EUR): 119.5\n" in hit["text"], "an empty cell is left out, a whole number has no .0"
    assert hit["updated_at"].startswith("2026-11-02T08:00:00")
    hit = search(client, "when does the Oslo store close")["hits"][0]
    assert hit["heading_path"] == ["Store hours"] and "Store: Oslo; Opens: 10:00; Closes: 18:00" in hit["text"]
    texts = [h["text"] for h in search(client, "margin snowshoes", mode="lexical", top_k=10)["hits"]]
    assert not any("snowshoes" in t for t in texts), "a hidden sheet is left out"


def test_a_workbook_of_questions_and_answers_gives_curated_answers(drive):
    report, client = drive
    answers = search(client, "when will I get my money back")["answers"]
    assert [a["doc_id"] for a in answers][:1] == ["answer:faq/how-long-does-a-refund-take"], answers
    assert answers[0]["url"] == "https://shop.example/help/refunds"
    assert answers[0]["questions"] == ["How long does a refund take?", "When do I get my money back?"], "a cell's lines are its phrasings"
    assert answers[0]["answer"].startswith("Refunds reach your card 3 to 5 business days") and answers[0]["tags"] == ["returns", "money"]


def test_an_old_or_locked_workbook_is_named_and_the_run_goes_on(drive, tmp_path):
    report, _ = drive
    assert [(e.code, e.doc_id) for e in report.errors] == [("FILE_EXTRACTION_FAILED", "file:old-prices.xlsx")]
    assert "not a readable Excel (.xlsx) workbook: it is password-protected or an Excel 97–2003 file; save it as .xlsx" in report.errors[0].message
    make_xlsx(tmp_path / "numbers.xlsx", {"Sheet1": [[2026, "Q1", 4.25], [2027, "Q2", 4.5]]})
    result = CliRunner().invoke(cli, ["extract", str(tmp_path / "numbers.xlsx")])
    assert result.exit_code == 0 and "2026 | Q1 | 4.25\n2027 | Q2 | 4.5" in result.output, result.output
    assert "Sheet1" not in result.output.split("\n", 3)[-1], "one sheet: no heading of its own"


def test_a_workbook_without_a_header_row_is_not_read_as_answers(tmp_path, local_embedder):
    make_xlsx(tmp_path / "faq.xlsx", {"FAQ": [["How long does a refund take?", "Five business days."]]})
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "refunds.md").write_text("# Refunds\n\nRefunds take five business days.\n")
    config = load_config(write_config(tmp_path, '[[sources]]\nname = "faq"\ntype = "answers"\npath = "faq.xlsx"\n'
                                                '[[sources]]\nname = "docs"\ntype = "files"\npath = "docs"\n[[spaces]]\nprovider = "local"\n'))
    report = run_index(config)
    assert [e.code for e in report.errors] == ["SOURCE_LISTING_FAILED"], report.errors
    assert ('faq.xlsx: the first row is the header, and it names no `question` column (it reads "How long does a refund take?", '
            '"Five business days."); add a first row with the cells `question` and `answer`') in report.errors[0].message


def test_a_workbook_linked_from_a_crawled_page_is_indexed(tmp_path, site, local_embedder):
    make_xlsx(tmp_path / "prices.xlsx", {"Prices": PRICES}, title="Winter price list")
    site.routes["/"] = (200, "text/html", b'<html><head><title>Prices</title></head><body><main><h1>Our prices</h1>'
                        b'<p>The whole winter price list, with the dates each sale began, is in one workbook you can download.</p>'
                        b'<p><a href="/files/prices.xlsx">Winter price list</a></p></main></body></html>')
    site.routes["/files/prices.xlsx"] = (200, XLSX, (tmp_path / "prices.xlsx").read_bytes())
    config = load_config(write_config(tmp_path, f'[[sources]]\nname = "shop"\ntype = "urls"\ncrawl = true\n{LOOPBACK_WEB}'
                                                 f'urls = ["{site.url("/")}"]\n[[spaces]]\nprovider = "local"\n'))
    report = run_index(config)
    assert not report.errors and not report.warnings
    with api_client(config.artifacts) as client:
        hit = search(client, "price of three pairs of wool socks")["hits"][0]
    assert hit["url"] == site.url("/files/prices.xlsx") and hit["title"] == "Winter price list"
    assert "Product: Wool socks, three pairs; Price (EUR): 24" in hit["text"]
