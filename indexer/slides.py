"""PowerPoint (.pptx) → Markdown-like text, read from the deck's XML (zipfile and lxml).

One section per slide, in the deck's order: a heading "Slide 7: <its title>" ("Slide 7" when it has
none), so a hit's heading path cites the slide a reader can turn to. Under it the slide's text as
PowerPoint shows it: text boxes and placeholders in the slide's reading order (the order of its
shape tree, groups entered), bulleted paragraphs as `- ` items indented by level, tables one line
per row with ` | ` between cells, then the speaker notes ("Speaker notes: …"), which often say
what the slide only hints at; a SmartArt's boxes as `- ` items. Left out: hidden slides (skipped
in the slide show, usually kept as spares), the slide number, date and footer placeholders (the
same on every slide), and text inside charts and pictures. Core properties give the title,
author, keywords (→ tags) and the modification time.
"""

from __future__ import annotations

import io
import posixpath
import re
import zipfile
from datetime import datetime
from typing import NamedTuple

from indexer.extract import (
    DAMAGED_PACKAGE, OLE_MAGIC, ExtractionError, Extracted, join_blocks, normalize_text, own_title, package_xml, parse_timestamp,
)

A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
P = "{http://schemas.openxmlformats.org/presentationml/2006/main}"
R = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
MC = "{http://schemas.openxmlformats.org/markup-compatibility/2006}"
DGM = "{http://schemas.openxmlformats.org/drawingml/2006/diagram}"
DIAGRAM_NODES = {None, "node", "asst"}  # a SmartArt's points that hold its text (the others: the document, transitions, layout)
PACKAGE_RELS = "{http://schemas.openxmlformats.org/package/2006/relationships}"
CORE = {"dc": "http://purl.org/dc/elements/1.1/", "cp": "http://schemas.openxmlformats.org/package/2006/metadata/core-properties",
        "dcterms": "http://purl.org/dc/terms/"}
TITLES = {"title", "ctrTitle"}
REPEATED = {"sldNum", "dt", "ftr", "hdr", "sldImg"}  # the same on every slide (or, in notes, the slide's picture)
BULLETED = {None, "body", "obj"}  # placeholders whose paragraphs the slide master bullets (a subtitle, a text box: only when they say)
FIELDS_LEFT_OUT = re.compile(r"slidenum|datetime", re.IGNORECASE)


def extract_pptx(raw: bytes, fallback_title: str) -> Extracted:
    if raw.startswith(OLE_MAGIC):  # saved with a password, or a PowerPoint 97–2003 file named .pptx
        from indexer.ppt import extract_ppt

        return extract_ppt(raw, fallback_title, kind="PowerPoint (.pptx) deck")
    try:
        deck = zipfile.ZipFile(io.BytesIO(raw))
        sections = [_slide_text(deck, part, number) for number, part in enumerate(_slide_parts(deck), 1)]
        core = package_xml(deck, "docProps/core.xml") if "docProps/core.xml" in deck.NameToInfo else None
    except DAMAGED_PACKAGE as exc:
        raise ExtractionError(f"not a readable PowerPoint (.pptx) deck ({type(exc).__name__}: {exc})") from None
    first_title = next((s.title for s in sections if s.title), "")
    title, author, keywords, modified = _core_properties(core)
    return Extracted(
        title=own_title(title) or first_title or fallback_title,
        text=normalize_text("\n\n".join(s.text for s in sections if s.text)),
        authors=(author,) if author else (),
        tags=tuple(t.strip() for t in re.split(r"[,;]", keywords) if t.strip()),
        updated_at=modified,
    )


class _Slide(NamedTuple):
    title: str
    text: str


def _slide_parts(deck: zipfile.ZipFile) -> list[str]:
    """The slides' part names in the deck's order."""
    presentation = package_xml(deck, "ppt/presentation.xml")
    targets = _relationships(deck, "ppt/presentation.xml")
    id_list = presentation.find(f"{P}sldIdLst")
    return [targets[slide.get(f"{R}id")][0] for slide in (id_list if id_list is not None else ())]


def _slide_text(deck: zipfile.ZipFile, part: str, number: int) -> _Slide:
    """A slide's section; an empty one for a hidden slide (which keeps its number, as in PowerPoint)."""
    slide = package_xml(deck, part)
    if slide.get("show", "1") in ("0", "false"):
        return _Slide("", "")
    targets = _relationships(deck, part)
    title, blocks = _shapes_text(slide.find(f"{P}cSld/{P}spTree"), diagram=lambda rel: _diagram_text(deck, targets.get(rel, ("", ""))[0]))
    notes_part = next((target for target, kind in targets.values() if kind.endswith("/notesSlide")), None)
    notes: list[str] = []
    if notes_part and notes_part in deck.NameToInfo:
        _, notes = _shapes_text(package_xml(deck, notes_part).find(f"{P}cSld/{P}spTree"), bullets=False)
    return _Slide(title, slide_section(number, title, blocks, notes))


def empty_deck_reason(raw: bytes) -> str:
    """Why a deck gave no text, for its FILE_EXTRACTION_EMPTY warning: "no text found" said nothing
    to the owner of a deck whose slides were saved as pictures."""
    try:
        deck = zipfile.ZipFile(io.BytesIO(raw))
        slides = [package_xml(deck, part) for part in _slide_parts(deck)]
    except DAMAGED_PACKAGE:
        return "no text found"
    pictures = sum(1 for slide in slides for _ in slide.iter(f"{P}pic"))
    if not slides:
        return "no slides"
    if not pictures:
        return f"no text on its {len(slides)} slide(s)"
    return (f"no text on its {len(slides)} slide(s), only {pictures} picture(s) (slides saved as images?): "
            "put the words in text boxes, or export it as PDF and run OCR on it, to index it")


def slide_section(number: int, title: str, blocks: list[str], notes: list[str]) -> str:
    """A slide as a section of its deck's text (a .pptx, an .odp): "# Slide 7: Pricing", its blocks,
    "Speaker notes: …"; "" for a slide with no text."""
    if notes := " ".join(" ".join(notes).split()):
        blocks = [*blocks, f"Speaker notes: {notes}"]
    if not title and not blocks:
        return ""
    return "\n\n".join([f"# Slide {number}: {title}" if title else f"# Slide {number}", *blocks])


def _shapes_text(tree, bullets: bool = True, diagram=None) -> tuple[str, list[str]]:
    """A shape tree's title (its title placeholder's text) and its other text, a block per shape;
    `diagram` gives a SmartArt's text from its data part's relationship id."""
    title, blocks = "", []
    if tree is None:
        return title, blocks
    for shape in tree:
        if shape.tag in (f"{P}grpSp", f"{MC}AlternateContent"):
            if shape.tag == f"{MC}AlternateContent":  # newer markup and a fallback for older readers: the first, once
                shape = next(iter(shape), None)
            inner_title, inner = _shapes_text(shape, bullets, diagram)
            title, blocks = title or inner_title, blocks + inner
        elif shape.tag == f"{P}sp":
            placeholder = shape.find(f"{P}nvSpPr/{P}nvPr/{P}ph")
            kind = placeholder.get("type") if placeholder is not None else None
            body = shape.find(f"{P}txBody")
            if body is None or kind in REPEATED:
                continue
            if kind in TITLES and not title:
                title = " ".join(" ".join(_paragraph_text(p) for p in body.iter(f"{A}p")).split())
                continue
            bulleted = bullets and placeholder is not None and kind in BULLETED
            if text := _text_frame(body, bulleted):
                blocks.append(text)
        elif shape.tag == f"{P}graphicFrame":
            for table in shape.iter(f"{A}tbl"):
                if rows := _table_rows(table):
                    blocks.append(rows)
            for smartart in shape.iter(f"{DGM}relIds"):
                if diagram is not None and (text := diagram(smartart.get(f"{R}dm"))):
                    blocks.append(text)
    return title, blocks


def _text_frame(body, bulleted: bool) -> str:
    """A text frame's paragraphs: `- ` items (indented by level) where PowerPoint shows a bullet."""
    lines = []
    for paragraph in body.iter(f"{A}p"):
        text = " ".join(_paragraph_text(paragraph).split())
        if not text:
            continue
        properties = paragraph.find(f"{A}pPr")
        if properties is not None and properties.find(f"{A}buNone") is not None:
            bullet = False
        else:
            bullet = bulleted or (properties is not None and (properties.find(f"{A}buChar") is not None or properties.find(f"{A}buAutoNum") is not None))
        level = int(properties.get("lvl", "0")) if properties is not None and properties.get("lvl", "0").isdigit() else 0
        lines.append(("  " * level + "- " + text) if bullet else text)
    return join_blocks(lines)  # list items stay one list; other paragraphs are blocks of their own


def _paragraph_text(paragraph) -> str:
    out = []
    for child in paragraph:
        if child.tag == f"{A}r":
            out.append("".join(t.text or "" for t in child.iter(f"{A}t")))
        elif child.tag == f"{A}fld" and not FIELDS_LEFT_OUT.match(child.get("type") or ""):
            out.append("".join(t.text or "" for t in child.iter(f"{A}t")))
        elif child.tag == f"{A}br":
            out.append(" ")
    return "".join(out)


def _table_rows(table) -> str:
    rows = []
    for row in table.iter(f"{A}tr"):
        cells = [" ".join(" ".join(_paragraph_text(p) for p in cell.iter(f"{A}p")).split())
                 for cell in row.iter(f"{A}tc") if cell.get("hMerge") not in ("1", "true") and cell.get("vMerge") not in ("1", "true")]
        if any(cells):
            rows.append(" | ".join(cells))
    return "\n".join(rows)


def _diagram_text(deck: zipfile.ZipFile, target: str) -> str:
    """A SmartArt's text, a `- ` item per box, from its data part `target` (the drawing PowerPoint
    also writes holds the same text laid out, and is not read)."""
    if target not in deck.NameToInfo:
        return ""
    items = []
    for point in package_xml(deck, target).iter(f"{DGM}pt"):
        body = point.find(f"{DGM}t")
        if point.get("type") in DIAGRAM_NODES and body is not None:
            if text := " ".join(" ".join(_paragraph_text(p) for p in body.iter(f"{A}p")).split()):
                items.append(f"- {text}")
    return "\n".join(items)


def _relationships(deck: zipfile.ZipFile, part: str) -> dict[str, tuple[str, str]]:
    """A part's relationships: id → (the part it targets, the relationship's type); external ones left out."""
    folder, name = posixpath.split(part)
    rels = f"{folder}/_rels/{name}.rels"
    if rels not in deck.NameToInfo:
        return {}
    out = {}
    for rel in package_xml(deck, rels).iter(f"{PACKAGE_RELS}Relationship"):
        if rel.get("TargetMode") == "External":
            continue
        target = rel.get("Target", "")
        target = target.lstrip("/") if target.startswith("/") else posixpath.normpath(posixpath.join(folder, target))
        out[rel.get("Id")] = (target, rel.get("Type", ""))
    return out


def _core_properties(core) -> tuple[str, str, str, datetime | None]:
    """Title, author, keywords and modification time of a deck's docProps/core.xml."""
    if core is None:
        return "", "", "", None

    def text(path: str) -> str:
        found = core.find(path, CORE)
        return " ".join((found.text or "").split()) if found is not None else ""

    modified = parse_timestamp(text("dcterms:modified")) or parse_timestamp(text("dcterms:created"))
    return text("dc:title"), text("dc:creator"), text("cp:keywords"), modified
