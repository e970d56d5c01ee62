"""Refuse connections into private networks (SSRF guard) for every fetch, redirects included.

The check sits where the socket is opened: the host name is resolved once, every address it
resolves to is checked, and the connection goes only to an address that passed — so a DNS
answer that changes between check and connect (rebinding) cannot slip through. Refused: loopback,
private (RFC 1918, unique-local), link-local (169.254.0.0/16 incl. cloud metadata, fe80::/10),
carrier-grade NAT, multicast, unspecified and reserved addresses, IPv4-mapped IPv6 forms of
them too — unless an `allow_private_networks` CIDR of the source covers the address.

Also the other limits every fetch keeps: a deadline for the whole response, and a byte cap.
"""

from __future__ import annotations

import ipaddress
import socket
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

import httpcore
import httpx

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
CARRIER_GRADE_NAT = ipaddress.ip_network("100.64.0.0/10")

ALLOW_HINT = "list its network in the source's allow_private_networks"  # `index extract` names its own flag instead


class AddressRefused(httpcore.ConnectError):
    """The host resolved to an address the source may not reach."""


def refused_reason(address: str, allowed: Iterable[Network] = ()) -> str | None:
    """Why `address` may not be reached, or None when it may."""
    ip = ipaddress.ip_address(address)
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if any(ip in network for network in allowed):
        return None
    for reason, hit in (
        ("loopback", ip.is_loopback),
        ("link-local", ip.is_link_local),
        ("multicast", ip.is_multicast),
        ("unspecified", ip.is_unspecified),
        ("private", ip.is_private or (ip.version == 4 and ip in CARRIER_GRADE_NAT)),
        ("reserved", ip.is_reserved),
    ):
        if hit:
            return reason
    return None


_deadline = threading.local()  # sync httpx reads and writes in the thread that made the request


@contextmanager
def total_deadline(seconds: float) -> Iterator[None]:
    """Every connect, read and write of the requests made in this block (redirects and pooled
    connections included) must finish within `seconds` in all, counted from the block's first
    network operation (waiting for a per-host slot does not count): httpx's own timeouts are per
    operation, so a server dripping a byte a second would otherwise never time out."""
    outer = (getattr(_deadline, "budget", None), getattr(_deadline, "at", None))
    _deadline.budget, _deadline.at = seconds, None
    try:
        yield
    finally:
        _deadline.budget, _deadline.at = outer


def _within(timeout: float | None, error: type[Exception] = httpcore.ReadTimeout) -> float | None:
    budget = getattr(_deadline, "budget", None)
    if budget is None:
        return timeout
    if _deadline.at is None:
        _deadline.at = time.monotonic() + budget
    left = _deadline.at - time.monotonic()
    if left <= 0:
        raise error(f"more than {budget:g} s in all")
    return left if timeout is None else min(timeout, left)


class _DeadlineStream(httpcore.NetworkStream):
    """A connection whose every operation is cut to what is left of the thread's total deadline."""

    def __init__(self, inner: httpcore.NetworkStream):
        self.inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self.inner.read(max_bytes, _within(timeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self.inner.write(buffer, _within(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self.inner.close()

    def start_tls(self, ssl_context, server_hostname=None, timeout=None) -> "_DeadlineStream":
        return _DeadlineStream(self.inner.start_tls(ssl_context, server_hostname, _within(timeout, httpcore.ConnectTimeout)))

    def get_extra_info(self, info: str):
        return self.inner.get_extra_info(info)


class _GuardedBackend(httpcore.SyncBackend):
    def __init__(self, allowed: tuple[Network, ...]):
        super().__init__()
        self.allowed = allowed

    def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except socket.gaierror as exc:
            raise httpcore.ConnectError(f"cannot resolve {host}: {exc}") from None
        addresses = list(dict.fromkeys(info[4][0] for info in infos))
        reasons = {address: refused_reason(address, self.allowed) for address in addresses}
        allowed = [address for address in addresses if reasons[address] is None]
        if not allowed:
            address = addresses[0]
            raise AddressRefused(f"{host} resolves to {address}, a {reasons[address]} address; refused ({ALLOW_HINT} to allow it)")
        error: Exception | None = None
        for address in allowed:  # connect to a checked address, never to a fresh lookup
            try:
                stream = super().connect_tcp(address, port, _within(timeout, httpcore.ConnectTimeout), local_address, socket_options)
                return _DeadlineStream(stream)
            except httpcore.ConnectError as exc:
                error = exc
        raise error


def guarded_transport(allowed: Iterable[str] = ()) -> httpx.HTTPTransport:
    """An httpx transport whose every connection (each redirect hop too) passes the guard.
    Environment proxies are ignored: through a proxy the checked address would not be the target."""
    transport = httpx.HTTPTransport(trust_env=False)
    if not isinstance(getattr(transport, "_pool", None), httpcore.ConnectionPool):
        raise RuntimeError("this httpx version keeps its connection pool elsewhere; the SSRF guard cannot be installed")
    networks = tuple(ipaddress.ip_network(cidr, strict=False) for cidr in allowed)
    transport._pool = httpcore.ConnectionPool(ssl_context=httpx.create_ssl_context(), network_backend=_GuardedBackend(networks))
    return transport


def refused(exc: BaseException) -> bool:
    """Whether an httpx error was the guard refusing an address."""
    while exc is not None:
        if isinstance(exc, AddressRefused):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


MAX_BYTES = 10 * 1024 * 1024  # per response, enforced while streaming (the seed's 10 MB)


class TooLarge(Exception):
    pass


def read_capped(response: httpx.Response, cap: int = MAX_BYTES) -> bytes:
    """The body, or TooLarge as soon as it passes `cap` bytes (a declared Content-Length is checked first)."""
    declared = response.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > cap:
        raise TooLarge
    chunks, size = [], 0
    for chunk in response.iter_bytes():
        size += len(chunk)
        if size > cap:
            raise TooLarge
        chunks.append(chunk)
    return b"".join(chunks)
