"""Office 97–2003 files (.doc, .xls, .ppt) are OLE compound files: a small file system of
streams. Opening one, with a clear error for what is not one, and the title, author, keywords and
modification time from its summary properties, by olefile (BSD)."""

from __future__ import annotations

import io
import re
import struct
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from typing import NamedTuple

from indexer.extract import OLE_MAGIC, ZIP_MAGIC, ExtractionError, Extracted, normalize_text, own_title


class Properties(NamedTuple):
    title: str
    author: str
    keywords: str
    modified: datetime | None


def open_ole(raw: bytes, kind: str):
    """The compound file of a `kind` ("Word 97–2003 (.doc) document"); raises ExtractionError, and
    says so for an Office 2007+ file saved with a password (which is one too)."""
    import olefile

    if not raw.startswith(OLE_MAGIC):
        raise ExtractionError(f"not a readable {kind}: not an Office 97–2003 (OLE compound) file")
    try:
        ole = olefile.OleFileIO(io.BytesIO(raw))  # never the bytes themselves: olefile takes a short bytes object for a file name
    except (OSError, ValueError, IndexError, TypeError, AssertionError, OverflowError) as exc:  # olefile raises all of these on damage (its OleFileError is an OSError)
        raise ExtractionError(f"not a readable {kind} ({type(exc).__name__}: {exc})") from None
    if ole.exists("EncryptedPackage"):  # a .docx / .xlsx / .pptx saved with a password: its zip, encrypted, in an OLE file
        ole.close()
        raise ExtractionError(f"not a readable {kind}: it is password-protected; save it without a password to index it")
    return ole


def extract_ole(raw: bytes, fallback_title: str, kind: str, newer: Callable[[bytes, str], Extracted],
                read: Callable[[object], tuple[str, str]]) -> Extracted:
    """A Word or PowerPoint 97–2003 file's text by `read(ole)` (its first heading or slide title, its
    text), with the title, author, keywords and date of its summary properties; the file of the
    newer format when that is what it is (saved under the other extension): read by `newer`."""
    if raw.startswith(ZIP_MAGIC):
        return newer(raw, fallback_title)
    ole = open_ole(raw, kind)
    properties = ole_properties(ole)
    try:
        first_title, text = read(ole)
    except ExtractionError:
        raise  # already says what is wrong (a ValueError too, which the line below would wrap)
    except (struct.error, IndexError, ValueError, OSError, KeyError, RecursionError) as exc:
        raise ExtractionError(f"not a readable {kind} ({type(exc).__name__}: {exc})") from None
    finally:
        ole.close()
    return Extracted(
        title=properties.title or first_title or fallback_title,
        text=normalize_text(text),
        authors=(properties.author,) if properties.author else (),
        tags=tuple(t.strip() for t in re.split(r"[,;]", properties.keywords) if t.strip()),
        updated_at=properties.modified,
    )


def stream(ole, names: tuple[str, ...], kind: str) -> bytes:
    """The first of the streams `names` the file has (what a Word or Excel file keeps its content in)."""
    for name in names:
        if ole.exists(name):
            try:
                return ole.openstream(name).read()
            except (OSError, ValueError, IndexError, OverflowError) as exc:
                raise ExtractionError(f"not a readable {kind} ({type(exc).__name__}: {exc})") from None
    raise ExtractionError(f"not a readable {kind}: it has no {names[0]} stream (a file of another program under this extension?)")


def ole_properties(ole) -> Properties:
    """The summary properties the writing program stored; empty where it stored none, and a
    title the program filled in ("Microsoft Word - report.doc") left out. Read here, not by
    olefile's parser, which loops over whatever count a damaged property claims (billions)."""
    try:
        values = _summary(ole.openstream("\x05SummaryInformation").read()) if ole.exists("\x05SummaryInformation") else {}
    except (OSError, ValueError, struct.error, IndexError, OverflowError):
        values = {}
    codepage = values.get(PID_CODEPAGE, 0) & 0xFFFF  # a signed 16-bit number: UTF-8's 65001 is stored as -535
    encoding = f"cp{codepage}" if codepage and codepage not in (1200, 65001) else "utf-8"

    def text(pid: int) -> str:
        value = values.get(pid, "")
        if isinstance(value, bytes):
            try:
                value = value.decode(encoding, errors="replace")
            except LookupError:
                value = value.decode("cp1252", errors="replace")
        return " ".join(str(value).replace("\x00", "").split())

    modified = values.get(PID_SAVED) or values.get(PID_CREATED)
    return Properties(own_title(text(PID_TITLE)), text(PID_AUTHOR), text(PID_KEYWORDS), modified if isinstance(modified, datetime) else None)


PID_CODEPAGE, PID_TITLE, PID_AUTHOR, PID_KEYWORDS, PID_CREATED, PID_SAVED = 1, 2, 4, 5, 12, 13
VT_I2, VT_LPSTR, VT_LPWSTR, VT_FILETIME = 2, 30, 31, 64
MAX_PROPERTY_BYTES = 64 * 1024


def _summary(data: bytes) -> dict[int, object]:
    """The properties of the SummaryInformation stream's first section ([MS-OLEPS]) this module
    reads: the codepage, strings as bytes or text, times as UTC datetimes."""
    section = struct.unpack_from("<I", data, 44)[0]
    count = min(struct.unpack_from("<I", data, section + 4)[0], 1000)
    values: dict[int, object] = {}
    for i in range(count):
        pid, offset = struct.unpack_from("<II", data, section + 8 + 8 * i)
        at = section + offset
        kind = struct.unpack_from("<I", data, at)[0] & 0xFFFF
        if kind == VT_I2:
            values[pid] = struct.unpack_from("<h", data, at + 4)[0]
        elif kind in (VT_LPSTR, VT_LPWSTR):
            size = min(struct.unpack_from("<I", data, at + 4)[0], MAX_PROPERTY_BYTES)
            raw = data[at + 8 : at + 8 + (size * 2 if kind == VT_LPWSTR else size)]
            values[pid] = raw.decode("utf-16-le", errors="replace") if kind == VT_LPWSTR else raw.split(b"\x00", 1)[0]
        elif kind == VT_FILETIME:
            ticks = struct.unpack_from("<Q", data, at + 4)[0]  # 100 ns since 1601
            if ticks:
                when = datetime(1601, 1, 1, tzinfo=timezone.utc) + timedelta(microseconds=ticks // 10)
                if when.year >= 1980:  # an unset time, or a duration stored where a date is expected
                    values[pid] = when
    return values
