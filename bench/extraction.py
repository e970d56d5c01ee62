"""Main-content extraction quality on the Zyte/Scrapinghub article-extraction benchmark.

    .venv/bin/python bench/extraction.py ../shared/data/extraction/article-extraction-benchmark
    .venv/bin/python bench/extraction.py ../shared/data/extraction/mozilla-readability-test-pages

The second form scores Mozilla Readability's test pages the same way, the expected text
being the text of each case's `expected.html`.

Runs the product's HTML extractor (`indexer.extract.extract_html`, what `index extract` prints
and what the indexer keeps) on every page and scores its text against the ground-truth
`articleBody` with the benchmark's metric: shingles of 4 consecutive `\\w+` tokens (case kept),
per page true/false positives and false negatives counted over shingle multisets and
normalized by their sum, precision and recall averaged over pages (pages with nothing
predicted or nothing expected leave the respective mean), F1 of the two means.
`--reference NAME` scores a stored output from `reference-outputs/` instead, to check the
scorer against the published table.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import statistics
import time
from collections import Counter
from pathlib import Path

from indexer.extract import ExtractionError, extract_html

TOKEN = re.compile(r"\w+")


def shingles(text: str, n: int = 4) -> Counter:
    tokens = TOKEN.findall(text or "")
    return Counter(tuple(tokens[i : i + n]) for i in range(max(1, len(tokens) - n + 1)) if tokens[i : i + n])


def page_counts(expected: str, predicted: str) -> tuple[float, float, float]:
    truth, guess = shingles(expected), shingles(predicted)
    tp = sum((truth & guess).values())
    fp = sum(guess.values()) - tp
    fn = sum(truth.values()) - tp
    total = tp + fp + fn
    return (tp / total, fp / total, fn / total) if total else (0.0, 0.0, 0.0)


def _ratio(hit: float, miss: float, other_miss: float) -> float:
    if miss == other_miss == 0:
        return 1.0
    if hit == miss == 0:
        return 0.0
    return hit / (hit + miss)


def score(counts: list[tuple[float, float, float]]) -> dict[str, float]:
    precision = statistics.mean(_ratio(tp, fp, fn) for tp, fp, fn in counts if tp + fp > 0)
    recall = statistics.mean(_ratio(tp, fn, fp) for tp, fp, fn in counts if tp + fn > 0)
    return {"precision": round(precision, 4), "recall": round(recall, 4), "f1": round(2 * precision * recall / (precision + recall), 4)}


def mozilla_cases(folder: Path) -> tuple[dict, dict]:
    """Each case's expected article as text, and its source page."""
    from lxml import html as lxml_html

    truth, pages = {}, {}
    for case in sorted(p for p in folder.iterdir() if (p / "expected.html.gz").is_file()):
        expected = lxml_html.fromstring(gzip.decompress((case / "expected.html.gz").read_bytes()).decode("utf-8"))
        truth[case.name] = {"articleBody": expected.text_content(), "url": None}
        pages[case.name] = case / "source.html.gz"
    return truth, pages


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("data", type=Path, help="the article-extraction-benchmark folder")
    parser.add_argument("--reference", help="score reference-outputs/NAME.json instead of our extractor")
    parser.add_argument("--worst", type=int, default=0, help="also list the N pages with the lowest F1")
    args = parser.parse_args()
    truth_path = args.data / "ground-truth.json"
    if (args.data / "test-pages").is_dir():
        truth, pages = mozilla_cases(args.data / "test-pages")
    elif truth_path.is_file():
        truth = json.loads(truth_path.read_text(encoding="utf-8"))
        pages = {key: args.data / "html" / f"{key}.html.gz" for key in truth}
    else:
        parser.error(f"{args.data}: neither ground-truth.json nor test-pages/ found (is ../shared/data present?)")

    started = time.perf_counter()
    if args.reference:
        stored = json.loads((args.data / "reference-outputs" / f"{args.reference}.json").read_text(encoding="utf-8"))["output"]
        predicted = {key: stored[key].get("articleBody", "") for key in truth}
        failures = 0
    else:
        predicted, failures = {}, 0
        for key, row in truth.items():
            raw = gzip.decompress(pages[key].read_bytes())
            try:
                predicted[key] = extract_html(raw, url=row.get("url")).text
            except ExtractionError:
                predicted[key], failures = "", failures + 1
    seconds = time.perf_counter() - started

    counts = {key: page_counts(truth[key].get("articleBody", ""), predicted[key]) for key in truth}
    report = {"extractor": args.reference or "static-rag", "pages": len(truth), "failures": failures, **score(list(counts.values())), "seconds": round(seconds, 1)}
    if args.worst:
        def f1(c):
            p, r = _ratio(c[0], c[1], c[2]), _ratio(c[0], c[2], c[1])
            return 2 * p * r / (p + r) if p + r else 0.0
        report["worst"] = [{"id": k, "url": truth[k].get("url"), "f1": round(f1(c), 3)} for k, c in sorted(counts.items(), key=lambda kv: f1(kv[1]))[: args.worst]]
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
