"""Excel (.xlsx) workbooks made with openpyxl: sheets of rows (texts, numbers, dates), some hidden,
with the properties and quirks of workbooks other programs write."""

from __future__ import annotations

from datetime import datetime


def make_xlsx(path, sheets: dict[str, list[list]], hidden: tuple[str, ...] = (), title: str | None = None,
              author: str | None = None, modified: datetime | None = None, used_range: str | None = None) -> None:
    """A cell given as (value, number format) is written with that format; `used_range`: the range each
    sheet declares it uses, as some programs write it wrong ("A1")."""
    from openpyxl import Workbook

    book = Workbook()
    book.remove(book.active)
    for name, rows in sheets.items():
        sheet = book.create_sheet(name)
        for row in rows:
            sheet.append([cell[0] if isinstance(cell, tuple) else cell for cell in row])
            for column, cell in enumerate(row, 1):
                if isinstance(cell, tuple):  # (value, number format), as "0%"
                    sheet.cell(sheet.max_row, column).number_format = cell[1]
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
