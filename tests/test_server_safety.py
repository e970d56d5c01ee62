"""What a public website needs from the API: CORS for its own origin only, API keys scoped to
sources, a per-client rate limit, and caps checked before any work — every refusal a JSON body."""

import json
import sys

import pytest
from litestar.testing import TestClient

from indexer.config import load_config
from indexer.errors import ConfigError
from indexer.pipeline import run_index
from server.app import create_app
from server.service import Settings
from tests.conftest import write_config

SITES = """
[[sources]]
name = "shop"
type = "files"
path = "shop"
[[sources]]
name = "clinic"
type = "files"
path = "clinic"
[[spaces]]
provider = "local"
"""


@pytest.fixture(scope="module")
def two_sites(tmp_path_factory, local_embedder):
    folder = tmp_path_factory.mktemp("two-sites")
    (folder / "shop").mkdir()
    (folder / "clinic").mkdir()
    (folder / "shop" / "hours.md").write_text("# Shop hours\n\nThe shoe shop opens at nine and closes at six.\n")
    (folder / "clinic" / "clinic-hours.md").write_text("# Clinic hours\n\nThe clinic opens at eight and closes at eight.\n")
    config = load_config(write_config(folder, SITES))
    run_index(config)
    return folder


def app_for(folder, server: str, monkeypatch=None):
    config = load_config(write_config(folder, SITES + server))
    return create_app(Settings(artifacts=config.artifacts, server=config.server))


def test_api_keys_see_only_their_sources(two_sites, monkeypatch):
    monkeypatch.setenv("SHOP_KEY", "shop-secret-1")
    monkeypatch.setenv("ADMIN_KEY", "admin-secret-2")
    server = '[server]\n[[server.api_keys]]\nname = "shop-bot"\nenv = "SHOP_KEY"\nsources = ["shop"]\n[[server.api_keys]]\nname = "admin"\nenv = "ADMIN_KEY"\n'
    with TestClient(app_for(two_sites, server)) as client:
        def ask(key, **extra):
            headers = {"Authorization": f"Bearer {key}"} if key else {}
            return client.post("/v1/search", json={"query": "what time does it open", "top_k": 5, "mode": "lexical", **extra}, headers=headers)

        assert ask(None).status_code == 401 and ask(None).json()["code"] == "UNAUTHORIZED"
        assert ask("shop-secret-") .status_code == 401, "a prefix of a key is not the key"
        basic = client.post("/v1/search", json={"query": "hours"}, headers={"Authorization": "Basic shop-secret-1"})
        assert basic.status_code == 401 and "Bearer" in basic.json()["message"], "the key as a bearer token only"
        assert {h["source"] for h in ask("shop-secret-1").json()["hits"]} == {"shop"}, "the clinic's documents never reach the shop's chatbot"
        assert {h["source"] for h in ask("admin-secret-2").json()["hits"]} == {"shop", "clinic"}
        forbidden = ask("shop-secret-1", filters={"source": "clinic"})
        assert forbidden.status_code == 403 and forbidden.json()["code"] == "SOURCE_FORBIDDEN"
        assert client.get("/v1/documents/file:clinic-hours.md", headers={"Authorization": "Bearer shop-secret-1"}).status_code == 404
        assert client.get("/v1/documents/file:clinic-hours.md", headers={"Authorization": "Bearer admin-secret-2"}).status_code == 200
        assert client.get("/healthz").status_code == 200, "health checks need no key"


def test_a_configured_key_without_its_variable_stops_the_server(two_sites, monkeypatch):
    monkeypatch.delenv("MISSING_KEY", raising=False)
    with pytest.raises(ConfigError, match="MISSING_KEY is not set"):
        app_for(two_sites, '[server]\n[[server.api_keys]]\nname = "bot"\nenv = "MISSING_KEY"\n')


def test_each_client_is_rate_limited_with_retry_after(two_sites):
    with TestClient(app_for(two_sites, "[server]\nrequests_per_minute = 6\nburst = 3\n")) as client:
        statuses = [client.post("/v1/search", json={"query": "opening hours", "mode": "lexical"}).status_code for _ in range(4)]
        assert statuses == [200, 200, 200, 429]
        limited = client.post("/v1/search", json={"query": "opening hours", "mode": "lexical"})
        assert limited.json()["code"] == "RATE_LIMITED" and limited.json()["retryable"] is True
        assert limited.headers["retry-after"] == "10", "one request every ten seconds at six a minute"
        assert client.get("/healthz").status_code == 200, "health checks are not rate limited"
        # X-Forwarded-For is anyone's to write: without trust_forwarded_for a new address in it each
        # time is no new budget (it would make every limit one header away from gone).
        spoofed = [client.post("/v1/search", json={"query": "opening hours", "mode": "lexical"}, headers={"X-Forwarded-For": f"10.9.9.{i}"}).status_code
                   for i in range(3)]
        assert spoofed == [429] * 3


def test_an_api_key_has_its_own_larger_budget_and_a_public_key_one_per_address(two_sites, monkeypatch):
    """A chatbot backend is one client for every visitor: its key gets `key_burst` (here 5), not an
    address's 2, whichever address it calls from. A key put in a public page (`limit_per =
    "address"`) gives each visitor's address a budget of its own."""
    monkeypatch.setenv("BOT_KEY", "bot-secret")
    monkeypatch.setenv("WIDGET_KEY", "widget-secret")
    server = ('[server]\nrequests_per_minute = 6\nburst = 2\nkey_requests_per_minute = 6\nkey_burst = 5\ntrust_forwarded_for = true\n'
              '[[server.api_keys]]\nname = "bot"\nenv = "BOT_KEY"\n'
              '[[server.api_keys]]\nname = "widget"\nenv = "WIDGET_KEY"\nburst = 2\nlimit_per = "address"\n')
    with TestClient(app_for(two_sites, server)) as client:
        def ask(key, address):
            headers = {"Authorization": f"Bearer {key}", "X-Forwarded-For": address}
            return client.post("/v1/search", json={"query": "opening hours", "mode": "lexical"}, headers=headers).status_code

        assert [ask("bot-secret", a) for a in ("10.0.0.1",) * 3 + ("10.0.0.2",) * 3] == [200] * 5 + [429], "one budget for the key"
        assert [ask("widget-secret", "10.0.0.3") for _ in range(3)] == [200, 200, 429]
        assert ask("widget-secret", "10.0.0.4") == 200, "another visitor of the page has a budget of their own"
        assert [ask("wrong", "10.0.0.5") for _ in range(3)] == [401, 401, 429], "wrong keys spend the address's budget"


def test_cors_allows_the_configured_origin_only_and_covers_errors(two_sites):
    with TestClient(app_for(two_sites, '[server]\ncors_origins = ["https://shop.example.com"]\nrequests_per_minute = 60\nburst = 1\n')) as client:
        origin = {"Origin": "https://shop.example.com"}
        preflight = client.options("/v1/search", headers={**origin, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type"})
        assert preflight.status_code in (200, 204) and preflight.headers["access-control-allow-origin"] == "https://shop.example.com"
        ok = client.post("/v1/search", json={"query": "hours", "mode": "lexical"}, headers=origin)
        assert ok.headers["access-control-allow-origin"] == "https://shop.example.com"
        limited = client.post("/v1/search", json={"query": "hours", "mode": "lexical"}, headers=origin)
        assert limited.status_code == 429 and limited.headers["access-control-allow-origin"] == "https://shop.example.com", "the page can read the 429"
        other = client.post("/v1/search", json={"query": "x" * 5000}, headers={"Origin": "https://evil.example.com"})
        assert "access-control-allow-origin" not in other.headers


def test_an_origin_written_with_capitals_or_its_default_port_matches_what_browsers_send(two_sites):
    """Browsers send "https://shop.example.com": an entry "https://Shop.Example.com:443" was taken
    as written, never matched, and the shop's widget was refused."""
    table = '[server]\ncors_origins = ["https://Shop.Example.com:443", "HTTP://127.0.0.1:8080"]\nrequests_per_minute = 0\n'
    with TestClient(app_for(two_sites, table)) as client:
        for origin in ("https://shop.example.com", "http://127.0.0.1:8080"):
            ok = client.post("/v1/search", json={"query": "hours", "mode": "lexical"}, headers={"Origin": origin})
            assert ok.status_code == 200 and ok.headers.get("access-control-allow-origin") == origin, (origin, ok.headers)


def test_a_wildcard_origin_allows_its_subdomains_without_a_refusal_warning(two_sites):
    """The CORS middleware lets "https://*.example.com" match a subdomain; the refusal warning compared
    origins as strings and told the admin to add an origin that was already allowed."""
    import logging

    warnings: list[str] = []
    handler = logging.Handler(logging.WARNING)
    handler.emit = lambda record: warnings.append(record.getMessage())
    logger = logging.getLogger("static_rag.server")
    logger.addHandler(handler)
    try:
        with TestClient(app_for(two_sites, '[server]\ncors_origins = ["https://*.example.com"]\nrequests_per_minute = 0\n')) as client:
            ok = client.post("/v1/search", json={"query": "hours", "mode": "lexical"}, headers={"Origin": "https://docs.example.com"})
            other = client.post("/v1/search", json={"query": "hours", "mode": "lexical"}, headers={"Origin": "https://example.org"})
    finally:
        logger.removeHandler(handler)
    assert ok.headers["access-control-allow-origin"] == "https://docs.example.com" and "access-control-allow-origin" not in other.headers
    refused = [w for w in warnings if "refused a browser request" in w]
    assert len(refused) == 1 and "https://example.org" in refused[0], refused


def test_caps_refuse_before_any_work(two_sites):
    with TestClient(app_for(two_sites, "[server]\nmax_query_chars = 20\nmax_top_k = 5\n")) as client:
        long = client.post("/v1/search", json={"query": "x" * 21})
        assert long.status_code == 400 and long.json()["code"] == "QUERY_TOO_LONG"
        many = client.post("/v1/search", json={"query": "hours", "top_k": 6})
        assert many.status_code == 400 and many.json()["code"] == "TOP_K_TOO_LARGE"
        huge = client.post("/v1/search", content=b'{"query": "' + b"x" * 70_000 + b'"}', headers={"content-type": "application/json"})
        assert huge.status_code == 413 and huge.json()["code"] == "REQUEST_TOO_LARGE"


@pytest.mark.parametrize("body, message", [
    (b'{"query": "caf\xe9"}', "body: not UTF-8; send JSON encoded as UTF-8"),
    (b'{"query": "\xff\xfe"}', "body: not UTF-8; send JSON encoded as UTF-8"),
    # msgspec says "Input data was truncated" for both, though only the first is.
    (b'{"query": "refu', "body: JSON cut short, or a \\uD800-\\uDBFF escape without its second half (a string cut inside an emoji?)"),
    (b'{"query": "refund \\ud83d"}', "body: JSON cut short, or a \\uD800-\\uDBFF escape without its second half (a string cut inside an emoji?)"),
    (('{"query": "x", "filters": ' + "[" * 5000 + "]" * 5000 + "}").encode(), "body: JSON nested too deeply"),
    (('{"query": "x", "filters": ' + '{"a":' * 2000 + "1" + "}" * 2000 + "}").encode(), "body: JSON nested too deeply"),
])
def test_a_hostile_body_is_a_400_with_a_json_error_not_a_500(examples_client, body, message):
    response = examples_client.post("/v1/search", content=body, headers={"content-type": "application/json"})
    assert response.status_code == 400 and response.json() == {"code": "INVALID_REQUEST", "message": message, "retryable": False}


def kept_alive_search(sock) -> bytes:
    """One search on an open connection, kept alive; returns the response head."""
    body = b'{"query": "rollback", "top_k": 1}'
    sock.sendall(b"POST /v1/search HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
    answer = b""
    while b"\r\n\r\n" not in answer:
        answer += sock.recv(65536) or b"<closed>"
        if answer.endswith(b"<closed>"):
            return answer
    head, _, rest = answer.partition(b"\r\n\r\n")
    length = int(next(line.split(b":")[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")))
    while len(rest) < length:
        rest += sock.recv(65536)
    return head


def test_slow_or_broken_request_heads_cannot_hold_the_server(examples_artifacts, tmp_path):
    """Slowloris: connections that never finish their headers are closed after HEAD_SECONDS while
    normal requests keep being answered; a garbage request line or an oversized header gets the
    API's JSON 400, not uvicorn's plain text. A client's kept-alive connection, idle meanwhile for
    longer than clients keep theirs (httpx: 5 s), still answers: the server must not close it
    under a client that is reusing it."""
    import socket
    import time

    import httpx

    from server.launch import HEAD_SECONDS
    from tests.servers import running_server

    with running_server(examples_artifacts, tmp_path) as server:
        host, port = server.base.removeprefix("http://").split(":")
        slow = []
        for _ in range(200):
            sock = socket.create_connection((host, int(port)), timeout=5)
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ")
            slow.append(sock)
        kept = socket.create_connection((host, int(port)), timeout=5)
        assert kept_alive_search(kept).startswith(b"HTTP/1.1 200")
        started = time.monotonic()
        assert httpx.post(f"{server.base}/v1/search", json={"query": "rollback"}, timeout=5).status_code == 200, "served during the attack"
        assert time.monotonic() - started < 3
        time.sleep(HEAD_SECONDS + 1.5)
        closed = 0
        for sock in slow:
            sock.settimeout(2)
            try:
                closed += sock.recv(1) == b""
            except (ConnectionResetError, TimeoutError, socket.timeout):
                closed += isinstance(sys.exc_info()[1], ConnectionResetError)
            sock.close()
        assert closed == len(slow), f"{closed} of {len(slow)} half-open requests closed after {HEAD_SECONDS} s"
        assert kept_alive_search(kept).startswith(b"HTTP/1.1 200"), "a connection idle for 11 s was closed"
        kept.close()

        for raw in (b"\x16\x03\x01garbage\r\n\r\n", b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 200_000 + b"\r\n\r\n"):
            with socket.create_connection((host, int(port)), timeout=5) as sock:
                sock.sendall(raw)
                answer = b""
                while chunk := sock.recv(65536):
                    answer += chunk
            head, _, body = answer.partition(b"\r\n\r\n")
            assert head.startswith(b"HTTP/1.1 400") and b"application/json" in head, head
            assert json.loads(body)["code"] == "INVALID_REQUEST"
