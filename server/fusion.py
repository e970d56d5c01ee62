"""Combine ranked lists from dense and lexical retrieval."""

from __future__ import annotations

RRF_K = 60


def reciprocal_rank_fusion(rankings: list[list[int]], k: int = RRF_K) -> dict[int, float]:
    """score(id) = Σ 1 / (k + rank), rank from 1, over every list the id appears in (Cormack et al. 2009)."""
    fused: dict[int, float] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, start=1):
            fused[item] = fused.get(item, 0.0) + 1.0 / (k + rank)
    return fused
