"""`index serve --workers N` shares one listening socket; connections accepted on it must get
TCP_NODELAY, or every keep-alive request after the first waits ~40 ms on a delayed ACK."""

import asyncio
import socket

from server.launch import TcpConfig


def accepted_nodelay(listener: socket.socket) -> int:
    """Accept one connection on `listener` the way a worker's event loop does; its TCP_NODELAY."""

    async def main():
        seen = asyncio.get_running_loop().create_future()

        class Probe(asyncio.Protocol):
            def connection_made(self, transport):
                sock = transport.get_extra_info("socket")
                seen.set_result(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
                transport.close()

        server = await asyncio.get_running_loop().create_server(Probe, sock=listener)
        _, writer = await asyncio.open_connection(*listener.getsockname()[:2])
        result = await asyncio.wait_for(seen, 5)
        writer.close()
        server.close()
        return result

    return asyncio.run(main())


def test_connections_on_the_shared_worker_socket_have_nagle_off():
    listener = TcpConfig("server.app:create_app", factory=True, host="127.0.0.1", port=0, workers=2).bind_socket()
    assert listener.proto == socket.IPPROTO_TCP
    assert accepted_nodelay(listener) != 0
