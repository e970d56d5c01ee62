"""`index eval` runs: every labeled query through the server's search code, scored per mode; how
well `answerable` separates the dataset's own questions from off-topic ones; and `--tune`.

Off-topic questions are another dataset's queries run against this corpus: nothing in it should
answer them, so `relevance@1` (the best hit's relevance) should be low for them and high for the
dataset's own queries. Choose datasets from domains that do not overlap.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from indexer import evaluation
from indexer.errors import StaticRagError

MODES = ("dense", "lexical", "hybrid")
TUNE_WEIGHTS = tuple(round(w / 10, 1) for w in range(11))  # dense share of the hybrid score
# The abstain targets a threshold is chosen for (issue 17): at most this share of off-topic questions
# answered, and of answerable ones (a relevant document in the top 10) abstained.
MAX_ANSWERED, MAX_ABSTAINED = 0.05, 0.10
# The thresholds a suggestion is chosen from: steps of 0.0025 up to 0.2, where the default and the
# best of the measured spaces lie and a step of 0.01 moves a rate by several points (ArguAna's own
# questions abstained: 6.3% at 0.08, 9.4% at 0.09), then coarser.
THRESHOLDS = tuple(round(0.01 + 0.0025 * i, 4) for i in range(77)) + (0.25, 0.3, 0.4, 0.5)
ROOM_TO_CHANGE = 0.005  # how much more room on the targets a suggestion needs to replace the threshold in use


class Run:
    """One open generation of an indexed dataset and the queries to put to it."""

    def __init__(self, artifacts: Path, dataset: evaluation.Dataset):
        from indexer.config import ServerConfig
        from server.service import SearchService, Settings

        self.dataset = dataset
        self.service = SearchService(Settings(artifacts=artifacts, server=ServerConfig(max_query_chars=100_000)))
        self.generation = self.service.load()
        indexed = {evaluation.corpus_id(row["doc_id"]) for row in self.generation.query("document_ids")}
        # Without a corpus file (questions about an index of your own) the judged documents must be there.
        expected = set(dataset.corpus) or {doc for docs in dataset.qrels.values() for doc, grade in docs.items() if grade > 0}
        if dataset.queries and not indexed & expected:  # (no questions of its own: only off-topic ones are asked)
            self.close()
            if dataset.corpus:
                raise StaticRagError(f"{artifacts}: its generation holds none of the {dataset.name} corpus documents; "
                                     "pass the artifacts of an index of this dataset, or leave out --artifacts to index it")
            raise StaticRagError(f"{artifacts}: none of the documents judged relevant in the qrels of {dataset.name} is in its generation "
                                 f"(e.g. {min(expected, default='none judged')}); name them by the doc_id `index search --json` shows")
        # BEIR's rule for corpora that contain their own queries (ArguAna): a hit that is the query itself does not count.
        self.ignore_identical = evaluation.queries_are_documents(dataset)

    def ranking(self, space, query_id: str | None, text: str, mode: str = "hybrid", depth: int = evaluation.DEPTH, **options) -> list:
        """Hits best first, one per document, the query's own document left out where it is in the corpus."""
        from server.search import search

        vector = self.service.query_vector(space, text) if mode != "lexical" else None
        # Every copy of a passage stays a hit: a labeled set judges each by its id (ArguAna holds dozens of
        # identical documents, one of each judged), while a chatbot is given each passage once.
        hits = search(self.generation, space, vector, text, top_k=depth + 1, mode=mode, max_chunks_per_doc=1, repeated_texts=True, **options).hits
        own = query_id if self.ignore_identical else None
        return [h for h in hits if evaluation.corpus_id(h.doc_id) != own][:depth]

    def scores(self, space, mode: str, progress, **options) -> dict[str, float]:
        rankings = {}
        with progress(f"{mode} {space.space_id}", len(self.dataset.queries)) as advance:
            for query_id, text in self.dataset.queries.items():
                rankings[query_id] = [evaluation.corpus_id(h.doc_id) for h in self.ranking(space, query_id, text, mode, **options)]
                advance(1)
        return evaluation.score(rankings, self.dataset.qrels)

    def close(self) -> None:
        self.service.close()


def rank_all(artifacts: Path, dataset: evaluation.Dataset, progress) -> dict:
    """nDCG@10, Recall@10/100 and MRR@10 per space and mode."""
    run = Run(artifacts, dataset)
    try:
        return {space_id: {mode: run.scores(space, mode, progress) for mode in MODES} for space_id, space in run.generation.spaces.items()}
    finally:
        run.close()


def abstain(artifacts: Path, dataset: evaluation.Dataset, off_topic: dict[str, dict[str, str]], progress) -> dict:
    """Per space and off-topic set: AUROC of relevance@1 (own queries against off-topic ones), and at
    the space's threshold the share of off-topic queries answered and of own queries with a relevant
    document in the top 10 that abstained; under "keywords_alone" the same for a search by keywords
    alone (lexical mode, a degraded search) at its own threshold. A dataset without queries asks
    only the off-topic ones: then AUROC and the abstained share are None, and no threshold is suggested."""
    run = Run(artifacts, dataset)
    out: dict[str, dict] = {}
    try:
        for space_id, space in run.generation.spaces.items():
            out[space_id] = _abstain_in(run, space, off_topic, "hybrid", progress)
            out[space_id]["keywords_alone"] = _abstain_in(run, space, off_topic, "lexical", progress)
    finally:
        run.close()
    return out


def _abstain_in(run: Run, space, off_topic: dict[str, dict[str, str]], mode: str, progress) -> dict:
    """`abstain` for one space and search mode."""
    from server.relevance import threshold as space_threshold

    threshold = space_threshold(space.search, space.chance is not None, mode)
    own, found = _own_questions(run, space, mode, progress) if run.dataset.queries else ([], [])
    own_arr, found_arr = np.asarray(own, dtype=float), np.asarray(found, dtype=bool)
    rows, off_topic_relevance = {}, {}
    for name, queries in off_topic.items():
        other, answered_by = [], []
        with progress(f"off-topic {name} {space.space_id} {mode}", len(queries)) as advance:
            for query_id, text in queries.items():
                hits = run.ranking(space, None, text, mode, depth=1)
                other.append(hits[0].relevance if hits else 0.0)
                if hits and hits[0].relevance >= threshold:
                    answered_by.append(_answered(query_id, text, hits[0], bool(run.dataset.corpus)))
                advance(1)
        other_arr = off_topic_relevance[name] = np.asarray(other)
        answered, abstained = _rates(own_arr[found_arr], other_arr, threshold)
        rows[name] = {
            "answerable_queries": len(own), "off_topic_queries": len(other),
            "auroc": round(auroc(own_arr, other_arr), 4) if own else None,
            "auroc_found": round(auroc(own_arr[found_arr], other_arr), 4) if found_arr.any() else None,
            "off_topic_answered": round(answered, 4) if answered is not None else None,
            "answerable_abstained": round(abstained, 4) if abstained is not None else None,
            # the counts behind the two shares: a small labeled set's 4% may be two questions
            "off_topic_answered_count": len(answered_by),
            "answerable_found": int(found_arr.sum()),  # own questions with a relevant document in the top 10
            "answerable_abstained_count": int((own_arr[found_arr] < threshold).sum()),
            # to judge by eye: an "off-topic" question this corpus answers may have its answer here after all
            "answered": sorted(answered_by, key=lambda a: -a["relevance"]),
        }
    grid = sorted({*THRESHOLDS, threshold})  # the threshold in use is a candidate, whatever its value
    rates = {name: {t: tuple(r or 0.0 for r in _rates(own_arr[found_arr], other, t)) for t in grid}
             for name, other in off_topic_relevance.items()} if found_arr.any() else {}
    return {"min_relevance": threshold, "off_topic": rows} | ({"suggested": choose_threshold(rates, threshold)} if rates else {})


def _own_questions(run: Run, space, mode: str, progress) -> tuple[list[float], list[bool]]:
    """Each own question's relevance@1, and whether a relevant document is in its top 10."""
    own, found = [], []
    with progress(f"answerable {space.space_id} {mode}", len(run.dataset.queries)) as advance:
        for query_id, text in run.dataset.queries.items():
            hits = run.ranking(space, query_id, text, mode, depth=10)
            own.append(hits[0].relevance if hits else 0.0)
            found.append(any(run.dataset.qrels[query_id].get(evaluation.corpus_id(h.doc_id), 0) > 0 for h in hits))
            advance(1)
    return own, found


def _answered(query_id: str, text: str, hit, beir_corpus: bool) -> dict:
    """An off-topic question the space answers, with the passage that answers it: its document by
    the dataset's corpus id, or in an index of your own by the doc_id `index search` shows."""
    doc_id = evaluation.corpus_id(hit.doc_id) if beir_corpus else hit.doc_id
    return {"query_id": query_id, "query": text, "relevance": round(hit.relevance, 4), "doc_id": doc_id,
            "title": hit.title, "heading": " › ".join(h for h in hit.heading_path if h != hit.title)}  # a page's H1 is often its title


def _rates(own_found: np.ndarray, other: np.ndarray, threshold: float) -> tuple[float | None, float | None]:
    """(off-topic questions answered, answerable ones abstained) at `threshold`; None for a set
    that has no questions."""
    return (float((other >= threshold).mean()) if len(other) else None,
            float((own_found < threshold).mean()) if len(own_found) else None)


def choose_threshold(rates: dict[str, dict[float, tuple[float, float]]], current: float | None = None) -> dict:
    """The threshold that serves the most off-topic sets (meets both targets, MAX_ANSWERED and
    MAX_ABSTAINED, on each), and among those the one with the most room on the tighter target over
    the sets it serves, from `rates`: set → threshold → (answered, abstained). The sets it leaves
    unserved are named, with the threshold that would serve each alone (`alone`, when one does):
    their questions may have answers in this corpus after all. When none is served, the threshold
    that misses by least. Among equally good thresholds, the one nearest `current` (a small labeled
    set ties many), else the lowest; the threshold in use counts as equally good when it serves as
    many sets and no other has ROOM_TO_CHANGE more room (a question or two either way is not worth
    a change of config).

    Serving the most sets comes first: a set that only a far higher threshold serves alone once
    pulled the choice to a compromise that served no set at all, while it still claimed to meet
    the targets (bench/README.md, "How much the draw of samples matters")."""
    def room(name, t):
        answered, abstained = rates[name][t]
        return min(MAX_ANSWERED - answered, MAX_ABSTAINED - abstained)

    thresholds = sorted(set.intersection(*(set(by) for by in rates.values())))
    served = {t: [name for name in rates if room(name, t) >= 0] for t in thresholds}
    score = {t: (len(served[t]), min(room(name, t) for name in served[t] or rates)) for t in thresholds}
    nearest = (lambda t: -abs(math.log(t / current))) if current else (lambda t: -t)
    best = max(thresholds, key=lambda t: (score[t], nearest(t)))
    if current in score and score[current][0] == score[best][0] > 0 and score[current][1] + ROOM_TO_CHANGE >= score[best][1]:
        best = current
    unserved = sorted(set(rates) - set(served[best]))
    alone = {name: max((t for t in thresholds if room(name, t) >= 0), key=lambda t: (room(name, t), nearest(t)))
             for name in unserved if any(room(name, t) >= 0 for t in thresholds)}
    judged = served[best] or list(rates)
    return {"min_relevance": best, "current": current, "meets_targets": bool(served[best]), "room": round(score[best][1], 4),
            "unserved": unserved, "alone": alone, "rates": {name: [round(r, 4) for r in rates[name][best]] for name in rates},
            # the most answered and the most abstained over the sets the choice was made for
            "at": [round(max(rates[name][best][i] for name in judged), 4) for i in (0, 1)]}


def tune(artifacts: Path, dataset: evaluation.Dataset, progress) -> dict:
    """Hybrid nDCG@10 at each dense weight, per space, and the best weight: on a tie, the one nearest
    the space's weight now (a small labeled set ties many; the weight in use stays when it is among them)."""
    from server.fusion import DENSE_WEIGHT

    run = Run(artifacts, dataset)
    out = {}
    try:
        for space_id, space in run.generation.spaces.items():
            by_weight = {w: run.scores(space, "hybrid", progress, dense_weight=w)["ndcg@10"] for w in TUNE_WEIGHTS}
            now = space.search.get("hybrid_weight", DENSE_WEIGHT)
            best = max(by_weight, key=lambda w: (by_weight[w], -abs(w - now), -w))
            out[space_id] = {"ndcg@10_by_weight": by_weight, "best": best, "current": now}
    finally:
        run.close()
    return out


def auroc(positive: np.ndarray, negative: np.ndarray) -> float:
    """Probability that a random positive scores above a random negative (ties count half)."""
    if not len(positive) or not len(negative):
        return float("nan")
    values = np.concatenate([positive, negative])
    order = values.argsort(kind="stable")
    ranks = np.empty(len(values))
    ranks[order] = np.arange(1, len(values) + 1)
    for value in np.unique(values):  # average ranks over ties
        tied = values == value
        if tied.sum() > 1:
            ranks[tied] = ranks[tied].mean()
    return float((ranks[: len(positive)].sum() - len(positive) * (len(positive) + 1) / 2) / (len(positive) * len(negative)))
