"""Do the hits' links open? `index check-links` requests a sample of the live generation's document
URLs and names each that answers 404 or 410: a chatbot would cite it, and the visitor would land on
an error page. A files source's URLs come from its `url_template` and `url_rules`, which nothing
else checks against the site; a site that moved its pages breaks every source's links.

Bounded: at most `sample` URLs (spread over every source and its documents), `CONCURRENCY` at a
time, each within `timeout` seconds; HEAD first, GET where a server refuses HEAD.
"""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import httpx

from indexer.generations import document_urls
from indexer.sources.web import USER_AGENT

CONCURRENCY = 4
BROKEN = (404, 410)
RESTRICTED = (401, 403)
FIX = {  # what to do about a source's broken links, by its type
    "files": "check the source's url_template and url_rules against the site (or the page is not deployed yet)",
    "urls": "the page moved or was removed; the next run keeps its last version and reports it",
    "notion": "the page was unpublished or deleted in Notion",
    "answers": "check the answer's url",
}


@dataclass(frozen=True)
class Link:
    doc_id: str
    source: str
    source_type: str
    url: str
    status: int | None = None  # the final HTTP status, after redirects
    problem: str = ""  # when no status: why the URL could not be reached

    @property
    def verdict(self) -> str:
        if self.status is None:
            return "unreachable"
        if self.status in BROKEN:
            return "broken"
        if self.status in RESTRICTED:
            return "restricted"
        return "open" if self.status < 400 else "error"


def check_links(artifacts: Path, sample: int = 20, source: str | None = None, timeout: float = 5.0) -> dict:
    """Request up to `sample` document URLs of the live generation (0: all of them); the result
    counts them by verdict (open, broken, restricted, error, unreachable) and lists each one that
    did not open."""
    links, total = _sampled(artifacts, sample, source)
    with httpx.Client(timeout=timeout, follow_redirects=True, headers={"User-Agent": USER_AGENT}) as client:
        with ThreadPoolExecutor(max_workers=CONCURRENCY) as pool:
            checked = list(pool.map(lambda link: _check(client, link), links))
    counts = {verdict: sum(1 for link in checked if link.verdict == verdict) for verdict in ("open", "broken", "restricted", "error", "unreachable")}
    return {"checked": len(checked), "with_url": total, "counts": counts,
            "links": [{**asdict(link), "verdict": link.verdict, "fix": FIX.get(link.source_type, "")} for link in checked if link.verdict != "open"]}


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
        picked += [Link(*documents[int(k * step)]) for k in range(min(share, len(documents)))]
    return (picked if sample == 0 else picked[:sample]), len(rows)


def _check(client: httpx.Client, link: Link) -> Link:
    url = link.url.split("#", 1)[0]
    try:
        response = client.head(url)
        if response.status_code in (405, 501) or (response.status_code == 403 and "cloudflare" in response.headers.get("server", "").lower()):
            with client.stream("GET", url) as streamed:  # HEAD refused: the status line of a GET, no body read
                response = streamed
        return replace(link, status=response.status_code)
    except httpx.HTTPError as exc:
        return replace(link, problem=f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__)
