"""The load test's connections (``guandan loadtest``, :mod:`guandan.server.loadtest`): loopback URLs
only, a server started for a run, and client websockets that stamp each message's arrival.

Split from :mod:`guandan.server.loadtest` on 2026-12-08 (that module had grown past 800 lines with
``--people 2``); every name here is also importable from there.
"""

from __future__ import annotations

import asyncio
import functools
import os
import ssl
import subprocess
import sys
import tempfile
import time
from collections import deque
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit

#: Host names accepted for ``url`` (the load test never leaves this machine).
LOOPBACK = ("127.0.0.1", "localhost", "::1", "[::1]")


class LoadTestError(Exception):
    """The load test could not run (bad URL, server did not start, setup failed); one line."""


def check_loopback(url: str) -> str:
    """Return ``url`` without a trailing slash.

    Raises:
        LoadTestError: not an ``http://`` URL on a loopback host.
    """
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise LoadTestError(f"--url must look like http://127.0.0.1:8000, not {url!r}")
    if parts.hostname not in LOOPBACK and parts.hostname.strip("[]") not in LOOPBACK:
        raise LoadTestError(f"the load test only targets this machine (127.0.0.1, localhost, ::1), not {parts.hostname!r}")
    return url.rstrip("/")


@contextmanager
def spawn_server(bot_delay_s: float = 0.0, start_timeout_s: float = 60.0,
                 extra_args: Sequence[str] = (), db_url: str | None = None) -> Iterator[str]:
    """Run ``guandan serve`` on a free loopback port with a fresh SQLite database (or ``db_url``, a
    database the caller prepared); yield its URL. ``extra_args``: more ``guandan serve`` options (the
    round load test lifts the registration limit).

    Raises:
        LoadTestError: the server did not print its URL within ``start_timeout_s`` seconds.
    """
    tmp = tempfile.TemporaryDirectory(prefix="guandan-load-")
    db_url = db_url or f"sqlite:///{os.path.join(tmp.name, 'load.db')}"
    cmd = [
        sys.executable, "-c", "from guandan.cli import main; main()", "serve",
        "--host", "127.0.0.1", "--port", "0", "--db", db_url, "--bot-delay", str(bot_delay_s), "--log-level", "warning",
        "--guests-per-hour", "0", "--max-ws-per-address", "0", "--bot-games-per-address", "0", *extra_args,
    ]
    # its own session: a Ctrl+C in the terminal stops the load test, which then stops the server
    # (and on Linux the scheduler shares the CPU between the server and the load generator as
    # between two programs, not as one)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        url = None
        deadline = time.monotonic() + start_timeout_s
        lines: list[str] = []
        assert proc.stdout is not None
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            lines.append(line.rstrip())
            if "open http://" in line:
                url = line.split("open ", 1)[1].split()[0].rstrip("/")
                break
        if url is None:
            raise LoadTestError("the server did not start: " + (lines[-1] if lines else "no output"))
        # keep reading its output so that the pipe never fills up
        import threading

        threading.Thread(target=lambda: [None for _ in proc.stdout], daemon=True).start()  # type: ignore[union-attr]
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        tmp.cleanup()


@functools.lru_cache(maxsize=1)
def _tls() -> ssl.SSLContext:
    """One TLS context for every HTTP client of a run (each new client would otherwise load the
    system's CA certificates again: 30 ms of CPU per table)."""
    return ssl.create_default_context()


def split_urls(urls: str | Sequence[str]) -> list[str]:
    """The server URLs of ``urls`` (one URL, comma-separated URLs, or a list of either), each
    checked by :func:`check_loopback`, in order, duplicates kept out.

    Raises:
        LoadTestError: no URL, or one that is not an ``http://`` URL on this machine.
    """
    items = [urls] if isinstance(urls, str) else list(urls)
    out: list[str] = []
    for item in items:
        for part in str(item).split(","):
            if part.strip():
                u = check_loopback(part.strip())
                if u not in out:
                    out.append(u)
    if not out:
        raise LoadTestError("no server URL given")
    return out


async def check_reachable(urls: Sequence[str], timeout_s: float = 5.0) -> None:
    """Ask every server for ``GET /api/config``.

    Raises:
        LoadTestError: a server does not answer, or does not answer like a pyguandan server (one
            line naming the URL and the reason).
    """
    import httpx

    async def one(http: httpx.AsyncClient, url: str) -> str | None:
        try:
            r = await http.get(f"{url}/api/config")
        except httpx.ConnectError:
            return f"cannot reach {url}: nothing answers there (connection refused)"
        except httpx.TimeoutException:
            return f"cannot reach {url}: no answer within {timeout_s:g} s"
        except httpx.HTTPError as e:
            reason = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            return f"cannot reach {url}: {reason}"
        if r.status_code != 200:
            return f"{url} is not a guandan server (GET /api/config answered {r.status_code})"
        return None

    async with httpx.AsyncClient(timeout=timeout_s, verify=_tls()) as http:
        problems = [p for p in await asyncio.gather(*(one(http, u) for u in urls)) if p]
    if problems:
        raise LoadTestError("; ".join(problems))


@functools.cache
def stamped_connection() -> type:
    """A ``websockets`` client connection class that notes when each message arrived.

    ``connect(..., create_connection=stamped_connection())``: the connection's ``arrivals`` deque
    gets ``time.monotonic()`` when the last frame of each data message is read from the socket (in
    the event loop's I/O callback, before any coroutine parses it), in message order; :func:`recv`
    pairs them with the messages. A latency timed there leaves out the load generator's own queue
    of frames waiting to be parsed by its other players' coroutines, which on a small machine (the
    client and the server sharing 2 cores) is most of a burst's measured time.
    """
    from websockets.asyncio.client import ClientConnection
    from websockets.frames import DATA_OPCODES, Frame

    class StampedConnection(ClientConnection):
        arrivals: deque[float]

        def process_event(self, event: Any) -> None:
            if isinstance(event, Frame) and event.opcode in DATA_OPCODES and event.fin:
                if not hasattr(self, "arrivals"):
                    self.arrivals = deque()
                self.arrivals.append(time.monotonic())
            super().process_event(event)

    return StampedConnection


async def recv(ws: Any) -> tuple[Any, float]:
    """The next message of ``ws`` and when it arrived (``time.monotonic()``): the stamp of a
    :func:`stamped_connection` connection (or of an object with ``recv_stamped``), else the time
    it was handed over."""
    stamped = getattr(ws, "recv_stamped", None)
    if stamped is not None:
        return await stamped()  # type: ignore[no-any-return]
    raw = await ws.recv()
    arrivals = getattr(ws, "arrivals", None)
    return raw, (arrivals.popleft() if arrivals else time.monotonic())


__all__ = ["LOOPBACK", "LoadTestError", "check_loopback", "check_reachable", "recv", "spawn_server", "split_urls",
           "stamped_connection"]
