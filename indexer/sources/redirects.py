"""Pages found at another address than the one asked for: a redirect after a restructure
(`/guide` → `/guide/`, `http:` → `https:`, a new domain), a canonical link, or a link that leads
to another site (a sign-in service, a profile).

A page is indexed where it is found. A page indexed before at an address that now leads there
has *moved*: `SourceResult.moved` tells the delete guard so (indexer/deciding.py), and a page
asked for with the validators of the address that redirected to it would answer 304 for the
wrong page, so each hop carries its own (`ask_conditionally`)."""

from __future__ import annotations

from typing import Callable
from urllib.parse import urlsplit

import httpx

from indexer.config import SourceConfig
from indexer.documents import Document, FetchState
from indexer.errors import ErrorCode, IngestError
from indexer.sources import SourceResult

VALIDATORS = "static_rag.validators"  # request extension: (fetch_state, normalize) a page fetch asks conditionally with


def ask_conditionally(request: httpx.Request) -> None:
    """httpx request hook: every hop of a page fetch carries the ETag / Last-Modified stored for its
    own address, or none — never those of the address that redirected to it (httpx copies a
    request's headers onto its redirects)."""
    given = request.extensions.get(VALIDATORS)
    if given is None:
        return
    fetch_state, normalize = given
    state = fetch_state.get(f"url:{normalize(str(request.url))}")
    for header, value in (("If-None-Match", state and state.etag), ("If-Modified-Since", state and state.last_modified)):
        if value:
            request.headers[header] = value
        else:
            request.headers.pop(header, None)


def conditional(request: httpx.Request) -> bool:
    return "if-none-match" in request.headers or "if-modified-since" in request.headers


def origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


class Whereabouts:
    """The hosts a crawl stays on — its listed pages', and those they moved to — and what it
    learns of pages found at another address than the one asked for."""

    def __init__(self, source: SourceConfig, listed: list[str], fetch_state: dict[str, FetchState], result: SourceResult):
        self.source, self.fetch_state, self.result = source, fetch_state, result
        self.listed, self.hosts = set(listed), {urlsplit(u).netloc for u in listed}
        self.away: dict[str, str] = {}  # links to other sites, never indexed: address → where it led
        self.origins: dict[str, str] = {}  # a listed page's origin → the one it redirected to (a new domain)

    def on_site(self, url: str) -> bool:
        return urlsplit(url).netloc in self.hosts

    def keeps(self, url: str, document: Document, via: tuple[str, ...]) -> bool:
        """Whether `document`, asked for at `url` and found at its own (`via`: the addresses that
        led there), is a page of this crawl: on its hosts, or listed (a listed page that moved to
        another host takes the crawl there). One that left the site is named: on its own if it was
        indexed (it is removed), else in `warnings()`."""
        if self.on_site(document.url) or url in self.listed:
            self.hosts.add(urlsplit(document.url).netloc)
            self.result.moved.update((f"url:{address}", document.doc_id) for address in via)
            if url in self.listed and origin(url) != origin(document.url):
                self.origins[origin(url)] = origin(document.url)
            return True
        if f"url:{url}" in self.fetch_state:
            message = f"{url}: redirects to {document.url}, another site; not indexed (list it in `urls` to index it where it leads)"
            self.result.warnings.append(IngestError(ErrorCode.WEB_REDIRECTED_AWAY, "fetch", message, doc_id=f"url:{url}",
                                                    source=self.source.name, level="warning"))
        else:
            self.away[url] = document.url
        return False

    def moved_with_the_site(self, indexed: set[str]) -> dict[str, str]:
        """Pages indexed on a site whose listed pages now redirect to another origin (a new domain,
        https), found at the same path there: moved with the site, though never asked for at their
        old address (the crawl followed the new one's links)."""
        moved = {}
        for old, new in self.origins.items():
            for doc_id in self.fetch_state:
                there = f"url:{new}{doc_id[len(old) + 4:]}"
                if doc_id.startswith(f"url:{old}/") and doc_id not in indexed and there in indexed:
                    moved[doc_id] = there
        return moved

    def warnings(self, examples: Callable[[list[str]], str]) -> list[IngestError]:
        if not self.away:
            return []
        message = (f"{len(self.away)} linked page(s) redirect to other sites, not indexed "
                   f"({examples([f'{url} → {target}' for url, target in self.away.items()])}); list one in `urls` to index it where it leads")
        return [IngestError(ErrorCode.WEB_REDIRECTED_AWAY, "list", message, source=self.source.name, level="warning")]
