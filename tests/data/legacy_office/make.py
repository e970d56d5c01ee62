"""Makes this folder's Office 97–2003 and Rich Text files the way a team's old shared drive holds them: written
by a real office program (LibreOffice, `soffice --convert-to`) from OpenDocument files built here
with odfpy, and the deck from a .pptx python-pptx lays out as PowerPoint's templates do (its title
and content placeholders become the .ppt's). Not run by the tests (they read the files committed
beside it); run it again after changing what they hold:

    apt-get install libreoffice-writer-nogui libreoffice-calc-nogui libreoffice-impress-nogui
    .venv/bin/python tests/data/legacy_office/make.py
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parents[2]))

from tests.fakes.opendocument import make_ods, make_odt  # noqa: E402
from tests.fakes.slides import make_pptx  # noqa: E402


def handbook(path: Path) -> None:
    """A table of contents, headings, a footnote, a link, a list, a table with an empty cell, a tracked deletion."""
    make_odt(path, [
        ("toc", ["Booking travel 1", "Hotels 1", "Per diem 2"]),
        ("h1", "Booking travel"),
        ("note", "Employees book trains for trips under four hours.", "Flights need a manager's approval."),
        ("h2", "Hotels"),
        ("link", "See the ", "hotel list", "https://intranet.example.com/hotels", " before booking a room."),
        ("li", "Breakfast is included in the nightly limit."),
        ("li", "Parking at the hotel is refunded."),
        ("table", [["City", "Nightly limit (EUR)"], ["Lisbon", "120"], ["Reykjavik", ""]]),
        ("h2", "Per diem"),
        ("p", "The daily allowance for meals is 45 euros."),
        ("deleted", "The allowance was 30 euros before 2026."),
    ], title="Travel handbook", author="Ana Silva", keywords=("travel", "policy"),
       modified="2026-11-02T08:00:00")


def prices(path: Path) -> None:
    """A caption, a header, numbers, a date, a percentage, an empty cell; a second sheet; a hidden one."""
    from odf import dc
    from odf.number import DateStyle, Day, Month, Number, PercentageStyle, Text, Year
    from odf.opendocument import OpenDocumentSpreadsheet
    from odf.style import Style, TableProperties
    from odf.table import Table, TableCell, TableRow
    from odf.text import P

    book = OpenDocumentSpreadsheet()
    book.meta.addElement(dc.Title(text="Winter price list"))
    percent = PercentageStyle(name="pct")
    percent.addElement(Number(decimalplaces="0", minintegerdigits="1"))
    percent.addElement(Text(text="%"))
    iso = DateStyle(name="iso")
    for part in (Year(style="long"), Text(text="-"), Month(style="long"), Text(text="-"), Day(style="long")):
        iso.addElement(part)
    for style in (percent, iso):
        book.automaticstyles.addElement(style)
    as_percent = Style(name="cpct", family="table-cell", datastylename="pct")
    as_date = Style(name="cdate", family="table-cell", datastylename="iso")
    invisible = Style(name="hiddenTable", family="table")
    invisible.addElement(TableProperties(display="false"))
    for style in (as_percent, as_date, invisible):
        book.automaticstyles.addElement(style)

    def cell(value):
        if isinstance(value, str) and value.startswith("date:"):
            made = TableCell(valuetype="date", datevalue=value[5:], stylename=as_date)
        elif isinstance(value, str) and value.endswith("%"):
            made = TableCell(valuetype="percentage", value=float(value[:-1]) / 100, stylename=as_percent)
        elif isinstance(value, (int, float)):
            made = TableCell(valuetype="float", value=value)
        elif value == "":
            return TableCell()
        else:
            made = TableCell(valuetype="string")
        made.addElement(P(text=str(value[5:] if isinstance(value, str) and value.startswith("date:") else value)))
        return made

    def sheet(name, rows, hidden=False):
        table = Table(name=name, stylename=invisible) if hidden else Table(name=name)
        for values in rows:
            row = TableRow()
            for value in values:
                row.addElement(cell(value))
            table.addElement(row)
        book.spreadsheet.addElement(table)

    sheet("Prices", [["Winter prices, valid from 2 January"], ["Product", "Price (EUR)", "On sale since", "Discount", "Note"],
                     ["Alpine boots", 189, "date:2026-01-02", "30%", ""], ["Wool socks", 12.5, "date:2026-01-09", "10%", "Pack of two"]])
    sheet("Store hours", [["Store", "Hours"], ["Lisbon", "9 to 21"], ["Porto", "10 to 20"]])
    sheet("Margins", [["Product", "Margin"], ["Alpine boots", "confidential margin figures"]], hidden=True)
    book.save(str(path))


def faq(path: Path) -> None:
    """A support team's curated answers: a header row, a question with two phrasings in one cell."""
    make_ods(path, {"FAQ": [["Question", "Answer", "URL", "Tags"],
                            ["How long does a refund take?\nWhen do I get my money back?", "Refunds reach your card 3 to 5 business days after we receive the parcel.",
                             "https://shop.example/help/refunds", "returns, money"]]})


def briefing(path: Path) -> None:
    """Titles, bullets at two levels, speaker notes, a table, a hidden slide, a text box and a group of two."""
    from datetime import datetime

    make_pptx(path, [
        {"title": "Store opening briefing"},
        {"title": "Before nine", "bullets": [(0, "Two staff members open the store together"), (1, "One of them keeps the alarm keys")],
         "notes": "The alarm code changes every Monday; ask the manager for the new one."},
        {"title": "Opening hours", "table": [["Store", "Opens"], ["Lisbon", "9:00"], ["Oslo", "10:00"]]},
        {"title": "Draft bonus scheme", "bullets": [(0, "Bonuses rise to twelve percent for weekend shifts")], "hidden": True},
        {"title": "At closing time", "textbox": "Count the till before locking the door",
         "group": ["Lights off in the stockroom", "Set the alarm last"]},
    ], title="Store briefing", author="Retail team", keywords="stores, opening", modified=datetime(2026, 11, 2, 8, 0))


def main() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        made = Path(scratch)
        handbook(made / "handbook.odt")
        prices(made / "prices.ods")
        faq(made / "faq.ods")
        briefing(made / "briefing.pptx")
        for source, target in (("handbook.odt", "doc:MS Word 97"), ("handbook.odt", "rtf"), ("prices.ods", "xls:MS Excel 97"), ("faq.ods", "xls:MS Excel 97"),
                               ("briefing.pptx", "ppt:MS PowerPoint 97")):
            subprocess.run(["soffice", "--headless", f"-env:UserInstallation=file://{made}/profile", "--convert-to", target,
                            "--outdir", str(HERE), str(made / source)], check=True, capture_output=True, timeout=180)
    for name in ("handbook.doc", "handbook.rtf", "prices.xls", "faq.xls", "briefing.ppt"):
        print(name, (HERE / name).stat().st_size, "bytes")


if __name__ == "__main__":
    main()
