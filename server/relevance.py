"""How likely a hit is to answer the query: a calibrated 0–1 `relevance`, and the threshold below
which a search says it has no answer (`answerable: false`).

relevance = 1 / (1 + exp(−(a · above + b · lexical + c))), fitted by logistic regression on labeled
hits (bench/abstain.py: SciFact, NFCorpus and ArguAna with their qrels, plus off-topic queries from
the other domains). `lexical` is the hit's BM25 share of the query's ceiling (0–1). `above` is its
cosine read against the space's chance level (indexer/chance.py): how many chance spreads it lies
above what a question of as many terms, made of the corpus's own words but about nothing, scores
in that space. A cosine alone means different things for a two-word question and a paragraph, in
a corpus of one field and a corpus of many, and for each model; its distance above chance does
not (bench/README.md, "Abstaining"). The lexical weight is the one whose worst pair separates best.

A space without a chance level (written by a version before it; measured by its next run) uses the
fixed fit on the raw cosine instead, measured for the bundled local model. In a search that has
only one side (lexical or dense mode, or a degraded search), that side's own fit is used.
"Calibrated" means: among hits with relevance ≈ r, about a share r were judged relevant on that
data, up to about 0.3 (the reliability table is in bench/README.md).

`index eval --dataset … --off-topic …` on your own labeled questions reports the rates at a space's
threshold, and `min_relevance` in its `[[spaces]]` table sets it (see the README);
`min_lexical_relevance` sets the one for searches by keywords alone.
"""

from __future__ import annotations

import math

# (a, b, c) per available evidence, from `bench/abstain.py` (hits ranked at the product's hybrid
# weight); see bench/README.md "Abstaining" for the fits, their reliability and the thresholds.
ABOVE_CHANCE = {  # on (above chance, lexical share)
    "hybrid": (0.268, 1.262, -3.553),
    "dense": (0.215, 0.0, -3.110),
}
FIXED = {  # on (cosine, lexical share): spaces without a chance level, and lexical mode
    "hybrid": (5.271, 4.623, -6.833),
    "dense": (4.838, 0.0, -5.363),
    "lexical": (0.0, 3.955, -3.778),
}
# The best hit must reach this for `answerable`; chosen by measurement (bench/README.md), per form.
MIN_RELEVANCE = 0.045
FIXED_MIN_RELEVANCE = 0.05
# By keywords alone (lexical mode, a degraded search): the fixed lexical fit, with the threshold the
# same rule picks on lexical-mode rankings (bench/README.md, "Keywords alone"). Keywords separate
# less: at 0.045 a quarter of everyday questions were answerable on `examples/`.
LEXICAL_MIN_RELEVANCE = 0.0625


def relevance(dense: float | None, lexical: float | None, mode: str = "hybrid", above_chance: float | None = None) -> float:
    """Calibrated probability that a hit with these scores is relevant (rounded to 4 digits).
    `mode` is the evidence the search had: a missing score in hybrid mode is a 0 (a query whose
    words the index lacks), in dense or lexical mode the other side was never asked.
    `above_chance`: the cosine read against the space's chance level (ChanceLevel.z), when it has one."""
    if above_chance is not None and mode in ABOVE_CHANCE:
        a, b, c = ABOVE_CHANCE[mode]
        z = a * above_chance + b * (lexical or 0.0) + c
    else:
        a, b, c = FIXED[mode]
        z = a * max(0.0, dense or 0.0) + b * (lexical or 0.0) + c
    return round(1.0 / (1.0 + math.exp(-z)), 4)


def threshold(space_settings: dict, measured: bool = True, mode: str = "hybrid") -> float:
    """The relevance a space's best hit needs for `answerable` in a search of `mode`: by keywords
    alone its `min_lexical_relevance`, else its `min_relevance`; unset, the default of the form
    (`measured`: the space has a chance level)."""
    if mode == "lexical":
        return space_settings.get("min_lexical_relevance", LEXICAL_MIN_RELEVANCE)
    return space_settings.get("min_relevance", MIN_RELEVANCE if measured else FIXED_MIN_RELEVANCE)
