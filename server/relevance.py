"""How likely a hit is to answer the query: a calibrated 0–1 `relevance`, and the threshold below
which a search says it has no answer (`answerable: false`).

relevance = 1 / (1 + exp(−(a · cosine + b · lexical + c))), with cosine the hit's dense score and
lexical its BM25 share of the query's ceiling, both 0–1, fitted by logistic regression on labeled
hits (bench/abstain.py: SciFact, NFCorpus and ArguAna with their qrels, plus off-topic queries from
the other domains). In a search that has only one side (lexical or dense mode, or a degraded
search), that side's own fit is used. "Calibrated" means: among hits with relevance ≈ r, about a
share r were judged relevant on that data (the reliability table is in bench/README.md).

The coefficients were measured for the bundled local model (all-MiniLM-L6-v2). Cosines of other
models sit on other scales: `index eval --dataset … --off-topic …` on your own labeled questions
reports the rates at a space's threshold, and `min_relevance` in its `[[spaces]]` table sets it
(see the README).
"""

from __future__ import annotations

import math

# (a, b, c) per available evidence, from `bench/abstain.py` (hits ranked at the product's hybrid
# weight); see bench/README.md "Abstaining" for the fit, its reliability table and the threshold.
COEFFICIENTS = {
    "hybrid": (5.271, 4.623, -6.833),
    "dense": (4.838, 0.0, -5.363),
    "lexical": (0.0, 3.955, -3.778),
}
MIN_RELEVANCE = 0.05  # the best hit must reach this for `answerable`; chosen by measurement (bench/README.md)


def relevance(dense: float | None, lexical: float | None, mode: str = "hybrid") -> float:
    """Calibrated probability that a hit with these scores is relevant (rounded to 4 digits).
    `mode` is the evidence the search had: a missing score in hybrid mode is a 0 (a query whose
    words the index lacks), in dense or lexical mode the other side was never asked."""
    a, b, c = COEFFICIENTS[mode]
    z = a * max(0.0, dense or 0.0) + b * (lexical or 0.0) + c
    return round(1.0 / (1.0 + math.exp(-z)), 4)


def threshold(space_settings: dict) -> float:
    """The relevance a space's best hit needs for `answerable`: its `min_relevance`, else the default."""
    return space_settings.get("min_relevance", MIN_RELEVANCE)
