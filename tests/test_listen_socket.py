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


def test_ipv6_loopback() -> None:
    if not socket.has_ipv6:
        pytest.skip("no IPv6 in this Python")
    try:
        sock = listen_socket("::1", 0)
    except OSError as e:  # a machine with IPv6 switched off
        pytest.skip(f"no IPv6 loopback here: {e}")
    assert sock.family == socket.AF_INET6
    assert asyncio.run(_nodelay_of_accepted(sock)) != 0


def test_a_busy_port_is_an_oserror_and_the_socket_is_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    first = listen_socket("127.0.0.1", 0)
    port = first.getsockname()[1]
    made: list[socket.socket] = []
    real = socket.socket

    def recording(*args: object, **kwargs: object) -> socket.socket:
        s = real(*args, **kwargs)  # type: ignore[arg-type]
        made.append(s)
        return s

    monkeypatch.setattr(socket, "socket", recording)
    try:
        with pytest.raises(OSError):
            listen_socket("127.0.0.1", port)
    finally:
        monkeypatch.undo()
        first.close()
    assert len(made) == 1 and made[0].fileno() == -1  # closed before the error left


def test_guandan_serve_answers_a_kept_alive_connection_at_once() -> None:
    """The second request on one connection: 40 ms late with Nagle on (a delayed ACK), about 1 ms
    without. The bound is far from both: the server's CPU time is not what is checked."""
    import http.client
    import time

    from guandan.server.loadtest import spawn_server

    with spawn_server() as url:
        host, port = url.split("//", 1)[1].split(":")
        conn = http.client.HTTPConnection(host, int(port), timeout=30)
        seconds = []
        for _ in range(6):
            t = time.perf_counter()
            conn.request("GET", "/healthz")
            r = conn.getresponse()
            assert r.status == 200 and b'"ok"' in r.read()
            seconds.append(time.perf_counter() - t)
        conn.close()
    # every request after the first rides the same connection; Nagle made each of them >= 40 ms
    assert min(seconds[1:]) < 0.030, seconds
