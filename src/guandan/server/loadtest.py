"""Load test of the web server through its real HTTP API and table websockets (loopback only).

For each of N tables a client makes a guest account (``POST /api/guest``), creates a room
(``POST /api/rooms``, the creator sits in seat 0), fills the other seats with heuristic bots
(``POST /api/rooms/{id}/bots``), opens ``/ws/rooms/{id}`` and starts the game; it then plays seat 0
with ``act`` messages chosen at random from ``view.legal_actions``, never faster than the server's
limit of 20 messages per second, until D deals are over (or the game). All tables run concurrently.

Measured: every action at every table (each action produces one ``state`` frame with a larger
``seq``), so ``actions_per_s`` is the server's throughput over the run; the latency of the
scripted players' actions is the time from sending ``act`` to receiving the ``state`` frame that
contains it (milliseconds; p50, p99, max).

A client that has finished its deals keeps its socket open without acting (the table then waits
for it) until every table is done, so finished tables add no load while others are measured.
Without ``url`` a server is started for the run (``guandan serve --bot-delay 0`` on a free
loopback port with a fresh SQLite file in a temporary directory) and stopped afterwards.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

#: Host names accepted for ``url`` (the load test never leaves this machine).
LOOPBACK = ("127.0.0.1", "localhost", "::1", "[::1]")
#: Messages per second a client sends at most (the server refuses more than 20).
CLIENT_RATE = 18


class LoadTestError(Exception):
    """The load test could not run (bad URL, server did not start, setup failed); one line."""


@dataclass
class LoadReport:
    """Result of a load test.

    Attributes:
        url: the server tested; ``tables``: tables requested; ``deals``: deals per table.
        tables_done: tables that played their deals (or their game) to the end in time.
        duration_s: seconds from the first game start to the last table done (or the deadline).
        actions: actions observed at all tables (bots and scripted players).
        person_actions: actions sent by the scripted players (latency samples).
        actions_per_s: ``actions / duration_s``.
        p50_ms, p99_ms, max_ms: latency of the scripted players' actions, ``act`` sent to ``state``
            received, in milliseconds (``None`` without samples).
        errors: error messages received or raised (at most 20 kept), ``n_errors`` all of them.
        timed_out: the deadline stopped the run.
    """

    url: str
    tables: int
    deals: int
    tables_done: int = 0
    duration_s: float = 0.0
    actions: int = 0
    person_actions: int = 0
    actions_per_s: float = 0.0
    p50_ms: float | None = None
    p99_ms: float | None = None
    max_ms: float | None = None
    errors: list[str] = field(default_factory=list)
    n_errors: int = 0
    timed_out: bool = False

    def to_json(self) -> dict[str, Any]:
        """The report as a JSON-ready dict."""
        return dict(self.__dict__)


def percentile(samples: list[float], q: float) -> float | None:
    """The ``q`` quantile (0..1) of ``samples`` by the nearest-rank method, or ``None`` when empty."""
    if not samples:
        return None
    s = sorted(samples)
    k = max(0, min(len(s) - 1, int(-(-q * len(s) // 1)) - 1))
    return s[k]


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
def spawn_server(bot_delay_s: float = 0.0, start_timeout_s: float = 60.0) -> Iterator[str]:
    """Run ``guandan serve`` on a free loopback port with a fresh SQLite database; yield its URL.

    Raises:
        LoadTestError: the server did not print its URL within ``start_timeout_s`` seconds.
    """
    tmp = tempfile.TemporaryDirectory(prefix="guandan-load-")
    db_url = f"sqlite:///{os.path.join(tmp.name, 'load.db')}"
    cmd = [
        sys.executable, "-c", "from guandan.cli import main; main()", "serve",
        "--host", "127.0.0.1", "--port", "0", "--db", db_url, "--bot-delay", str(bot_delay_s), "--log-level", "warning",
        "--guests-per-hour", "0", "--max-ws-per-address", "0",
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
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


@dataclass
class _Shared:
    deadline: float
    all_done: asyncio.Event
    started: list[float] = field(default_factory=list)
    finished: list[float] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    actions: int = 0
    person_actions: int = 0
    errors: list[str] = field(default_factory=list)
    n_errors: int = 0
    done: int = 0
    expected: int = 0
    #: (room id, session token) of every room made, abandoned when the run ends
    rooms: list[tuple[str, str]] = field(default_factory=list)

    def error(self, text: str) -> None:
        self.n_errors += 1
        if len(self.errors) < 20:
            self.errors.append(text)


async def _table(i: int, url: str, deals: int, shared: _Shared, rng: random.Random, setup: asyncio.Semaphore) -> None:
    import httpx
    from websockets.asyncio.client import connect

    ws_url = "ws" + url[4:]
    async with setup, httpx.AsyncClient(base_url=url, timeout=60) as http:  # a guest, a room, bots
        r = await http.post("/api/guest", json={})
        token = r.cookies.get("gd_session")
        if r.status_code != 200 or not token:
            raise LoadTestError(f"table {i}: guest login failed ({r.status_code})")
        headers = {"cookie": f"gd_session={token}"}
        r = await http.post("/api/rooms", json={"preset": "official", "name": f"loadtest {i}"}, headers=headers)
        if r.status_code != 200:
            raise LoadTestError(f"table {i}: creating the room failed: {r.text[:200]}")
        room_id = r.json()["room"]["id"]
        shared.rooms.append((room_id, token))
        r = await http.post(f"/api/rooms/{room_id}/bots", json={"bot": "normal"}, headers=headers)
        if r.status_code != 200:
            raise LoadTestError(f"table {i}: adding bots failed: {r.text[:200]}")
    async with connect(f"{ws_url}/ws/rooms/{room_id}", additional_headers={"Cookie": f"gd_session={token}"},
                       max_size=None, open_timeout=60) as ws:
        await asyncio.wait_for(ws.recv(), 60)  # the waiting room's state
        async with httpx.AsyncClient(base_url=url, timeout=60) as http:
            r = await http.post(f"/api/rooms/{room_id}/start", headers={"cookie": f"gd_session={token}"})
            if r.status_code != 200:
                raise LoadTestError(f"table {i}: starting the game failed: {r.text[:200]}")
        shared.started.append(time.monotonic())
        last_seq: int | None = None
        pending: tuple[float, int, list[Any]] | None = None  # (sent at, seq then, action)
        sent: deque[float] = deque()
        deals_done = 0
        while True:
            left = shared.deadline - time.monotonic()
            if left <= 0:
                return
            try:
                raw = await asyncio.wait_for(ws.recv(), left)
            except TimeoutError:
                return
            f = json.loads(raw)
            t = f.get("type")
            if t == "deal_result":
                deals_done += 1
                if deals_done >= deals:
                    break
                # the table pauses between deals until its people are ready (contract section 6)
                await ws.send(json.dumps({"type": "ready"}))
            elif t == "game_over":
                break
            elif t == "error":
                if f.get("reason") == "rate_limited" and pending is not None:
                    await asyncio.sleep(1.0)
                    await ws.send(json.dumps({"type": "act", "action": pending[2]}))
                    continue
                shared.error(f"table {i}: {f.get('message')}")
                pending = None
            elif t == "state" and f.get("view") is not None:
                seq = f["seq"]
                if last_seq is not None and seq > last_seq:
                    shared.actions += 1
                last_seq = seq
                now = time.monotonic()
                if pending is not None and seq > pending[1]:
                    shared.latencies.append((now - pending[0]) * 1000.0)
                    pending = None
                v = f["view"]
                if pending is None and v["to_act"] == f["seat"] and v["legal_actions"]:
                    while len(sent) >= CLIENT_RATE and now - sent[0] < 1.0:
                        await asyncio.sleep(1.0 - (now - sent[0]) + 0.001)
                        now = time.monotonic()
                        while sent and now - sent[0] >= 1.0:
                            sent.popleft()
                    action = rng.choice(v["legal_actions"])
                    now = time.monotonic()
                    sent.append(now)
                    pending = (now, seq, action)
                    shared.person_actions += 1
                    await ws.send(json.dumps({"type": "act", "action": action}))
        shared.finished.append(time.monotonic())
        shared.done += 1
        if shared.done >= shared.expected:
            shared.all_done.set()
        # stay connected (and idle) so the table waits instead of playing on with bots
        try:
            await asyncio.wait_for(shared.all_done.wait(), max(0.0, shared.deadline - time.monotonic()))
        except TimeoutError:
            pass


async def abandon_rooms(url: str, rooms: list[tuple[str, str]], concurrency: int = 16) -> int:
    """End the load test's games (``POST /api/rooms/{id}/abandon``) so that they stop playing on
    with bots and a later run on the same server measures the same.

    Args:
        url: the server; rooms: ``(room id, session token)`` pairs; concurrency: calls at once.
    Returns:
        How many games were abandoned (a game already over is left as it is).
    """
    import httpx

    gate = asyncio.Semaphore(concurrency)
    done = 0

    async def one(http: httpx.AsyncClient, room_id: str, token: str) -> None:
        nonlocal done
        async with gate:
            try:
                r = await http.post(f"/api/rooms/{room_id}/abandon", headers={"cookie": f"gd_session={token}"})
                done += r.status_code == 200
            except httpx.HTTPError:
                pass

    async with httpx.AsyncClient(base_url=url, timeout=30) as http:
        await asyncio.gather(*(one(http, rid, tok) for rid, tok in rooms))
    return done


async def run_load(url: str, tables: int, deals: int = 1, timeout_s: float = 300.0, seed: int = 0,
                   setup_concurrency: int = 16) -> LoadReport:
    """Play ``tables`` tables of ``deals`` deals each against the server at ``url`` (see the module
    docstring) and measure it.

    Args:
        url: server base URL on a loopback host.
        tables: number of concurrent tables (>= 1).
        deals: deals each scripted player plays (>= 1; the game may end sooner).
        timeout_s: overall deadline in seconds (set-up included).
        seed: seed of the scripted players' random choices.
        setup_concurrency: tables being set up at once (HTTP calls).
    Returns:
        A :class:`LoadReport`.
    Raises:
        LoadTestError: a bad URL or argument.
    """
    url = check_loopback(url)
    if tables < 1 or deals < 1:
        raise LoadTestError("--tables and --deals must be at least 1")
    shared = _Shared(deadline=time.monotonic() + timeout_s, all_done=asyncio.Event(), expected=tables)
    setup = asyncio.Semaphore(setup_concurrency)
    master = random.Random(seed)

    async def guarded(i: int) -> None:
        try:
            await _table(i, url, deals, shared, random.Random(master.random()), setup)
        except Exception as e:  # noqa: BLE001 - one failing table is reported, the others go on
            shared.error(f"table {i}: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
            shared.expected -= 1
            if shared.done >= shared.expected:
                shared.all_done.set()

    t0 = time.monotonic()
    try:
        await asyncio.gather(*(guarded(i) for i in range(tables)))
    finally:
        end = max(shared.finished) if shared.finished else time.monotonic()
        await abandon_rooms(url, shared.rooms)
    start = min(shared.started) if shared.started else t0
    duration = max(1e-9, end - start)
    return LoadReport(
        url=url,
        tables=tables,
        deals=deals,
        tables_done=shared.done,
        duration_s=round(duration, 3),
        actions=shared.actions,
        person_actions=len(shared.latencies),
        actions_per_s=round(shared.actions / duration, 1),
        p50_ms=_r(percentile(shared.latencies, 0.50)),
        p99_ms=_r(percentile(shared.latencies, 0.99)),
        max_ms=_r(max(shared.latencies) if shared.latencies else None),
        errors=shared.errors,
        n_errors=shared.n_errors,
        timed_out=shared.done < tables and time.monotonic() >= shared.deadline,
    )


def _r(x: float | None) -> float | None:
    return None if x is None else round(x, 2)


def run_loadtest(tables: int, url: str | None = None, deals: int = 1, timeout_s: float = 300.0,
                 seed: int = 0, bot_delay_s: float = 0.0) -> LoadReport:
    """Run a load test; start a local server for it when ``url`` is ``None``.

    Args:
        tables: concurrent tables; ``url``: a running server on this machine, or ``None``.
        deals: deals per table; ``timeout_s``: deadline of the whole run in seconds.
        seed: seed of the scripted players; ``bot_delay_s``: bot delay of the started server (s).
    Returns:
        A :class:`LoadReport`.
    Raises:
        LoadTestError: bad arguments, a non-loopback URL, or a server that does not start.
    """
    if url is not None:
        return asyncio.run(run_load(url, tables, deals, timeout_s, seed))
    with spawn_server(bot_delay_s) as started:
        return asyncio.run(run_load(started, tables, deals, timeout_s, seed))


__all__ = ["LoadReport", "LoadTestError", "check_loopback", "percentile", "run_load", "run_loadtest", "spawn_server"]
