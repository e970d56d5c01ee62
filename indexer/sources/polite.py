"""A crawl's manners: each host gets at most so many requests at once, and a pause between the
starts of two (the source's delay, or the site's robots.txt Crawl-delay up to MAX_CRAWL_DELAY)."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

import httpx

MAX_CRAWL_DELAY = 10.0  # seconds; a larger robots.txt Crawl-delay is capped


class PoliteTransport(httpx.BaseTransport):
    """Every request, redirect hops and robots.txt included, waits for a free slot of its host
    (at most `per_host` open at once) and starts at least `delay` seconds after the previous
    request to that host started. A slot is held until the response body is closed."""

    def __init__(self, inner: httpx.BaseTransport, per_host: int, delay: float):
        self.inner, self.per_host, self.delay = inner, per_host, delay
        self.lock = threading.Lock()
        self.hosts: dict[str, _Host] = {}

    def host(self, name: str) -> _Host:
        with self.lock:
            if name not in self.hosts:
                self.hosts[name] = _Host(threading.BoundedSemaphore(self.per_host), self.delay)
            return self.hosts[name]

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        host = self.host(request.url.netloc.decode("ascii"))
        host.slots.acquire()
        try:
            with host.lock:
                wait = host.next_start - time.monotonic()
                if wait > 0:
                    time.sleep(wait)
                host.next_start = time.monotonic() + host.delay
            response = self.inner.handle_request(request)
        except BaseException:
            host.slots.release()
            raise
        response.stream = _Releasing(response.stream, host.slots.release)
        return response

    def close(self) -> None:
        self.inner.close()


@dataclass
class _Host:
    slots: threading.BoundedSemaphore
    delay: float
    next_start: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock)


class _Releasing(httpx.SyncByteStream):
    def __init__(self, stream, release):
        self.stream, self.release = stream, release

    def __iter__(self):
        yield from self.stream

    def close(self) -> None:
        try:
            self.stream.close()
        finally:
            release, self.release = self.release, None
            if release is not None:
                release()
