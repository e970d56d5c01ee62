"""PDF → text with headings and page numbers, by PDFium (pypdfium2: BSD-3 / Apache-2.0).

PDFium gives characters in content order with their boxes and font sizes, and marks line ends.
From those this module rebuilds what a reader sees:
- lines, then paragraphs (a new one where the spacing opens up, the font changes, or the text
  jumps back up the page — the next column); a line whose characters sit in separate cells
  (wide gaps) is a table row, kept on its own line with ` | ` between cells;
- headings: the PDF's outline (bookmarks) where it has one, else lines set larger than the body
  text, or bold and alone; levels follow the sizes, largest first;
- running headers and footers dropped: a line in the top or bottom margin that recurs (digits
  aside) on at least half the pages, and page-number lines ("7", "Page 7", "7 of 12");
- words broken across lines with a hyphen joined again, and a paragraph that runs onto the next
  page continued.

The text is Markdown-like (`## Heading`, blank lines between paragraphs) so the chunker follows
it; `pages[k]` is the character offset where page k + 1 begins. bench/README.md, "PDF extraction",
has the measured quality and speed, and why PDFium over pypdf.
"""

from __future__ import annotations

import re
import statistics
import threading
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone

from indexer.errors import ErrorCode
from indexer.extract import ExtractionError, Extracted, own_title

MARGIN = 0.09  # share of the page height at the top and bottom where running lines live
PAGE_NUMBER = re.compile(r"^(?:page|p\.|seite|página|pagina)?\s*[\divxlc]{1,5}\s*(?:(?:of|/|von|de|sur)\s*\d+)?$", re.IGNORECASE)
HEADING_RATIO = 1.12  # a line this much larger than the body text is a heading
MAX_HEADING_CHARS = 160
SENTENCE_END = tuple('.!?:;"”’)')
SOFT_HYPHEN = "\x02"  # PDFium's mark for a hyphen that breaks a word at the end of a line


@dataclass
class Line:
    text: str
    size: float
    bold: bool
    top: float
    bottom: float
    left: float
    cells: list[str] = field(default_factory=list)  # more than one: a table row

    @property
    def key(self) -> str:
        """What a running header or footer keeps from page to page."""
        return re.sub(r"\d+", "#", " ".join(self.text.lower().split()))


@dataclass
class Block:
    page: int
    lines: list[Line]
    heading: int = 0  # level, 0 for body text

    @property
    def table(self) -> bool:
        return all(len(line.cells) > 1 for line in self.lines)


def extract_pdf(raw: bytes, fallback_title: str) -> Extracted:
    """A PDF as a document: its text with headings, where each page begins, title, author and date."""
    pdf = read_pdf(raw)
    return Extracted(title=pdf.title or fallback_title, text=pdf.text, authors=pdf.authors, updated_at=pdf.updated_at,
                     metadata={"pages": pdf.page_count}, pages=pdf.pages)


@dataclass(frozen=True)
class PdfText:
    text: str
    pages: tuple[int, ...]  # character offset where each page begins
    page_count: int
    title: str | None
    authors: tuple[str, ...]
    updated_at: datetime | None


def read_pdf(raw: bytes) -> PdfText:
    with _PDFIUM:
        pages, outline, meta = _read_with_pdfium(raw)
    pages = _without_running_lines(pages)
    blocks = _headings(_blocks(pages), outline)
    text, offsets = _assemble(blocks, len(pages))
    title = own_title(meta.get("Title"))
    if not title:
        title = next((_line_text(b) for b in blocks if b.heading == 1), None) or next((_line_text(b) for b in blocks if b.heading), None)
    author = (meta.get("Author") or "").strip()
    return PdfText(text, offsets, len(pages), title, (author,) if author else (), _pdf_date(meta.get("ModDate") or meta.get("CreationDate")))


# PDFium is not thread-safe (pypdfium2 says so: one call at a time in a process). A crawl reads the
# files it fetches in its fetch threads, and two PDFs read at once killed the whole run with a
# segmentation fault, before any report: one PDF is read at a time.
_PDFIUM = threading.Lock()


def _read_with_pdfium(raw: bytes) -> tuple[list[list[Line]], dict[int, list[tuple[int, str]]], dict]:
    """A PDF's lines per page, its outline and its metadata, from PDFium (under _PDFIUM)."""
    import pypdfium2 as pdfium

    try:
        pdf = pdfium.PdfDocument(raw)
    except pdfium.PdfiumError as exc:
        if "password" in str(exc).lower():
            raise ExtractionError("the PDF is encrypted with a password; save an unprotected copy to index it", ErrorCode.PDF_ENCRYPTED) from None
        raise ExtractionError(f"not a readable PDF ({exc})") from None
    try:
        pages = [_page_lines(pdf, i) for i in range(len(pdf))]
        if not any(pages):
            raise ExtractionError(f"{len(pdf)} page(s) without a text layer (a scan?); run OCR on it to index it", ErrorCode.PDF_NO_TEXT, "warning")
        return pages, _outline(pdf), pdf.get_metadata_dict()
    finally:
        pdf.close()


def _page_lines(pdf, index: int) -> list[Line]:
    import pypdfium2 as pdfium

    try:
        return _lines(pdf[index])
    except pdfium.PdfiumError as exc:  # a damaged page: PDFium's own words, "Failed to load page."
        raise ExtractionError(f"not a readable PDF: page {index + 1} of {len(pdf)} is damaged ({exc})") from None


def _lines(page) -> list[Line]:
    """The page's lines in content order, from its characters."""
    import ctypes

    import pypdfium2.raw as raw

    textpage = page.get_textpage()
    height = page.get_height()
    handle = textpage.raw
    count = textpage.count_chars()
    text = textpage.get_text_range()
    if len(text) != count:  # characters outside the BMP: one index, two UTF-16 units
        text = "".join(chr(raw.FPDFText_GetUnicode(handle, i) or 0xFFFD) for i in range(count))
    text = text.replace("\ufffe", SOFT_HYPHEN)  # get_text_range reports PDFium's hyphen mark as U+FFFE
    lines: list[Line] = []
    chars: list[tuple] = []  # (char, size, left, right, bottom, top, index); size 0 for spaces
    left, right, bottom, top = ctypes.c_double(), ctypes.c_double(), ctypes.c_double(), ctypes.c_double()
    last = None  # the last inked character
    weight = lambda index: raw.FPDFText_GetFontWeight(handle, index)  # noqa: E731
    for i, char in enumerate(text):
        if char == "\n" or char == "\r":
            if char == "\n":
                _close_line(chars, lines, height, weight)
            continue
        if char.isspace():
            chars.append((" ", 0, 0, 0, 0, 0, i))
            continue
        raw.FPDFText_GetCharBox(handle, i, left, right, bottom, top)
        size = raw.FPDFText_GetFontSize(handle, i)
        if last is not None and (top.value < last[4] - 0.2 * last[1] or bottom.value > last[5] + 0.2 * last[1]):
            _close_line(chars, lines, height, weight)  # moved to another line without a line end (after a joined hyphen)
        last = (char, size, left.value, right.value, bottom.value, top.value, i)
        chars.append(last)
    _close_line(chars, lines, height, weight)
    textpage.close()
    page.close()
    return lines


def _close_line(chars: list, lines: list[Line], height: float, weight) -> None:
    """Turn the characters gathered since the last line end into a Line (cells split at wide gaps)."""
    inked = [c for c in chars if c[1]]
    if not inked:
        chars.clear()
        return
    size = statistics.median(c[1] for c in inked)
    cells, cell, previous_right = [], [], None
    for char, char_size, left, right, *_ in chars:
        if char_size and previous_right is not None and left - previous_right > 1.2 * size:
            cells.append("".join(cell))
            cell = []
        cell.append(char)
        if char_size:
            previous_right = right
    cells.append("".join(cell))
    cells = [" ".join(c.split()) for c in cells if c.strip()]
    cells = [c.replace(SOFT_HYPHEN + " ", SOFT_HYPHEN) for c in cells]
    cells = [c[:-1].replace(SOFT_HYPHEN, "") + c[-1] for c in cells]  # one inside a line: the break PDFium already joined
    samples = {inked[0][6], inked[len(inked) // 2][6], inked[-1][6]}
    bold = sum(weight(i) >= 600 for i in samples) * 2 > len(samples)
    lines.append(Line(" | ".join(cells), size, bold, max(c[5] for c in inked) / height, min(c[4] for c in inked) / height,
                      min(c[2] for c in inked), cells if len(cells) > 1 else []))
    chars.clear()


def _outline(pdf) -> dict[int, list[tuple[int, str]]]:
    """Bookmarks by page index: (level from 1, title)."""
    found: dict[int, list[tuple[int, str]]] = {}
    try:
        for item in pdf.get_toc():
            dest = item.get_dest()
            index = dest.get_index() if dest is not None else None
            title = " ".join((item.get_title() or "").split())
            if index is not None and title:
                found.setdefault(index, []).append((item.level + 1, title))
    except Exception:  # a damaged outline is no reason to lose the text
        return {}
    return found


def _without_running_lines(pages: list[list[Line]]) -> list[list[Line]]:
    """Drop headers, footers and page numbers: lines in the margins that recur or only number the page."""
    def marginal(line: Line) -> bool:
        return line.top > 1 - MARGIN or line.bottom < MARGIN

    seen = Counter(key for lines in pages for key in {line.key for line in lines if marginal(line)})
    recurring = {key for key, n in seen.items() if n >= 2 and n * 2 >= len(pages)}
    return [[line for line in lines if not (marginal(line) and (line.key in recurring or PAGE_NUMBER.match(line.text)))] for lines in pages]


def _blocks(pages: list[list[Line]]) -> list[Block]:
    """Lines grouped into paragraphs (and tables) page by page."""
    blocks: list[Block] = []
    for number, lines in enumerate(pages, start=1):
        current: Block | None = None
        for line in lines:
            previous = current.lines[-1] if current else None
            if previous is None or _breaks(previous, line):
                current = Block(number, [line])
                blocks.append(current)
            else:
                current.lines.append(line)
    return blocks


def _breaks(previous: Line, line: Line) -> bool:
    height = max(previous.top - previous.bottom, 1e-6)
    gap = previous.bottom - line.top
    if previous.cells and line.cells:  # rows of one table: cell padding spaces them out
        return gap > 2.5 * height or line.top > previous.top
    return (
        abs(previous.size - line.size) > 0.6
        or previous.bold != line.bold
        or bool(previous.cells) != bool(line.cells)
        or gap > 0.8 * height  # a blank line's worth of space
        or line.top > previous.top + 0.5 * height  # back up the page: the next column
    )


def _headings(blocks: list[Block], outline: dict[int, list[tuple[int, str]]]) -> list[Block]:
    """Mark heading blocks: by the outline where the PDF has one, else by size and weight."""
    body = [b for b in blocks if not b.table]
    weights = Counter()
    for block in body:
        for line in block.lines:
            weights[round(line.size * 2) / 2] += len(line.text)
    if not weights:
        return blocks
    body_size = weights.most_common(1)[0][0]
    larger = sorted({round(b.lines[0].size * 2) / 2 for b in body if b.lines[0].size >= body_size * HEADING_RATIO}, reverse=True)
    titles: dict[tuple[int, str], list[int]] = {}  # a title used twice on a page is matched in order
    for page, items in outline.items():
        for level, title in items:
            titles.setdefault((page, _simple(title)), []).append(level)
    for block in body:
        text = _line_text(block)
        if len(text) > MAX_HEADING_CHARS:  # (a heading in a narrow column may wrap onto several lines)
            continue
        levels = titles.get((block.page - 1, _simple(text)))
        level = levels.pop(0) if levels else None
        size = round(block.lines[0].size * 2) / 2
        if level is None and size in larger:
            level = larger.index(size) + 1
        elif level is None and block.lines[0].bold and len(block.lines) == 1 and not text.endswith((".", ",", ";")):
            level = len(larger) + 1
        block.heading = min(level, 6) if level else 0
    return blocks


def _assemble(blocks: list[Block], page_count: int) -> tuple[str, tuple[int, ...]]:
    """Markdown-like text and where each page begins in it."""
    parts: list[str] = []
    length = 0
    starts: dict[int, int] = {}
    for block in blocks:
        if block.heading:
            piece = "#" * block.heading + " " + _line_text(block)
        elif block.table:
            piece = "\n".join(line.text for line in block.lines)
        else:
            piece = _joined(line.text for line in block.lines)
        previous = parts[-1] if parts else ""
        continues = (not block.heading and not block.table and previous and not previous.startswith("#") and "\n" not in previous
                     and not previous.endswith(SENTENCE_END) and piece[:1].islower())
        if continues and block.page not in starts:  # the paragraph runs on from the page before
            joined = _joined([previous, piece])
            starts[block.page] = length - len(previous) + len(joined) - len(piece)
            length += len(joined) - len(previous)
            parts[-1] = joined
            continue
        if parts:
            length += 2
        starts.setdefault(block.page, length)
        parts.append(piece)
        length += len(piece)
    text = "\n\n".join(parts)
    offsets, last = [], 0
    for page in range(1, page_count + 1):
        last = starts.get(page, last)
        offsets.append(last)
    return text, tuple(offsets)


def _joined(lines) -> str:
    """Lines of a paragraph as one: a word broken with a hyphen at a line end is whole again
    (PDFium marks the hyphens it recognizes as U+0002; others are a '-' before a lowercase letter)."""
    out = ""
    for line in lines:
        if out.endswith(SOFT_HYPHEN):
            out = out[:-1] + line
        elif out.endswith("-") and len(out) > 1 and out[-2].isalpha() and line[:1].islower():
            out = out[:-1] + line
        else:
            out = f"{out} {line}" if out else line
    return out


def _line_text(block: Block) -> str:
    return " ".join(line.text for line in block.lines)


def _simple(text: str) -> str:
    return re.sub(r"\W+", " ", text.lower()).strip()


def _pdf_date(value: str | None) -> datetime | None:
    """A PDF date string, `D:YYYYMMDDHHmmSS+HH'mm'` (any tail may be missing)."""
    match = re.match(r"^(?:D:)?(\d{4})(\d{2})?(\d{2})?(\d{2})?(\d{2})?(\d{2})?([Zz+\-])?(\d{2})?'?(\d{2})?", (value or "").strip())
    if not match:
        return None
    year, month, day, hour, minute, second, sign, off_h, off_m = match.groups()
    try:
        parsed = datetime(int(year), int(month or 1), int(day or 1), int(hour or 0), int(minute or 0), int(second or 0), tzinfo=timezone.utc)
    except ValueError:
        return None
    if sign in ("+", "-"):
        from datetime import timedelta

        offset = timedelta(hours=int(off_h or 0), minutes=int(off_m or 0))
        parsed = parsed - offset if sign == "+" else parsed + offset
    return parsed
