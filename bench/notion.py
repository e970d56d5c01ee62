"""Notion crawl against the loopback fake API: requests made and the rate achieved.

    .venv/bin/python bench/notion.py --pages 2000              # at the product's default 3 requests/s
    .venv/bin/python bench/notion.py --pages 300 --rate 50     # a quick look

Builds a generated workspace (a tree 8 pages wide, a 40-row database under every tenth page),
then runs the product's Notion source twice through the real notion-client: a first run that reads
everything, and a second with the first run's fetch state, which should only list (search, database
queries) and fetch no blocks. Prints, per run: documents, requests by kind, wall time, the average
request rate, and the most requests seen in any one-second window (the limiter's bursts).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from indexer.config import SourceConfig  # noqa: E402
from indexer.documents import FetchState  # noqa: E402
from indexer.sources.notion import crawl_notion  # noqa: E402
from tests.fakes.notion_server import FakeNotion, generated_workspace  # noqa: E402

KINDS = ("search", "page", "database", "query", "children")


def measure(fake: FakeNotion, source: SourceConfig, state: dict) -> tuple[dict, dict]:
    fake.calls.clear()
    started = time.monotonic()
    result = crawl_notion(source, fetch_state=state)
    seconds = time.monotonic() - started
    stamps = sorted(c.at for c in fake.calls)
    peak = max((sum(1 for t in stamps[i:] if t < s + 1.0) for i, s in enumerate(stamps)), default=0)
    report = {
        "documents": len(result.documents),
        "not_modified": len(result.not_modified),
        "errors": len(result.errors),
        "requests": {k: len(fake.requests(k)) for k in KINDS},
        "requests_total": len(fake.calls),
        "seconds": round(seconds, 1),
        "requests_per_second": round(len(fake.calls) / seconds, 2) if seconds else None,
        "most_in_one_second": peak,
    }
    return report, {d.doc_id: FetchState(last_modified=d.last_modified, fetched_at=d.fetched_at, links=d.links) for d in result.documents}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=2000)
    parser.add_argument("--rate", type=float, default=3.0, help="requests_per_second for the source (default: the product default, 3)")
    args = parser.parse_args()
    workspace, root = generated_workspace(args.pages)
    fake = FakeNotion(workspace=workspace).start()
    os.environ["NOTION_TOKEN"], os.environ["NOTION_BASE_URL"] = fake.api_key, fake.url
    source = SourceConfig(name="bench", type="notion", roots=(root,), max_depth=50, max_pages=args.pages + 100, requests_per_second=args.rate)
    try:
        first, state = measure(fake, source, {})
        print(json.dumps({"workspace_pages": len(workspace.pages), "rate_limit": args.rate, "first_run": first}, indent=2), flush=True)
        second, _ = measure(fake, source, state)
        print(json.dumps({"second_run": second}, indent=2))
    finally:
        fake.close()


if __name__ == "__main__":
    main()
