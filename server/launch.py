"""Run the app under uvicorn: `uvicorn.run`, except that with several workers the listening
socket says it is TCP.

uvicorn binds the shared socket with proto 0; accepted connections inherit it, and asyncio
then leaves Nagle's algorithm on, so every keep-alive request after a connection's first
waited ~40 ms for the client's delayed ACK (uvicorn issue #3149). Measured with 2 workers:
GET /healthz p50 44 ms before, ~1 ms with TcpConfig. One worker is unaffected: asyncio binds
that socket itself.
"""

from __future__ import annotations

import socket
import sys

import uvicorn
from uvicorn.supervisors import Multiprocess

STARTUP_FAILURE = 3  # uvicorn's exit code when the server could not start


class TcpConfig(uvicorn.Config):
    """Module-level: worker processes unpickle it."""

    def bind_socket(self) -> socket.socket:
        sock = super().bind_socket()
        return socket.socket(sock.family, sock.type, socket.IPPROTO_TCP, fileno=sock.detach())


def run(**options) -> None:
    config = TcpConfig("server.app:create_app", factory=True, **options)
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
