"""Errors as values: every failure has a code, the step it happened in, and whether retrying may help."""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

# A lone UTF-16 surrogate: what JSON's "\ud800" decodes to, and what a file name's bytes that are not
# UTF-8 become in Python. Neither JSON nor DuckDB stores one.
SURROGATE = re.compile("[\ud800-\udfff]")


def mended(text: str) -> str:
    """`text` itself when it holds no lone surrogate; else a copy with each one replaced by U+FFFD."""
    return text if text.isascii() or not SURROGATE.search(text) else SURROGATE.sub("\ufffd", text)


class ErrorCode(StrEnum):
    WEB_FETCH_FAILED = "WEB_FETCH_FAILED"  # network error, timeout, refused connection
    WEB_HTTP_STATUS = "WEB_HTTP_STATUS"  # the server answered with a non-2xx status
    WEB_ADDRESS_REFUSED = "WEB_ADDRESS_REFUSED"  # the host (or a redirect's) resolves to a private, loopback, link-local… address
    WEB_ROBOTS_DISALLOWED = "WEB_ROBOTS_DISALLOWED"  # robots.txt forbids the page to our agent; not fetched
    WEB_TOO_LARGE = "WEB_TOO_LARGE"  # the response passed the byte cap; the rest was not downloaded
    WEB_FILES_UNREAD = "WEB_FILES_UNREAD"  # warning: a crawl found links to office files of formats we do not read (.pptx, .xlsx…); not fetched
    WEB_REDIRECTED_AWAY = "WEB_REDIRECTED_AWAY"  # warning: a crawled link redirects to another site (a sign-in page, a profile); not indexed (an indexed version is removed)
    WEB_UNSUPPORTED_TYPE = "WEB_UNSUPPORTED_TYPE"  # warning: not HTML, plain text, Markdown, PDF, an office document or EPUB (an image, a zip…); skipped unread
    WEB_GONE = "WEB_GONE"  # warning: HTTP 410, the site removed the page for good; not indexed (an indexed version is removed)
    WEB_REFRESH = "WEB_REFRESH"  # warning: a redirect stub (<meta http-equiv="refresh"> to another page); not indexed, its target followed
    WEB_LASTMOD_STALE = "WEB_LASTMOD_STALE"  # warning: pages had changed though their sitemap's lastmod said not; their changes wait for a reread
    WEB_NOINDEX = "WEB_NOINDEX"  # warning: the page's robots meta or X-Robots-Tag says noindex; not indexed (an indexed version is removed)
    NOTION_OBJECT_NOT_FOUND = "NOTION_OBJECT_NOT_FOUND"  # 404: deleted, or not shared with the integration
    NOTION_FORBIDDEN = "NOTION_FORBIDDEN"  # 403: the integration lacks a capability for it
    NOTION_RATE_LIMITED = "NOTION_RATE_LIMITED"  # still 429 after every retry
    NOTION_REQUEST_FAILED = "NOTION_REQUEST_FAILED"  # 5xx, timeouts, connection errors after retries; other 4xx
    NOTION_BLOCK_UNSUPPORTED = "NOTION_BLOCK_UNSUPPORTED"  # warning: a block type we do not read (or cannot), skipped
    NOTION_DRAFT = "NOTION_DRAFT"  # warning: a database row whose properties mark it a draft; not indexed (an indexed version is removed)
    FILE_EXTRACTION_EMPTY = "FILE_EXTRACTION_EMPTY"  # extraction found no text
    FILE_EXTRACTION_FAILED = "FILE_EXTRACTION_FAILED"  # the file could not be read or parsed
    ANSWER_INVALID = "ANSWER_INVALID"  # a curated answer without a question or an answer, or a repeated id; left out
    PDF_ENCRYPTED = "PDF_ENCRYPTED"  # the PDF needs a password to open; not indexed
    PDF_NO_TEXT = "PDF_NO_TEXT"  # warning: a PDF without a text layer (a scan); not indexed
    FILE_TOO_LARGE = "FILE_TOO_LARGE"  # a file past the source's max_bytes; not read
    FILE_OUTSIDE_SOURCE = "FILE_OUTSIDE_SOURCE"  # warning: a symlink leading out of the source folder; not followed
    FILE_LFS_POINTER = "FILE_LFS_POINTER"  # the file is a Git LFS pointer: its content was not fetched (`git lfs pull`); keeps its last good version
    FILE_TYPE_UNREAD = "FILE_TYPE_UNREAD"  # warning: an office file of a format we do not read (.pages, .numbers…); not indexed
    FILE_LINK_BROKEN = "FILE_LINK_BROKEN"  # warning: a symlink to a file that does not exist; not indexed (an indexed version is removed)
    FILE_DRAFT = "FILE_DRAFT"  # warning: front matter marks the file a draft; not indexed (an indexed version is removed)
    FILE_NAVIGATION = "FILE_NAVIGATION"  # warning: a wiki sidebar, a table of contents or a pip requirements file, not a page; not indexed (an indexed version is removed)
    URL_REFUSED = "URL_REFUSED"  # warning: a page's or answer's own url (front matter, answers file) is no http(s), mailto: or tel: link nor a path (javascript:…); indexed without it
    TEXT_NOT_UNICODE = "TEXT_NOT_UNICODE"  # warning: a document held lone UTF-16 surrogates (an API's "\ud800"); each became U+FFFD
    CHUNKING_FAILED = "CHUNKING_FAILED"
    EMBEDDINGS_FAILED = "EMBEDDINGS_FAILED"  # the provider would not embed a document's chunks, even after retries
    SOURCE_LISTING_FAILED = "SOURCE_LISTING_FAILED"  # a whole source could not be listed
    SOURCE_EMPTY = "SOURCE_EMPTY"  # warning: a source listed in full found nothing to index (an empty folder, an answers file of no answers)
    SOURCE_LIMIT_REACHED = "SOURCE_LIMIT_REACHED"  # warning: a source had more pages than max_pages; the rest were left out
    DUPLICATE_DOCUMENT = "DUPLICATE_DOCUMENT"  # two sources produced the same doc_id; the first wins
    GENERATION_UNREADABLE = "GENERATION_UNREADABLE"  # warning: CURRENT names no readable generation; the run builds on an older kept one, or starts afresh
    LANGUAGE_HINT = "LANGUAGE_HINT"  # warning: most of the new text reads as another language than the config's `language` (keyword search stems it as that)
    NO_ROOM = "NO_ROOM"  # warning of a dry run: the artifacts' disk has less free than the run would write (a run stops before embedding)


@dataclass(frozen=True)
class IngestError:
    """One failed document (or source listing), recorded in the run report and in `source_events`.

    `level = "warning"` marks something a run chose not to index (an image link, pages past
    `max_pages`): reported and stored, but not a failure (no exit 4). A document indexed before
    that is now skipped with a warning keeps its last good version, as a failed one does.
    """

    code: ErrorCode
    step: str
    message: str
    retryable: bool = False
    doc_id: str | None = None
    source: str | None = None
    level: str = "error"
    failing_since: str | None = None  # an error: when the published runs it failed in, in a row, began (ISO 8601, UTC)
    failed_runs: int = 1  # how many published runs in a row it failed in, this one included

    def __post_init__(self):
        """A name in another encoding (a file's, not UTF-8) carries lone surrogates, which neither
        JSON nor the database stores: an error naming such a file failed the whole run's record.
        Each becomes U+FFFD, as in the document itself (indexer.sources.valid_unicode)."""
        for name in ("message", "doc_id"):
            if value := getattr(self, name):
                object.__setattr__(self, name, mended(value))

    def as_dict(self) -> dict:
        return {
            "code": str(self.code),
            "step": self.step,
            "message": self.message,
            "retryable": self.retryable,
            "doc_id": self.doc_id,
            "source": self.source,
            "level": self.level,
            **({"failing_since": self.failing_since, "failed_runs": self.failed_runs} if self.level == "error" else {}),
        }


class StaticRagError(Exception):
    """A fatal error with a message meant for the person running the command."""


class ConfigError(StaticRagError):
    """The configuration file is missing, unreadable or invalid."""


class ArtifactError(StaticRagError):
    """An artifacts folder or generation is missing, incomplete or corrupt."""


class PublishRefused(StaticRagError):
    """The generation failed its pre-publish checks; nothing was published."""


class MissingDependency(StaticRagError):
    """An optional dependency is not installed; the message says what to install."""


class ExtractionError(ValueError):
    """The input could not be parsed. `code` names the problem when it is more specific than
    "extraction failed" (an encrypted PDF); `level = "warning"` when the file is fine but has no
    text we can read (a scan)."""

    def __init__(self, message: str, code=None, level: str = "error"):
        super().__init__(message)
        self.code, self.level = code, level
