"""Curated answers (source type "answers", indexer/sources/answers.py) in a search response.

An answer's chunks are ranked with every other chunk; instead of becoming hits they are set aside,
and an answer whose best chunk reaches its source's `min_answer_relevance` (default
MIN_ANSWER_RELEVANCE) is returned in the response's `answers` list, best first, at most
MAX_ANSWERS. An answer's relevance is calibrated from its cosine alone when the search has one
(server/relevance.py's dense fit): on paraphrases, near misses and off-topic questions the cosine
told them apart better than the hybrid blend did. The threshold was chosen on those questions
(bench/answers.py; bench/README.md "Curated answers").
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime

MIN_ANSWER_RELEVANCE = 0.06  # bench/answers.py: no off-topic, 6.7% of near misses, 2.4% of paraphrases wrong
MAX_ANSWERS = 3


@dataclass(frozen=True)
class Curated:
    """What a server keeps of one curated answer."""

    questions: tuple[str, ...]
    answer: str
    min_relevance: float
    tags: tuple[str, ...] = ()


@dataclass(frozen=True)
class AnswerHit:
    doc_id: str
    question: str  # the phrasing listed first
    questions: tuple[str, ...]
    answer: str
    url: str | None
    source: str
    tags: tuple[str, ...]
    updated_at: datetime | None
    score: float
    relevance: float


def load_curated(rows: list[dict]) -> dict[str, Curated]:
    """doc_id → Curated, from the `answers` query's rows."""
    found = {}
    for row in rows:
        meta = json.loads(row["metadata"]) if isinstance(row["metadata"], str) else (row["metadata"] or {})
        offset = int(meta.get("answer_offset", 0))
        found[row["doc_id"]] = Curated(tuple(meta.get("questions") or ()), row["text"][offset:].strip(),
                                       float(meta.get("min_answer_relevance", MIN_ANSWER_RELEVANCE)), tuple(row.get("tags") or ()))
    return found


def pick(curated: dict[str, Curated], candidates: dict[str, tuple[dict, float, float]]) -> list[AnswerHit]:
    """The answers among `candidates` (doc_id → best chunk's row, score, relevance) that reach
    their threshold, best first."""
    chosen = []
    for doc_id, (row, score, relevance) in candidates.items():
        entry = curated.get(doc_id)
        if entry is None or relevance < entry.min_relevance:
            continue
        chosen.append(AnswerHit(doc_id, entry.questions[0] if entry.questions else row["title"], entry.questions, entry.answer, row["url"],
                                row["source"], entry.tags, row["updated_at"], score, relevance))
    chosen.sort(key=lambda a: (-a.relevance, -a.score))
    return chosen[:MAX_ANSWERS]
