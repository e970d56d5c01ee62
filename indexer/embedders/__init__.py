"""Embedders turn chunk texts and queries into vectors for one embedding space.

Every provider offers the same small interface: `embed_documents`, `embed_query`,
`fits` (does a text fit the model's own input limit) and `manifest` (what `space.json`
records, so a reader can refuse a query embedder that does not match).
"""

from __future__ import annotations

import importlib
import sys
import threading
from functools import lru_cache
from typing import Callable, Protocol, Sequence

import numpy as np

from indexer.config import SpaceConfig


class Embedder(Protocol):
    space: SpaceConfig

    def embed_documents(self, texts: Sequence[str], progress: Callable[[int], None] | None = None, titles: list[str] | None = None,
                        token_counts: list[int] | None = None, out: np.ndarray | None = None) -> np.ndarray:
        """One vector per text, written into `out` (zeroed, len(texts) × dimensions) when given."""

    def embed_query(self, text: str) -> np.ndarray: ...

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        """Many queries at once, each embedded as `embed_query` would."""

    def fits(self, text: str) -> bool: ...

    def ready(self) -> None: ...

    def manifest(self) -> dict: ...


# What must be equal for vectors of two spaces to be interchangeable (chunking only changes which texts exist).
COMPARED_KEYS = ("provider", "model", "dimension", "metric", "normalized", "task_types")


def load_embedder(space: SpaceConfig, budget=None) -> Embedder:
    """The embedder for `space`. Hosted providers read their key from the environment
    (MissingCredentials names the variable) and spend from `budget`."""
    if space.provider == "local":
        return _local_embedder(space)
    if space.provider == "openai":
        from indexer.embedders.openai import openai_embedder

        return openai_embedder(space, budget)
    if space.provider == "gemini":
        from indexer.embedders.gemini import gemini_embedder

        return gemini_embedder(space, budget)
    raise ValueError(f"no embedder for provider {space.provider!r}")


CLIENT_MODULES = {"openai": "openai", "gemini": "google.genai"}  # what a hosted space's embedder imports


def import_client_soon(space: SpaceConfig) -> None:
    """Start importing a hosted space's client library on another thread, so it is ready when the
    run first embeds: `import openai` alone was 0.5–0.8 s of a run that changed 1% of 10,000
    documents, and it can go on while the previous versions are read and the changes chunked. A
    failed import is left to the embedder's own import, which reports it."""
    module = CLIENT_MODULES.get(space.provider)
    if module and module not in sys.modules:
        threading.Thread(target=_import_quietly, args=(module,), name=f"import-{module}", daemon=True).start()


def _import_quietly(module: str) -> None:
    try:
        importlib.import_module(module)
    except Exception:  # noqa: BLE001 — reported when the embedder imports it
        pass


def check_usable(space: SpaceConfig) -> None:
    """Fail now, naming what is missing, when `space` could not be embedded here: a hosted
    space's key (MissingCredentials) or a base URL that is none (ConfigError), the local model's packages (MissingDependency). Imports
    no client and loads no model: a run that embeds nothing never pays for them."""
    if space.provider == "local":
        from indexer.embedders.local import require_packages

        return require_packages()
    if space.provider == "openai":
        from indexer.embedders.openai import BASE_URL_VARIABLE, KEY_VARIABLES
    else:
        from indexer.embedders.gemini import BASE_URL_VARIABLE, KEY_VARIABLES
    from indexer.config import env_url
    from indexer.embedders.remote import env_key

    env_key(space.provider, *KEY_VARIABLES)
    env_url(BASE_URL_VARIABLE)


def fits_for(space: SpaceConfig) -> Callable[[str], bool] | None:
    """Whether a text fits the model's input, without credentials; None when the chunker's own
    limit already says so (hosted models count cl100k tokens, as the chunker does, and allow
    more than `chunk_tokens`): counting every chunk a second time cost as much as chunking."""
    if space.provider == "local":
        return _local_embedder(space).fits
    limit = space.info.max_input_tokens
    if space.chunk_tokens <= limit:
        return None
    from indexer.chunking import count_tokens

    return lambda text: count_tokens(text) <= limit


@lru_cache(maxsize=4)
def _local_embedder(space: SpaceConfig) -> Embedder:
    """Loaded once per process: the model takes seconds to load."""
    from indexer.embedders.local import LocalEmbedder

    return LocalEmbedder(space)


def same_space(stored: dict, ours: dict) -> list[str]:
    """The manifest keys on which two spaces differ; empty when their vectors are interchangeable."""
    return [k for k in COMPARED_KEYS if stored.get(k) != ours.get(k)]


def space_manifest(space: SpaceConfig) -> dict:
    """What `space.json` records about how this space's vectors are made: a function of the
    config and the model registry alone, so it is known without credentials or a loaded model.
    Every space stores L2-normalized vectors (we normalize whatever a provider returns)."""
    info = space.info
    return {
        "space_id": space.space_id,
        "provider": space.provider,
        "model": space.model,
        "dimension": space.dimensions,
        "metric": info.metric,
        "normalized": True,
        "tokenizer": {
            "chunking": "cl100k_base",
            "model": "bert-wordpiece-uncased" if space.provider == "local" else f"{space.provider}-server-side",
            "max_input_tokens": info.max_input_tokens,
        },
        "chunking": {"unit": "cl100k_base tokens", "chunk_tokens": space.chunk_tokens, "chunk_overlap": space.chunk_overlap},
        "task_types": {"document": info.document_task, "query": info.query_task},
    }
