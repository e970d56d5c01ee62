"""PDF and Word files, as help centres publish them: indexed with their headings, cited by page,
without their running headers and footers; encrypted and scanned PDFs get their own codes."""

import zipfile
from datetime import datetime

import pytest
from click.testing import CliRunner

from indexer.cli import cli
from indexer.config import load_config
from indexer.pdf import read_pdf
from indexer.pipeline import run_index
from tests.conftest import LOOPBACK_WEB, api_client, indexed_and_served, search_hits as search, write_config
from tests.fakes.pdfs import FOOTER, HEADER, encrypted_pdf, make_pdf, scanned_pdf, source_text
from tests.fakes.opendocument import make_odp, make_ods, make_odt
from tests.fakes.sheets import make_xlsx
from tests.fakes.slides import make_pptx
from tests.fakes.word import make_docx

FILLER = ("Support agents answer tickets in the order they arrive, and every answer is checked by a second "
          "agent before it is sent, so customers get one consistent reply. ")
HANDBOOK = [
    ("h1", "Customer handbook"),
    ("p", FILLER * 4),
    ("h2", "Returns"),
    ("p", "Unworn shoes can be returned within thirty days for a full refund to the original card. " + FILLER * 3),
    ("pagebreak", None),
    ("h2", "Warranty"),
    ("p", "Every boot carries a two year warranty against broken stitching and sole separation. " + FILLER * 3),
    ("h3", "Claims"),
    ("p", "To claim the warranty, photograph the damage and attach the receipt to a ticket. " + FILLER * 2),
    ("pagebreak", None),
    ("h2", "Shipping prices"),
    ("table", [["Zone", "Price", "Days"], ["Domestic", "5 EUR", "2"], ["Europe", "12 EUR", "5"]]),
    ("p", "Parcels to islands travel by ferry and take three extra days to arrive. " + FILLER * 2),
]
CONFIG = """
[[sources]]
name = "docs"
type = "files"
path = "docs"
[[spaces]]
provider = "local"
"""


@pytest.mark.parametrize("layout", ["single", "two_columns", "manual"])
def test_pdf_text_comes_back_in_reading_order_without_running_lines(tmp_path, layout):
    path = tmp_path / "handbook.pdf"
    make_pdf(path, HANDBOOK, layout, title="Customer handbook", author="Support team")
    pdf = read_pdf(path.read_bytes())
    expected = source_text(HANDBOOK)
    words = " ".join(line.lstrip("# ") for line in pdf.text.replace(" | ", " ").splitlines()).split()
    assert " ".join(words) == expected, "every word, in order, hyphenated words whole, nothing added"
    assert HEADER not in pdf.text and FOOTER not in pdf.text and "Page 2" not in pdf.text
    assert len(pdf.pages) == pdf.page_count == 3
    third = pdf.text[pdf.pages[2]:]
    assert third.startswith("## Shipping prices"), "page 3 begins where the third page's text does"
    assert ("## Warranty" in pdf.text and "### Claims" in pdf.text) or layout == "manual"
    assert pdf.title == "Customer handbook" and pdf.authors == ("Support team",)


@pytest.mark.parametrize("stored", ["Microsoft Word - handbook_v3_final.docx", "handbook_v3_final.pdf", "Document1", "Untitled-2"])
def test_a_title_the_writing_program_filled_in_gives_way_to_the_first_heading(tmp_path, stored):
    """Word's PDF export stores "Microsoft Word - <file name>" as the title: hits were titled that."""
    make_pdf(tmp_path / "h.pdf", HANDBOOK, "single", title=stored)
    assert read_pdf((tmp_path / "h.pdf").read_bytes()).title == "Customer handbook"


def test_a_word_title_a_template_filled_in_gives_way_to_the_first_heading(tmp_path):
    from indexer.word import extract_docx

    make_docx(tmp_path / "t.docx", [("h1", "Travel policy"), ("p", "Employees book trains.")], title="Document1")
    assert extract_docx((tmp_path / "t.docx").read_bytes(), "t").title == "Travel policy"


def test_a_word_file_reads_as_word_shows_it_with_tracked_changes_accepted(tmp_path):
    """A handbook edited with Track Changes on: the inserted words were lost ("Refunds take days."),
    and text formatted hidden — which Word neither shows nor prints — was indexed."""
    from indexer.word import extract_docx

    make_docx(tmp_path / "r.docx", [("h1", "Refunds"), ("edited", [("", "Refunds take "), ("ins", "five business "), ("del", "thirty "),
                                                                   ("", "days."), ("hidden", " Internal: we lose money on these.")])])
    assert extract_docx((tmp_path / "r.docx").read_bytes(), "r").text == "# Refunds\n\nRefunds take five business days."


def test_a_pdf_outline_gives_the_heading_levels(tmp_path):
    blocks = [("h1", "Guide"), ("p", FILLER), ("h2", "Setup"), ("p", FILLER), ("h3", "Network"), ("p", FILLER)]
    path = tmp_path / "guide.pdf"
    make_pdf(path, blocks, "single", running=False, outline=True)
    headings = [line for line in read_pdf(path.read_bytes()).text.splitlines() if line.startswith("#")]
    assert headings == ["# Guide", "## Setup", "### Network"]


@pytest.fixture(scope="module")
def handbook_site(tmp_path_factory, local_embedder):
    folder = tmp_path_factory.mktemp("pdfdocx")
    docs = folder / "docs"
    docs.mkdir()
    make_pdf(docs / "handbook.pdf", HANDBOOK, "single", title="Customer handbook", author="Support team")
    make_docx(docs / "travel.docx", [
        ("h1", "Travel policy"), ("p", "Employees book flights and hotels through the travel portal."),
        ("h2", "Per diem"), ("li", "Meals are reimbursed up to forty euros a day"), ("li2", "Breakfast is included in hotel rates"),
        ("h2", "City rates"), ("table", [["City", "Hotel cap"], ["Lisbon", "140 EUR"], ["Oslo", "210 EUR"]]),
    ], title="Travel policy", author="People team", keywords="travel, expenses", modified=datetime(2026, 3, 4, 9, 30))
    encrypted_pdf(docs / "salaries.pdf")
    scanned_pdf(docs / "scan.pdf")
    with indexed_and_served(folder, CONFIG) as served:
        yield served


def test_pdf_hits_carry_their_pages_and_headings(handbook_site):
    _, client = handbook_site
    hit = search(client, "how long is the warranty on boots against broken stitching")[0]
    assert hit["title"] == "Customer handbook"
    assert (hit["page_start"], hit["page_end"]) == (2, 2)
    assert hit["heading_path"][-1] == "Warranty"
    hit = search(client, "ferry parcels to islands extra days")[0]
    assert (hit["page_start"], hit["page_end"]) == (3, 3) and hit["heading_path"][-1] == "Shipping prices"
    assert search(client, "refund unworn shoes thirty days")[0]["page_start"] == 1


def test_no_chunk_holds_a_running_header_or_footer(handbook_site):
    _, client = handbook_site
    for query in (HEADER, FOOTER, "Page 2"):
        for hit in search(client, query, mode="lexical", top_k=10):
            assert HEADER not in hit["text"] and FOOTER not in hit["text"] and "Page 2" not in hit["text"]


def test_docx_headings_lists_tables_and_properties(handbook_site):
    _, client = handbook_site
    hit = search(client, "how much are meals reimbursed per day")[0]
    assert hit["title"] == "Travel policy" and hit["heading_path"][-1] == "Per diem"
    assert "- Meals are reimbursed up to forty euros a day" in hit["text"]
    assert hit["updated_at"].startswith("2026-03-04T09:30:00")
    assert hit["page_start"] is None and hit["page_end"] is None, "a Word file has no pages to cite"
    hit = search(client, "hotel cap in Oslo")[0]
    assert "Oslo | 210 EUR" in hit["text"]


def test_encrypted_and_scanned_pdfs_get_their_codes_and_the_run_goes_on(handbook_site):
    report, client = handbook_site
    assert [(e.code, e.level) for e in report.errors] == [("PDF_ENCRYPTED", "error")]
    assert "salaries.pdf" in report.errors[0].message and "password" in report.errors[0].message
    assert [(w.code, w.level) for w in report.warnings] == [("PDF_NO_TEXT", "warning")]
    assert "scan.pdf" in report.warnings[0].message
    assert (report.counts["added"], report.counts["failed"]) == (2, 1), "the scan is left out with its warning, not counted as failed"
    titles = {hit["title"] for hit in search(client, "warranty travel", mode="lexical", top_k=10)}
    assert titles == {"Customer handbook", "Travel policy"}


def test_a_scan_left_out_does_not_make_every_run_publish_and_is_still_reported(tmp_path, local_embedder):
    """It counted as a failed document, so a run over unchanged files published a new generation
    every time; now nothing changed, and the warning is still printed."""
    (tmp_path / "docs").mkdir()
    make_pdf(tmp_path / "docs" / "handbook.pdf", HANDBOOK, "single", title="Customer handbook")
    scanned_pdf(tmp_path / "docs" / "scan.pdf")
    config = write_config(tmp_path, CONFIG)
    first = CliRunner().invoke(cli, ["run", "-c", str(config)])
    again = CliRunner().invoke(cli, ["run", "-c", str(config), "-s"])
    assert first.exit_code == again.exit_code == 0, again.output
    assert "(1 added)" in first.output and "failed" not in first.output
    assert again.output.startswith("Nothing changed") and "warning: PDF_NO_TEXT" in again.output and "scan.pdf" in again.output


def test_a_pdf_and_a_word_file_linked_from_a_crawled_page_are_indexed(tmp_path, site, local_embedder):
    pdf = tmp_path / "manual.pdf"
    make_pdf(pdf, HANDBOOK, "single", title="Customer handbook")
    site.routes["/"] = (200, "text/html", b'<html><head><title>Help</title></head><body><main><h1>Help centre</h1>'
                        b'<p>Our customer handbook has the rules for returns, warranty and shipping. Read it before you write to us.</p>'
                        b'<p><a href="/files/manual.pdf">Customer handbook (PDF)</a> <a href="/files/travel.docx">Travel policy</a></p>'
                        b'</main></body></html>')
    site.routes["/files/manual.pdf"] = (200, "application/pdf", pdf.read_bytes())
    make_docx(tmp_path / "travel.docx", [("h1", "Travel policy"), ("p", "Employees book trains for trips under four hours.")], title="Travel policy")
    site.routes["/files/travel.docx"] = (200, "application/vnd.openxmlformats-officedocument.wordprocessingml.document", (tmp_path / "travel.docx").read_bytes())
    config = load_config(write_config(tmp_path, f'[[sources]]\nname = "help"\ntype = "urls"\ncrawl = true\n{LOOPBACK_WEB}urls = ["{site.url("/")}"]\n'
                                                 '[[spaces]]\nprovider = "local"\n'))
    report = run_index(config)
    assert not report.errors and not report.warnings
    with api_client(config.artifacts) as client:
        hit = search(client, "photograph the damage and attach the receipt to claim the warranty")[0]
        word = search(client, "book trains for trips under four hours")[0]
    assert word["title"] == "Travel policy" and word["url"] == site.url("/files/travel.docx")
    assert hit["url"] == site.url("/files/manual.pdf")
    assert hit["link"] == site.url("/files/manual.pdf") + "#page=2" and hit["page_start"] == 2


OFFICE_FILES = {  # what makes one, the part that holds its text, what a damaged one is called
    "docx": (lambda path: make_docx(path, [("h1", "Travel policy"), ("p", "Employees book trains.")], title="Travel policy"),
             "word/document.xml", "Word (.docx) document"),
    "pptx": (lambda path: make_pptx(path, [{"title": "Pricing", "bullets": [(0, "Boots are thirty percent off")]}]),
             "ppt/slides/slide1.xml", "PowerPoint (.pptx) deck"),
    "xlsx": (lambda path: make_xlsx(path, {"Prices": [["Product", "Price"], ["Boots", 189]]}), "xl/worksheets/sheet1.xml", "Excel (.xlsx) workbook"),
    "odt": (lambda path: make_odt(path, [("h1", "Travel policy"), ("p", "Employees book trains.")]), "content.xml", "OpenDocument text (.odt) document"),
    "ods": (lambda path: make_ods(path, {"Prices": [["Product", "Price"], ["Boots", "189"]]}), "content.xml", "OpenDocument spreadsheet (.ods)"),
    "odp": (lambda path: make_odp(path, [{"title": "Pricing", "bullets": [(0, "Boots are thirty percent off")]}]), "content.xml",
            "OpenDocument presentation (.odp)"),
}


def _damaged(whole, broken, part: str, how: str) -> None:
    with zipfile.ZipFile(whole) as source:
        items = [(item, source.read(item)) for item in source.infolist()]
    with zipfile.ZipFile(broken, "w", zipfile.ZIP_DEFLATED) as out:
        for item, data in items:
            if item.filename == part:
                data = data[: len(data) // 2] if how == "cut" else data.replace(b"<", b"<<", 3)
            out.writestr(item, data)
    if how == "garbled":  # bytes changed inside the compressed part: the zip reader's own error
        raw = bytearray(broken.read_bytes())
        start = raw.index(part.encode()) + len(part)
        raw[start + 40 : start + 60] = bytes(range(20))
        broken.write_bytes(bytes(raw))


@pytest.mark.parametrize("kind", OFFICE_FILES)
def test_a_damaged_office_file_is_a_clear_error(tmp_path, kind):
    """Damaged copies (cut short, broken XML, bytes changed inside the zip) were "unexpected"
    errors named by a parser's exception (zlib.error, RuntimeError, AttributeError)."""
    make, part, what = OFFICE_FILES[kind]
    make(tmp_path / f"whole.{kind}")
    (tmp_path / f"empty.{kind}").write_bytes(b"")
    for how in ("cut", "xml", "garbled"):
        _damaged(tmp_path / f"whole.{kind}", tmp_path / f"{how}.{kind}", part, how)
    for name in ("cut", "xml", "garbled", "empty"):
        result = CliRunner().invoke(cli, ["extract", str(tmp_path / f"{name}.{kind}")])
        assert result.exit_code == 1, result.output
        assert "FILE_EXTRACTION_FAILED: " in result.output and f"{name}.{kind}: not a readable {what}" in result.output, result.output
        assert "unexpected" not in result.output


def test_a_pdf_with_a_damaged_page_is_a_clear_error(tmp_path):
    """PDFium's "Failed to load page." ended `index extract` in a traceback (PdfiumError)."""
    import re

    make_pdf(tmp_path / "handbook.pdf", HANDBOOK, "single")
    raw = (tmp_path / "handbook.pdf").read_bytes()
    second = [m.start() for m in re.finditer(rb"/Type /Page\b(?!s)", raw)][1]
    (tmp_path / "damaged.pdf").write_bytes(raw[:second] + b"/Type /Xage" + raw[second + len(b"/Type /Page"):])
    result = CliRunner().invoke(cli, ["extract", str(tmp_path / "damaged.pdf")])
    assert result.exit_code == 1 and "damaged.pdf: not a readable PDF: page 2 of 3 is damaged" in result.output, result.output


def test_index_extract_prints_a_pdf_as_text(tmp_path):
    make_pdf(tmp_path / "handbook.pdf", HANDBOOK, "two_columns")
    result = CliRunner().invoke(cli, ["extract", str(tmp_path / "handbook.pdf")])
    assert result.exit_code == 0, result.output
    assert "## Warranty" in result.output and HEADER not in result.output
