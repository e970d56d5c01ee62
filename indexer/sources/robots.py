"""robots.txt and robots directives: what a site asks the `static-rag` agent not to fetch or
index (RFC 9309 rules per origin, X-Robots-Tag headers), and what a crawl no longer reaches
because of it."""

from __future__ import annotations

import threading
from urllib.parse import urlsplit

import httpx
from protego import Protego

from indexer.documents import FetchState
from indexer.errors import ErrorCode
from indexer.extract import directives
from indexer.sources.netguard import TooLarge, read_capped, total_deadline
from indexer.sources.polite import MAX_CRAWL_DELAY, PoliteTransport
from indexer.sources.redirects import Whereabouts, origin
from indexer.urlscope import UrlScope

ROBOTS_AGENT = "static-rag"  # the product token robots.txt groups are matched against


class RobotsDisallowed(Exception):
    """robots.txt forbids a URL the fetch would request (the page itself or a redirect target)."""


class NotHttp(Exception):
    """A redirect to a URL that is not http(s): never followed."""


ROBOTS_CHECKED = "static_rag.robots"  # request extension: check robots.txt before this request and its redirects


class RobotsRules:
    """robots.txt per origin (RFC 9309, parsed by Protego: longest match wins, `*` and `$`
    patterns), fetched once per run through the same guarded client. No file or a 4xx:
    everything allowed. A 5xx or a timeout: nothing allowed, as the RFC asks when the rules
    cannot be known. A refused or failed connection: allowed here, so the page fetch reports it.
    A Crawl-delay for our agent (or *) slows that host down, up to MAX_CRAWL_DELAY."""

    ALLOW_ALL, DISALLOW_ALL = "", "User-agent: *\nDisallow: /\n"

    def __init__(self, client: httpx.Client, polite: PoliteTransport | None = None):
        self.client, self.polite = client, polite
        self.rules: dict[str, Protego] = {}
        self.lock = threading.Lock()

    def allowed(self, url: str) -> bool:
        site = origin(url)
        with self.lock:  # one robots.txt request per origin, however many threads ask
            if site not in self.rules:
                self.rules[site] = rules = Protego.parse(self._fetch(site))
                delay = rules.crawl_delay(ROBOTS_AGENT)
                if delay and self.polite is not None:
                    host = self.polite.host(urlsplit(url).netloc)
                    host.delay = max(host.delay, min(float(delay), MAX_CRAWL_DELAY))
        return self.rules[site].can_fetch(url, ROBOTS_AGENT)

    def sitemaps(self, url: str) -> list[str]:
        """The sitemaps the robots.txt of `url`'s origin names (`Sitemap:` lines)."""
        self.allowed(url)  # that origin's rules, read once
        return list(self.rules[origin(url)].sitemaps)

    def check(self, request: httpx.Request) -> None:
        """httpx request hook: runs before every hop of a page fetch, so a redirect into a
        disallowed path is stopped before it is requested."""
        if request.url.scheme not in ("http", "https"):
            raise NotHttp(str(request.url))  # a redirect to file:, gopher:, … — httpx would refuse it too, with a vaguer error
        if request.extensions.get(ROBOTS_CHECKED) and not self.allowed(str(request.url)):
            raise RobotsDisallowed(str(request.url))

    def _fetch(self, origin: str) -> str:
        try:
            with total_deadline(self.client.timeout.read), self.client.stream("GET", f"{origin}/robots.txt") as response:
                body = read_capped(response)
        except httpx.ConnectError:
            return self.ALLOW_ALL
        except (httpx.HTTPError, TooLarge):
            return self.DISALLOW_ALL
        if response.status_code >= 500:
            return self.DISALLOW_ALL
        if response.status_code >= 400:
            return self.ALLOW_ALL
        return body.decode("utf-8", errors="replace")


def header_directives(values: list[str]) -> frozenset[str]:
    """X-Robots-Tag directives for every crawler ("noindex, nofollow") or ours ("static-rag: noindex")."""
    ours = []
    for value in values:
        agent, colon, rest = value.partition(":")
        if colon and " " not in agent.strip() and agent.strip().lower() != "unavailable_after":
            if agent.strip().lower() != ROBOTS_AGENT:
                continue  # another crawler's ("googlebot: noindex")
            value = rest
        ours.append(value)
    return directives(ours)


def disallowed_now(robots: RobotsRules, whereabouts: Whereabouts, scope: UrlScope, fetch_state: dict[str, FetchState],
                   reached: set[str]) -> dict[str, tuple[str, str]]:
    """The pages of this crawl's site indexed before and not reached now that robots.txt disallows:
    a staging site's `Disallow: /` deployed to the live one removes them all, and the delete guard
    says so rather than only how many."""
    out = {}
    for doc_id in fetch_state:
        url = doc_id[4:]
        if doc_id.startswith("url:") and doc_id not in reached and whereabouts.on_site(url) and scope(url) and not robots.allowed(url):
            out[doc_id] = (str(ErrorCode.WEB_ROBOTS_DISALLOWED), f"{url}: robots.txt now disallows it for {ROBOTS_AGENT} "
                                                                   "(a staging site's robots.txt deployed to the live one?)")
    return out
