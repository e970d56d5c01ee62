"""An explicit list of URLs, fetched with httpx. doc_id = `url:<normalized url>`."""

from __future__ import annotations

import gzip
import logging
from urllib.parse import urlsplit, urlunsplit

import httpx
from protego import Protego

from indexer import __version__
from indexer.config import TRACKING_PARAMETERS, SourceConfig
from indexer.documents import Document
from indexer.errors import ErrorCode, IngestError
from indexer.extract import ExtractionError, extract_html, extract_markdown, extract_text
from indexer.sources import SourceResult
from indexer.sources.netguard import guarded_transport, refused

ROBOTS_AGENT = "static-rag"  # the product token robots.txt groups are matched against
USER_AGENT = f"static-rag/{__version__} (+https://github.com/static-rag/static-rag)"
DEFAULT_PORTS = {"http": 80, "https": 443}
MAX_REDIRECTS = 5
MAX_BYTES = 10 * 1024 * 1024  # per response, enforced while streaming (the seed's 10 MB)
TEXT_TYPES = {"text/plain": "text", "text/markdown": "markdown", "text/x-markdown": "markdown"}
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


def _matches(name: str, patterns: tuple[str, ...]) -> bool:
    return any(name.startswith(p[:-1]) if p.endswith("*") else name == p for p in patterns)


def crawl_urls(source: SourceConfig, progress=None, validators: dict[str, tuple[str | None, str | None]] | None = None) -> SourceResult:
    result = SourceResult(source=source.name)
    timeout = httpx.Timeout(source.timeout_seconds, connect=min(10.0, source.timeout_seconds))
    with httpx.Client(
        transport=guarded_transport(source.allow_private_networks),
        timeout=timeout,
        follow_redirects=True,
        max_redirects=MAX_REDIRECTS,
        headers={"User-Agent": USER_AGENT, "Accept": "text/html, text/plain;q=0.9, text/markdown;q=0.9, */*;q=0.1"},
    ) as client:
        robots = RobotsRules(client) if source.respect_robots else None
        indexed: set[str] = set()
        pages = list(dict.fromkeys(normalize_url(u, source.drop_parameters) for u in source.urls))
        for sitemap in source.sitemaps:
            errors = read_sitemap(client, sitemap, pages, source.max_pages, lambda u: normalize_url(u, source.drop_parameters))
            for message in errors:
                result.listing_complete = False  # pages missing from a failed sitemap must not be deleted
                result.errors.append(IngestError(ErrorCode.SOURCE_LISTING_FAILED, "list", message, source=source.name))
        if len(pages) > source.max_pages:
            logging.getLogger(__name__).warning("%s: %d pages listed; only the first max_pages = %d are indexed", source.name, len(pages), source.max_pages)
            pages = pages[: source.max_pages]
        for url in pages:
            etag, modified = (validators or {}).get(f"url:{url}", (None, None))
            if robots is not None and not robots.allowed(url):
                document, error = None, IngestError(
                    ErrorCode.WEB_ROBOTS_DISALLOWED, "fetch", f"{url}: robots.txt disallows it for {ROBOTS_AGENT} (set respect_robots = false for a site you own)",
                    doc_id=f"url:{url}", source=source.name,
                )
            else:
                document, error = fetch_document(client, url, source.name, etag, modified, source.drop_parameters)
            if document is NOT_MODIFIED:
                result.not_modified.append(f"url:{url}")
            elif document is not None and document.doc_id not in indexed:  # a canonical duplicate counts once
                indexed.add(document.doc_id)
                result.documents.append(document)
            if error is not None:
                result.errors.append(error)
            if progress:
                progress(1)
    return result


class TooLarge(Exception):
    pass


SITEMAP_NS = "{http://www.sitemaps.org/schemas/sitemap/0.9}"
MAX_SITEMAPS = 100  # sitemap files read per listed sitemap, index children included


def read_sitemap(client: httpx.Client, url: str, pages: list[str], limit: int, normalize) -> list[str]:
    """Append the page URLs of a sitemap or sitemap index (followed breadth-first, gzip accepted)
    to `pages`, normalized and new ones only, until it holds `limit`; return a message per
    sitemap file that could not be read."""
    from lxml import etree

    parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False)
    known = set(pages)
    errors: list[str] = []
    queue, seen = [url], set()
    while queue and len(pages) < limit and len(seen) < MAX_SITEMAPS:
        current = queue.pop(0)
        if current in seen:
            continue
        seen.add(current)
        try:
            with client.stream("GET", current) as response:
                body = _read_capped(response)
        except (httpx.HTTPError, TooLarge) as exc:
            errors.append(f"sitemap {current}: {'too large' if isinstance(exc, TooLarge) else f'{type(exc).__name__}: {exc}'}")
            continue
        if response.status_code >= 400:
            errors.append(f"sitemap {current}: HTTP {response.status_code}")
            continue
        if body[:2] == b"\x1f\x8b":
            try:
                body = gzip.decompress(body)
            except OSError as exc:
                errors.append(f"sitemap {current}: bad gzip data: {exc}")
                continue
        try:
            root = etree.fromstring(body, parser)
        except etree.XMLSyntaxError as exc:
            errors.append(f"sitemap {current}: not XML: {exc}")
            continue
        locations = [(loc.text or "").strip() for loc in root.iter(f"{SITEMAP_NS}loc")]
        locations = [loc for loc in locations if loc.startswith(("http://", "https://"))]
        if root.tag == f"{SITEMAP_NS}sitemapindex":
            queue.extend(locations)
        elif root.tag == f"{SITEMAP_NS}urlset":
            for page in map(normalize, locations):
                if len(pages) >= limit:
                    break
                if page not in known:
                    known.add(page)
                    pages.append(page)
        else:
            errors.append(f"sitemap {current}: root element is {root.tag}, not a sitemaps.org urlset or sitemapindex")
    return errors


class RobotsRules:
    """robots.txt per origin (RFC 9309, parsed by Protego: longest match wins, `*` and `$`
    patterns), fetched once per run through the same guarded client. No file or a 4xx:
    everything allowed. A 5xx or a timeout: nothing allowed, as the RFC asks when the rules
    cannot be known. A refused or failed connection: allowed here, so the page fetch reports it."""

    ALLOW_ALL, DISALLOW_ALL = "", "User-agent: *\nDisallow: /\n"

    def __init__(self, client: httpx.Client):
        self.client = client
        self.rules: dict[str, object] = {}

    def allowed(self, url: str) -> bool:
        parts = urlsplit(url)
        origin = f"{parts.scheme}://{parts.netloc}"
        if origin not in self.rules:
            self.rules[origin] = Protego.parse(self._fetch(origin))
        return self.rules[origin].can_fetch(url, ROBOTS_AGENT)

    def _fetch(self, origin: str) -> str:
        try:
            with self.client.stream("GET", f"{origin}/robots.txt") as response:
                body = _read_capped(response)
        except httpx.ConnectError:
            return self.ALLOW_ALL
        except (httpx.HTTPError, TooLarge):
            return self.DISALLOW_ALL
        if response.status_code >= 500:
            return self.DISALLOW_ALL
        if response.status_code >= 400:
            return self.ALLOW_ALL
        return body.decode("utf-8", errors="replace")


def _read_capped(response: httpx.Response) -> bytes:
    """The body, or TooLarge as soon as it passes MAX_BYTES (a declared Content-Length is checked first)."""
    declared = response.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > MAX_BYTES:
        raise TooLarge
    chunks, size = [], 0
    for chunk in response.iter_bytes():
        size += len(chunk)
        if size > MAX_BYTES:
            raise TooLarge
        chunks.append(chunk)
    return b"".join(chunks)


NOT_MODIFIED = object()  # the server answered 304: keep the stored version, download nothing


def fetch_document(
    client: httpx.Client, url: str, source_name: str, etag: str | None = None, last_modified: str | None = None,
    drop_parameters: tuple[str, ...] = TRACKING_PARAMETERS,
) -> tuple[Document | object | None, IngestError | None]:
    """One page as a Document (under its same-site `rel=canonical` URL when it declares one),
    NOT_MODIFIED, or a coded error."""
    doc_id = f"url:{url}"

    def error(code: ErrorCode, step: str, message: str, retryable: bool = False) -> tuple[None, IngestError]:
        return None, IngestError(code, step, f"{url}: {message}", retryable=retryable, doc_id=doc_id, source=source_name)

    conditional = {k: v for k, v in (("If-None-Match", etag), ("If-Modified-Since", last_modified)) if v}
    try:
        with client.stream("GET", url, headers=conditional) as response:
            body = _read_capped(response)
    except TooLarge:
        return error(ErrorCode.WEB_TOO_LARGE, "fetch", f"more than {MAX_BYTES // (1024 * 1024)} MB; not downloaded further")
    except httpx.TooManyRedirects:
        return error(ErrorCode.WEB_FETCH_FAILED, "fetch", f"more than {MAX_REDIRECTS} redirects")
    except httpx.ConnectError as exc:
        if refused(exc):
            return error(ErrorCode.WEB_ADDRESS_REFUSED, "fetch", str(exc))
        return error(ErrorCode.WEB_FETCH_FAILED, "fetch", f"ConnectError: {exc}", retryable=True)
    except httpx.TimeoutException:
        return error(ErrorCode.WEB_FETCH_FAILED, "fetch", "timed out", retryable=True)
    except httpx.HTTPError as exc:
        return error(ErrorCode.WEB_FETCH_FAILED, "fetch", f"{type(exc).__name__}: {exc}", retryable=True)
    if response.status_code == 304 and conditional:
        return NOT_MODIFIED, None
    if response.status_code >= 400:
        retryable = response.status_code == 429 or response.status_code >= 500
        return error(ErrorCode.WEB_HTTP_STATUS, "fetch", f"HTTP {response.status_code}", retryable=retryable)
    media_type = response.headers.get("content-type", "text/html").split(";")[0].strip().lower()
    fallback_title = url
    try:
        if media_type in HTML_TYPES:
            extracted = extract_html(body, url=str(response.url), fallback_title=fallback_title, encoding=response.charset_encoding)
        elif TEXT_TYPES.get(media_type) == "markdown":
            extracted = extract_markdown(body.decode(response.charset_encoding or "utf-8", errors="replace"), fallback_title)
        elif media_type in TEXT_TYPES:
            extracted = extract_text(body.decode(response.charset_encoding or "utf-8", errors="replace"), fallback_title)
        else:
            return error(ErrorCode.FILE_EXTRACTION_FAILED, "extract", f"unsupported content type {media_type}")
    except ExtractionError as exc:
        return error(ErrorCode.FILE_EXTRACTION_FAILED, "extract", str(exc))
    if not extracted.text.strip():
        return error(ErrorCode.FILE_EXTRACTION_EMPTY, "extract", "no main content found")
    canonical = normalize_url(extracted.url, drop_parameters) if extracted.url else None
    if canonical and urlsplit(canonical)[:2] == urlsplit(str(response.url))[:2]:  # same scheme and host only
        url, doc_id = canonical, f"url:{canonical}"
    return (
        Document(
            doc_id=doc_id,
            source=source_name,
            source_type="urls",
            title=extracted.title,
            text=extracted.text,
            url=url,
            tags=extracted.tags,
            authors=extracted.authors,
            updated_at=extracted.updated_at,
            metadata=extracted.metadata,
            etag=response.headers.get("etag"),
            last_modified=response.headers.get("last-modified"),
        ),
        None,
    )
