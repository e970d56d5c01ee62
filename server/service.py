"""The server's one piece of state: the open generation and the query embedders for its spaces."""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path

from indexer.config import SpaceConfig
from indexer.embedders import Embedder, load_embedder, same_space
from indexer.errors import ArtifactError
from indexer.models import MODELS
from server.reader import Generation, SpaceIndex
from server.search import SearchFilters, SearchResult, embed_query, search

log = logging.getLogger("static_rag.server")


class ServiceError(Exception):
    """A request-level failure with a code, an HTTP status and whether retrying may help."""

    def __init__(self, code: str, message: str, status: int, retryable: bool = False):
        super().__init__(message)
        self.code, self.message, self.status, self.retryable = code, message, status, retryable


@dataclass(frozen=True)
class Settings:
    artifacts: Path
    max_query_chars: int = 2000


class SearchService:
    def __init__(self, settings: Settings):
        self.settings = settings
        self.generation: Generation | None = None
        self.embedders: dict[str, Embedder] = {}
        self._lock = threading.Lock()

    def load(self) -> Generation:
        """Open the generation CURRENT names and the query embedders it needs."""
        with self._lock:
            generation = Generation.open_current(self.settings.artifacts)
            for space in generation.spaces.values():
                self._embedder_for(space)
            self.generation = generation
            log.info("serving generation %s from %s", generation.id, generation.folder)
            return generation

    def current(self) -> Generation:
        if self.generation is None:
            try:  # a server started before the first `index run` becomes ready once one is published
                return self.load()
            except ArtifactError as exc:
                raise ServiceError("NO_GENERATION", str(exc), 503, retryable=True) from None
        return self.generation

    def space(self, generation: Generation, space_id: str | None) -> SpaceIndex:
        if space_id is None:
            return next(iter(generation.spaces.values()))
        if space_id not in generation.spaces:
            raise ServiceError("UNKNOWN_SPACE", f"space {space_id!r} is not in generation {generation.id}; available: {', '.join(generation.spaces)}", 400)
        return generation.spaces[space_id]

    def search(self, query: str, space_id: str | None = None, top_k: int = 10, mode: str = "hybrid", filters: SearchFilters = SearchFilters()) -> SearchResult:
        query = query.strip()
        if not query:
            raise ServiceError("EMPTY_QUERY", "query must contain some text", 400)
        if len(query) > self.settings.max_query_chars:
            raise ServiceError("QUERY_TOO_LONG", f"query has {len(query)} characters; the limit is {self.settings.max_query_chars}", 400)
        started = time.perf_counter()
        generation = self.current()
        space = self.space(generation, space_id)
        vector = embed_query(self._embedder_for(space), query) if mode != "lexical" else None
        result = search(generation, space, vector, query, top_k=top_k, mode=mode, filters=filters)
        # took_ms is what the caller waited for, query embedding included.
        return replace(result, took_ms=(time.perf_counter() - started) * 1000)

    def _embedder_for(self, space: SpaceIndex) -> Embedder:
        """Reuse a loaded embedder only if it makes vectors the way this space's were made."""
        stored = space.manifest
        embedder = self.embedders.get(space.space_id)
        if embedder is None:
            key = (stored["provider"], stored["model"])
            if key not in MODELS:
                raise ArtifactError(f"space {space.space_id}: this version cannot embed queries for {key[0]}/{key[1]}")
            chunking = stored["chunking"]
            config = SpaceConfig(stored["provider"], stored["model"], int(stored["dimension"]), chunking["chunk_tokens"], chunking["chunk_overlap"], batch_size=32)
            embedder = load_embedder(config)
        different = same_space(stored, embedder.manifest())
        if different:
            raise ArtifactError(f"space {space.space_id}: the query embedder differs from the stored manifest in {', '.join(different)}")
        self.embedders[space.space_id] = embedder
        return embedder

    def close(self) -> None:
        if self.generation is not None:
            self.generation.close()
            self.generation = None
