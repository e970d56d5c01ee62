"""The server's one piece of state: the open generation and the query embedders for its spaces."""

from __future__ import annotations

import logging
import re
import threading
import time
import unicodedata
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from indexer.artifacts import GENERATIONS, fallback_order, read_current_id
from indexer.config import SOURCE_TYPES, ServerConfig, SpaceConfig
from indexer.embedders import Embedder, load_embedder, same_space
from indexer.embedders.remote import EmbeddingsFailed, MissingCredentials
from indexer.errors import ArtifactError, ConfigError, MissingDependency
from indexer.models import MODELS
from indexer import probe
from server.degraded import DegradedLog
from server.reader import Generation, SpaceIndex
from server.observe import FALLBACK, REFUSED, record_generation
from server.search import MAX_CHUNKS_PER_DOC, Fallback, SearchFilters, SearchResult, embed_query, recent, search
from server.warming import warm

log = logging.getLogger("static_rag.server")
QUERY_TIMEOUT_SECONDS = 10.0  # per query-embedding request: a chatbot user is waiting
EMBEDDING_FAILURES = ("EMBEDDINGS_FAILED", "PROVIDER_UNAVAILABLE", "MODEL_CHANGED")  # query-embedding errors a lexical answer can stand in for


class ServiceError(Exception):
    """A request-level failure with a code, an HTTP status and whether retrying may help."""

    def __init__(self, code: str, message: str, status: int, retryable: bool = False, headers: dict[str, str] | None = None):
        super().__init__(message)
        self.code, self.message, self.status, self.retryable, self.headers = code, message, status, retryable, headers or {}


@dataclass(frozen=True)
class Settings:
    artifacts: Path
    server: ServerConfig = ServerConfig()  # the config file's [server] table: CORS, API keys, limits
    query_cache_size: int = 4096  # query vectors kept; a 768-d vector is 3 KB
    poll_seconds: float = 1.0  # how often CURRENT is checked for a newly published generation
    probe_seconds: float = 3600.0  # how often each space's model is checked again while a generation is served (`_check_probe`)


class SearchService:
    def __init__(self, settings: Settings):
        self.settings = settings
        self.generation: Generation | None = None
        self.embedders: dict[str, Embedder] = {}
        self._vectors: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        self._swap_lock = threading.Lock()
        self.refused: dict[str, str] = {}  # generation id -> why it could not be served (not retried every poll)
        self.fallback: Fallback | None = None  # while what CURRENT names is refused and another generation answers
        self._stop = threading.Event()
        self.degraded = DegradedLog(log)
        self.changed_models: dict[str, str] = {}  # space id → why its queries no longer compare with its vectors (`_check_probe`)
        self._probed: set[str] = set()  # spaces of the generation served whose model `_check_probe` has checked
        self._watcher: threading.Thread | None = None

    def load(self, ready_models: bool = True, fall_back: bool = False) -> Generation:
        """Open the generation CURRENT names, get its query embedders ready, and serve it,
        retiring the one served before (it closes when its last request ends). `fall_back`: a
        server with nothing served yet serves a kept generation when that one cannot be read
        (`_open`).

        A space whose provider has no key here stays searchable lexically; dense and hybrid
        requests for it get a 503 naming the missing variable. Other spaces are unaffected.
        `ready_models=False` leaves each model to load on its first query (a one-shot search
        that may need none: a lexical one does not import torch).
        """
        with self._swap_lock:
            generation = self._open(fall_back and self.generation is None)
            warm(generation.folder)  # its first queries read from memory, not the disk (server/warming.py)
            for space in generation.spaces.values():
                self._probed.discard(space.space_id)  # its model is checked again, now or before its first query
                try:
                    embedder = self._embedder_for(space)
                    if self.generation is not None and space.space_id in self.generation.spaces \
                            and self.generation.spaces[space.space_id].probe != space.probe:
                        self._forget_queries(space.space_id)  # embedded anew (--reembed): its cached query vectors are the old model's
                    if ready_models:
                        embedder.ready()
                        self._check_probe(space, embedder)
                except MissingDependency as exc:  # a model whose packages or files fail: its space answers lexically
                    self.degraded.unavailable(space.space_id, _unavailable(space, exc).message)
                except ServiceError as exc:
                    self.degraded.unavailable(space.space_id, exc.message)  # it names the space
            previous, self.generation = self.generation, generation
            record_generation(generation.id, previous.id if previous is not None else None, generation.manifest.get("created_at"))
            if previous is not None:
                previous.retire()
            log.info("serving generation %s from %s", generation.id, generation.folder)
            return generation

    def _open(self, fall_back: bool) -> Generation:
        """What CURRENT names; with `fall_back`, when that cannot be read (a damaged copy, bit rot),
        the first kept generation in `fallback_order` that can — the one `index rollback` would
        serve — with the refusal logged and listed in /v1/info, as a hot swap keeps the old one.
        A server restarted over a damaged generation answered 503 to every request until the
        next run published."""
        try:
            generation = Generation.open_current(self.settings.artifacts)
        except ArtifactError as exc:
            named = read_current_id(self.settings.artifacts)
            if not fall_back or named is None:
                raise
            for generation_id in fallback_order(self.settings.artifacts):
                try:
                    generation = Generation(self.settings.artifacts / GENERATIONS / generation_id)
                except ArtifactError:
                    continue
                self._refuse(named, exc, generation_id)
                log.error("generation %s refused, serving %s (kept) instead until a readable one is published: %s", named, generation_id, exc)
                return generation
            raise
        self._serving_current()
        return generation

    def _refuse(self, named: str, exc: Exception, serving: str | None) -> None:
        """What CURRENT names cannot be served: remember why, and flag the answers of `serving`."""
        self.refused[named] = str(exc)
        REFUSED.inc()
        if serving is not None:
            self._serving_instead(named)

    def _serving_instead(self, named: str) -> None:
        if self.fallback is None or self.fallback.instead_of != named:
            self.fallback = Fallback(named, self.refused[named])
            FALLBACK.set(1)

    def _serving_current(self) -> None:
        if self.fallback is not None:
            self.fallback = None
            FALLBACK.set(0)

    def current(self) -> Generation:
        """The generation being served (without a lease: for quick reads such as /v1/info)."""
        if self.generation is None:
            try:  # a server started before the first `index run` becomes ready once one is published
                return self.load(fall_back=True)
            except ArtifactError as exc:
                raise ServiceError("NO_GENERATION", str(exc), 503, retryable=True) from None
        return self.generation

    @contextmanager
    def leased(self) -> Iterator[Generation]:
        """The current generation, kept open until the block ends even if a newer one is swapped in."""
        while True:
            generation = self.current()
            if generation.acquire():
                break  # else it closed between the two lines: take the newer one
        try:
            yield generation
        finally:
            generation.release()

    def query(self, name: str, params: dict) -> list[dict]:
        with self.leased() as generation:
            return generation.query(name, params)

    def watch(self) -> None:
        """Check CURRENT every `poll_seconds` in a background thread and swap in what it names."""
        self._watcher = threading.Thread(target=self._watch, name="generation-watcher", daemon=True)
        self._watcher.start()

    def _watch(self) -> None:
        probe_due = time.monotonic() + self.settings.probe_seconds
        while not self._stop.wait(self.settings.poll_seconds):
            if time.monotonic() >= probe_due:  # a model can change under its name while nothing is published
                probe_due = time.monotonic() + self.settings.probe_seconds
                self._check_probes()
            try:
                named = read_current_id(self.settings.artifacts)
            except OSError:
                continue
            serving = self.generation.id if self.generation is not None else None
            if named == serving:
                self._serving_current()  # e.g. `index rollback` to the generation served
                continue
            if not named:
                continue
            if named in self.refused:
                if serving is not None:
                    self._serving_instead(named)  # CURRENT pointed back at a generation refused before
                continue
            try:
                self.load()
            except Exception as exc:  # a broken generation must not take the server down: keep serving the old one
                self._refuse(named, exc, serving)
                log.error("generation %s refused, still serving %s: %s", named, serving, exc)

    def space(self, generation: Generation, space_id: str | None) -> SpaceIndex:
        if space_id is None:
            return generation.default_space(self.settings.server.default_space)
        if space_id not in generation.spaces:
            raise ServiceError("UNKNOWN_SPACE", f"space {space_id!r} is not in generation {generation.id}; available: {', '.join(generation.spaces)}", 404)
        return generation.spaces[space_id]

    def search(self, query: str, space_id: str | None = None, top_k: int = 10, mode: str = "hybrid", filters: SearchFilters = SearchFilters(),
               offset: int = 0, max_chunks_per_doc: int | None = MAX_CHUNKS_PER_DOC, min_score: float = 0.0, recency_weight: float = 0.0,
               parse_time: bool = False, tz=None) -> SearchResult:
        """`parse_time`: a time phrase in `query` becomes an updated_* range in `tz` (UTC by
        default) and is not ranked (server/timeparse.py); a query that is only about time lists
        the documents of the range, newest first. The result's `time_filter` says what was read."""
        query = query.strip()
        parsed = None
        if parse_time:
            from datetime import datetime, timezone

            from server.timefilter import intersect
            from server.timeparse import parse_time as read_time

            parsed = read_time(query, datetime.now(timezone.utc), tz or timezone.utc)
            if parsed is not None:
                after, before = intersect(filters.updated_after, filters.updated_before, (parsed.after, parsed.before))
                filters, query = replace(filters, updated_after=after, updated_before=before), parsed.rest
        list_recent = parsed is not None and parsed.only_time
        if not has_text(query) and not list_recent:
            raise ServiceError("EMPTY_QUERY", "query must contain some text", 400)
        limit = self.settings.server.max_query_chars
        if len(query) > limit:
            raise ServiceError("QUERY_TOO_LONG", f"query has {len(query)} characters; the limit is {limit}", 400)
        if top_k > self.settings.server.max_top_k:
            raise ServiceError("TOP_K_TOO_LARGE", f"top_k is {top_k}; the limit is {self.settings.server.max_top_k}", 400)
        if offset > self.settings.server.max_offset:
            raise ServiceError("OFFSET_TOO_LARGE", f"offset is {offset}; the limit is {self.settings.server.max_offset} (refine the query instead)", 400)
        started = time.perf_counter()
        degraded = None
        with self.leased() as generation:
            space = self.space(generation, space_id)
            check_filters(generation, filters)
            fallback = self.fallback if self.fallback is not None and self.fallback.instead_of != generation.id else None
            if list_recent:
                result = recent(generation, space, filters, top_k=top_k, offset=offset)
                return replace(result, took_ms=(time.perf_counter() - started) * 1000, time_filter=parsed, fallback=fallback)
            vector = None
            if mode != "lexical":
                try:
                    vector = self.query_vector(space, query)
                except ServiceError as exc:
                    # The provider is down or has no key here: BM25 can still answer, and a chatbot
                    # is better served by lexical hits, marked as such, than by a 503.
                    if self.settings.server.on_embedding_failure != "lexical" or exc.code not in EMBEDDING_FAILURES:
                        raise
                    self.degraded.answered_lexically(space.space_id, exc.message)
                    mode, degraded = "lexical", exc.message
            result = search(generation, space, vector, query, top_k=top_k, mode=mode, filters=filters, offset=offset,
                            max_chunks_per_doc=max_chunks_per_doc, min_score=min_score, recency_weight=recency_weight)
        # took_ms is what the caller waited for, query embedding included.
        return replace(result, took_ms=(time.perf_counter() - started) * 1000, degraded_reason=degraded, time_filter=parsed, fallback=fallback)

    def query_vector(self, space: SpaceIndex, query: str) -> np.ndarray:
        """The query embedded by the space's own provider and query task type; repeated questions come from an LRU cache."""
        if space.space_id not in self._probed:  # a model loaded on its first query (`index search`) is checked before it is trusted
            self._check_probe(space, self._embedder_for(space))
        if (changed := self.changed_models.get(space.space_id)) is not None:
            raise ServiceError("MODEL_CHANGED", changed, 503)
        key = (space.space_id, query)
        with self._lock:
            if key in self._vectors:
                self._vectors.move_to_end(key)
                return self._vectors[key]
        try:
            vector = embed_query(self._embedder_for(space), query)
        except EmbeddingsFailed as exc:
            raise ServiceError("EMBEDDINGS_FAILED", f"space {space.space_id} could not embed the query: {exc}", 503, retryable=True) from None
        except MissingDependency as exc:  # a model loaded on this first query, whose packages or files fail
            raise _unavailable(space, exc) from None
        self.degraded.embedded(space.space_id)
        with self._lock:
            self._vectors[key] = vector
            if len(self._vectors) > self.settings.query_cache_size:
                self._vectors.popitem(last=False)
        return vector

    def _check_probes(self) -> None:
        """`_check_probe` for every space of the generation served (the watcher, every `probe_seconds`)."""
        generation = self.generation
        for space in generation.spaces.values() if generation is not None else ():
            try:
                self._check_probe(space, self._embedder_for(space))
            except (ServiceError, ArtifactError):  # no key or no model here: its queries say so already
                continue

    def _check_probe(self, space: SpaceIndex, embedder: Embedder) -> None:
        """Does the space's provider still embed as it did for the vectors served (indexer/probe.py)?
        The model behind a name can change while a generation is served — a provider's update, other
        versions of the local model's libraries on this machine — and every query vector is then
        compared with vectors of another model: dense ranking at random, and nothing said. Such a
        space answers by keywords (`degraded`, the reason given) until a generation embedded anew is
        served, or the provider answers as before. A provider that does not answer is not checked:
        its queries say why, and what the last check found stands."""
        self._probed.add(space.space_id)
        if space.probe is None:
            self.changed_models.pop(space.space_id, None)
            return
        try:
            vectors = probe.embed(embedder)
        except (EmbeddingsFailed, MissingDependency):
            return
        cosine = probe.moved(space.probe, vectors)
        if cosine is None:
            if self.changed_models.pop(space.space_id, None) is not None:
                log.info("space %s: its provider embeds as this generation's vectors were made again", space.space_id)
        else:
            self.changed_models[space.space_id] = reason = (
                f"space {space.space_id}: its provider now embeds text differently than when this generation embedded it (the probe "
                f"sentences come back at cosine {cosine:.3f}), so query vectors would not compare with its vectors; answering by keywords "
                "until `index run --reembed` publishes it embedded anew")
            self.degraded.unavailable(space.space_id, reason)
            self._forget_queries(space.space_id)  # cached ones may be either model's

    def _forget_queries(self, space_id: str) -> None:
        with self._lock:
            for key in [k for k in self._vectors if k[0] == space_id]:
                del self._vectors[key]

    def _embedder_for(self, space: SpaceIndex) -> Embedder:
        """Reuse a loaded embedder only if it makes vectors the way this space's were made."""
        stored = space.manifest
        embedder = self.embedders.get(space.space_id)
        if embedder is not None and same_space(stored, embedder.manifest()):
            embedder = None  # a new generation rebuilt this space differently: make a matching embedder
        if embedder is None:
            key = (stored["provider"], stored["model"])
            if key not in MODELS:
                raise ArtifactError(f"space {space.space_id}: this version cannot embed queries for {key[0]}/{key[1]}")
            chunking = stored["chunking"]
            info = MODELS[key]
            config = SpaceConfig(
                stored["provider"], stored["model"], int(stored["dimension"]), chunking["chunk_tokens"], chunking["chunk_overlap"],
                batch_size=info.max_batch_inputs, timeout_seconds=QUERY_TIMEOUT_SECONDS,
            )
            try:
                embedder = load_embedder(config)
            except MissingCredentials as exc:
                raise ServiceError("PROVIDER_UNAVAILABLE", f"space {space.space_id} cannot embed queries here: set {' or '.join(exc.variables)} (lexical mode still works)", 503) from None
            except ConfigError as exc:  # a base URL in the environment that is none
                raise ServiceError("PROVIDER_UNAVAILABLE", f"space {space.space_id} cannot embed queries here: {exc} (lexical mode still works)", 503) from None
            except MissingDependency as exc:  # the local model's packages are not installed here
                raise _unavailable(space, exc) from None
        different = same_space(stored, embedder.manifest())
        if different:
            raise ArtifactError(f"space {space.space_id}: the query embedder differs from the stored manifest in {', '.join(different)}")
        self.embedders[space.space_id] = embedder
        return embedder

    def close(self) -> None:
        self._stop.set()
        if self._watcher is not None:
            self._watcher.join(timeout=5)
        if self.generation is not None:
            self.generation.retire()
            self.generation = None


def check_filters(generation: Generation, filters: SearchFilters) -> None:
    """A source the index does not have, or a source type the product does not have, is a typo,
    not an empty result: say so and name what there is (only what the caller's key may search)."""
    visible = sorted(generation.sources if filters.sources is None else generation.sources & set(filters.sources))
    if filters.source is not None and filters.source not in visible:
        raise ServiceError("UNKNOWN_SOURCE", f"no source is named {filters.source!r}; sources: {', '.join(visible) or 'none'}", 400)
    if filters.source_type is not None and filters.source_type not in SOURCE_TYPES:
        raise ServiceError("UNKNOWN_SOURCE", f"there is no source type {filters.source_type!r}; types: {', '.join(SOURCE_TYPES)}", 400)


def _text_pattern() -> str:
    """A character class of everything but blanks, control characters and format characters (zero-width
    spaces, byte-order marks, bidi marks), from the Unicode database. The schema's `pattern` for the
    query is this same class, so a request the schema calls valid is never refused as empty. Written
    with \\uXXXX escapes of the Basic Multilingual Plane only, which JSON Schema's ECMA-262 regexes
    and Python's `re` read alike; surrogates stay outside the class, so a character beyond that plane
    counts as text in both (UTF-16 code units or not)."""
    ranges, start = [], None
    for code in range(0x10001):
        hidden = code < 0x10000 and not 0xD800 <= code <= 0xDFFF and unicodedata.category(chr(code)) in ("Cc", "Cf", "Zs", "Zl", "Zp")
        if hidden and start is None:
            start = code
        elif not hidden and start is not None:
            ranges.append(f"\\u{start:04x}" + (f"-\\u{code - 1:04x}" if code - 1 > start else ""))
            start = None
    return "[^" + "".join(ranges) + "]"


TEXT_PATTERN = _text_pattern()
_TEXT = re.compile(TEXT_PATTERN)


def has_text(query: str) -> bool:
    """Whether the query holds anything to search for: a query of control characters, zero-width
    spaces or other invisible code points is as empty as one of blanks (and would otherwise be
    answered with whatever ranks first for nothing)."""
    return _TEXT.search(query) is not None


def _unavailable(space: SpaceIndex, missing: MissingDependency) -> ServiceError:
    return ServiceError("PROVIDER_UNAVAILABLE", f"space {space.space_id} cannot embed queries here: {missing} (lexical mode still works)", 503)
