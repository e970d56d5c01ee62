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
