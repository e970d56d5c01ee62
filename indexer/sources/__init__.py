"""Sources list and extract documents. One bad document becomes an `IngestError`, never an exception."""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from datetime import datetime
from typing import TYPE_CHECKING, Callable

from indexer.config import DEFAULT_EXTENSIONS, SourceConfig, env_url
from indexer.documents import Document, FetchState, refused_link
from indexer.errors import SURROGATE, ErrorCode, IngestError, mended

if TYPE_CHECKING:  # files.py imports this module
    from indexer.sources.files import Listing


@dataclass
class SourceResult:
    """What one source produced. `listing_complete` is False when the source could not be listed in full (nothing of it is then deleted)."""

    source: str
    documents: list[Document] = field(default_factory=list)
    errors: list[IngestError] = field(default_factory=list)
    warnings: list[IngestError] = field(default_factory=list)  # level "warning": reported, not failures
    listing_complete: bool = True
    not_modified: list[str] = field(default_factory=list)  # doc_ids known unchanged without a download (HTTP 304, Notion's last_edited_time)
    retries: int = 0  # fetches tried again after a retryable failure (web pages)
    moved: dict[str, str] = field(default_factory=dict)  # doc_id asked for → doc_id found there (a redirect, a canonical link)
    why_gone: dict[str, tuple[str, str]] = field(default_factory=dict)  # doc_id indexed before, not reached now → (code, why): the guard's message
    by_lastmod: dict[str, str] = field(default_factory=dict)  # doc_id not requested: its sitemap lastmod (as written) says it is unchanged
    lastmod_checked: dict[str, str] = field(default_factory=dict)  # doc_id read again although its lastmod vouched for it → what it said
    confirmed: dict[str, datetime] = field(default_factory=dict)  # doc_id that answered 304 though its lastmod moved → when: its new fetched_at
    could_spare: int = 0  # pages asked for that the sitemap's lastmod vouched for (trust_lastmod off): the hint to turn it on
    keep: Callable[[Document], Document] | None = field(default=None, repr=False, compare=False)  # where documents' texts wait (indexer/textspill.py)

    def add(self, document: Document) -> None:
        """A document read: into `documents`, its text put where `keep` says as soon as it is read.
        Text that is not Unicode (a lone surrogate, which JSON can carry) is mended here, with a
        warning: it could be neither hashed nor stored, and the whole run failed on it. So is, for
        every source, an own url no reader may follow (`javascript:` in front matter or an answers
        file): left out with a URL_REFUSED warning, as the widget would have made it a link."""
        document, changed = valid_unicode(document)
        if changed:
            self.warnings.append(IngestError(
                ErrorCode.TEXT_NOT_UNICODE, "extract",
                f"{document.doc_id}: its {' and '.join(changed)} held lone UTF-16 surrogates (not Unicode); each became U+FFFD",
                doc_id=document.doc_id, source=self.source, level="warning"))
        if refused_link(document.url):
            self.warnings.append(IngestError(
                ErrorCode.URL_REFUSED, "extract",
                f"{document.doc_id}: its url {document.url!r} is no http(s), mailto: or tel: link nor a path; indexed without it",
                doc_id=document.doc_id, source=self.source, level="warning"))
            document = replace(document, url=None)
        self.documents.append(self.keep(document) if self.keep else document)


_VOLATILE = {"fetched_at", "fetch_seconds"}  # never text


def valid_unicode(document: Document) -> tuple[Document, list[str]]:
    """`document` with every lone surrogate in its strings (text, title, metadata…) replaced by
    U+FFFD, and the names of the fields that had one. A Python string holds a surrogate only when
    it came unpaired (json.loads("\"\\ud800\"")): a valid pair is decoded to one character."""
    if _unicode(document):
        return document, []
    changes = {}
    for f in fields(document):
        if f.name in _VOLATILE:
            continue
        value = getattr(document, f.name)
        mended = _mend(value)
        if mended is not value:
            changes[f.name] = mended
    return (replace(document, **changes) if changes else document), list(changes)


def _unicode(d: Document) -> bool:
    """Whether no string of `d` holds a surrogate, found fast: mending every field of every
    document was 0.13 s of a crawl of 10,000 files that takes 0.2 s when none changed."""
    small = "".join([d.doc_id, d.source, d.source_type, d.title, d.url or "", d.path or "", d.etag or "", d.last_modified or "",
                     *d.tags, *d.authors, *d.links, *(slug for _, slug in d.anchors)])
    return all(s.isascii() or not SURROGATE.search(s) for s in (small, d.text)) and (not d.metadata or _mend(d.metadata) is d.metadata)


def _mend(value):
    """`value` itself when it holds no surrogate; else a copy with each one replaced."""
    if isinstance(value, str):
        return mended(value)
    if isinstance(value, (tuple, list)):
        items = [_mend(v) for v in value]
        return type(value)(items) if any(a is not b for a, b in zip(items, value)) else value
    if isinstance(value, dict):
        pairs = [(_mend(k), _mend(v)) for k, v in value.items()]
        return dict(pairs) if any(k is not a or v is not b for (k, v), (a, b) in zip(pairs, value.items())) else value
    return value


def crawl(source: SourceConfig, progress=None, fetch_state: dict[str, FetchState] | None = None, listing: Listing | None = None,
          keep: Callable[[Document], Document] | None = None, last_run: datetime | None = None) -> SourceResult:
    """Read every document of `source`. `progress(n)` is called as documents are done.

    `fetch_state` (doc_id → what the previous run's fetch knew) makes web fetches conditional and
    lets crawls follow an unchanged page's links without fetching it. `listing`: a files source's
    `listed_files`, when the caller listed them already. `keep` takes each document as it is read
    and returns the one to hold on to (indexer/textspill.py `TextSpill.keep`: its text on disk).
    `last_run`: when the last run that came to its end started (web pages' weekly turns).
    """
    if source.type == "files":
        from indexer.sources.files import crawl_files

        return crawl_files(source, progress, fetch_state or {}, listing, keep=keep)
    if source.type == "urls":
        from indexer.sources.web import crawl_urls

        return crawl_urls(source, progress, fetch_state or {}, keep=keep, last_run=last_run)
    if source.type == "notion":
        from indexer.sources.notion import crawl_notion

        return crawl_notion(source, progress, fetch_state or {}, keep=keep)
    if source.type == "answers":
        from indexer.sources.answers import crawl_answers

        return crawl_answers(source, progress, fetch_state or {}, keep=keep)
    raise ValueError(f"unknown source type {source.type!r}")


def limit_reached(source: SourceConfig, how: str = "") -> IngestError:
    """The warning a source gives when it has more pages than `max_pages` (`how`: listed, found by the crawl)."""
    from indexer.errors import ErrorCode

    fix = "raise max_pages to include them" + (", or leave pages out with include / exclude" if source.type == "urls" else "")
    message = f"more pages {how + ' ' if how else ''}than max_pages = {source.max_pages}; the rest are not indexed ({fix})"
    return IngestError(ErrorCode.SOURCE_LIMIT_REACHED, "list", message, source=source.name, level="warning")


def found_nothing(source: SourceConfig, result: SourceResult) -> IngestError | None:
    """A SOURCE_EMPTY warning for a source that listed in full and found nothing, said nothing about
    why, and knows of no unchanged document: a run that published the other sources' documents gave
    no hint that an empty folder or a header-only CSV added none."""
    if result.documents or result.not_modified or result.errors or result.warnings or not result.listing_complete:
        return None
    if source.type == "files":
        formats = "a format it reads" if tuple(source.extensions) == DEFAULT_EXTENSIONS else f"its extensions ({', '.join(source.extensions)})"
        why = f"{source.path} holds no file of {formats} that is not hidden or ignored by git"
    else:
        why = {"answers": f"{source.path.name if source.path else 'its database'} holds no answers",
               "urls": "its sitemaps and crawl led to no page inside include / exclude",
               "notion": "its roots hold no page shared with the integration"}[source.type]
    return IngestError(ErrorCode.SOURCE_EMPTY, "list", f"{source.name}: found nothing to index: {why}", source=source.name, level="warning")


def check_credentials(sources: list[SourceConfig] | tuple[SourceConfig, ...]) -> None:
    """A ConfigError, before anything is fetched, when a source needs a secret the environment lacks."""
    import os

    from indexer.errors import ConfigError

    for source in sources:
        if (source.type == "notion" or source.database) and not os.environ.get("NOTION_TOKEN", "").strip():
            raise ConfigError(f"source {source.name!r} reads Notion: set NOTION_TOKEN to the integration's secret (notion.so/profile/integrations)")
        if source.type == "notion" or source.database:
            env_url("NOTION_BASE_URL")


def listed_files(source: SourceConfig) -> Listing | None:
    """A files source's folder, listed once for both the progress bar's total and the crawl (listing
    10,000 files twice was ~0.06 s of a 0.95 s run that changed nothing); None for other sources."""
    if source.type != "files":
        return None
    from indexer.sources.files import list_files, not_a_folder

    return list_files(source) if not_a_folder(source.path) is None else None


def count_items(source: SourceConfig, listing: Listing | None = None) -> int | None:
    """How many items `crawl` will visit, for a progress bar (None: known only after listing sitemaps)."""
    if source.type == "files":
        listing = listing if listing is not None else listed_files(source)
        return len(listing.paths) if listing is not None else 0
    if source.type in ("notion", "answers"):
        return None  # known only once the workspace has been walked or the file read
    return None if source.sitemaps or source.crawl else len(source.urls)
