"""The demo page and the embeddable widget, driven in headless Chromium (Debian's chromium and
chromium-driver, which `make install` adds; nothing is downloaded)."""

import shutil
from pathlib import Path

import pytest

from tests.servers import free_port, running_server, without_torch

CHROMIUM, DRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")
QUESTION = "how do I undo a bad index run?"


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    if not (CHROMIUM.exists() and DRIVER.exists()):
        pytest.fail(f"{CHROMIUM} and {DRIVER} are needed: `make install` installs Debian's chromium and chromium-driver")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    profile = tmp_path_factory.mktemp("chromium-profile")
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage", f"--user-data-dir={profile}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options, service=Service(executable_path=str(DRIVER)))  # a path given: no Selenium Manager lookup
    driver.set_page_load_timeout(30)
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture(scope="module")
def server(examples_artifacts, tmp_path_factory):
    """The examples served as `make demo` serves them, shared by the tests that need no other
    settings (starting a server takes seconds; it stops with Ctrl-C after the last of them)."""
    with running_server(examples_artifacts, tmp_path_factory.mktemp("server")) as started:
        yield started


def search_in_page(driver, query: str):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ready
    from selenium.webdriver.support.ui import WebDriverWait

    box = WebDriverWait(driver, 20).until(ready.presence_of_element_located((By.CSS_SELECTOR, ".srag-input")))
    box.send_keys(query)
    driver.find_element(By.CSS_SELECTOR, ".srag-button").click()
    WebDriverWait(driver, 30).until(lambda d: d.find_element(By.CSS_SELECTOR, ".srag-status").text not in ("", "Searching…"))
    return driver.find_elements(By.CSS_SELECTOR, ".srag-hit"), driver.find_element(By.CSS_SELECTOR, ".srag-status").text


def test_the_demo_page_shows_results_with_highlights(browser, server):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    demo = next(line.split()[2] for line in server.printed().splitlines() if line.startswith("Demo page: "))
    assert demo == server.base + "/", "`index serve` prints where the demo page is"
    browser.get(demo)
    assert browser.title == "static-rag search"
    hits, status = search_in_page(browser, QUESTION)
    assert len(hits) == 5 and status == "5+ results"
    top = hits[0]
    assert top.find_element(By.CSS_SELECTOR, ".srag-title").text == "Generations, CURRENT and rollback"
    assert top.find_element(By.CSS_SELECTOR, ".srag-path").text == "Rolling back a bad run"
    marked = [m.text.lower() for m in top.find_elements(By.CSS_SELECTOR, ".srag-snippet mark")]
    assert "undo" in marked or "bad" in marked, marked
    browser.find_element(By.CSS_SELECTOR, ".srag-more").click()
    WebDriverWait(browser, 20).until(lambda d: len(d.find_elements(By.CSS_SELECTOR, ".srag-hit")) == 10)
    assert not [e for e in browser.get_log("browser") if e["level"] == "SEVERE"], "no script errors in the console"


def test_the_widget_works_on_another_site_only_when_cors_allows_it(browser, examples_artifacts, tmp_path, site):
    """Allowed: results. Refused by CORS: the widget says so, and the server log names the origin
    and the fix. A server that is down: the widget says that instead (a script sees the same
    "Failed to fetch" for both)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    with running_server(examples_artifacts, tmp_path, server_table=f'requests_per_minute = 0\ncors_origins = ["{site.base}"]\n') as server:
        page = f'<!doctype html><title>Help</title><h1>Help center</h1><div id="help"></div><script src="{server.base}/widget.js" data-target="#help" data-top-k="3" defer></script>'
        site.routes["/help.html"] = (200, "text/html; charset=utf-8", page.encode())
        browser.get(site.url("/help.html"))
        hits, _ = search_in_page(browser, QUESTION)
        assert len(hits) == 3 and hits[0].find_element(By.CSS_SELECTOR, ".srag-title").text == "Generations, CURRENT and rollback"

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    with running_server(examples_artifacts, elsewhere, server_table='requests_per_minute = 0\ncors_origins = ["https://example.org"]\n') as server:
        page = f'<!doctype html><title>Help</title><div id="help"></div><script src="{server.base}/widget.js" data-target="#help" defer></script>'
        site.routes["/help.html"] = (200, "text/html; charset=utf-8", page.encode())
        browser.get(site.url("/help.html"))
        hits, status = search_in_page(browser, QUESTION)
        assert hits == [], "a site not on the allowlist gets nothing"
        WebDriverWait(browser, 10).until(lambda d: "not allowed" in d.find_element(By.CSS_SELECTOR, ".srag-status").text)
        status = browser.find_element(By.CSS_SELECTOR, ".srag-status").text
        assert status == f"Search failed: this site's origin ({site.base}) is not allowed by the search server; add it to [server] cors_origins."
        warnings = [e["message"] for e in server.log_lines() if e["level"] == "warning"]
        assert any(f"refused a browser request from origin {site.base}" in w and "cors_origins" in w for w in warnings), warnings

    down = f"http://127.0.0.1:{free_port()}"  # nothing listens there: a server that is down
    page = f'<!doctype html><title>Help</title><div id="help"></div><script src="{site.url("/widget.js")}" data-endpoint="{down}/v1/search" data-target="#help" defer></script>'
    site.routes["/widget.js"] = (200, "text/javascript", (Path(__file__).parent.parent / "server" / "static" / "widget.js").read_bytes())
    site.routes["/help.html"] = (200, "text/html; charset=utf-8", page.encode())
    browser.get(site.url("/help.html"))
    search_in_page(browser, QUESTION)
    WebDriverWait(browser, 10).until(lambda d: "cannot be reached" in d.find_element(By.CSS_SELECTOR, ".srag-status").text)
    assert browser.find_element(By.CSS_SELECTOR, ".srag-status").text == f"Search failed: the search server at {down} cannot be reached."


def test_a_search_server_that_never_answers_is_reported_not_waited_on_forever(browser, site):
    """A server (or a proxy in front of it) that takes the connection and never answers left the
    widget on "Searching…" for as long as the browser waits (minutes). It waits 15 s, or the
    page's data-timeout (here 2 s: the test need not wait 15)."""
    import socket

    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    with socket.socket() as stuck:  # accepts connections into its backlog, reads nothing, answers nothing
        stuck.bind(("127.0.0.1", 0))
        stuck.listen(16)
        endpoint = f"http://127.0.0.1:{stuck.getsockname()[1]}/v1/search"
        site.routes["/widget.js"] = (200, "text/javascript", (Path(__file__).parent.parent / "server" / "static" / "widget.js").read_bytes())
        site.routes["/help.html"] = (200, "text/html; charset=utf-8", f'<!doctype html><title>Help</title><div id="help"></div><script src="/widget.js" '
                                                                      f'data-endpoint="{endpoint}" data-target="#help" data-timeout="2" defer></script>'.encode())
        browser.get(site.url("/help.html"))
        box = WebDriverWait(browser, 20).until(lambda d: d.find_element(By.CSS_SELECTOR, ".srag-input"))
        box.send_keys(QUESTION)
        browser.find_element(By.CSS_SELECTOR, ".srag-button").click()
        WebDriverWait(browser, 40).until(lambda d: d.find_element(By.CSS_SELECTOR, ".srag-status").text != "Searching…")
        assert browser.find_element(By.CSS_SELECTOR, ".srag-status").text == "Search failed: the search server did not answer within 2 s."


def test_the_widget_never_makes_a_script_url_a_link(browser, site):
    """A `javascript:` url in front matter or an answers file reached the widget's links: one click ran
    script in the site showing it. The indexer now refuses such urls (URL_REFUSED); the widget too
    links only web, mail and phone addresses, whatever a generation (an older one) holds."""
    import json

    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    def hit(title, url):
        return {"chunk_id": title, "doc_id": f"file:{title}.md", "title": title, "url": url, "link": url, "snippet": f"{title} text", "score": 0.9,
                "relevance": 0.5, "heading_path": [title]}

    found = {"hits": [hit("Script", "javascript:document.title='ran'"), hit("Spaced", " JavaScript:document.title='ran'"),
                      hit("Refunds", "https://shop.example/refunds")], "answerable": True, "next_offset": None,
             "answers": [{"question": "Refund?", "answer": "Five days.", "url": "javascript:document.title='ran'", "score": 0.9, "relevance": 0.5}]}
    site.routes["/v1/search"] = (200, "application/json", json.dumps(found).encode(), {"Access-Control-Allow-Origin": "*"})
    site.routes["/widget.js"] = (200, "text/javascript", (Path(__file__).parent.parent / "server" / "static" / "widget.js").read_bytes())
    site.routes["/help.html"] = (200, "text/html; charset=utf-8", b'<!doctype html><title>Help</title><div id="help"></div>'
                                                                  b'<script src="/widget.js" data-target="#help" defer></script>')
    browser.get(site.url("/help.html"))
    box = WebDriverWait(browser, 20).until(lambda d: d.find_element(By.CSS_SELECTOR, ".srag-input"))
    box.send_keys("refund")
    browser.find_element(By.CSS_SELECTOR, ".srag-button").click()
    WebDriverWait(browser, 20).until(lambda d: len(d.find_elements(By.CSS_SELECTOR, ".srag-hit")) == 3)
    titles = {t.text: t for t in browser.find_elements(By.CSS_SELECTOR, ".srag-title")}
    assert titles["Refunds"].get_attribute("href") == "https://shop.example/refunds"
    assert titles["Script"].tag_name == titles["Spaced"].tag_name == "span" and titles["Script"].get_attribute("href") is None
    assert browser.find_element(By.CSS_SELECTOR, ".srag-answer-text").text == "Five days."
    assert not browser.find_elements(By.CSS_SELECTOR, ".srag-answer-link"), "no 'Read more' for a script url"


def test_an_unanswerable_question_or_an_empty_time_range_says_so(browser, server):
    from selenium.webdriver.common.by import By

    browser.get(server.base + "/")
    _, status = search_in_page(browser, "What is the capital of Mongolia?")
    assert status == "Nothing in these documents answers that."
    assert not browser.find_element(By.CSS_SELECTOR, ".srag-results").is_displayed(), "weak hits are not shown as answers"
    anyway = browser.find_element(By.CSS_SELECTOR, ".srag-show-anyway")
    assert anyway.is_displayed()
    anyway.click()
    hits = browser.find_elements(By.CSS_SELECTOR, ".srag-hit")
    assert len(hits) == 5 and all(h.is_displayed() for h in hits)
    assert "weak results" in browser.find_element(By.CSS_SELECTOR, ".srag-status").text
    assert not anyway.is_displayed()
    browser.get(server.base + "/")
    hits, status = search_in_page(browser, "what changed in 2019?")  # a question only about time, of a year with no updates
    assert not hits and status == "Nothing was updated in 2019."


def test_a_search_answered_by_keywords_only_says_so_and_why(browser, examples_artifacts, tmp_path):
    """A server without torch (or whose provider is down) answers by BM25 alone; the page looked like any other answer."""
    from selenium.webdriver.common.by import By

    with running_server(examples_artifacts, tmp_path, env=without_torch(tmp_path)) as server:
        browser.get(server.base + "/")
        hits, status = search_in_page(browser, QUESTION)
        assert hits and status == "5+ results · matched by keywords only"
        assert hits[0].find_element(By.CSS_SELECTOR, ".srag-title").text == "Generations, CURRENT and rollback", "BM25 still finds it"
        assert "torch is missing" in browser.find_element(By.CSS_SELECTOR, ".srag-status").get_attribute("title"), "the reason, for the site's owner"
        browser.get(server.base + "/")
        _, status = search_in_page(browser, "What is the capital of Mongolia?")
        assert status == "No results for “What is the capital of Mongolia?” · matched by keywords only"
        browser.get(server.base + "/")
        _, status = search_in_page(browser, "can I search for cheap flights")  # words the docs have, not an answer
        assert status == "Nothing in these documents answers that · matched by keywords only"
        browser.find_element(By.CSS_SELECTOR, ".srag-show-anyway").click()
        assert browser.find_element(By.CSS_SELECTOR, ".srag-status").text.endswith("weak results (none seems to answer the question) · matched by keywords only")


@pytest.mark.parametrize("target", ["#Help", "#1st"], ids=["no-such-element", "not-a-selector"])
def test_a_data_target_that_matches_nothing_is_named_and_the_box_still_shows(browser, site, target):
    """A typo in data-target (the page's id is "help"), with the script in <head> as `defer` allows:
    the box went into <head>, where nothing shows, and nothing said why; "#1st" threw in the script."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    site.routes["/widget.js"] = (200, "text/javascript", (Path(__file__).parent.parent / "server" / "static" / "widget.js").read_bytes())
    site.routes["/help.html"] = (200, "text/html; charset=utf-8", f'<!doctype html><html><head><title>Help</title><script src="/widget.js" '
                                                                  f'data-target="{target}" defer></script></head><body><div id="help"></div></body></html>'.encode())
    browser.get(site.url("/help.html"))
    box = WebDriverWait(browser, 20).until(lambda d: d.find_element(By.CSS_SELECTOR, ".srag-input"))
    assert box.is_displayed() and box.find_element(By.XPATH, "ancestor::body")
    logged = [e["message"] for e in browser.get_log("browser")]
    assert any(f'data-target \\"{target}\\" matches no element on this page' in m for m in logged), logged


def test_the_widget_searches_the_space_named_in_data_space(browser, examples_artifacts, tmp_path, site):
    with running_server(examples_artifacts, tmp_path, server_table=f'requests_per_minute = 0\ncors_origins = ["{site.base}"]\n') as server:
        page = (f'<!doctype html><title>Help</title><div id="help"></div><script src="{server.base}/widget.js" data-target="#help" '
                'data-space="no-such-space" defer></script>')
        site.routes["/help.html"] = (200, "text/html; charset=utf-8", page.encode())
        browser.get(site.url("/help.html"))
        hits, status = search_in_page(browser, QUESTION)
        assert hits == [] and "no-such-space" in status and "not in generation" in status, "the request named the space"


def test_a_widget_filtered_on_a_source_that_does_not_exist_says_so(browser, server):
    page = '<!doctype html><title>Help</title><div id="help"></div><script src="/widget.js" data-target="#help" data-source="halp" defer></script>'
    browser.get(server.base + "/")  # same origin as the API: load the page's markup in place
    browser.execute_script("document.open(); document.write(arguments[0]); document.close();", page)
    hits, status = search_in_page(browser, QUESTION)
    assert hits == [] and status == "Search failed: no source is named 'halp'; sources: articles, guide"
    # A top-k the server would refuse ("top_k: Expected `int`, got `null`" on every search), a timeout of 0: the console names each attribute.
    page = '<!doctype html><title>Help</title><div id="help"></div><script src="/widget.js" data-target="#help" data-top-k="five" data-timeout="0" defer></script>'
    browser.get(server.base + "/")
    browser.get_log("browser")  # what the demo page logged before
    browser.execute_script("document.open(); document.write(arguments[0]); document.close();", page)
    hits, status = search_in_page(browser, QUESTION)
    assert len(hits) == 5 and status == "5+ results", status
    logged = [e["message"] for e in browser.get_log("browser")]
    assert any('data-top-k must be a whole number from 1 to 50; got \\"five\\"' in m for m in logged), logged
    assert any('data-timeout must be a whole number from 1 to 120; got \\"0\\"; using 15 s' in m for m in logged), logged


def test_the_widget_works_under_a_content_security_policy_or_says_what_to_allow(browser, examples_artifacts, tmp_path, site):
    """A site with a Content-Security-Policy: inline styles refused left the widget unstyled, and a
    search server missing from connect-src was reported as "cannot be reached" though it was up."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    with running_server(examples_artifacts, tmp_path, server_table=f'requests_per_minute = 0\ncors_origins = ["{site.base}"]\n') as server:
        page = (f'<!doctype html><title>Help</title><div id="help"></div>'
                f'<script src="{server.base}/widget.js" data-target="#help" data-top-k="3" defer></script>').encode()
        for connect, works in ((f"'self' {server.base}", True), ("'self'", False)):
            policy = f"default-src 'self'; script-src 'self' {server.base}; style-src 'self'; connect-src {connect}"
            site.routes["/help.html"] = (200, "text/html; charset=utf-8", page, {"Content-Security-Policy": policy})
            browser.get(site.url("/help.html"))
            hits, status = search_in_page(browser, QUESTION)
            button = browser.find_element(By.CSS_SELECTOR, ".srag-button")
            assert button.value_of_css_property("background-color") == "rgba(42, 91, 215, 1)", "styled, inline styles refused or not"
            if works:
                assert len(hits) == 3, status
                continue
            WebDriverWait(browser, 10).until(lambda d: "Content-Security-Policy" in d.find_element(By.CSS_SELECTOR, ".srag-status").text)
            status = browser.find_element(By.CSS_SELECTOR, ".srag-status").text
            assert status == f"Search failed: this page's Content-Security-Policy does not allow connections to {server.base}; add it to connect-src."


@pytest.mark.parametrize("width", [375, 1280])
def test_the_widget_brings_a_look_that_fits_phone_and_desktop_widths(browser, examples_artifacts, tmp_path, site, width):
    """A plain page with only the script tag: the widget's own stylesheet makes a full-width box
    and styled results that never overflow the viewport; data-theme="none" leaves the page's look
    alone. Screenshots are saved next to the test's files."""
    from selenium.webdriver.common.by import By

    with running_server(examples_artifacts, tmp_path, server_table=f'requests_per_minute = 0\ncors_origins = ["{site.base}"]\n') as server:
        for theme in ("", ' data-theme="none"'):
            page = (f'<!doctype html><meta name="viewport" content="width=device-width, initial-scale=1"><title>Help</title><h1>Help</h1>'
                    f'<div id="help"></div><script src="{server.base}/widget.js" data-target="#help"{theme} defer></script>')
            site.routes["/help.html"] = (200, "text/html; charset=utf-8", page.encode())
            browser.set_window_size(width, 900)
            browser.get(site.url("/help.html"))
            hits, _ = search_in_page(browser, QUESTION)
            assert len(hits) == 5
            browser.save_screenshot(str(tmp_path / f"widget-{width}{'-plain' if theme else ''}.png"))
            viewport = browser.execute_script("return document.documentElement.clientWidth")
            overflow = browser.execute_script("return document.documentElement.scrollWidth") - viewport
            box = browser.find_element(By.CSS_SELECTOR, ".srag-input").rect["width"]
            styled = browser.execute_script("return !!document.getElementById('srag-style')")
            if theme:
                assert not styled and box < 250, "no stylesheet: the browser's own small input"
                continue
            assert styled and overflow <= 0, f"{overflow} px wider than the {width} px viewport"
            assert box > viewport * 0.5, f"the search box is {box} px of {viewport}"
            button = browser.find_element(By.CSS_SELECTOR, ".srag-button")
            assert button.value_of_css_property("background-color") == "rgba(42, 91, 215, 1)"
            assert button.rect["x"] + button.rect["width"] <= viewport


def test_the_api_reference_renders_with_nothing_but_the_server(browser, server):
    """/schema works offline: every resource the page loads comes from the server itself."""
    from selenium.webdriver.common.by import By

    browser.get(server.base + "/schema")
    assert browser.find_element(By.TAG_NAME, "h1").text.startswith("static-rag search API")
    operations = [h.text for h in browser.find_elements(By.CSS_SELECTOR, "h3") if h.text.startswith(("GET", "POST"))]
    assert any(o.startswith("POST /v1/search") for o in operations), operations
    loaded = browser.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
    assert all(url.startswith(server.base) for url in loaded), loaded


def test_a_question_asked_while_the_last_one_is_still_searching_is_the_one_answered(browser, server):
    """On a slow connection a visitor fixed a typo and pressed Enter while the first search was
    on its way: the widget had disabled its button, so the browser dropped the second Enter, and
    the results stayed those of the question the visitor no longer asked."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(server.base + "/")
    box = WebDriverWait(browser, 20).until(lambda d: d.find_element(By.CSS_SELECTOR, ".srag-input"))
    browser.execute_cdp_cmd("Network.enable", {})
    browser.execute_cdp_cmd("Network.emulateNetworkConditions", {"offline": False, "latency": 1500, "downloadThroughput": -1, "uploadThroughput": -1})
    try:
        box.send_keys("how do I undo a bad index run?" + Keys.ENTER)
        WebDriverWait(browser, 5).until(lambda d: d.find_element(By.CSS_SELECTOR, ".srag-status").text == "Searching…")
        box.clear()
        box.send_keys("which file formats can I index?" + Keys.ENTER)  # before the first answer came back
        WebDriverWait(browser, 30).until(lambda d: d.find_element(By.CSS_SELECTOR, ".srag-status").text not in ("", "Searching…"))
        browser.execute_script("return new Promise(done => setTimeout(done, 2500))")  # every answer is in by now
    finally:
        browser.execute_cdp_cmd("Network.emulateNetworkConditions", {"offline": False, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1})
        browser.execute_cdp_cmd("Network.disable", {})
    titles = [h.text for h in browser.find_elements(By.CSS_SELECTOR, ".srag-hit .srag-title")]
    assert titles and titles[0].startswith("Sources") and "Generations, CURRENT and rollback" not in titles, titles
    assert box.get_attribute("value") == "which file formats can I index?"


def test_the_widget_shows_curated_answers_first_and_links_pdf_hits_to_their_page(browser, tmp_path, local_embedder):
    from selenium.webdriver.common.by import By

    from indexer.config import load_config
    from indexer.pipeline import run_index
    from tests.conftest import write_config
    from tests.fakes.pdfs import make_pdf

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "manual.md").write_text("---\nurl: https://shop.example/manual/\n---\n# Manual\n\n## Lacing\n\nLace the boots from the toe up and double-knot them.\n")
    make_pdf(docs / "warranty.pdf", [("h1", "Warranty"), ("p", "General terms apply to every purchase."), ("pagebreak", None),
                                     ("h2", "Soles"), ("p", "A detached sole is repaired free of charge within two years.")])
    (tmp_path / "faq.toml").write_text('[[answers]]\nquestions = ["How long does a refund take?"]\nanswer = "Three to five business days."\n'
                                       'url = "https://shop.example/refunds"\n')
    config = load_config(write_config(tmp_path, '[[sources]]\nname = "docs"\ntype = "files"\npath = "docs"\n'
                                                '[[sources]]\nname = "faq"\ntype = "answers"\npath = "faq.toml"\n[[spaces]]\nprovider = "local"\n'))
    assert not run_index(config).errors
    (tmp_path / "server").mkdir()
    with running_server(config.artifacts, tmp_path / "server") as server:
        browser.get(server.base + "/")
        search_in_page(browser, "how many days until the refund shows up on my card")
        answer = browser.find_element(By.CSS_SELECTOR, ".srag-answer")
        assert answer.find_element(By.CSS_SELECTOR, ".srag-answer-text").text == "Three to five business days."
        assert answer.find_element(By.CSS_SELECTOR, ".srag-answer-link").get_attribute("href") == "https://shop.example/refunds"
        hits, _ = search_in_page_again(browser, "detached sole repaired free of charge")
        assert hits[0].find_element(By.CSS_SELECTOR, ".srag-page").text == "p. 2"
        assert not browser.find_elements(By.CSS_SELECTOR, ".srag-answer"), "a new search clears the last answers"
        hits, _ = search_in_page_again(browser, "lace the boots from the toe")
        assert hits[0].find_element(By.CSS_SELECTOR, ".srag-title").get_attribute("href") == "https://shop.example/manual/#lacing"


def search_in_page_again(driver, query: str):
    from selenium.webdriver.common.by import By

    box = driver.find_element(By.CSS_SELECTOR, ".srag-input")
    box.clear()
    return search_in_page(driver, query)


# Every text the widget shows, with its contrast against what is behind it (WCAG 2 ratios: 4.5 is AA).
CONTRASTS = """
function rgba(s) { var m = s.match(/[\\d.]+/g).map(Number); return m.length > 3 ? m : m.concat([1]); }
function over(top, under) { var a = top[3]; return [0, 1, 2].map(function (i) { return top[i] * a + under[i] * (1 - a); }).concat([1]); }
function behind(el) {  // the colour under an element: its and its ancestors' backgrounds, composed onto white
  var layers = [];
  for (var e = el; e && e.nodeType === 1; e = e.parentElement) layers.push(rgba(getComputedStyle(e).backgroundColor));
  return layers.reverse().reduce(function (under, top) { return over(top, under); }, [255, 255, 255, 1]);
}
function luminance(c) {
  var v = c.slice(0, 3).map(function (x) { x /= 255; return x <= 0.03928 ? x / 12.92 : Math.pow((x + 0.055) / 1.055, 2.4); });
  return 0.2126 * v[0] + 0.7152 * v[1] + 0.0722 * v[2];
}
var out = [];
document.querySelectorAll(".srag *").forEach(function (el) {
  var own = Array.prototype.some.call(el.childNodes, function (n) { return n.nodeType === 3 && n.textContent.trim(); });
  if (!own || !el.getClientRects().length || el.matches("input, button")) return;
  var bg = behind(el), alpha = 1;
  for (var e = el; e && e.nodeType === 1; e = e.parentElement) alpha *= Number(getComputedStyle(e).opacity);
  var fg = rgba(getComputedStyle(el).color); fg = over([fg[0], fg[1], fg[2], fg[3] * alpha], bg);
  var a = luminance(fg), b = luminance(bg);
  out.push([el.className || el.tagName.toLowerCase(), (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05), el.textContent.trim().slice(0, 40)]);
});
return out;
"""


@pytest.mark.parametrize("page_colours", ["", "background:#121212;color:#e8e8e8"], ids=["light", "dark"])
def test_every_text_of_the_widget_is_readable_on_a_light_or_a_dark_site(browser, tmp_path, local_embedder, site, page_colours):
    """On a dark site the widget's curated answer was the site's light text on the widget's
    near-white box (1.1:1), highlighted words light on yellow (1.3:1) and the status grey on black:
    a frontend developer with a dark theme had to restyle it before visitors could read it. (One hit
    was "1 results".)"""
    from indexer.config import load_config
    from indexer.pipeline import run_index
    from tests.conftest import write_config

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "manual.md").write_text("# Manual\n\n## Lacing\n\nLace the boots from the toe up and double-knot them.\n")
    (tmp_path / "faq.toml").write_text('[[answers]]\nquestions = ["How long does a refund take?"]\nanswer = "Three to five business days."\n')
    config = load_config(write_config(tmp_path, '[[sources]]\nname = "docs"\ntype = "files"\npath = "docs"\n'
                                                '[[sources]]\nname = "faq"\ntype = "answers"\npath = "faq.toml"\n[[spaces]]\nprovider = "local"\n'))
    assert not run_index(config).errors
    (tmp_path / "server").mkdir()
    with running_server(config.artifacts, tmp_path / "server", server_table=f'requests_per_minute = 0\ncors_origins = ["{site.base}"]\n') as server:
        page = (f'<!doctype html><title>Help</title><body style="{page_colours}"><div id="help"></div>'
                f'<script src="{server.base}/widget.js" data-target="#help" defer></script></body>')
        site.routes["/help.html"] = (200, "text/html; charset=utf-8", page.encode())
        browser.get(site.url("/help.html"))
        shown, statuses = [], []
        for question in ("how long does a refund take", "lace the boots", "what is the capital of Mongolia?"):
            statuses.append((search_in_page_again(browser, question) if shown else search_in_page(browser, question))[1])
            shown += browser.execute_script(CONTRASTS)
        assert statuses[1] == "1 result", statuses  # was "1 results"
        kinds = {kind for kind, _, _ in shown}
        assert {"srag-answer-question", "srag-answer-text", "srag-status", "srag-path"} <= kinds and "mark" in kinds, kinds
        unreadable = [(kind, round(ratio, 2), text) for kind, ratio, text in shown if ratio < 4.5]
        assert not unreadable, unreadable
