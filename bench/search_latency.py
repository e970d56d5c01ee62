"""/v1/search latency against a real `index serve` process on loopback, with /healthz as the baseline.

    .venv/bin/python bench/search_latency.py --artifacts artifacts --requests 300 [--config examples/index.toml]

Sends a bounded number of sequential requests, then stops the server. Every request's
query is distinct (a question plus a variant number), so the server's query-vector cache
never answers; a last pass repeats one question to show the cached latency. Reports
client-side p50/p95 of POST /v1/search per mode, the server's own took_ms, and the ratio
of search p50 to the /healthz p50 measured in the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

QUESTIONS = [
    "how do I undo a bad index run?",
    "what does exit status 4 mean for the nightly job",
    "which nearest neighbour structure suits millions of embeddings",
    "why strip word endings before keyword matching",
    "is an OpenAI account required to try this",
    "how should the chatbot show where an answer came from",
    "what happens when the API returns 429",
    "how are long documents split into passages",
]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def unlimited(config: Path, folder: Path) -> Path:
    """A copy of `config` in `folder` whose [server] lifts the per-address rate limit: the bench
    sends ~1,200 requests from one address, a browser's limit is 120 a minute (answered 429)."""
    text = config.read_text(encoding="utf-8")
    if re.search(r"^\s*\[server\]", text, re.MULTILINE):
        sys.exit(f"{config} has a [server] table: pass a config without one (the bench adds its own)")
    copy = folder / "index.toml"
    copy.write_text(text + "\n[server]\nrequests_per_minute = 0  # added by bench/search_latency.py\n", encoding="utf-8")
    return copy


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--artifacts", type=Path, default=Path("artifacts"))
    parser.add_argument("--config", type=Path, default=Path(__file__).resolve().parent.parent / "examples" / "index.toml",
                        help="the config the generation was indexed with (its spaces); default examples/index.toml")
    parser.add_argument("--requests", type=int, default=300)
    args = parser.parse_args()

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    base = f"http://127.0.0.1:{port}"
    index_cmd = Path(sys.executable).parent / "index"
    config = tempfile.TemporaryDirectory(prefix="search-latency-")
    server = subprocess.Popen(
        [str(index_cmd), "serve", "-c", str(unlimited(args.config, Path(config.name))), "-a", str(args.artifacts), "--port", str(port), "--log-level", "warning"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    try:
        with httpx.Client(base_url=base, timeout=30) as client:
            deadline = time.monotonic() + 120
            while True:
                try:
                    if client.get("/readyz").status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                if time.monotonic() > deadline or server.poll() is not None:
                    sys.exit("server did not become ready")
                time.sleep(0.3)

            def timed(call) -> float:
                start = time.perf_counter()
                response = call()
                elapsed = (time.perf_counter() - start) * 1000
                response.raise_for_status()
                timed.last = response
                return elapsed

            for q in QUESTIONS:  # warm-up: page cache, query code paths
                client.post("/v1/search", json={"query": q})
            health = [timed(lambda: client.get("/healthz")) for _ in range(args.requests)]
            results = {}
            for mode in ("hybrid", "dense", "lexical"):
                client_ms, server_ms = [], []
                for i in range(args.requests):
                    body = {"query": f"{QUESTIONS[i % len(QUESTIONS)]} ({mode} variant {i})", "top_k": 10, "mode": mode}
                    client_ms.append(timed(lambda: client.post("/v1/search", json=body)))
                    server_ms.append(timed.last.json()["took_ms"])
                results[mode] = {
                    "p50_ms": round(statistics.median(client_ms), 2),
                    "p95_ms": round(percentile(client_ms, 0.95), 2),
                    "server_took_p50_ms": round(statistics.median(server_ms), 2),
                }
            cached = [timed(lambda: client.post("/v1/search", json={"query": QUESTIONS[0], "top_k": 10})) for _ in range(args.requests)]
            info = client.get("/v1/info").json()
    finally:
        server.send_signal(signal.SIGINT)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
        config.cleanup()

    health_p50 = statistics.median(health)
    print(json.dumps({
        "generation": info["generation"],
        "chunks": info["chunks"],
        "requests_per_mode": args.requests,
        "healthz_p50_ms": round(health_p50, 2),
        "search": results,
        "hybrid_p50_over_healthz_p50": round(results["hybrid"]["p50_ms"] / health_p50, 1),
        "hybrid_cached_query_p50_ms": round(statistics.median(cached), 2),
    }, indent=2))


if __name__ == "__main__":
    main()
