"""The HTTP API: `create_app(settings)` builds a Litestar app over the current generation.

    index serve --artifacts artifacts            # or: litestar --app server.app:create_app run
"""

from __future__ import annotations

import difflib
import logging
import os
import re
from contextlib import asynccontextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import AsyncIterator, get_args, get_type_hints
from urllib.parse import unquote
from zoneinfo import available_timezones

import msgspec
from litestar import Controller, Litestar, Request, Response, get, post
from litestar.config.cors import CORSConfig
from litestar.datastructures import State
from litestar.di import NamedDependency, Provide
from litestar.exceptions import HTTPException, ValidationException
from litestar.openapi import OpenAPIConfig, ResponseSpec
from litestar.openapi.spec import OpenAPIType, Schema
from litestar.params import FromPath, JSONBody

from indexer import __version__
from indexer.errors import ArtifactError, StaticRagError
from server.guard import Guard
from server.apidocs import render_plugins
from server.observe import exposition, json_logging, observe, warn_refused_origins
from server.bodies import ErrorBody, Filters, SearchRequest, SearchResponse, search_response
from server.search import SearchFilters
from server.service import TEXT_PATTERN, SearchService, ServiceError, Settings
from server.timefilter import UPDATED_WITHIN_PATTERN, intersect, updated_range, zone

log = logging.getLogger("static_rag.server")
Service = NamedDependency[SearchService]


def _errors(*statuses: int) -> dict[int, ResponseSpec]:
    """OpenAPI entries for the JSON errors a route can answer with (the guard's 401 and 429 on every one)."""
    meaning = {
        400: "The request is invalid (`code` says how)", 401: "An API key is required or wrong", 403: "The API key may not search that source",
        404: "Not in the generation being served (a document, a chunk, or the space asked for)", 413: "The body is over 64 KB", 429: "Rate limited; see Retry-After",
        503: "No generation is loaded, or the query cannot be embedded now (retryable)",
    }
    return {s: ResponseSpec(data_container=ErrorBody, description=meaning[s]) for s in sorted({*statuses, 401, 429})}


def _raw_tail(request: Request, prefix: str) -> str:
    """The id after `prefix`, from the undecoded path: ids contain `/` and `//` that routing would fold."""
    raw = request.scope.get("raw_path") or request.scope["path"].encode()
    path = raw.decode("latin-1").split("?", 1)[0]
    return unquote(path[path.index(prefix) + len(prefix) :])


def _scope(request: Request) -> tuple[str, ...] | None:
    caller = request.scope.get("state", {}).get("caller")
    return caller.sources if caller is not None else None


def _visible(request: Request, rows: list[dict]) -> list[dict]:
    """Rows of sources the caller may see: another site's document is simply not found."""
    scope = _scope(request)
    return rows if scope is None else [r for r in rows if r.get("source") in scope]


class SearchController(Controller):
    path = "/v1"

    @post("/search", sync_to_thread=True, status_code=200, summary="Hybrid search over the current generation", responses=_errors(400, 403, 404, 413, 503))
    def search(self, request: Request, data: JSONBody[SearchRequest], service: Service) -> SearchResponse:
        f = data.filters or Filters()
        scope = _scope(request)
        if scope is not None and f.source is not None and f.source not in scope:
            raise ServiceError("SOURCE_FORBIDDEN", f"this API key may search {', '.join(scope)}; not {f.source!r}", 403)
        after, before = f.updated_after, f.updated_before
        now, tz = datetime.now(timezone.utc), zone(data.timezone or f.timezone)
        if f.updated_within is not None:
            after, before = intersect(after, before, updated_range(f.updated_within, now, tz))
        result = service.search(
            data.query,
            space_id=data.space,
            top_k=data.top_k,
            offset=data.offset,
            mode=data.mode,
            filters=SearchFilters(f.source, f.source_type, f.doc_id, after, before, sources=scope),
            max_chunks_per_doc=data.max_chunks_per_doc,
            min_score=data.min_score,
            recency_weight=data.recency_weight,
            parse_time=data.parse_time,
            tz=tz,
        )
        request.state.search = {
            "mode": result.mode, "generation": result.generation, "hits": len(result.hits), "candidates": result.candidates,
            "took_ms": round(result.took_ms, 2), "query_chars": len(data.query), "answerable": result.answerable,
            **({"degraded": "lexical"} if result.degraded_reason else {}),
            **({"fallback": result.fallback.instead_of} if result.fallback else {}),
        }
        return search_response(result, data.offset)

    @get("/info", sync_to_thread=False, summary="The generation being served", responses=_errors(503))
    def info(self, request: Request, service: Service) -> dict:
        refused = [{"generation": g, "error": e} for g, e in service.refused.items()]
        generation = service.current()
        default = generation.default_space(service.settings.server.default_space).space_id
        info = generation.info()
        for space in info["spaces"]:  # a missing key or model, or an outage this worker has seen and not yet seen end
            space["degraded_reason"] = service.degraded.reason(space["space_id"])
        scope = _scope(request)
        if scope is not None:  # a scoped key learns its own sources only
            info["sources"] = [s for s in info["sources"] if s in scope]
        return {**info, "default_space": default, "version": __version__, **({"refused": refused} if refused else {})}

    @get("/documents/{doc_id:path}", sync_to_thread=True, summary="One document, with its full text", responses=_errors(404, 503))
    def document(self, request: Request, service: Service) -> dict:
        doc_id = _raw_tail(request, "/v1/documents/")
        rows = _visible(request, service.query("document_by_id", {"doc_id": doc_id}))
        if not rows:
            raise ServiceError("DOCUMENT_NOT_FOUND", f"no document {doc_id!r} in this generation", 404)
        row = rows[0]
        row["metadata"] = msgspec.json.decode(row["metadata"]) if row["metadata"] else {}
        return row

    @get("/chunks/{chunk_id:str}", sync_to_thread=True, summary="One chunk, with its citation fields", responses=_errors(404, 503))
    def chunk(self, request: Request, chunk_id: FromPath[str], service: Service) -> dict:
        rows = _visible(request, service.query("chunk_by_id", {"chunk_id": chunk_id}))
        if not rows:
            raise ServiceError("CHUNK_NOT_FOUND", f"no chunk {chunk_id!r} in this generation", 404)
        row = rows[0]
        row["start"], row["end"] = row.pop("start_offset"), row.pop("end_offset")
        return row


@get("/healthz", sync_to_thread=False, summary="The process is up")
def healthz() -> dict:
    return {"status": "ok"}


STATIC = Path(__file__).parent / "static"
PAGE_HEADERS = {"content-security-policy": "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'", "x-content-type-options": "nosniff"}


@get("/", sync_to_thread=False, summary="A demo search page", include_in_schema=False)
def demo_page() -> Response:
    return Response((STATIC / "index.html").read_bytes(), media_type="text/html; charset=utf-8", headers=PAGE_HEADERS)


@get("/widget.js", sync_to_thread=False, summary="The embeddable search widget", include_in_schema=False)
def widget() -> Response:
    return Response((STATIC / "widget.js").read_bytes(), media_type="text/javascript; charset=utf-8",
                    headers={"cache-control": "public, max-age=300", "x-content-type-options": "nosniff"})


@get("/metrics", sync_to_thread=False, summary="Prometheus metrics", include_in_schema=False)
def metrics() -> Response:
    body, content_type = exposition()
    return Response(body, media_type=content_type)


@get("/readyz", sync_to_thread=False, summary="A generation is loaded and searchable", responses=_errors(503))
def readyz(service: Service) -> Response:
    try:
        generation = service.current()
    except ServiceError as exc:
        return Response(ErrorBody(exc.code, exc.message, True), status_code=503)
    return Response({"status": "ready", "generation": generation.id})


def _error_response(request: Request, exc: Exception) -> Response:
    """Every error leaves as JSON `{code, message, retryable}`: one place maps our codes to statuses."""
    if isinstance(exc, ServiceError):
        return Response(ErrorBody(exc.code, exc.message, exc.retryable), status_code=exc.status, headers=exc.headers)
    if isinstance(exc, ValidationException):
        details = "; ".join(f"{_BODY_KEYS.get(e.get('key') or 'data', e.get('key'))}: {_explain(e.get('key'), str(e.get('message')))}"
                            for e in (exc.extra or []) if isinstance(e, dict))
        return Response(ErrorBody("INVALID_REQUEST", details or exc.detail), status_code=400)
    if isinstance(exc, HTTPException):
        codes = {404: "NOT_FOUND", 405: "METHOD_NOT_ALLOWED", 413: "REQUEST_TOO_LARGE", 415: "UNSUPPORTED_MEDIA_TYPE"}
        code = codes.get(exc.status_code, "INVALID_REQUEST" if exc.status_code < 500 else "SERVER_ERROR")
        detail = _not_json(exc.detail)
        if exc.status_code == 405 and request.url.path.rstrip("/") == "/v1/search":  # tried in a browser's address bar
            detail = f"search with POST /v1/search and a JSON body such as {EXAMPLE_BODY}; {request.method} is not supported"
        return Response(ErrorBody(code, detail), status_code=exc.status_code, headers=exc.headers)
    if isinstance(exc, (ValueError, RecursionError)) and _raised_while_parsing(exc):  # e.g. a timestamp past year 9999
        return Response(ErrorBody("INVALID_REQUEST", f"body: {_parse_problem(exc)}"), status_code=400)
    if isinstance(exc, StaticRagError):
        log.error("generation error: %s", exc)
        return Response(ErrorBody("GENERATION_UNAVAILABLE", str(exc), True), status_code=503)
    log.exception("unhandled error on %s %s", request.method, request.url.path)
    return Response(ErrorBody("SERVER_ERROR", "internal error; see the server log"), status_code=500)


EXAMPLE_BODY = '{"query": "how do I reset my password?"}'
REQUEST_FIELDS = {"data": SearchRequest, "filters": Filters}  # the decoder's key for each body object
_BODY_KEYS = {"data": "body"}  # the decoder calls the whole body `data`
UNKNOWN_FIELD = re.compile(r"unknown field `([^`]*)`")
# What other search APIs call our request's fields: a caller porting a client sends these first.
FIELD_ALIASES = {
    "q": "query", "text": "query", "question": "query", "search": "query", "prompt": "query", "input": "query", "query_text": "query",
    "k": "top_k", "n": "top_k", "limit": "top_k", "size": "top_k", "count": "top_k", "num_results": "top_k", "max_results": "top_k",
    "from": "offset", "skip": "offset", "start": "offset", "filter": "filters", "where": "filters", "search_mode": "mode",
}


def _explain(key: str | None, message: str) -> str:
    """The decoder's message, plus what the caller most likely meant: the field name closest to an
    unknown one and the fields allowed there, or the values a choice allows."""
    if key == "data" and message == "'data'":  # the decoder found no body at all
        return f"empty; send a JSON object such as {EXAMPLE_BODY}"
    unknown = UNKNOWN_FIELD.search(message)
    if unknown and key in REQUEST_FIELDS:
        fields = REQUEST_FIELDS[key].__struct_fields__
        name = unknown.group(1).lower()
        close = [FIELD_ALIASES[name]] if key == "data" and name in FIELD_ALIASES else difflib.get_close_matches(name, fields, n=1, cutoff=0.6)
        if not close and key == "data" and name.rstrip("s") in Filters.__struct_fields__:  # "source", "sources": a filter
            close = [f"filters.{name.rstrip('s')}"]
        hint = f"; did you mean `{close[0]}`?" if close else ";"
        return f"{message}{hint} Allowed: {', '.join(fields)}"
    if message == "Invalid RFC3339 encoded datetime":  # "2026-11-20" or "last week" where a moment is wanted
        return (f"{message}; send a date and time such as 2026-11-20T00:00:00Z (without an offset: UTC), "
                "or a phrase such as \"last week\" or \"7d\" in filters.updated_within")
    if message.startswith("Invalid enum value") and key:
        field = key.rsplit(".", 1)[-1]  # "filters.source_type" names a field of Filters
        choices = next((_choices(t) for struct in REQUEST_FIELDS.values() for name, t in get_type_hints(struct).items() if name == field and _choices(t)), ())
        if choices and all(isinstance(c, str) for c in choices):
            return f"{message}; one of {', '.join(choices)}"
    return message


def _choices(annotation) -> tuple:
    """The values a Literal field (optional or not) allows; () for any other type."""
    args = get_args(annotation)
    if args and all(isinstance(a, str) for a in args):
        return args
    return next((get_args(a) for a in args if get_args(a) and all(isinstance(v, str) for v in get_args(a))), ())


def _raised_while_parsing(exc: BaseException) -> bool:
    """Whether `exc` came out of turning the request into handler arguments: the decoder raises a
    few plain errors where it means a bad request — ValueError for a date out of range,
    UnicodeDecodeError for a body that is not UTF-8, RecursionError for JSON nested too deeply."""
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_name in ("parse_values_from_connection_kwargs", "json_extractor"):
            return True
        tb = tb.tb_next
    return False


NOT_UTF8 = "not UTF-8; send JSON encoded as UTF-8"


def _not_json(detail: str) -> str:
    """The decoder's complaint about a body that is no JSON (a form post), with what to send instead."""
    if detail.startswith("Invalid UTF-8"):  # msgspec 0.23 says so itself; before, it raised UnicodeDecodeError (_parse_problem)
        return f"body: {NOT_UTF8}"
    if detail.startswith("JSON is malformed"):
        return f"{detail}; send a JSON object such as {EXAMPLE_BODY} with Content-Type: application/json"
    if detail == "Input data was truncated":  # msgspec says so of a lone \ud800-\udbff escape too, which is not cut short
        return "body: JSON cut short, or a \\uD800-\\uDBFF escape without its second half (a string cut inside an emoji?)"
    return detail


def _parse_problem(exc: BaseException) -> str:
    if isinstance(exc, UnicodeDecodeError):
        return NOT_UTF8
    if isinstance(exc, RecursionError):
        return "JSON nested too deeply"
    return str(exc)


def settings_from_env() -> Settings:
    """STATIC_RAG_CONFIG (its [server] table and `artifacts`) and STATIC_RAG_ARTIFACTS (which wins):
    how `index serve --workers N` hands its settings to each worker process."""
    server, artifacts = None, os.environ.get("STATIC_RAG_ARTIFACTS")
    if os.environ.get("STATIC_RAG_CONFIG"):
        from indexer.config import load_config

        config = load_config(os.environ["STATIC_RAG_CONFIG"])
        server, artifacts = config.server, artifacts or config.artifacts
    return Settings(artifacts=Path(artifacts or "artifacts"), **({"server": server} if server else {}))


def create_app(settings: Settings | None = None) -> Litestar:
    """A new app with no module-level state; the generation opens in the lifespan and lives on `app.state`."""
    settings = settings or settings_from_env()
    guard = Guard(settings.server)
    if os.environ.get("STATIC_RAG_JSON_LOGS") == "1":  # set by `index serve` for its workers
        json_logging(os.environ.get("STATIC_RAG_ACCESS_LOG", "1") == "1")

    async def admit(request: Request) -> None:  # no I/O: runs on the event loop, not a worker thread
        client = request.client.host if request.client else None
        request.state.caller = guard.admit(request.url.path, {k.lower(): v for k, v in request.headers.items()}, client)

    @asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        logging.getLogger("faiss.loader").setLevel(logging.WARNING)  # it logs every CPU-feature probe
        import faiss

        # One OpenMP thread per worker: a 2-thread single-query search stalls when the other core is busy.
        faiss.omp_set_num_threads(1)
        service = SearchService(settings)
        try:
            _document_sources(app, service.load(fall_back=True).sources)
        except ArtifactError as exc:
            log.warning("not ready: %s", exc)
        service.watch()  # a newly published generation is swapped in without a restart
        app.state.service = service
        try:
            yield
        finally:
            service.close()

    def provide_service(state: State) -> SearchService:
        return state.service

    app = Litestar(
        route_handlers=[SearchController, healthz, readyz, metrics, demo_page, widget],
        lifespan=[lifespan],
        dependencies={"service": Provide(provide_service, sync_to_thread=False)},
        exception_handlers={Exception: _error_response},
        openapi_config=OpenAPIConfig(title="static-rag search API", version=__version__, path="/schema", render_plugins=render_plugins()),
        request_max_body_size=64 * 1024,
        before_request=admit,
        cors_config=CORSConfig(
            allow_origins=list(settings.server.cors_origins), allow_methods=["GET", "POST"], allow_headers=["authorization", "content-type"],
            expose_headers=["retry-after"],
        ) if settings.server.cors_origins else None,
    )
    app.asgi_handler = observe(warn_refused_origins(app.asgi_handler, frozenset(settings.server.cors_origins)))  # outermost: refusals before any handler count too
    _document_limits(app, settings.server)
    return app


def _document_sources(app: Litestar, sources: frozenset[str]) -> None:
    """The sources of the generation served at start, as the schema's choices for filters.source
    (a name the index does not have is a 400 UNKNOWN_SOURCE; GET /v1/info lists the current ones).
    Written before the first request, from the generation the service just loaded."""
    field = app.openapi_schema.components.schemas["Filters"].properties["source"]
    (field.one_of[0] if field.one_of else field).enum = sorted(sources) or None


def _document_limits(app: Litestar, server) -> None:
    """Write this deployment's limits into the OpenAPI schema, so a client (or a fuzzer) built from
    /schema never sends a request the server will refuse for size."""
    schemas = app.openapi_schema.components.schemas
    request, filters = schemas["SearchRequest"].properties, schemas["Filters"].properties
    request["query"].min_length, request["query"].max_length, request["query"].pattern = 1, server.max_query_chars, TEXT_PATTERN
    request["query"].description = (f"The question, as the visitor asked it: up to {server.max_query_chars} characters, at least one of them "
                                    "not a blank, a control or a format character such as a zero-width space (EMPTY_QUERY otherwise)")
    request["top_k"].maximum = server.max_top_k
    request["offset"].maximum = server.max_offset
    string_of = lambda schema: schema.one_of[0] if schema.one_of else schema  # noqa: E731 (an optional field is oneOf [string, null])
    string_of(filters["updated_within"]).pattern = UPDATED_WITHIN_PATTERN
    string_of(filters["timezone"]).enum = sorted(available_timezones())
    string_of(request["timezone"]).enum = sorted(available_timezones())
    # The decoder is lenient with booleans, as with timestamps: it also takes 0 / 1 and their strings.
    flag = request["parse_time"]
    request["parse_time"] = Schema(one_of=[Schema(type=OpenAPIType.BOOLEAN), Schema(type=OpenAPIType.INTEGER, enum=[0, 1]),
                                           Schema(type=OpenAPIType.STRING, enum=["true", "false", "0", "1"])],
                                   description=flag.description, default=False)
    for bound in ("updated_after", "updated_before"):  # the decoder also takes Unix seconds, as JSON numbers
        filters[bound].one_of.append(Schema(type=OpenAPIType.NUMBER, minimum=-62_135_596_800, maximum=253_402_300_799, description="Unix time in seconds (years 1 to 9999)"))
    for name in ("SearchRequest", "Filters"):  # unknown fields are refused (a typo must not pass silently)
        schemas[name].additional_properties = False
