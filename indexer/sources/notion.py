"""Notion pages and database rows as documents, through `notion-client`. doc_id = `notion:<page uuid>`.

One search sweep first lists every page the integration can see with its `last_edited_time`
(100 per request), so pages need no request of their own. Traversal is then breadth-first from
the configured roots (pages or databases) and iterative: child
pages, child databases and their rows, and — with `follow_links` — pages a `link_to_page` block or
a page mention points at, up to `max_depth` hops and `max_pages` pages, each page once.

A page whose `last_edited_time` equals the one stored with its last fetch is not fetched again
(no block requests): its stored text is kept and its stored links are followed. Notion rounds
`last_edited_time` down to the minute, so a page fetched less than SETTLE after that time may have
changed within the same minute: it is fetched again and compared by hash.

Every request goes through one process-wide token bucket (`requests_per_second`, default 3, the
API's documented average) and our own retries: a 429 waits its Retry-After (and holds back every
other request) for as long as RATE_LIMIT_PATIENCE allows, 5xx answers, timeouts and connection errors back off exponentially
(or as long as a 503's Retry-After asks), and an expired or invalid cursor restarts that listing.
"""

from __future__ import annotations

import logging
import os
import random
import re
import threading
import time
from collections import deque
from dataclasses import dataclass, replace
from datetime import datetime, timedelta, timezone

import httpx

from indexer.config import SourceConfig, env_url
from indexer.documents import Document, FetchState
from indexer.errors import ConfigError, ErrorCode, IngestError
from indexer.extract import first_heading, parse_timestamp
from indexer.retrying import retry_after_seconds
from indexer.sources import SourceResult, check_credentials, limit_reached
from indexer.sources.notion_render import page_title, plain_text, render_page

NOTION_VERSION = "2025-09-03"  # databases are read through their data sources from this version on
DEFAULT_BASE_URL = "https://api.notion.com"
SETTLE = timedelta(minutes=3)  # last_edited_time is rounded to the minute; allow for clock skew too
BURST = 3  # requests the token bucket lets through at once
MAX_ATTEMPTS = 6  # per request, for 5xx / timeouts / connection errors
MAX_RETRY_AFTER = 60.0  # one 429's wait, whatever its Retry-After says
RATE_LIMIT_PATIENCE = 300.0  # seconds one request waits out 429s in all before its page fails
MIN_RATE_LIMIT_CHARGE = 0.25  # what a 429 with Retry-After 0 costs that patience
MAX_LISTING_RESTARTS = 3  # an expired cursor restarts its listing at most this often
ID = re.compile(r"([0-9a-f]{8})-?([0-9a-f]{4})-?([0-9a-f]{4})-?([0-9a-f]{4})-?([0-9a-f]{12})(?![0-9a-f])", re.IGNORECASE)
HINT = "share the page with the integration (… menu → Connections)"
logger = logging.getLogger(__name__)


def notion_id(value: str) -> str | None:
    """The dashed, lowercase id in a Notion id or page URL (the last 32-hex group of its path: a
    `?v=` view or a `#` block link names something inside the page), or None."""
    found = ID.findall(re.split(r"[?#]", value, maxsplit=1)[0])
    return "-".join(found[-1]).lower() if found else None


def _title_or_heading(title: str, text: str) -> str:
    """An untitled page (Notion shows "Untitled") is named by its first heading, as other formats are."""
    return (title != "Untitled" and title) or first_heading(text) or title


class RateLimiter:
    """A token bucket shared by every Notion request of the process: `rate` per second on
    average, `burst` at once. `hold(seconds)` stops everyone (a 429's Retry-After)."""

    def __init__(self, rate: float = 3.0, burst: int = BURST):
        self.rate, self.burst = rate, burst
        self.tokens, self.updated, self.held_until = float(burst), time.monotonic(), 0.0
        self.lock = threading.Lock()

    def acquire(self) -> None:
        while True:
            with self.lock:
                now = time.monotonic()
                self.tokens = min(self.burst, self.tokens + (now - self.updated) * self.rate)
                self.updated = now
                wait = max(self.held_until - now, (1 - self.tokens) / self.rate if self.tokens < 1 else 0.0)
                if wait <= 0:
                    self.tokens -= 1
                    return
            time.sleep(wait)

    def hold(self, seconds: float) -> None:
        with self.lock:
            self.held_until = max(self.held_until, time.monotonic() + seconds)
            self.tokens = 0.0


LIMITER = RateLimiter()  # one per process: the API's limit is per integration, not per source


class _Limited(httpx.BaseTransport):
    def __init__(self, inner: httpx.BaseTransport, limiter: RateLimiter):
        self.inner, self.limiter = inner, limiter

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.limiter.acquire()
        return self.inner.handle_request(request)

    def close(self) -> None:
        self.inner.close()


class NotionFailure(Exception):
    """A request that failed for good: its error code, message and whether a later run may succeed."""

    def __init__(self, code: ErrorCode, message: str, retryable: bool = False, status: int | None = None):
        super().__init__(message)
        self.code, self.retryable, self.status = code, retryable, status


class NotionAPI:
    """The calls the crawler makes, with the limiter, retries and cursor handling around notion-client."""

    def __init__(self, token: str, base_url: str, timeout_seconds: float, limiter: RateLimiter = LIMITER):
        from notion_client import Client

        self.limiter = limiter
        self.requests = 0
        quiet = logging.getLogger("static_rag.notion_client")  # notion-client logs every failed attempt at WARNING
        quiet.setLevel(logging.CRITICAL)
        http = httpx.Client(transport=_Limited(httpx.HTTPTransport(), limiter))
        self.client = Client(
            client=http, auth=token, base_url=base_url.rstrip("/"), notion_version=NOTION_VERSION,
            timeout_ms=int(timeout_seconds * 1000), retry=False, logger=quiet, log_level=logging.CRITICAL,
        )

    def close(self) -> None:
        self.client.close()

    def page(self, page_id: str) -> dict:
        return self._call(self.client.pages.retrieve, page_id=page_id)

    def database(self, database_id: str) -> dict:
        return self._call(self.client.databases.retrieve, database_id=database_id)

    def children(self, block_id: str) -> list[dict]:
        return self._listing(self.client.blocks.children.list, block_id=block_id)

    def rows(self, data_source_id: str) -> list[dict]:
        return self._listing(self.client.data_sources.query, data_source_id=data_source_id)

    def shared_pages(self) -> dict[str, dict]:
        """Every page the integration can see, 100 per request, as full page objects (with
        last_edited_time): one sweep instead of a GET per page."""
        return {page["id"]: page for page in self._listing(self.client.search, filter={"property": "object", "value": "page"})}

    def _listing(self, method, **kwargs) -> list[dict]:
        """Every result of a paginated listing. An expired or invalid cursor restarts it from the top."""
        for _ in range(MAX_LISTING_RESTARTS + 1):
            results: dict[str, dict] = {}
            cursor = None
            try:
                while True:
                    page = self._call(method, page_size=100, **({"start_cursor": cursor} if cursor else {}), **kwargs)
                    results.update((item["id"], item) for item in page.get("results", []))
                    cursor = page.get("next_cursor") if page.get("has_more") else None
                    if not cursor:
                        return list(results.values())
            except NotionFailure as exc:
                if not (cursor and exc.status == 400):
                    raise
                logger.info("Notion listing cursor refused (%s); restarting the listing", exc)
        raise NotionFailure(ErrorCode.NOTION_REQUEST_FAILED, f"listing kept failing on its cursor after {MAX_LISTING_RESTARTS} restarts", retryable=True)

    def _call(self, method, **kwargs) -> dict:
        """One API call with its retries. A 429 is the API asking us to slow down, not a failure:
        it waits its Retry-After and does not use up an attempt, up to RATE_LIMIT_PATIENCE seconds
        of waiting for this call. 5xx answers, timeouts and connection errors get MAX_ATTEMPTS, each
        after the pause `_pause` gives."""
        from notion_client import APIResponseError
        from notion_client.errors import HTTPResponseError, RequestTimeoutError

        attempts, waited = 0, 0.0
        while True:
            self.requests += 1
            try:
                return method(**kwargs)
            except APIResponseError as exc:
                status, headers, message = exc.status, exc.headers, f"{getattr(exc.code, 'value', exc.code)}: {exc}"
            except HTTPResponseError as exc:  # a non-JSON error body (a proxy's 502 page)
                status, headers, message = exc.status, exc.headers, f"HTTP {exc.status}"
            except RequestTimeoutError:
                status, headers, message = None, None, "timed out"
            except httpx.TransportError as exc:
                status, headers, message = None, None, f"{type(exc).__name__}: {exc}"
            if status == 429:
                hinted = retry_after_seconds(headers)
                wait = min(1.0 if hinted is None else hinted, MAX_RETRY_AFTER)
                waited += max(wait, MIN_RATE_LIMIT_CHARGE)  # a Retry-After of 0 still spends patience
                if waited > RATE_LIMIT_PATIENCE:
                    raise NotionFailure(ErrorCode.NOTION_RATE_LIMITED, f"{message} (still rate limited after waiting {RATE_LIMIT_PATIENCE:.0f} s)",
                                        retryable=True, status=status)
                self.limiter.hold(wait)  # everyone waits, not just this request
                time.sleep(wait)
                continue
            if status == 401:
                raise ConfigError(f"Notion refused NOTION_TOKEN ({message}); set it to the integration's secret")
            if status is not None and status < 500:
                raise NotionFailure(_code(status), message, status=status)
            attempts += 1
            if attempts == MAX_ATTEMPTS:
                raise NotionFailure(ErrorCode.NOTION_REQUEST_FAILED, f"{message} (gave up after {MAX_ATTEMPTS} attempts)", retryable=True, status=status)
            time.sleep(_pause(attempts, retry_after_seconds(headers)))


def _pause(attempts: int, hinted: float | None) -> float:
    """Before another attempt after a 5xx, a timeout or a lost connection: what a 503's Retry-After
    asks for (a maintenance window says how long), as the web and embedding clients do; else
    exponential backoff from 0.25 s, with jitter."""
    if hinted is not None:
        return min(max(hinted, 0.0), MAX_RETRY_AFTER)
    return min(0.25 * 2 ** (attempts - 1), 8.0) * (1 + random.random() / 2)


def _code(status: int) -> ErrorCode:
    return {404: ErrorCode.NOTION_OBJECT_NOT_FOUND, 403: ErrorCode.NOTION_FORBIDDEN}.get(status, ErrorCode.NOTION_REQUEST_FAILED)


@dataclass(frozen=True)
class Visit:
    kind: str  # page | database
    id: str
    depth: int
    page: dict | None = None  # a database row arrives with its page object: no GET needed


def crawl_notion(source: SourceConfig, progress=None, fetch_state: dict[str, FetchState] | None = None, api: NotionAPI | None = None, *,
                 keep=None) -> SourceResult:
    """Every page reachable from the roots, within the limits, as documents."""
    result = SourceResult(source=source.name, keep=keep)
    token = os.environ.get("NOTION_TOKEN", "").strip()
    if api is None:
        check_credentials([source])
    LIMITER.rate = source.requests_per_second
    api = api or NotionAPI(token, env_url("NOTION_BASE_URL", DEFAULT_BASE_URL), source.timeout_seconds)
    try:
        _traverse(api, source, fetch_state or {}, result, progress)
    finally:
        api.close()
    logger.info("%s: %d Notion requests", source.name, api.requests)
    return result


def _traverse(api: NotionAPI, source: SourceConfig, fetch_state: dict[str, FetchState], result: SourceResult, progress) -> None:
    queue = deque(Visit("page", root, 0) for root in source.roots)
    try:
        known = api.shared_pages()
    except NotionFailure as exc:  # only a shortcut: pages are then fetched one by one
        logger.warning("%s: Notion search failed (%s); fetching pages one by one", source.name, exc)
        known = {}
    seen: set[tuple[str, str]] = set()
    pages = 0
    warned_limit = False
    root_ids = set(source.roots)
    while queue:
        visit = queue.popleft()
        if (visit.kind, visit.id) in seen or visit.depth > source.max_depth:
            continue
        seen.add((visit.kind, visit.id))
        if visit.kind == "database":
            _visit_database(api, source, visit, queue, result)
            continue
        if pages >= source.max_pages:
            if not warned_limit:
                result.warnings.append(limit_reached(source))
                warned_limit = True
            continue
        doc_id = f"notion:{visit.id}"
        state = fetch_state.get(doc_id)
        try:
            page = visit.page or known.get(visit.id) or api.page(visit.id)  # search results can lag behind: then a GET
        except NotionFailure as exc:
            if exc.status in (400, 404) and visit.id in root_ids and visit.depth == 0:
                queue.appendleft(Visit("database", visit.id, 0))  # a root may name a database
                continue
            pages += 1
            result.errors.append(_error(exc, doc_id, source.name, visit.id))
            _follow(queue, state.links if state else (), visit.depth)  # what it led to last time stays reachable
            if progress:
                progress(1)
            continue
        pages += 1
        if progress:
            progress(1)
        if page.get("in_trash") or page.get("archived"):
            continue  # not listed: the plan deletes its stored version
        draft = None if source.include_drafts else draft_property(page.get("properties") or {})
        if draft:  # as the trash: not listed, and said
            result.warnings.append(IngestError(
                ErrorCode.NOTION_DRAFT, "fetch", f"page {visit.id}: its {draft}, so it is a draft; not indexed (set include_drafts = true to index drafts)",
                doc_id=doc_id, source=source.name, level="warning"))
            continue
        edited = page.get("last_edited_time")
        if state is not None and _unchanged(state, edited):
            result.not_modified.append(doc_id)
            _follow(queue, state.links, visit.depth)
            continue
        started = time.perf_counter()
        try:
            document, warnings = _read_page(api, source, page)
        except NotionFailure as exc:
            result.errors.append(_error(exc, doc_id, source.name, visit.id))
            _follow(queue, state.links if state else (), visit.depth)
            continue
        except Exception as exc:  # a page the renderer cannot read is that page's error, never the run's
            result.errors.append(IngestError(ErrorCode.FILE_EXTRACTION_FAILED, "extract", f"page {visit.id}: {type(exc).__name__}: {exc}",
                                             doc_id=doc_id, source=source.name))
            _follow(queue, state.links if state else (), visit.depth)
            continue
        result.warnings.extend(warnings)
        result.add(replace(document, fetch_seconds=time.perf_counter() - started))
        _follow(queue, document.links, visit.depth)


# A database row the team has not published, as a site built from the database (Notion Sites, Super,
# Feather, a blog template) leaves it out: a `Draft` checkbox ticked, a `Published` one not, or a
# `Status` of Draft.
DRAFT_CHECKED, PUBLISHED_CHECKED = {"draft"}, {"published", "public", "live"}
STATUS_PROPERTIES = {"status", "state", "stage", "publish status", "publication status"}
DRAFT_STATUSES = {"draft", "drafts", "unpublished", "not published"}


def draft_property(properties: dict) -> str | None:
    """The property that marks a database row a draft, said as a reader would ("Published box is unchecked"), or None."""
    for name, value in properties.items():
        key, kind = name.strip().lower(), (value or {}).get("type")
        if kind == "checkbox" and key in DRAFT_CHECKED and value.get("checkbox") is True:
            return f"{name} box is checked"
        if kind == "checkbox" and key in PUBLISHED_CHECKED and value.get("checkbox") is False:
            return f"{name} box is unchecked"
        if kind in ("select", "status") and key in STATUS_PROPERTIES:
            chosen = ((value.get(kind) or {}).get("name") or "").strip()
            if chosen.lower() in DRAFT_STATUSES:
                return f"{name} is {chosen}"
    return None


def _visit_database(api: NotionAPI, source: SourceConfig, visit: Visit, queue: deque, result: SourceResult) -> None:
    """A database's rows are pages at the database's own depth (the database is their container)."""
    try:
        database = api.database(visit.id)
        rows = [row for ds in database.get("data_sources", []) for row in api.rows(ds["id"])]
    except NotionFailure as exc:
        result.listing_complete = False  # its rows are unknown this run: delete nothing of this source
        result.errors.append(IngestError(
            ErrorCode.SOURCE_LISTING_FAILED if exc.code is not ErrorCode.NOTION_OBJECT_NOT_FOUND else exc.code, "list",
            f"database {visit.id}: {exc}" + (f" — {HINT}" if exc.status in (403, 404) else ""),
            retryable=exc.retryable, source=source.name,
        ))
        return
    title = plain_text(database.get("title", [])) or "Untitled database"
    for row in rows:
        queue.append(Visit("page", row["id"], visit.depth, page={**row, "_database": title}))


def _follow(queue: deque, links, depth: int) -> None:
    for link in links:
        kind, _, target = link.partition(":")
        queue.append(Visit(kind, target, depth + 1))


def _unchanged(state: FetchState, edited: str | None) -> bool:
    """Same last_edited_time as the stored version's, and that fetch happened long enough after
    it that an edit in the same (rounded) minute would have been seen."""
    if not edited or state.last_modified != edited or state.fetched_at is None:
        return False
    edited_at = parse_timestamp(edited)
    return edited_at is not None and state.fetched_at >= edited_at + SETTLE


def _error(exc: NotionFailure, doc_id: str, source: str, page_id: str) -> IngestError:
    hint = f" — {HINT}" if exc.code in (ErrorCode.NOTION_OBJECT_NOT_FOUND, ErrorCode.NOTION_FORBIDDEN) else ""
    return IngestError(exc.code, "fetch", f"page {page_id}: {exc}{hint}", retryable=exc.retryable, doc_id=doc_id, source=source)


def _read_page(api: NotionAPI, source: SourceConfig, page: dict) -> tuple[Document, list[IngestError]]:
    """A page's blocks (nested ones too, fetched iteratively) as text, and where it links."""
    top = api.children(page["id"])
    pending = [b for b in top if b.get("has_children")]
    unreadable: list[str] = []
    while pending:
        block = pending.pop()
        kind = block.get("type")
        if kind in ("child_page", "child_database"):
            continue  # their content belongs to their own documents
        origin = ((block.get(kind) or {}).get("synced_from") or {}).get("block_id") if kind == "synced_block" else None
        try:
            block["children"] = api.children(origin or block["id"])
        except NotionFailure as exc:
            if exc.status not in (403, 404):
                raise
            unreadable.append(f"{kind} {origin or block['id']}")  # e.g. a synced block whose original is not shared
            continue
        pending.extend(b for b in block["children"] if b.get("has_children"))
    text, links, unsupported, anchors = render_page(page, top, follow_links=source.follow_links)
    doc_id = f"notion:{page['id']}"
    warnings = [
        IngestError(ErrorCode.NOTION_BLOCK_UNSUPPORTED, "extract", f"page {page['id']}: {count} {kind} block(s) skipped: not a block type we read",
                    doc_id=doc_id, source=source.name, level="warning")
        for kind, count in sorted(unsupported.items())
    ] + [
        IngestError(ErrorCode.NOTION_BLOCK_UNSUPPORTED, "extract", f"page {page['id']}: {what} could not be read ({HINT}); skipped",
                    doc_id=doc_id, source=source.name, level="warning")
        for what in unreadable
    ]
    properties = page.get("properties", {})
    tags = tuple(o["name"] for name, p in properties.items() if name.lower() in ("tags", "tag") and p.get("type") == "multi_select" for o in p["multi_select"])
    metadata = {"database": page["_database"]} if page.get("_database") else {}
    document = Document(
        doc_id=doc_id,
        source=source.name,
        source_type="notion",
        title=_title_or_heading(page_title(page), text),
        text=text,
        url=page.get("public_url") or page.get("url"),
        tags=tags,
        updated_at=parse_timestamp(page.get("last_edited_time")),
        metadata=metadata,
        last_modified=page.get("last_edited_time"),
        fetched_at=datetime.now(timezone.utc),
        links=tuple(dict.fromkeys(links)),
        anchors=anchors,
    )
    return document, warnings
