"""What `recency_weight` costs in relevance and buys in freshness.

    .venv/bin/python bench/recency.py ../shared/data/scifact [--work /tmp/recency]

The corpus gets random last-changed dates, uniform over the past two years (seeded), and is
indexed with the bundled local model (hybrid search, the product's defaults). For each weight:
nDCG@10 against the dataset's judgements (the relevance a nudge gives up: the judgements know
nothing of dates), and the freshness of the top 10 (median age, share changed in the last 90
days) that it buys.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from indexer.config import ServerConfig, parse_config  # noqa: E402
from indexer.evaluation import _file_name, corpus_id, load_dataset, ndcg, write_corpus_files  # noqa: E402
from indexer.pipeline import run_index  # noqa: E402
from server.search import SearchFilters  # noqa: E402
from server.service import SearchService, Settings  # noqa: E402

WEIGHTS = (0.0, 0.05, 0.1, 0.2, 0.3, 0.5)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dataset", type=Path)
    parser.add_argument("--work", type=Path, default=Path("/tmp/static-rag-recency"))
    args = parser.parse_args()
    dataset = load_dataset(args.dataset)
    now = datetime.now(timezone.utc)
    rng = random.Random(11)
    age = {doc_id: rng.uniform(0, 730) for doc_id in dataset.corpus}
    artifacts = args.work / "artifacts"
    if not artifacts.exists():
        write_corpus_files(dataset, args.work / "corpus")
        for doc_id, days in age.items():
            stamp = (now - timedelta(days=days)).timestamp()
            os.utime(args.work / "corpus" / f"{_file_name(doc_id)}.md", (stamp, stamp))
        config = parse_config({"sources": [{"name": dataset.name, "type": "files", "path": "corpus"}], "spaces": [{"provider": "local"}]},
                              base_dir=args.work, artifacts_override=artifacts)
        run_index(config)
    service = SearchService(Settings(artifacts=artifacts, server=ServerConfig(requests_per_minute=0)))
    service.load()
    print(f"{dataset.name}: {len(dataset.corpus)} documents, {len(dataset.queries)} queries, ages uniform over 0–730 days\n")
    print("| recency_weight | nDCG@10 | top-10 median age (days) | top-10 changed in the last 90 days | ms/query |")
    print("| --- | --- | --- | --- | --- |")
    try:
        for weight in WEIGHTS:
            scores, ages, started = [], [], time.perf_counter()
            for qid, query in dataset.queries.items():
                hits = service.search(query, top_k=10, filters=SearchFilters(), recency_weight=weight, max_chunks_per_doc=1).hits
                ranked = [corpus_id(h.doc_id) for h in hits]
                scores.append(ndcg(ranked, dataset.qrels[qid], 10))
                ages.extend(age[d] for d in ranked)
            took = (time.perf_counter() - started) * 1000 / len(dataset.queries)
            fresh = sum(a < 90 for a in ages) / len(ages)
            print(f"| {weight} | {statistics.mean(scores):.4f} | {statistics.median(ages):.0f} | {fresh:.1%} | {took:.1f} |")
    finally:
        service.close()


if __name__ == "__main__":
    main()
