"""Fit the relevance calibration and choose the default `answerable` threshold, worst case first.

    .venv/bin/python bench/abstain.py /tmp/ds/cand --pairs scifact:arguana nfcorpus:arguana arguana:scifact arguana:nfcorpus

Reads bench/candidates.py outputs: `<corpus>-<corpus>.pkl` (the corpus's own labeled queries) and
`<corpus>-<other>.pkl` (another domain's queries against it: off-topic), each with the corpus's
chance level (indexer/chance.py). Hits are ranked as the product ranks them (the hybrid blend at
the product's weight, one hit per document); the top 10 of every query are the labeled examples:
relevant when the dataset's qrels say so, never for an off-topic query. Each corpus's off-topic
hits are weighted to count as much as its own hits.

The relevance of a space with a chance level reads the cosine as `above` = its distance above
chance in chance spreads (ChanceLevel.z), beside the lexical share: score = above + w · lexical,
w chosen to make the *worst* pair's AUROC of relevance@1 the highest, then a logistic fit of that
score calibrates it. Without a chance level (generations written before it) the fixed fit on
(cosine, lexical share) is used.

Printed:
- the coefficients of each fit, both forms (server/relevance.py), and, as a check that they
  carry, each corpus scored by a fit (w and calibration) that left that corpus out;
- a reliability table: hits binned by relevance, the share judged relevant in each bin;
- per pair, AUROC of relevance@1 (own queries vs off-topic ones), and at each threshold the share
  of off-topic queries answered and of own queries with a relevant document in the top 10 that
  abstained. The default is the threshold that meets both targets (≤ 5% answered, ≤ 10%
  abstained) on the most pairs, with the most room on the worse of the two over those;
- with --judged, a pair's off-topic queries answered at that threshold, split by a hand judgment of
  their best passage (bench/judged/): about the asked topic, a neighbouring one, or unrelated;
- keywords alone (lexical mode, a degraded search): hits ranked by the lexical share, the product's
  lexical relevance (server/relevance.py), each pair's rates and the threshold the same rule picks
  (LEXICAL_MIN_RELEVANCE), with --held-out sets' own questions abstained at it.
"""

from __future__ import annotations

import argparse
import pickle
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from indexer.chance import ChanceLevel  # noqa: E402
from indexer.quality import MAX_ABSTAINED, MAX_ANSWERED, auroc, choose_threshold  # noqa: E402
from indexer.quality import THRESHOLDS as CHOICES  # noqa: E402
from server.fusion import DENSE_WEIGHT  # noqa: E402
from server.relevance import LEXICAL_MIN_RELEVANCE, relevance as product_relevance  # noqa: E402

KINDS = {"hybrid": (0, 1), "dense": (0,), "lexical": (1,)}  # the fixed fit's columns: cosine, lexical share (, log(1 + query terms))
THRESHOLDS = (0.02, 0.025, 0.03, 0.035, 0.04, 0.045, 0.05, 0.055, 0.06, 0.07, 0.08, 0.1)


def top_hits(data: dict, drop_own: bool, k: int = 10, keywords: bool = False) -> dict[str, list[tuple[str, float, float, float]]]:
    """Per query, its top-k documents as (doc, cosine, lexical, log(1 + terms)) of each document's
    best chunk, ranked by the hybrid blend — or with `keywords` by the lexical share alone, only
    chunks that match (the product's lexical mode)."""
    out = {}
    for qid, q in data["queries"].items():
        cosine, lexical = np.maximum(q["cosine"], 0.0), q["lexical"]
        scores = lexical if keywords else DENSE_WEIGHT * cosine + (1 - DENSE_WEIGHT) * lexical
        hits, seen = [], set()
        for i in np.argsort(-scores, kind="stable"):
            if keywords and lexical[i] <= 0:
                break
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


WEIGHTS = np.round(np.arange(0, 6.001, 0.05), 2)  # lexical weights tried beside the cosine's distance above chance


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("candidates", type=Path)
    parser.add_argument("--pairs", nargs="+", required=True, help="corpus:off-topic-queries, e.g. scifact:arguana")
    parser.add_argument("--examples", type=Path, help="folder with examples-<set>.pkl (bench/candidates.py against examples/)")
    parser.add_argument("--judged", nargs="+", default=[], metavar="CORPUS:OTHER=FILE",
                        help="hand judgments of a pair's answered off-topic queries (bench/judged/): how the answered ones split")
    parser.add_argument("--held-out", nargs="*", default=[], metavar="SET",
                        help="own-question candidates no choice saw (<set>-<set>.pkl, e.g. scifacttrain): abstained by keywords alone")
    parser.add_argument("--query-length", action="store_true", help="also use log(1 + the query's terms) in the fixed fit (tried; fails the left-out check)")
    args = parser.parse_args()
    if args.query_length:
        for kind in KINDS:
            KINDS[kind] += (2,)
    pairs = [tuple(p.split(":")) for p in args.pairs]
    data = Hits.load(args.candidates, pairs)

    fixed = {kind: fit_logistic(data.features[:, cols], data.label, data.weight) for kind, cols in KINDS.items()}
    chance = fit_chance(data, pairs)
    print("fits on every corpus (server/relevance.py: weights of the evidence used, then the intercept):")
    for kind, beta in fixed.items():
        print(f"  fixed   {kind:8s} (cosine, lexical): " + ", ".join(f"{b:.3f}" for b in beta))
    for kind, beta in chance.items():
        print(f"  chance  {kind:8s} (above chance, lexical): " + ", ".join(f"{b:.3f}" for b in beta))

    relevance = predict_chance(chance["hybrid"], data)
    print("\nreliability (hybrid with chance levels, all hits of all corpora, weighted as fitted): relevance bin → share judged relevant, hits")
    edges = [0, 0.02, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 1.0001]
    for lo, hi in zip(edges, edges[1:]):
        inside = (relevance >= lo) & (relevance < hi)
        if inside.any():
            share = np.average(data.label[inside], weights=data.weight[inside])
            print(f"  [{lo:.2f}, {min(hi, 1):.2f})  mean {np.average(relevance[inside], weights=data.weight[inside]):.3f} → judged {share:.3f}  ({inside.sum()} hits)")

    print("\nleft-out check: each corpus scored by a fit (lexical weight and calibration) on the others (AUROC of relevance@1 per pair)")
    for corpus in dict.fromkeys(c for c, _ in pairs):
        rest = [p for p in pairs if p[0] != corpus]
        if not rest:
            continue
        beta = fit_chance(data, rest, data.corpus_of != corpus)["hybrid"]
        _report_pairs([(c, o) for c, o in pairs if c == corpus], predict_chance(beta, data), data, thresholds=())
    print("  the fixed fit (cosine, lexical share), fit on all: used where a space has no chance level")
    _report_pairs(pairs, predict(fixed["hybrid"], data.features[:, KINDS["hybrid"]]), data, thresholds=())
    for kind in ("dense", "lexical"):  # one side alone (dense or lexical mode, a degraded search)
        alone = predict_chance(chance["dense"], data) if kind == "dense" else predict(fixed[kind], data.features[:, KINDS[kind]])
        print(f"  {kind} evidence only, fit on all:")
        _report_pairs(pairs, alone, data, thresholds=())

    print("\nper pair at each threshold: AUROC, off-topic answered / answerable abstained")
    _report_pairs(pairs, relevance, data, THRESHOLDS)
    if args.examples:
        _report_examples(args.examples, chance["hybrid"])
    # The threshold that meets both targets (≤ MAX_ANSWERED answered, ≤ MAX_ABSTAINED abstained) on
    # the most pairs, then by the worst of those; a pair it leaves out has "off-topic" queries with
    # answers in the corpus (bench/README.md) — the rule `index eval --off-topic` suggests a threshold by,
    # chosen from the fine grid `index eval` suggests from (the lines above show a coarser one)
    chosen = choose_threshold({":".join(p): r for p, r in _pair_rates(pairs, relevance, data, CHOICES).items()})
    alone = "".join(f" ({name} alone: {t})" for name, t in chosen["alone"].items())
    print(f"\npairs the default leaves unserved (≤ {MAX_ANSWERED:.0%} answered and ≤ {MAX_ABSTAINED:.0%} abstained): {', '.join(chosen['unserved']) or 'none'}{alone}")
    print(f"default threshold: {chosen['min_relevance']} (room on the tighter target over the other pairs: {chosen['room']:+.1%})")
    for spec in args.judged:
        pair, _, path = spec.partition("=")
        _report_judged(tuple(pair.split(":")), Path(path), relevance, data, chosen["min_relevance"])
    _report_keywords_alone(args.candidates, pairs, args.held_out)


def keyword_relevance(candidates: dict, own: bool) -> tuple[np.ndarray, np.ndarray]:
    """Per query, relevance@1 of a search by keywords alone (ranked by the lexical share; only
    chunks that match, one per document), and whether a relevant document is in its top 10."""
    first, found = [], []
    for qid, hits in top_hits(candidates, own and candidates.get("identical_ids"), keywords=True).items():
        first.append(product_relevance(None, hits[0][2], "lexical") if hits else 0.0)
        found.append(own and any(candidates["qrels"].get(qid, {}).get(d, 0) > 0 for d, *_ in hits))
    return np.asarray(first), np.asarray(found, dtype=bool)


def _report_keywords_alone(folder: Path, pairs: list[tuple[str, str]], held_out: list[str]) -> None:
    load = lambda name: pickle.loads((folder / f"{name}.pkl").read_bytes())  # noqa: E731
    print(f"\nkeywords alone (lexical mode, a degraded search; threshold in use {LEXICAL_MIN_RELEVANCE}): AUROC, answered / abstained")
    rates = {}
    for corpus, other in pairs:
        own, found = keyword_relevance(load(f"{corpus}-{corpus}"), True)
        off, _ = keyword_relevance(load(f"{corpus}-{other}"), False)
        rates[f"{corpus}:{other}"] = {t: (float((off >= t).mean()), float((own[found] < t).mean())) for t in CHOICES}
        cells = "  ".join(f"{t}: {(off >= t).mean():.1%}/{(own[found] < t).mean():.1%}" for t in (*THRESHOLDS, LEXICAL_MIN_RELEVANCE, 0.15))
        print(f"  {corpus} vs {other} queries: AUROC {auroc(own, off):.4f}  {cells}")
    chosen = choose_threshold(rates)
    print(f"  pairs left unserved: {', '.join(chosen['unserved']) or 'none'}; the rule picks {chosen['min_relevance']} (room {chosen['room']:+.1%})")
    for name in held_out:
        own, found = keyword_relevance(load(f"{name}-{name}"), True)
        print(f"  {name}: {(own[found] < chosen['min_relevance']).mean():.1%} of {found.sum()} questions with a relevant document in the top 10 abstain")


def _report_judged(pair: tuple[str, str], path: Path, relevance: np.ndarray, data: Hits, threshold: float) -> None:
    """The pair's off-topic queries answered at `threshold`, split by a hand judgment of their best
    passage (query id, verdict: on / rel / no): how many of the "off-topic" answers are wrong."""
    verdicts = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            qid, verdict, *_ = [*line.split("\t"), ""]
            if verdict not in ("on", "rel", "no"):
                sys.exit(f"{path}: {line!r}: expected a query id, a tab, then on, rel or no")
            verdicts[qid] = verdict
    corpus, other = pair
    rows = data.first(corpus, other)
    asked = int(rows.sum())
    if not asked:
        sys.exit(f"--judged {corpus}:{other}: that pair is not among --pairs")
    answered = [str(q) for q in data.query[rows & (relevance >= threshold)]]
    counts = {v: sum(verdicts.get(q) == v for q in answered) for v in ("on", "rel", "no")}
    unjudged = sum(q not in verdicts for q in answered)
    print(f"\n{corpus} with {other}'s queries, judged by hand ({path}): {len(answered)} of {asked} answered at {threshold}")
    for verdict, meaning in (("on", "about the asked topic"), ("rel", "a neighbouring topic"), ("no", "unrelated")):
        print(f"  {verdict:3s} {meaning:22s} {counts[verdict]:4d}  ({counts[verdict] / asked:.1%} of the queries)")
    if unjudged:
        print(f"  not in the file: {unjudged} (judge them, or the file is of another fit)")


class Hits:
    """The labeled top-10 hits of every query: features (cosine, lexical, log(1 + terms), above chance), labels, weights."""

    def __init__(self, rows: list[tuple]):
        self.corpus_of = np.array([r[0] for r in rows])
        self.group = np.array([r[1] for r in rows])
        self.query = np.array([r[2] for r in rows])
        self.rank = np.array([r[3] for r in rows])
        self.features = np.array([[r[4], r[5], r[6], r[9]] for r in rows])
        self.label = np.array([r[7] for r in rows], dtype=float)
        self.found = np.array([r[8] for r in rows])
        self.weight = np.ones(len(rows))
        for corpus in set(self.corpus_of):
            own, off = (self.corpus_of == corpus) & (self.group == "own"), (self.corpus_of == corpus) & (self.group != "own")
            self.weight[off] = own.sum() / off.sum()

    def first(self, corpus: str, group: str) -> np.ndarray:
        """The rows of the best hit of each query of `group` ("own" or an off-topic set) against `corpus`."""
        return (self.corpus_of == corpus) & (self.group == group) & (self.rank == 0)

    @classmethod
    def load(cls, folder: Path, pairs: list[tuple[str, str]]) -> "Hits":
        # rows: corpus, group ("own" or the off-topic set), query id, rank, cosine, lexical, log(1 + terms), label, found, above chance
        load = lambda name: pickle.loads((folder / f"{name}.pkl").read_bytes())  # noqa: E731
        rows = []
        for corpus in dict.fromkeys(c for c, _ in pairs):
            own = load(f"{corpus}-{corpus}")
            level = _level(own, corpus)
            for qid, hits in top_hits(own, own["identical_ids"]).items():
                found = any(own["qrels"][qid].get(d, 0) > 0 for d, *_ in hits)
                rows += [(corpus, "own", qid, r, c, l, t, int(own["qrels"][qid].get(d, 0) > 0), found, _above(level, c, t)) for r, (d, c, l, t) in enumerate(hits)]
        for corpus, other in pairs:
            off = load(f"{corpus}-{other}")
            level = _level(off, corpus)
            for qid, hits in top_hits(off, False).items():
                rows += [(corpus, other, qid, r, c, l, t, 0, False, _above(level, c, t)) for r, (d, c, l, t) in enumerate(hits)]
        return cls(rows)


def _level(candidates: dict, corpus: str) -> ChanceLevel:
    level = ChanceLevel.of(candidates.get("chance"))
    if level is None:
        sys.exit(f"{corpus}: the candidates have no chance level: index the corpus with this version, then run bench/candidates.py again")
    return level


def _above(level: ChanceLevel, cosine: float, log_terms: float) -> float:
    return level.z(cosine, int(round(np.expm1(log_terms))))


def fit_chance(data: Hits, pairs: list[tuple[str, str]], rows: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """The fits with chance levels, on `rows` (default: all): hybrid = (a, a·w, c) on (above chance,
    lexical), w the lexical weight with the best worst-pair AUROC of relevance@1 over `pairs`;
    dense = (a, 0, c) on above chance alone."""
    rows = np.ones(len(data.label), dtype=bool) if rows is None else rows
    above, lexical = data.features[:, 3], data.features[:, 1]
    worst = [min(_aurocs(above + w * lexical, data, pairs)) for w in WEIGHTS]
    w = float(WEIGHTS[int(np.argmax(worst))])  # the first best: the least lexical weight
    a, c = fit_logistic((above + w * lexical)[rows, None], data.label[rows], data.weight[rows])
    d, e = fit_logistic(above[rows, None], data.label[rows], data.weight[rows])
    return {"hybrid": np.array([a, a * w, c]), "dense": np.array([d, 0.0, e])}


def predict_chance(beta: np.ndarray, data: Hits) -> np.ndarray:
    return predict(beta, data.features[:, [3, 1]])


def _aurocs(score: np.ndarray, data: Hits, pairs) -> list[float]:
    return [auroc(score[data.first(c, "own")], score[data.first(c, o)]) for c, o in pairs]


def _report_pairs(pairs, relevance, data: Hits, thresholds) -> None:
    """Prints each pair's AUROC and its rates at `thresholds`."""
    rates = _pair_rates(pairs, relevance, data, thresholds)
    for (corpus, other), area in zip(pairs, _aurocs(relevance, data, pairs)):
        cells = "  ".join(f"{t}: {answered:.1%}/{abstained:.1%}" for t, (answered, abstained) in rates[corpus, other].items())
        print(f"  {corpus} vs {other} queries: AUROC {area:.4f}  {cells}")


def _pair_rates(pairs, relevance, data: Hits, thresholds) -> dict[tuple, dict[float, tuple[float, float]]]:
    """pair → threshold → (off-topic answered, answerable abstained), by relevance@1."""
    out: dict[tuple, dict[float, tuple[float, float]]] = {}
    for corpus, other in pairs:
        own, off = data.first(corpus, "own"), data.first(corpus, other)
        out[corpus, other] = {t: (float((relevance[off] >= t).mean()), float((relevance[own & data.found] < t).mean())) for t in thresholds}
    return out


def _report_examples(folder: Path, beta: np.ndarray) -> None:
    """examples/: the test suite's on-topic and off-topic questions, and every dataset's queries, against the bundled corpus."""
    print("\nexamples/ (relevance@1; own = the on-topic questions of tests/test_answerable.py, chat = its off-topic ones):")
    for name in ("own", "chat", "scifact", "nfcorpus", "arguana"):
        path = folder / f"examples-{name}.pkl"
        if not path.is_file():
            continue
        candidates = pickle.loads(path.read_bytes())
        level = _level(candidates, "examples")
        hits = top_hits(candidates, False, k=1)
        relevance = predict(beta, np.array([[_above(level, c, t), l] for (_, c, l, t), *_ in hits.values()]))
        cells = "  ".join(f"{t}: {(relevance >= t).mean():.1%}" for t in THRESHOLDS)
        print(f"  {name:9s} {len(relevance)} queries, relevance@1 min {relevance.min():.3f} max {relevance.max():.3f}; answered at {cells}")


if __name__ == "__main__":
    main()
