"""Same-site crawls from start URLs: depth and page limits, politeness per host, robots.txt on
every hop, and pages that are not pages left out with a warning."""

import threading
import time
from pathlib import Path

from indexer.documents import FetchState
from indexer.sources.web import crawl_urls
from tests.conftest import Site
from tests.fakes.pdfs import make_pdf


def page(title: str, *links: str, head: str = "") -> bytes:
    anchors = "".join(f'<li><a href="{href}">{text}</a></li>' for href, text in (link.split("|") if "|" in link else (link, link) for link in links))
    return (
        f"<html><head><title>{title}</title>{head}</head><body><nav><ul>{anchors}</ul></nav><article><h1>{title}</h1>"
        f"<p>{title} is a page long enough for the extractor to keep as the main content of the page.</p></article></body></html>"
    ).encode()


def serve(site, pages: dict[str, bytes]) -> None:
    for path, body in pages.items():
        site.routes[path] = (200, "text/html", body)


def test_a_crawl_follows_same_site_links_to_max_depth(site, tmp_path):
    make_pdf(tmp_path / "manual.pdf", [("h1", "Manual"), ("p", "How to lace the boots.")], running=False)
    site.routes["/manual.pdf"] = (200, "application/pdf", (tmp_path / "manual.pdf").read_bytes())
    serve(site, {
        "/": page("Home", "/a", "b#section", "/b?utm_source=nav", "http://localhost:1/elsewhere", "/manual.pdf", "/secret|nofollow"),
        "/a": page("A", "/a/1", "/"),  # a link back home is harmless
        "/b": page("B", "/a"),
        "/a/1": page("A1", "/a/1/x"),
        "/a/1/x": page("A1x"),
    })
    site.routes["/"] = (200, "text/html", site.routes["/"][2].replace(b'href="/secret"', b'href="/secret" rel="nofollow"'))
    result = crawl_urls(site.source(["/"], crawl=True, max_depth=2))
    assert [d.title for d in result.documents] == ["Home", "A", "B", "Manual", "A1"], "breadth first (a linked PDF too); A1x is three hops away"
    assert sorted(site.requests) == ["/", "/a", "/a/1", "/b", "/manual.pdf", "/robots.txt"], "each page once; no other host or nofollow link"
    assert result.listing_complete and not result.errors and not result.warnings


def test_a_sources_own_drop_parameters_make_links_one_page(site):
    """A site whose navigation tags links with its own parameter (`?ref=nav`): listed in the
    source's drop_parameters, those links, and a listed URL with it, are the page itself, requested
    and indexed once."""
    serve(site, {"/": page("Home", "/b?ref=nav", "/b?ref=footer", "/b", "/c?page=2"), "/b": page("B"), "/c?page=2": page("C")})
    result = crawl_urls(site.source(["/", "/b?ref=ad"], crawl=True, drop_parameters=("ref",)))
    assert [d.title for d in result.documents] == ["Home", "B", "C"]
    assert [d.url for d in result.documents][1:] == [site.url("/b"), site.url("/c?page=2")], "other parameters stay"
    assert sorted(site.requests) == ["/", "/b", "/c?page=2", "/robots.txt"]


def test_pages_that_say_noindex_are_not_indexed_but_their_links_are_followed(site):
    """A help centre's tag listings, login and print pages say noindex; before, each was indexed
    like an article (and searches found "Tagged: returns" over the returns article)."""
    serve(site, {
        "/": page("Home", "/tags", "/login", "/print", "/partner"),
        "/tags": page("Tags", "/leaf", head='<meta name="ROBOTS" content="noindex, follow">'),
        "/print": page("Print", head='<meta name="static-rag" content="noindex">'),
        "/partner": page("Partner"),
        "/leaf": page("Leaf"),
    })
    site.routes["/login"] = (200, "text/html", page("Login", "/hidden"), {"X-Robots-Tag": "noindex, nofollow"})
    site.routes["/partner"] = (200, "text/html", page("Partner"), {"X-Robots-Tag": "googlebot: noindex"})  # another crawler's rule
    result = crawl_urls(site.source(["/"], crawl=True))
    assert sorted(d.title for d in result.documents) == ["Home", "Leaf", "Partner"], "the tag page's links are followed"
    assert "/hidden" not in site.requests, "noindex, nofollow: nor are its links"
    noindex = sorted((w.doc_id, w.level) for w in result.warnings if w.code == "WEB_NOINDEX")
    assert noindex == [(f"url:{site.url(p)}", "warning") for p in ("/login", "/print", "/tags")] and not result.errors
    assert "X-Robots-Tag header says noindex" in " ".join(w.message for w in result.warnings)
    everything = crawl_urls(site.source(["/"], crawl=True, respect_robots=False))
    assert {"Login", "Print", "Tags"} <= {d.title for d in everything.documents}, "respect_robots = false: a site of your own"


def test_a_redirect_stub_is_not_indexed_and_its_target_is_followed(site):
    """Jekyll's redirect_from and moved GitHub Pages leave pages that only say "Redirecting…" and
    send the browser on with a meta refresh: each was indexed as a page titled "Redirecting…"."""
    stub = b'<html><head><title>Redirecting&hellip;</title><meta http-equiv="refresh" content="0; url=/guide/returns/"></head>' \
           b'<body><h1>Redirecting&hellip;</h1><a href="/guide/returns/">Click here if you are not redirected.</a></body></html>'
    serve(site, {"/": page("Home", "/returns.html"), "/returns.html": stub, "/guide/returns/": page("Returns")})
    result = crawl_urls(site.source(["/"], crawl=True))
    assert [d.title for d in result.documents] == ["Home", "Returns"]
    assert [(w.code, w.doc_id) for w in result.warnings] == [("WEB_REFRESH", f"url:{site.url('/returns.html')}")]
    assert site.url("/guide/returns/") in result.warnings[0].message
    listed = crawl_urls(site.source(["/returns.html"]))
    assert listed.documents == [] and "list that page instead" in listed.warnings[0].message
    reloading = page("Scores", head='<meta http-equiv="refresh" content="300">')  # reloads itself: a page
    serve(site, {"/scores": reloading})
    assert [d.title for d in crawl_urls(site.source(["/scores"])).documents] == ["Scores"]


def test_a_page_reached_through_a_redirect_is_indexed_once_at_the_address_it_redirects_to(site):
    """A page linked at its old address (a 301) was indexed there and again where it lives now, and
    the chatbot cited the old link; a "Sign in" link redirecting to the company's login service
    was indexed as a page of the help site."""
    login = Site()
    try:
        serve(login, {"/signin": page("Sign in to Acme")})
        serve(site, {"/": page("Home", "/old-returns", "/returns", "/login", "/shipping"), "/returns": page("Returns"), "/shipping": page("Shipping")})
        site.routes["/old-returns"] = (301, "text/html", b"", {"Location": "/returns"})
        site.routes["/login"] = (302, "text/html", b"", {"Location": login.url("/signin")})
        result = crawl_urls(site.source(["/"], crawl=True))
        assert sorted((d.title, d.url) for d in result.documents) == [
            ("Home", site.url("/")), ("Returns", site.url("/returns")), ("Shipping", site.url("/shipping"))], "once, where it lives"
        assert [(w.code, w.level) for w in result.warnings] == [("WEB_REDIRECTED_AWAY", "warning")] and not result.errors
        assert f"{site.url('/login')} → {login.url('/signin')}" in result.warnings[0].message
        indexed_before = crawl_urls(site.source(["/"], crawl=True), fetch_state={f"url:{site.url('/login')}": FetchState()})
        assert [(w.code, w.doc_id) for w in indexed_before.warnings] == [("WEB_REDIRECTED_AWAY", f"url:{site.url('/login')}")], \
            "indexed before: named on its own, as the page its removal is about"

        serve(site, {"/": page("Home", "/old-returns"), "/returns": page("Returns", "/shipping")})
        budget = crawl_urls(site.source(["/"], crawl=True, max_pages=3))
        assert [d.title for d in budget.documents] == ["Home", "Returns", "Shipping"] and not budget.warnings, "the address it moved from is no page of max_pages"

        site.routes["/moved"] = (301, "text/html", b"", {"Location": login.url("/signin")})  # a listed page that moved to another host
        serve(login, {"/signin": page("Sign in to Acme", "/reset"), "/reset": page("Reset your password")})
        moved = crawl_urls(site.source(["/moved"], crawl=True))
        assert [(d.title, d.url) for d in moved.documents] == [("Sign in to Acme", login.url("/signin")), ("Reset your password", login.url("/reset"))], \
            "listed: indexed where it leads, and the crawl goes on there"
        assert moved.moved == {f"url:{site.url('/moved')}": f"url:{login.url('/signin')}"} and not moved.warnings
    finally:
        login.close()


def test_a_crawl_stops_at_max_pages_and_says_so(site):
    serve(site, {"/": page("Home", *(f"/p{i}" for i in range(10)))} | {f"/p{i}": page(f"P{i}") for i in range(10)})
    result = crawl_urls(site.source(["/"], crawl=True, max_pages=4))
    assert [d.title for d in result.documents] == ["Home", "P0", "P1", "P2"]
    assert len([p for p in site.requests if p != "/robots.txt"]) == 4
    assert [(w.code, w.level) for w in result.warnings] == [("SOURCE_LIMIT_REACHED", "warning")]
    assert "max_pages = 4" in result.warnings[0].message


def test_without_crawl_links_are_not_followed(site):
    serve(site, {"/": page("Home", "/a"), "/a": page("A")})
    assert [d.title for d in crawl_urls(site.source(["/"])).documents] == ["Home"]
    assert "/a" not in site.requests


def test_a_page_whose_links_are_unknown_this_run_makes_the_listing_incomplete(site):
    serve(site, {"/": page("Home", "/hub"), "/hub": page("Hub", "/leaf")})
    site.routes["/hub"] = (503, "text/plain", b"busy")
    result = crawl_urls(site.source(["/"], crawl=True))
    assert [e.code for e in result.errors] == ["WEB_HTTP_STATUS"]
    assert not result.listing_complete, "pages below /hub were not seen, so none of them may be deleted"


def test_robots_txt_is_checked_on_every_redirect_hop(site):
    site.routes["/robots.txt"] = (200, "text/plain", b"User-agent: *\nDisallow: /private/\n")
    site.routes["/old-pricing"] = (301, "text/plain", b"", {"Location": "/private/pricing"})
    site.routes["/private/pricing"] = (200, "text/html", page("Pricing"))
    result = crawl_urls(site.source(["/old-pricing"]))
    assert [e.code for e in result.errors] == ["WEB_ROBOTS_DISALLOWED"]
    assert "redirected to" in result.errors[0].message and "/private/pricing" in result.errors[0].message
    assert "/private/pricing" not in site.requests


def test_a_binary_content_type_is_skipped_unread_with_a_warning(site):
    streamed = []

    def body():
        streamed.append(True)
        return b"\x89PNG" + b"\0" * 200_000

    site.routes["/price-list"] = (200, "image/png", body)
    site.routes["/help"] = (200, "text/html", page("Help"))
    result = crawl_urls(site.source(["/price-list", "/help"]))
    assert [d.title for d in result.documents] == ["Help"]
    assert not result.errors, "an image is left out on purpose, not a failed document"
    assert [(w.code, w.level, w.doc_id) for w in result.warnings] == [("WEB_UNSUPPORTED_TYPE", "warning", f"url:{site.url('/price-list')}")]
    assert "image/png" in result.warnings[0].message


def test_a_file_sent_as_bare_bytes_is_read_by_the_extension_of_its_name(site, tmp_path):
    """A help site keeps its manual and its old deck on S3, which stored them without a type: both
    came back as application/octet-stream and were skipped as not text. A download whose name says
    nothing is still skipped, and the warning says why."""
    make_pdf(tmp_path / "manual.pdf", [("h1", "Boot care manual"), ("p", "Wax the leather twice a winter.")], running=False)
    site.routes["/files/manual.pdf"] = (200, "application/octet-stream", (tmp_path / "manual.pdf").read_bytes())
    legacy = Path(__file__).parent / "data" / "legacy_office"
    site.routes["/files/Store-Briefing.PPT"] = (200, "binary/octet-stream", (legacy / "briefing.ppt").read_bytes())
    site.routes["/download"] = (200, "application/octet-stream", b"\x00\x01 some bytes")
    site.routes["/get?id=7"] = (200, "application/x-download", (tmp_path / "manual.pdf").read_bytes(),
                                {"Content-Disposition": "attachment; filename=\"manual (2).pdf\""})
    site.routes["/get?id=8"] = (200, "application/octet-stream", (legacy / "briefing.ppt").read_bytes(),
                                {"Content-Disposition": "attachment; filename=\"briefing.bin\"; filename*=UTF-8''Briefing%20%C3%A9t%C3%A9.ppt"})
    result = crawl_urls(site.source(["/files/manual.pdf", "/files/Store-Briefing.PPT", "/download", "/get?id=7", "/get?id=8"]))
    assert sorted(d.title for d in result.documents) == ["Boot care manual"] * 2 + ["Store briefing"] * 2 and not result.errors, result
    assert [(w.code, w.doc_id) for w in result.warnings] == [("WEB_UNSUPPORTED_TYPE", f"url:{site.url('/download')}")]
    assert "application/octet-stream is not HTML, plain text, Markdown, PDF, an office document or EPUB (nor does its name end in" in result.warnings[0].message


def test_a_file_the_server_calls_text_is_read_as_what_its_bytes_are(site, tmp_path):
    """An old Apache sends what it has no type for as text/plain, a misconfigured server a PDF as
    text/html: read as text, a manual was indexed as "%PDF-1.4 %“Œ‹ž 1 0 obj <<…" and a Word file
    as "PK\\x03\\x04…" for a chatbot to cite. And a link to a PDF that answers with a sign-in page
    failed as "not a readable PDF (… Data format error)"."""
    import zipfile

    from tests.fakes.word import make_docx

    make_pdf(tmp_path / "manual.pdf", [("h1", "Boot care manual"), ("p", "Wax the leather twice a winter.")], running=False)
    make_docx(tmp_path / "policy.docx", [("h1", "Travel policy"), ("p", "Employees book trains.")], title="Travel policy")
    with zipfile.ZipFile(tmp_path / "photos.zip", "w") as archive:
        archive.writestr("boot.jpg", b"\xff\xd8\xff\xe0 a photo")
    legacy = Path(__file__).parent / "data" / "legacy_office"
    site.routes["/manual"] = (200, "text/html", (tmp_path / "manual.pdf").read_bytes())
    site.routes["/policy"] = (200, "text/plain", (tmp_path / "policy.docx").read_bytes())
    site.routes["/briefing"] = (200, "text/plain; charset=iso-8859-1", (legacy / "briefing.ppt").read_bytes())
    site.routes["/hello.txt"] = (200, "text/plain", "Hello from the shop.\n".encode("utf-16"))  # text, its NULs those of UTF-16
    site.routes["/photos"] = (200, "text/html", (tmp_path / "photos.zip").read_bytes())
    site.routes["/blob"] = (200, "text/plain", b"\x00\x01\x02 compiled bytes")
    site.routes["/old-page"] = (200, "text/html", b"<html><head><title>Store hours</title></head><body><main><h1>Store hours</h1>"
                                                  b"<p>We open at nine.\x00</p></main></body></html>")  # a CMS's stray NUL: still a page
    site.routes["/files/report.pdf"] = (200, "application/pdf", b"<!DOCTYPE html><html><head><title>Sign in</title></head><body>Log in to download.</body></html>")
    paths = ["/manual", "/policy", "/briefing", "/hello.txt", "/photos", "/blob", "/files/report.pdf", "/old-page"]
    result = crawl_urls(site.source(paths))
    read = {d.url.rsplit("/", 1)[-1]: d for d in result.documents}
    assert {name: d.title for name, d in read.items()} == {"manual": "Boot care manual", "policy": "Travel policy", "briefing": "Store briefing",
                                                           "hello.txt": "Hello from the shop.", "old-page": "Store hours"}, read
    assert read["manual"].text == "# Boot care manual\n\nWax the leather twice a winter."
    warned = {w.doc_id.rsplit("/", 1)[-1]: w.message for w in result.warnings}
    assert set(warned) == {"photos", "blob"} and all(w.code == "WEB_UNSUPPORTED_TYPE" for w in result.warnings), warned
    assert "sent as text/html, but its bytes are application/zip, not text; skipped" in warned["photos"]
    assert "sent as text/plain, but its bytes are application/octet-stream, not text" in warned["blob"]
    (failed,) = result.errors
    assert failed.code == "FILE_EXTRACTION_FAILED" and "sent as application/pdf, but it is an HTML page (“Sign in”): a sign-in or error page" in failed.message


def test_the_pdfs_a_crawl_fetches_at_once_are_all_read(site, tmp_path):
    """PDFium is not thread-safe, and a crawl reads what it fetches in its fetch threads: a help
    centre linking its manuals killed the run with a segmentation fault, before any report."""
    for i in range(8):  # read at once without a lock, eight manuals of a dozen pages crashed 3 runs in 5
        make_pdf(tmp_path / f"m{i}.pdf", [("h1", f"Manual {i}")] + [("p", f"Chapter {c} explains how to lace the boots. " * 40) for c in range(30)])
        site.routes[f"/manuals/m{i}.pdf"] = (200, "application/pdf", (tmp_path / f"m{i}.pdf").read_bytes())
    result = crawl_urls(site.source([f"/manuals/m{i}.pdf" for i in range(8)]))
    assert sorted(d.title for d in result.documents) == [f"Manual {i}" for i in range(8)] and not result.errors and not result.warnings


def test_requests_to_one_host_are_limited_and_spaced(site):
    lock, active, peak, starts = threading.Lock(), [0], [0], []

    def slow():
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
            starts.append(time.monotonic())
        time.sleep(0.15)
        with lock:
            active[0] -= 1
        return page("Slow")

    for i in range(6):
        site.routes[f"/s{i}"] = (200, "text/html", slow)
    crawl_urls(site.source([f"/s{i}" for i in range(6)], concurrency=6, per_host_concurrency=2))
    assert peak[0] == 2, "six workers, but never more than two requests open to one host"

    starts.clear()
    site.routes["/robots.txt"] = (200, "text/plain", b"User-agent: *\nCrawl-delay: 0.3\n")
    crawl_urls(site.source([f"/s{i}" for i in range(3)], concurrency=3))
    gaps = [b - a for a, b in zip(starts, starts[1:])]
    assert len(gaps) == 2 and min(gaps) >= 0.28, f"robots.txt Crawl-delay spaces request starts: {gaps}"


def test_links_robots_txt_disallows_are_not_crawled_and_not_failures(site):
    site.routes["/robots.txt"] = (200, "text/plain", b"User-agent: *\nDisallow: /search\n")
    serve(site, {"/": page("Home", "/search?q=a", "/search?q=b", "/a"), "/a": page("A")})
    result = crawl_urls(site.source(["/"], crawl=True, max_pages=3))
    assert [d.title for d in result.documents] == ["Home", "A"] and not result.errors
    assert [(w.code, w.level) for w in result.warnings] == [("WEB_ROBOTS_DISALLOWED", "warning")]
    assert result.warnings[0].message.startswith("2 linked page(s) not crawled")
    assert not any(p.startswith("/search") for p in site.requests)


def test_linked_office_files_the_crawl_cannot_read_are_named_once_not_fetched(site):
    """A help site that links its sales deck and price list: a crawl left them out without a word,
    and a website owner asked why the deck was never found."""
    serve(site, {"/": page("Home", "/decks/winter-sale.key", "/prices.numbers", "/logo.png", "/a"), "/a": page("A", "/prices.numbers")})
    result = crawl_urls(site.source(["/"], crawl=True))
    assert [d.title for d in result.documents] == ["Home", "A"] and not result.errors
    assert [(w.code, w.level) for w in result.warnings] == [("WEB_FILES_UNREAD", "warning")], "one warning for the source, an image not counted"
    said = result.warnings[0].message
    assert said.startswith("2 linked file(s) not fetched: Keynote, Numbers files, formats this version does not read") and ".pptx" in said
    assert site.url("/decks/winter-sale.key") in said and not any(p.endswith((".key", ".numbers")) for p in site.requests)


def test_include_and_exclude_keep_a_crawl_to_the_help_centre(site):
    """A crawl started at a site's home page, or a sitemap of the whole site, went on to every page
    of the host — shop, cart, print views — and spent `max_pages` there instead of on the help centre."""
    serve(site, {
        "/": page("Home", "/help/", "/shop", "/cart"),
        "/help/": page("Help", "/help/returns", "/help/returns/print", "/", "/shop"),
        "/help/returns": page("Returns", "/help/sizes?print=1"),
        "/help/returns/print": page("Returns, printable"),
        "/help/sizes": page("Sizes"),
        "/shop": page("Shop"),
        "/cart": page("Cart"),
    })
    locations = "".join(f"<url><loc>{site.url(p)}</loc></url>" for p in ("/shop", "/help/sizes", "/cart"))
    site.routes["/sitemap.xml"] = (200, "application/xml", f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{locations}</urlset>'.encode())
    scoped = {"include": ("/help/",), "exclude": ("*/print", "*print=1")}
    result = crawl_urls(site.source(["/"], crawl=True, sitemaps=(site.url("/sitemap.xml"),), **scoped))
    assert sorted(d.title for d in result.documents) == ["Help", "Returns", "Sizes"], "the listed home page is read for its links only"
    assert not {"/shop", "/cart", "/help/returns/print", "/help/sizes?print=1"} & set(site.requests), "pages outside are never fetched"
    assert result.listing_complete and not result.errors and not result.warnings
    site.routes["/help"] = (301, "text/html", b"", {"Location": "/help/"})  # listed without its slash: indexed where it leads
    assert sorted(d.title for d in crawl_urls(site.source(["/help"], crawl=True, **scoped)).documents) == ["Help", "Returns"]
    site.routes["/help/old-sizes"] = (301, "text/html", b"", {"Location": "/shop"})  # led out of the help centre: not indexed
    assert [d.title for d in crawl_urls(site.source(["/help/old-sizes"], **scoped)).documents] == []
