"""Office 97–2003 and Rich Text files, as an old shared drive keeps them: a Word .doc, a Rich Text
.rtf and Excel .xls files (a price list, a FAQ of curated answers) written by a real office program
(LibreOffice, from the OpenDocument files tests/data/legacy_office/make.py builds), and a TextEdit
note, are searchable as their newer formats are; one saved with a password, under the other
extension, or damaged is named, and the run goes on."""

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from indexer.cli import cli
from indexer.config import load_config
from tests.conftest import indexed_and_served, search_hits
from tests.fakes.sheets import make_xlsx
from tests.fakes.word import make_docx

LEGACY = Path(__file__).parent / "data" / "legacy_office"
HANDBOOK, PRICES = LEGACY / "handbook.doc", LEGACY / "prices.xls"
# A note as macOS TextEdit saves it (Format → Make Rich Text): its own header, a list of its kind,
# `\` + line end as the paragraph mark, Windows-1252 bytes and \uc0\u escapes for other characters.
TEXTEDIT = rb"""{\rtf1\ansi\ansicpg1252\cocoartf2761
\cocoatextscaling0\cocoaplatform0{\fonttbl\f0\fswiss\fcharset0 Helvetica;\f1\fswiss\fcharset0 Helvetica-Bold;}
{\colortbl;\red255\green255\blue255;}
{\*\expandedcolortbl;;}
{\*\listtable{\list\listtemplateid1\listhybrid{\listlevel\levelnfc23\levelnfcn23\leveljc0\leveljcn0\levelfollow0\levelstartat1\levelspace360\levelindent0{\*\levelmarker \{disc\}}{\leveltext\leveltemplateid1\'01\uc0\u8226 ;}{\levelnumbers;}\fi-360\li720\lin720 }{\listname ;}\listid1}}
{\*\listoverridetable{\listoverride\listid1\listoverridecount0\ls1}}
\paperw11900\paperh16840\margl1440\margr1440\vieww11520\viewh8400\viewkind0
\pard\tx566\tx1133\pardirnatural\partightenfactor0

\f1\b\fs28 \cf0 Store opening checklist
\f0\b0\fs24 \
\
Unlock the front door at nine.\
Switch off the alarm first \'96 the panel is behind the counter.\
\pard\tx220\tx720\pardirnatural\partightenfactor0
\ls1\ilvl0\cf0 {\listtext	\uc0\u8226 	}Caf\'e9 staff arrive at half past eight.\
{\listtext	\uc0\u8226 	}The till float is 150 \uc0\u8364 .\
\pard\tx566\tx1133\pardirnatural\partightenfactor0
\cf0 Na\uc0\u239 ve questions are welcome.}
"""


def locked(raw: bytes) -> bytes:
    """The .doc as Word saves it with a password: the same file with its FIB's fEncrypted flag set."""
    fib = raw.index(b"\xec\xa5")  # the Word magic that opens the WordDocument stream (and its FIB)
    changed = bytearray(raw)
    changed[fib + 0x0B] |= 0x01
    return bytes(changed)


def word_95(raw: bytes) -> bytes:
    """The .doc with the file format version (nFib) Word 95 writes, whose FIB is laid out otherwise."""
    fib = raw.index(b"\xec\xa5")
    return raw[: fib + 2] + (0x0068).to_bytes(2, "little") + raw[fib + 4 :]


@pytest.fixture(scope="module")
def drive(tmp_path_factory, local_embedder):
    folder = tmp_path_factory.mktemp("legacy")
    drive = folder / "drive"
    drive.mkdir()
    shutil.copy(HANDBOOK, drive / "travel-handbook.doc")
    shutil.copy(PRICES, drive / "winter-prices.xls")
    (drive / "locked.doc").write_bytes(locked(HANDBOOK.read_bytes()))
    make_docx(drive / "visas.doc", [("h1", "Visas"), ("p", "The office applies for business visas three weeks ahead.")], title="Visas")  # a .docx named .doc
    make_xlsx(drive / "rates.xls", {"Rates": [["Currency", "Rate"], ["Swiss franc", "0.95"]]})  # an .xlsx named .xls
    with indexed_and_served(folder, '[[sources]]\nname = "drive"\ntype = "files"\npath = "drive"\n[[spaces]]\nprovider = "local"\n') as served:
        yield served


def test_a_word_97_document_is_searched_by_its_headings_lists_and_tables(drive):
    _, client = drive
    hit = search_hits(client, "how much is the daily meal allowance")[0]
    assert hit["doc_id"] == "file:travel-handbook.doc" and hit["title"] == "Travel handbook", hit
    assert hit["heading_path"][-1] == "Per diem" and "The daily allowance for meals is 45 euros." in hit["text"]
    assert hit["updated_at"].startswith("2026-11-02T08:00:00")
    document = client.get(f"/v1/documents/{hit['doc_id']}").json()
    assert document["authors"] == ["Ana Silva"] and document["tags"] == ["travel", "policy"]
    hit = search_hits(client, "hotel nightly limit in Lisbon")[0]
    assert hit["heading_path"][-1] == "Hotels", hit
    assert ("See the hotel list before booking a room.\n\n- Breakfast is included in the nightly limit.\n- Parking at the hotel is refunded.\n\n"
            "City | Nightly limit (EUR)\nLisbon | 120\nReykjavik |") in hit["text"], "a link reads as its words, a list as items, a table a row per line"


def test_what_word_does_not_show_as_the_text_is_not_indexed(drive):
    _, client = drive
    assert any("45 euros" in h["text"] for h in search_hits(client, "allowance 30 euros before 2026", mode="lexical")), "where the deletion was"
    # a footnote, a tracked deletion, a link's address, the generated table of contents
    for words in ("manager approval flights", "allowance 30 euros before 2026", "intranet.example.com", "Per diem 2 Hotels 1"):
        texts = [h["text"] for h in search_hits(client, words, mode="lexical", top_k=10)]
        assert not any(t in text for text in texts for t in ("approval", "30 euros", "intranet", "Hotels 1")), (words, texts)


def test_an_excel_97_workbook_is_read_a_row_at_a_time_with_its_column_names(drive):
    _, client = drive
    hit = search_hits(client, "how much are the Alpine boots")[0]
    assert hit["doc_id"] == "file:winter-prices.xls" and hit["title"] == "Winter price list" and hit["heading_path"] == ["Prices"], hit
    assert ("Winter prices, valid from 2 January\nProduct: Alpine boots; Price (EUR): 189; On sale since: 2026-01-02; Discount: 30%\n"
            "Product: Wool socks; Price (EUR): 12.5; On sale since: 2026-01-09; Discount: 10%; Note: Pack of two") in hit["text"]
    hit = search_hits(client, "when does the Porto store open")[0]
    assert hit["heading_path"] == ["Store hours"] and "Store: Porto; Hours: 10 to 20" in hit["text"]
    assert not any("confidential" in h["text"] for h in search_hits(client, "confidential margin figures", mode="lexical", top_k=10)), "a hidden sheet"


def test_a_locked_or_misnamed_old_office_file_is_named_or_read_for_what_it_is(drive, tmp_path):
    report, client = drive
    assert [(e.code, e.doc_id) for e in report.errors] == [("FILE_EXTRACTION_FAILED", "file:locked.doc")], report.errors
    assert report.errors[0].message == "locked.doc: not a readable Word 97–2003 (.doc) document: it is password-protected; save it without a password to index it", report.errors[0].message
    assert search_hits(client, "business visas")[0]["doc_id"] == "file:visas.doc", "a .docx saved as .doc"
    assert search_hits(client, "Swiss franc rate")[0]["doc_id"] == "file:rates.xls", "an .xlsx saved as .xls"
    (tmp_path / "memo.doc").write_bytes(word_95(HANDBOOK.read_bytes()))
    result = CliRunner().invoke(cli, ["extract", str(tmp_path / "memo.doc")])
    assert result.exit_code == 1 and "memo.doc: not a readable Word 97–2003 (.doc) document: it is a Word 6 or 95 file; save it as .docx" in result.output
    shutil.copy(HANDBOOK, tmp_path / "expenses.docx")
    shutil.copy(PRICES, tmp_path / "prices.xlsx")
    result = CliRunner().invoke(cli, ["extract", str(tmp_path / "expenses.docx")])
    assert result.exit_code == 0 and "## Per diem\n\nThe daily allowance for meals is 45 euros." in result.output, "a .doc saved as .docx"
    result = CliRunner().invoke(cli, ["extract", str(tmp_path / "prices.xlsx")])
    assert result.exit_code == 0 and "# Store hours\n\nStore: Lisbon; Hours: 9 to 21" in result.output, result.output


@pytest.mark.parametrize("original", [HANDBOOK, PRICES], ids=["doc", "xls"])
def test_a_damaged_old_office_file_is_a_clear_error(tmp_path, original):
    raw = original.read_bytes()
    what = "Word 97–2003 (.doc) document" if original.suffix == ".doc" else "Excel 97–2003 (.xls) workbook"
    damaged = {"cut": raw[: len(raw) // 3], "empty": b"", "zeroed": raw[:512] + bytes(len(raw) - 512), "text": b"Minutes of the May meeting\n"}
    if original.suffix == ".xls":  # its CODEPAGE record (Unicode, 1200) changed to a number no codec has
        record = raw.index(b"\x42\x00\x02\x00\xb0\x04")
        damaged["codepage"] = raw[: record + 4] + (1149).to_bytes(2, "little") + raw[record + 6 :]
    for name, content in damaged.items():
        (tmp_path / f"{name}{original.suffix}").write_bytes(content)
        result = CliRunner().invoke(cli, ["extract", str(tmp_path / f"{name}{original.suffix}")])
        assert result.exit_code == 1, result.output
        assert f"{name}{original.suffix}: not a readable {what}" in result.output and "unexpected" not in result.output, result.output


def test_rich_text_files_are_read_as_word_and_textedit_show_them(tmp_path, local_embedder):
    notes = tmp_path / "notes"
    notes.mkdir()
    shutil.copy(LEGACY / "handbook.rtf", notes / "travel.rtf")
    (notes / "opening.rtf").write_bytes(TEXTEDIT)
    (notes / "minutes.rtf").write_text("Minutes of the May meeting, saved as plain text under the wrong name.\n")
    with indexed_and_served(tmp_path, '[[sources]]\nname = "notes"\ntype = "files"\npath = "notes"\n[[spaces]]\nprovider = "local"\n') as (report, client):
        assert [(e.code, e.doc_id) for e in report.errors] == [("FILE_EXTRACTION_FAILED", "file:minutes.rtf")], report.errors
        assert "not a readable Rich Text (.rtf) document: it does not start with {\\rtf" in report.errors[0].message
        hit = search_hits(client, "how much is the daily meal allowance")[0]
        assert hit["doc_id"] == "file:travel.rtf" and hit["title"] == "Travel handbook" and hit["heading_path"][-1] == "Per diem", hit
        assert hit["updated_at"].startswith("2026-11-02T08:00:00")
        hit = search_hits(client, "hotel nightly limit in Lisbon")[0]
        assert "- Parking at the hotel is refunded.\n\nCity | Nightly limit (EUR)\nLisbon | 120" in hit["text"], hit
        for words in ("manager approval flights", "allowance 30 euros before 2026", "intranet.example.com", "Per diem 2 Hotels 1"):
            texts = [h["text"] for h in search_hits(client, words, mode="lexical", top_k=10)]
            assert not any(t in text for text in texts for t in ("approval", "30 euros", "intranet", "Hotels 1")), (words, texts)
        hit = search_hits(client, "who arrives at half past eight")[0]
        assert hit["doc_id"] == "file:opening.rtf" and hit["title"] == "Opening", "no title in its properties, no heading: its name"
        assert ("Switch off the alarm first – the panel is behind the counter.\n\n- Café staff arrive at half past eight.\n"
                "- The till float is 150 €.\n\nNaïve questions are welcome.") in hit["text"], hit["text"]


def test_an_excel_97_workbook_of_questions_and_answers_gives_curated_answers(tmp_path, monkeypatch, local_embedder):
    """A support team's FAQ kept in an .xls since before .xlsx: `index init faq.xls` makes it an answers source."""
    shutil.copy(LEGACY / "faq.xls", tmp_path / "faq.xls")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["init", "faq.xls", "-p", "local"])
    assert result.exit_code == 0, result.output
    (answers,) = load_config(tmp_path / "index.toml").sources
    assert (answers.type, answers.path) == ("answers", tmp_path / "faq.xls")
    with indexed_and_served(tmp_path, (tmp_path / "index.toml").read_text()) as (report, client):
        assert not report.errors
        response = client.post("/v1/search", json={"query": "when will I get my money back", "top_k": 3}).json()
    answer = response["answers"][0]
    assert answer["questions"] == ["How long does a refund take?", "When do I get my money back?"], "a cell's lines are its phrasings"
    assert answer["url"] == "https://shop.example/help/refunds" and answer["tags"] == ["returns", "money"]
