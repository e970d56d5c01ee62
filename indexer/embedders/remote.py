"""What every hosted embedding API needs: batches inside its limits, bounded concurrency,
retries with backoff that honour the server's own wait hints, token and cost accounting,
and a budget that stops spending before it is exceeded.

A provider module supplies one function, `send(texts, task, title) -> Reply`, that makes a
single request with the provider's real client and translates its errors into
`ProviderError`. Everything else lives here, once.
"""

from __future__ import annotations

import os
import threading
import time
from concurrent.futures import FIRST_COMPLETED, wait
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from indexer.chunking import count_tokens
from indexer.config import SpaceConfig
from indexer.embedders import space_manifest
from indexer.errors import StaticRagError
from indexer.pools import thread_pool
from indexer.retrying import backoff
from indexer.spill import release

MAX_ATTEMPTS = 6
QUERY_ATTEMPTS = 2  # a chatbot is waiting: fail fast and let the caller retry
QUERY_MAX_WAIT_SECONDS = 2.0  # a longer Retry-After fails the query (retryable) instead of stalling it


class MissingCredentials(StaticRagError):
    """The provider's API key is not in the environment."""

    def __init__(self, provider: str, variables: tuple[str, ...]):
        self.provider, self.variables = provider, variables
        names = " or ".join(variables)
        super().__init__(f"the {provider} embedding space needs an API key: set {names} in the environment")


class EmbeddingsFailed(StaticRagError):
    """The provider would not embed some inputs, even after retries. Code EMBEDDINGS_FAILED.

    From `embed_documents`: `failed_rows` are the inputs left without a vector and
    `vectors` holds the ones that were embedded, so a caller can keep the rest.
    """

    code = "EMBEDDINGS_FAILED"

    def __init__(self, message: str, retryable: bool, failed_rows: list[int] | None = None, vectors: np.ndarray | None = None):
        super().__init__(message)
        self.retryable = retryable
        self.failed_rows = failed_rows or []
        self.vectors = vectors


class BudgetExceeded(StaticRagError):
    """Embedding more would cost more than `--max-cost`; nothing is published."""


@dataclass
class ProviderError(Exception):
    """One failed request, as the provider module saw it."""

    message: str
    status: int | None = None  # HTTP status; None for timeouts and connection errors
    retry_after: float | None = None  # seconds the server asked us to wait

    @property
    def retryable(self) -> bool:
        return self.status is None or self.status == 429 or self.status >= 500


@dataclass(frozen=True)
class Reply:
    vectors: list[list[float]] | np.ndarray
    tokens: int | None = None  # as counted by the provider, when it says


@dataclass
class Usage:
    """Running totals for one space; safe to update from worker threads."""

    requests: int = 0
    inputs: int = 0
    tokens: int = 0
    retries: int = 0
    cost_usd: float = 0.0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, inputs: int, tokens: int, price_per_million: float) -> None:
        with self._lock:
            self.requests += 1
            self.inputs += inputs
            self.tokens += tokens
            self.cost_usd += tokens * price_per_million / 1e6

    def as_dict(self) -> dict:
        return {"requests": self.requests, "inputs": self.inputs, "tokens": self.tokens, "retries": self.retries, "cost_usd": round(self.cost_usd, 8)}


class Budget:
    """A spending limit shared by every space in a run; `reserve` refuses a request that would cross it."""

    def __init__(self, max_cost_usd: float | None):
        self.max_cost_usd = max_cost_usd
        self.spent = 0.0
        self._lock = threading.Lock()

    def reserve(self, cost: float) -> None:
        with self._lock:
            if self.max_cost_usd is not None and self.spent + cost > self.max_cost_usd:
                raise BudgetExceeded(
                    f"embedding would cost more than the --max-cost of ${self.max_cost_usd:.4f} "
                    f"(${self.spent:.4f} committed, next request ${cost:.4f}); nothing was published"
                )
            self.spent += cost


def env_key(provider: str, *variables: str) -> str:
    for name in variables:
        if os.environ.get(name):
            return os.environ[name]
    raise MissingCredentials(provider, variables)


class RemoteEmbedder:
    """A hosted model behind `send`. Vectors are always L2-normalized here, whatever the provider returns."""

    def __init__(self, space: SpaceConfig, send: Callable[[list[str], str | None, str | None], Reply], budget: Budget | None = None):
        self.space = space
        self.info = space.info
        self.send = send
        self.budget = budget or Budget(None)
        self.usage = Usage()

    def ready(self) -> None:
        """Nothing to load: the client connects on first use."""

    def fits(self, text: str) -> bool:
        return count_tokens(text) <= self.info.max_input_tokens  # the same rule as embedders.fits_for

    def manifest(self) -> dict:
        return space_manifest(self.space)

    def embed_query(self, text: str) -> np.ndarray:
        reply = self._request([text], self.info.query_task, None, attempts=QUERY_ATTEMPTS, max_wait=QUERY_MAX_WAIT_SECONDS)
        return reply[0]

    def embed_queries(self, texts: list[str]) -> np.ndarray:
        """Many queries at once, as `embed_query` embeds one (a space's chance level, indexer/chance.py),
        in batches within the provider's limits, one request at a time; the budget counts them."""
        tokens = [count_tokens(t) for t in texts]
        out = np.zeros((len(texts), self.space.dimensions), dtype=np.float32)
        for rows in plan_batches(tokens, None, self.space.batch_size, self.info.max_batch_tokens):
            batch_tokens = sum(tokens[i] for i in rows)
            self.budget.reserve(batch_tokens * self.info.price_per_million_tokens / 1e6)
            out[rows] = self._request([texts[i] for i in rows], self.info.query_task, None, MAX_ATTEMPTS, batch_tokens)
        return out

    def embed_documents(self, texts: Sequence[str], progress: Callable[[int], None] | None = None, titles: list[str] | None = None,
                        token_counts: list[int] | None = None, out: np.ndarray | None = None) -> np.ndarray:
        """Embed in batches within the provider's limits, `max_concurrency` requests at a time.
        `token_counts`: the texts' cl100k tokens when the caller knows them (chunks do: counting
        108k chunks again cost 7 s of a 10,000-document run)."""
        empty = [i for i, t in enumerate(texts) if not t.strip()]
        if empty:
            raise ValueError(f"{len(empty)} empty text(s): providers reject empty inputs")
        tokens = list(token_counts) if token_counts is not None else [count_tokens(t) for t in texts]
        if not self.info.document_task:
            titles = None  # only models with a document task take a title; the rest batch freely
        batches = plan_batches(tokens, titles, self.space.batch_size, self.info.max_batch_tokens)
        out = np.zeros((len(texts), self.space.dimensions), dtype=np.float32) if out is None else out
        embedded = np.zeros(len(texts), dtype=bool)
        failures: list[EmbeddingsFailed] = []
        with thread_pool(self.space.max_concurrency, f"embed-{self.space.provider}") as pool:
            pending = {}
            try:
                for rows in batches:
                    if failures:  # the provider is failing even after retries: stop sending, keep what we have
                        break
                    batch_tokens = sum(tokens[i] for i in rows)
                    self.budget.reserve(batch_tokens * self.info.price_per_million_tokens / 1e6)
                    title = titles[rows[0]] if titles is not None else None
                    future = pool.submit(self._request, [texts[i] for i in rows], self.info.document_task, title, MAX_ATTEMPTS, batch_tokens)
                    pending[future] = rows
                    # Keep at most 2x concurrency in flight, so a failure or the budget stops us early.
                    if len(pending) >= 2 * self.space.max_concurrency:
                        self._collect(pending, out, embedded, failures, progress, wait(pending, return_when=FIRST_COMPLETED).done)
                self._collect(pending, out, embedded, failures, progress, list(pending))
            except BaseException:
                for future in pending:
                    future.cancel()
                raise
        if failures:
            failed_rows = [int(i) for i in np.flatnonzero(~embedded)]
            first = failures[0]
            raise EmbeddingsFailed(str(first), first.retryable, failed_rows, out)
        return out

    def _collect(self, pending: dict, out: np.ndarray, embedded: np.ndarray, failures: list, progress, done) -> None:
        for future in done:
            rows = pending.pop(future)
            try:
                out[rows] = future.result()
            except EmbeddingsFailed as exc:
                failures.append(exc)
                continue
            release(out, min(rows), max(rows) + 1)  # a file-backed `out` keeps only the batch in memory (indexer/spill.py)
            embedded[rows] = True
            if progress:
                progress(len(rows))

    def _request(
        self, texts: list[str], task: str | None, title: str | None, attempts: int, estimated_tokens: int | None = None, max_wait: float | None = None
    ) -> np.ndarray:
        for attempt in range(attempts):
            try:
                reply = self.send(texts, task, title)
                break
            except ProviderError as exc:
                wait_for = backoff(attempt, exc.retry_after)
                if not exc.retryable or attempt == attempts - 1 or (max_wait is not None and wait_for > max_wait):
                    what = f"HTTP {exc.status}" if exc.status else "no response"
                    tries = f" after {attempt + 1} attempts" if attempt else ""
                    raise EmbeddingsFailed(f"{self.space.space_id}: {what}{tries}: {exc.message}", retryable=exc.retryable) from None
                with self.usage._lock:
                    self.usage.retries += 1
                time.sleep(wait_for)
        vectors = np.asarray(reply.vectors, dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[0] != len(texts):
            raise EmbeddingsFailed(f"{self.space.space_id}: sent {len(texts)} inputs, got {len(reply.vectors)} vectors back", retryable=False)
        if vectors.shape[1] != self.space.dimensions:
            raise EmbeddingsFailed(
                f"{self.space.space_id}: the provider returned {vectors.shape[1]}-dimensional vectors; this space expects {self.space.dimensions}",
                retryable=False,
            )
        tokens = reply.tokens if reply.tokens is not None else (estimated_tokens or sum(count_tokens(t) for t in texts))
        self.usage.add(len(texts), tokens, self.info.price_per_million_tokens)
        return normalize(vectors)


def normalize(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.where(norms == 0, 1, norms)


def plan_batches(tokens: list[int], titles: list[str] | None, max_inputs: int, max_tokens: int | None) -> list[list[int]]:
    """Group input indexes into requests: at most `max_inputs` inputs and `max_tokens` tokens each.

    With titles (Gemini sends one title per request), only inputs sharing a title share a request.
    """
    groups: dict[str | None, list[int]] = {}
    for i in range(len(tokens)):
        groups.setdefault(titles[i] if titles is not None else None, []).append(i)
    batches: list[list[int]] = []
    for members in groups.values():
        current: list[int] = []
        total = 0
        for i in members:
            if current and (len(current) == max_inputs or (max_tokens is not None and total + tokens[i] > max_tokens)):
                batches.append(current)
                current, total = [], 0
            current.append(i)
            total += tokens[i]
        if current:
            batches.append(current)
    return batches
