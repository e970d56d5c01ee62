"""How fast a files source is read, against reading and hashing the same bytes, in one run.

    .venv/bin/python bench/reading.py /tmp/harness-export/docs          # the peer harness's 10,000 Markdown files
    .venv/bin/python bench/reading.py /usr/share/cmake-3.25/Help --url-rules sphinx \\
        --url-template 'https://cmake.org/cmake/help/latest/{slug}.html'

- first: the source's crawl as an `index run` with no previous generation does it (list every
  file, read it, extract its text, headings and front matter);
- unchanged: the crawl again with the first one's validators, as a run where nothing changed;
- baseline: the same files listed with os.walk, each read and hashed with sha256.
`left_out`: files read that are no document (an empty page, a draft, a navigation file: each
with its warning in a run).
The ratios are what to track (the machine is shared and seconds drift). Readers added over
2026-11-27 made the harness's files 6× slower to read and nothing measured it; this does, in
seconds. Prints JSON; the median of `--repeat` runs of each.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from indexer.config import load_config
from indexer.documents import FetchState
from indexer.sources import crawl


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", type=Path, help="a folder of documents (Markdown, reStructuredText, HTML, …)")
    parser.add_argument("--url-template", default="https://docs.example.com/{slug}/", help="as in [[sources]]: headings get ids only where pages have a URL")
    parser.add_argument("--url-rules", default="plain")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if not args.folder.is_dir():
        sys.exit(f"{args.folder}: not a folder")

    with tempfile.TemporaryDirectory() as tmp:
        config_file = Path(tmp) / "index.toml"
        config_file.write_text(f'[[sources]]\nname = "bench"\ntype = "files"\npath = {json.dumps(str(args.folder.resolve()))}\n'
                               f'url_template = {json.dumps(args.url_template)}\nurl_rules = {json.dumps(args.url_rules)}\n'
                               '[[spaces]]\nprovider = "local"\n')
        source = load_config(config_file).sources[0]

    first, unchanged, baseline = [], [], []
    for _ in range(args.repeat):
        started = time.perf_counter()
        result = crawl(source)
        first.append(time.perf_counter() - started)
        states = {d.doc_id: FetchState(etag=d.etag, last_modified=d.last_modified) for d in result.documents}
        started = time.perf_counter()
        again = crawl(source, fetch_state=states)
        unchanged.append(time.perf_counter() - started)
        baseline.append(_read_and_hash(args.folder))
    files, size = _count(args.folder)
    out = {
        "folder": str(args.folder), "files": files, "mb": round(size / 1e6, 2), "documents": len(result.documents),
        "left_out": len(result.errors) + len(result.warnings), "unchanged_documents": len(again.not_modified),
        "first_s": round(statistics.median(first), 3), "unchanged_s": round(statistics.median(unchanged), 3),
        "baseline_s": round(statistics.median(baseline), 4),
        "first_over_baseline": round(statistics.median(first) / statistics.median(baseline), 1),
        "unchanged_over_baseline": round(statistics.median(unchanged) / statistics.median(baseline), 2),
    }
    print(json.dumps(out, indent=2))


def _read_and_hash(folder: Path) -> float:
    started = time.perf_counter()
    for root, _, names in os.walk(folder):
        for name in names:
            with open(os.path.join(root, name), "rb") as handle:
                hashlib.sha256(handle.read()).digest()
    return time.perf_counter() - started


def _count(folder: Path) -> tuple[int, int]:
    files = [os.path.join(root, name) for root, _, names in os.walk(folder) for name in names]
    return len(files), sum(os.path.getsize(f) for f in files)


if __name__ == "__main__":
    main()
