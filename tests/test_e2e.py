"""A real server process, started the way an admin starts it, answering over loopback HTTP."""

import os
import re
import signal
import threading
import time
from datetime import datetime
from pathlib import Path

import httpx
import pytest

from tests.servers import Server, running_server


@pytest.fixture(params=[1, 2], ids=["one-worker", "two-workers"])
def server(request, examples_artifacts, tmp_path):
    (tmp_path / "tmp").mkdir()  # the server's temporary files land here, where a test can see what it leaves
    with running_server(examples_artifacts, tmp_path, workers=request.param, env={"TMPDIR": str(tmp_path / "tmp")}) as s:
        yield s


def test_a_real_server_answers_a_paraphrased_question(server: Server):
    response = httpx.post(f"{server}/v1/search", json={"query": "is it possible to revert to the earlier index if tonight's run went wrong?", "top_k": 3}, timeout=30)
    assert response.status_code == 200
    hits = response.json()["hits"]
    assert "file:generations.md" in [h["doc_id"] for h in hits]
    top = next(h for h in hits if h["doc_id"] == "file:generations.md")
    assert top["title"] == "Generations, CURRENT and rollback" and top["heading_path"] and top["text"]
    bad = httpx.post(f"{server}/v1/search", json={"query": ""}, timeout=10)
    assert bad.status_code == 400 and bad.json()["code"] == "EMPTY_QUERY"


def test_metrics_and_access_logs_cover_every_worker(server: Server):
    with httpx.Client(base_url=server.base, timeout=30) as client:
        for i in range(6):
            assert client.post("/v1/search", json={"query": f"rollback question {i}", "top_k": 2}).status_code == 200
        assert client.get("/v1/nowhere").status_code == 404
        info = client.get("/v1/info").json()
        generation, built = info["generation"], info["built_at"]
        page = client.get("/metrics")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/plain")
    text = page.text

    def value(pattern: str) -> float:
        found = re.search(pattern + r" ([0-9.e+]+)$", text, re.MULTILINE)
        assert found, f"{pattern} not in /metrics:\n{text[:3000]}"
        return float(found.group(1))

    assert value(r'static_rag_requests_total\{method="POST",route="/v1/search",status="200"\}') == 6, "summed over workers"
    assert value(r'static_rag_requests_total\{method="GET",route="unmatched",status="404"\}') == 1
    assert value(r'static_rag_request_duration_seconds_count\{route="/v1/search"\}') == 6
    assert value(r'static_rag_request_duration_seconds_bucket\{le="\+Inf",route="/v1/search"\}') == 6
    assert value(r'static_rag_search_candidates_count\{mode="hybrid"\}') == 6
    assert value(f'static_rag_generation_info\\{{generation="{generation}"\\}}') == 1
    assert value("static_rag_generation_built_timestamp_seconds") == datetime.fromisoformat(built.replace("Z", "+00:00")).timestamp(), "for an age alert"

    deadline = time.monotonic() + 5  # a worker's stderr may lag a moment behind its response
    while time.monotonic() < deadline and sum(1 for e in server.log_lines() if e["message"] == "request") < 9:
        time.sleep(0.1)
    requests = [e for e in server.log_lines() if e["message"] == "request"]
    searches = [e for e in requests if e["route"] == "/v1/search"]
    assert len(searches) == 6
    entry = searches[0]
    assert entry["logger"] == "static_rag.access" and entry["status"] == 200 and entry["method"] == "POST"
    assert entry["duration_ms"] > 0 and entry["client"] == "127.0.0.1" and entry["generation"] == generation
    assert entry["hits"] == 2 and entry["candidates"] > 0 and entry["query_chars"] == len("rollback question 0")
    assert "rollback" not in server.log.read_text(), "query text is not logged"
    assert any(e["status"] == 404 and e["route"] == "unmatched" for e in requests)


def test_no_access_log_leaves_requests_out_of_the_log_but_in_the_metrics(examples_artifacts, tmp_path):
    with running_server(examples_artifacts, tmp_path, workers=2, args=("--no-access-log",)) as server:
        with httpx.Client(base_url=server.base, timeout=30) as client:
            for i in range(4):
                assert client.post("/v1/search", json={"query": f"rollback question {i}", "top_k": 2}).status_code == 200
            text = client.get("/metrics").text
        assert 'static_rag_requests_total{method="POST",route="/v1/search",status="200"} 4.0' in text
        time.sleep(0.5)  # a worker's stderr may lag a moment behind its response
        assert not [e for e in server.log_lines() if e["message"] == "request"]


def test_a_worker_that_crashes_in_native_code_leaves_its_threads_stacks_in_the_log(examples_artifacts, tmp_path):
    """A worker killed by abort() in a library left nothing in the log to say where it had been."""
    with running_server(examples_artifacts, tmp_path, workers=2, args=("--no-access-log",)) as server:
        pid = server.process.pid
        children = [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
        workers = [c for c in children if b"spawn_main" in Path(f"/proc/{c}/cmdline").read_bytes()]
        assert len(workers) == 2, children
        os.kill(workers[0], signal.SIGABRT)  # what abort() in a library raises
        deadline = time.monotonic() + 20
        while "most recent call first" not in server.log.read_text() and time.monotonic() < deadline:  # the dump is written as it goes
            time.sleep(0.1)
        log = server.log.read_text()
        assert "Fatal Python error: Aborted" in log and "most recent call first" in log, log[-2000:]
        with httpx.Client(base_url=server.base, timeout=30) as client:  # the other worker (and the supervisor's replacement) still answer
            assert all(client.post("/v1/search", json={"query": "how do I undo a bad index run?"}).status_code == 200 for _ in range(4))


def test_sigterm_lets_requests_in_flight_finish(server: Server):
    outcomes: list[str] = []
    stop = threading.Event()
    deadline = time.monotonic() + 90  # every loop below ends by itself, even when an assertion fails

    def ask():
        for _ in range(2000):
            if stop.is_set() or time.monotonic() > deadline:
                return
            try:  # a new connection each time: a keep-alive connection closing between requests is no server fault
                r = httpx.post(f"{server}/v1/search", json={"query": "how do I undo a bad index run?"}, headers={"connection": "close"}, timeout=30)
                outcomes.append(f"{r.status_code}")
            except httpx.ConnectError:
                outcomes.append("refused")  # the listening socket is closed: what a load balancer retries elsewhere
            except httpx.ReadError as exc:
                # With workers, a connection still in the listen backlog (never accepted, so never
                # processed) is reset when the socket closes; the access log tells it from a cut-off request.
                outcomes.append("reset" if "reset" in str(exc).lower() else f"broken: {exc!r}")
            except httpx.RemoteProtocolError as exc:
                # The same race one step later: a worker accepted the connection but had not read the
                # request when shutdown closed its idle connections (uvicorn closes those at once).
                outcomes.append("unanswered" if "without sending a response" in str(exc) else f"broken: {exc!r}")
            except httpx.HTTPError as exc:
                outcomes.append(f"broken: {exc!r}")

    threads = [threading.Thread(target=ask, daemon=True) for _ in range(4)]
    for t in threads:
        t.start()
    try:
        while outcomes.count("200") < 20 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert outcomes.count("200") >= 20, f"the server answered before it was stopped: {outcomes[-5:]}"
        server.process.send_signal(signal.SIGTERM)
        # uvicorn finishes its shutdown, then ends itself with the signal it caught (what supervisors expect)
        assert server.process.wait(timeout=20) in (0, -signal.SIGTERM)
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert not list((Path(server.log).parent / "tmp").iterdir()), "a restart leaves no metrics folder behind in /tmp"
    assert not [o for o in outcomes if o not in ("200", "refused", "reset", "unanswered")], "no request failed"
    served = [e for e in server.log_lines() if e["message"] == "request" and e["route"] == "/v1/search"]
    assert all(e["status"] == 200 for e in served) and len(served) == outcomes.count("200"), "every request the server took was answered"
    assert not [e for e in server.log_lines() if e["level"] in ("error", "critical")], "a clean shutdown logs no errors"
