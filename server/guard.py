"""Who may search, and how often: API keys (optionally scoped to sources) and a per-client rate limit.

Both run before a request reaches its handler, so an unauthenticated or over-limit request never
costs an embedding call. Each address has a budget (`requests_per_minute`, for browsers; the
first `X-Forwarded-For` address when `trust_forwarded_for` says a proxy sets it); each API key
has its own, larger one (`key_requests_per_minute`, or the key's own), since a chatbot backend is
one client for all its visitors — or one per address using it (`limit_per = "address"`, for a key
in a public page). Requests with a wrong or missing key spend their address's. Budgets are per
server process.
"""

from __future__ import annotations

import hmac
import math
import os
import threading
import time
from dataclasses import dataclass

from indexer.config_server import ApiKey, ServerConfig
from indexer.errors import ConfigError
from server.service import ServiceError

OPEN_PATHS = ("/healthz", "/readyz", "/schema", "/widget.js")  # and "/", the demo page: static, no key, no budget
MAX_CLIENTS = 100_000  # buckets kept; the idlest are dropped beyond this


@dataclass(frozen=True)
class Caller:
    name: str  # the API key's name, or the client address
    sources: tuple[str, ...] | None  # the sources this caller may see; None: all
    client: str = "unknown"  # the address (X-Forwarded-For's first, behind a trusted proxy)


class Guard:
    def __init__(self, config: ServerConfig):
        self.config = config
        self.keys: list[tuple[bytes, ApiKey]] = []
        for key in config.api_keys:
            secret = os.environ.get(key.env, "")
            if not secret.strip():
                raise ConfigError(f"server.api_keys {key.name!r}: environment variable {key.env} is not set (it holds that key's secret)")
            self.keys.append((secret.strip().encode(), key))
        self.buckets: dict[str, list[float]] = {}  # client -> [tokens, last update]
        self.lock = threading.Lock()

    def admit(self, path: str, headers: dict[str, str], address: str | None) -> Caller | None:
        """The caller of a request, or a ServiceError (401, 429). Open paths need neither key nor budget."""
        if path == "/" or path.startswith(OPEN_PATHS):
            return None
        client = address or "unknown"
        if self.config.trust_forwarded_for and headers.get("x-forwarded-for"):
            client = headers["x-forwarded-for"].split(",")[0].strip()
        address_budget = (self.config.requests_per_minute, self.config.burst)
        if not self.keys:
            self._spend(f"addr:{client}", *address_budget)
            return Caller(client, None, client)
        scheme, _, token = headers.get("authorization", "").partition(" ")
        match = None
        for secret, key in self.keys:  # every key compared, in constant time, whatever matches
            if hmac.compare_digest(secret, token.strip().encode()) and scheme.lower() == "bearer":
                match = key
        if match is None:
            self._spend(f"addr:{client}", *address_budget)  # wrong keys cost the address budget: guessing is rate limited
            raise ServiceError("UNAUTHORIZED", "send an API key as `Authorization: Bearer <key>`", 401, headers={"WWW-Authenticate": "Bearer"})
        per_minute = match.requests_per_minute if match.requests_per_minute is not None else self.config.key_requests_per_minute
        burst = match.burst if match.burst is not None else self.config.key_burst
        self._spend(f"key:{match.name}" + (f"@{client}" if match.limit_per == "address" else ""), per_minute, burst)
        return Caller(match.name, match.sources, client)

    def _spend(self, client: str, per_minute: int, burst: int) -> None:
        rate = per_minute / 60.0
        if rate <= 0:
            return
        now = time.monotonic()
        with self.lock:
            tokens, updated = self.buckets.get(client, (float(burst), now))
            tokens = min(float(burst), tokens + (now - updated) * rate)
            if tokens < 1:
                self.buckets[client] = [tokens, now]
                wait = math.ceil((1 - tokens) / rate)
                raise ServiceError("RATE_LIMITED", f"too many requests; retry in {wait} s", 429, retryable=True, headers={"Retry-After": str(wait)})
            self.buckets[client] = [tokens - 1, now]
            if len(self.buckets) > MAX_CLIENTS:
                for stale in sorted(self.buckets, key=lambda c: self.buckets[c][1])[: MAX_CLIENTS // 10]:
                    del self.buckets[stale]
