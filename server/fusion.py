"""Combine dense and lexical evidence into one hybrid score.

A convex combination of scores that are already on a fixed 0–1 scale for every query:

    hybrid = w · cosine + (1 − w) · BM25 / ceiling

Cosine similarity of normalized vectors is absolute (negative values count as 0). BM25 has no
fixed scale, so it is divided by the query's ceiling — the sum over every query term of its highest
score in the index, a term the index lacks counted as the rarest term — which no chunk can exceed.
Neither side is rescaled by the best hit of the query, so a retriever that finds nothing good (a
query sharing few words with the corpus, a space whose vectors carry little meaning) contributes
low scores instead of a confident-looking 1.0 at the top of its list.

w = 0.6 by default (`hybrid_weight` per space). Chosen by the worst case (bench/README.md,
"Fusion"): every weight from 0.3 to 0.8 beats both inputs on SciFact, NFCorpus and ArguAna. Over
those and four stand-ins for held-out sets (SciFact's train and NFCorpus's dev queries, and both
test sets with words swapped for near words, where dense is the stronger side) 0.6 has the best
worst case (+0.026 nDCG@10; 0.5: +0.025), and it loses much less when the lexical side is the weak
one, which is how 0.5 lost to dense alone on held-out sets.
"""

from __future__ import annotations

import numpy as np

DENSE_WEIGHT = 0.6


def floored(cosine: np.ndarray) -> np.ndarray:
    """Cosine similarities with the negative ones counted as 0 (no -0.0 either)."""
    return np.where(cosine > 0, cosine, 0.0)


def fuse(cosine: np.ndarray, lexical: np.ndarray, dense_weight: float = DENSE_WEIGHT) -> np.ndarray:
    """Hybrid scores of candidates given as arrays: their cosines and their BM25 / ceiling."""
    return dense_weight * floored(cosine) + (1.0 - dense_weight) * lexical


def convex_combination(cosine: dict[int, float], lexical: dict[int, float], dense_weight: float = DENSE_WEIGHT) -> dict[int, float]:
    """Hybrid scores for the union of both candidate sets. `cosine` holds cosine similarities and
    `lexical` BM25 scores already divided by the query's ceiling (0–1); an id missing from one side
    scores 0 there, so callers should pass exact scores for the whole union."""
    ids = list(dict.fromkeys([*cosine, *lexical]))
    cosines = np.array([cosine.get(i, 0.0) for i in ids], dtype=np.float64)
    lexicals = np.array([lexical.get(i, 0.0) for i in ids], dtype=np.float64)
    return dict(zip(ids, fuse(cosines, lexicals, dense_weight).tolist()))
