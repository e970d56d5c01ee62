"""Telling the operator that a space answers by keywords, once, not once per search.

While a provider is down (or a key is missing) every dense and hybrid search of its space is
answered lexically. A warning per search buries everything else in the log at any real traffic,
so a space's first lexical answer is logged, later ones within `REPEAT_SECONDS` are only counted,
and the next one after that is logged with the count. The first query the provider embeds again
closes the episode with one line saying how many searches it covered. The metric
`static_rag_degraded_searches` counts every one.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from server.observe import DEGRADED

REPEAT_SECONDS = 60.0  # at most one warning per space in this long while it stays degraded


@dataclass
class _Episode:
    logged_at: float  # when its last warning was written
    reason: str  # the latest
    searches: int = 0  # answered lexically since it began
    unlogged: int = 0  # answered lexically since its last warning


class DegradedLog:
    def __init__(self, log: logging.Logger, repeat_seconds: float = REPEAT_SECONDS, clock: Callable[[], float] = time.monotonic):
        self._log, self._repeat, self._clock = log, repeat_seconds, clock
        self._episodes: dict[str, _Episode] = {}
        self._lock = threading.Lock()

    def unavailable(self, space_id: str, reason: str) -> None:
        """A space found unable to embed queries before any search (a missing key or model at
        load): warn now, and let its first lexical answers go unrepeated."""
        with self._lock:
            episode = self._episodes.setdefault(space_id, _Episode(0.0, reason))
            episode.logged_at, episode.reason, episode.unlogged = self._clock(), reason, 0
        self._log.warning("%s", reason)

    def answered_lexically(self, space_id: str, reason: str) -> None:
        DEGRADED.labels(space_id).inc()
        now = self._clock()
        with self._lock:
            episode = self._episodes.setdefault(space_id, _Episode(-math.inf, reason))  # a new one: never warned of yet
            episode.reason = reason
            episode.searches += 1
            if now - episode.logged_at < self._repeat:
                episode.unlogged += 1
                return
            quiet, episode.logged_at, episode.unlogged = episode.unlogged, now, 0
        since = f" ({quiet} more searches answered lexically since the last message)" if quiet else ""
        self._log.warning("answering lexically: %s%s", reason, since)  # the reason names the space

    def reason(self, space_id: str) -> str | None:
        """Why the space answers lexically now (in this worker), or None when it embeds queries."""
        episode = self._episodes.get(space_id)
        return episode.reason if episode is not None else None

    def embedded(self, space_id: str) -> None:
        """The space's provider embedded a query: end its episode, if it had one."""
        if not self._episodes:  # the usual case, without taking the lock
            return
        with self._lock:
            episode = self._episodes.pop(space_id, None)
        if episode is not None and episode.searches:
            self._log.info("space %s embeds queries again; %d searches were answered lexically meanwhile", space_id, episode.searches)
