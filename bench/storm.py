"""A Notion rate-limit and outage storm: a first run, then two `--full-refresh` runs, of a
100-page workspace behind the loopback fake API whose answers are, by time and chance:

- 429 with `Retry-After: 1` whenever more than 3 requests arrived in the last second (2 with `--heavy`);
- 503 for the first 2 s of every 10 s (4 s with `--heavy`);
- 500 for 3% of the other requests (10% with `--heavy`).

    .venv/bin/python bench/storm.py            # ≈ 3 minutes
    .venv/bin/python bench/storm.py --heavy    # ≈ 7 minutes

Prints one line per run: exit code, seconds, decisions, error codes, and how many of the 100
pages the served generation holds. What must hold: no run fails whole, nothing is deleted, and
a page that failed keeps its last good version (served stays at what was ever published).
Loopback only; the requests are bounded by the fake's pages and our retry limits.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.fakes.notion_server import FakeNotion, paragraph  # noqa: E402
from tests.fakes.openai_server import FakeOpenAI  # noqa: E402

INDEX = Path(sys.executable).with_name("index")


def storm(heavy: bool, seed: int) -> type[FakeNotion]:
    rng = random.Random(seed)
    per_second, outage, errors = (2, 4.0, 0.10) if heavy else (3, 2.0, 0.03)

    class Storm(FakeNotion):
        def handle(self, path, body, headers, call, wrong_dimensions):
            now = time.monotonic()
            with self._cursor_lock:
                self.recent = [t for t in getattr(self, "recent", []) if now - t < 1.0] + [now]
                limited = len(self.recent) > per_second
            if limited:
                return 429, self.error_body(429, "You have been rate limited."), {"Retry-After": "1"}
            if now % 10 < outage:
                return 503, self.error_body(503, "Service unavailable."), {}
            if rng.random() < errors:
                return 500, self.error_body(500, "Unexpected error occurred."), {}
            return super().handle(path, body, headers, call, wrong_dimensions)

    return Storm


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--heavy", action="store_true")
    parser.add_argument("--seed", type=int, default=3)
    args = parser.parse_args()
    notion, openai = storm(args.heavy, args.seed)().start(), FakeOpenAI().start()
    ws = notion.workspace
    root = ws.page("Handbook", paragraph("How the team works."))
    for s in range(9):
        section = ws.page(f"Section {s}", paragraph(f"Section {s}."), parent=root)
        for i in range(10):
            ws.page(f"Guide {s}.{i}", paragraph(f"Guide {s}.{i} explains step {i}."), parent=section)
    folder = Path(tempfile.mkdtemp(prefix="static-rag-storm-"))
    config = folder / "index.toml"
    config.write_text(f'[[sources]]\nname = "wiki"\ntype = "notion"\nroots = ["{root}"]\nrequests_per_second = 10\nmax_depth = 4\n'
                      '[[spaces]]\nprovider = "openai"\ndimensions = 256\n', encoding="utf-8")
    env = {**os.environ, "NOTION_TOKEN": notion.api_key, "NOTION_BASE_URL": notion.url, "OPENAI_API_KEY": openai.api_key,
           "OPENAI_BASE_URL": f"{openai.url}/v1", "HF_HUB_OFFLINE": "1"}
    for flags in ([], ["--full-refresh"], ["--full-refresh"]):
        started = time.monotonic()
        done = subprocess.run([str(INDEX), "run", "-c", str(config), "--json", *flags], env=env, capture_output=True, text=True, timeout=1800)
        report = json.loads(done.stdout) if done.stdout.startswith("{") else {}
        status = subprocess.run([str(INDEX), "status", "-c", str(config), "--json"], env=env, capture_output=True, text=True)
        served = json.loads(status.stdout).get("documents") if status.stdout.startswith("{") else None
        print(json.dumps({"flags": flags, "exit": done.returncode, "seconds": round(time.monotonic() - started), "documents": report.get("documents"),
                          "errors": sorted({e["code"] for e in report.get("errors", [])}), "served": served, "of": 100}), flush=True)


if __name__ == "__main__":
    main()
