"""Load test of the web server through its real HTTP API and table websockets (loopback only).

For each of N tables a client makes a guest account (``POST /api/guest``), creates a room
(``POST /api/rooms``, the creator sits in seat 0), fills the other seats with heuristic bots
(``POST /api/rooms/{id}/bots``), opens ``/ws/rooms/{id}`` and starts the game; it then plays seat 0
with ``act`` messages chosen at random from ``view.legal_actions``, never faster than the server's
limit of 20 messages per second, until D deals are over (or the game). All tables run concurrently.

With ``people=2`` (``--people 2``) a second guest takes seat 2 (the owner's partner) before the bots
fill seats 1 and 3, and both people are scripted: the load of an online round's table, where every
action reaches two people. Those games are left as they are at the end (a game other people play
cannot be abandoned) and no record is replayed.

Several servers (``urls``: the processes of a cluster, or any servers on one database): table i is
created through ``urls[i % n]``, its player's websocket goes to the next URL (``urls[(i + 1) % n]``)
and its spectators (``spectators`` per table) to the ones after, so that in cluster mode the
connections of one table reach different processes. Spectators check that they never receive a
hand (redaction) and measure how long an action takes to reach them.

Measured: every action at every table (each action produces one ``state`` frame with a larger
``seq``), so ``actions_per_s`` is the servers' throughput over the run; the latency of the
scripted players' actions is the time from sending ``act`` to receiving the ``state`` frame that
contains it (milliseconds; p50, p99, max); for spectators the time from the player's ``act`` to
the spectator's frame. When the run ends every game is ended (``abandon``) and the record of every
stored game of the run is downloaded (``GET /api/games/{id}/record``) and replayed with
:func:`guandan.records.replay_lines` (every action checked by the rules engine).

Every table is set up (account, room, bots, websockets) before the games start together; no player
acts before every game has started (their tables wait for them once the bots have played), and the
measured window runs from that moment to the last table done: the figures describe N tables in
play at once, not N tables being created (``setup_s`` and ``start_s`` report those phases). A client that has finished
its deals keeps its socket open without acting (the table then waits
for it) until every table is done, so finished tables add no load while others are measured.
The load generator runs with the server's garbage-collector settings (:data:`CLIENT_GC_THRESHOLDS`,
:func:`guandan.runtime.gctune.tuned_gc`): with Python's defaults its own full collections (70-130 ms
with 400 client sockets) delayed the frames it timed and were counted as server latency.
Without ``url`` a server is started for the run (``guandan serve --bot-delay 0`` on a free
loopback port with a fresh SQLite file in a temporary directory) and stopped afterwards.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import time
from collections import deque
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from guandan.runtime.gctune import tuned_gc

from .loadtest_net import (LOOPBACK, LoadTestError, _tls, check_loopback, check_reachable, recv,
                           spawn_server, split_urls, stamped_connection)

#: Messages per second a client sends at most (the server refuses more than 20).
CLIENT_RATE = 18


@dataclass
class LoadReport:
    """Result of a load test.

    Attributes:
        url: the servers tested (comma-separated); ``urls``: the same as a list; ``tables``:
            tables requested; ``deals``: deals per table; ``spectators``: spectators per table.
        tables_done: tables that played their deals (or their game) to the end in time.
        duration_s: the measured window: seconds from the last game start to the last table done
            (or the deadline).
        actions: actions observed at all tables (bots and scripted players) in that window.
        person_actions: actions sent by the scripted players (latency samples).
        actions_per_s: ``actions / duration_s``.
        p50_ms, p99_ms, max_ms: latency of the scripted players' actions, ``act`` sent to the
            arrival of the ``state`` frame that contains it (its last byte read from the socket,
            :func:`stamped_connection`), in milliseconds (``None`` without samples).
        p99_parsed_ms: the same samples' p99 timed once the client had parsed the frame (the
            definition of ``p99_ms`` before 2026-12-07; it adds the load generator's own queue).
        spectator_frames: state frames received by spectators; ``spectator_p50_ms``,
            ``spectator_p99_ms``: the player's ``act`` to the spectator's frame (ms).
        records_checked: stored games of the run whose record was downloaded and replayed;
            ``records_ok``: those that replayed without an error.
        errors: error messages received or raised (at most 20 kept), ``n_errors`` all of them.
        setup_s: seconds from the first call to every table being ready to start.
        start_s: seconds from the first game start to the last (the games start together, up to
            64 calls at once); ``start_actions``: the bots' actions of that phase, left out of
            the measured window.
        timed_out: the deadline stopped the run.
        samples: every latency sample of ``p99_ms`` as ``(arrived, latency_ms)``, in the order
            they were taken, where ``arrived`` is ``time.monotonic()`` (seconds) when the
            answering frame arrived: on Linux one clock for every process of the machine, so the
            samples can be set beside what another process did at the time. Not in
            :meth:`to_json` (a run of 5 deals at 200 tables has about 20,000); ``guandan loadtest
            --samples FILE`` writes them.
    """

    url: str
    tables: int
    deals: int
    urls: list[str] = field(default_factory=list)
    spectators: int = 0
    #: scripted people per table (1: seat 0; 2: seats 0 and 2)
    people: int = 1
    tables_done: int = 0
    duration_s: float = 0.0
    actions: int = 0
    person_actions: int = 0
    actions_per_s: float = 0.0
    p50_ms: float | None = None
    p99_ms: float | None = None
    max_ms: float | None = None
    p99_parsed_ms: float | None = None
    spectator_frames: int = 0
    spectator_p50_ms: float | None = None
    spectator_p99_ms: float | None = None
    records_checked: int = 0
    records_ok: int = 0
    setup_s: float = 0.0
    start_s: float = 0.0
    start_actions: int = 0
    errors: list[str] = field(default_factory=list)
    n_errors: int = 0
    timed_out: bool = False
    samples: list[tuple[float, float]] = field(default_factory=list, repr=False)

    def to_json(self) -> dict[str, Any]:
        """The report as a JSON-ready dict, without :attr:`samples`."""
        return {k: v for k, v in self.__dict__.items() if k != "samples"}


def percentile(samples: list[float], q: float) -> float | None:
    """The ``q`` quantile (0..1) of ``samples`` by the nearest-rank method, or ``None`` when empty."""
    if not samples:
        return None
    s = sorted(samples)
    k = max(0, min(len(s) - 1, int(-(-q * len(s) // 1)) - 1))
    return s[k]


@dataclass
class _TableState:
    """What the player and the spectators of one table share: the player's acts, in order."""

    acts: list[tuple[float, int]] = field(default_factory=list)  # (monotonic time sent, seq then)


@dataclass
class _Shared:
    deadline: float
    all_done: asyncio.Event
    started: list[float] = field(default_factory=list)
    finished: list[float] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    #: when each of ``latencies`` arrived (``time.monotonic()``, s)
    latency_at: list[float] = field(default_factory=list)
    #: the same samples timed after the client parsed the frame (what ``latencies`` was before
    #: 2026-12-07): it adds the load generator's own queue of frames to parse
    parsed_latencies: list[float] = field(default_factory=list)
    #: actions while games were still starting (not in the measured window)
    start_actions: int = 0
    spectator_latencies: list[float] = field(default_factory=list)
    spectator_frames: int = 0
    actions: int = 0
    person_actions: int = 0
    errors: list[str] = field(default_factory=list)
    n_errors: int = 0
    done: int = 0
    expected: int = 0
    #: (room id, session token, url of its creation) of every room made, abandoned when the run ends
    rooms: list[tuple[str, str, str]] = field(default_factory=list)
    #: room id -> stored game id, from the ``game_over`` frames
    game_ids: dict[str, int] = field(default_factory=dict)
    #: tables set up (room, bots, websockets open) and waiting for ``go``; set when all are
    set_up: int = 0
    go: asyncio.Event = field(default_factory=asyncio.Event)
    all_started: asyncio.Event = field(default_factory=asyncio.Event)
    setup_done_at: float | None = None

    def check_go(self) -> None:
        """Start every game once every table that did not fail is set up."""
        if self.set_up >= self.expected and not self.go.is_set():
            self.setup_done_at = time.monotonic()
            self.go.set()

    def error(self, text: str) -> None:
        self.n_errors += 1
        if len(self.errors) < 20:
            self.errors.append(text)


async def _guest(http: Any, i: int) -> str:
    """A new guest account's session token (``POST /api/guest``)."""
    r = await http.post("/api/guest", json={})
    token = r.cookies.get("gd_session")
    if r.status_code != 200 or not token:
        raise LoadTestError(f"table {i}: guest login failed ({r.status_code})")
    http.cookies.clear()  # each call names its session in its own header
    return token


class _SecondSeat:
    """What the second person of a table shares with the run: everything but the action counts
    (both people of a table see every action of it; only the first one counts them)."""

    def __init__(self, shared: _Shared) -> None:
        object.__setattr__(self, "_shared", shared)
        self.actions = 0
        self.start_actions = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._shared, name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name in ("actions", "start_actions"):
            object.__setattr__(self, name, value)
        else:
            setattr(self._shared, name, value)


async def _table(i: int, urls: Sequence[str], deals: int, spectators: int, shared: _Shared, rng: random.Random,
                 setup: asyncio.Semaphore, starts: asyncio.Semaphore, people: int = 1) -> None:
    import httpx
    from websockets.asyncio.client import connect

    n = len(urls)
    home = urls[i % n]
    async with setup, httpx.AsyncClient(base_url=home, timeout=60, verify=_tls()) as http:  # guests, a room, bots
        token = await _guest(http, i)
        headers = {"cookie": f"gd_session={token}"}
        r = await http.post("/api/rooms", json={"preset": "official", "name": f"loadtest {i}"}, headers=headers)
        if r.status_code != 200:
            raise LoadTestError(f"table {i}: creating the room failed: {r.text[:200]}")
        room_id = r.json()["room"]["id"]
        shared.rooms.append((room_id, token, home))
        tokens = [token]
        if people == 2:  # the owner's partner (seat 2, R2) is a second scripted person
            partner = await _guest(http, i)
            r = await http.post(f"/api/rooms/{room_id}/seat", json={"seat": 2},
                                headers={"cookie": f"gd_session={partner}"})
            if r.status_code != 200:
                raise LoadTestError(f"table {i}: the second person could not sit: {r.text[:200]}")
            tokens.append(partner)
        r = await http.post(f"/api/rooms/{room_id}/bots", json={"bot": "normal"}, headers=headers)
        if r.status_code != 200:
            raise LoadTestError(f"table {i}: adding bots failed: {r.text[:200]}")
    tstate = _TableState()
    watchers = [asyncio.create_task(_spectate(i, "ws" + urls[(i + 1 + people + k) % n][4:], room_id, shared, tstate))
                for k in range(spectators)]
    try:
        async with contextlib.AsyncExitStack() as stack:
            sockets = []
            for k, tok in enumerate(tokens):  # the k-th person's socket goes to the URL after the room's
                player_url = urls[(i + 1 + k) % n]
                sockets.append(await stack.enter_async_context(connect(
                    f"ws{player_url[4:]}/ws/rooms/{room_id}", additional_headers={"Cookie": f"gd_session={tok}"},
                    max_size=None, open_timeout=60, create_connection=stamped_connection())))
            for ws in sockets:
                await asyncio.wait_for(recv(ws), 60)  # the waiting room's state
            # every table is set up before any game starts: the run measures play, not set-up
            shared.set_up += 1
            shared.check_go()
            await asyncio.wait_for(shared.go.wait(), max(0.0, shared.deadline - time.monotonic()))
            async with starts, httpx.AsyncClient(base_url=home, timeout=60, verify=_tls()) as http:
                r = await http.post(f"/api/rooms/{room_id}/start", json={}, headers={"cookie": f"gd_session={token}"})
                if r.status_code != 200:
                    raise LoadTestError(f"table {i}: starting the game failed: {r.text[:200]}")
            shared.started.append(time.monotonic())
            if len(shared.started) >= shared.expected:
                shared.all_started.set()
            # the first person counts the table's actions; each person's own acts are timed
            players = [asyncio.ensure_future(_play(i, ws, room_id, deals, shared if k == 0 else _SecondSeat(shared),
                                                   random.Random(rng.random()) if k else rng, tstate))
                       for k, ws in enumerate(sockets)]
            try:
                played = await asyncio.gather(*players)
            finally:  # one person failing stops the other (its error is the table's)
                for p in players:
                    p.cancel()
            if all(played):
                shared.finished.append(time.monotonic())
                shared.done += 1
                if shared.done >= shared.expected:
                    shared.all_done.set()
            # stay connected (and idle) so the table waits instead of playing on with bots
            try:
                await asyncio.wait_for(shared.all_done.wait(), max(0.0, shared.deadline - time.monotonic()))
            except TimeoutError:
                pass
    finally:
        for w in watchers:
            w.cancel()
        await asyncio.gather(*watchers, return_exceptions=True)


async def _pace(sent: deque[float]) -> None:
    """Wait until one more message keeps the last second's messages (``sent``: their
    ``time.monotonic()``) within :data:`CLIENT_RATE`; drops the times older than a second."""
    now = time.monotonic()
    while sent and now - sent[0] >= 1.0:
        sent.popleft()
    while len(sent) >= CLIENT_RATE:
        await asyncio.sleep(1.0 - (now - sent[0]) + 0.001)
        now = time.monotonic()
        while sent and now - sent[0] >= 1.0:
            sent.popleft()


async def _play(i: int, ws: Any, room_id: str, deals: int, shared: _Shared, rng: random.Random,
                tstate: _TableState) -> bool:
    """The scripted player of table ``i``; True when its deals (or the game) are over in time."""
    last_seq: int | None = None
    pending: tuple[float, int, list[Any]] | None = None  # (sent at, seq then, action)
    sent: deque[float] = deque()
    deals_done = 0
    while True:
        left = shared.deadline - time.monotonic()
        if left <= 0:
            return False
        try:
            raw, arrived = await asyncio.wait_for(recv(ws), left)
        except TimeoutError:
            return False
        f = json.loads(raw)
        t = f.get("type")
        if t == "deal_result":
            deals_done += 1
            if deals_done >= deals:
                return True
            # the table pauses between deals until its people are ready (contract section 6); the
            # message counts towards the server's limit like an act
            await _pace(sent)
            sent.append(time.monotonic())
            await ws.send(json.dumps({"type": "ready"}))
        elif t == "game_over":
            if isinstance(f.get("game_id"), int):
                shared.game_ids[room_id] = f["game_id"]
            return True
        elif t == "error":
            if f.get("reason") == "rate_limited" and pending is not None:
                await asyncio.sleep(1.0)
                await ws.send(json.dumps({"type": "act", "action": pending[2]}))
                continue
            shared.error(f"table {i}: {f.get('message')}")
            pending = None
        elif t == "state" and f.get("view") is not None:
            seq = f["seq"]
            measured = shared.all_started.is_set()
            if last_seq is not None and seq > last_seq:
                if measured:
                    shared.actions += 1
                else:
                    shared.start_actions += 1
            last_seq = seq
            now = time.monotonic()
            # a frame that arrived before the act was sent cannot answer it (a clock move of the
            # seat, read while the player waited to send)
            if pending is not None and seq > pending[1] and arrived >= pending[0]:
                shared.latencies.append((arrived - pending[0]) * 1000.0)
                shared.latency_at.append(arrived)
                shared.parsed_latencies.append((now - pending[0]) * 1000.0)
                pending = None
            v = f["view"]
            if pending is None and v.get("to_act") == f["seat"] and v.get("legal_actions"):
                if not measured:  # the player waits until every game runs (its bots may play on)
                    try:
                        await asyncio.wait_for(shared.all_started.wait(), max(0.0, shared.deadline - time.monotonic()))
                    except TimeoutError:
                        return False
                await _pace(sent)
                action = rng.choice(v["legal_actions"])
                now = time.monotonic()
                sent.append(now)
                pending = (now, seq, action)
                tstate.acts.append((now, seq))
                shared.person_actions += 1
                await ws.send(json.dumps({"type": "act", "action": action}))


async def _spectate(i: int, ws_base: str, room_id: str, shared: _Shared, tstate: _TableState) -> None:
    """A spectator of table ``i`` (no login): counts state frames, checks that none carries a hand
    or legal actions (R32, R50), and measures the player's acts reaching it."""
    from websockets.asyncio.client import connect

    seen = 0  # player acts already measured
    try:
        async with connect(f"{ws_base}/ws/rooms/{room_id}", max_size=None, open_timeout=60) as ws:
            async for raw in ws:
                f = json.loads(raw)
                if f.get("type") != "state" or f.get("view") is None:
                    continue
                now = time.monotonic()
                shared.spectator_frames += 1
                v = f["view"]
                if v.get("hand") or v.get("legal_actions") or f.get("seat") is not None:
                    shared.error(f"table {i}: a spectator received a hand or a seat's legal actions")
                while seen < len(tstate.acts) and tstate.acts[seen][1] < f["seq"]:
                    shared.spectator_latencies.append((now - tstate.acts[seen][0]) * 1000.0)
                    seen += 1
    except asyncio.CancelledError:
        raise
    except Exception as e:  # noqa: BLE001 - reported, the table goes on
        shared.error(f"table {i}: spectator: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")


async def abandon_rooms(url: str | Sequence[str], rooms: Sequence[tuple[str, ...]], concurrency: int = 16) -> int:
    """End the load test's games (``POST /api/rooms/{id}/abandon``) so that they stop playing on
    with bots and a later run on the same server measures the same.

    Args:
        url: the server, or the servers (the call for a room goes to the URL it names, else the
            first); rooms: ``(room id, session token[, url])`` tuples; concurrency: calls at once.
    Returns:
        How many games were abandoned (a game already over is left as it is).
    """
    import httpx

    urls = split_urls(url)
    gate = asyncio.Semaphore(concurrency)
    done = 0

    async def one(http: httpx.AsyncClient, room: tuple[str, ...]) -> None:
        nonlocal done
        room_id, token = room[0], room[1]
        base = room[2] if len(room) > 2 else urls[0]
        async with gate:
            try:
                r = await http.post(f"{base}/api/rooms/{room_id}/abandon", json={},
                                    headers={"cookie": f"gd_session={token}"})
                done += r.status_code == 200
            except httpx.HTTPError:
                pass

    async with httpx.AsyncClient(timeout=30, verify=_tls()) as http:
        await asyncio.gather(*(one(http, room) for room in rooms))
    return done


async def check_records(urls: Sequence[str], rooms: Sequence[tuple[str, str, str]], known: dict[str, int],
                        shared: _Shared, concurrency: int = 8) -> tuple[int, int]:
    """Download the stored game of every room (its id from ``known`` or from the owner's
    ``/api/history``) and replay it with :func:`guandan.records.replay_lines`.

    Returns:
        ``(checked, ok)``: records downloaded and replayed, and those without an error (every
        failure is reported through ``shared.error``).
    """
    import httpx

    from guandan.records import RecordError, replay_lines

    gate = asyncio.Semaphore(concurrency)
    checked = ok = 0

    async def one(http: httpx.AsyncClient, k: int, room_id: str, token: str) -> None:
        nonlocal checked, ok
        base = urls[k % len(urls)]
        async with gate:
            try:
                game_id = known.get(room_id)
                if game_id is None:
                    r = await http.get(f"{base}/api/history", params={"limit": 20},
                                       headers={"cookie": f"gd_session={token}"})
                    ids = [g["id"] for g in r.json().get("games", []) if g.get("room_id") == room_id] \
                        if r.status_code == 200 else []
                    if not ids:
                        shared.error(f"room {room_id}: no stored game found after the run")
                        return
                    game_id = ids[0]
                r = await http.get(f"{base}/api/games/{game_id}/record")
                if r.status_code != 200:
                    shared.error(f"room {room_id}: downloading game {game_id} failed ({r.status_code})")
                    return
                checked += 1
                lines = [ln for ln in r.text.split("\n") if ln.strip()]
                await asyncio.to_thread(replay_lines, lines)
                ok += 1
            except RecordError as e:
                shared.error(f"room {room_id}: the record does not replay: {str(e).splitlines()[0]}")
            except httpx.HTTPError as e:
                shared.error(f"room {room_id}: checking the record failed: {type(e).__name__}")

    async with httpx.AsyncClient(timeout=60, verify=_tls()) as http:
        await asyncio.gather(*(one(http, k, rid, tok) for k, (rid, tok, _) in enumerate(rooms)))
    return checked, ok


#: ``progress(tables_done, tables, actions)``, called about twice a second during a run
Progress = Callable[[int, int, int], None]


async def run_load(url: str | Sequence[str], tables: int, deals: int = 1, timeout_s: float = 300.0, seed: int = 0,
                   setup_concurrency: int = 16, spectators: int = 0, check_replay: bool = True,
                   progress: Progress | None = None, people: int = 1) -> LoadReport:
    """Play ``tables`` tables of ``deals`` deals each against the server(s) at ``url`` (see the
    module docstring) and measure them.

    Args:
        url: a server base URL on a loopback host, comma-separated URLs, or a list of them (the
            tables and their connections are spread over them round-robin).
        tables: number of concurrent tables (>= 1).
        deals: deals each scripted player plays (>= 1; the game may end sooner).
        timeout_s: overall deadline in seconds (set-up included; the record checks come after).
        seed: seed of the scripted players' random choices.
        setup_concurrency: tables being set up at once (HTTP calls).
        spectators: spectator websockets per table (0-8), on the URLs after the player's.
        check_replay: download and replay every stored game of the run at the end (with one person
            per table only: a game other people play cannot be abandoned, 409 ``abandon_not_alone``,
            so with two the games stay unfinished on the server and no record is complete).
        progress: called with ``(tables done, tables, actions so far)`` about every 0.5 s.
        people: scripted people per table: 1 (seat 0) or 2 (seats 0 and 2, partners; as at a table of
            an online round, ``guandan loadtest --round``, where each action reaches two people).
    Returns:
        A :class:`LoadReport`.
    Raises:
        LoadTestError: a bad URL or argument, or a server that cannot be reached.
    """
    urls = split_urls(url)
    if tables < 1 or deals < 1:
        raise LoadTestError("--tables and --deals must be at least 1")
    if people not in (1, 2):
        raise LoadTestError("--people must be 1 or 2")
    if not 0 <= spectators <= 8:
        raise LoadTestError("--spectators must be between 0 and 8")
    await check_reachable(urls)
    shared = _Shared(deadline=time.monotonic() + timeout_s, all_done=asyncio.Event(), expected=tables)
    setup = asyncio.Semaphore(setup_concurrency)
    starts = asyncio.Semaphore(max(setup_concurrency, 64))
    master = random.Random(seed)

    async def guarded(i: int) -> None:
        try:
            await _table(i, urls, deals, spectators, shared, random.Random(master.random()), setup, starts, people)
        except Exception as e:  # noqa: BLE001 - one failing table is reported, the others go on
            shared.error(f"table {i}: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
            shared.expected -= 1
            shared.check_go()
            if len(shared.started) >= shared.expected:
                shared.all_started.set()
            if shared.done >= shared.expected:
                shared.all_done.set()

    async def ticker() -> None:
        while progress is not None:
            progress(shared.done, tables, shared.actions + shared.start_actions)
            await asyncio.sleep(0.5)

    tick = asyncio.create_task(ticker())
    t0 = time.monotonic()
    checked = ok = 0
    try:
        await asyncio.gather(*(guarded(i) for i in range(tables)))
    finally:
        end = max(shared.finished) if shared.finished else time.monotonic()
        tick.cancel()
        if people == 1:  # a game other people play cannot be abandoned (409 abandon_not_alone)
            await abandon_rooms(urls, shared.rooms)
    if progress is not None:
        progress(shared.done, tables, shared.actions + shared.start_actions)
    if check_replay and shared.rooms and people == 1:
        checked, ok = await check_records(urls, shared.rooms, shared.game_ids, shared)
    first = min(shared.started) if shared.started else t0
    start = max(shared.started) if shared.started else t0  # the measured window: every game going
    duration = max(1e-9, end - start)
    return LoadReport(
        url=",".join(urls),
        urls=urls,
        tables=tables,
        deals=deals,
        spectators=spectators,
        people=people,
        tables_done=shared.done,
        duration_s=round(duration, 3),
        actions=shared.actions,
        person_actions=len(shared.latencies),
        actions_per_s=round(shared.actions / duration, 1),
        p50_ms=_r(percentile(shared.latencies, 0.50)),
        p99_ms=_r(percentile(shared.latencies, 0.99)),
        max_ms=_r(max(shared.latencies) if shared.latencies else None),
        p99_parsed_ms=_r(percentile(shared.parsed_latencies, 0.99)),
        spectator_frames=shared.spectator_frames,
        spectator_p50_ms=_r(percentile(shared.spectator_latencies, 0.50)),
        spectator_p99_ms=_r(percentile(shared.spectator_latencies, 0.99)),
        records_checked=checked,
        records_ok=ok,
        setup_s=round((shared.setup_done_at or t0) - t0, 3),
        start_s=round(start - first, 3),
        start_actions=shared.start_actions,
        errors=shared.errors,
        n_errors=shared.n_errors,
        timed_out=shared.done < tables and time.monotonic() >= shared.deadline,
        samples=list(zip(shared.latency_at, shared.latencies)),
    )


def write_samples(report: LoadReport, path: str) -> int:
    """Write ``report.samples`` to ``path`` as CSV: a header ``arrived_monotonic_s,latency_ms``,
    then one line per sample (seconds to the microsecond, milliseconds to 0.001).

    Returns:
        The number of samples written.
    Raises:
        OSError: the file cannot be written.
    """
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write("arrived_monotonic_s,latency_ms\n")
        f.writelines(f"{at:.6f},{ms:.3f}\n" for at, ms in report.samples)
    return len(report.samples)


def _r(x: float | None) -> float | None:
    return None if x is None else round(x, 2)


def run_loadtest(tables: int, url: str | Sequence[str] | None = None, deals: int = 1, timeout_s: float = 300.0,
                 seed: int = 0, bot_delay_s: float = 0.0, spectators: int = 0, check_replay: bool = True,
                 progress: Progress | None = None, people: int = 1) -> LoadReport:
    """Run a load test; start a local server for it when ``url`` is ``None`` (or empty).

    Args:
        tables: concurrent tables; ``url``: running servers on this machine (one URL,
            comma-separated URLs or a list), or ``None``.
        deals: deals per table; ``timeout_s``: deadline of the whole run in seconds.
        seed: seed of the scripted players; ``bot_delay_s``: bot delay of the started server (s).
        spectators, check_replay, progress, people: see :func:`run_load`.
    Returns:
        A :class:`LoadReport`.
    Raises:
        LoadTestError: bad arguments, a non-loopback or unreachable URL, or a server that does
            not start.
    """
    kwargs: dict[str, Any] = {"spectators": spectators, "check_replay": check_replay, "progress": progress,
                              "people": people}
    if url:
        return run_measured(run_load(url, tables, deals, timeout_s, seed, **kwargs))
    with spawn_server(bot_delay_s) as started:
        return run_measured(run_load(started, tables, deals, timeout_s, seed, **kwargs))


#: Garbage-collector thresholds of the load generator while it measures: the serving process's
#: (``guandan.server.app.GC_THRESHOLDS``, not imported here: the client does not load the server).
#: Measured 2026-12-06 (``--round -n 200``): with Python's defaults (700, 10, 10) the generator made
#: full collections of 73-129 ms, and the run's slowest samples fell at exactly those moments.
CLIENT_GC_THRESHOLDS = (20_000, 50, 100)

T = TypeVar("T")


def run_measured(run: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(run)`` with the load generator's garbage-collector settings
    (:data:`CLIENT_GC_THRESHOLDS`), restored afterwards.

    Args:
        run: the coroutine of a load test (:func:`run_load`, ``run_round_load``).
    Returns:
        What ``run`` returns.
    Raises:
        Whatever ``run`` raises (the collector is restored first).
    """
    with tuned_gc(*CLIENT_GC_THRESHOLDS):
        return asyncio.run(run)


__all__ = [
    "CLIENT_GC_THRESHOLDS",
    "LoadReport",
    "LOOPBACK",
    "LoadTestError",
    "abandon_rooms",
    "check_loopback",
    "check_reachable",
    "check_records",
    "percentile",
    "recv",
    "run_load",
    "run_loadtest",
    "run_measured",
    "spawn_server",
    "split_urls",
    "stamped_connection",
    "write_samples",
]
