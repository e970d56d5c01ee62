"""Word 97–2003 (.doc) → Markdown-like text, read from the binary format ([MS-DOC]) as the .docx
reader reads its XML: headings (the built-in Heading 1–9 styles, or an outline level) as
`#`-headings, list paragraphs as `- ` items indented by level, tables a row per line with ` | `
between cells. Only the main text is read: footnotes, comments, headers and footers, text boxes
and a generated table of contents are not, nor are deleted tracked changes or hidden text. A
field (a link, a date) reads as the text it shows. Summary properties give the title, author,
keywords (→ tags) and the modification time.

The text is stored in pieces (the piece table) of 8-bit or UTF-16 characters; paragraph and
character properties in 512-byte pages (FKPs) that map byte positions to property lists (sprms).
"""

from __future__ import annotations

import bisect
import re
import struct
from typing import NamedTuple

from indexer.extract import ExtractionError, Extracted, join_blocks
from indexer.ole import extract_ole, stream
from indexer.word import extract_docx

KIND = "Word 97–2003 (.doc) document"
# The File Information Block's fields this reader needs (Word 97 and later all keep these offsets).
FIB_IDENT, FIB_FLAGS, FIB_CCP_TEXT = 0x0000, 0x000A, 0x004C
FIB_STSH, FIB_BTE_CHPX, FIB_BTE_PAPX, FIB_CLX = 0x00A2, 0x00FA, 0x0102, 0x01A2
WORD_IDENT, ENCRYPTED, WHICH_TABLE = 0xA5EC, 0x0100, 0x0200
WORD_95_NFIB = 0x0069  # the file format version (nFib) of Word 95; Word 6 wrote 0x0065, Word 97 and later 0x00C1
# Sprms (property modifiers) read: paragraph in a table, table row end, list level and list,
# outline level; character deleted (a tracked deletion), hidden.
P_IN_TABLE, P_ROW_END, P_LIST_LEVEL, P_LIST, P_OUTLINE = 0x2416, 0x2417, 0x260A, 0x460B, 0x2640
C_DELETED, C_HIDDEN = 0x0800, 0x083C
STYLE, BUILT_IN_STYLE = -1, -2  # keys beside the sprms: the paragraph's style (istd), and that style's built-in id (sti)
FIELD_START, FIELD_SEPARATOR, FIELD_END = "\x13", "\x14", "\x15"
NOT_TEXT = str.maketrans({"\x01": None, "\x02": None, "\x05": None, "\x08": None, "\x1f": None, "\x1e": "-", "\xa0": " ", "\x0b": " "})
GENERATED_FIELDS = re.compile(r"\s*(TOC|INDEX|TOA|PAGE|NUMPAGES|PAGEREF)\b", re.IGNORECASE)  # results Word computes: a contents list, page numbers


class Piece(NamedTuple):
    cp_start: int
    cp_end: int
    fc: int  # where its first character is in the WordDocument stream
    width: int  # bytes per character: 1 (cp1252) or 2 (UTF-16)


class Paragraph(NamedTuple):
    text: str
    end: str  # "\r" (a paragraph), "\x07" (a table cell or row), "\x0c" (a page or section break)
    props: dict[int, int]


def extract_doc(raw: bytes, fallback_title: str, kind: str = KIND) -> Extracted:
    """A .doc's text, or a .docx's when that is what the file is (saved as .docx, named .doc)."""
    def read(ole) -> tuple[str, str]:
        text, first_heading = paragraphs_markdown(_paragraphs(ole, kind))
        return first_heading or "", text

    return extract_ole(raw, fallback_title, kind, extract_docx, read)


def _paragraphs(ole, kind: str) -> list[Paragraph]:
    word = stream(ole, ("WordDocument",), kind)
    ident, flags = struct.unpack_from("<H", word, FIB_IDENT)[0], struct.unpack_from("<H", word, FIB_FLAGS)[0]
    if ident != WORD_IDENT:
        raise ExtractionError(f"not a readable {kind}: its WordDocument stream does not start as Word's does")
    if struct.unpack_from("<H", word, 2)[0] <= WORD_95_NFIB:  # the FIB's layout before Word 97 differs
        raise ExtractionError(f"not a readable {kind}: it is a Word 6 or 95 file; save it as .docx to index it")
    if flags & ENCRYPTED:
        raise ExtractionError(f"not a readable {kind}: it is password-protected; save it without a password to index it")
    table = stream(ole, ("1Table" if flags & WHICH_TABLE else "0Table",), kind)
    ccp_text = struct.unpack_from("<I", word, FIB_CCP_TEXT)[0]
    pieces = _pieces(table, *struct.unpack_from("<II", word, FIB_CLX))
    hidden = _runs(word, table, *struct.unpack_from("<II", word, FIB_BTE_CHPX), _chpx)
    hidden = [(start, end) for start, end, props in hidden if props.get(C_DELETED, 0) & 1 or props.get(C_HIDDEN, 0) & 1]
    styles = _styles(table, *struct.unpack_from("<II", word, FIB_STSH))
    papx = _runs(word, table, *struct.unpack_from("<II", word, FIB_BTE_PAPX), _papx)
    starts = [start for start, _, _ in papx]

    out, text = [], []
    for piece in pieces:
        if piece.cp_start >= ccp_text:
            break
        count = min(piece.cp_end, ccp_text) - piece.cp_start
        raw = word[piece.fc : piece.fc + count * piece.width]
        chars = raw.decode("cp1252", errors="replace") if piece.width == 1 else raw.decode("utf-16-le", errors="replace")
        for i, char in enumerate(chars):
            fc = piece.fc + i * piece.width
            if hidden and _inside(hidden, fc):
                continue
            if char in "\r\x07\x0c\x0e":  # a paragraph, a cell or row, a page or section, a column ends
                out.append(Paragraph("".join(text), "\x0c" if char == "\x0e" else char, _props_at(papx, starts, fc, styles)))
                text = []
            else:
                text.append(char)
    if text:
        out.append(Paragraph("".join(text), "\r", {}))
    return out


def _pieces(table: bytes, fc_clx: int, lcb_clx: int) -> list[Piece]:
    """The piece table (Clx): where each run of characters is stored, and how wide its characters are."""
    clx, pos = table[fc_clx : fc_clx + lcb_clx], 0
    while pos < len(clx) and clx[pos] == 1:  # Prc: property changes of pieces, skipped
        size = struct.unpack_from("<h", clx, pos + 1)[0]
        if size < 0:
            raise ValueError("a negative property change size")
        pos += 3 + size
    if pos >= len(clx) or clx[pos] != 2:
        raise ValueError("no piece table")
    size = struct.unpack_from("<I", clx, pos + 1)[0]
    plc = clx[pos + 5 : pos + 5 + size]
    n = (size - 4) // 12
    cps = struct.unpack_from(f"<{n + 1}I", plc, 0)
    pieces = []
    for i in range(n):
        fc = struct.unpack_from("<I", plc, 4 * (n + 1) + 8 * i + 2)[0]
        compressed = bool(fc & 0x40000000)
        start = (fc & 0x3FFFFFFF) // 2 if compressed else fc
        pieces.append(Piece(cps[i], cps[i + 1], start, 1 if compressed else 2))
    return pieces


def _runs(word: bytes, table: bytes, fc_plc: int, lcb_plc: int, read) -> list[tuple[int, int, dict[int, int]]]:
    """(start, end, sprms) runs of byte positions from the FKP pages a PlcBte points to, in order."""
    n = (lcb_plc - 4) // 8
    pages = struct.unpack_from(f"<{n}I", table, fc_plc + 4 * (n + 1)) if n > 0 else ()
    runs = []
    for page_number in pages:
        start = (page_number & 0x3FFFFF) * 512
        page = word[start : start + 512]
        count = page[511]
        fcs = struct.unpack_from(f"<{count + 1}I", page, 0)
        for i in range(count):
            runs.append((fcs[i], fcs[i + 1], read(page, 4 * (count + 1), i)))
    runs.sort(key=lambda run: run[0])
    return runs


def _chpx(page: bytes, offsets_at: int, i: int) -> dict[int, int]:
    word_offset = page[offsets_at + i]
    if not word_offset:
        return {}
    at = word_offset * 2
    return _sprms(page[at + 1 : at + 1 + page[at]])


def _papx(page: bytes, offsets_at: int, i: int) -> dict[int, int]:
    at = page[offsets_at + 13 * i] * 2  # BxPap: a word offset, then 12 bytes of layout hints
    size = page[at]
    start, size = (at + 2, 2 * page[at + 1]) if size == 0 else (at + 1, 2 * size - 1)
    grpprl = page[start : start + size]
    props = _sprms(grpprl[2:])
    props[STYLE] = struct.unpack_from("<H", grpprl, 0)[0] if len(grpprl) >= 2 else 0
    return props


def _sprms(grpprl: bytes) -> dict[int, int]:
    """A property list's small operands by sprm (larger ones skipped)."""
    props, pos = {}, 0
    while pos + 2 <= len(grpprl):
        sprm = struct.unpack_from("<H", grpprl, pos)[0]
        pos += 2
        size = (1, 1, 2, 4, 2, 2, 0, 3)[sprm >> 13]
        if size == 0:  # variable: a length byte first (sprmTDefTable's is two bytes)
            if sprm == 0xD608:
                size = struct.unpack_from("<H", grpprl, pos)[0] + 1
            elif sprm == 0xC615 and pos < len(grpprl) and grpprl[pos] == 255:
                break  # sprmPChgTabs with its extended form: not worth decoding; nothing after it is read
            else:
                size = grpprl[pos] + 1 if pos < len(grpprl) else 1
        elif size in (1, 2) and pos + size <= len(grpprl):
            props[sprm] = int.from_bytes(grpprl[pos : pos + size], "little")
        pos += size
    return props


def _styles(table: bytes, fc_stsh: int, lcb_stsh: int) -> dict[int, tuple[int, int, dict[int, int]]]:
    """istd → (built-in style id, base istd, paragraph sprms) from the stylesheet."""
    stsh = table[fc_stsh : fc_stsh + lcb_stsh]
    if len(stsh) < 6:
        return {}
    header = struct.unpack_from("<H", stsh, 0)[0]
    count, base_size = struct.unpack_from("<HH", stsh, 2)
    styles, pos = {}, 2 + header
    for istd in range(count):
        if pos + 2 > len(stsh):
            break
        size = struct.unpack_from("<H", stsh, pos)[0]
        std, pos = stsh[pos + 2 : pos + 2 + size], pos + 2 + size
        if size < 10:
            continue
        sti, kind_and_base, upx_count = struct.unpack_from("<HHH", std, 0)
        name_at = base_size
        name_length = struct.unpack_from("<H", std, name_at)[0] if name_at + 2 <= len(std) else 0
        upx_at = name_at + 2 + 2 * (name_length + 1)
        sprms: dict[int, int] = {}
        if kind_and_base & 0xF == 1 and upx_count & 0xF >= 1 and upx_at + 2 <= len(std):  # a paragraph style: its first UPX is a PAPX
            upx_size = struct.unpack_from("<H", std, upx_at)[0]
            sprms = _sprms(std[upx_at + 4 : upx_at + 2 + upx_size])
        styles[istd] = (sti & 0xFFF, kind_and_base >> 4, sprms)
    return styles


def _props_at(papx, starts, fc: int, styles) -> dict[int, int]:
    """The paragraph properties at byte position `fc`, its style's (and their bases') under its own."""
    i = bisect.bisect_right(starts, fc) - 1
    own = papx[i][2] if i >= 0 and fc < papx[i][1] else {}
    merged, istd, seen = {}, own.get(STYLE, 0), 0
    while istd in styles and seen < 10:
        sti, base, sprms = styles[istd]
        merged = {**sprms, **merged}
        merged.setdefault(BUILT_IN_STYLE, sti)  # the paragraph's own style's, not a base's
        istd, seen = base, seen + 1
    return {**merged, **own}


def _inside(ranges: list[tuple[int, int]], fc: int) -> bool:
    i = bisect.bisect_right(ranges, (fc, float("inf"))) - 1
    return i >= 0 and ranges[i][0] <= fc < ranges[i][1]


def _heading_level(props: dict[int, int]) -> int:
    sti = props.get(BUILT_IN_STYLE, 0)
    if 1 <= sti <= 9:
        return min(sti, 6)
    outline = props.get(P_OUTLINE, 9)
    return min(outline + 1, 6) if outline < 9 else 0


def paragraphs_markdown(paragraphs: list[Paragraph]) -> tuple[str, str | None]:
    """Word's paragraphs (from a .doc, or an .rtf read into the same shape) as Markdown-like text, and its first heading."""
    parts: list[str] = []
    row: list[str] = []
    cell: list[str] = []
    rows: list[str] = []
    first_heading = None

    def table() -> str:  # the rows read so far, one line each, empty ones left out
        return "\n".join(r for r in rows + ([" | ".join(row)] if row else []) if r.strip(" |"))

    for text in _fields_shown(paragraphs):
        line = " ".join(text.text.translate(NOT_TEXT).split())
        if text.props.get(P_IN_TABLE) or text.end == "\x07":
            if text.props.get(P_ROW_END):
                rows.append(" | ".join(row))
                row = []
            elif text.end == "\x07":
                row.append(" ".join(cell + [line]).strip())
                cell = []
            elif line:
                cell.append(line)
            continue
        if rows or row:
            parts.append(table())
            rows, row = [], []
        if not line:
            continue
        level = _heading_level(text.props)
        if level:
            first_heading = first_heading or line
            parts.append("#" * level + " " + line)
        elif text.props.get(P_LIST):
            parts.append("  " * min(text.props.get(P_LIST_LEVEL, 0), 8) + "- " + line)
        else:
            parts.append(line)
    if rows or row:
        parts.append(table())
    return join_blocks([p for p in parts if p]), first_heading


def _fields_shown(paragraphs: list[Paragraph]):
    """The paragraphs with each field as the text it shows: its code (between its start and
    separator marks) left out, and the whole of a generated one (a table of contents)."""
    depth_codes: list[tuple[bool, bool]] = []  # per open field: (in its code part, generated)
    code = ""
    for paragraph in paragraphs:
        kept = []
        for char in paragraph.text:
            if char == FIELD_START:
                depth_codes.append((True, any(generated for _, generated in depth_codes)))
                code = ""
            elif char == FIELD_SEPARATOR and depth_codes:
                _, generated = depth_codes[-1]
                depth_codes[-1] = (False, generated or bool(GENERATED_FIELDS.match(code)))
            elif char == FIELD_END and depth_codes:
                depth_codes.pop()
            elif depth_codes and depth_codes[-1][0]:
                code += char
            elif not any(generated for _, generated in depth_codes):
                kept.append(char)
        if depth_codes and (depth_codes[-1][0] or any(generated for _, generated in depth_codes)):
            continue  # a paragraph inside a field's code, or of a table of contents
        yield paragraph._replace(text="".join(kept))
