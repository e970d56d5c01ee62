"""A real server process, started the way an admin starts it, answering over loopback HTTP."""

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

INDEX = Path(sys.executable).parent / "index"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(params=[1, 2], ids=["one-worker", "two-workers"])
def server(request, examples_artifacts, tmp_path):
    port = free_port()
    log = open(tmp_path / "server.log", "w+")
    process = subprocess.Popen(
        [str(INDEX), "serve", "--artifacts", str(examples_artifacts), "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning",
         "--workers", str(request.param)],
        stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while True:
        try:
            if httpx.get(f"{base}/readyz", timeout=2).status_code == 200:
                break
        except httpx.TransportError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            log.seek(0)
            pytest.fail(f"server did not become ready:\n{log.read()}")
        time.sleep(0.3)
    yield base
    process.send_signal(signal.SIGINT)
    try:
        assert process.wait(timeout=20) == 0, "the server shuts down cleanly on Ctrl-C"
    finally:
        process.kill()
        log.close()


def test_a_real_server_answers_a_paraphrased_question(server):
    response = httpx.post(f"{server}/v1/search", json={"query": "is it possible to revert to the earlier index if tonight's run went wrong?", "top_k": 3}, timeout=30)
    assert response.status_code == 200
    hits = response.json()["hits"]
    assert "file:generations.md" in [h["doc_id"] for h in hits]
    top = next(h for h in hits if h["doc_id"] == "file:generations.md")
    assert top["title"] == "Generations, CURRENT and rollback" and top["heading_path"] and top["text"]
    bad = httpx.post(f"{server}/v1/search", json={"query": ""}, timeout=10)
    assert bad.status_code == 400 and bad.json()["code"] == "EMPTY_QUERY"
