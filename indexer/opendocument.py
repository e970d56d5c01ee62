"""OpenDocument text (.odt), spreadsheets (.ods) and presentations (.odp) → text, read from the
package's XML (zipfile and lxml).

What LibreOffice writes. A text document as Writer shows it with tracked changes accepted (the
deleted text is kept apart from the body, and left out), without comments, footnotes, hidden text
or generated indexes (a table of contents repeats the headings): headings (their outline level)
become `#`-headings, lists `- ` items indented by level, tables a row per line with ` | ` between
cells, text frames' paragraphs blocks of their own. A spreadsheet is read as an .xlsx is
(indexer/sheets.py: a row per line with the columns' names), with each cell's text as Calc shows
it — number formats applied, since the file keeps the shown text. Hidden sheets are left out. A
presentation is read as a .pptx is (indexer/slides.py: a section per slide, "Slide 7: Pricing",
speaker notes in; hidden slides, page numbers, dates and footers out). The meta part gives the
title, author, keywords (→ tags) and the modification time.
"""

from __future__ import annotations

import io
import zipfile
from datetime import datetime

from indexer.extract import DAMAGED_PACKAGE, ExtractionError, Extracted, join_blocks, normalize_text, own_title, package_xml, parse_timestamp
from indexer.sheets import Workbook, workbook_extracted
from indexer.slides import slide_section

OFFICE = "{urn:oasis:names:tc:opendocument:xmlns:office:1.0}"
TEXT = "{urn:oasis:names:tc:opendocument:xmlns:text:1.0}"
TABLE = "{urn:oasis:names:tc:opendocument:xmlns:table:1.0}"
DRAW = "{urn:oasis:names:tc:opendocument:xmlns:drawing:1.0}"
STYLE = "{urn:oasis:names:tc:opendocument:xmlns:style:1.0}"
META = "{urn:oasis:names:tc:opendocument:xmlns:meta:1.0}"
DC = "{http://purl.org/dc/elements/1.1/}"
PRESENTATION = "{urn:oasis:names:tc:opendocument:xmlns:presentation:1.0}"
REPEATED_ON_SLIDES = {"page-number", "date-time", "footer", "header", "page"}  # the same on every slide; "page": the notes' slide picture
# Not the body's own text: tracked deletions, comments, footnotes, hidden text, generated indexes.
NOT_SHOWN = {f"{TEXT}tracked-changes", f"{OFFICE}annotation", f"{TEXT}note", f"{TEXT}hidden-text", f"{TEXT}hidden-paragraph",
             f"{TEXT}table-of-content", f"{TEXT}alphabetical-index", f"{TEXT}illustration-index", f"{TEXT}table-index",
             f"{TEXT}object-index", f"{TEXT}user-index", f"{TEXT}bibliography", f"{TEXT}sequence-decls", f"{TEXT}variable-decls"}
MAX_REPEATS = 1000  # a row or cell repeated more than this is a formatted empty range, not content


def extract_odt(raw: bytes, fallback_title: str) -> Extracted:
    kind = "OpenDocument text (.odt) document"
    content, meta = _package(raw, kind)
    try:
        blocks = _blocks(content.find(f"{OFFICE}body/{OFFICE}text"))
    except DAMAGED_PACKAGE as exc:
        raise ExtractionError(f"not a readable {kind} ({type(exc).__name__}: {exc})") from None
    headings = [b.lstrip("#").strip() for b in blocks if b.startswith("# ")]
    title, author, keywords, modified = meta
    return Extracted(
        title=own_title(title) or (headings[0] if headings else "") or fallback_title,
        text=normalize_text(join_blocks(blocks)),
        authors=(author,) if author else (),
        tags=keywords,
        updated_at=modified,
    )


def extract_ods(raw: bytes, fallback_title: str) -> Extracted:
    kind = "OpenDocument spreadsheet (.ods)"
    content, (title, author, keywords, modified) = _package(raw, kind)
    hidden = _hidden_styles(content, "table", f"{STYLE}table-properties", f"{TABLE}display", "false")
    try:
        sheets = [(table.get(f"{TABLE}name", ""), _table_rows(table))
                  for table in content.iterfind(f"{OFFICE}body/{OFFICE}spreadsheet/{TABLE}table") if table.get(f"{TABLE}style-name") not in hidden]
    except DAMAGED_PACKAGE as exc:
        raise ExtractionError(f"not a readable {kind} ({type(exc).__name__}: {exc})") from None
    return workbook_extracted(Workbook(sheets, title, author, ", ".join(keywords), modified), fallback_title)


def extract_odp(raw: bytes, fallback_title: str) -> Extracted:
    kind = "OpenDocument presentation (.odp)"
    content, (title, author, keywords, modified) = _package(raw, kind)
    hidden = _hidden_styles(content, "drawing-page", f"{STYLE}drawing-page-properties", f"{PRESENTATION}visibility", "hidden")
    try:
        pages = list(content.iterfind(f"{OFFICE}body/{OFFICE}presentation/{DRAW}page"))
        slides = [("", "") if page.get(f"{DRAW}style-name") in hidden else _slide(page, number) for number, page in enumerate(pages, 1)]
    except DAMAGED_PACKAGE as exc:
        raise ExtractionError(f"not a readable {kind} ({type(exc).__name__}: {exc})") from None
    return Extracted(
        title=own_title(title) or next((t for t, _ in slides if t), "") or fallback_title,
        text=normalize_text("\n\n".join(text for _, text in slides if text)),
        authors=(author,) if author else (),
        tags=keywords,
        updated_at=modified,
    )


def _slide(page, number: int) -> tuple[str, str]:
    """A slide's title and its section (indexer/slides.py `slide_section`)."""
    title, blocks, notes = "", [], []
    for shape in page:
        kind = shape.get(f"{PRESENTATION}class")
        if shape.tag == f"{PRESENTATION}notes":
            notes = [b for frame in shape.iter(f"{DRAW}frame") if frame.get(f"{PRESENTATION}class") == "notes" for b in _blocks(frame)]
        elif kind == "title" and not title:
            title = " ".join(_blocks(shape))
        elif kind not in REPEATED_ON_SLIDES and (text := join_blocks(_blocks([shape]))):
            blocks.append(text)
    return title, slide_section(number, title, blocks, notes)


def _package(raw: bytes, kind: str):
    """content.xml and the meta part's (title, author, keywords, modified) of an OpenDocument file."""
    try:
        package = zipfile.ZipFile(io.BytesIO(raw))
        encrypted = "META-INF/manifest.xml" in package.NameToInfo and b"encryption-data" in package.read("META-INF/manifest.xml")
        if not encrypted:
            content = package_xml(package, "content.xml")
            meta = _meta(package_xml(package, "meta.xml") if "meta.xml" in package.NameToInfo else None)
    except DAMAGED_PACKAGE as exc:
        raise ExtractionError(f"not a readable {kind} ({type(exc).__name__}: {exc})") from None
    if encrypted:  # its parts are ciphertext
        raise ExtractionError(f"not a readable {kind}: it is saved with a password; save it without one to index it")
    return content, meta


def _meta(meta) -> tuple[str, str, tuple[str, ...], datetime | None]:
    if meta is None:
        return "", "", (), None
    found = meta.find(f"{OFFICE}meta")
    if found is None:
        return "", "", (), None

    def text(tag: str) -> str:
        element = found.find(tag)
        return " ".join((element.text or "").split()) if element is not None else ""

    keywords = tuple(k for k in (" ".join((e.text or "").split()) for e in found.iterfind(f"{META}keyword")) if k)
    modified = parse_timestamp(text(f"{DC}date")) or parse_timestamp(text(f"{META}creation-date"))
    return text(f"{DC}title"), text(f"{META}initial-creator") or text(f"{DC}creator"), keywords, modified


def _blocks(container, depth: int = 0) -> list[str]:
    """A text body's blocks in order: headings, paragraphs, list items, table rows."""
    out = []
    for child in container if container is not None else ():
        if child.tag in NOT_SHOWN:
            continue
        if child.tag == f"{TEXT}h":
            level = child.get(f"{TEXT}outline-level", "1")
            if text := _inline(child):
                out.append("#" * min(max(int(level) if level.isdigit() else 1, 1), 6) + " " + text)
        elif child.tag == f"{TEXT}p":
            if text := _inline(child):
                out.append(text)
            for frame in child.iter(f"{DRAW}text-box"):  # a frame anchored in the paragraph: its own paragraphs
                out.extend(_blocks(frame, depth))
        elif child.tag == f"{TEXT}list":
            for item in child:
                if item.tag in (f"{TEXT}list-item", f"{TEXT}list-header"):
                    out.extend(_list_item(item, depth))
        elif child.tag == f"{TABLE}table":
            rows = [" | ".join(" ".join(c.split()) for c in row) for row in _table_rows(child)]
            if rows:
                out.append("\n".join(rows))
        elif child.tag in (f"{TEXT}section", f"{DRAW}frame", f"{DRAW}text-box", f"{DRAW}custom-shape", f"{DRAW}g", f"{TABLE}table-header-rows"):
            out.extend(_blocks(child, depth))
    return out


def _list_item(item, depth: int) -> list[str]:
    out = []
    for child in item:
        if child.tag in (f"{TEXT}p", f"{TEXT}h") and (text := _inline(child)):
            out.append("  " * depth + "- " + text)
        elif child.tag == f"{TEXT}list":
            for inner in child:
                out.extend(_list_item(inner, depth + 1))
    return out


def _inline(element) -> str:
    """A paragraph's text as shown: spans and links entered, runs of spaces (text:s) kept, notes,
    comments, frames and hidden text left out."""
    parts = [element.text or ""]
    for child in element:
        if child.tag == f"{TEXT}s":
            count = child.get(f"{TEXT}c", "1")
            parts.append(" " * (int(count) if count.isdigit() else 1))
        elif child.tag in (f"{TEXT}tab", f"{TEXT}line-break"):
            parts.append(" ")
        elif child.tag not in NOT_SHOWN and child.tag != f"{DRAW}frame":
            parts.append(_inline(child))
        parts.append(child.tail or "")
    return " ".join("".join(parts).split())


def _table_rows(table) -> list[list[str]]:
    """A table's rows as the texts of their cells; repeated rows and cells (how ODF writes a run of
    equal ones) repeated, formatted empty ranges not; trailing empty cells and empty rows dropped."""
    rows = []
    for row in table.iter(f"{TABLE}table-row"):
        cells = []
        for cell in row:
            if cell.tag not in (f"{TABLE}table-cell", f"{TABLE}covered-table-cell"):
                continue
            text = _cell_text(cell) if cell.tag == f"{TABLE}table-cell" else ""
            repeat = int(cell.get(f"{TABLE}number-columns-repeated", "1") or 1)
            cells.extend([text] * (repeat if text and repeat <= MAX_REPEATS else 1 if text else min(repeat, MAX_REPEATS)))
        while cells and not cells[-1]:
            cells.pop()
        if cells:
            repeat = int(row.get(f"{TABLE}number-rows-repeated", "1") or 1)
            rows.extend([cells] * min(repeat, MAX_REPEATS))
    return rows


def _cell_text(cell) -> str:
    """The text Calc shows (its paragraphs); the bare value when a program wrote none."""
    shown = "\n".join(_inline(p) for p in cell.iter(f"{TEXT}p"))
    if shown or cell.get(f"{OFFICE}value-type") is None:
        return shown
    for value in ("value", "date-value", "time-value", "boolean-value", "string-value"):
        if cell.get(f"{OFFICE}{value}") is not None:
            return cell.get(f"{OFFICE}{value}")
    return ""


def _hidden_styles(content, family: str, properties: str, attribute: str, value: str) -> set[str]:
    """The names of the automatic styles that hide what wears them: a sheet (Calc's Sheet → Hide:
    table-properties table:display="false"), a slide (Impress's Hide Slide: drawing-page-properties
    presentation:visibility="hidden")."""
    hidden = set()
    for style in content.iterfind(f"{OFFICE}automatic-styles/{STYLE}style"):
        found = style.find(properties)
        if style.get(f"{STYLE}family") == family and found is not None and found.get(attribute) == value:
            hidden.add(style.get(f"{STYLE}name"))
    return hidden
