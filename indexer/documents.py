"""The data that flows through a run: documents, chunks, and the hashes that identify them."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone

from indexer.lexical import indexed_text


# A title or a heading is a line; the longest titles of SciFact's papers are 300 characters. Past
# that it is a page's text marked up as one (an <h1> or <title> left open in broken HTML, a Markdown
# heading missing its newline): every hit of the page would carry it, its words would stand before
# each chunk in the lexical index (`indexed_text`), and Gemini would receive it with every batch of
# the page's chunks.
MAX_TITLE_CHARS = 300


# A URL's scheme as browsers read it: after leading C0 controls and spaces are stripped and tabs
# and newlines removed anywhere (the WHATWG URL parser), so " java\tscript:" is javascript: too.
_SCHEME = re.compile(r"[a-zA-Z][a-zA-Z0-9+.-]*:")
_STRIPPED = "".join(map(chr, range(0x21)))
LINK_SCHEMES = ("http:", "https:", "mailto:", "tel:")


def refused_link(url: str | None) -> bool:
    """True for a document's own url that no reader may be sent to: a scheme not in LINK_SCHEMES.
    A `javascript:` url from front matter or an answers file ran script in the site that showed the
    link (the widget makes it one). Paths ("/about/", "guide.html"), http(s), mail and phone links pass."""
    if not url:
        return False
    scheme = _SCHEME.match(re.sub(r"[\t\n\r]", "", url.strip(_STRIPPED)))
    return scheme is not None and scheme.group(0).lower() not in LINK_SCHEMES


def shortened(line: str, limit: int = MAX_TITLE_CHARS) -> str:
    """`line` as a title or heading: unchanged up to `limit` characters; longer, its whitespace
    collapsed and cut at the last word boundary within `limit`, with "…" (at most `limit` in all)."""
    if len(line) <= limit:
        return line
    line = " ".join(line.split())
    if len(line) <= limit:
        return line
    cut = line.rfind(" ", 0, limit)
    return line[: cut if cut > limit // 2 else limit - 1].rstrip() + "…"


@dataclass(frozen=True)
class Document:
    """One extracted document.

    `text` is exactly what is chunked and embedded; chunk offsets index into it.
    """

    doc_id: str
    source: str
    source_type: str
    title: str
    text: str
    url: str | None = None
    path: str | None = None
    tags: tuple[str, ...] = ()
    authors: tuple[str, ...] = ()
    updated_at: datetime | None = None
    metadata: dict = field(default_factory=dict, hash=False, compare=False)
    # Where hits can point inside the document: the offset in `text` where each page begins (PDF),
    # and (offset, URL fragment) of each linkable heading (HTML ids, Notion blocks, slugs).
    pages: tuple[int, ...] = ()
    anchors: tuple[tuple[int, str], ...] = ()
    # What the fetch that produced this version knew; volatile, so in neither hash. HTTP
    # validators for web pages; Notion's last_edited_time in `last_modified`; `links` are where
    # a crawl goes from here (Notion: `page:<id>` / `database:<id>`), so an unchanged page need
    # not be fetched again to be followed.
    etag: str | None = None
    last_modified: str | None = None
    fetched_at: datetime | None = None
    links: tuple[str, ...] = ()
    # Wall time to fetch and extract it this run (rate-limit and per-host waits included): the
    # report's slowest documents. None for a version read back from a generation.
    fetch_seconds: float | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if self.title and len(self.title) > MAX_TITLE_CHARS:
            object.__setattr__(self, "title", shortened(self.title))

    @property
    def content_hash(self) -> str:
        return content_hash(self.doc_id, self.text)

    @property
    def metadata_hash(self) -> str:
        return metadata_hash(self)


@dataclass(frozen=True)
class FetchState:
    """The fetch-time fields of a document's stored version, handed to its source on the next run."""

    etag: str | None = None
    last_modified: str | None = None
    fetched_at: datetime | None = None
    links: tuple[str, ...] = ()


class Chunk:
    """A span of a document's text, `text == document.text[start:end]`.

    A chunk cut from a document (`Chunk.within`) holds the document's text, not a copy of its
    span: `text` slices it on each use. 108k chunks of 10,000 documents held ~190 MB of copies
    for the whole run, most of it while nothing read them. Immutable, compared by value.
    """

    __slots__ = ("doc_id", "ordinal", "start", "end", "heading_path", "token_count", "_text", "_document", "_hash")

    def __init__(self, doc_id: str, ordinal: int, start: int, end: int, text: str | None, heading_path: tuple[str, ...], token_count: int,
                 *, document: str | None = None):
        for name, value in (("doc_id", doc_id), ("ordinal", ordinal), ("start", start), ("end", end), ("_text", text),
                            ("heading_path", heading_path), ("token_count", token_count), ("_document", document), ("_hash", None)):
            object.__setattr__(self, name, value)

    @classmethod
    def within(cls, document, doc_id: str, ordinal: int, start: int, end: int, heading_path: tuple[str, ...], token_count: int) -> "Chunk":
        """The span start:end of the text `document` (a str, or a text kept on disk: indexer/textspill.py), without copying it."""
        return cls(doc_id, ordinal, start, end, None, heading_path, token_count, document=document)

    @property
    def text(self) -> str:
        return self._text if self._text is not None else self._document[self.start : self.end]

    @property
    def chunk_hash(self) -> str:
        """Computed once: asked for several times per chunk in a run (cache lookups, rows, dedup).
        Kept as the 32-byte digest, not its 64 hex digits: 5 MB less for 108k chunks."""
        if self._hash is None:
            object.__setattr__(self, "_hash", hashlib.sha256(self.text.encode("utf-8")).digest())
        return self._hash.hex()

    def _key(self) -> tuple:
        return (self.doc_id, self.ordinal, self.start, self.end, self.text, self.heading_path, self.token_count)

    def __eq__(self, other: object) -> bool:
        return self._key() == other._key() if isinstance(other, Chunk) else NotImplemented

    def __hash__(self) -> int:
        return hash(self._key())

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"Chunk is immutable: cannot set {name}")

    def __repr__(self) -> str:
        return (f"Chunk(doc_id={self.doc_id!r}, ordinal={self.ordinal}, start={self.start}, end={self.end}, text={self.text!r}, "
                f"heading_path={self.heading_path!r}, token_count={self.token_count})")


class ChunkTexts(Sequence):
    """The texts of `chunks` as a sequence, each cut from its document when asked for: a list of
    them all held ~200 MB while 10,000 documents were embedded, and again while their postings were
    built. With `titles` (doc_id → title), each as the lexical index reads it: `lexical.indexed_text`."""

    def __init__(self, chunks: list[Chunk], titles: Mapping[str, str] | None = None):
        self.chunks = chunks
        self.titles = titles

    def __len__(self) -> int:
        return len(self.chunks)

    def __getitem__(self, i):
        return [self._text(c) for c in self.chunks[i]] if isinstance(i, slice) else self._text(self.chunks[i])

    def _text(self, chunk: Chunk) -> str:
        if self.titles is None:
            return chunk.text
        return indexed_text(self.titles.get(chunk.doc_id, ""), chunk.heading_path, chunk.text)


def utc_aware(value: datetime | None) -> datetime | None:
    """A timestamp stored as naive UTC, back as an aware one (aware ones pass unchanged)."""
    return value.replace(tzinfo=timezone.utc) if value is not None and value.tzinfo is None else value


def utc_naive(value: datetime | None) -> datetime | None:
    """Timestamps are stored as naive UTC; convert aware values, keep naive ones (already UTC)."""
    if value is not None and value.tzinfo is not None:
        value = value.astimezone(timezone.utc).replace(tzinfo=None)
    return value


def sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def content_hash(doc_id: str, text: str) -> str:
    """The seed's stableHash(canonicalId + plainText)."""
    return sha256_hex(f"{doc_id}\n{text}")


def metadata_hash(doc: Document) -> str:
    canonical = {
        "title": doc.title,
        "url": doc.url,
        "tags": list(doc.tags),
        "authors": list(doc.authors),
        # In UTC, so a document read back from a generation (stored as UTC) hashes the same.
        "updated_at": utc_naive(doc.updated_at).isoformat() if doc.updated_at else None,
        "metadata": doc.metadata,
    }
    # Only when present, so documents without them hash as they did before these existed.
    if doc.pages:
        canonical["pages"] = list(doc.pages)
    if doc.anchors:
        canonical["anchors"] = [list(a) for a in doc.anchors]
    return sha256_hex(json.dumps(canonical, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str))


def chunk_id(space_id: str, doc_id: str, ordinal: int, chunk_hash: str) -> str:
    """A URL-safe id that stays the same while the chunk's text and position stay the same."""
    return sha256_hex(f"{space_id}\n{doc_id}\n{ordinal}\n{chunk_hash}")[:24]
