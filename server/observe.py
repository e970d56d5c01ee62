"""What an operator sees: Prometheus metrics at GET /metrics and one JSON access-log line per request.

Both come from one ASGI wrapper around the whole app (`observe`), so requests refused before any
handler runs — unknown routes, 401, 429, 413 — are counted and logged like the rest.

With `index serve --workers N` each worker counts its own requests; `index serve` points
PROMETHEUS_MULTIPROC_DIR at a fresh folder so /metrics, answered by any worker, sums them all.
Query text is never logged (a public chatbot's users type personal things); its length is.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time
from datetime import datetime, timezone

from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, CollectorRegistry, Counter, Gauge, Histogram, generate_latest

access_log = logging.getLogger("static_rag.access")
ACCESS_LOG = {"enabled": True}

REQUESTS = Counter("static_rag_requests", "HTTP requests answered, by route template and status", ["method", "route", "status"])
LATENCY = Histogram(
    "static_rag_request_duration_seconds", "Time from request to the end of the response", ["route"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0),
)
CANDIDATES = Histogram(
    "static_rag_search_candidates", "Chunks scored per search before collapsing to hits", ["mode"],
    buckets=(10, 100, 300, 1000, 3000, 10_000, 100_000, 1_000_000),
)
GENERATION = Gauge("static_rag_generation_info", "The generation being served (1) and ones served before (0)", ["generation"], multiprocess_mode="max")
SWAPS = Counter("static_rag_generation_swaps", "Generations swapped in without a restart")
REFUSED = Counter("static_rag_generation_refusals", "Published generations that could not be opened")
FALLBACK = Gauge(
    "static_rag_generation_fallback", "1 while the generation CURRENT names cannot be opened and an older one is served instead",
    multiprocess_mode="max",
)
# A nightly that stopped publishing leaves servers answering from an ever older generation, and nothing
# else says so: alert on `time() - static_rag_generation_built_timestamp_seconds > 2 * 86400`.
BUILT = Gauge("static_rag_generation_built_timestamp_seconds", "When the generation being served was built (Unix time)", multiprocess_mode="max")
DEGRADED = Counter("static_rag_degraded_searches", "Dense and hybrid searches answered lexically because the query could not be embedded", ["space"])


def record_generation(new: str, old: str | None, built_at: str | None = None) -> None:
    """A generation swapped in (`built_at`: its manifest's created_at, ISO 8601)."""
    if old is not None and old != new:
        GENERATION.labels(old).set(0)
        SWAPS.inc()
    GENERATION.labels(new).set(1)
    if built_at:
        BUILT.set(datetime.fromisoformat(built_at.replace("Z", "+00:00")).timestamp())


def exposition() -> tuple[bytes, str]:
    """The metrics page: this process's metrics, or every worker's when they share a multiprocess folder."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        return generate_latest(registry), CONTENT_TYPE_LATEST
    return generate_latest(REGISTRY), CONTENT_TYPE_LATEST


class JsonFormatter(logging.Formatter):
    """One JSON object per line: `ts`, `level`, `logger`, `message`, and any `fields` passed as `extra`."""

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "ts": datetime.fromtimestamp(record.created, timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
            **getattr(record, "fields", {}),
        }
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False, default=str)


def json_logging(enabled_access_log: bool = True) -> None:
    """Send the server's own loggers to stderr as JSON lines (once per process)."""
    for name in ("static_rag", "static_rag.access"):
        logger = logging.getLogger(name)
        if not any(isinstance(h.formatter, JsonFormatter) for h in logger.handlers):
            handler = logging.StreamHandler(sys.stderr)
            handler.setFormatter(JsonFormatter())
            logger.addHandler(handler)
        logger.propagate = False
        logger.setLevel(logging.INFO)
    # A flag of ours, not `access_log.disabled`: any later logging.config.dictConfig (uvicorn's, a
    # library's) sets `disabled = False` on every existing logger, and --no-access-log was lost.
    ACCESS_LOG["enabled"] = enabled_access_log


def observe(app):
    """Wrap `app` (an ASGI callable) so every HTTP request is counted, timed and logged."""

    async def observed(scope, receive, send):
        if scope["type"] != "http":
            return await app(scope, receive, send)
        started = time.perf_counter()
        status = 500

        async def recording_send(message):
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await app(scope, receive, recording_send)
        finally:
            elapsed = time.perf_counter() - started
            route = scope.get("path_template") or "unmatched"  # a template, so the label set stays small
            REQUESTS.labels(scope["method"], route, str(status)).inc()
            LATENCY.labels(route).observe(elapsed)
            state = scope.get("state", {})
            search = state.get("search")
            if search is not None:
                CANDIDATES.labels(search["mode"]).observe(search["candidates"])
            if ACCESS_LOG["enabled"] and access_log.isEnabledFor(logging.INFO):
                caller = state.get("caller")
                client = scope.get("client")
                fields = {
                    "method": scope["method"],
                    "path": scope["path"],
                    "route": route,
                    "status": status,
                    "duration_ms": round(elapsed * 1000, 2),
                    "client": caller.client if caller is not None else (client[0] if client else None),
                    "caller": caller.name if caller is not None else None,  # the API key's name, or the address
                    **(search or {}),
                }
                access_log.info("request", extra={"fields": fields})

    return observed


REFUSED_ORIGINS_LOGGED = 100  # distinct origins warned about per process; past that, silence


def warn_refused_origins(app, allowed: frozenset[str]):
    """Wrap `app` so a browser request from an origin not in `[server] cors_origins` is logged as
    a warning that names the origin and the fix, once per origin: the browser refuses it without a
    word to the page, and the access log alone showed a plain 204 for the preflight."""
    if "*" in allowed:
        return app
    from litestar.config.cors import CORSConfig

    cors = CORSConfig(allow_origins=sorted(allowed))  # the CORS middleware's own test: "https://*.example.com" allows subdomains
    warned: set[str] = set()

    async def checked(scope, receive, send):
        if scope["type"] == "http" and len(warned) < REFUSED_ORIGINS_LOGGED:
            headers = dict(scope.get("headers") or ())
            origin = headers.get(b"origin", b"").decode("latin-1")
            own = f"{scope.get('scheme', 'http')}://{headers.get(b'host', b'').decode('latin-1')}"
            if origin and origin != "null" and origin != own and origin not in warned and not cors.is_origin_allowed(origin):
                warned.add(origin)
                logging.getLogger("static_rag.server").warning(
                    "refused a browser request from origin %s (%s %s): add it to [server] cors_origins to let that site's pages search",
                    origin, scope.get("method"), scope.get("path"))
        return await app(scope, receive, send)

    return checked
