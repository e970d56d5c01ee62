"""Questions a visitor asks of a docs site, against its index: nDCG@10 per mode and how many the
`answerable` signal turns away, through the server's own search.

    .venv/bin/python bench/docs_questions.py --artifacts /tmp/cmake/artifacts --questions bench/docsquestions/cmake.jsonl

The index: CMake's help as a files source (`path = "/usr/share/cmake-3.25/Help"`, the local
space). Each question names the pages that answer it (`pages`, paths in the source); a hit on any
of them counts as relevant. The questions were written once, by hand, in a visitor's words, before
anything was measured with them (bench/docsquestions/README.md); they are for measuring, never
for tuning.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from indexer import evaluation  # noqa: E402
from indexer.config import ServerConfig  # noqa: E402
from server.search import search  # noqa: E402
from server.service import SearchService, Settings  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--artifacts", type=Path, required=True)
    parser.add_argument("--questions", type=Path, required=True, help="JSON lines: text, pages (paths in the files source)")
    parser.add_argument("--id-prefix", default="file:", help="how a page's path becomes its doc_id (a files source without id_prefix: file:)")
    args = parser.parse_args()
    questions = [json.loads(line) for line in args.questions.read_text(encoding="utf-8").splitlines() if line.strip()]

    service = SearchService(Settings(artifacts=args.artifacts, server=ServerConfig()))
    generation = service.load()
    space = next(iter(generation.spaces.values()))
    ndcg = {mode: [] for mode in ("dense", "lexical", "hybrid")}
    found = abstained = 0
    turned_away = []
    try:
        for question in questions:
            relevant = {args.id_prefix + page: 1 for page in question["pages"]}
            vector = service.query_vector(space, question["text"])
            for mode in ndcg:
                result = search(generation, space, vector, question["text"], top_k=10, mode=mode, max_chunks_per_doc=1)
                ranked = [hit.doc_id for hit in result.hits]
                ndcg[mode].append(evaluation.ndcg(ranked, relevant, 10))
                if mode == "hybrid" and set(ranked) & set(relevant):
                    found += 1
                    if not result.answerable:
                        abstained += 1
                        turned_away.append((round(max(h.relevance for h in result.hits), 3), question["text"]))
    finally:
        service.close()
    print(json.dumps({
        "questions": len(questions),
        "ndcg@10": {mode: round(sum(v) / len(v), 4) for mode, v in ndcg.items()},
        "answer_in_top_10": found,
        "abstained_of_those": abstained,
        "abstained_share": round(abstained / found, 4) if found else None,
        "abstained_questions": sorted(turned_away, reverse=True),
    }, indent=2))


if __name__ == "__main__":
    main()
