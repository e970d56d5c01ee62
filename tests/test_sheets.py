"""Excel workbooks, as a shop keeps its price list and its support team its FAQ: searchable a row at a
time with the columns' names, hidden sheets left out; a workbook of questions and answers is a
source of curated answers, read as its CSV would be."""

from datetime import date, datetime

import pytest
from click.testing import CliRunner

from indexer.cli import cli
from indexer.config import load_config
from indexer.pipeline import run_index
from tests.conftest import indexed_and_served, write_config
from tests.fakes.sheets import make_xlsx

PRICES = [["Winter prices, valid from the second of January"], ["Product", "Price (EUR)", "On sale since", "Discount"],
          ["Alpine boots", 189, date(2026, 1, 2), (0.3, "0%")], ["Trail runners", 119.5, None],
          ["Wool socks, three pairs", 24, date(2026, 1, 9), (0.125, "0.0%")]]
HOURS = [["Store", "Opens", "Closes"], ["Lisbon", "9:00", "21:00"], ["Oslo", "10:00", "18:00"]]
MARGINS = [["Product", "Margin"], ["Alpine boots", "eleven percent on discounted snowshoes"]]


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
    (folder / "drive" / "old-prices.xlsx").write_bytes(bytes.fromhex("d0cf11e0a1b11ae1") + b"\0" * 504)  # an Office 97–2003 header, then nothing
    with indexed_and_served(folder, '[[sources]]\nname = "drive"\ntype = "files"\npath = "drive"\n'
                                    '[[sources]]\nname = "faq"\ntype = "answers"\npath = "faq.xlsx"\n[[spaces]]\nprovider = "local"\n') as served:
        yield served


def test_each_row_of_a_price_list_says_what_its_numbers_are(drive):
    _, client = drive
    hit = search(client, "how much are the Alpine boots")["hits"][0]
    assert hit["title"] == "Winter price list" and hit["heading_path"] == ["Prices"]
    assert ("Winter prices, valid from the second of January\n"
            "Product: Alpine boots; Price (EUR): 189; On sale since: 2026-01-02; Discount: 30%\n") in hit["text"], "a percentage reads as one"
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


def test_a_damaged_workbook_is_named_and_the_run_goes_on(drive, tmp_path):
    report, _ = drive
    assert [(e.code, e.doc_id) for e in report.errors] == [("FILE_EXTRACTION_FAILED", "file:old-prices.xlsx")]
    assert "old-prices.xlsx: not a readable Excel (.xlsx) workbook (" in report.errors[0].message, report.errors[0].message
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
