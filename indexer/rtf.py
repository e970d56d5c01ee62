"""Rich Text (.rtf) → Markdown-like text: what Word, WordPad, LibreOffice and macOS TextEdit save as
"Rich Text". Read into the shape of a .doc's paragraphs and assembled by the same code
(indexer/worddoc.py): headings by outline level or a "Heading N" style, list paragraphs as `- `
items, tables a row per line with ` | `; a field reads as the text it shows, a generated table of
contents not at all. Footnotes, comments, headers and footers, pictures and drawn shapes, hidden
text and tracked deletions are left out. Title, author, keywords and the revision time come from
its \\info group.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone

from indexer.extract import ExtractionError, Extracted, normalize_text, own_title
from indexer.worddoc import FIELD_END, FIELD_SEPARATOR, FIELD_START, P_IN_TABLE, P_LIST, P_LIST_LEVEL, P_OUTLINE, P_ROW_END, Paragraph, paragraphs_markdown

KIND = "Rich Text (.rtf) document"
TOKEN = re.compile(rb"\\([a-zA-Z]{1,32})(-?\d{1,10})? ?|\\'([0-9a-fA-F]{2})|\\(.)|([{}])|([^\\{}\r\n]+)|[\r\n]+", re.DOTALL)
# Groups whose text is not the document's: tables of fonts, colours and lists, pictures, drawn
# shapes, headers, footers, footnotes, comments, the bullet a list item shows ({\listtext •}).
SKIPPED = frozenset("""fonttbl colortbl listtable listoverridetable revtbl rsidtbl generator pgdsctbl xmlnstbl themedata colorschememapping
    datastore latentstyles pict object shp shppict nonshppict header headerl headerr headerf footer footerl footerr footerf footnote
    annotation atnid atnauthor atndate atnref atrfstart atrfend listtext pntext pntxta pntxtb bkmkstart bkmkend ftnsep ftnsepc ftncn aftnsep
    aftnsepc aftncn falt fontemb fontfile panose private userprops docvar mmathPr""".split())
INFO_FIELDS = {"title": "title", "author": "author", "keywords": "keywords"}
SYMBOLS = {"emdash": "—", "endash": "–", "bullet": "•", "lquote": "‘", "rquote": "’", "ldblquote": "“", "rdblquote": "”",
           "emspace": " ", "enspace": " ", "qmspace": " ", "tab": " ", "line": "\x0b"}
MAX_DEPTH = 512  # groups nested deeper than any writer nests them: a damaged or hostile file


def extract_rtf(raw: bytes, fallback_title: str) -> Extracted:
    if not raw.lstrip()[:5] == b"{\\rtf":
        raise ExtractionError(f"not a readable {KIND}: it does not start with {{\\rtf")
    reader = _Reader(raw)
    try:
        reader.read()
    except (ValueError, OverflowError, RecursionError) as exc:
        raise ExtractionError(f"not a readable {KIND} ({type(exc).__name__}: {exc})") from None
    text, first_heading = paragraphs_markdown(reader.paragraphs)
    info = reader.info
    return Extracted(
        title=own_title(info.get("title")) or first_heading or fallback_title,
        text=normalize_text(text),
        authors=(" ".join(info["author"].split()),) if info.get("author", "").strip() else (),
        tags=tuple(t.strip() for t in re.split(r"[,;]", info.get("keywords", "")) if t.strip()),
        updated_at=reader.revised,
    )


class _Reader:
    """One pass over the tokens with a stack of group states (each group inherits its parent's)."""

    def __init__(self, raw: bytes):
        self.raw = raw
        self.paragraphs: list[Paragraph] = []
        self.info: dict[str, str] = {}
        self.revised: datetime | None = None
        self.codepage = "cp1252"
        self.styles: dict[int, int] = {}  # paragraph style number → outline level (0 = Heading 1)
        self.text: list[str] = []
        self.pending = bytearray()  # 8-bit text and \'hh bytes, decoded by the codepage as a run
        self.props: dict[int, int] = {}
        self.style = 0

    def read(self) -> None:
        state = {"skip": False, "uc": 1, "hidden": False, "into": None, "field": False, "first": True}
        stack: list[dict] = []
        skip_chars, pos, raw = 0, 0, self.raw
        time_parts: dict[str, int] = {}
        while pos < len(raw):
            match = TOKEN.match(raw, pos)
            if match is None:  # a lone backslash at the end
                break
            pos = match.end()
            word, param, hexa, symbol, brace, text = match.groups()
            if not (word or hexa or symbol or brace or text):
                continue  # a line break in the file: not text
            first = state["first"]
            state["first"] = symbol == b"*" and first  # "{\*\name": the word after the star is still the group's first
            if brace == b"{":
                if len(stack) >= MAX_DEPTH:
                    raise ValueError(f"groups nested more than {MAX_DEPTH} deep")
                stack.append(state)
                state = {**state, "first": True, "field": False, "entry": None, "star": False}
                skip_chars = 0
                continue
            if brace == b"}":
                skip_chars = 0
                self._close(state, time_parts)
                if not stack:
                    break
                state = stack.pop()
                continue
            if skip_chars and (text or hexa or symbol):  # the ANSI stand-in after a \u character
                if text and len(text) > skip_chars:
                    text, skip_chars = text[skip_chars:], 0
                else:
                    skip_chars -= 1 if not text else len(text)
                    continue
            if word:
                name = word.decode()
                value = int(param) if param is not None else None
                if name == "bin" and value:
                    pos += max(value, 0)  # binary data (a picture): skipped whole
                    continue
                if state["skip"]:
                    continue
                skip_chars = self._control(name, value, state, first, time_parts)
            elif symbol:
                if state["skip"]:
                    continue
                if symbol == b"*":
                    state["star"] = True
                elif symbol in (b"\\", b"{", b"}"):
                    self._add(state, symbol.decode())
                elif symbol in (b"\n", b"\r"):  # a backslash at a line's end: TextEdit's paragraph mark
                    self._paragraph_end(state)
                elif symbol == b"~":
                    self._add(state, " ")
                elif symbol == b"_":
                    self._add(state, "-")
            elif hexa and not state["skip"]:
                self._add_byte(state, int(hexa, 16))
            elif text and not state["skip"]:
                if state.get("star") and first:  # \*\destination we do not know: ignorable by definition
                    state["skip"] = True
                    continue
                self._add_bytes(state, text)
        self._flush()
        if self.text:
            self.paragraphs.append(Paragraph("".join(self.text), "\r", dict(self.props)))

    def _control(self, name: str, value: int | None, state: dict, first: bool, time_parts: dict) -> int:
        """Apply one control word; returns how many characters after it to skip (after \\u)."""
        if first and (name in SKIPPED or state.get("star") and name != "fldinst"):
            state["skip"] = True
            return 0
        if name == "u" and value is not None:
            self._add(state, chr(value + 65536 if value < 0 else value) if -32768 <= value < 65536 else "")
            return state["uc"]
        if name == "uc" and value is not None:
            state["uc"] = max(value, 0)
        elif name == "ansicpg" and value:
            self.codepage = f"cp{value}" if value != 65001 else "utf-8"
        elif name == "stylesheet":
            state["into"] = "stylesheet"
        elif name == "info":
            state["into"] = "info"
        elif state["into"] == "info" and first and name in INFO_FIELDS:
            state["into"] = "info:" + INFO_FIELDS[name]
        elif state["into"] == "info" and first and name == "revtim":
            state["into"] = "revtim"
        elif state["into"] == "revtim" and name in ("yr", "mo", "dy", "hr", "min") and value is not None:
            time_parts[name] = value
        elif state["into"] and state["into"].startswith("info"):
            pass
        elif state["into"] == "stylesheet":
            if name == "s" and value is not None:
                state["entry"] = [value, None, ""]
            elif name == "outlinelevel" and state.get("entry") is not None:
                state["entry"][1] = value
        elif name == "field":
            self._add(state, FIELD_START)
            state["field"] = True
        elif name == "fldrslt":
            self._add(state, FIELD_SEPARATOR)
        elif name in ("par", "sect"):
            self._paragraph_end(state)
        elif name in ("cell", "nestcell"):
            self._paragraph_end(state, "\x07", {P_IN_TABLE: 1})
        elif name in ("row", "nestrow"):
            self._paragraph_end(state, "\x07", {P_IN_TABLE: 1, P_ROW_END: 1}, always=True)
        elif name == "pard":
            self.props, self.style = {}, 0
        elif name == "intbl":
            self.props[P_IN_TABLE] = 1
        elif name == "s" and value is not None:
            self.style = value
        elif name == "outlinelevel" and value is not None:
            self.props[P_OUTLINE] = value
        elif name == "ls" and value:
            self.props[P_LIST] = value
        elif name == "ilvl" and value is not None:
            self.props[P_LIST_LEVEL] = value
        elif name in ("v", "deleted"):  # hidden text, a tracked deletion
            state["hidden"] = value != 0
        elif name == "plain":
            state["hidden"] = False
        elif name in SYMBOLS:
            self._add(state, SYMBOLS[name])
        return 0

    def _close(self, state: dict, time_parts: dict) -> None:
        if state.get("field"):
            self._add({**state, "skip": False, "hidden": False}, FIELD_END)
        into = state["into"]
        if into == "stylesheet" and state.get("entry") is not None:
            number, outline, name = state["entry"]
            heading = re.fullmatch(r"\s*heading\s*([1-9])\s*;?\s*", name, re.IGNORECASE)
            if outline is not None and 0 <= outline < 9:
                self.styles[number] = outline
            elif heading:
                self.styles[number] = int(heading.group(1)) - 1
        elif into == "revtim" and time_parts.get("yr", 0) >= 1980:
            try:
                self.revised = datetime(time_parts["yr"], time_parts.get("mo", 1), time_parts.get("dy", 1), time_parts.get("hr", 0),
                                        time_parts.get("min", 0), tzinfo=timezone.utc)
            except ValueError:
                pass

    def _add(self, state: dict, chars: str) -> None:
        if state["hidden"] and chars not in (FIELD_START, FIELD_SEPARATOR, FIELD_END):
            return
        self._flush()
        if state["into"] and state["into"].startswith("info:"):
            self.info[state["into"][5:]] = self.info.get(state["into"][5:], "") + chars
            return
        if state["into"] == "stylesheet":
            if state.get("entry") is not None:
                state["entry"][2] += chars
            return
        self.text.append(chars)

    def _add_bytes(self, state: dict, data: bytes) -> None:
        if state["hidden"]:
            return
        if state["into"] == "stylesheet" or (state["into"] or "").startswith("info:"):
            self._add(state, self._decoded(data))
            return
        self.pending += data

    def _add_byte(self, state: dict, value: int) -> None:
        self._add_bytes(state, bytes((value,)))

    def _flush(self) -> None:
        if self.pending:
            self.text.append(self._decoded(self.pending))
            self.pending = bytearray()

    def _decoded(self, data: bytes) -> str:
        try:
            return bytes(data).decode(self.codepage, errors="replace")
        except LookupError:  # a codepage Python does not know
            return bytes(data).decode("cp1252", errors="replace")

    def _paragraph_end(self, state: dict, end: str = "\r", extra: dict | None = None, always: bool = False) -> None:
        if state["into"]:
            return
        self._flush()
        props = dict(self.props)
        if self.style in self.styles and P_OUTLINE not in props:
            props[P_OUTLINE] = self.styles[self.style]
        props.update(extra or {})
        self.paragraphs.append(Paragraph("".join(self.text), end, props))
        self.text = []
