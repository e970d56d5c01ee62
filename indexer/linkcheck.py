"""Do the hits' links open? `index check-links` requests a sample of the live generation's document
URLs and names each that answers 404 or 410: a chatbot would cite it, and the visitor would land on
an error page. A files source's URLs come from its `url_template` and `url_rules`, which nothing
else checks against the site; a site that moved its pages breaks every source's links.

A hit links to the heading above its passage (`url#fragment`), by the ids the indexer read from a
web page or gave a file's headings by its generator's rules; a theme that names headings otherwise
lands the visitor at the page's top. So a page whose hits link to headings is read (GET, up to
`MAX_PAGE_BYTES`) and the fragments its page lacks are named. The fragment of the page's first
heading is not checked: missing, it lands at the same top. Notion pages are built in the browser,
so their HTML holds no block ids to check.

Bounded: at most `sample` URLs (spread over every source and its documents), `CONCURRENCY` at a
time, each within `timeout` seconds; HEAD first (GET where a server refuses HEAD, or where anchors
are checked).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from urllib.parse import unquote

import httpx
from lxml import html as lxml_html

from indexer.extract import XML_DECLARATION
from indexer.generations import document_urls
from indexer.pools import thread_pool
from indexer.sources.web import USER_AGENT

CONCURRENCY = 4
BROKEN = (404, 410)
RESTRICTED = (401, 403)
MAX_PAGE_BYTES = 5_000_000  # of a page whose anchors are checked; ids past it count as missing
ANCHORED = ("files", "urls")  # source types whose pages' HTML holds the ids their hits link to
FIX = {  # what to do about a source's broken links, by its type
    "files": "check the source's url_template and url_rules against the site (or the page is not deployed yet)",
    "urls": "the page moved or was removed; the next run keeps its last version and reports it",
    "notion": "the page was unpublished or deleted in Notion",
    "answers": "check the answer's url",
}
FIX_ANCHORS = {  # what to do about a page that lacks the headings its hits link to
    "files": "the site gives these headings other ids: set url_rules to the site's generator, or give each heading its id ({#id})",
    "urls": "the page changed since the last run read it; the next run reads it again",
}


@dataclass(frozen=True)
class Link:
    doc_id: str
    source: str
    source_type: str
    url: str
    anchors: tuple[str, ...] = ()  # fragments its hits link to, to look for on the page
    status: int | None = None  # the final HTTP status, after redirects
    problem: str = ""  # when no status: why the URL could not be reached
    missing: tuple[str, ...] = ()  # of `anchors`, those the page lacks

    @property
    def verdict(self) -> str:
        if self.status is None:
            return "unreachable"
        if self.status in BROKEN:
            return "broken"
        if self.status in RESTRICTED:
            return "restricted"
        if self.status >= 400:
            return "error"
        return "anchors" if self.missing else "open"


def check_links(artifacts: Path, sample: int = 20, source: str | None = None, timeout: float = 5.0) -> dict:
    """Request up to `sample` document URLs of the live generation (0: all of them); the result
    counts them by verdict (VERDICTS) and lists each one that did not open, or opened without
    some of its anchors."""
    links, total = _sampled(artifacts, sample, source)
    with httpx.Client(timeout=timeout, follow_redirects=True, headers={"User-Agent": USER_AGENT}) as client:
        with thread_pool(CONCURRENCY, "check-links") as pool:
            checked = list(pool.map(lambda link: _check(client, link), links))
    counts = {verdict: sum(1 for link in checked if link.verdict == verdict) for verdict in VERDICTS}
    return {"checked": len(checked), "with_url": total, "counts": counts,
            "links": [{**asdict(link), "verdict": link.verdict, "fix": _fix(link)} for link in checked if link.verdict != "open"]}


VERDICTS = ("open", "anchors", "broken", "restricted", "error", "unreachable")


def rules_hints(sources, links: list[dict]) -> list[str]:
    """For each files source (of `sources`, the config's) with a link that did not land — a 404 or
    a missing fragment — whose folder a generator builds by other url_rules than the source's:
    what to set. A config written by hand, or before `index init` knew the generator, links by
    GitHub's slugs and the plain path."""
    from indexer.sitegen import site_rules

    failed = {link["source"] for link in links if link["verdict"] in ("broken", "anchors") and link["source_type"] == "files"}
    hints = []
    for source in sources:
        if source.name in failed and source.path is not None and (found := site_rules(source.path)) and found[0] != source.url_rules:
            rules, said_by = found
            hints.append(f'source {source.name}: {said_by} builds this folder; set url_rules = "{rules}" (it has "{source.url_rules}"), '
                         "so its hits link where the site puts its pages and headings")
    return hints


def _fix(link: Link) -> str:
    return (FIX_ANCHORS if link.verdict == "anchors" else FIX).get(link.source_type, "")


def _sampled(artifacts: Path, sample: int, only: str | None) -> tuple[list[Link], int]:
    """Up to `sample` documents with a URL, spread evenly over each source's documents (each source
    its share, at least one), and how many documents have a URL."""
    rows = document_urls(artifacts, only)
    by_source: dict[str, list[tuple]] = {}
    for row in rows:
        by_source.setdefault(row[1], []).append(row)
    picked: list[Link] = []
    for documents in by_source.values():
        share = len(documents) if sample == 0 else max(1, math.ceil(sample * len(documents) / len(rows)))
        step = len(documents) / min(share, len(documents))
        picked += [_link(*documents[int(k * step)]) for k in range(min(share, len(documents)))]
    return (picked if sample == 0 else picked[:sample]), len(rows)


def _link(doc_id: str, source: str, source_type: str, url: str, offsets, names) -> Link:
    """A document's link, with the fragments to look for on its page: all but a first heading at
    the text's start (the page's title, whose fragment lands at the top anyway)."""
    anchors = ()
    if source_type in ANCHORED and names:
        anchors = tuple(dict.fromkeys(name for offset, name in zip(offsets or (), names) if offset > 0))
    return Link(doc_id, source, source_type, url, anchors)


def _check(client: httpx.Client, link: Link) -> Link:
    url = link.url.split("#", 1)[0]
    try:
        if link.anchors:
            return _check_anchors(client, url, link)
        response = client.head(url)
        if response.status_code in (405, 501) or (response.status_code == 403 and "cloudflare" in response.headers.get("server", "").lower()):
            with client.stream("GET", url) as streamed:  # HEAD refused: the status line of a GET, no body read
                response = streamed
        return replace(link, status=response.status_code)
    except httpx.HTTPError as exc:
        return replace(link, problem=f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__)


def _check_anchors(client: httpx.Client, url: str, link: Link) -> Link:
    """GET the page; its status, and the anchors it lacks when it opens."""
    with client.stream("GET", url) as response:
        if response.status_code >= 400:
            return replace(link, status=response.status_code)
        body = bytearray()
        for piece in response.iter_bytes():
            body += piece
            if len(body) >= MAX_PAGE_BYTES:
                break
        ids = page_ids(body.decode(response.encoding or "utf-8", errors="replace"))
    return replace(link, status=response.status_code, missing=tuple(a for a in link.anchors if a not in ids and unquote(a) not in ids))


def page_ids(page: str) -> set[str]:
    """The fragments an HTML page can be opened at: its elements' `id`s and `<a name>`s — not a
    `<meta name>`, a form field's name, nor `id="…"` in the text of a code sample."""
    try:
        root = lxml_html.fromstring(XML_DECLARATION.sub("", page, count=1))
    except (ValueError, lxml_html.etree.ParserError):  # no markup at all
        return set()
    return {str(value) for value in root.xpath("//@id | //a/@name")}
