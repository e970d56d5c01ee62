"""Word (.docx) files made with python-docx from the same blocks as tests/fakes/pdfs.py, plus
("li", text) / ("li2", text) list items (level 1 / 2) and ("edited", [(kind, text), …]) paragraphs
whose parts are plain (""), tracked insertions ("ins"), tracked deletions ("del") or hidden text
("hidden")."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path


def make_docx(path: Path, blocks: list[tuple], title: str | None = None, author: str | None = None,
              keywords: str | None = None, modified: datetime | None = None) -> None:
    from docx import Document

    document = Document()
    for kind, content in blocks:
        if kind in ("h1", "h2", "h3"):
            document.add_heading(content, level=int(kind[1]))
        elif kind == "p":
            document.add_paragraph(content)
        elif kind == "edited":
            _edited(document.add_paragraph(), content)
        elif kind in ("li", "li2"):
            document.add_paragraph(content, style="List Bullet" if kind == "li" else "List Bullet 2")
        elif kind == "table":
            table = document.add_table(rows=len(content), cols=len(content[0]))
            for r, row in enumerate(content):
                for c, cell in enumerate(row):
                    table.cell(r, c).text = cell
    props = document.core_properties
    props.title, props.author, props.keywords = title or "", author or "", keywords or ""
    if modified is not None:
        props.modified = modified
    document.save(str(path))


def _edited(paragraph, parts: list[tuple[str, str]]) -> None:
    """Runs as Word writes them with Track Changes on: <w:ins>/<w:del> around runs; hidden runs <w:vanish/>."""
    from docx.oxml import parse_xml

    w = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
    for i, (kind, text) in enumerate(parts):
        if kind in ("ins", "del"):
            tag = "w:t" if kind == "ins" else "w:delText"
            paragraph._p.append(parse_xml(f'<w:{kind} {w} w:id="{i}" w:author="Ana" w:date="2026-11-02T09:00:00Z">'
                                          f'<w:r><{tag} xml:space="preserve">{text}</{tag}></w:r></w:{kind}>'))
        else:
            paragraph.add_run(text).font.hidden = kind == "hidden"
