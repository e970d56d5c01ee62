"""What an analyzer change costs and changes on BEIR-format corpora: postings build time, one
analyzer against another (alternating, three runs each), and how many documents and queries get
other terms. Benchmarks only: nothing here is asserted.

    .venv/bin/python bench/analyzer_cost.py ../shared/data/scifact ../shared/data/nfcorpus ../shared/data/arguana \\
        --before english-snowball-v3
"""

import argparse
import json
import tempfile
import time
from pathlib import Path

from indexer.bm25 import build_lexical_segment
from indexer.lexical import ANALYZER, READABLE, analyze, scored_terms


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("datasets", nargs="+", type=Path, help="BEIR folders (corpus.jsonl, queries.jsonl)")
    parser.add_argument("--before", default="english-snowball-v3", choices=READABLE, help="the analyzer to compare with")
    parser.add_argument("--after", default=ANALYZER["name"], choices=READABLE)
    args = parser.parse_args()
    texts = []
    for folder in args.datasets:
        corpus = [json.loads(line) for line in open(folder / "corpus.jsonl", encoding="utf-8")]
        queries = [json.loads(line)["text"] for line in open(folder / "queries.jsonl", encoding="utf-8")]
        documents = [(d.get("title") or "") + "\n\n" + d["text"] for d in corpus]
        changed = sum(analyze(t, args.before) != analyze(t, args.after) for t in documents)
        asked = sum(scored_terms(q, args.before) != scored_terms(q, args.after) for q in queries)
        print(f"{folder.name}: other terms in {changed} of {len(documents)} documents, {asked} of {len(queries)} queries")
        texts += documents
    print(f"{len(texts)} texts, {sum(not t.isascii() for t in texts)} not ASCII")
    for _ in range(3):
        for name in (args.before, args.after):
            with tempfile.TemporaryDirectory() as tmp:
                started = time.perf_counter()
                build_lexical_segment(texts, Path(tmp) / "lexical", name)
                print(f"{name}: postings built in {time.perf_counter() - started:.2f} s")


if __name__ == "__main__":
    main()
