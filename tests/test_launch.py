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


def test_serve_on_a_port_in_use_says_so_before_it_starts(tmp_path):
    """Before, the banner said "Serving … on http://127.0.0.1:PORT", the model loaded, and uvicorn's JSON
    log line about the address ended it with exit 3 — the delete guard's code."""
    from click.testing import CliRunner

    from indexer.cli import cli

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = CliRunner().invoke(cli, ["serve", "--artifacts", str(tmp_path), "--port", str(port)])
    assert result.exit_code == 1, result.output
    assert f"cannot listen on 127.0.0.1:{port}: Address already in use" in result.output
    assert "pass another --port" in result.output and "Serving" not in result.output
    result = CliRunner().invoke(cli, ["serve", "--artifacts", str(tmp_path), "--host", "192.0.2.1", "--port", str(port)])
    assert result.exit_code == 1 and "--host must name an address of this machine" in result.output, result.output
