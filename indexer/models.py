"""What we know about each embedding model: dimensions, input limits and chunking defaults.

Chunk sizes are counted in cl100k_base tokens. A model whose own tokenizer reads fewer
tokens (all-MiniLM-L6-v2 reads 256 word pieces, special tokens included) also checks
every chunk with that tokenizer, so nothing is ever cut off silently.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ModelInfo:
    provider: str
    model: str
    dimensions: tuple[int, ...]  # allowed output sizes; the first is the default
    max_input_tokens: int  # in the model's own tokenizer, special tokens included
    chunk_tokens: int  # default chunk size (cl100k tokens)
    chunk_overlap: int
    max_chunk_tokens: int
    default: bool = False  # the provider's default model
    metric: str = "inner_product"


MODELS: dict[tuple[str, str], ModelInfo] = {
    ("local", "all-MiniLM-L6-v2"): ModelInfo(
        provider="local",
        model="all-MiniLM-L6-v2",
        dimensions=(384,),
        max_input_tokens=256,
        # English prose runs ~1.1 word pieces per cl100k token; 200 leaves room under 256,
        # and the word-piece check splits the rare chunk that still does not fit.
        chunk_tokens=200,
        chunk_overlap=40,
        max_chunk_tokens=254,
        default=True,
    ),
}
