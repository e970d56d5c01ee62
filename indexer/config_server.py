"""The `[server]` table of `index.toml`: who may search (CORS origins, API keys) and the limits
`index serve` keeps (rates, sizes, the default space, what to do when a query cannot be embedded)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from indexer.config_checks import NO_HOST, Key, check_table, tables, url_problem
from indexer.errors import ConfigError


@dataclass(frozen=True)
class ApiKey:
    """A client allowed to search: its secret comes from the environment variable `env`; with
    `sources`, it sees only those sources' documents."""

    name: str
    env: str
    sources: tuple[str, ...] | None = None
    # The key's own rate budget (None: [server] key_requests_per_minute / key_burst). `limit_per =
    # "address"` gives each address using the key its own budget instead: a key in a public page.
    requests_per_minute: int | None = None
    burst: int | None = None
    limit_per: str = "key"


@dataclass(frozen=True)
class ServerConfig:
    cors_origins: tuple[str, ...] = ()  # browser origins allowed to call the API ("*" for any)
    api_keys: tuple[ApiKey, ...] = ()  # none: the API is open
    requests_per_minute: int = 120  # per address without a key (a browser); 0 turns the limit off
    burst: int = 20  # requests a client may send at once before the per-minute rate applies
    key_requests_per_minute: int = 6000  # per API key (a chatbot backend is one client for all its visitors)
    key_burst: int = 200
    max_query_chars: int = 2000
    max_top_k: int = 50
    max_offset: int = 200  # deepest page start; deep paging costs a wider candidate pool per request
    trust_forwarded_for: bool = False  # behind a reverse proxy: the client is the X-Forwarded-For address
    default_space: str | None = None  # the space a request without `space` searches; None: the one rebuilt last
    on_embedding_failure: str = "lexical"  # query embedding failed: answer lexically ("lexical") or 503 ("error")


SERVER_KEYS = {
    "cors_origins": Key(list, item_type=str, default=[]),
    "api_keys": Key(list, default=[]),
    "requests_per_minute": Key(int, default=120, min=0, max=1_000_000),
    "burst": Key(int, default=20, min=1, max=10_000),
    "key_requests_per_minute": Key(int, default=6000, min=0, max=1_000_000),
    "key_burst": Key(int, default=200, min=1, max=100_000),
    "max_query_chars": Key(int, default=2000, min=1, max=100_000),
    "max_top_k": Key(int, default=50, min=1, max=1000),
    "max_offset": Key(int, default=200, min=0, max=10_000),
    "trust_forwarded_for": Key(bool, default=False),
    "default_space": Key(str),
    "on_embedding_failure": Key(str, default="lexical", choices=("lexical", "error")),
}
API_KEY_KEYS = {
    "name": Key(str, required=True),
    "env": Key(str, required=True),
    "sources": Key(list, item_type=str),
    "requests_per_minute": Key(int, min=0, max=1_000_000),
    "burst": Key(int, min=1, max=100_000),
    "limit_per": Key(str, default="key", choices=("key", "address")),
}

ORIGIN = re.compile(r"https?://[^/\s?#]+", re.IGNORECASE)
DEFAULT_PORTS = {"http": 80, "https": 443}


def _origin(origin: str, where: str) -> str:
    """The origin as a browser sends it: scheme://host[:port], nothing more, in lower case and
    without the scheme's default port. An entry written otherwise ("example.com",
    "https://example.com/", "https://Example.com:443") never matched, and the widget was refused."""
    if origin == "*":
        return origin
    if origin == "null":
        raise ConfigError(f"{where}: 'null' is what sandboxed frames and local files send, and any page can send it; "
                          "list the site's own origin (e.g. 'https://help.example.com')")
    parsed = origin if "://" in origin else f"https://{origin}"
    problem = url_problem(parsed)
    if problem not in (None, NO_HOST):
        raise ConfigError(f"{where}: not a valid origin ({problem}); got {origin!r}")
    parts = urlsplit(parsed)
    if not ORIGIN.fullmatch(origin):
        hint = f"{parts.scheme}://{parts.netloc}" if parts.netloc else "https://help.example.com"
        raise ConfigError(f"{where}: an origin is scheme://host[:port] as a browser sends it, without a path; got {origin!r} (e.g. {hint!r}, or \"*\" for any)")
    if problem:
        raise ConfigError(f"{where}: not a valid origin ({problem}); got {origin!r}")
    host, port, scheme = parts.hostname, parts.port, parts.scheme.lower()
    shown = f"[{host}]" if ":" in host else host
    return f"{scheme}://{shown}" if port in (None, DEFAULT_PORTS[scheme]) else f"{scheme}://{shown}:{port}"


def parse_server(raw: dict, source_names: set[str]) -> ServerConfig:
    values = check_table(raw, SERVER_KEYS, "server")
    keys = []
    for i, item in enumerate(tables(values["api_keys"], "server.api_keys")):
        key = check_table(item, API_KEY_KEYS, f"server.api_keys[{i}]")
        unknown = sorted(set(key["sources"] or ()) - source_names)
        if unknown:
            raise ConfigError(f"server.api_keys[{i}].sources: no source named {', '.join(map(repr, unknown))}; sources are {', '.join(sorted(source_names))}")
        keys.append(ApiKey(key["name"], key["env"], tuple(key["sources"]) if key["sources"] is not None else None,
                           key["requests_per_minute"], key["burst"], key["limit_per"]))
    names = [k.name for k in keys]
    if len(set(names)) != len(names):
        raise ConfigError("server.api_keys: names must be unique")
    origins = tuple(_origin(origin, f"server.cors_origins[{i}]") for i, origin in enumerate(values["cors_origins"]))
    # every key of the table is a field of the same name
    return ServerConfig(**{**values, "cors_origins": origins, "api_keys": tuple(keys)})
