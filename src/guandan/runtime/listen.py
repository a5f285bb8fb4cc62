"""The listening socket of ``guandan serve`` (standard library only).

``guandan serve`` binds its socket itself (so that a busy port is one clear line and the URL it
prints carries the port the system picked for ``--port 0``) and hands it to uvicorn. asyncio turns
Nagle's algorithm off (``TCP_NODELAY``) only on sockets whose ``proto`` is ``IPPROTO_TCP``
(``asyncio.base_events._set_nodelay``), and an accepted socket inherits ``proto`` from the
listening one. A socket made as ``socket.socket(AF_INET, SOCK_STREAM)`` has ``proto`` 0, so every
connection it accepted kept Nagle on: uvicorn writes a response's head and body separately, and on
a keep-alive connection the body then waited for the client's delayed acknowledgement. Measured on
loopback (2026-12-06, ``curl`` and a raw socket, the second and later requests of a connection):
``GET /healthz`` took 42-44 ms, and 0.5-0.7 ms once the connections had ``TCP_NODELAY``.
"""

from __future__ import annotations

import socket

__all__ = ["listen_socket"]


def listen_socket(host: str, port: int, backlog: int = 2048) -> socket.socket:
    """A TCP socket bound to ``(host, port)`` and listening, made with ``proto=IPPROTO_TCP`` so that
    asyncio sets ``TCP_NODELAY`` on every connection it accepts.

    Args:
        host: an IPv4 address or name, or an IPv6 address (any ``:`` in it selects ``AF_INET6``).
        port: 0-65535; 0 lets the system pick a free port (read it back with ``getsockname()``).
        backlog: the length of the queue of connections not yet accepted.
    Returns:
        The listening socket (``SO_REUSEADDR`` set); the caller owns and closes it.
    Raises:
        OSError: the address cannot be bound (in use, not on this machine, not permitted), or
            ``socket.gaierror`` (an ``OSError``) for a name that does not resolve (a name is
            resolved as IPv4); the socket is closed first.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(backlog)
    except OSError:
        sock.close()
        raise
    return sock
