"""Word (.docx) → Markdown-like text, by python-docx (MIT).

Body paragraphs and tables in document order. Paragraphs styled Heading 1–6 become `#`-headings
(the chunker's heading_path), list paragraphs `- ` items indented by level, tables one line per
row with ` | ` between cells. Core properties give the title, author, keywords (→ tags) and the
modification time. Text is read as Word shows it with tracked changes accepted: insertions count,
deletions and moved-away text do not, nor does text formatted hidden (Font → Hidden), which Word
neither shows nor prints and writers use for notes.
"""

from __future__ import annotations

import io
import re
from datetime import timezone

from indexer.extract import DAMAGED_PACKAGE, OLE_MAGIC, ExtractionError, Extracted, join_blocks, normalize_text, own_title

HEADING_STYLE = re.compile(r"^heading\s*([1-6])$", re.IGNORECASE)
W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
NOT_SHOWN = (f"{W}del", f"{W}moveFrom", f"{W}txbxContent")  # deleted, moved away; a text box's own paragraphs are not this one's
OFF = {"0", "false", "off"}


# The main part of a Word document, and of its macro-enabled and template forms (.docm, .dotx,
# .dotm): the same XML, which python-docx's Document() refuses under any but the first name.
WORD_MAIN_PARTS = (
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml",
    "application/vnd.ms-word.document.macroEnabled.main+xml",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.template.main+xml",
    "application/vnd.ms-word.template.macroEnabledTemplate.main+xml",
)


def extract_docx(raw: bytes, fallback_title: str) -> Extracted:
    from docx.opc.exceptions import PackageNotFoundError

    if raw.startswith(OLE_MAGIC):  # saved with a password, or a Word 97–2003 file named .docx
        from indexer.worddoc import extract_doc

        return extract_doc(raw, fallback_title, kind="Word (.docx) document")
    try:
        return _extracted(_open_docx(raw), fallback_title)
    except (PackageNotFoundError, AttributeError, TypeError, *DAMAGED_PACKAGE) as exc:  # python-docx's objects over damaged parts
        raise ExtractionError(f"not a readable Word (.docx) document ({type(exc).__name__}: {exc})") from None


def _open_docx(raw: bytes):
    """python-docx's Document of a Word file in any of its forms (WORD_MAIN_PARTS)."""
    from docx.opc.part import PartFactory
    from docx.package import Package
    from docx.parts.document import DocumentPart

    for kind in WORD_MAIN_PARTS:
        PartFactory.part_type_for.setdefault(kind, DocumentPart)
    part = Package.open(io.BytesIO(raw)).main_document_part
    if part.content_type not in WORD_MAIN_PARTS:
        raise ValueError(f"its main part is {part.content_type}, not a Word document's")
    return part.document


def _extracted(document, fallback_title: str) -> Extracted:
    parts: list[str] = []
    first_heading = None
    for item in document.iter_inner_content():
        if hasattr(item, "rows"):
            rows = [" | ".join(" ".join(" ".join(map(_shown_text, cell.paragraphs)).split()) for cell in _unique_cells(row)) for row in item.rows]
            parts.append("\n".join(r for r in rows if r.strip(" |")))
            continue
        text = " ".join(_shown_text(item).split())
        if not text:
            continue
        style = (item.style.name if item.style is not None else "") or ""
        heading = HEADING_STYLE.match(style)
        if heading or style.lower() == "title":
            level = int(heading.group(1)) if heading else 1
            first_heading = first_heading or text
            parts.append("#" * level + " " + text)
        elif _list_level(item) is not None:
            parts.append("  " * _list_level(item) + "- " + text)
        else:
            parts.append(text)
    props = document.core_properties
    tags = tuple(t.strip() for t in re.split(r"[,;]", props.keywords or "") if t.strip())
    modified = props.modified or props.created
    if modified is not None and modified.tzinfo is None:
        modified = modified.replace(tzinfo=timezone.utc)
    return Extracted(
        title=own_title(props.title) or first_heading or fallback_title,
        text=normalize_text(join_blocks(parts)),
        authors=((props.author or "").strip(),) if (props.author or "").strip() else (),
        tags=tags,
        updated_at=modified,
    )


def _shown_text(paragraph) -> str:
    """A paragraph's text as Word shows it with tracked changes accepted. (python-docx's `text`
    reads only the paragraph's own runs: an insertion not yet accepted was lost, hidden text kept.)"""
    out: list[str] = []
    for run in paragraph._p.iter(f"{W}r"):
        if _hidden(run) or any(True for _ in run.iterancestors(*NOT_SHOWN)):
            continue
        for child in run:
            if child.tag == f"{W}t":
                out.append(child.text or "")
            elif child.tag in (f"{W}tab", f"{W}br", f"{W}cr"):
                out.append(" ")
            elif child.tag == f"{W}noBreakHyphen":
                out.append("-")
    return "".join(out)


def _hidden(run) -> bool:
    properties = run.find(f"{W}rPr")
    vanish = properties.find(f"{W}vanish") if properties is not None else None
    return vanish is not None and vanish.get(f"{W}val", "true").lower() not in OFF


def _list_level(paragraph) -> int | None:
    """0-based nesting of a list paragraph (numbering properties or a List style), None otherwise."""
    properties = paragraph._p.pPr
    numbering = properties.numPr if properties is not None else None
    if numbering is not None:
        level = numbering.ilvl
        return int(level.val) if level is not None else 0
    style = (paragraph.style.name if paragraph.style is not None else "") or ""
    if style.lower().startswith("list"):
        digits = re.findall(r"\d+", style)
        return int(digits[0]) - 1 if digits else 0
    return None


def _unique_cells(row):
    """A row's cells, a merged cell once (python-docx repeats it for every grid column it spans)."""
    seen = []
    for cell in row.cells:
        if not any(cell._tc is other._tc for other in seen):
            seen.append(cell)
    return seen
