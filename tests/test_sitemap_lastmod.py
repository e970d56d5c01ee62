"""A sitemap's <lastmod> spares the requests for pages it says have not changed since they were read:
a night's crawl of a large site costs what changed, not one request per page (at the default
politeness of 0.25 s between requests to a host, 400 pages took 101 s however few changed)."""

import json
import time
from datetime import datetime, timedelta, timezone

from click.testing import CliRunner

from indexer import runlog
from indexer.cli import cli
from indexer.deciding import decide
from indexer.documents import FetchState
from indexer.plan import PreviousDocument
from indexer.runreport import RunReport
from indexer.sources.sitemaps import Lastmods, changed_by
from indexer.sources.web import crawl_urls
from tests.conftest import LOOPBACK_WEB, write_config

LOCAL = '[[spaces]]\nprovider = "local"\n'
NOW = datetime(2026, 11, 29, 4, 0, tzinfo=timezone.utc)


def page(title: str, text: str) -> tuple:
    return 200, "text/html", f"<html><head><title>{title}</title></head><body><article><h1>{title}</h1><p>{text}</p></article></body></html>".encode()


def sitemap(site, lastmods: dict[str, str | None]) -> tuple:
    entries = "".join(f"<url><loc>{site.url(path)}</loc>{f'<lastmod>{said}</lastmod>' if said else ''}</url>" for path, said in lastmods.items())
    return 200, "application/xml", f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{entries}</urlset>'.encode()


def run_json(*args: str) -> tuple[int, dict]:
    result = CliRunner().invoke(cli, [*args, "--json"], catch_exceptions=False)
    assert "Traceback" not in result.output
    return result.exit_code, json.loads(result.output)


def reasons(tmp_path, site, report: dict) -> dict[str, str]:
    decisions = json.loads((tmp_path / "artifacts" / "generations" / report["generation"] / "report.json").read_text())["decisions"]
    return {d["doc_id"].removeprefix(f"url:{site.base}"): d["reason"] for d in decisions}


def test_pages_the_sitemap_says_are_unchanged_are_not_requested_again(tmp_path, site, local_embedder):
    site.routes.update({"/returns": page("Returns", "Shoes can be returned within sixty days."),
                        "/sizes": page("Sizes", "Our boots run half a size small."),
                        "/care": page("Care", "Clean leather with a damp cloth.")})  # no ETag, no Last-Modified: every read a download
    site.routes["/sitemap.xml"] = sitemap(site, {"/returns": "2026-01-05", "/sizes": "2026-01-05T10:00:00+00:00", "/care": None})
    source = f'[[sources]]\nname = "w"\ntype = "urls"\n{LOOPBACK_WEB}sitemaps = ["{site.url("/sitemap.xml")}"]\n'
    config = write_config(tmp_path, source + "trust_lastmod = true\n" + LOCAL)
    assert run_json("run", "-c", str(config))[1]["total_documents"] == 3

    site.requests.clear()
    code, report = run_json("run", "-c", str(config))
    assert code == 0 and report["documents"]["skipped"] == 3
    assert sorted(site.requests) == ["/care", "/robots.txt", "/sitemap.xml"], "only the page without a lastmod is asked for"
    said = reasons(tmp_path, site, report)
    assert said["/returns"] == "not modified since the last fetch (sitemap lastmod 2026-01-05)"
    assert said["/sizes"] == "not modified since the last fetch (sitemap lastmod 2026-01-05T10:00:00+00:00)" and said["/care"] == "unchanged"
    site.requests.clear()
    assert run_json("run", "-c", str(config), "--full-refresh")[0] == 0 and len(site.requests) == 5, "--full-refresh asks for every page"

    # An edit the sitemap tells of is read; one it does not tell of waits (the price of trusting it) …
    site.routes["/returns"] = page("Returns", "Shoes can be returned within ninety days.")
    site.routes["/sizes"] = page("Sizes", "Our boots now run true to size.")
    site.routes["/sitemap.xml"] = sitemap(site, {"/returns": f"{datetime.now(timezone.utc) - timedelta(minutes=5):%Y-%m-%dT%H:%M:%SZ}",
                                                 "/sizes": "2026-01-05T10:00:00+00:00", "/care": None})
    site.requests.clear()
    code, report = run_json("run", "-c", str(config))
    assert code == 0 and report["documents"]["updated"] == 1 and "/returns" in site.requests and "/sizes" not in site.requests
    assert reasons(tmp_path, site, report)["/returns"] == "content changed"
    # … unless the source asks for every page each run, as it does by default.
    write_config(tmp_path, source + LOCAL)
    site.requests.clear()
    code, report = run_json("run", "-c", str(config))
    assert code == 0 and sorted(site.requests) == ["/care", "/returns", "/robots.txt", "/sitemap.xml", "/sizes"]
    assert report["documents"]["updated"] == 1 and reasons(tmp_path, site, report)["/sizes"] == "content changed"
    newest = runlog.read(tmp_path / "artifacts")[0]
    assert runlog.last_completed_start(tmp_path / "artifacts") == datetime.fromisoformat(newest["started_at"]), "the next run's turns start here"


def test_a_page_is_still_asked_for_once_a_week_and_a_sitemap_that_forgets_its_lastmod_is_named(site):
    """Taken on trust for a week at a time: a page is asked for on its weekly turn — unless the
    last run that came to its end started after that turn (it asked then) — and if its text had
    changed though the lastmod said not, the run says that sitemap's lastmod cannot be trusted."""
    site.routes["/robots.txt"] = (200, "text/plain", b"User-agent: *\nDisallow: /private/\n")
    site.routes["/returns"] = (*page("Returns", "Shoes can be returned within ninety days."), {"ETag": '"v2"'})
    site.routes["/sizes"] = (*page("Sizes", "Our boots run half a size small."), {"ETag": '"s1"'})
    site.routes["/private/prices"] = page("Prices", "Trade prices.")
    site.routes["/sitemap.xml"] = sitemap(site, {"/returns": "2026-01-05", "/sizes": "2026-01-05", "/private/prices": "2026-01-05"})
    now = datetime.now(timezone.utc)
    state = {f"url:{site.url('/returns')}": FetchState(etag='"v1"', fetched_at=now - timedelta(days=11)),
             f"url:{site.url('/sizes')}": FetchState(etag='"s1"', fetched_at=now),  # just read (its turn: once a week)
             f"url:{site.url('/private/prices')}": FetchState(fetched_at=now)}
    source = site.source(sitemaps=(site.url("/sitemap.xml"),), trust_lastmod=True)
    assert crawl_urls(source, fetch_state=state, last_run=datetime.now(timezone.utc)).documents == [], "the run before asked on its turn"
    assert sorted(site.requests) == ["/robots.txt", "/sitemap.xml"]
    site.requests.clear()
    result = crawl_urls(source, fetch_state=state, last_run=now - timedelta(days=8))
    assert sorted(site.requests) == ["/returns", "/robots.txt", "/sitemap.xml"], "its turn came since the last run; the pages just read are not asked for"
    assert dict(site.request_headers)["/returns"]["If-None-Match"] == '"v1"', "asked conditionally, as ever"
    assert [d.title for d in result.documents] == ["Returns"] and result.not_modified == [f"url:{site.url('/sizes')}"]
    assert [(e.code, e.doc_id) for e in result.errors] == [("WEB_ROBOTS_DISALLOWED", f"url:{site.url('/private/prices')}")], \
        "robots.txt still decides: a page it now disallows is not kept on the sitemap's word"

    before = {f"url:{site.url('/returns')}": PreviousDocument(f"url:{site.url('/returns')}", "w", "an older text", "m", "Returns")}
    report = RunReport(run_id="r", by_lastmod=result.by_lastmod, lastmod_checked=result.lastmod_checked)
    decisions = decide(None, before, {d.doc_id: d for d in result.documents}, {"w"}, set(result.not_modified), report, None, True, False)
    assert decisions[f"url:{site.url('/returns')}"].reason == "content changed"
    [warning] = report.warnings
    assert warning.code == "WEB_LASTMOD_STALE" and warning.source == "w"
    assert f"1 page(s) had changed although the sitemap's lastmod said not since they were last read (e.g. {site.url('/returns')}: lastmod 2026-01-05" \
        in warning.message and "trust_lastmod = false" in warning.message, warning.message


def test_what_a_lastmod_can_mean():
    """The latest instant each W3C datetime form can mean: a day may end as late as UTC−12 reads it."""
    utc = timezone.utc
    assert changed_by("2026-11-02", NOW) == datetime(2026, 11, 3, 12, tzinfo=utc)
    assert changed_by(" 2026-10 ", NOW) == datetime(2026, 11, 1, 12, tzinfo=utc)
    assert changed_by("2025-12", NOW) == datetime(2026, 1, 1, 12, tzinfo=utc)
    assert changed_by("2025", NOW) == datetime(2026, 1, 1, 12, tzinfo=utc)
    assert changed_by("2026-11-02T10:00:00+02:00", NOW) == datetime(2026, 11, 2, 8, tzinfo=utc)
    assert changed_by("2026-11-02T10:00Z", NOW) == datetime(2026, 11, 2, 10, tzinfo=utc)
    assert changed_by("2026-11-02T10:00:00.250Z", NOW) == datetime(2026, 11, 2, 10, 0, 0, 250000, tzinfo=utc)
    assert changed_by("2026-11-02T10:00:00", NOW) == datetime(2026, 11, 2, 22, tzinfo=utc), "no zone: as late as any zone reads it"
    for nonsense in (None, "", "yesterday", "2026-13-01", "9999-12-31", "2026-11-29T09:00:00Z"):  # the last: hours ahead of NOW by a day
        assert changed_by(nonsense, NOW - timedelta(days=1)) is None, nonsense

    lastmods = Lastmods(now=NOW)
    lastmods.add("https://x.test/a", "2026-11-02")
    lastmods.add("https://x.test/a", "2026-10-01")  # listed twice: the later word counts
    lastmods.add("https://x.test/b", "someday")
    assert lastmods.said == {"https://x.test/a": "2026-11-02"}
    assert not lastmods.vouched("https://x.test/a", datetime(2026, 11, 3, 12, 30, tzinfo=utc)), "read within the hour after: a cache's older copy?"
    assert lastmods.vouched("https://x.test/a", datetime(2026, 11, 3, 13, tzinfo=utc))
    assert not lastmods.vouched("https://x.test/b", NOW) and not lastmods.vouched("https://x.test/a", None)
    pages = [f"https://x.test/p{i}" for i in range(1000)]
    due = [sum(lastmods.due(p, NOW - timedelta(days=days)) for p in pages) for days in (0, 1, 3.5, 7, 30)]
    assert due[0] == 0 and 90 < due[1] < 200 and 420 < due[2] < 580 and due[3:] == [1000, 1000], \
        "each page once a week, on a turn of its own: a night's run asks for a seventh of them"
    nightly = Lastmods(now=NOW, since=NOW - timedelta(days=1))
    assert 90 < sum(nightly.due(p, NOW - timedelta(days=30)) for p in pages) < 200, "the run before asked for the turns before it"
    assert sum(Lastmods(now=NOW, since=NOW + timedelta(days=3)).due(p, NOW - timedelta(days=30)) for p in pages) == 0


def test_a_crawl_reads_the_sitemap_its_robots_txt_names_for_the_lastmods(tmp_path, site, local_embedder):
    """`index init https://…/help/` writes a crawl, not a sitemap source: the site's robots.txt names
    its sitemap, whose lastmods spare the crawl's requests too — while what is indexed is still what
    the links reach."""
    links = "<a href='/returns'>Returns</a> <a href='/sizes'>Sizes</a>"
    site.routes["/"] = 200, "text/html", f"<html><head><title>Help</title></head><body><article><h1>Help</h1><p>Ask us anything. {links}</p></article></body></html>".encode()
    site.routes.update({"/returns": page("Returns", "Shoes can be returned within sixty days."), "/sizes": page("Sizes", "Our boots run small.")})
    site.routes["/robots.txt"] = (200, "text/plain", f"User-agent: *\nDisallow: /admin/\n\nSitemap: {site.url('/sitemap.xml')}\n".encode())
    site.routes["/sitemap.xml"] = sitemap(site, {"/": "2026-01-05", "/returns": "2026-01-05", "/sizes": "2026-01-05", "/unlinked": "2026-01-05"})
    site.routes["/unlinked"] = page("Unlinked", "A page no link leads to.")
    config = write_config(tmp_path, f'[[sources]]\nname = "w"\ntype = "urls"\n{LOOPBACK_WEB}urls = ["{site.url("/")}"]\ncrawl = true\ntrust_lastmod = true\n' + LOCAL)
    assert run_json("run", "-c", str(config))[1]["total_documents"] == 3, "the sitemap lists no pages of a crawl"

    site.requests.clear()
    code, report = run_json("run", "-c", str(config))
    assert code == 0 and report["unchanged"] and sorted(site.requests) == ["/robots.txt", "/sitemap.xml"]
    site.routes["/sitemap.xml"] = sitemap(site, {"/": "2026-01-05", "/returns": "2026-01-05"})
    site.requests.clear()
    code, report = run_json("run", "-c", str(config))
    assert code == 0 and report["total_documents"] == 3 and sorted(site.requests) == ["/robots.txt", "/sitemap.xml", "/sizes"], \
        "a page the sitemap gives no lastmod for is asked for, found through the links the home page had"


def test_a_site_deployed_whole_is_asked_once_then_trusted_again(tmp_path, site, local_embedder):
    """A static site generator (MkDocs) writes the build's date as every page's lastmod: after a
    deploy that changed no page, each answers 304 — and stayed "changed since it was downloaded",
    asked for every run until its text changed. Found unchanged, it is trusted again from the next run."""
    for name in ("returns", "sizes"):
        site.routes[f"/{name}"] = (*page(name.title(), f"All about {name}."), {"ETag": f'"{name}"'})
    site.routes["/sitemap.xml"] = sitemap(site, {"/returns": "2026-01-05", "/sizes": "2026-01-05"})
    config = write_config(tmp_path, f'[[sources]]\nname = "w"\ntype = "urls"\n{LOOPBACK_WEB}sitemaps = ["{site.url("/sitemap.xml")}"]\n'
                                    "trust_lastmod = true\n" + LOCAL)
    assert run_json("run", "-c", str(config))[0] == 0
    deployed = datetime.now(timezone.utc) - timedelta(hours=1) + timedelta(seconds=1)  # after the download; an hour after it passes in 1 s
    site.routes["/sitemap.xml"] = sitemap(site, {"/returns": f"{deployed:%Y-%m-%dT%H:%M:%SZ}", "/sizes": f"{deployed:%Y-%m-%dT%H:%M:%SZ}"})
    time.sleep(1.5)  # the next download comes an hour after the lastmod: not a cache's older copy

    site.requests.clear()
    code, report = run_json("run", "-c", str(config))
    assert code == 0 and sorted(site.not_modified) == ["/returns", "/sizes"] and not report["unchanged"], "asked: the lastmod moved"
    site.requests.clear()
    code, report = run_json("run", "-c", str(config))
    assert code == 0 and report["unchanged"] and sorted(site.requests) == ["/robots.txt", "/sitemap.xml"], "found unchanged: trusted again"


def test_a_large_site_whose_sitemap_could_spare_its_requests_is_told_how(tmp_path, site, local_embedder):
    """trust_lastmod is off by default (a site whose generator writes the publication date as lastmod
    would have its edits wait up to a week): a run that asked for many pages the sitemap vouched for
    names the setting."""
    lastmods = {f"/p{i}": "2026-01-05" for i in range(60)}
    for path in lastmods:
        site.routes[path] = (*page(path, f"Page {path} of the help centre."), {"ETag": f'"{path}"'})
    site.routes["/sitemap.xml"] = sitemap(site, lastmods)
    config = write_config(tmp_path, f'[[sources]]\nname = "help"\ntype = "urls"\n{LOOPBACK_WEB}sitemaps = ["{site.url("/sitemap.xml")}"]\n' + LOCAL)
    assert run_json("run", "-c", str(config))[0] == 0
    result = CliRunner().invoke(cli, ["run", "-c", str(config), "--quiet"], catch_exceptions=False)
    assert result.exit_code == 0 and len(site.not_modified) == 60, "asked for every page, as ever"
    assert "help: 60 pages were asked for that the sitemap's lastmod says have not changed since last read" in result.output
    assert "`trust_lastmod = true` asks only for the others" in result.output, result.output
