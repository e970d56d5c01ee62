"""Hybrid fusion against its inputs and against the alternatives, on every dataset at once, chosen
by the worst case.

    # once per dataset: index it (≈ 11 min each with the local model), save its candidates
    .venv/bin/python bench/candidates.py --index /tmp/ds/scifact/artifacts --queries ../shared/data/scifact --out /tmp/ds/cand/scifact-scifact.pkl
    # then (seconds):
    .venv/bin/python bench/fusion.py /tmp/ds/cand --datasets scifact nfcorpus arguana

Reads `<dataset>-<dataset>.pkl` from bench/candidates.py: the top 100 chunks of each retriever per
query with exact scores on both sides, so every method ranks the same candidates. A document ranks
by its best chunk; nDCG@10 per method. ArguAna's queries are corpus documents: a query's own
document is left out (BEIR's identical-id rule), as `index eval` does.

Situations: *real*; *dense-noise*, where each query's cosines are shuffled among its candidates
(a space whose vectors carry no meaning; a fusion that never loses should stay near lexical); and
*lexical-noise*, the same for the lexical side. `gain` is a method's nDCG@10 minus the better of
dense and lexical in that situation; the last column is the worst gain over the datasets.
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from indexer import evaluation  # noqa: E402
from server.fusion import DENSE_WEIGHT  # noqa: E402



def blend(w):
    return lambda c, l: w * c + (1 - w) * l


def standardized(w):
    """Each side as z-scores over the query's candidates, then blended."""
    def z(x):
        s = x.std()
        return (x - x.mean()) / s if s > 1e-9 else np.zeros_like(x)
    return lambda c, l: w * z(c) + (1 - w) * z(l)


def min_max(w):
    def mm(x):
        r = x.max() - x.min()
        return (x - x.min()) / r if r > 1e-9 else np.zeros_like(x)
    return lambda c, l: w * mm(c) + (1 - w) * mm(l)


def lexical_evidence(w, full):
    """Dense weight rises from w toward 1 as the best lexical share falls below `full`."""
    def f(c, l):
        wd = 1 - (1 - w) * min(1.0, float(l.max()) / full) if len(l) else 1.0
        return wd * c + (1 - wd) * l
    return f


def rrf(k):
    def f(c, l):
        out = np.zeros(len(c))
        for side in (c, l):
            ranks = np.empty(len(side))
            ranks[np.argsort(-side, kind="stable")] = np.arange(1, len(side) + 1)
            out += 1.0 / (k + ranks)
        return out
    return f


# Lexical mode returns only chunks that match a query term: its candidates that match none are left
# out, not ranked after the others in the dense side's order (72 of NFCorpus's 324 dev queries match
# fewer than 10 documents, and the dense side's order had lifted lexical's nDCG@10 there).
METHODS = {"dense": lambda c, l: c, "lexical": lambda c, l: np.where(l > 0, l, -np.inf), "rrf60": rrf(60)}
METHODS |= {f"blend{w}": blend(w) for w in (0.3, 0.4, 0.5, 0.6, 0.7, 0.8)}
METHODS |= {f"z{w}": standardized(w) for w in (0.5, 0.6)}
METHODS |= {f"minmax{w}": min_max(w) for w in (0.5, 0.6)}
METHODS |= {f"evidence{w}": lexical_evidence(w, 0.8) for w in (0.4, 0.5)}


def rank_documents(ids, doc_of, scores, drop=None, depth=evaluation.DEPTH) -> list[str]:
    out, seen = [], set()
    for i in np.argsort(-scores, kind="stable"):
        if scores[i] == -np.inf:  # not a result of this method
            break
        doc = doc_of[ids[i]]
        if doc != drop and doc not in seen:
            seen.add(doc)
            out.append(doc)
            if len(out) == depth:
                break
    return out


def table(data: dict, identical: bool, rng: np.random.Generator) -> dict[str, dict[str, float]]:
    situations: dict[str, dict[str, dict[str, list[str]]]] = {"real": {}, "dense-noise": {}, "lexical-noise": {}}
    for qid, q in data["queries"].items():
        cosine, lexical = np.maximum(q["cosine"], 0.0), q["lexical"]
        inputs = {"real": (cosine, lexical), "dense-noise": (rng.permutation(cosine), lexical), "lexical-noise": (cosine, rng.permutation(lexical))}
        for situation, (c, l) in inputs.items():
            for name, method in METHODS.items():
                situations[situation].setdefault(name, {})[qid] = rank_documents(q["ids"], data["doc_of"], method(c, l), qid if identical else None)
    return {s: {name: evaluation.score(r, data["qrels"])["ndcg@10"] for name, r in methods.items()} for s, methods in situations.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("candidates", type=Path, help="folder of bench/candidates.py outputs")
    parser.add_argument("--datasets", nargs="+", required=True)
    args = parser.parse_args()
    results = {}
    for name in args.datasets:
        path = args.candidates / f"{name}-{name}.pkl"
        if not path.is_file():
            parser.error(f"{path}: missing; make it with bench/candidates.py (see the docstring)")
        data = pickle.loads(path.read_bytes())
        results[name] = table(data, data["identical_ids"], np.random.default_rng(0))
    for situation in ("real", "dense-noise", "lexical-noise"):
        print(f"\n{situation}: nDCG@10 (gain over the better input)")
        for method in METHODS:
            gains = {d: results[d][situation][method] - max(results[d][situation]["dense"], results[d][situation]["lexical"]) for d in results}
            cells = "  ".join(f"{d} {results[d][situation][method]:.4f} ({gains[d]:+.4f})" for d in results)
            star = " ← product" if method == f"blend{DENSE_WEIGHT}" else ""
            print(f"  {method:12s} {cells}   worst {min(gains.values()):+.4f}{star}")
    print(json.dumps(results))


if __name__ == "__main__":
    main()
