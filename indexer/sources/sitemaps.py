"""Sitemaps (sitemaps.org urlset and sitemap index, gzip too): the page URLs a `sitemaps` source lists."""

from __future__ import annotations

import zlib

import httpx

from indexer.sources.netguard import MAX_BYTES, TooLarge, read_capped, total_deadline

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
        locations = [(loc.text or "").strip() for loc in root.iter(f"{SITEMAP_NS}loc")]
        locations = [loc for loc in locations if loc.startswith(("http://", "https://"))]
        if root.tag == f"{SITEMAP_NS}sitemapindex":
            queue.extend(locations)
        elif root.tag == f"{SITEMAP_NS}urlset":
            for page in map(normalize, locations):
                if len(pages) >= limit:
                    break
                if page and page not in known:
                    known.add(page)
                    pages.append(page)
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
