"""The API's request and response bodies (msgspec structs: validation, and the OpenAPI schema), and
a search result as its response body — what `POST /v1/search` and `index search --json` print."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

import msgspec

from indexer.config import SOURCE_TYPES
from server.search import MAX_CHUNKS_PER_DOC, SearchHit, SearchResult
from server.timefilter import UPDATED_WITHIN_DESCRIPTION


class Filters(msgspec.Struct, forbid_unknown_fields=True):
    source: Annotated[str, msgspec.Meta(description="A source's name from the config; GET /v1/info lists them")] | None = None
    source_type: Literal[SOURCE_TYPES] | None = None
    doc_id: str | None = None
    updated_after: datetime | None = None
    updated_before: datetime | None = None
    updated_within: Annotated[str, msgspec.Meta(max_length=40, description=UPDATED_WITHIN_DESCRIPTION)] | None = None
    timezone: Annotated[str, msgspec.Meta(max_length=64, description="IANA time zone for calendar phrases in updated_within (default UTC)")] | None = None


class SearchRequest(msgspec.Struct, forbid_unknown_fields=True):
    query: str
    space: Annotated[str, msgspec.Meta(description="An embedding space id from /v1/info; default: [server] default_space, else the space rebuilt most recently")] | None = None
    top_k: Annotated[int, msgspec.Meta(ge=1)] = 10  # at most the server's max_top_k (default 50)
    offset: Annotated[int, msgspec.Meta(ge=0)] = 0  # hits to skip: the next page starts at offset + top_k
    mode: Literal["hybrid", "dense", "lexical"] = "hybrid"
    filters: Filters | None = None
    max_chunks_per_doc: Annotated[int, msgspec.Meta(ge=1, le=50)] | None = MAX_CHUNKS_PER_DOC  # null: no limit
    min_score: Annotated[float, msgspec.Meta(ge=0, le=1)] = 0.0
    parse_time: Annotated[bool, msgspec.Meta(description='Read a time phrase in the query ("last week", "since Monday", "in October", "recently") as an updated_* filter, in `timezone`; echoed in time_filter')] = False
    timezone: Annotated[str, msgspec.Meta(max_length=64, description="IANA time zone for parse_time and updated_within (default UTC; filters.timezone also works)")] | None = None
    recency_weight: Annotated[float, msgspec.Meta(ge=0, le=1, description="0–1: scores times (1 − w + w·2^(−age/30 days)); fresher documents move up")] = 0.0


class HitScores(msgspec.Struct):
    dense: float | None
    lexical: float | None


class Hit(msgspec.Struct):
    chunk_id: str
    doc_id: str
    title: str
    url: str | None
    path: str | None
    source: str
    heading_path: list[str]
    text: str
    start: int
    end: int
    score: float
    scores: HitScores
    updated_at: datetime | None
    chunk_ids: list[str]
    snippet: str
    relevance: Annotated[float, msgspec.Meta(description="Calibrated 0–1: about this share of hits with this value are relevant to the query")]
    stale: Annotated[bool, msgspec.Meta(description="The space has not embedded this document's latest version yet (it was changed since)")]
    link: Annotated[str | None, msgspec.Meta(description="url pointed at the passage: #page=N for a PDF, else the nearest heading's #fragment; url when there is none")]
    page_start: Annotated[int | None, msgspec.Meta(description="PDFs: the first page (from 1) the passage is on; null for documents without pages")]
    page_end: Annotated[int | None, msgspec.Meta(description="PDFs: the last page the passage is on")]


class Answer(msgspec.Struct):
    doc_id: str
    question: Annotated[str, msgspec.Meta(description="The curated question, as first phrased")]
    questions: Annotated[list[str], msgspec.Meta(description="Every phrasing the answer was written for")]
    answer: Annotated[str, msgspec.Meta(description="The approved answer, as written")]
    url: str | None
    source: str
    tags: list[str]
    updated_at: datetime | None
    score: float
    relevance: Annotated[float, msgspec.Meta(description="Calibrated 0–1, as for hits; at least the source's min_answer_relevance")]


class TimeFilterBody(msgspec.Struct):
    phrase: Annotated[str, msgspec.Meta(description="The time phrase as the query said it; it was not ranked")]
    after: datetime | None
    before: datetime | None
    only_time: Annotated[bool, msgspec.Meta(description="The query asked only what changed: hits are the documents updated in the range, newest first")]


class FallbackBody(msgspec.Struct):
    instead_of: Annotated[str, msgspec.Meta(description="The generation CURRENT names, which this server cannot read")]
    reason: str


class SearchResponse(msgspec.Struct, omit_defaults=True):
    answers: Annotated[list[Answer], msgspec.Meta(description="Curated answers (sources of type answers) that match the query, best first; [] when none does")]
    hits: list[Hit]
    took_ms: float
    generation: str
    space: str
    mode: str
    offset: int
    next_offset: int | None  # where the next page starts; null on the last page
    answerable: Annotated[bool, msgspec.Meta(description="Some hit reaches the space's relevance threshold; false: the documents do not answer this")]
    degraded: Annotated[Literal["lexical"], msgspec.Meta(description="Present when the query could not be embedded and BM25 alone answered")] | None = None
    degraded_reason: str | None = None
    time_filter: Annotated[TimeFilterBody, msgspec.Meta(description="With parse_time: the range read from the query")] | None = None
    fallback: Annotated[FallbackBody, msgspec.Meta(description=(
        "Present when the generation CURRENT names cannot be read (damaged, half copied) and an older kept one answered: "
        "the hits may miss the latest changes until a readable generation is published"))] | None = None


class ErrorBody(msgspec.Struct):
    code: str
    message: str
    retryable: bool = False


def search_response(result: SearchResult, offset: int) -> SearchResponse:
    """The body of a search answer (also `index search --json`'s output)."""
    parsed = result.time_filter
    return SearchResponse(
        time_filter=TimeFilterBody(parsed.phrase, parsed.after, parsed.before, parsed.only_time) if parsed else None,
        answers=[Answer(a.doc_id, a.question, list(a.questions), a.answer, a.url, a.source, list(a.tags), a.updated_at, round(a.score, 6), a.relevance)
                 for a in result.answers],
        hits=[_hit(h) for h in result.hits],
        took_ms=round(result.took_ms, 3),
        generation=result.generation,
        space=result.space,
        mode=result.mode,
        offset=offset,
        next_offset=offset + len(result.hits) if result.more else None,
        answerable=result.answerable,
        degraded="lexical" if result.degraded_reason else None,
        degraded_reason=result.degraded_reason,
        fallback=FallbackBody(result.fallback.instead_of, result.fallback.reason) if result.fallback else None,
    )


def _hit(h: SearchHit) -> Hit:
    return Hit(
        chunk_id=h.chunk_id,
        doc_id=h.doc_id,
        title=h.title,
        url=h.url,
        path=h.path,
        source=h.source,
        heading_path=list(h.heading_path),
        text=h.text,
        start=h.start,
        end=h.end,
        score=round(h.score, 6),
        scores=HitScores(dense=_round(h.dense), lexical=_round(h.lexical)),
        updated_at=h.updated_at,
        chunk_ids=list(h.chunk_ids),
        snippet=h.snippet,
        relevance=h.relevance,
        stale=h.stale,
        link=h.link,
        page_start=h.page_start,
        page_end=h.page_end,
    )


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 6)
