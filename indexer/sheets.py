"""Excel workbooks → text: .xlsx by openpyxl (MIT), the older .xls (Excel 97–2003) by xlrd (BSD).
A price list, opening hours, a product table.

Cells read as Excel last calculated them (a formula's result, not its formula), dates as dates
(2026-11-02), whole numbers without ".0", percentages as percentages (30%); other number formats
are not applied (a price formatted "€#,##0.00" reads 12.5). Hidden sheets are left out, as are
rows with no value. A sheet whose first row names its columns (two or more texts; rows of a single
cell above it are a caption) is read a row per line as "Store: Lisbon; Hours: 9 to 21", so each
passage says what its numbers are; any other sheet a row per line with " | " between cells. A
workbook of several sheets gets a section per sheet headed with its name. Core properties give
the title, author, keywords (→ tags) and the modification time.
"""

from __future__ import annotations

import io
import re
import struct
import warnings
from datetime import date, datetime, time, timedelta, timezone
from typing import NamedTuple

from indexer.extract import DAMAGED_PACKAGE, OLE_MAGIC, ZIP_MAGIC, ExtractionError, Extracted, normalize_text, own_title
from indexer.ole import ole_properties, open_ole, stream


class Workbook(NamedTuple):
    sheets: list[tuple[str, list[list[str]]]]  # each visible sheet's name and its rows with a value, as cell texts
    title: str
    author: str
    keywords: str
    modified: datetime | None


def read_workbook(raw: bytes) -> Workbook:
    """The visible sheets of an .xlsx file and its properties; raises ExtractionError. An OLE file
    is read as an .xls: one saved with a password says so, an Excel 97–2003 file named .xlsx is read."""
    if raw.startswith(OLE_MAGIC):
        return read_xls(raw, kind="Excel (.xlsx) workbook")
    from openpyxl import load_workbook
    from openpyxl.utils.exceptions import InvalidFileException

    try:
        with warnings.catch_warnings():  # "Data Validation extension is not supported and will be removed": not ours to say
            warnings.simplefilter("ignore")
            book = load_workbook(io.BytesIO(raw), read_only=True, data_only=True)
            try:
                sheets = [(sheet.title, _rows(sheet)) for sheet in book.worksheets if sheet.sheet_state == "visible"]
            finally:
                book.close()
    except (InvalidFileException, TypeError, OSError, *DAMAGED_PACKAGE) as exc:
        raise ExtractionError(f"not a readable Excel (.xlsx) workbook ({type(exc).__name__}: {exc})") from None
    properties = book.properties
    modified = properties.modified or properties.created
    if modified is not None and modified.tzinfo is None:
        modified = modified.replace(tzinfo=timezone.utc)
    return Workbook(sheets, properties.title or "", (properties.creator or "").strip(), properties.keywords or "", modified)


def extract_xlsx(raw: bytes, fallback_title: str) -> Extracted:
    return workbook_extracted(read_workbook(raw), fallback_title)


def read_xls(raw: bytes, kind: str = "Excel 97–2003 (.xls) workbook") -> Workbook:
    """The visible sheets of an Excel 97–2003 (.xls) file and its properties; raises ExtractionError.
    An .xlsx under the old name is read as one."""
    if raw.startswith(ZIP_MAGIC):
        return read_workbook(raw)
    import xlrd
    from xlrd.compdoc import CompDocError

    ole = open_ole(raw, kind)
    try:
        properties = ole_properties(ole)
        # xlrd is given the workbook's stream, not the file: its own reader of the container
        # follows a damaged file's sector chain round in a circle for ever.
        biff = stream(ole, ("Workbook", "Book"), kind)
    finally:
        ole.close()
    try:
        book = xlrd.open_workbook(file_contents=biff, formatting_info=True, logfile=_NOWHERE)
        sheets = [(sheet.name, _xls_rows(book, sheet)) for sheet in book.sheets() if sheet.visibility == 0]
    except xlrd.XLRDError as exc:
        if "encrypted" in str(exc).lower():
            raise ExtractionError(f"not a readable {kind}: it is password-protected; save it without a password to index it") from None
        raise ExtractionError(f"not a readable {kind} ({exc})") from None
    except (CompDocError, *DAMAGED_PACKAGE, IndexError, AssertionError, struct.error, UnicodeDecodeError, LookupError, OverflowError, TypeError) as exc:
        raise ExtractionError(f"not a readable {kind} ({type(exc).__name__}: {exc})") from None
    return Workbook(sheets, properties.title, properties.author, properties.keywords, properties.modified)


def extract_xls(raw: bytes, fallback_title: str) -> Extracted:
    return workbook_extracted(read_xls(raw), fallback_title)


def _xls_rows(book, sheet) -> list[list[str]]:
    import xlrd

    rows = []
    for r in range(sheet.nrows):
        cells = []
        for cell in sheet.row(r):
            value = cell.value
            if cell.ctype == xlrd.XL_CELL_DATE:
                try:
                    value = xlrd.xldate.xldate_as_datetime(value, book.datemode)
                except (xlrd.xldate.XLDateError, OverflowError, ValueError):
                    pass  # a number formatted as a date that is none: its number
                if isinstance(value, datetime) and value.date() == date(1899, 12, 31) and value.time() != time(0):
                    value = value.time()  # a time of day without a date
            elif cell.ctype == xlrd.XL_CELL_BOOLEAN:
                value = bool(value)
            elif cell.ctype in (xlrd.XL_CELL_ERROR, xlrd.XL_CELL_EMPTY, xlrd.XL_CELL_BLANK):
                value = None
            elif cell.ctype == xlrd.XL_CELL_NUMBER and value == int(value) and abs(value) < 2**53:
                value = int(value)
            xf = book.xf_list[cell.xf_index] if cell.xf_index is not None and cell.xf_index < len(book.xf_list) else None
            number_format = book.format_map.get(xf.format_key) if xf is not None else None
            cells.append(cell_text(value, number_format.format_str if number_format is not None else ""))
        while cells and not cells[-1]:
            cells.pop()
        if cells:
            rows.append(cells)
    return rows


class _Nowhere:  # xlrd writes warnings about a file's oddities to a log file; none of them is the owner's to act on
    def write(self, text: str) -> int:
        return len(text)


_NOWHERE = _Nowhere()


def workbook_extracted(book: Workbook, fallback_title: str) -> Extracted:
    """A workbook's sheets as one document (an .xlsx, or an OpenDocument spreadsheet)."""
    sections = [(name, _sheet_text(rows)) for name, rows in book.sheets]
    sections = [(name, text) for name, text in sections if text]
    headed = len(sections) > 1
    text = "\n\n".join(f"# {' '.join(name.split())}\n\n{body}" if headed else body for name, body in sections)
    return Extracted(
        title=own_title(book.title) or fallback_title,
        text=normalize_text(text),
        authors=(book.author,) if book.author else (),
        tags=tuple(t.strip() for t in re.split(r"[,;]", book.keywords) if t.strip()),
        updated_at=book.modified,
    )


def cell_text(value, number_format: str = "") -> str:
    """A cell's value as text, as Excel shows it without its number format — except a percentage,
    which reads as one (0.3 formatted "0%" is "30%": a chatbot would take 0.3 for the number itself)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, (int, float)) and "%" in number_format.replace("\\%", "").replace('"%"', ""):
        return f"{value * 100:.12g}%"
    if isinstance(value, datetime):
        return value.date().isoformat() if value.time() == time(0) else value.isoformat(sep=" ", timespec="minutes")
    if isinstance(value, (date, time)):
        return value.isoformat()
    if isinstance(value, timedelta):  # a duration cell ([h]:mm)
        minutes = round(value.total_seconds() / 60)
        return f"{minutes // 60}:{minutes % 60:02d}"
    if isinstance(value, float):
        return f"{value:.15g}"
    return str(value).strip()


def _rows(sheet) -> list[list[str]]:
    rows = []
    sheet.reset_dimensions()  # the used range a file declares is not trusted: one that says A1 would cut the sheet to one cell
    for row in sheet.iter_rows():
        cells = [cell_text(cell.value, getattr(cell, "number_format", "") or "") for cell in row]
        while cells and not cells[-1]:
            cells.pop()
        if cells:
            rows.append(cells)
    return rows


def _sheet_text(rows: list[list[str]]) -> str:
    captions = []  # rows of one cell above the table ("Winter prices, valid from 2 January"): a caption, not the header
    while len(rows) > 1 and sum(1 for c in rows[0] if c) == 1:
        captions.append(" ".join(next(c for c in rows[0] if c).split()))
        rows = rows[1:]
    if not rows:
        return "\n".join(captions)
    header, body = rows[0], rows[1:]
    named = body and sum(1 for h in header if h) >= 2 and all(not _number(h) for h in header if h)
    lines = captions
    for row in body if named else rows:
        cells = [" ".join(c.split()) for c in row]
        if named:
            pairs = [(" ".join(header[i].split()) if i < len(header) else "", c) for i, c in enumerate(cells) if c]
            lines.append("; ".join(f"{name}: {value}" if name else value for name, value in pairs))
        else:
            lines.append(" | ".join(cells))
    return "\n".join(line for line in lines if line.strip(" |"))


def _number(text: str) -> bool:
    """A header cell that is a number or a date is data, not a column's name."""
    return bool(re.fullmatch(r"[-+]?[\d.,:\s]+|\d{4}-\d{2}-\d{2}.*", text))
