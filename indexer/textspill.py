"""Document texts a run keeps on disk between the steps that read them.

A cold run over 10,000 documents held their 101 MB of text from the crawl to the end of the
write: chunks slice their text from it (indexer/documents.py `Chunk`), and meta.duckdb stores it.
Every step after chunking reads the texts one document after another (embedding, the chunk
store, the postings, meta.duckdb's rows), so they can wait in a file instead: once crawled, a
document's text (and its anchors, a slug per heading) is written to an unlinked temporary file
(`TextSpill.keep`, called by the crawl for each document as it is read, so the texts never pile
up), its `Document` becomes a `SpilledDocument`, and its chunks cut their text from a
`SpilledText`, read back (from the page cache, as a rule) when asked for. The last few texts
read stay decoded, so a step that walks a document's chunks reads the document once.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
import weakref
from collections import OrderedDict
from dataclasses import fields
from pathlib import Path

from indexer.documents import Document

TEXTS_DECODED = 8  # texts held decoded at once: the documents being walked by a step (or by chunking's threads)


class TextSpill:
    """An append-only file of document texts (UTF-8), each followed by its anchors (JSON), deleted
    as soon as it is created: a crash leaves nothing behind, and it is gone once the last text
    kept in it is."""

    def __init__(self, folder: Path):
        self.folder = folder
        self._fd: int | None = None
        self._end = 0
        self._lock = threading.Lock()
        self._decoded: OrderedDict[int, str] = OrderedDict()

    def keep(self, document: Document) -> Document:
        """`document` with its text and anchors in the file instead of memory. Should the file
        fail (no room on the disk, a folder that cannot be made), it stays as it is: in memory."""
        if isinstance(document, SpilledDocument) or not document.text:
            return document
        data = document.text.encode("utf-8", "surrogatepass")
        # Its anchors follow it: one slug per heading, 9 MB of strings at 10,000 documents.
        anchors = json.dumps(document.anchors, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass") if document.anchors else b""
        try:
            offset = self._append(data + anchors)
        except OSError:
            return document
        return SpilledDocument.of(document, SpilledText(self, offset, len(data), len(document.text)), len(anchors))

    def hold(self, text: str) -> SpilledText | str:
        """`text` in the file, read back when asked for; the text itself should the file fail."""
        data = text.encode("utf-8", "surrogatepass")
        try:
            offset = self._append(data)
        except OSError:
            return text
        return SpilledText(self, offset, len(data), len(text))

    def _append(self, data: bytes) -> int:
        """Write `data` at the end of the file (made on first use); where it begins."""
        with self._lock:
            if self._fd is None:
                self._fd = _unlinked_file(self.folder)
                weakref.finalize(self, os.close, self._fd)
            _write_exactly(self._fd, self._end, data)
            offset, self._end = self._end, self._end + len(data)
        return offset

    def read(self, text: SpilledText) -> str:
        with self._lock:
            found = self._decoded.get(text.offset)
            if found is not None:
                self._decoded.move_to_end(text.offset)
                return found
            data = _read_exactly(self._fd, text.offset, text.size)
            found = self._decoded[text.offset] = data.decode("utf-8", "surrogatepass")
            if len(self._decoded) > TEXTS_DECODED:
                self._decoded.popitem(last=False)
            return found

    def read_bytes(self, offset: int, size: int) -> bytes:
        return _read_exactly(self._fd, offset, size)


class SpilledText:
    """A document's text in a TextSpill; `text[start:end]` reads it back and slices it."""

    __slots__ = ("spill", "offset", "size", "length")

    def __init__(self, spill: TextSpill, offset: int, size: int, length: int):
        self.spill, self.offset, self.size, self.length = spill, offset, size, length

    def __getitem__(self, key):
        return self.spill.read(self)[key]

    def __len__(self) -> int:
        return self.length

    def __str__(self) -> str:
        return self.spill.read(self)


class SpilledDocument(Document):
    """A document whose text and anchors are in a TextSpill, read when asked for; its hashes are
    the ones it had when it was kept. A copy (`dataclasses.replace`) is a plain document."""

    def __new__(cls, *args, **kwargs):
        # dataclasses.replace builds the copy with every field given: a plain document holding them.
        return Document(*args, **kwargs) if args or kwargs else super().__new__(cls)

    @classmethod
    def of(cls, document: Document, text: SpilledText, anchors_size: int) -> "SpilledDocument":
        spilled = object.__new__(cls)  # frozen dataclasses are built field by field anyway
        spilled.__dict__.update({f.name: getattr(document, f.name) for f in fields(Document) if f.name not in ("text", "anchors")})
        spilled.__dict__.update(_spilled=text, _anchors_size=anchors_size, _content_hash=document.content_hash, _metadata_hash=document.metadata_hash)
        return spilled

    @property
    def text(self) -> str:
        return str(self.__dict__["_spilled"])

    @property
    def anchors(self) -> tuple[tuple[int, str], ...]:
        size, text = self.__dict__["_anchors_size"], self.__dict__["_spilled"]
        if not size:
            return ()
        stored = text.spill.read_bytes(text.offset + text.size, size).decode("utf-8", "surrogatepass")
        return tuple((offset, name) for offset, name in json.loads(stored))

    @property
    def content_hash(self) -> str:
        return self.__dict__["_content_hash"]

    @property
    def metadata_hash(self) -> str:
        return self.__dict__["_metadata_hash"]


def text_holder(document: Document) -> str | SpilledText:
    """What chunks of `document` cut their text from: where it is kept, or the text itself. A
    document kept on disk has `_spilled` (a SpilledDocument; indexer/previous.py's StoredDocument)."""
    spilled = getattr(document, "_spilled", None)
    return document.text if spilled is None else spilled


def _unlinked_file(folder: Path) -> int:
    folder.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=".texts-", dir=folder)
    os.unlink(name)
    return fd


def _write_exactly(fd: int, offset: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.pwrite(fd, view, offset)
        view, offset = view[written:], offset + written


def _read_exactly(fd: int, offset: int, size: int) -> bytes:
    data = os.pread(fd, size, offset)
    while len(data) < size:  # a short read: read on from where it stopped
        more = os.pread(fd, size - len(data), offset + len(data))
        if not more:
            raise OSError(f"a kept document text ends early: {len(data)} of {size} bytes")
        data += more
    return data
