"""The candidates a search sees, saved once per (corpus, query set), for comparing fusions and
relevance calibrations offline (bench/fusion.py and bench/abstain.py read these files).

For every query: the top 100 chunks of each retriever, and for their union the exact cosine and
the exact lexical share (BM25 / the query's ceiling, the product's `LexicalIndex.scores`), each
chunk's document, and the query's own statistics; once, the space's chance level
(indexer/chance.py). Queries of a dataset are *answerable* (their qrels say which documents are
relevant); another dataset's queries are *off-topic* (none is).

    .venv/bin/python bench/candidates.py --index /tmp/ds/scifact/artifacts --queries ../shared/data/scifact --out /tmp/ds/cand/scifact-scifact.pkl
"""

from __future__ import annotations

import argparse
import os
import pickle
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402

from indexer import evaluation  # noqa: E402
from indexer.chance import read_level  # noqa: E402
from indexer.lexical import query_terms  # noqa: E402
from server.search import MIN_CANDIDATES, _bm25  # noqa: E402
from indexer.config import ServerConfig  # noqa: E402
from server.service import SearchService, Settings  # noqa: E402


def collect(artifacts: Path, queries: dict[str, str], depth: int = MIN_CANDIDATES) -> dict:
    service = SearchService(Settings(artifacts=artifacts, server=ServerConfig(max_query_chars=100_000)))
    generation = service.load()
    (space,) = generation.spaces.values()
    # Every vector id, deleted rows' too: a generation a run updated numbers its live rows up to
    # its id space, not its size (the new segment's rows follow the old ones, deleted or not).
    ids_all = list(range(space.lexical.id_space))
    rows = generation.hits(space.space_id, ids_all)
    doc_of = [evaluation.corpus_id(rows[v]["doc_id"]) for v in ids_all]
    depth = min(space.size, depth)
    embedder = service._embedder_for(space)
    ids = list(queries)
    vectors = np.asarray(embedder._encode([queries[q] for q in ids]), dtype=np.float32) if ids else np.zeros((0, 1))
    out = {}
    for qid, vector in zip(ids, vectors):
        text = queries[qid]
        dense = space.dense.top(vector, depth)
        scores, ceiling, lexical, _ = _bm25(space, text, None, depth)
        union = list(dict.fromkeys([*dense, *lexical]))
        cosine = np.asarray(space.dense.cosines(vector, union), dtype=np.float32)
        share = np.asarray([scores[v] / ceiling for v in union], dtype=np.float32) if ceiling else np.zeros(len(union), np.float32)
        out[qid] = {
            "ids": np.asarray(union), "cosine": cosine, "lexical": share,
            "dense_rank": list(dense), "lexical_rank": list(lexical),
            "terms": len(query_terms(text)), "ceiling": ceiling,
        }
    chance = read_level(generation.folder / generation.manifest["spaces"][space.space_id]["path"])
    service.close()
    return {"doc_of": doc_of, "queries": out, "chance": chance}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--index", type=Path, required=True, help="artifacts folder of an indexed corpus")
    parser.add_argument("--queries", type=Path, required=True, help="a BEIR folder whose test queries to run")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--split", default="test", help="the qrels split whose queries to run (default test; e.g. SciFact's train, NFCorpus's dev: queries no fit has seen)")
    parser.add_argument("--limit", type=int, help="at most this many queries (sorted by id)")
    args = parser.parse_args()
    dataset = evaluation.load_dataset(args.queries, args.split, args.limit)
    started = time.perf_counter()
    data = collect(args.index, dataset.queries)
    # BEIR's identical-id rule, decided as `index eval` decides it: for a corpus's own queries when they are its documents (ArguAna).
    data |= {"qrels": dataset.qrels, "query_set": dataset.name, "index": str(args.index), "identical_ids": evaluation.queries_are_documents(dataset)}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_bytes(pickle.dumps(data))
    print(f"{len(dataset.queries)} queries of {dataset.name} against {args.index}: {time.perf_counter() - started:.0f} s → {args.out}")


if __name__ == "__main__":
    main()
