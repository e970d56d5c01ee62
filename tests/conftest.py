"""Fixtures build small real things: configs in tmp folders, a loopback web server, one real model."""

from __future__ import annotations

import os
import shutil
import threading
import time
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone, tzinfo
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from indexer.config import SourceConfig

os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["TOKENIZERS_PARALLELISM"] = "false"
# Under pytest-xdist each worker is one of two processes sharing the cores, and torch's and faiss's
# OpenMP pools (one thread per core each) oversubscribed them: their threads spin while they wait for
# each other. One thread per worker: `pytest -n 2` 593-607 s → 444-473 s, user CPU 17 min 10 s →
# 11 min 29 s-12 min 15 s (2026-11-28). Set before torch is imported; no module imported here does.
if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.setdefault("OMP_NUM_THREADS", "1")

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"
SHARED_DATA = REPO.parent / "shared" / "data"


@pytest.fixture(autouse=True)
def isolated_env(monkeypatch, tmp_path):
    """No test reads the developer's own config or artifacts."""
    monkeypatch.delenv("STATIC_RAG_ARTIFACTS", raising=False)
    monkeypatch.delenv("STATIC_RAG_CONFIG", raising=False)
    monkeypatch.chdir(tmp_path)


@pytest.fixture(scope="session")
def local_space():
    from indexer.config import parse_config

    config = parse_config({"sources": [{"name": "x", "type": "files", "path": "."}], "spaces": [{"provider": "local"}]}, Path("."))
    return config.spaces[0]


@pytest.fixture(scope="session")
def local_embedder(local_space):
    """The real bundled model; `load_embedder` keeps it for the rest of the session."""
    from indexer.embedders import load_embedder

    return load_embedder(local_space)


def resident_file_kb() -> int:
    """Resident pages of this process that map files (kB): where a file-backed array's pages count (indexer/spill.py)."""
    return _status_kb("RssFile")


def resident_anon_kb() -> int:
    """Resident pages of this process that map no file (kB): the heap, where Python's strings live."""
    return _status_kb("RssAnon")


def _status_kb(name: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{name}:"):
            return int(line.split()[1])
    pytest.skip(f"no {name} in /proc/self/status")


@contextmanager
def resident_file_growth():
    """How far `resident_file_kb` rose above its start while the block ran, sampled every millisecond: `growth[0]` (kB)."""
    start, growth, done = resident_file_kb(), [0], threading.Event()

    def watch():
        while not done.is_set():
            growth[0] = max(growth[0], resident_file_kb() - start)
            time.sleep(0.001)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        yield growth
    finally:
        done.set()
        watcher.join()


def flip_bits(path: Path) -> None:
    """Damage a file past its header, as a bad sector or a bad copy would (a meta.duckdb then fails its checksums)."""
    data = bytearray(path.read_bytes())
    for i in range(5000, min(len(data), 60000), 7):
        data[i] ^= 0xFF
    path.write_bytes(data)


def write_config(folder: Path, body: str) -> Path:
    path = folder / "index.toml"
    path.write_text(body, encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def examples_artifacts(tmp_path_factory, local_embedder):
    """`examples/` indexed once per test session; tests must treat it as read-only. The xdist workers
    share it: the first to ask builds it under a lock, the other waits for it (each built its own:
    ~13 s of a worker's time)."""
    import fcntl

    from indexer.config import load_config
    from indexer.pipeline import run_index

    session = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        session = session.parent  # above the workers' own folders: one per `pytest` run
    artifacts = session / "examples-artifacts"
    with open(session / "examples-artifacts.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (artifacts / "CURRENT").exists():  # none yet, or a build that stopped midway
            shutil.rmtree(artifacts, ignore_errors=True)
            report = run_index(load_config(EXAMPLES / "index.toml", artifacts_override=artifacts))
            assert not report.errors, report.errors
    return artifacts


@contextmanager
def api_client(artifacts: Path, **settings):
    """The search API over `artifacts`, in process, with no rate limit (tests send many requests
    from one client); `settings`: other `Settings` fields (e.g. poll_seconds)."""
    from litestar.testing import TestClient

    from indexer.config import ServerConfig
    from server.app import create_app
    from server.service import Settings

    with TestClient(create_app(Settings(artifacts=artifacts, server=ServerConfig(requests_per_minute=0), **settings))) as client:
        yield client


@contextmanager
def indexed_and_served(folder: Path, config_text: str):
    """`folder` indexed with `config_text` (written as its index.toml) and served: (run report, API client)."""
    from indexer.config import load_config
    from indexer.pipeline import run_index

    config = load_config(write_config(folder, config_text))
    report = run_index(config)
    with api_client(config.artifacts) as client:
        yield report, client


def clear_of_midnight(*zones: tzinfo, margin: float = 30.0) -> datetime:
    """The time now (UTC), once it is at least `margin` seconds from any midnight in `zones` (UTC if
    none), before or after: near one, this waits until `margin` past it. Tests that date documents
    around today and then ask the server, whose clock runs on, about "today" or "last week" need
    the day they dated by to last while they ask (a suite started at 23:59 on a Sunday failed 5 such
    tests at 00:04), and a document dated a few seconds ago to be today's."""
    zones = zones or (timezone.utc,)
    while True:
        now = datetime.now(timezone.utc)
        wait = 0.0
        for zone in zones:
            today = now.astimezone(zone).date()
            for day in (today, today + timedelta(days=1)):
                midnight = datetime.combine(day, datetime.min.time(), zone)  # zoneinfo: fold 0 in a gap
                if abs((midnight - now).total_seconds()) < margin:
                    wait = max(wait, (midnight - now).total_seconds() + margin)
        if not wait:
            return now
        time.sleep(wait)


@pytest.fixture(scope="module")
def built_today():
    """`built_today(build, *zones)`: what `build(now)` (a context manager) yields for an index whose
    documents are dated around `now`, built again once a midnight in `zones` has passed since the last
    build; `now` is `clear_of_midnight(*zones)`. Returns (now of that build, what it yields). With
    xdist a module's tests may run minutes after its first, across a midnight."""
    from contextlib import ExitStack

    with ExitStack() as stack:
        built: dict = {}

        def get(build, *zones: tzinfo):
            now = clear_of_midnight(*zones)
            day = tuple(now.astimezone(z).date() for z in zones or (timezone.utc,))
            if day not in built:
                built[day] = (now, stack.enter_context(build(now)))
            return built[day]

        yield get


def search_hits(client, query: str, **body) -> list[dict]:
    """The hits of a search through the API (top 3 unless `body` says), asserting it answered 200."""
    response = client.post("/v1/search", json={"query": query, "top_k": 3, **body})
    assert response.status_code == 200, response.text
    return response.json()["hits"]


def first_hit(client, query: str) -> dict:
    """The best hit of a search through `client` (an `api_client`)."""
    response = client.post("/v1/search", json={"query": query, "top_k": 1})
    assert response.status_code == 200, response.text
    return response.json()["hits"][0]


@pytest.fixture(scope="module")
def examples_client(examples_artifacts):
    """The search API over `examples/`."""
    with api_client(examples_artifacts) as client:
        yield client


@pytest.fixture
def notion(monkeypatch):
    """A loopback fake of the Notion API, with NOTION_TOKEN and NOTION_BASE_URL pointing at it."""
    from tests.fakes.notion_server import FakeNotion

    fake = FakeNotion().start()
    monkeypatch.setenv("NOTION_TOKEN", fake.api_key)
    monkeypatch.setenv("NOTION_BASE_URL", fake.url)
    yield fake
    fake.close()


@pytest.fixture
def copy_of_examples(tmp_path) -> Path:
    """A writable copy of the example corpus and its config."""
    target = tmp_path / "examples"
    shutil.copytree(EXAMPLES, target)
    return target


# TOML lines for a urls source served by the loopback `site` fixture
LOOPBACK_WEB = 'allow_private_networks = ["127.0.0.0/8"]\nper_host_delay_seconds = 0\n'


class Site:
    """A loopback HTTP server with routes set per test: path -> (status, content type, body bytes[, headers]),
    or a callable returning that tuple for each request."""

    def __init__(self):
        self.routes: dict[str, tuple[int, str, bytes] | tuple[int, str, bytes, dict]] = {}
        self.requests: list[str] = []
        self.not_modified: list[str] = []
        self.request_headers: list[tuple[str, dict]] = []
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                site.requests.append(self.path)
                site.request_headers.append((self.path, dict(self.headers)))
                route = site.routes.get(self.path, (404, "text/plain", b"not found"))
                status, content_type, body, *extra = route() if callable(route) else route  # a callable route answers per request
                headers = extra[0] if extra else {}
                etag, modified = headers.get("ETag"), headers.get("Last-Modified")
                if (etag and self.headers.get("If-None-Match") == etag) or (modified and self.headers.get("If-Modified-Since") == modified):
                    site.not_modified.append(self.path)  # a real server's conditional GET: no body
                    self.send_response(304)
                    self.end_headers()
                    return
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                if not callable(body):
                    self.send_header("Content-Length", str(len(body)))
                for key, value in headers.items():
                    self.send_header(key, value)
                self.end_headers()
                try:
                    self.wfile.write(body() if callable(body) else body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client stopped reading (a byte cap)

            def do_POST(self):  # as a fake API: the body is read, and the route answers as for a GET
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                self.do_GET()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path: str) -> str:
        return self.base + path

    def source(self, paths=(), **keys) -> SourceConfig:
        """A urls source for these paths that may reach loopback and does not pause between requests."""
        keys = {"allow_private_networks": ("127.0.0.0/8",), "per_host_delay_seconds": 0.0, **keys}
        return SourceConfig(name="w", type="urls", urls=tuple(self.url(p) for p in paths), **keys)

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def site():
    s = Site()
    yield s
    s.close()


def stored_vectors(space_dir: Path):
    """Every live vector of a published space, as {vector id: vector}, whatever its segments."""
    import json

    import numpy as np

    from indexer.segments import read_layout, stored_vectors as read_vectors

    layout = read_layout(space_dir)
    ids = np.setdiff1d(np.arange(layout.id_space), layout.deleted)
    dimension = json.loads((space_dir / "space.json").read_text())["dimension"]
    return dict(zip(ids.tolist(), read_vectors(layout, ids.tolist(), dimension)))
