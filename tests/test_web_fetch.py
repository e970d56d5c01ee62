"""Fetching pages: bytes reach the parser with the right encoding, never pre-decoded lossily."""

from indexer.config import SourceConfig
from indexer.sources.web import crawl_urls

PAGE = (
    '<html><head><meta charset="windows-1252"><title>Café “naïve” € prices</title></head><body><article>'
    "<h1>Crème brûlée</h1><p>Our crème brûlée costs 5 € and is served with açaí — a naïve façade, déjà vu, "
    "and a paragraph long enough for the extractor to keep.</p></article></body></html>"
)


def test_non_utf8_pages_decode_by_header_meta_or_declared_charset(site):
    site.routes["/header"] = (200, "text/html; charset=windows-1252", PAGE.encode("cp1252"))
    site.routes["/meta"] = (200, "text/html", PAGE.encode("cp1252"))  # only <meta charset> says it
    site.routes["/plain"] = (200, "text/plain; charset=iso-8859-1", "Crème brûlée à la carte".encode("latin-1"))
    urls = tuple(site.url(p) for p in ("/header", "/meta", "/plain"))
    result = crawl_urls(SourceConfig(name="w", type="urls", urls=urls, allow_private_networks=("127.0.0.0/8",)))
    assert not result.errors
    header, meta, plain = result.documents
    for page in (header, meta):
        assert page.title == "Café “naïve” € prices"
        assert page.text.startswith("# Crème brûlée\n\nOur crème brûlée costs 5 € and is served with açaí — a naïve façade, déjà vu")
    assert plain.text == "Crème brûlée à la carte"


ARTICLE = b"<html><head><title>%s</title></head><body><article><h1>%s</h1><p>A paragraph long enough for the extractor to keep as the main content of this page.</p></article></body></html>"


def fetch_all(site, paths, **keys):
    source = SourceConfig(name="w", type="urls", urls=tuple(site.url(p) for p in paths), allow_private_networks=("127.0.0.0/8",), **keys)
    return crawl_urls(source)


def test_robots_txt_is_obeyed_once_per_site(site):
    site.routes["/robots.txt"] = (200, "text/plain", b"User-agent: *\nDisallow: /\n\nUser-agent: static-rag\nDisallow: /private/\nAllow: /private/press\nDisallow: /*/launch$\n")
    for path in ("/help", "/private/salaries", "/private/press", "/drafts/launch"):
        site.routes[path] = (200, "text/html", ARTICLE % (path.encode(), path.encode()))
    result = fetch_all(site, ["/help", "/private/salaries", "/private/press", "/drafts/launch"])
    assert [d.title for d in result.documents] == ["/help", "/private/press"], "our group, not *; the longest match wins; * and $ patterns work"
    assert [(e.code, e.doc_id) for e in result.errors] == [("WEB_ROBOTS_DISALLOWED", f"url:{site.url(p)}") for p in ("/private/salaries", "/drafts/launch")]
    assert site.requests == ["/robots.txt", "/help", "/private/press"], "robots.txt once; disallowed pages never"


def test_unknowable_rules_fetch_nothing_and_missing_rules_allow_all(site):
    site.routes["/robots.txt"] = (503, "text/plain", b"busy")
    site.routes["/help"] = (200, "text/html", ARTICLE % (b"Help", b"Help"))
    assert [e.code for e in fetch_all(site, ["/help"]).errors] == ["WEB_ROBOTS_DISALLOWED"]
    assert [d.title for d in fetch_all(site, ["/help"], respect_robots=False).documents] == ["Help"], "the admin's own site: opt out"
    del site.routes["/robots.txt"]  # 404
    assert [d.title for d in fetch_all(site, ["/help"]).documents] == ["Help"]
