"""Sitemaps (sitemaps.org urlset and sitemap index, gzip too): the page URLs a `sitemaps` source
lists, and what their `<lastmod>` says of when each page last changed (`Lastmods`)."""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

import httpx

from indexer.sources.netguard import MAX_BYTES, TooLarge, read_capped, total_deadline

SITEMAP_NS = "{http://www.sitemaps.org/schemas/sitemap/0.9}"
MAX_SITEMAPS = 100  # sitemap files read per listed sitemap, index children included
MAX_LASTMOD_SITEMAPS = 10  # files read per sitemap a crawled site's robots.txt names, for their lastmods only


def read_sitemap(client: httpx.Client, url: str, pages: list[str], limit: int, normalize, lastmods: Lastmods | None = None,
                 max_files: int = MAX_SITEMAPS) -> list[str]:
    """Append the page URLs of a sitemap or sitemap index (followed breadth-first, gzip accepted, at
    most `max_files` files) to `pages`, normalized and new ones only, until it holds `limit`, and each
    page's `<lastmod>` to `lastmods`; return a message per sitemap file that could not be read."""
    from lxml import etree

    parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False)
    known = set(pages)
    errors: list[str] = []
    queue, seen = [url], set()
    while queue and len(pages) < limit and len(seen) < max_files:
        current = queue.pop(0)
        if current in seen:
            continue
        seen.add(current)
        try:
            with total_deadline(client.timeout.read), client.stream("GET", current) as response:
                body = read_capped(response)
        except (httpx.HTTPError, TooLarge) as exc:
            errors.append(f"sitemap {current}: {'too large' if isinstance(exc, TooLarge) else f'{type(exc).__name__}: {exc}'}")
            continue
        if response.status_code >= 400:
            errors.append(f"sitemap {current}: HTTP {response.status_code}")
            continue
        try:
            body = gunzip_capped(body, MAX_BYTES)
        except TooLarge:
            errors.append(f"sitemap {current}: more than {MAX_BYTES // (1024 * 1024)} MB once decompressed")
            continue
        except (OSError, zlib.error, EOFError) as exc:
            errors.append(f"sitemap {current}: bad gzip data: {exc}")
            continue
        try:
            root = etree.fromstring(body, parser)
        except etree.XMLSyntaxError as exc:
            errors.append(f"sitemap {current}: not XML: {exc}")
            continue
        if root.tag == f"{SITEMAP_NS}sitemapindex":
            locations = [(loc.text or "").strip() for loc in root.iter(f"{SITEMAP_NS}loc")]
            queue.extend(loc for loc in locations if loc.startswith(("http://", "https://")))
        elif root.tag == f"{SITEMAP_NS}urlset":
            for entry in root.iterfind(f"{SITEMAP_NS}url"):
                location = (entry.findtext(f"{SITEMAP_NS}loc") or "").strip()
                page = normalize(location) if location.startswith(("http://", "https://")) else None
                if not page:
                    continue
                if page not in known:
                    if len(pages) >= limit:
                        break
                    known.add(page)
                    pages.append(page)
                if lastmods is not None:
                    lastmods.add(page, entry.findtext(f"{SITEMAP_NS}lastmod"))
        else:
            errors.append(f"sitemap {current}: root element is {root.tag}, not a sitemaps.org urlset or sitemapindex")
    return errors


def gunzip_capped(body: bytes, cap: int, layers: int = 3) -> bytes:
    """Undo gzip (a sitemap.xml.gz, also gzip inside gzip) without ever holding more than `cap`
    bytes: a few KB can expand to gigabytes. Bytes that are not gzip come back as they are."""
    for _ in range(layers):
        if body[:2] != b"\x1f\x8b":
            return body
        inflater = zlib.decompressobj(wbits=31)
        out = inflater.decompress(body, cap + 1)
        if len(out) > cap or inflater.unconsumed_tail:
            raise TooLarge
        body = out
    if body[:2] == b"\x1f\x8b":
        raise TooLarge  # more layers than any real sitemap uses
    return body


LASTMOD = re.compile(r"(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?")
LATEST_ZONE = timedelta(hours=12)  # a time without its zone, or a day, may be as late as UTC−12 reads it
SETTLE = timedelta(hours=1)  # a page read this soon after its lastmod may have come from a cache's older copy
TRUST_DAYS = 7  # a page the sitemap vouches for is still asked for once in this many days, on a turn of its own
TURNS_FROM = datetime(2026, 1, 1, tzinfo=timezone.utc)  # where every page's turns are counted from


def changed_by(lastmod: str | None, now: datetime) -> datetime | None:
    """The latest instant a W3C-datetime `<lastmod>` can mean ("2026-11-02" may be that day's end
    anywhere on Earth; a month or a year its last day), or None when it is missing, unreadable or
    more than a day in the future (a sitemap that says 9999 for every page vouches for nothing)."""
    text = (lastmod or "").strip()
    if not text:
        return None
    whole = LASTMOD.fullmatch(text)
    try:
        if whole:
            year, month, day = int(whole[1]), int(whole[2] or 0), int(whole[3] or 0)
            if day:
                latest = datetime(year, month, day, tzinfo=timezone.utc) + timedelta(days=1)
            elif month:
                latest = datetime(year + month // 12, month % 12 + 1, 1, tzinfo=timezone.utc)
            else:
                latest = datetime(year + 1, 1, 1, tzinfo=timezone.utc)
            latest += LATEST_ZONE
        else:
            parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
            latest = parsed if parsed.tzinfo else parsed.replace(tzinfo=timezone.utc) + LATEST_ZONE
    except (ValueError, OverflowError):
        return None
    return latest if latest <= now + timedelta(days=1) else None


@dataclass
class Lastmods:
    """Each listed page's `<lastmod>`, as written and as the latest instant it can mean (the later
    one when two sitemaps list a page)."""

    now: datetime = field(default_factory=lambda: datetime.now(timezone.utc))
    since: datetime | None = None  # when the last run that came to its end started (runs.jsonl): the pages it read on their turn
    said: dict[str, str] = field(default_factory=dict)
    by: dict[str, datetime] = field(default_factory=dict)

    def add(self, page: str, lastmod: str | None) -> None:
        latest = changed_by(lastmod, self.now)
        if latest is not None and (page not in self.by or latest > self.by[page]):
            self.said[page], self.by[page] = lastmod.strip(), latest

    def vouched(self, page: str, fetched_at: datetime | None) -> bool:
        """Whether the sitemap says `page` has not changed since it was read at `fetched_at`."""
        return page in self.by and fetched_at is not None and fetched_at >= self.by[page] + SETTLE

    def due(self, page: str, fetched_at: datetime) -> bool:
        """Whether `page`, last downloaded at `fetched_at`, is to be asked for again whatever its
        lastmod says (a sitemap may forget to move it): its turn, once every TRUST_DAYS at a moment
        of its own (from its address), came since then and since the last run that came to its end
        started — that run asked for the pages whose turn came before. Nightly runs then ask for a
        seventh of the pages each, evenly; runs a week apart ask for them all."""
        cycle = timedelta(days=TRUST_DAYS)
        offset = cycle * (zlib.crc32(page.encode()) / 2 ** 32)
        turn = TURNS_FROM + offset + ((self.now - TURNS_FROM - offset) // cycle) * cycle
        return turn > max(fetched_at, min(self.since or fetched_at, self.now))
