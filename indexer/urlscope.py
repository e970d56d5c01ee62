"""Which pages of a site a web source indexes: its `include` and `exclude` URL patterns.

A pattern that starts with `/` or `*` is matched against a URL's path (and its `?query`); one that
starts with `http://` or `https://` against the whole URL. `*` stands for any characters, `/`
included; a pattern without `*` matches every URL that begins with it ("/help/" is the help
centre and everything under it). A URL is in scope when it matches some `include` pattern (or
there are none) and no `exclude` pattern.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit


def compile_pattern(pattern: str) -> re.Pattern:
    """The pattern as a regular expression; ValueError saying how to write one."""
    if not pattern.startswith(("/", "*", "http://", "https://")):
        raise ValueError(f"a pattern starts with / (a path: \"/help/\"), * (\"*/print\") or http(s)://; got {pattern!r}")
    body = ".*".join(re.escape(part) for part in pattern.split("*"))
    return re.compile(body if "*" in pattern else body + ".*", re.DOTALL)


class UrlScope:
    def __init__(self, include: tuple[str, ...] = (), exclude: tuple[str, ...] = ()):
        self.include = [(p.startswith("http"), compile_pattern(p)) for p in include]
        self.exclude = [(p.startswith("http"), compile_pattern(p)) for p in exclude]

    def __bool__(self) -> bool:
        """Whether any pattern narrows the scope at all."""
        return bool(self.include or self.exclude)

    def __call__(self, url: str) -> bool:
        parts = urlsplit(url)
        path = parts.path + (f"?{parts.query}" if parts.query else "")

        def matches(patterns) -> bool:
            return any(pattern.fullmatch(url if whole else path) for whole, pattern in patterns)

        return (not self.include or matches(self.include)) and not matches(self.exclude)
