"""PDFs made from known text, in the layouts help sites publish: one column with running headers
and footers, two columns, tables, an outline, lines broken with hyphens; plus an encrypted and a
scanned (image-only) one. The tests check extraction against the text they were made from, and
bench/pdf_extraction.py scores character-level F1 over a generated set.

A document is a list of blocks: ("h1" | "h2" | "h3", text), ("p", text), ("table", [[cell, …], …]),
("pagebreak", None). `make_pdf` returns, for every block, the page (1-based) it was drawn on
(None for one split across pages or columns).
"""

from __future__ import annotations

import io
from pathlib import Path

HEADER = "Acme Support Handbook"
FOOTER = "Internal use only"
LAYOUTS = ("single", "two_columns", "manual")


def make_pdf(path: Path, blocks: list[tuple], layout: str = "single", title: str | None = None, author: str | None = None,
             running: bool = True, outline: bool = False) -> list[int]:
    """Write `blocks` as a PDF at `path`; returns the page each block starts on.

    single / two_columns: laid out by ReportLab's platypus (headings larger and bold, tables
    gridded); manual: lines drawn one by one, long words broken at line ends with a hyphen.
    `running` adds a header line, a footer line and "Page N" to every page; `outline` adds a
    bookmark per heading, at the heading's level."""
    if layout == "manual":
        return _manual(path, blocks, title, author, running)
    from reportlab.lib import colors
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import getSampleStyleSheet
    from reportlab.platypus import BaseDocTemplate, Frame, PageBreak, PageTemplate, Paragraph, Spacer, Table, TableStyle

    styles = getSampleStyleSheet()
    style = {"h1": styles["Heading1"], "h2": styles["Heading2"], "h3": styles["Heading3"], "p": styles["BodyText"]}
    pages: dict[int, int] = {}

    class Doc(BaseDocTemplate):
        def afterFlowable(self, flowable):
            block = getattr(flowable, "block", None)
            if block is None:
                return
            pages[block] = self.page
            kind, text = blocks[block]
            if outline and kind in ("h1", "h2", "h3"):
                key = f"b{block}"
                self.canv.bookmarkPage(key)
                self.canv.addOutlineEntry(text, key, level=int(kind[1]) - 1)

    width, height = A4
    margin = 60
    doc = Doc(str(path), pagesize=A4, leftMargin=margin, rightMargin=margin, topMargin=margin, bottomMargin=margin,
              title=title or "", author=author or "")
    if layout == "two_columns":
        gap = 18
        column = (doc.width - gap) / 2
        frames = [Frame(doc.leftMargin, doc.bottomMargin, column, doc.height, id="left"),
                  Frame(doc.leftMargin + column + gap, doc.bottomMargin, column, doc.height, id="right")]
    else:
        frames = [Frame(doc.leftMargin, doc.bottomMargin, doc.width, doc.height, id="body")]

    def decorate(canvas, doc):
        if running:
            canvas.saveState()
            canvas.setFont("Helvetica", 8)
            canvas.drawString(margin, height - 35, HEADER)
            canvas.drawString(margin, 30, FOOTER)
            canvas.drawRightString(width - margin, 30, f"Page {doc.page}")
            canvas.restoreState()

    doc.addPageTemplates([PageTemplate(id="page", frames=frames, onPage=decorate)])
    story = []
    for i, (kind, content) in enumerate(blocks):
        if kind == "pagebreak":
            story.append(PageBreak())
            continue
        if kind == "table":
            flowable = Table(content, hAlign="LEFT")
            flowable.setStyle(TableStyle([("GRID", (0, 0), (-1, -1), 0.5, colors.grey), ("FONTSIZE", (0, 0), (-1, -1), 9)]))
        else:
            flowable = Paragraph(_escape(content), style[kind])
        flowable.block = i
        story += [flowable, Spacer(1, 4)]
    doc.build(story)
    return [pages.get(i) for i in range(len(blocks))]


def _manual(path: Path, blocks: list[tuple], title: str | None, author: str | None, running: bool) -> list[int]:
    from reportlab.lib.pagesizes import LETTER
    from reportlab.pdfgen.canvas import Canvas

    canvas = Canvas(str(path), pagesize=LETTER)
    canvas.setTitle(title or "")
    canvas.setAuthor(author or "")
    width, height = LETTER
    top, bottom, left = height - 72, 72, 72
    y = top
    page = 1
    pages: list[int] = []

    def new_page():
        nonlocal y, page
        if running:
            canvas.setFont("Times-Roman", 8)
            canvas.drawCentredString(width / 2, height - 40, HEADER)
            canvas.drawCentredString(width / 2, 40, str(page))
        canvas.showPage()
        page += 1
        y = top

    for kind, content in blocks:
        if kind == "pagebreak":
            new_page()
            pages.append(page)
            continue
        if kind == "table":
            content = "   ".join("   ".join(row) for row in content)
            kind = "p"
        size = {"h1": 20, "h2": 15, "h3": 12.5}.get(kind, 10.5)
        lines = [content] if kind != "p" else _hyphenated(content, 82)
        if y - size * 1.4 * min(len(lines), 2) < bottom:
            new_page()
        pages.append(page)
        for line in lines:
            if y - size * 1.4 < bottom:
                new_page()
            canvas.setFont("Times-Bold" if kind != "p" else "Times-Roman", size)
            canvas.drawString(left, y - size, line)
            y -= size * 1.4
        y -= 10
    new_page()
    canvas.save()
    return pages


def _hyphenated(text: str, width: int) -> list[str]:
    """Lines of at most about `width` characters; a word of 8+ letters that would cross the end of
    a line is broken there with a hyphen, as typesetters do."""
    lines, line = [], ""
    for word in text.split():
        candidate = f"{line} {word}".strip()
        if len(candidate) <= width:
            line = candidate
            continue
        room = width - len(line) - 2
        if word.isalpha() and len(word) >= 8 and room >= 4 and len(word) - room >= 4:
            lines.append(f"{line} {word[:room]}-")
            line = word[room:]
        else:
            lines.append(line)
            line = word
    return lines + [line] if line else lines


def encrypted_pdf(path: Path, text: str = "A secret paragraph.", password: str = "hunter2") -> None:
    from reportlab.lib import pdfencrypt
    from reportlab.pdfgen.canvas import Canvas

    canvas = Canvas(str(path), encrypt=pdfencrypt.StandardEncryption(password, canPrint=0))
    canvas.drawString(72, 720, text)
    canvas.save()


def scanned_pdf(path: Path, pages: int = 2) -> None:
    """Pages that are only pictures of text, as a scanner makes them: no text layer."""
    from PIL import Image, ImageDraw
    from reportlab.lib.utils import ImageReader
    from reportlab.pdfgen.canvas import Canvas

    canvas = Canvas(str(path))
    for n in range(pages):
        image = Image.new("L", (600, 800), 255)
        draw = ImageDraw.Draw(image)
        for row in range(20):
            draw.text((40, 40 + row * 30), f"Scanned line {row} of page {n + 1}", fill=0)
        buffer = io.BytesIO()
        image.save(buffer, format="PNG")
        buffer.seek(0)
        canvas.drawImage(ImageReader(buffer), 0, 0, width=595, height=842)
        canvas.showPage()
    canvas.save()


def source_text(blocks: list[tuple]) -> str:
    """The text a perfect extractor finds: every block's words in order, table cells row by row."""
    parts = []
    for kind, content in blocks:
        if kind == "pagebreak":
            continue
        parts.append(" ".join(" ".join(row) for row in content) if kind == "table" else content)
    return " ".join(" ".join(parts).split())


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
