"""A real `index serve` process on loopback, started the way an admin starts it."""

import json
import os
import signal
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import httpx
import pytest

from tests.conftest import EXAMPLES

INDEX = Path(sys.executable).parent / "index"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# torch as if it were not installed: the import system's path finder no longer finds it.
WITHOUT_TORCH = """import sys
class Hide:
    def __init__(self, inner): self.inner = inner
    def find_spec(self, name, path=None, target=None):
        return None if name.split(".")[0] == "torch" else self.inner.find_spec(name, path, target)
    def __getattr__(self, attr): return getattr(self.inner, attr)
sys.meta_path[:] = [Hide(f) if getattr(f, "__name__", "") == "PathFinder" else f for f in sys.meta_path]
"""


def without_torch(folder: Path) -> dict[str, str]:
    """The environment of a process started as if torch were not installed: a sitecustomize.py in
    `folder`, which Python runs at start-up, hides it."""
    (folder / "sitecustomize.py").write_text(WITHOUT_TORCH)
    return {"PYTHONPATH": str(folder)}


@dataclass
class Server:
    base: str
    process: subprocess.Popen
    log: Path
    out: Path  # what it printed on stdout

    def printed(self) -> str:
        return self.out.read_text()

    def __str__(self) -> str:
        return self.base

    def log_lines(self) -> list[dict]:
        """The JSON lines the server wrote to stderr (Python's own warnings at exit are plain text)."""
        return [json.loads(line) for line in self.log.read_text().splitlines() if line.startswith("{")]


@contextmanager
def running_server(artifacts: Path, folder: Path, workers: int = 1, server_table: str = "requests_per_minute = 0\n", args: tuple[str, ...] = (),
                   env: dict[str, str] | None = None) -> Iterator[Server]:
    """Serve `artifacts` with the examples' config plus `server_table` as its [server] table
    (by default the rate limit off: tests send bursts), `env` added to the environment; stopped
    with Ctrl-C, which must exit 0."""
    port = free_port()
    log = open(folder / "server.log", "w+")
    out = open(folder / "server.out", "w")  # what it prints for the admin (the demo page's address)
    config = folder / "index.toml"
    config.write_text((EXAMPLES / "index.toml").read_text() + "\n[server]\n" + server_table)
    process = subprocess.Popen(
        [str(INDEX), "serve", "--config", str(config), "--artifacts", str(artifacts), "--host", "127.0.0.1", "--port", str(port),
         "--log-level", "warning", "--workers", str(workers), *args],
        stdout=out, stderr=log, env={**os.environ, "HF_HUB_OFFLINE": "1", **(env or {})},
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
    try:
        yield Server(base, process, folder / "server.log", folder / "server.out")
        if process.poll() is None:  # else the test stopped it itself
            process.send_signal(signal.SIGINT)
            assert process.wait(timeout=20) == 0, "the server shuts down cleanly on Ctrl-C"
    finally:
        process.kill()
        log.close()
        out.close()
