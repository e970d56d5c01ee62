"""Run the app under uvicorn: `uvicorn.run`, except that with several workers the listening
socket says it is TCP.

uvicorn binds the shared socket with proto 0; accepted connections inherit it, and asyncio
then leaves Nagle's algorithm on, so every keep-alive request after a connection's first
waited ~40 ms for the client's delayed ACK (uvicorn issue #3149). Measured with 2 workers:
GET /healthz p50 44 ms before, ~1 ms with TcpConfig. One worker is unaffected: asyncio binds
that socket itself.
"""

from __future__ import annotations

import json
import socket
import sys

import h11
import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.supervisors import Multiprocess

STARTUP_FAILURE = 1  # the server could not start (uvicorn's own 3 is the delete guard's code in `index`)


HEAD_SECONDS = 10.0  # a request's line and headers must arrive within this, or the connection closes
LINGER_SECONDS = 2.0  # after a 400: how long the rest of the bad request is read and dropped
# How long an idle kept-alive connection stays open. It must outlast the clients' own idle expiry
# (httpx 5 s, Node's fetch 4 s, aiohttp 15 s, a load balancer's 60 s): uvicorn's 5 s closed
# connections a client was reusing at that same moment, and the request sent on one got a reset
# (1 ReadError in 200 reuses after 4.9–5.0 s idle with httpx, measured; 0 with 75 s). 75 s is
# nginx's default.
KEEP_ALIVE_SECONDS = 75


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol, with two things a public server needs:

    - a deadline for every request head: uvicorn arms its keep-alive timer only after a first
      response, so a client that opens connections and sends half a header line (slowloris)
      held them for as long as it liked (4,000 connections for 45 s, measured);
    - 400s (a garbage request line, a header past h11's 16 KB) as the API's JSON error body."""

    def connection_made(self, transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._head_deadline = None
        self._rejected = False
        self._arm_head_deadline()

    def data_received(self, data: bytes) -> None:
        if self._rejected:
            return  # the rest of a request already answered with a 400: read and dropped, so the close is not a reset
        super().data_received(data)
        if self._serving():
            self._cancel_head_deadline()  # the head is in: the request is the app's now
        elif self._head_deadline is None and not self.transport.is_closing():
            self._arm_head_deadline()  # the first bytes of a next request on a kept-alive connection

    def connection_lost(self, exc) -> None:
        self._cancel_head_deadline()
        super().connection_lost(exc)

    def _serving(self) -> bool:
        return self.cycle is not None and not self.cycle.response_complete

    def _arm_head_deadline(self) -> None:
        self._head_deadline = self.loop.call_later(HEAD_SECONDS, self._head_too_slow)

    def _cancel_head_deadline(self) -> None:
        if self._head_deadline is not None:
            self._head_deadline.cancel()
            self._head_deadline = None

    def _head_too_slow(self) -> None:
        self._head_deadline = None
        if not self._serving():
            self.transport.close()

    def send_400_response(self, msg: str) -> None:
        body = json.dumps({"code": "INVALID_REQUEST", "message": f"not a valid HTTP request ({msg.rstrip('.')})", "retryable": False}).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()), (b"connection", b"close")]
        for event in (h11.Response(status_code=400, headers=headers, reason=b"Bad Request"), h11.Data(data=body), h11.EndOfMessage()):
            self.transport.write(self.conn.send(event))
        # Closing with the client's bytes unread would send a reset, which can destroy the 400 on its
        # way: say we are done writing, drop what still comes, and close a moment later.
        self._rejected = True
        self._cancel_head_deadline()
        if self.transport.can_write_eof():
            self.transport.write_eof()
        self.loop.call_later(LINGER_SECONDS, self.transport.close)


class TcpConfig(uvicorn.Config):
    """Module-level: worker processes unpickle it."""

    def bind_socket(self) -> socket.socket:
        sock = super().bind_socket()
        return socket.socket(sock.family, sock.type, socket.IPPROTO_TCP, fileno=sock.detach())


def check_address(host: str, port: int) -> None:
    """Bind `host:port` as uvicorn will and let go: OSError when it cannot be had (in use, an
    address this machine does not have, a name that does not resolve). uvicorn would find out only
    after the app had started and loaded its models, and say it in a JSON log line."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn: a port in TIME_WAIT is free
        try:
            probe.bind((host, port))
        except socket.gaierror as exc:
            raise OSError(f"cannot resolve {host!r} ({exc.strerror})") from None


def run(**options) -> None:
    options.setdefault("timeout_keep_alive", KEEP_ALIVE_SECONDS)
    config = TcpConfig("server.app:create_app", factory=True, http=GuardedH11Protocol, **options)
    server = uvicorn.Server(config)
    try:
        if config.workers > 1:
            Multiprocess(config, sockets=[config.bind_socket()]).run()
        else:
            server.run()
    except KeyboardInterrupt:
        pass
    if config.workers == 1 and not server.started:
        sys.exit(STARTUP_FAILURE)
