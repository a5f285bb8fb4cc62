"""``guandan serve``'s listening socket: every accepted connection has Nagle's algorithm off.

Before 2026-12-06 the socket was made with ``proto`` 0, asyncio left ``TCP_NODELAY`` unset on the
connections it accepted, and the second request of a keep-alive connection waited 40 ms for a
delayed acknowledgement (``guandan.runtime.listen``).
"""

from __future__ import annotations

import asyncio
import socket

import pytest

from guandan.runtime.listen import listen_socket


async def _nodelay_of_accepted(sock: socket.socket) -> int:
    seen: asyncio.Future[int] = asyncio.get_running_loop().create_future()

    def accepted(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        raw = writer.get_extra_info("socket")
        seen.set_result(raw.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
        writer.close()

    server = await asyncio.start_server(accepted, sock=sock)
    host, port = sock.getsockname()[:2]
    _, writer = await asyncio.open_connection(host, port)
    try:
        return await asyncio.wait_for(seen, 10)
    finally:
        writer.close()
        server.close()
        await server.wait_closed()


def test_accepted_connections_have_nodelay() -> None:
    sock = listen_socket("127.0.0.1", 0)
    assert sock.proto == socket.IPPROTO_TCP
    assert sock.getsockname()[1] > 0
    assert asyncio.run(_nodelay_of_accepted(sock)) != 0


def test_a_plain_socket_would_keep_nagle_on() -> None:
    """The defect the function exists for: the same server on a ``proto`` 0 socket leaves Nagle on."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    assert asyncio.run(_nodelay_of_accepted(sock)) == 0


def test_ipv6_loopback() -> None:
    if not socket.has_ipv6:
        pytest.skip("no IPv6 in this Python")
    try:
        sock = listen_socket("::1", 0)
    except OSError as e:  # a machine with IPv6 switched off
        pytest.skip(f"no IPv6 loopback here: {e}")
    assert sock.family == socket.AF_INET6
    assert asyncio.run(_nodelay_of_accepted(sock)) != 0


def test_a_busy_port_is_an_oserror_and_the_socket_is_closed() -> None:
    first = listen_socket("127.0.0.1", 0)
    port = first.getsockname()[1]
    try:
        with pytest.raises(OSError):
            listen_socket("127.0.0.1", port)
    finally:
        first.close()
