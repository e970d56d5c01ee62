"""Web pages from URL lists, sitemaps and same-site crawls, fetched with httpx. doc_id = `url:<normalized url>`."""

from __future__ import annotations

import re
import time
from datetime import datetime, timezone
from dataclasses import dataclass, replace
from functools import partial
from typing import Callable
from urllib.parse import urljoin, urlsplit, urlunsplit

import httpx

from indexer import __version__
from indexer.config import TRACKING_PARAMETERS, UNREAD_FORMATS, SourceConfig
from indexer.documents import Document, FetchState
from indexer.errors import ErrorCode, IngestError
from indexer.extract import (
    NOFOLLOW, NOINDEX, Extracted, ExtractionError, decode_text, empty_page_reason, extract_html, extract_markdown, extract_text,
    first_heading,
)
from indexer.pdf import extract_pdf
from indexer.pools import thread_pool
from indexer.rtf import extract_rtf
from indexer.retrying import backoff, retry_after_seconds
from indexer.sources import SourceResult, limit_reached
from indexer.sources.files import OFFICE_READERS
from indexer.sources.mediatypes import GENERIC_TYPES, TYPE_OF_SUFFIX, html_page_title, media_type_of, sniffed_type
from indexer.sources.netguard import MAX_BYTES, TooLarge, guarded_transport, read_capped, refused, total_deadline
from indexer.sources.polite import PoliteTransport
from indexer.sources.redirects import VALIDATORS, Whereabouts, ask_conditionally, conditional
from indexer.sources.robots import ROBOTS_AGENT, ROBOTS_CHECKED, NotHttp, RobotsDisallowed, RobotsRules, disallowed_now, header_directives
from indexer.sources.sitemaps import MAX_LASTMOD_SITEMAPS, Lastmods, read_sitemap
from indexer.urlscope import UrlScope

USER_AGENT = f"static-rag/{__version__} (+https://github.com/static-rag/static-rag)"
DEFAULT_PORTS = {"http": 80, "https": 443}
MAX_REDIRECTS = 5
PAGE_ATTEMPTS = 3  # a page that fails in a retryable way is tried this often in one run
MAX_RETRY_WAIT_SECONDS = 30.0  # a longer Retry-After is cut to this: the run moves on, the page fails
TEXT_TYPES = {"text/plain": "text", "text/markdown": "markdown", "text/x-markdown": "markdown"}
# media type → the reader of its files: a folder's reader of each file name's extension, and two older names
FILE_TYPES = {TYPE_OF_SUFFIX[suffix]: reader for suffix, reader in OFFICE_READERS.items()} | {"application/x-pdf": extract_pdf, "text/rtf": extract_rtf}
HTML_TYPES = {"text/html", "application/xhtml+xml"}


def normalize_url(url: str, drop_parameters: tuple[str, ...] = TRACKING_PARAMETERS) -> str:
    """Lowercase scheme and host, default port and fragment dropped, empty path made `/`,
    tracking parameters (`drop_parameters`) removed; the other parameters keep their order."""
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    netloc = host if ":" not in host else f"[{host}]"
    if parts.port and parts.port != DEFAULT_PORTS.get(scheme):
        netloc = f"{netloc}:{parts.port}"
    if parts.username:
        netloc = f"{parts.username}{':' + parts.password if parts.password else ''}@{netloc}"
    query = "&".join(p for p in parts.query.split("&") if p and not _matches(p.split("=", 1)[0].lower(), drop_parameters))
    return urlunsplit((scheme, netloc, parts.path or "/", query, ""))


def try_normalize_url(url: str, drop_parameters: tuple[str, ...] = TRACKING_PARAMETERS) -> str | None:
    """`normalize_url`, or None for a URL that cannot be parsed (a bad port, a malformed IPv6 host)."""
    try:
        return normalize_url(url, drop_parameters)
    except ValueError:
        return None


def _matches(name: str, patterns: tuple[str, ...]) -> bool:
    return any(name.startswith(p[:-1]) if p.endswith("*") else name == p for p in patterns)


@dataclass
class Fetched:
    """One page fetch: a Document, NOT_MODIFIED or nothing; an error or a warning; the page's links."""

    document: Document | object | None = None
    problem: IngestError | None = None
    links: tuple[str, ...] = ()
    retry_after: float | None = None  # what a 429 / 503 asked for (Retry-After), in seconds
    attempts: int = 1
    url: str | None = None  # NOT_MODIFIED: the address that answered 304, after redirects
    via: tuple[str, ...] = ()  # a Document found at another address: the ones that led to it (asked for, redirects, a canonical link)


def crawl_urls(source: SourceConfig, progress=None, fetch_state: dict[str, FetchState] | None = None, *, keep=None,
               last_run: datetime | None = None) -> SourceResult:
    """Fetch the listed pages (`urls`, then `sitemaps`), and with `crawl` the same-site pages they
    link to, breadth-first up to `max_depth` hops, `max_pages` pages in all. Pages of one depth are
    fetched `concurrency` at a time; every request to a host waits for `per_host_concurrency` and
    `per_host_delay_seconds` (or the site's robots.txt Crawl-delay, up to MAX_CRAWL_DELAY). A page
    its sitemap's lastmod says is unchanged is not asked for but on its weekly turn (`last_run`: when
    the last run that came to its end started, which asked for the turns before)."""
    result = SourceResult(source=source.name, keep=keep)
    fetch_state = fetch_state or {}
    normalize = partial(try_normalize_url, drop_parameters=source.drop_parameters)  # None for a URL that cannot be parsed
    polite = PoliteTransport(guarded_transport(source.allow_private_networks), source.per_host_concurrency, source.per_host_delay_seconds)
    with _client(source, polite) as client, thread_pool(source.concurrency, f"fetch-{source.name}") as pool:
        robots = RobotsRules(client, polite) if source.respect_robots else None
        if robots is not None:
            client.event_hooks["request"].append(robots.check)
        scope = UrlScope(source.include, source.exclude)
        lastmods = Lastmods(since=last_run)
        pages = _listed(client, source, normalize, scope, robots, lastmods, result)
        seen, reached, limited, disallowed, unread = set(pages), set(), False, {}, {}
        whereabouts = Whereabouts(source, pages, fetch_state, result)
        indexed: set[str] = set()
        frontier, depth = pages, 0
        fetch = partial(_fetch_page, client, source, fetch_state)
        while frontier:
            follow = source.crawl and depth < source.max_depth
            spared = _vouched_for(lastmods, frontier, fetch_state, robots, result, source.trust_lastmod)
            discovered: list[str] = []
            for url, fetched in zip(frontier, pool.map(lambda u: SPARED if u in spared else fetch(u), frontier)):
                result.retries += fetched.attempts - 1
                document = fetched.document
                links = fetched.links
                if isinstance(document, Document) and fetched.via:  # found at another address
                    reached.update((document.url, *fetched.via))  # not fetched again when a page links to them (nor counted as pages)
                    if not whereabouts.keeps(url, document, fetched.via):  # a link to another site
                        document, links = None, ()
                if document is NOT_MODIFIED:
                    found = fetched.url or url
                    if scope(found):
                        result.not_modified.append(f"url:{found}")
                        if source.trust_lastmod:
                            _confirmed(lastmods, found, fetch_state, result)
                    links = fetch_state[f"url:{found}"].links  # unchanged: its links as the last fetch found them
                elif document is not None and not scope(document.url):  # where it is indexed
                    pass  # a listed page outside include / exclude: a crawl's start, read for its links only
                elif document is not None and document.doc_id not in indexed:  # a canonical duplicate counts once
                    indexed.add(document.doc_id)
                    result.add(document)
                if fetched.problem is not None:
                    (result.warnings if fetched.problem.level == "warning" else result.errors).append(fetched.problem)
                    if follow and fetched.problem.retryable:
                        result.listing_complete = False  # what this page links to is unknown this run: delete nothing
                for link in links if follow and not limited else ():
                    if link in seen or link in reached or link in disallowed or not whereabouts.on_site(link) or not scope(link):
                        continue
                    if _unread_format(link):  # a deck or a spreadsheet the site links: named once, not fetched
                        unread[link] = None
                        continue
                    if robots is not None and not robots.allowed(link):  # not a failure, and no page of the budget: the site asks us not to
                        disallowed[link] = None
                        continue
                    if len(seen) >= source.max_pages:
                        result.warnings.append(limit_reached(source, "found by the crawl"))
                        limited = True
                        break
                    seen.add(link)
                    discovered.append(link)
                if progress:
                    progress(1)
            frontier, depth = discovered, depth + 1
    result.warnings += _not_crawled(source, list(disallowed), list(unread)) + whereabouts.warnings(_examples)
    result.moved.update(whereabouts.moved_with_the_site(indexed))
    if robots is not None:
        result.why_gone.update(disallowed_now(robots, whereabouts, scope, fetch_state, indexed | set(result.not_modified)))
    return result


def _listed(client: httpx.Client, source: SourceConfig, normalize, scope: UrlScope, robots: RobotsRules | None, lastmods: Lastmods,
            result: SourceResult) -> list[str]:
    """The pages the source lists (`urls`, then its sitemaps' pages in scope), at most `max_pages`,
    and what the sitemaps' lastmods say of them — for a crawl without sitemaps, those its site's
    robots.txt names. A sitemap that cannot be read is an error that keeps the source from deleting."""
    pages = [u for u in dict.fromkeys(normalize(u) for u in source.urls) if u]  # the config checked them
    in_scope = partial(_scoped, normalize, scope) if scope else normalize  # a sitemap's pages outside it are not listed
    for sitemap in source.sitemaps:
        for message in read_sitemap(client, sitemap, pages, source.max_pages + 1, in_scope, lastmods):
            result.listing_complete = False  # pages missing from a failed sitemap must not be deleted
            result.errors.append(IngestError(ErrorCode.SOURCE_LISTING_FAILED, "list", message, source=source.name))
    if len(pages) > source.max_pages:
        pages = pages[: source.max_pages]
        result.warnings.append(limit_reached(source, "listed"))
    if source.trust_lastmod and robots is not None and source.crawl and not source.sitemaps:
        _lastmods_from_robots(client, robots, pages, lastmods, in_scope)
    return pages


def _lastmods_from_robots(client: httpx.Client, robots: RobotsRules, pages: list[str], lastmods: Lastmods, in_scope) -> None:
    """A crawl of a site whose robots.txt names its sitemaps reads them for their lastmods only:
    what it indexes is still what the links reach, and a sitemap it cannot read spares nothing."""
    starts = {urlsplit(page)[:2]: page for page in pages}.values()  # one page per origin
    for sitemap in dict.fromkeys(named for page in starts for named in robots.sitemaps(page)):
        read_sitemap(client, sitemap, [], 100_000, in_scope, lastmods, max_files=MAX_LASTMOD_SITEMAPS)


def _vouched_for(lastmods: Lastmods, pages: list[str], fetch_state: dict[str, FetchState], robots: RobotsRules | None,
                 result: SourceResult, trusted: bool) -> set[str]:
    """The pages not to ask for: their sitemap's lastmod says they have not changed since they were
    downloaded, and their weekly turn has not come (robots.txt permitting; a source that does not
    trust lastmod only counts them, `SourceResult.could_spare`). The others are asked
    for as ever, conditionally; one asked on its turn that had changed says the lastmod is not kept up to date."""
    spared: set[str] = set()
    for page in pages:
        doc_id = f"url:{page}"
        state = fetch_state.get(doc_id)
        if state is None or not lastmods.vouched(page, state.fetched_at):
            continue
        if not trusted:
            result.could_spare += 1
        elif lastmods.due(page, state.fetched_at):
            result.lastmod_checked[doc_id] = f"lastmod {lastmods.said[page]}, last downloaded {state.fetched_at:%Y-%m-%d %H:%M} UTC"
        elif robots is None or robots.allowed(page):
            spared.add(page)
            result.by_lastmod[doc_id] = lastmods.said[page]
    return spared


def _confirmed(lastmods: Lastmods, page: str, fetch_state: dict[str, FetchState], result: SourceResult) -> None:
    """A page that answered 304 although its sitemap's lastmod moved since it was downloaded (a
    site rebuilt and deployed whole: every page's lastmod is the build's) is unchanged as of now:
    said so (`SourceResult.confirmed`), its lastmod vouches for it from the next run on. Otherwise
    it would be asked for every run until its text changes."""
    doc_id = f"url:{page}"
    if page in lastmods.by and not lastmods.vouched(page, fetch_state[doc_id].fetched_at):  # a page not asked for was vouched for
        result.confirmed[doc_id] = datetime.now(timezone.utc)


def _client(source: SourceConfig, transport: httpx.BaseTransport) -> httpx.Client:
    """The source's HTTP client: redirects followed (each hop asked with its own validators)."""
    client = httpx.Client(
        transport=transport,
        timeout=httpx.Timeout(source.timeout_seconds, connect=min(10.0, source.timeout_seconds)),
        follow_redirects=True,
        max_redirects=MAX_REDIRECTS,
        headers={"User-Agent": USER_AGENT, "Accept": "text/html, text/plain;q=0.9, text/markdown;q=0.9, application/pdf;q=0.8, */*;q=0.1"},
    )
    client.event_hooks["request"].append(ask_conditionally)
    return client


def _examples(urls: list[str]) -> str:
    return ", ".join(urls[:3]) + (", …" if len(urls) > 3 else "")


def _not_crawled(source: SourceConfig, disallowed: list[str], unread: list[str]) -> list[IngestError]:
    """One warning for the linked pages robots.txt keeps us from, one for the linked office files
    this version does not read (a sales deck, a price list: "why is it never found?")."""
    out = []
    if disallowed:
        message = f"{len(disallowed)} linked page(s) not crawled: robots.txt disallows them for {ROBOTS_AGENT} ({_examples(disallowed)})"
        out.append(IngestError(ErrorCode.WEB_ROBOTS_DISALLOWED, "list", message, source=source.name, level="warning"))
    if unread:
        kinds = sorted({UNREAD_FORMATS[_unread_format(u)][0] for u in unread})
        message = (f"{len(unread)} linked file(s) not fetched: {', '.join(kinds)} files, formats this version does not read "
                   f"({_examples(unread)}); publish them as PDF, .docx, .pptx or .xlsx to make them searchable")
        out.append(IngestError(ErrorCode.WEB_FILES_UNREAD, "list", message, source=source.name, level="warning"))
    return out


def _scoped(normalize, scope: UrlScope, url: str) -> str | None:
    page = normalize(url)
    return page if page and scope(page) else None


def _fetch_page(client: httpx.Client, source: SourceConfig, fetch_state: dict[str, FetchState], url: str) -> Fetched:
    """One page, tried again after a retryable failure (429, 5xx, timeout, dropped connection) up to
    `PAGE_ATTEMPTS` times, waiting what Retry-After asks or the shared backoff, at most MAX_RETRY_WAIT_SECONDS."""
    started = time.perf_counter()
    for attempt in range(1, PAGE_ATTEMPTS + 1):
        try:
            fetched = fetch_document(client, url, source.name, fetch_state, source.drop_parameters, source.max_bytes, source.respect_robots)
        except Exception as exc:  # whatever one page does to a parser, it is that page's error, never the run's
            message = f"{url}: {type(exc).__name__}: {exc}"
            return Fetched(problem=IngestError(ErrorCode.FILE_EXTRACTION_FAILED, "extract", message, doc_id=f"url:{url}", source=source.name))
        if fetched.problem is None or not fetched.problem.retryable or attempt == PAGE_ATTEMPTS:
            break
        time.sleep(min(MAX_RETRY_WAIT_SECONDS, backoff(attempt - 1, fetched.retry_after)))
    if attempt > 1:
        fetched = replace(fetched, attempts=attempt)
        if fetched.problem is not None:
            fetched = replace(fetched, problem=replace(fetched.problem, message=f"{fetched.problem.message} (after {attempt} attempts)"))
    if isinstance(fetched.document, Document):
        fetched = replace(fetched, document=replace(fetched.document, fetch_seconds=time.perf_counter() - started))
    return fetched


NOT_PAGES = re.compile(
    r"\.(?:zip|gz|tgz|rar|7z|exe|dmg|msi|iso|jpe?g|png|gif|webp|avif|svg|ico|bmp|tiff?|mp[34]|m4a|mov|avi|webm|ogg|wav|"
    r"woff2?|ttf|eot|css|js|json|xml|rss|atom|csv)$",
    re.IGNORECASE,
)


def _unread_format(url: str) -> str | None:
    """The suffix of a link to an office file of a format we do not read (indexer.config.UNREAD_FORMATS)."""
    suffix = urlsplit(url).path.rpartition(".")[2].lower()
    return f".{suffix}" if f".{suffix}" in UNREAD_FORMATS else None


def _not_a_page(url: str) -> bool:
    """Links a crawl does not spend its page budget on: files whose extension says they are not pages."""
    return bool(NOT_PAGES.search(urlsplit(url).path))


NOT_MODIFIED = object()  # the server answered 304: keep the stored version, download nothing
SPARED = Fetched(document=NOT_MODIFIED)  # not asked: the sitemap's lastmod says it is unchanged


def fetch_document(
    client: httpx.Client, url: str, source_name: str, fetch_state: dict[str, FetchState] | None = None,
    drop_parameters: tuple[str, ...] = TRACKING_PARAMETERS, max_bytes: int = MAX_BYTES, respect_robots: bool = True,
) -> Fetched:
    """One page as a Document — under the address it redirects to, or its same-site `rel=canonical`
    URL when it declares one —, NOT_MODIFIED, or a coded
    error; a content type we do not index is a warning, its body unread, and so (`respect_robots`) is
    a page whose robots meta or X-Robots-Tag says noindex. Each hop asks conditionally with the
    validators `fetch_state` holds for its own address (redirects.ask_conditionally)."""
    doc_id = f"url:{url}"
    fetch_state = fetch_state or {}

    def problem(code: ErrorCode, step: str, message: str, retryable: bool = False, level: str = "error") -> Fetched:
        return Fetched(problem=IngestError(code, step, f"{url}: {message}", retryable=retryable, doc_id=doc_id, source=source_name, level=level))

    try:
        response, body, found = _download(client, url, fetch_state, drop_parameters, max_bytes)
    except (NotHttp, httpx.UnsupportedProtocol, RobotsDisallowed, TooLarge, httpx.HTTPError) as exc:
        code, message, retryable = _download_problem(exc, url, max_bytes)
        return problem(code, "fetch", message, retryable=retryable)
    media_type = media_type_of(response)
    if body is None:
        return problem(ErrorCode.WEB_UNSUPPORTED_TYPE, "fetch", f"content type {media_type} is not HTML, plain text, Markdown, PDF, an office "
                       f"document or EPUB{' (nor does its name end in one of their extensions)' if media_type in GENERIC_TYPES else ''}; skipped",
                       level="warning")
    if response.status_code == 304 and conditional(response.request):
        return Fetched(document=NOT_MODIFIED, url=found)
    if response.status_code >= 400:
        return _status_problem(response, body, problem)
    if media_type in HTML_TYPES or media_type in TEXT_TYPES:
        actual = sniffed_type(body, response.charset_encoding)
        if actual in FILE_TYPES:
            media_type = actual  # a file the server called text: read as what it is
        elif actual is not None:
            return problem(ErrorCode.WEB_UNSUPPORTED_TYPE, "fetch", f"sent as {media_type}, but its bytes are {actual}, not text; skipped", level="warning")
    elif media_type in FILE_TYPES and (title := html_page_title(body)) is not None:
        shown = f" (“{title}”)" if title else ""
        return problem(ErrorCode.FILE_EXTRACTION_FAILED, "extract", f"sent as {media_type}, but it is an HTML page{shown}: a sign-in or error page "
                                                                    "where the file should be? not indexed")
    try:
        extracted, links = _extract(body, media_type, response, found, drop_parameters)
    except ExtractionError as exc:
        return problem(exc.code or ErrorCode.FILE_EXTRACTION_FAILED, "extract", str(exc), level=exc.level)
    said = _soft_not_found(extracted) if media_type in HTML_TYPES else None
    if said:  # before noindex: error pages often say it, and a missing page keeps its last version
        return problem(ErrorCode.WEB_HTTP_STATUS, "fetch", f"HTTP {response.status_code}, but the page reads as an error page "
                                                           f"(\"{said}\"): a soft 404; not indexed, its last version kept")
    directives = extracted.robots | header_directives(response.headers.get_list("x-robots-tag"))
    if respect_robots and directives & NOFOLLOW:
        links = ()
    if respect_robots and directives & NOINDEX:
        said = "robots meta tag" if extracted.robots & NOINDEX else "X-Robots-Tag header"
        message = f"its {said} says noindex: not indexed (set respect_robots = false for a site you own)"
        return replace(problem(ErrorCode.WEB_NOINDEX, "fetch", message, level="warning"), links=links)
    target = try_normalize_url(urljoin(str(response.url), extracted.refresh), drop_parameters) if extracted.refresh else None
    if target and target not in (url, found):  # a redirect stub: what it says ("Redirecting…") is no page to cite; a crawl goes on to the target
        message = f"a meta refresh sends readers to {target}: not indexed (list that page instead)"
        return replace(problem(ErrorCode.WEB_REFRESH, "fetch", message, level="warning"), links=tuple(dict.fromkeys((target, *links))))
    if not extracted.text.strip():
        reason = empty_page_reason(body) if media_type in HTML_TYPES else "no text found"
        return replace(problem(ErrorCode.FILE_EXTRACTION_EMPTY, "extract", reason), links=links)
    return _page(extracted, links, response, url, found, source_name, drop_parameters)


def _status_problem(response: httpx.Response, body: bytes, problem: Callable[..., Fetched]) -> Fetched:
    """An HTTP error status as its problem: 410 a warning (the site removed the page for good, so
    there is no last version to keep), 429 and 5xx retryable after the server's Retry-After."""
    if response.status_code == 410:
        return problem(ErrorCode.WEB_GONE, "fetch", "HTTP 410 Gone: the site removed it; not indexed", level="warning")
    retryable = response.status_code == 429 or response.status_code >= 500
    failed = problem(ErrorCode.WEB_HTTP_STATUS, "fetch", f"HTTP {response.status_code}{_status_hint(response, body)}", retryable=retryable)
    return replace(failed, retry_after=retry_after_seconds(response.headers)) if retryable else failed


def _page(extracted: Extracted, links: tuple[str, ...], response: httpx.Response, url: str, found: str, source_name: str,
          drop_parameters: tuple[str, ...]) -> Fetched:
    """The fetched page as a Document under its same-site canonical URL (else the address it was
    found at), with the other addresses that led to it (`via`)."""
    canonical = try_normalize_url(extracted.url, drop_parameters) if extracted.url else None
    if canonical and urlsplit(canonical)[:2] == urlsplit(str(response.url))[:2]:  # same scheme and host only
        found = canonical
    document = Document(
        doc_id=f"url:{found}",
        source=source_name,
        source_type="urls",
        title=extracted.title,
        text=extracted.text,
        url=found,
        tags=extracted.tags,
        authors=extracted.authors,
        updated_at=extracted.updated_at,
        metadata=extracted.metadata,
        pages=extracted.pages,
        anchors=extracted.anchors,
        etag=response.headers.get("etag"),
        last_modified=response.headers.get("last-modified"),
        fetched_at=datetime.now(timezone.utc),
        links=links,
    )
    hops = (try_normalize_url(str(hop), drop_parameters) for hop in (url, *(r.url for r in response.history), response.url))
    return Fetched(document=document, links=links, via=tuple(dict.fromkeys(hop for hop in hops if hop and hop != found)))


def _download(client: httpx.Client, url: str, fetch_state: dict[str, FetchState], drop_parameters: tuple[str, ...],
              max_bytes: int) -> tuple[httpx.Response, bytes | None, str]:
    """The page's last response, its body (None: a content type we do not index, never
    downloaded) and the address it answered from, after redirects."""
    normalize = partial(try_normalize_url, drop_parameters=drop_parameters)
    for validators in (fetch_state, {}):
        extensions = {ROBOTS_CHECKED: True, VALIDATORS: (validators, normalize)}
        with total_deadline(client.timeout.read), client.stream("GET", url, extensions=extensions) as response:
            media_type = media_type_of(response)
            unread = response.status_code < 300 and media_type not in HTML_TYPES and media_type not in TEXT_TYPES and media_type not in FILE_TYPES
            body = None if unread else read_capped(response, max_bytes)
        found = normalize(str(response.url)) or url
        if response.status_code != 304 or found == url or f"url:{url}" not in fetch_state:
            break  # else: indexed at this address, now redirected to a page indexed too — read once more, so it moves, not vanishes
    return response, body, found


# What a site's error page is titled when the server answers it with 200 (a "soft 404"): indexed,
# it replaced the page's last good text with "Sorry, we couldn't find that page".
_OOPS = r"(?:(?:oops|whoops|sorry|error|uh[\s-]*oh)\W*)?(?:(?:the|this|that)\s+)?"
SOFT_404 = re.compile(
    r"(?:error\s*)?404(?:\s*[-–:|!.]\s*.*)?"
    rf"|{_OOPS}(?:page|file|article|document|content)?\s*(?:was\s+|is\s+)?not\s+found\W*"
    rf"|{_OOPS}page\s+(?:does\s*n[o']t\s+exist|doesn't\s+exist|(?:could|can)\s*n[o']t\s+be\s+found|is\s+(?:missing|gone|no\s+longer\s+available))\W*",
    re.IGNORECASE,
)
SOFT_404_MAX_CHARS = 1500  # an error page says little; an article about "404 errors" says more


def _soft_not_found(extracted: Extracted) -> str | None:
    """The title or heading that shows a page the server answered with success is its error page
    (a short one titled or headed as such), or None."""
    if len(extracted.text) > SOFT_404_MAX_CHARS:
        return None
    return next((name.strip() for name in (extracted.title, first_heading(extracted.text)) if name and SOFT_404.fullmatch(name.strip())), None)


CHALLENGE_MARKS = (b"cf-chl", b"challenge-platform", b"Just a moment", b"Attention Required")  # Cloudflare's challenge page


def _status_hint(response: httpx.Response, body: bytes) -> str:
    """What an admin can do about a refusal, when the status says more than its number."""
    status = response.status_code
    challenged = response.headers.get("cf-mitigated") or (
        response.headers.get("server", "").lower() == "cloudflare" and any(mark in body[:8192] for mark in CHALLENGE_MARKS))
    if status in (401, 403) and challenged:
        return (f": the site's bot protection (Cloudflare) refused the crawler; allow its user agent ({ROBOTS_AGENT}/…) or its "
                "address in the site's firewall rules")
    if status == 401 or (status == 403 and response.headers.get("www-authenticate")):
        return ": the page needs a login; index pages readable without one, or the documents themselves as a files source"
    if status == 429:
        return ": the site limits how fast it may be read; raise per_host_delay_seconds or lower per_host_concurrency"
    return ""


def _download_problem(exc: Exception, url: str, max_bytes: int) -> tuple[ErrorCode, str, bool]:
    """A download that failed, said for the admin: (code, message, whether trying again may help)."""
    if isinstance(exc, (NotHttp, httpx.UnsupportedProtocol)):
        return ErrorCode.WEB_FETCH_FAILED, f"redirected to {str(exc).split(' ')[0] if isinstance(exc, NotHttp) else exc}, which is not an http(s) URL; not followed", False
    if isinstance(exc, RobotsDisallowed):
        target = "" if str(exc) == url else f" (redirected to {exc})"
        return ErrorCode.WEB_ROBOTS_DISALLOWED, f"robots.txt disallows it{target} for {ROBOTS_AGENT} (set respect_robots = false for a site you own)", False
    if isinstance(exc, TooLarge):
        return ErrorCode.WEB_TOO_LARGE, f"more than max_bytes ({max_bytes:,} bytes); not downloaded further", False
    if isinstance(exc, httpx.TooManyRedirects):
        return ErrorCode.WEB_FETCH_FAILED, f"more than {MAX_REDIRECTS} redirects", False
    if isinstance(exc, httpx.ConnectError):
        return (ErrorCode.WEB_ADDRESS_REFUSED, str(exc), False) if refused(exc) else (ErrorCode.WEB_FETCH_FAILED, f"ConnectError: {exc}", True)
    if isinstance(exc, httpx.TimeoutException):
        return ErrorCode.WEB_FETCH_FAILED, "timed out", True
    return ErrorCode.WEB_FETCH_FAILED, f"{type(exc).__name__}: {exc}", True




def _extract(body: bytes, media_type: str, response: httpx.Response, url: str, drop_parameters: tuple[str, ...]) -> tuple[Extracted, tuple[str, ...]]:
    """A fetched body's text by its media type, and (for HTML) the page links it holds, normalized;
    raises ExtractionError."""
    links: tuple[str, ...] = ()
    if media_type in HTML_TYPES:
        extracted = extract_html(body, url=str(response.url), fallback_title=url, encoding=response.charset_encoding)
        normalized = (try_normalize_url(link, drop_parameters) for link in extracted.links)
        links = tuple(dict.fromkeys(link for link in normalized if link and (not _not_a_page(link) or _unread_format(link))))
    elif media_type in FILE_TYPES:
        extracted = FILE_TYPES[media_type](body, urlsplit(str(response.url)).path.rsplit("/", 1)[-1] or url)
    elif TEXT_TYPES[media_type] == "markdown":
        extracted = extract_markdown(decode_text(body, response.charset_encoding), url)
    else:
        extracted = extract_text(decode_text(body, response.charset_encoding), url)
    return extracted, links
