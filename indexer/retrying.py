"""Waiting before a retry, shared by every HTTP client of the product (embedding providers, web pages):
what the server asked for (Retry-After and its relatives), else exponential backoff with full jitter."""

from __future__ import annotations

import random
import re
import time
from email.utils import parsedate_to_datetime

BACKOFF_BASE_SECONDS = 0.5
BACKOFF_CAP_SECONDS = 30.0


def backoff(attempt: int, retry_after: float | None) -> float:
    """The server's own hint when it gives one; else exponential backoff with full jitter."""
    if retry_after is not None:
        return min(max(retry_after, 0.0), BACKOFF_CAP_SECONDS * 2)
    return random.uniform(0, min(BACKOFF_CAP_SECONDS, BACKOFF_BASE_SECONDS * 2**attempt))


DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h)")


def retry_after_seconds(headers) -> float | None:
    """`Retry-After` (seconds or an HTTP date), `retry-after-ms`, or OpenAI's `x-ratelimit-reset-*` ("6m0s", "20ms")."""
    if headers is None:
        return None
    if value := headers.get("retry-after-ms"):
        try:
            return float(value) / 1000
        except ValueError:
            pass
    if value := headers.get("retry-after"):
        try:
            return float(value)
        except ValueError:
            try:
                return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
            except (TypeError, ValueError):
                pass
    resets = [parse_duration(headers.get(h)) for h in ("x-ratelimit-reset-requests", "x-ratelimit-reset-tokens")]
    resets = [r for r in resets if r is not None]
    return max(resets) if resets else None


def parse_duration(value: str | None) -> float | None:
    if not value:
        return None
    parts = DURATION_PART.findall(value)
    if not parts:
        return None
    scale = {"ms": 0.001, "s": 1, "m": 60, "h": 3600}
    return sum(float(n) * scale[u] for n, u in parts)
