"""PowerPoint 97–2003 (.ppt) → the same Markdown-like text as a .pptx deck (indexer/slides.py),
read from the binary format ([MS-PPT]).

One section per slide in the deck's order, "Slide 7: <its title>", then its text boxes and
placeholders in the order of its shape tree (groups entered), bulleted paragraphs as `- ` items
indented by level, then its speaker notes. Left out as in a .pptx: hidden slides (they keep their
number), the slide number, date, header and footer placeholders, and text inside charts and
pictures. A table (in this format a group of text boxes, one per cell) is a row per line, ` | `
between cells.
The summary properties give the title, author, keywords (→ tags) and the modification time.

The "PowerPoint Document" stream is a tree of records (an 8-byte header: version and instance,
type, length; a container's body is more records). Its newest edit, named by the "Current User"
stream, leads to the persist directory: where each slide's record lies. The document's slide
list gives the slides' order; a slide's drawing holds its shapes, each with its text (or, as
PowerPoint often writes placeholders, a reference to the text kept in the slide list).
"""

from __future__ import annotations

import struct
from typing import NamedTuple

from indexer.extract import ExtractionError, Extracted
from indexer.ole import extract_ole, stream
from indexer.slides import extract_pptx, slide_section

KIND = "PowerPoint 97–2003 (.ppt) deck"
# Record types read ([MS-PPT] 2.13.24 RecordType, and the drawing's OfficeArt records).
DOCUMENT, SLIDE, NOTES, SLIDE_ATOM, SLIDE_SHOW_INFO = 0x03E8, 0x03EE, 0x03F0, 0x03EF, 0x03F9
SLIDE_LIST, SLIDE_PERSIST, USER_EDIT, PERSIST_DIRECTORY = 0x0FF0, 0x03F3, 0x0FF5, 0x1772
TEXT_HEADER, TEXT_CHARS, TEXT_BYTES, TEXT_STYLE, OUTLINE_TEXT_REF = 0x0F9F, 0x0FA0, 0x0FA8, 0x0FA1, 0x0F9E
GROUP, SHAPE, PLACEHOLDER, CHILD_ANCHOR = 0xF003, 0xF004, 0x0BC3, 0xF00F
PROPERTIES = (0xF00B, 0xF122)  # a shape's OfficeArt property tables (the primary, the tertiary)
TABLE_PROPERTIES = 0x03A0  # a group shape with this property is a table, its shapes the cells
# Where a text shows a field (a slide number, a date, a header or footer): "*" in the text.
FIELDS = {0x0FD8, 0x0FF7, 0x0FF8, 0x0FF9, 0x0FFA, 0x1015}
SLIDES, NOTES_LIST = 0, 2  # instances of the slide list: the slides, the notes pages
TITLE_TEXT = {0, 6}  # a text header's kind: Title, CenterTitle
TITLE_PLACEHOLDERS = {0x0D, 0x0F, 0x11}  # Title, CenterTitle, VerticalTitle
# The same on every slide, or a notes page's picture of its slide: MasterDate, MasterSlideNumber,
# MasterFooter, MasterHeader, NotesSlideImage (PlaceholderEnum).
REPEATED_PLACEHOLDERS = {0x07, 0x08, 0x09, 0x0A, 0x0B}
HIDDEN = 0x0004  # SlideShowSlideInfoAtom: fHidden
ENCRYPTED_TOKEN = 0xF3D1C4DF  # the Current User stream's headerToken for a deck saved with a password
HAS_BULLET = 0x0001
MAX_DEPTH = 32  # records nest a dozen deep in real decks; a damaged one is not followed further
MAX_EDITS = 1000  # saves kept in one file ("fast save"); a loop of edits in a damaged one is cut here
NOT_TEXT = str.maketrans({"\x0b": " ", "\t": " ", "\x00": None})


class Record(NamedTuple):
    type: int
    instance: int
    start: int  # of its body
    end: int


class Paragraph(NamedTuple):
    text: str
    level: int
    bullet: bool


class Text(NamedTuple):
    kind: int | None  # its text header's: Title, Body, Notes, Other… (None: characters without a header)
    paragraphs: list[Paragraph]


def extract_ppt(raw: bytes, fallback_title: str, kind: str = KIND) -> Extracted:
    """A .ppt's text, or a .pptx's when that is what the file is (saved as .pptx, named .ppt)."""
    def read(ole) -> tuple[str, str]:
        sections = _Deck(stream(ole, ("PowerPoint Document",), kind), stream(ole, ("Current User",), kind), kind).sections()
        return next((title for title, _ in sections if title), ""), "\n\n".join(text for _, text in sections if text)

    return extract_ole(raw, fallback_title, kind, extract_pptx, read)


class _Deck:
    """The records of a deck's PowerPoint Document stream, read through its newest edit."""

    def __init__(self, document: bytes, current_user: bytes, kind: str):
        self.data, self.kind = document, kind
        token, edit_at = struct.unpack_from("<II", current_user, 12)
        if token == ENCRYPTED_TOKEN:
            raise self._password_protected()
        self.persist, document_ref = self._persist_directory(edit_at)
        self.document = self._record_at(self.persist[document_ref], DOCUMENT)

    def sections(self) -> list[tuple[str, str]]:
        """(title, section text) per slide, in the deck's order; ("", "") for a hidden slide."""
        lists = {r.instance: r for r in self._children(self.document) if r.type == SLIDE_LIST}
        notes = {slide_id: (persist, texts) for persist, slide_id, texts in self._slide_list(lists.get(NOTES_LIST))}
        out = []
        for number, (persist, _, texts) in enumerate(self._slide_list(lists.get(SLIDES)), 1):
            slide = self._record_at(self.persist[persist], SLIDE)
            if self._hidden(slide):
                out.append(("", ""))
                continue
            title, blocks = self._shapes(slide, texts)
            notes_page, notes_listed = notes.get(self._notes_id(slide), (None, []))
            notes_text = [] if notes_page is None else self._shapes(self._record_at(self.persist[notes_page], NOTES), notes_listed)[1]
            out.append((title, slide_section(number, title, blocks, notes_text)))
        return out

    def _persist_directory(self, edit_at: int) -> tuple[dict[int, int], int]:
        """Where each persist object lies (the newest edit's entry wins), and the document's id."""
        persist: dict[int, int] = {}
        document_ref, seen = None, set()
        while edit_at not in seen and len(seen) < MAX_EDITS:
            seen.add(edit_at)
            edit = self._record_at(edit_at, USER_EDIT)
            last_edit, directory_at, reference = struct.unpack_from("<III", self.data, edit.start + 8)
            if document_ref is None:
                document_ref = reference
                if edit.end - edit.start >= 32:  # it names its encryption session (encryptSessionPersistIdRef)
                    raise self._password_protected()
            directory = self._record_at(directory_at, PERSIST_DIRECTORY)
            at = directory.start
            while at + 4 <= directory.end:
                entry = struct.unpack_from("<I", self.data, at)[0]
                first, count = entry & 0xFFFFF, entry >> 20
                for i, offset in enumerate(struct.unpack_from(f"<{count}I", self.data, at + 4)):
                    persist.setdefault(first + i, offset)
                at += 4 + 4 * count
            if not last_edit:
                break
            edit_at = last_edit
        if document_ref not in persist:
            raise ExtractionError(f"not a readable {self.kind}: its document record is missing")
        return persist, document_ref

    def _password_protected(self) -> ExtractionError:
        return ExtractionError(f"not a readable {self.kind}: it is password-protected; save it without a password to index it")

    def _record_at(self, at: int, expected: int) -> Record:
        record = self._header(at)
        if record.type != expected:
            raise ExtractionError(f"not a readable {self.kind}: a record of type {record.type:#06x} where {expected:#06x} belongs")
        return record

    def _header(self, at: int) -> Record:
        version_instance, kind, length = struct.unpack_from("<HHI", self.data, at)
        end = at + 8 + length
        if end > len(self.data):
            raise ValueError(f"a record at {at} runs past the end of the stream")
        return Record(kind, version_instance >> 4, at + 8, end)

    def _children(self, record: Record) -> list[Record]:
        out, at = [], record.start
        while at + 8 <= record.end:
            child = self._header(at)
            out.append(child)
            at = child.end
        return out

    def _is_container(self, record: Record) -> bool:
        return struct.unpack_from("<H", self.data, record.start - 8)[0] & 0xF == 0xF

    def _slide_list(self, slide_list: Record | None) -> list[tuple[int, int, list[Text]]]:
        """(persist id, slide id, the texts kept in the list for it) per slide of a slide list."""
        out: list[tuple[int, int, list[Text]]] = []
        for record in self._children(slide_list) if slide_list is not None else ():
            if record.type == SLIDE_PERSIST:
                persist, _, _, slide_id = struct.unpack_from("<IIII", self.data, record.start)
                out.append((persist, slide_id, []))
            elif out:
                self._add_text(out[-1][2], record)
        return out

    def _add_text(self, texts: list[Text], record: Record) -> None:
        """A text header starts a text (an empty placeholder has no characters after it), a text
        atom holds its characters, the style after that gives its paragraphs' bullets and levels."""
        if record.type == TEXT_HEADER:
            texts.append(Text(struct.unpack_from("<I", self.data, record.start)[0], []))
        elif record.type in (TEXT_CHARS, TEXT_BYTES):
            raw = self.data[record.start : record.end]
            text = raw.decode("utf-16-le", errors="replace") if record.type == TEXT_CHARS else raw.decode("latin-1")
            paragraphs = [Paragraph(part, 0, False) for part in text.split("\r")]
            if texts and not texts[-1].paragraphs:
                texts[-1] = texts[-1]._replace(paragraphs=paragraphs)
            else:
                texts.append(Text(None, paragraphs))
        elif record.type == TEXT_STYLE and texts:
            texts[-1] = texts[-1]._replace(paragraphs=_styled(texts[-1].paragraphs, self.data[record.start : record.end]))

    def _hidden(self, slide: Record) -> bool:
        info = next((r for r in self._children(slide) if r.type == SLIDE_SHOW_INFO), None)
        return info is not None and bool(struct.unpack_from("<H", self.data, info.start + 10)[0] & HIDDEN)

    def _notes_id(self, slide: Record) -> int | None:
        atom = next((r for r in self._children(slide) if r.type == SLIDE_ATOM), None)
        return struct.unpack_from("<I", self.data, atom.start + 16)[0] if atom is not None else None

    def _shapes(self, page: Record, listed: list[Text]) -> tuple[str, list[str]]:
        """A slide's (or notes page's) title and text blocks, one per shape in the shape tree's order."""
        title, blocks = "", []
        for placeholder, header, paragraphs in self._shape_texts(page, listed, 0):
            if placeholder in REPEATED_PLACEHOLDERS:
                continue
            if not title and (header in TITLE_TEXT or placeholder in TITLE_PLACEHOLDERS):
                title = _one_line(paragraphs)
                continue
            lines = [("  " * p.level + "- " if p.bullet else "") + " ".join(p.text.translate(NOT_TEXT).split()) for p in paragraphs]
            if block := "\n".join(line for line in lines if line.strip(" -")):
                blocks.append(block)
        return title, blocks

    def _shape_texts(self, record: Record, listed: list[Text], depth: int):
        """(placeholder kind, text header kind, paragraphs) of each shape with text under `record`."""
        if depth > MAX_DEPTH:
            return
        for child in self._children(record):
            if child.type == SHAPE:
                if (found := self._shape_text(child, listed)) is not None:
                    yield found
            elif child.type == GROUP and (rows := self._table_rows(child, listed)):
                yield None, None, [Paragraph(row, 0, False) for row in rows]
            elif self._is_container(child):
                yield from self._shape_texts(child, listed, depth + 1)

    def _shape_text(self, shape: Record, listed: list[Text]):
        """A shape's text, from its own text box or from the slide list's text it refers to (as
        PowerPoint keeps a placeholder's); None for a shape without (a group, a picture)."""
        placeholder, texts, fields = None, [], []
        for record in self._descendants(shape, 0):
            if record.type in FIELDS:
                fields.append(struct.unpack_from("<I", self.data, record.start)[0])
            elif record.type == PLACEHOLDER:
                placeholder = self.data[record.start + 4]
            elif record.type == OUTLINE_TEXT_REF:
                index = struct.unpack_from("<I", self.data, record.start)[0]
                if index < len(listed):
                    texts.append(listed[index])
            else:
                self._add_text(texts, record)
        if not texts:
            return None
        header = next((text.kind for text in texts if text.kind is not None), None)
        return placeholder, header, _without_fields([p for text in texts for p in text.paragraphs], fields)

    def _table_rows(self, group: Record, listed: list[Text]) -> list[str]:
        """A table's rows, " | " between cells (its cells are the group's shapes, a row those at
        one height); [] for a group that is not a table."""
        shapes = [r for r in self._children(group) if r.type == SHAPE]
        if not shapes or not any(self._has_property(r, TABLE_PROPERTIES) for r in self._children(shapes[0]) if r.type in PROPERTIES):
            return []
        cells = []
        for shape in shapes[1:]:
            anchor = next((r for r in self._children(shape) if r.type == CHILD_ANCHOR), None)
            found = self._shape_text(shape, listed)
            if anchor is not None and found is not None:
                left, top = struct.unpack_from("<ii", self.data, anchor.start)
                cells.append((top, left, _one_line(found[2])))
        rows: dict[int, list[tuple[int, str]]] = {}
        for top, left, text in cells:
            rows.setdefault(top, []).append((left, text))
        lines = [" | ".join(text for _, text in sorted(row)) for _, row in sorted(rows.items())]
        return [line for line in lines if line.strip(" |")]

    def _has_property(self, table: Record, pid: int) -> bool:
        """Whether an OfficeArt property table (its instance: how many properties) sets `pid`."""
        count = min(table.instance, (table.end - table.start) // 6)
        return any(struct.unpack_from("<H", self.data, table.start + 6 * i)[0] & 0x3FFF == pid for i in range(count))

    def _descendants(self, record: Record, depth: int):
        """The records inside a shape, but not inside the shapes of a group it is."""
        for child in self._children(record):
            if child.type == SHAPE:
                continue
            yield child
            if self._is_container(child) and depth < MAX_DEPTH:
                yield from self._descendants(child, depth + 1)


def _one_line(paragraphs: list[Paragraph]) -> str:
    """A title's or a table cell's paragraphs as one line of words."""
    return " ".join(" ".join(p.text.translate(NOT_TEXT) for p in paragraphs).split())


def _without_fields(paragraphs: list[Paragraph], positions: list[int]) -> list[Paragraph]:
    """`paragraphs` without the "*" that stands for a field at each of `positions` (characters
    from the start of the text, a paragraph's end counted as one)."""
    if not positions:
        return paragraphs
    out, start = [], 0
    for paragraph in paragraphs:
        end = start + len(paragraph.text)
        gone = {at - start for at in positions if start <= at < end and paragraph.text[at - start] == "*"}
        out.append(paragraph._replace(text="".join(c for i, c in enumerate(paragraph.text) if i not in gone)))
        start = end + 1
    return out


def _styled(paragraphs: list[Paragraph], style: bytes) -> list[Paragraph]:
    """`paragraphs` with the bullet and indent level of each, from a StyleTextPropAtom's paragraph
    runs ([MS-PPT] 2.9.44); as they were when the style cannot be read."""
    out, at, covered = [], 0, 0
    total = sum(len(p.text) + 1 for p in paragraphs)
    try:
        while covered < total and at < len(style):
            count, level, masks = struct.unpack_from("<IHI", style, at)
            at += 10
            bullet = False
            if masks & 0x000F:
                bullet = bool(struct.unpack_from("<H", style, at)[0] & HAS_BULLET)
                at += 2
            at += 2 * sum(bool(masks & bit) for bit in (0x0080, 0x0010, 0x0040))  # bullet character, font, size
            at += 4 if masks & 0x0020 else 0  # bullet colour
            at += 2 * sum(bool(masks & bit) for bit in (0x0800, 0x1000, 0x2000, 0x4000, 0x0100, 0x0400, 0x0200))  # alignment … tab size
            if masks & 0x100000:  # tab stops
                at += 2 + 4 * struct.unpack_from("<H", style, at)[0]
            at += 2 * sum(bool(masks & bit) for bit in (0x10000, 0x0E0000, 0x200000))  # font alignment, wrapping, direction
            covered += count
            out.append((covered, min(level, 8), bullet))
    except struct.error:
        return paragraphs
    styled, start, run = [], 0, 0
    for paragraph in paragraphs:
        while run < len(out) - 1 and out[run][0] <= start:
            run += 1
        styled.append(paragraph._replace(level=out[run][1], bullet=out[run][2]) if out else paragraph)
        start += len(paragraph.text) + 1
    return styled
