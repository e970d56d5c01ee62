"""How hybrid fusion compares with its inputs and with the alternatives, on a BEIR dataset.

    .venv/bin/python bench/fusion.py ../shared/data/scifact --split train --keep /tmp/scifact-index
    .venv/bin/python bench/fusion.py ../shared/data/scifact --split test  --keep /tmp/scifact-index

The corpus is indexed once through the normal pipeline (local model) into `--keep DIR` and
reused by later runs (without --keep: a temporary folder). Every query is scored, document =
its best chunk, nDCG@10 per method, in three situations:

- real: the query as typed, on both sides.
- dense-noise: the dense side gets a random unit vector — a space whose vectors carry no
  meaning; a fusion that never loses should stay near lexical.
- lexical-noise: the lexical side gets six random words from the corpus; should stay near dense.

Methods: dense, lexical, reciprocal rank fusion (k=60 and k=20), the product's blend of cosine
and BM25 / ceiling at dense weights 0.3–0.7, and `product` — `server.search.search` itself.
The baseline is the better input of each situation; `gain` is the product's nDCG@10 minus it.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import tempfile
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402

from indexer import evaluation  # noqa: E402
from server.fusion import convex_combination  # noqa: E402
from server.search import MIN_CANDIDATES, _bm25, _cosines, _dense, search  # noqa: E402
from server.service import SearchService, Settings  # noqa: E402

WEIGHTS = (0.3, 0.4, 0.5, 0.6, 0.7)


def rrf(rankings: list[list[int]], k: int) -> dict[int, float]:
    fused: dict[int, float] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, start=1):
            fused[item] = fused.get(item, 0.0) + 1.0 / (k + rank)
    return fused


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dataset", type=Path, help="a BEIR folder, e.g. ../shared/data/scifact")
    parser.add_argument("--split", default="test")
    parser.add_argument("--keep", type=Path, help="index into (or reuse) DIR/artifacts")
    parser.add_argument("--limit-queries", type=int)
    args = parser.parse_args()
    if not (args.dataset / "corpus.jsonl").is_file():
        parser.error(f"{args.dataset}: not a BEIR dataset folder (is ../shared/data present?)")
    dataset = evaluation.load_dataset(args.dataset, args.split, args.limit_queries)

    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or Path(tmp)
        artifacts = folder / "artifacts"
        if not (artifacts / "CURRENT").exists():
            artifacts = evaluation.index_dataset(dataset, folder)
        report = evaluate(artifacts, dataset)
    report = {"dataset": dataset.name, "split": args.split, "queries": len(dataset.queries), "ndcg@10": report}
    for situation, methods in report["ndcg@10"].items():
        print(f"{situation:14s} " + "  ".join(f"{name} {value:.4f}" for name, value in methods.items()))
    print(json.dumps(report))


def evaluate(artifacts: Path, dataset: evaluation.Dataset) -> dict:
    service = SearchService(Settings(artifacts=artifacts, max_query_chars=100_000))
    generation = service.load()
    (space,) = generation.spaces.values()
    doc_of = {vid: evaluation.corpus_id(row["doc_id"]) for vid, row in generation.hits(space.space_id, list(range(space.size))).items()}
    rng = np.random.default_rng(0)
    words = random.Random(0)
    vocabulary = sorted({w for _, text in dataset.corpus.values() for w in re.findall(r"[a-z]{4,}", text.lower())})
    depth = min(space.size, MIN_CANDIDATES)

    def documents(scores: dict[int, float]) -> list[str]:
        ranked = sorted(scores, key=lambda v: -scores[v])
        return list(dict.fromkeys(doc_of[v] for v in ranked))[: evaluation.DEPTH]

    rankings: dict[str, dict[str, dict[str, list[str]]]] = {}
    for query_id, text in dataset.queries.items():
        vector = service.query_vector(space, text)
        noise = rng.standard_normal(vector.shape).astype(np.float32)
        situations = {
            "real": (vector, text),
            "dense-noise": (noise / np.linalg.norm(noise), text),
            "lexical-noise": (vector, " ".join(words.sample(vocabulary, 6))),
        }
        for situation, (v, q) in situations.items():
            dense = _dense(space, v, depth, None)
            lexical_scores, ceiling, lexical, _ = _bm25(space, q, None, depth)
            union = list(dict.fromkeys([*dense, *lexical]))
            cosine = dict(zip(union, _cosines(space, v, union)))
            share = {vid: float(lexical_scores[vid]) / ceiling for vid in union} if ceiling else {}
            methods = {"dense": dense, "lexical": lexical, "rrf60": rrf([list(dense), list(lexical)], 60), "rrf20": rrf([list(dense), list(lexical)], 20)}
            methods |= {f"blend{w}": convex_combination(cosine, share, w) for w in WEIGHTS}
            out = rankings.setdefault(situation, {})
            for name, scores in methods.items():
                out.setdefault(name, {})[query_id] = documents(scores)
            hits = search(generation, space, v, q, top_k=evaluation.DEPTH, max_chunks_per_doc=1).hits
            out.setdefault("product", {})[query_id] = [evaluation.corpus_id(h.doc_id) for h in hits]
    service.close()

    table = {}
    for situation, methods in rankings.items():
        table[situation] = {name: evaluation.score(r, dataset.qrels)["ndcg@10"] for name, r in methods.items()}
        table[situation]["gain"] = round(table[situation]["product"] - max(table[situation]["dense"], table[situation]["lexical"]), 4)
    return table


if __name__ == "__main__":
    main()
