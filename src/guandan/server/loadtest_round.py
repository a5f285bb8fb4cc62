"""Load test of an online tournament round (``guandan loadtest --round``; issue 21, "Speed and scale").

The plain load test (:mod:`guandan.server.loadtest`) plays N rooms of one scripted person and three
bots. This one plays the same number of tables as **one round of an online tournament**
(docs/tournaments.md "Online rounds"), so that its move latency can be set beside the plain run's:

1. An organiser account creates a one-round online Swiss event (a 600-minute match clock, no lateness
   rule) named ``Load test <tag>``.
2. ``2 * N`` accounts are registered (``POST /api/register``; the server must allow it: the one the
   command starts runs with ``--registrations-per-hour 0``), and entered as N pairs with seeds 1…N;
   N bot pairs (level ``normal``, the plain run's bots) are entered with seeds N+1…2N. The seeded
   first round (:func:`guandan.tournament.swiss.pair_first_round`: 1 v N+1, 2 v N+2, …) then puts one
   pair of people against one bot pair at every table.
3. The round is paired (``POST /api/tournaments/{id}/rounds``): the server opens the N rooms and
   starts their games. Each account opens ``/ws/rooms/{room}``; at a tournament table nobody else
   plays a person's seat (no 托管: docs/tournaments.md), so both people of every table are scripted.
   The players are the plain run's (:func:`guandan.server.loadtest._play`): a random legal action,
   never faster than the server's message limit, ``ready`` between deals, until D deals are over.

Measured as in the plain run: actions at every table in the window from the moment every player is
connected and has received the table's state to the last table done, and the latency of the
scripted players' actions (``act`` sent to the ``state`` frame that contains it, ms). The plain
run's players count once they have the waiting room's state; before 2026-12-06 this run counted at
the handshake, and the server was often still sending the first states (20-100 KB each at a first
lead) when every player acted at once. The games of a round do not end after D deals (a match
runs to its target level), so no record is replayed here; the event and its rooms stay on the
server (a server the command started is stopped with its database).
"""

from __future__ import annotations

import asyncio
import random
import secrets
import time
from collections.abc import Sequence
from typing import Any

from .loadtest import (
    LoadReport,
    LoadTestError,
    Progress,
    _play,
    _r,
    _SecondSeat,
    _Shared,
    _TableState,
    _tls,
    check_reachable,
    percentile,
    recv,
    run_measured,
    spawn_server,
    split_urls,
    stamped_connection,
)

#: Level of the bot pairs (the plain load test's bots are ``normal`` too).
BOT_LEVEL = "normal"
#: The match clock of the event (minutes, R58). A timed table never lets the bot play an absent
#: person's seat (no 托管 at timed tournament tables: docs/tournaments.md), so the games, which start
#: when the round is paired, wait for the scripted players to connect instead of playing on without them.
MATCH_MINUTES = 600
#: Entries sent per ``POST /api/tournaments/{id}/entries`` (request bodies are limited to 16 KiB).
ENTRIES_PER_REQUEST = 60


async def _register(http: Any, name: str, password: str) -> str:
    """Register ``name``; return its session token. A 503 (the password-hash queue full) is sent again
    after its ``Retry-After`` (up to 30 times). Raises :class:`LoadTestError` when refused."""
    for _ in range(30):
        r = await http.post("/api/register", json={"name": name, "password": password})
        if r.status_code != 503:
            break
        await asyncio.sleep(float(r.headers.get("retry-after", "1") or 1))
    token = r.cookies.get("gd_session")
    if r.status_code != 200 or not token:
        hint = " (start the server with --registrations-per-hour 0)" if r.status_code == 429 else ""
        raise LoadTestError(f"registering {name} failed ({r.status_code}){hint}: {r.text[:200]}")
    return str(token)


async def _set_up_round(url: str, tables: int, concurrency: int) -> tuple[list[tuple[str, str, int]], int]:
    """Create the event, its accounts and entries, pair round 1.

    Returns:
        ``([(room id, session token, table number) for every scripted player], tournament id)``.
    Raises:
        LoadTestError: a call the set-up needs is refused.
    """
    import httpx

    tag = secrets.token_hex(3)
    password = secrets.token_urlsafe(12)
    sem = asyncio.Semaphore(concurrency)
    # the organiser's client keeps its own session cookie; each player registers through a new one
    async with httpx.AsyncClient(base_url=url, timeout=120, verify=_tls()) as http:
        await _register(http, f"lt{tag}org", password)
        h: dict[str, str] = {}
        r = await http.post("/api/tournaments", headers=h, json={
            "venue": "online", "name": f"Load test {tag}", "rounds": 1, "time_limit": MATCH_MINUTES})
        if not r.is_success:
            raise LoadTestError(f"creating the tournament failed: {r.text[:200]}")
        tid, version = r.json()["tournament"]["id"], r.json()["tournament"]["version"]

        names = [f"lt{tag}p{i}{s}" for i in range(1, tables + 1) for s in "ab"]

        async def one(name: str) -> str:
            # a client of its own: a session cookie left in a shared client by another registration
            # would go with this one
            async with sem, httpx.AsyncClient(base_url=url, timeout=120, verify=_tls()) as signup:
                return await _register(signup, name, password)

        tokens = dict(zip(names, await asyncio.gather(*(one(n) for n in names)), strict=True))
        entries: list[dict[str, Any]] = [
            {"name": f"P{i}", "players": [f"lt{tag}p{i}a", f"lt{tag}p{i}b"], "seed": i} for i in range(1, tables + 1)]
        entries += [{"name": f"B{i}", "players": [f"B{i}x", f"B{i}y"], "bot": BOT_LEVEL, "seed": tables + i}
                    for i in range(1, tables + 1)]
        for k in range(0, len(entries), ENTRIES_PER_REQUEST):  # request bodies are limited to 16 KiB
            r = await http.post(f"/api/tournaments/{tid}/entries", headers=h,
                                json={"version": version, "entries": entries[k:k + ENTRIES_PER_REQUEST]})
            if not r.is_success:
                raise LoadTestError(f"entering the pairs failed: {r.text[:200]}")
            version = (await http.get(f"/api/tournaments/{tid}", headers=h)).json()["version"]
        d = (await http.get(f"/api/tournaments/{tid}", headers=h)).json()
        r = await http.post(f"/api/tournaments/{tid}/rounds", headers=h, json={"version": d["version"]})
        if not r.is_success:
            raise LoadTestError(f"pairing the round failed: {r.text[:200]}")
        d = (await http.get(f"/api/tournaments/{tid}", headers=h)).json()
    players_of = {e["id"]: [p if isinstance(p, str) else p["name"] for p in e["players"]] for e in d["entries"]}
    bots = {e["id"] for e in d["entries"] if e["name"].startswith("B")}  # the bot pairs entered above
    room_of = {x["table"]: x["room"] for x in d["online_tables"] if x["round"] == 1}
    seats: list[tuple[str, str, int]] = []
    for m in d["rounds_list"][0]["matches"]:
        people = [e for e in (m["a"], m["b"]) if e is not None and e not in bots]
        if len(people) != 1 or m["table"] not in room_of:
            raise LoadTestError(f"table {m['table']} is not one pair of people against a bot pair: {m}")
        seats += [(room_of[m["table"]], tokens[name], m["table"]) for name in players_of[people[0]]]
    return seats, tid


class _Replayed:
    """A client websocket whose first frame, already read (with its arrival time), is given again
    by the first ``recv_stamped``."""

    def __init__(self, ws: Any, first: tuple[Any, float]) -> None:
        self._ws, self._first = ws, [first]

    async def recv_stamped(self) -> tuple[Any, float]:
        return self._first.pop() if self._first else await recv(self._ws)

    async def send(self, message: str) -> None:
        await self._ws.send(message)


async def _player(k: int, ws_base: str, room_id: str, token: str, deals: int, shared: _Shared,
                  rng: random.Random, connected: list[int], counts: bool) -> None:
    """One scripted person of the round: connect, wait for every other, play ``deals`` deals;
    ``counts``: this player counts the table's actions (the first of its two people)."""
    from websockets.asyncio.client import connect

    async with connect(f"{ws_base}/ws/rooms/{room_id}", additional_headers={"Cookie": f"gd_session={token}"},
                       max_size=None, open_timeout=60, create_connection=stamped_connection()) as socket:
        # set up = the table's state received, as in the plain run (its waiting room's state): the
        # server has then answered this connection, not only its handshake (the first lead's state
        # frame of a table can be 20-100 KB)
        ws = _Replayed(socket, await asyncio.wait_for(recv(socket), 60))
        connected[0] += 1
        shared.started.append(time.monotonic())
        if connected[0] >= shared.expected:
            shared.setup_done_at = time.monotonic()
            shared.all_started.set()
        seen: Any = shared if counts else _SecondSeat(shared)
        if await _play(k, ws, room_id, deals, seen, rng, _TableState()):
            shared.finished.append(time.monotonic())
            shared.done += 1
            if shared.done >= shared.expected:
                shared.all_done.set()
        try:  # stay connected (and idle) so that the table waits for this seat
            await asyncio.wait_for(shared.all_done.wait(), max(0.0, shared.deadline - time.monotonic()))
        except TimeoutError:
            pass


async def run_round_load(url: str | Sequence[str], tables: int, deals: int = 1, timeout_s: float = 300.0,
                         seed: int = 0, setup_concurrency: int = 4,
                         progress: Progress | None = None) -> LoadReport:
    """Play one online tournament round of ``tables`` tables (module docstring) and measure it.

    Args:
        url: one server base URL on a loopback host (a list or comma-separated URLs: the round is set
            up through the first; the players' sockets go to the URLs round-robin).
        tables: tables of the round (>= 1): ``2 * tables`` accounts and as many bot pairs.
        deals: deals each scripted player plays (>= 1).
        timeout_s: overall deadline in seconds (set-up included).
        seed: seed of the scripted players' random choices.
        setup_concurrency: registrations at once.
        progress: called with ``(tables done, tables, actions so far)`` about every 0.5 s.
    Returns:
        A :class:`guandan.server.loadtest.LoadReport` (``tables_done``: tables both of whose players
        played their deals; ``records_checked`` 0: no game of a round ends after D deals).
    Raises:
        LoadTestError: a bad URL or argument, a server that cannot be reached, or a set-up call refused
            (registrations limited, the round not paired as one pair of people per table).
    """
    urls = split_urls(url)
    if tables < 1 or deals < 1:
        raise LoadTestError("--tables and --deals must be at least 1")
    await check_reachable(urls)
    t0 = time.monotonic()
    seats, _tid = await _set_up_round(urls[0], tables, setup_concurrency)
    shared = _Shared(deadline=t0 + timeout_s, all_done=asyncio.Event(), expected=len(seats))
    master = random.Random(seed)
    connected = [0]
    first_of: dict[str, int] = {}
    for k, (room, _token, _table) in enumerate(seats):
        first_of.setdefault(room, k)

    async def guarded(k: int, room_id: str, token: str) -> None:
        ws_base = "ws" + urls[k % len(urls)][4:]
        try:
            await _player(k, ws_base, room_id, token, deals, shared, random.Random(master.random()), connected,
                          counts=first_of[room_id] == k)
        except Exception as e:  # noqa: BLE001 - one failing player is reported, the others go on
            shared.error(f"player {k}: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
            shared.expected -= 1
            if connected[0] >= shared.expected:
                shared.all_started.set()
            if shared.done >= shared.expected:
                shared.all_done.set()

    async def ticker() -> None:
        while progress is not None:
            progress(shared.done // 2, tables, shared.actions + shared.start_actions)
            await asyncio.sleep(0.5)

    tick = asyncio.create_task(ticker())
    try:
        await asyncio.gather(*(guarded(k, room, token) for k, (room, token, _t) in enumerate(seats)))
    finally:
        tick.cancel()
    end = max(shared.finished) if shared.finished else time.monotonic()
    start = shared.setup_done_at or end
    duration = max(1e-9, end - start)
    if progress is not None:
        progress(shared.done // 2, tables, shared.actions + shared.start_actions)
    return LoadReport(
        url=",".join(urls), urls=urls, tables=tables, deals=deals, spectators=0, people=2,
        tables_done=min(tables, shared.done // 2),
        duration_s=round(duration, 3), actions=shared.actions, person_actions=len(shared.latencies),
        actions_per_s=round(shared.actions / duration, 1),
        p50_ms=_r(percentile(shared.latencies, 0.50)), p99_ms=_r(percentile(shared.latencies, 0.99)),
        max_ms=_r(max(shared.latencies) if shared.latencies else None),
        p99_parsed_ms=_r(percentile(shared.parsed_latencies, 0.99)),
        setup_s=round(start - t0, 3), start_s=round(start - min(shared.started), 3) if shared.started else 0.0,
        start_actions=shared.start_actions, errors=shared.errors, n_errors=shared.n_errors,
        timed_out=shared.done < len(seats) and time.monotonic() >= shared.deadline,
        samples=list(zip(shared.latency_at, shared.latencies)),
    )


def run_round_loadtest(tables: int, url: str | Sequence[str] | None = None, deals: int = 1,
                       timeout_s: float = 300.0, seed: int = 0, bot_delay_s: float = 0.0,
                       progress: Progress | None = None) -> LoadReport:
    """:func:`run_round_load`, starting a local server for it when ``url`` is ``None`` (or empty).

    Raises:
        LoadTestError: as :func:`run_round_load`, or a server that does not start.
    """
    if url:
        return run_measured(run_round_load(url, tables, deals, timeout_s, seed, progress=progress))
    with spawn_server(bot_delay_s, extra_args=("--registrations-per-hour", "0")) as started:
        return run_measured(run_round_load(started, tables, deals, timeout_s, seed, progress=progress))


__all__ = ["BOT_LEVEL", "ENTRIES_PER_REQUEST", "MATCH_MINUTES", "run_round_load", "run_round_loadtest"]
