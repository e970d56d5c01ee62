"""Refuse connections into private networks (SSRF guard) for every fetch, redirects included.

The check sits where the socket is opened: the host name is resolved once, every address it
resolves to is checked, and the connection goes only to an address that passed — so a DNS
answer that changes between check and connect (rebinding) cannot slip through. Refused: loopback,
private (RFC 1918, unique-local), link-local (169.254.0.0/16 incl. cloud metadata, fe80::/10),
carrier-grade NAT, multicast, unspecified and reserved addresses, IPv4-mapped IPv6 forms of
them too — unless an `allow_private_networks` CIDR of the source covers the address.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable

import httpcore
import httpx

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
CARRIER_GRADE_NAT = ipaddress.ip_network("100.64.0.0/10")


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
            raise AddressRefused(
                f"{host} resolves to {address}, a {reasons[address]} address; refused "
                "(list its network in the source's allow_private_networks to allow it)"
            )
        error: Exception | None = None
        for address in allowed:  # connect to a checked address, never to a fresh lookup
            try:
                return super().connect_tcp(address, port, timeout, local_address, socket_options)
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
