"""Fit the relevance calibration and choose the default `answerable` threshold, worst case first.

    .venv/bin/python bench/abstain.py /tmp/ds/cand --pairs scifact:arguana nfcorpus:arguana arguana:scifact arguana:nfcorpus

Reads bench/candidates.py outputs: `<corpus>-<corpus>.pkl` (the corpus's own labeled queries) and
`<corpus>-<other>.pkl` (another domain's queries against it: off-topic). Hits are ranked as the
product ranks them (the hybrid blend at the product's weight, one hit per document); the top 10 of
every query are the labeled examples: relevant when the dataset's qrels say so, never for an
off-topic query. Each corpus's off-topic hits are weighted to count as much as its own hits.

Printed:
- the logistic fit for each kind of evidence (hybrid: cosine and lexical share; dense or lexical
  alone), fitted on all corpora — the numbers in server/relevance.py — and, as a check that they
  carry, each corpus scored with a fit that left that corpus out;
- a reliability table: hits binned by relevance, the share judged relevant in each bin;
- per pair, AUROC of relevance@1 (own queries vs off-topic ones), and at each threshold the share
  of off-topic queries answered and of own queries with a relevant document in the top 10 that
  abstained. The default is the threshold with the most room on the worse of the two targets
  (≤ 5% answered, ≤ 10% abstained) over every pair.
"""

from __future__ import annotations

import argparse
import pickle
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from indexer.quality import MAX_ABSTAINED, MAX_ANSWERED, auroc, choose_threshold  # noqa: E402
from server.fusion import DENSE_WEIGHT  # noqa: E402

KINDS = {"hybrid": (0, 1), "dense": (0,), "lexical": (1,)}  # columns: cosine, lexical share (, log(1 + query terms))
THRESHOLDS = (0.02, 0.025, 0.03, 0.035, 0.04, 0.045, 0.05, 0.055, 0.06, 0.07, 0.08, 0.1)


def top_hits(data: dict, drop_own: bool, k: int = 10) -> dict[str, list[tuple[str, float, float, float]]]:
    """Per query, its top-k documents as (doc, cosine, lexical, log(1 + terms)) of each document's best chunk."""
    out = {}
    for qid, q in data["queries"].items():
        cosine, lexical = np.maximum(q["cosine"], 0.0), q["lexical"]
        scores = DENSE_WEIGHT * cosine + (1 - DENSE_WEIGHT) * lexical
        hits, seen = [], set()
        for i in np.argsort(-scores, kind="stable"):
            doc = data["doc_of"][q["ids"][i]]
            if (drop_own and doc == qid) or doc in seen:
                continue
            seen.add(doc)
            hits.append((doc, float(cosine[i]), float(lexical[i]), float(np.log1p(q["terms"]))))
            if len(hits) == k:
                break
        out[qid] = hits
    return out


def fit_logistic(x: np.ndarray, y: np.ndarray, weight: np.ndarray, iterations: int = 60, l2: float = 1e-4) -> np.ndarray:
    """Weighted logistic regression by Newton's method; returns (coefficients..., intercept)."""
    x = np.column_stack([x, np.ones(len(x))])
    beta = np.zeros(x.shape[1])
    for _ in range(iterations):
        p = 1 / (1 + np.exp(-x @ beta))
        gradient = x.T @ (weight * (p - y)) + l2 * beta
        hessian = (x * (weight * p * (1 - p))[:, None]).T @ x + l2 * np.eye(x.shape[1])
        beta -= np.linalg.solve(hessian, gradient)
    return beta


def predict(beta: np.ndarray, features: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-(features @ beta[:-1] + beta[-1])))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("candidates", type=Path)
    parser.add_argument("--pairs", nargs="+", required=True, help="corpus:off-topic-queries, e.g. scifact:arguana")
    parser.add_argument("--examples", type=Path, help="folder with examples-<set>.pkl (bench/candidates.py against examples/)")
    parser.add_argument("--query-length", action="store_true", help="also use log(1 + the query's terms) (tried; fails the left-out check)")
    args = parser.parse_args()
    if args.query_length:
        for kind in KINDS:
            KINDS[kind] += (2,)
    pairs = [tuple(p.split(":")) for p in args.pairs]
    load = lambda name: pickle.loads((args.candidates / f"{name}.pkl").read_bytes())  # noqa: E731

    # rows: corpus, group ("own" or the off-topic set), query id, rank, cosine, lexical, label, found
    rows = []
    for corpus in dict.fromkeys(c for c, _ in pairs):
        own = load(f"{corpus}-{corpus}")
        for qid, hits in top_hits(own, own["identical_ids"]).items():
            found = any(own["qrels"][qid].get(d, 0) > 0 for d, *_ in hits)
            rows += [(corpus, "own", qid, r, c, l, t, int(own["qrels"][qid].get(d, 0) > 0), found) for r, (d, c, l, t) in enumerate(hits)]
    for corpus, other in pairs:
        for qid, hits in top_hits(load(f"{corpus}-{other}"), False).items():
            rows += [(corpus, other, qid, r, c, l, t, 0, False) for r, (d, c, l, t) in enumerate(hits)]
    corpus_of = np.array([r[0] for r in rows])
    group = np.array([r[1] for r in rows])
    rank = np.array([r[3] for r in rows])
    features = np.array([[r[4], r[5], r[6]] for r in rows])
    label = np.array([r[7] for r in rows], dtype=float)
    found = np.array([r[8] for r in rows])
    weight = np.ones(len(rows))
    for corpus in set(corpus_of):
        own, off = (corpus_of == corpus) & (group == "own"), (corpus_of == corpus) & (group != "own")
        weight[off] = own.sum() / off.sum()

    fits = {kind: fit_logistic(features[:, cols], label, weight) for kind, cols in KINDS.items()}
    print("fit on every corpus (server/relevance.py COEFFICIENTS: weights of the evidence used, then the intercept):")
    for kind, beta in fits.items():
        print(f"  {kind:8s} " + ", ".join(f"{b:.3f}" for b in beta))

    relevance = predict(fits["hybrid"], features[:, KINDS["hybrid"]])
    print("\nreliability (hybrid, all hits of all corpora, weighted as fitted): relevance bin → share judged relevant, hits")
    edges = [0, 0.02, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 1.0001]
    for lo, hi in zip(edges, edges[1:]):
        inside = (relevance >= lo) & (relevance < hi)
        if inside.any():
            share = np.average(label[inside], weights=weight[inside])
            print(f"  [{lo:.2f}, {min(hi, 1):.2f})  mean {np.average(relevance[inside], weights=weight[inside]):.3f} → judged {share:.3f}  ({inside.sum()} hits)")

    print("\nleft-out check: each corpus scored by a fit on the others (AUROC of relevance@1 per pair)")
    for corpus in dict.fromkeys(c for c, _ in pairs):
        rest = corpus_of != corpus
        if len(set(corpus_of[rest])) == 0:
            continue
        beta = fit_logistic(features[rest][:, KINDS["hybrid"]], label[rest], weight[rest])
        _report_pairs([(c, o) for c, o in pairs if c == corpus], predict(beta, features[:, KINDS["hybrid"]]), corpus_of, group, rank, found, thresholds=())
    for kind in ("dense", "lexical"):  # one side alone (dense or lexical mode, a degraded search)
        alone = predict(fits[kind], features[:, KINDS[kind]])
        print(f"  {kind} evidence only, fit on all:")
        _report_pairs(pairs, alone, corpus_of, group, rank, found, thresholds=())

    print("\nper pair at each threshold: AUROC, off-topic answered / answerable abstained")
    per_pair = _report_pairs(pairs, relevance, corpus_of, group, rank, found, THRESHOLDS)
    if args.examples:
        _report_examples(args.examples, fits["hybrid"])
    # Pairs where no threshold meets both targets (≤ MAX_ANSWERED answered, ≤ MAX_ABSTAINED abstained;
    # their "off-topic" queries have answers in the corpus: see bench/README.md) cannot choose; the
    # others choose by the worst of them — the rule `index eval --off-topic` suggests a threshold by.
    chosen = choose_threshold({":".join(p): r for p, r in per_pair.items()})
    print(f"\npairs no threshold serves (≤ {MAX_ANSWERED:.0%} answered and ≤ {MAX_ABSTAINED:.0%} abstained): {', '.join(chosen['unserved']) or 'none'}")
    print(f"default threshold: {chosen['min_relevance']} (room on the tighter target over the other pairs: {chosen['room']:+.1%})")


def _report_pairs(pairs, relevance, corpus_of, group, rank, found, thresholds) -> dict[tuple, dict[float, tuple[float, float]]]:
    """Prints each pair's line; returns pair → threshold → (off-topic answered, answerable abstained)."""
    out: dict[tuple, dict[float, tuple[float, float]]] = {}
    for corpus, other in pairs:
        own = (corpus_of == corpus) & (group == "own") & (rank == 0)
        off = (corpus_of == corpus) & (group == other) & (rank == 0)
        area = auroc(relevance[own], relevance[off])
        cells = []
        for t in thresholds:
            answered = float((relevance[off] >= t).mean())
            abstained = float((relevance[own & found] < t).mean())
            out.setdefault((corpus, other), {})[t] = (answered, abstained)
            cells.append(f"{t}: {answered:.1%}/{abstained:.1%}")
        print(f"  {corpus} vs {other} queries: AUROC {area:.4f}  " + "  ".join(cells))
    return out


def _report_examples(folder: Path, beta: np.ndarray) -> None:
    """examples/: the test suite's on-topic and off-topic questions, and every dataset's queries, against the bundled corpus."""
    print("\nexamples/ (relevance@1; own = the on-topic questions of tests/test_answerable.py, chat = its off-topic ones):")
    for name in ("own", "chat", "scifact", "nfcorpus", "arguana"):
        path = folder / f"examples-{name}.pkl"
        if not path.is_file():
            continue
        hits = top_hits(pickle.loads(path.read_bytes()), False, k=1)
        relevance = predict(beta, np.array([[c, l, t] for (_, c, l, t), *_ in hits.values()])[:, KINDS["hybrid"]])
        cells = "  ".join(f"{t}: {(relevance >= t).mean():.1%}" for t in THRESHOLDS)
        print(f"  {name:9s} {len(relevance)} queries, relevance@1 min {relevance.min():.3f} max {relevance.max():.3f}; answered at {cells}")


if __name__ == "__main__":
    main()
