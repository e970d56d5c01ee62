"""What we know about each embedding model: dimensions, input and batch limits, price, retirement.

Chunk sizes are counted in cl100k_base tokens. A model whose own tokenizer reads fewer
tokens (all-MiniLM-L6-v2 reads 256 word pieces, special tokens included) also checks
every chunk with that tokenizer, so nothing is ever cut off silently.

Limits and prices as published by the providers (checked 2026-11); the fakes in
tests/fakes enforce the same limits.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date


@dataclass(frozen=True)
class ModelInfo:
    provider: str
    model: str
    dimensions: tuple[int, ...]  # allowed output sizes; the first is the default
    max_input_tokens: int  # per input, in the model's own tokenizer
    chunk_tokens: int  # default chunk size (cl100k tokens)
    chunk_overlap: int
    max_chunk_tokens: int
    max_batch_inputs: int  # inputs per request
    max_batch_tokens: int | None = None  # tokens per request
    price_per_million_tokens: float = 0.0  # USD
    default: bool = False  # the provider's default model
    metric: str = "inner_product"
    document_task: str | None = None
    query_task: str | None = None
    retired: date | None = None
    successor: str | None = None


MODELS: dict[tuple[str, str], ModelInfo] = {
    ("local", "all-MiniLM-L6-v2"): ModelInfo(
        provider="local",
        model="all-MiniLM-L6-v2",
        dimensions=(384,),
        max_input_tokens=256,
        # SciFact abstracts measure 1.05 word pieces per cl100k token (p50; max 1.22):
        # 200 leaves room under 256, and the word-piece check splits any chunk that still does not fit.
        chunk_tokens=200,
        chunk_overlap=40,
        max_chunk_tokens=254,
        max_batch_inputs=256,
        default=True,
    ),
    ("openai", "text-embedding-3-small"): ModelInfo(
        provider="openai",
        model="text-embedding-3-small",
        dimensions=(1536, 1024, 768, 512, 256),
        max_input_tokens=8192,
        chunk_tokens=450,
        chunk_overlap=75,
        max_chunk_tokens=8192,
        max_batch_inputs=2048,
        max_batch_tokens=300_000,
        price_per_million_tokens=0.02,
        default=True,
    ),
    ("openai", "text-embedding-3-large"): ModelInfo(
        provider="openai",
        model="text-embedding-3-large",
        dimensions=(3072, 1536, 1024, 768, 512, 256),
        max_input_tokens=8192,
        chunk_tokens=450,
        chunk_overlap=75,
        max_chunk_tokens=8192,
        max_batch_inputs=2048,
        max_batch_tokens=300_000,
        price_per_million_tokens=0.13,
    ),
    ("gemini", "gemini-embedding-001"): ModelInfo(
        provider="gemini",
        model="gemini-embedding-001",
        dimensions=(768, 1536, 3072),
        max_input_tokens=2048,
        chunk_tokens=450,
        chunk_overlap=75,
        # Counted in cl100k, not Gemini's own tokens: keep a margin below its 2048.
        max_chunk_tokens=1536,
        max_batch_inputs=100,
        price_per_million_tokens=0.15,
        default=True,
        document_task="RETRIEVAL_DOCUMENT",
        query_task="RETRIEVAL_QUERY",
    ),
    ("gemini", "text-embedding-004"): ModelInfo(
        provider="gemini",
        model="text-embedding-004",
        dimensions=(768,),
        max_input_tokens=2048,
        chunk_tokens=450,
        chunk_overlap=75,
        max_chunk_tokens=1536,
        max_batch_inputs=100,
        document_task="RETRIEVAL_DOCUMENT",
        query_task="RETRIEVAL_QUERY",
        retired=date(2026, 1, 14),
        successor="gemini-embedding-001",
    ),
}

PROVIDERS = tuple(sorted({p for p, _ in MODELS}))
