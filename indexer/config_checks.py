"""How one table of `index.toml` is checked: its keys, their types, ranges and choices.

`check_table` refuses unknown keys (suggesting the closest known one), missing required keys,
wrong types (a bool is not an int here), NaN and out-of-range numbers, and returns every key
with its default filled in. Messages name the key's full path (`spaces[0].chunk_tokens`).
"""

from __future__ import annotations

import difflib
import math
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from indexer.errors import ConfigError


@dataclass(frozen=True)
class Key:
    """What one config key accepts."""

    types: type | tuple[type, ...]
    required: bool = False
    default: Any = None
    min: float | None = None
    max: float | None = None
    choices: tuple | None = None
    item_type: type | None = None  # for lists
    hint: str = ""  # appended to "required key is missing": what to write


def in_choices(value: int | None, allowed: tuple[int, ...], default: int, where: str) -> int:
    if value is None:
        return default
    if value not in allowed:
        raise ConfigError(f"{where}: must be one of {', '.join(map(str, allowed))}; got {value}")
    return value


def in_range(value: int | None, default: int, low: int, high: int, where: str) -> int:
    if value is None:
        return default
    if not low <= value <= high:
        raise ConfigError(f"{where}: must be between {low} and {high}; got {value}")
    return value


def check_table(raw: dict, spec: dict[str, Key], where: str) -> dict:
    """Validate one table against its spec; return every key with defaults filled in."""
    prefix = f"{where}." if where else ""
    for key in raw:
        if key not in spec:
            hint = difflib.get_close_matches(key, spec, n=1)
            suggestion = f" (did you mean {hint[0]!r}?)" if hint else ""
            raise ConfigError(f"{prefix}{key}: unknown key{suggestion}; allowed: {', '.join(spec)}")
    values = {}
    for key, rule in spec.items():
        name = f"{prefix}{key}"
        if key not in raw:
            if rule.required:
                raise ConfigError(f"{name}: required key is missing{rule.hint}")
            values[key] = rule.default
            continue
        value = raw[key]
        # bool is an int in Python; a config that says `chunk_tokens = true` is a mistake.
        allowed = rule.types if isinstance(rule.types, tuple) else (rule.types,)
        if (isinstance(value, bool) and bool not in allowed) or not isinstance(value, allowed):
            raise ConfigError(f"{name}: must be {_type_name(rule.types)}; got {type(value).__name__} {value!r}")
        if rule.item_type is not None and not all(isinstance(v, rule.item_type) for v in value):
            raise ConfigError(f"{name}: every item must be {_type_name(rule.item_type)}")
        if isinstance(value, float) and not math.isfinite(value):  # NaN passes every comparison: it would switch a limit off
            raise ConfigError(f"{name}: must be a finite number; got {value}")
        if rule.choices is not None and value not in rule.choices:
            raise ConfigError(f"{name}: must be one of {', '.join(map(str, rule.choices))}; got {value!r}")
        if (rule.min is not None and value < rule.min) or (rule.max is not None and value > rule.max):
            raise ConfigError(f"{name}: must be between {rule.min:g} and {rule.max:g}; got {value}")
        if isinstance(value, str) and rule.required and not value.strip():
            raise ConfigError(f"{name}: must not be empty")
        values[key] = value
    return values


def _type_name(types: type | tuple[type, ...]) -> str:
    names = {str: "a string", int: "an integer", float: "a number", list: "a list", dict: "a table", bool: "true or false"}
    if isinstance(types, tuple):
        return " or ".join(names.get(t, t.__name__) for t in types)
    return names.get(types, types.__name__)


NO_HOST = "no host name"


def url_problem(url: str) -> str | None:
    """Why `url` is no URL a client can open — what parsing its host and port says ("Invalid IPv6
    URL", "Port out of range 0-65535"), or NO_HOST — or None. Its scheme is the caller's to check."""
    try:
        parts = urlsplit(url)
        host, _ = parts.hostname, parts.port  # reading the port parses it
    except ValueError as exc:
        return str(exc)
    return None if host else NO_HOST


def tables(value: list, where: str) -> list[dict]:
    """An array of tables (`[[sources]]`), each entry checked to be a table."""
    for i, item in enumerate(value):
        if not isinstance(item, dict):
            raise ConfigError(f"{where}[{i}]: must be a table ([[{where}]]), got {type(item).__name__}")
    return value
