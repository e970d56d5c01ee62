"""Fetching pages: bytes reach the parser with the right encoding, never pre-decoded lossily."""

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
    result = crawl_urls(site.source(["/header", "/meta", "/plain"]))
    assert not result.errors
    header, meta, plain = result.documents
    for page in (header, meta):
        assert page.title == "Café “naïve” € prices"
        assert page.text.startswith("# Crème brûlée\n\nOur crème brûlée costs 5 € and is served with açaí — a naïve façade, déjà vu")
    assert plain.text == "Crème brûlée à la carte"


ARTICLE = b"<html><head><title>%s</title></head><body><article><h1>%s</h1><p>A paragraph long enough for the extractor to keep as the main content of this page.</p></article></body></html>"


def fetch_all(site, paths, **keys):
    return crawl_urls(site.source(paths, **keys))


def test_robots_txt_is_obeyed_once_per_site(site):
    site.routes["/robots.txt"] = (200, "text/plain", b"User-agent: *\nDisallow: /\n\nUser-agent: static-rag\nDisallow: /private/\nAllow: /private/press\nDisallow: /*/launch$\n")
    for path in ("/help", "/private/salaries", "/private/press", "/drafts/launch"):
        site.routes[path] = (200, "text/html", ARTICLE % (path.encode(), path.encode()))
    result = fetch_all(site, ["/help", "/private/salaries", "/private/press", "/drafts/launch"])
    assert [d.title for d in result.documents] == ["/help", "/private/press"], "our group, not *; the longest match wins; * and $ patterns work"
    assert [(e.code, e.doc_id) for e in result.errors] == [("WEB_ROBOTS_DISALLOWED", f"url:{site.url(p)}") for p in ("/private/salaries", "/drafts/launch")]
    assert site.requests[0] == "/robots.txt" and sorted(site.requests[1:]) == ["/help", "/private/press"], "robots.txt once, first; disallowed pages never"


def test_unknowable_rules_fetch_nothing_and_missing_rules_allow_all(site):
    site.routes["/robots.txt"] = (503, "text/plain", b"busy")
    site.routes["/help"] = (200, "text/html", ARTICLE % (b"Help", b"Help"))
    assert [e.code for e in fetch_all(site, ["/help"]).errors] == ["WEB_ROBOTS_DISALLOWED"]
    assert [d.title for d in fetch_all(site, ["/help"], respect_robots=False).documents] == ["Help"], "the admin's own site: opt out"
    del site.routes["/robots.txt"]  # 404
    assert [d.title for d in fetch_all(site, ["/help"]).documents] == ["Help"]


def sitemap(site, paths):
    urls = "".join(f"<url><loc>{site.url(p)}</loc></url>" for p in paths)
    return f'<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{urls}</urlset>'.encode()


def test_sitemaps_and_sitemap_indexes_list_the_pages_within_max_pages(site):
    import gzip

    for i in range(6):
        site.routes[f"/p{i}"] = (200, "text/html", ARTICLE % (b"Page %d" % i, b"Page %d" % i))
    site.routes["/sitemap.xml"] = (200, "application/xml", (
        '<?xml version="1.0" encoding="UTF-8"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        f'<sitemap><loc>{site.url("/a.xml")}</loc></sitemap><sitemap><loc>{site.url("/b.xml.gz")}</loc></sitemap>'
        f'<sitemap><loc>{site.url("/sitemap.xml")}</loc></sitemap></sitemapindex>'  # a loop is harmless
    ).encode())
    site.routes["/a.xml"] = (200, "application/xml", sitemap(site, ["/p0", "/p1", "/p2?utm_source=sitemap"]))
    site.routes["/b.xml.gz"] = (200, "application/x-gzip", gzip.compress(sitemap(site, ["/p2", "/p3", "/p4", "/p5"])))
    result = crawl_urls(site.source(sitemaps=(site.url("/sitemap.xml"),), max_pages=5))
    assert [d.title for d in result.documents] == [f"Page {i}" for i in range(5)], "p2 listed twice is one page; p5 is past max_pages"
    assert result.listing_complete and not result.errors
    assert "/p5" not in site.requests and site.requests.count("/sitemap.xml") == 1


def test_a_broken_sitemap_is_a_listing_error_that_deletes_nothing(site):
    site.routes["/sitemap.xml"] = (200, "application/xml", b"<html>not a sitemap")
    result = crawl_urls(site.source(sitemaps=(site.url("/sitemap.xml"), site.url("/missing.xml"))))
    assert not result.listing_complete and not result.documents
    assert [e.code for e in result.errors] == ["SOURCE_LISTING_FAILED"] * 2
    assert "missing.xml: HTTP 404" in result.errors[1].message


def test_sitemap_entities_are_not_resolved(site):
    site.routes["/sitemap.xml"] = (200, "application/xml", (
        '<?xml version="1.0"?><!DOCTYPE urlset [<!ENTITY secret SYSTEM "file:///etc/hostname">]>'
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>http://127.0.0.1/&secret;</loc></url></urlset>'
    ).encode())
    pages = []
    from indexer.sources.sitemaps import read_sitemap
    import httpx

    with httpx.Client() as client:
        assert read_sitemap(client, site.url("/sitemap.xml"), pages, 10, lambda u: u) == []
    assert pages in ([], ["http://127.0.0.1/"]), "the file's content never becomes a URL"


def test_canonical_duplicates_are_indexed_once_under_the_canonical_url(site):
    def page(canonical: str) -> bytes:
        return (b'<html><head><title>Returns</title><link rel="Canonical" href="%s"></head><body><article><h1>Returns</h1>'
                b"<p>Shoes can be returned within sixty days of delivery for a full refund to the original card.</p></article></body></html>") % canonical.encode()

    site.routes["/returns"] = (200, "text/html", page("/returns"))
    site.routes["/returns?ref=footer"] = (200, "text/html", page("/returns"))
    site.routes["/print/returns"] = (200, "text/html", page(site.url("/returns?utm_source=x")))
    site.routes["/elsewhere"] = (200, "text/html", page("https://other.example.com/returns"))  # another site: ignored
    result = fetch_all(site, ["/returns?ref=footer", "/print/returns", "/returns", "/elsewhere"])
    assert [d.doc_id for d in result.documents] == [f"url:{site.url('/returns')}", f"url:{site.url('/elsewhere')}"]
    assert result.documents[0].url == site.url("/returns") and not result.errors


def test_a_slow_server_times_out_with_a_retryable_code(site):
    import time

    site.routes["/slow"] = (200, "text/html", lambda: (time.sleep(1.5), ARTICLE % (b"Slow", b"Slow"))[1])
    site.routes["/fast"] = (200, "text/html", ARTICLE % (b"Fast", b"Fast"))
    result = fetch_all(site, ["/slow", "/fast"], timeout_seconds=0.5)
    assert [(e.code, e.retryable, "timed out (after 3 attempts)" in e.message) for e in result.errors] == [("WEB_FETCH_FAILED", True, True)]
    assert [d.title for d in result.documents] == ["Fast"], "one slow page does not hold up the rest"


def test_a_single_page_app_is_named_as_the_reason_it_has_no_text(site, tmp_path):
    """A help centre built as a React or Vue app sends an empty <div id="root">: every page was
    "no main content found", with nothing to say why or what to do instead."""
    shell = b'<html><head><title>Help</title><script src="/app.js"></script></head><body><div id="root"></div></body></html>'
    site.routes["/app"] = (200, "text/html", shell)
    site.routes["/blank"] = (200, "text/html", b"<html><body><p> </p></body></html>")
    result = crawl_urls(site.source(["/app", "/blank"]))
    said = {e.doc_id.rsplit("/", 1)[-1]: e.message for e in result.errors if e.code == "FILE_EXTRACTION_EMPTY"}
    assert "writes its text with JavaScript" in said["app"] and "server renders" in said["app"]
    assert said["blank"].endswith("no main content found"), "an empty page is not called an app"
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.html").write_bytes(shell.replace(b'id="root"', b"id=app"))
    from indexer.config import SourceConfig
    from indexer.sources.files import crawl_files

    built = crawl_files(SourceConfig(name="site", type="files", path=tmp_path / "docs"))
    assert "writes its text with JavaScript" in built.errors[0].message


def test_a_refusal_says_what_the_admin_can_do_about_it(site):
    """A help centre behind Cloudflare's bot protection, or behind a login, failed every page with
    a bare "HTTP 403" / "HTTP 401"."""
    site.routes["/cf"] = (403, "text/html", b"<title>Just a moment...</title>", {"cf-mitigated": "challenge", "Server": "cloudflare"})
    site.routes["/login"] = (401, "text/html", b"sign in", {"WWW-Authenticate": 'Basic realm="intranet"'})
    site.routes["/plain"] = (403, "text/html", b"no")
    site.routes["/private"] = (403, "text/html", b"<h1>Forbidden</h1>", {"Server": "cloudflare"})  # the site's own 403, through Cloudflare
    result = crawl_urls(site.source(["/cf", "/login", "/plain", "/private"]))
    said = {e.doc_id.rsplit("/", 1)[-1]: e.message.split(": ", 1)[1] for e in result.errors}
    assert said["cf"].startswith("HTTP 403: the site's bot protection (Cloudflare) refused the crawler; allow its user agent (static-rag/…)")
    assert said["login"] == "HTTP 401: the page needs a login; index pages readable without one, or the documents themselves as a files source"
    assert said["plain"] == said["private"] == "HTTP 403"


def test_a_page_over_the_sources_max_bytes_is_not_downloaded_further(site):
    """`max_bytes` of a web source, not only the 10 MiB default: told by Content-Length or counted
    as the body arrives (a server that streams without one)."""
    site.routes["/small"] = (200, "text/html", ARTICLE % (b"Small", b"Small"))
    site.routes["/declared"] = (200, "text/html", ARTICLE % (b"Declared", b"Declared" + b" long" * 1000))
    site.routes["/streamed"] = (200, "text/html", lambda: ARTICLE % (b"Streamed", b"Streamed" + b" long" * 1000))
    result = crawl_urls(site.source(["/small", "/declared", "/streamed"], max_bytes=2048))
    assert [d.title for d in result.documents] == ["Small"]
    assert {e.doc_id.rsplit("/", 1)[-1]: e.code for e in result.errors} == {"declared": "WEB_TOO_LARGE", "streamed": "WEB_TOO_LARGE"}
    assert "more than max_bytes (2,048 bytes)" in result.errors[0].message
