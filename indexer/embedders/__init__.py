"""Embedders turn chunk texts and queries into vectors for one embedding space.

Every provider offers the same small interface: `embed_documents`, `embed_query`,
`fits` (does a text fit the model's own input limit) and `manifest` (what `space.json`
records, so a reader can refuse a query embedder that does not match).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Callable, Protocol

import numpy as np

from indexer.config import SpaceConfig


class Embedder(Protocol):
    space: SpaceConfig

    def embed_documents(self, texts: list[str], progress: Callable[[int], None] | None = None) -> np.ndarray: ...

    def embed_query(self, text: str) -> np.ndarray: ...

    def fits(self, text: str) -> bool: ...

    def manifest(self) -> dict: ...


@lru_cache(maxsize=8)
def load_embedder(space: SpaceConfig) -> Embedder:
    """The embedder for `space`, loaded once per process (a model takes seconds to load)."""
    if space.provider == "local":
        from indexer.embedders.local import LocalEmbedder

        return LocalEmbedder(space)
    raise ValueError(f"no embedder for provider {space.provider!r}")


def space_manifest(space: SpaceConfig, tokenizer: dict, task_types: dict, normalized: bool) -> dict:
    """The parts of `space.json` that describe how vectors were made; two spaces with equal manifests are compatible."""
    return {
        "space_id": space.space_id,
        "provider": space.provider,
        "model": space.model,
        "dimension": space.dimensions,
        "metric": space.info.metric,
        "normalized": normalized,
        "tokenizer": tokenizer,
        "chunking": {"unit": "cl100k_base tokens", "chunk_tokens": space.chunk_tokens, "chunk_overlap": space.chunk_overlap},
        "task_types": task_types,
    }
