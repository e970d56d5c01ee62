"""The macro-enabled, template and slide-show forms of the Office formats, as a shared drive holds
them (budget.xlsm, letter.dotx, the sales show .ppsx, an old .pps): read as the formats they are
forms of. A folder's budget.xlsm was never listed, read or named. Graphviz's .dot and gettext's .pot
files, which docs folders hold, are not taken for Word or PowerPoint files."""

import io
import re
import shutil
import zipfile
from pathlib import Path

from indexer.config import load_config
from indexer.pipeline import run_index
from tests.conftest import LOOPBACK_WEB, api_client, indexed_and_served, search_hits, write_config
from tests.fakes.sheets import make_xlsx
from tests.fakes.slides import make_pptx
from tests.fakes.word import make_docx

LEGACY = Path(__file__).parent / "data" / "legacy_office"
MAIN_PARTS = {  # the content type of each form's main part, as Word, PowerPoint and Excel save it
    ".docm": "application/vnd.ms-word.document.macroEnabled.main+xml",
    ".dotx": "application/vnd.openxmlformats-officedocument.wordprocessingml.template.main+xml",
    ".pptm": "application/vnd.ms-powerpoint.presentation.macroEnabled.main+xml",
    ".ppsx": "application/vnd.openxmlformats-officedocument.presentationml.slideshow.main+xml",
    ".xlsm": "application/vnd.ms-excel.sheet.macroEnabled.main+xml",
    ".xltx": "application/vnd.openxmlformats-officedocument.spreadsheetml.template.main+xml",
}


def as_form(made: Path, suffix: str) -> Path:
    """The Office Open XML file `made` saved as another form of its format: the same parts, its main
    part's content type that form's."""
    source, out = zipfile.ZipFile(made), io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            data = source.read(info)
            if info.filename == "[Content_Types].xml":
                data, changed = re.subn(rb'(PartName="/(?:word/document|ppt/presentation|xl/workbook)\.xml" ContentType=")[^"]+',
                                        lambda m: m.group(1) + MAIN_PARTS[suffix].encode(), data)
                assert changed == 1, data
            target.writestr(info.filename, data)
    path = made.with_suffix(suffix)
    path.write_bytes(out.getvalue())
    made.unlink()
    return path


def test_the_other_forms_of_the_office_formats_are_read_as_what_they_are(tmp_path, local_embedder):
    drive = tmp_path / "drive"
    drive.mkdir()
    make_docx(drive / "expenses.docx", [("h1", "Expense claims"), ("p", "Claims are paid with the March salary.")], title="Expense claims")
    as_form(drive / "expenses.docx", ".docm")
    make_docx(drive / "letter.docx", [("h1", "Welcome letter"), ("p", "New staff collect their badge at reception.")], title="Welcome letter")
    as_form(drive / "letter.docx", ".dotx")
    make_pptx(drive / "sales.pptx", [{"title": "Spring sale", "bullets": [(0, "Sandals are twenty percent off in April")]}], title="Spring sale show")
    as_form(drive / "sales.pptx", ".ppsx")
    make_pptx(drive / "tools.pptx", [{"title": "Macros", "bullets": [(0, "The stock macro refreshes the shelf labels")]}], title="Tools")
    as_form(drive / "tools.pptx", ".pptm")
    make_xlsx(drive / "budget.xlsx", {"Budget": [["Team", "Budget (EUR)"], ["Marketing", "48000"]]}, title="Budget")
    as_form(drive / "budget.xlsx", ".xlsm")
    make_xlsx(drive / "rota.xlsx", {"Rota": [["Day", "Opens"], ["Saturday", "Ana"]]}, title="Rota template")
    as_form(drive / "rota.xlsx", ".xltx")
    shutil.copy(LEGACY / "briefing.ppt", drive / "briefing.pps")
    shutil.copy(LEGACY / "prices.xls", drive / "prices.xlt")
    (drive / "flow.dot").write_text("digraph refunds { request -> approve -> pay }\n")  # Graphviz
    (drive / "messages.pot").write_text('msgid "Refunds"\nmsgstr ""\n')  # a gettext catalogue
    with indexed_and_served(tmp_path, '[[sources]]\nname = "drive"\ntype = "files"\npath = "drive"\n[[spaces]]\nprovider = "local"\n') as (report, client):
        assert not report.errors and not report.warnings, (report.errors, report.warnings)
        found = {question: search_hits(client, question)[0] for question in (
            "when are expense claims paid", "where do new staff collect their badge", "which shoes are on sale in April",
            "what does the stock macro do", "marketing budget", "who opens on Saturday", "who keeps the alarm keys",
            "how much are the Alpine boots")}
    assert {q: hit["doc_id"] for q, hit in found.items()} == {
        "when are expense claims paid": "file:expenses.docm", "where do new staff collect their badge": "file:letter.dotx",
        "which shoes are on sale in April": "file:sales.ppsx", "what does the stock macro do": "file:tools.pptm",
        "marketing budget": "file:budget.xlsm", "who opens on Saturday": "file:rota.xltx",
        "who keeps the alarm keys": "file:briefing.pps", "how much are the Alpine boots": "file:prices.xlt",
    }, found
    assert found["which shoes are on sale in April"]["heading_path"] == ["Slide 1: Spring sale"]
    assert "Team: Marketing; Budget (EUR): 48000" in found["marketing budget"]["text"]


def test_a_crawl_reads_a_workbook_with_macros_by_its_media_type(tmp_path, site, local_embedder):
    make_xlsx(tmp_path / "budget.xlsx", {"Budget": [["Team", "Budget (EUR)"], ["Marketing", "48000"]]}, title="Budget")
    site.routes["/files/budget.xlsm"] = (200, "application/vnd.ms-excel.sheet.macroEnabled.12", as_form(tmp_path / "budget.xlsx", ".xlsm").read_bytes())
    config = write_config(tmp_path, f'[[sources]]\nname = "site"\ntype = "urls"\n{LOOPBACK_WEB}urls = ["{site.url("/files/budget.xlsm")}"]\n'
                                    '[[spaces]]\nprovider = "local"\n')
    report = run_index(load_config(config))
    assert not report.errors and not report.warnings, (report.errors, report.warnings)
    with api_client(load_config(config).artifacts) as client:
        hit = search_hits(client, "marketing budget")[0]
    assert hit["url"] == site.url("/files/budget.xlsm") and hit["title"] == "Budget"
