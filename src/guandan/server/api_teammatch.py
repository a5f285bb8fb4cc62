"""Duplicate team matches' HTTP API (复式, issue 22 item 3; page ``/teammatch/{id}``, ``static/js/teammatch.js``).

* ``POST /api/teammatches`` ``{name, team_a: [[p, p], [p, p]], team_b, boards (4-16, default 8), preset}``
  -- an account creates a match; each player is an account name or ``bot:<level>`` (practice, unrated).
  The boards are dealt once (secure random source) and board 1 starts at both tables. ``{id, url}``;
  400 ``bad_team_match`` (``params.field``), 409 ``not_an_account`` (``params.name``), 429
  ``too_many_team_matches`` (an organiser runs at most :data:`MAX_RUNNING` at once; guests may not create).
* ``GET /api/teammatches`` -- the newest matches: ``{matches: [{id, name, status, n_boards, ranked}]}``.
* ``GET /api/teammatches/{id}`` -- the match for the viewer: ``{id, name, status, ranked, preset, n_boards,
  teams: {a, b}, tables: [{table, seats: [4 names], board, room}], my_table, boards: [{number, status: [t1,
  t2] each open | playing | played, open, results: [t1, t2] | null, score | null, games: [{table, game,
  replay_url, review_url}]}], difference, points: [a, b], boards_scored}``. ``room`` of a table is given only
  to that table's players. ``results``, ``score`` and ``games`` only once the board was played at both
  tables (``open``); ``difference`` and ``points`` count only those boards (issue 22: nothing of a board
  reaches anyone before both tables played it).
* ``POST /api/teammatches/{id}/tables/{t}/next`` -- start the next board at table ``t`` (its players or the
  organiser; the server also does it when a board ends): ``{room, board}``; 409 ``board_in_progress`` (a
  board being played there, or this one already started: a board is played once per table) or
  ``team_match_over``.

:class:`TeamMatchService` is the glue on the event loop: it starts board rooms, hears every finished
game (``TableManager.finish_hooks``), settles the match and starts each table's next board, and tells
its listeners (the online team rounds of tournaments) when a match is over.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import APIRouter, Request

from .api_accounts import error
from .auth import CurrentUser, RequiredUser
from .teammatch import BoardPlay, MatchSetup, board_open, parse_setup, seating, totals
from .teammatch_store import MatchInfo, NotAnAccount, TeamMatchStore

log = logging.getLogger("guandan.server.teammatch")

#: matches one organiser may have running at once (bots in seats cost CPU)
MAX_RUNNING = 2
#: seconds a just-started board waits for a person's page before the bot covers an absent player
START_GRACE_S = 20.0


class TeamMatchService:
    """Team matches on the event loop (one process, or every process of a cluster: each one hears the
    games its tables finish, and the match is settled under a Redis lock).

    Args:
        store: the :class:`TeamMatchStore`.
        manager: the :class:`~guandan.server.manager.TableManager` (``finish_hooks`` gets this service's hook).
        grace_s: seconds a board waits for a person before the bot plays for them.
    """

    def __init__(self, store: TeamMatchStore, manager: Any, grace_s: float = START_GRACE_S) -> None:
        self.store = store
        self.manager = manager
        self.grace_s = grace_s
        #: ``async f(match_id)`` called once a match is finished (tournament team rounds)
        self.listeners: list[Callable[[int], Awaitable[None]]] = []
        self._locks: dict[int, asyncio.Lock] = {}
        manager.finish_hooks.append(self._game_finished)

    async def create(self, setup: MatchSetup, organiser_id: int | None,
                     tournament: tuple[int, int, int] | None = None) -> int:
        """Store a new match and start board 1 at both tables. Raises ``NotAnAccount``."""
        mid = await self.manager.run_db(self.store.create, setup, organiser_id, tournament)
        await self.advance(mid)
        return int(mid)

    async def advance(self, match_id: int) -> bool:
        """Settle the match's finished boards, start each idle table's next board; returns whether the
        match is finished (its listeners are told once, when it becomes so)."""
        lock = self._locks.setdefault(match_id, asyncio.Lock())
        async with lock:
            was, done, rooms = await self.manager.run_db(self._settle_and_open, match_id)
            # only the process that made a board room starts its game (the unique key of a board at
            # a table lets one request make it); in a cluster the room's owner runs it
            for room in rooms:
                await self.manager.start_game(room, grace_s=self.grace_s)
        if done:
            self._locks.pop(match_id, None)
        if done and was is not None and was.status == "playing":
            for listener in self.listeners:
                try:
                    await listener(match_id)
                except Exception:  # noqa: BLE001 - one listener's failure never stops a match
                    log.exception("team match %s: a listener failed", match_id)
        return bool(done)

    def _settle_and_open(self, match_id: int) -> tuple[MatchInfo | None, bool, list[str]]:
        """In a worker thread: settle the match's finished boards and make each idle table's next board
        room. In a cluster this runs under a Redis lock of the match, so that two processes whose
        tables finish at once settle it one after the other. Returns ``(the match before, whether it
        is finished, the rooms made)``."""
        cluster = getattr(self.manager, "cluster", None)
        with cluster.lock(f"teammatch:{match_id}") if cluster is not None else contextlib.nullcontext():
            was = self.store.get(match_id)
            done = self.store.settle(match_id)
            rooms: list[str] = []
            if not done:
                for table in (1, 2):
                    room = self.store.start_board(match_id, table)
                    if room is not None:
                        rooms.append(room)
        return was, bool(done), rooms

    def _game_finished(self, table: Any) -> None:
        if getattr(table.info, "board", None) is None:
            return
        asyncio.get_running_loop().create_task(self._room_finished(table.id))

    async def _room_finished(self, room_id: str) -> None:
        try:
            mid = await self.manager.run_db(self.store.match_of_room, room_id)
            if mid is not None:
                await self.advance(mid)
        except Exception:  # noqa: BLE001 - never kill the server; start() resumes
            log.exception("team match room %s: advancing failed", room_id)

    async def start(self) -> int:
        """Application startup: settle and advance every running match (a board that ended while the
        server was down). Returns how many matches are running."""
        ids = await self.manager.run_db(self.store.running)
        for mid in ids:
            try:
                await self.advance(mid)
            except Exception:  # noqa: BLE001
                log.exception("team match %s: resuming failed", mid)
        return len(ids)


def match_json(m: MatchInfo, plays: list[BoardPlay], viewer: Any) -> dict[str, Any]:
    """The match for ``viewer`` (a ``User`` or None): module docstring. Nothing of a board that is not
    :func:`~guandan.server.teammatch.board_open` is in it (no result, no game, no card)."""
    name = getattr(viewer, "name", None)
    tables = []
    my_table = None
    for table in (1, 2):
        seats = seating(m.seats, table)
        current = next((p for p in plays if p.table == table and p.result is None), None)
        mine = name is not None and any(s.lower() == name.lower() for s in seats)
        if mine:
            my_table = table
        done = sum(1 for p in plays if p.table == table and p.result is not None)
        tables.append({"table": table, "seats": list(seats), "board": None if current is None else current.board,
                       "played": done, "room": current.room if (mine and current is not None) else None})
    boards = []
    for k in range(1, m.n_boards + 1):
        by = {p.table: p for p in plays if p.board == k}
        status = ["played" if t in by and by[t].result is not None else "playing" if t in by else "open"
                  for t in (1, 2)]
        row: dict[str, Any] = {"number": k, "status": status, "open": board_open(k, plays),
                               "results": None, "score": None, "games": []}
        if row["open"]:
            t1, t2 = by[1].result, by[2].result
            row["results"], row["score"] = [t1, t2], int(t1) + int(t2)  # type: ignore[arg-type]
            row["games"] = [{"table": t, "game": by[t].game,
                             "replay_url": None if by[t].game is None else f"/replay/{by[t].game}",
                             "review_url": None if by[t].game is None else f"/review/{by[t].game}"} for t in (1, 2)]
        boards.append(row)
    diff, pa, pb = totals(plays, m.n_boards)
    return {"id": m.id, "name": m.name, "status": m.status, "ranked": m.ranked, "preset": m.preset,
            "n_boards": m.n_boards, "teams": m.seats, "tables": tables, "my_table": my_table, "boards": boards,
            "difference": diff, "points": [pa, pb], "boards_scored": sum(1 for b in boards if b["open"]),
            "tournament": None if m.tournament is None else {"id": m.tournament[0], "round": m.tournament[1],
                                                             "table": m.tournament[2]}}


def _match_id(text: str) -> int:
    if not (text.isascii() and text.isdigit() and len(text) <= 9):
        raise error(404, "no such team match", "no_team_match", {})
    return int(text)


def make_teammatch_router(service: TeamMatchService) -> APIRouter:
    """The team matches' routes (module docstring)."""
    router = APIRouter()
    store, manager = service.store, service.manager

    def load(text: str) -> MatchInfo:
        m = store.get(_match_id(text))
        if m is None:
            raise error(404, "no such team match", "no_team_match", {})
        return m

    def running_of(user_id: int) -> int:
        return store.running_count(user_id)

    @router.post("/api/teammatches")
    async def create(user: RequiredUser, request: Request) -> Any:
        """Create a team match and start board 1 at both tables: ``{id, url}``."""
        if user.is_guest:
            raise error(403, "register to organise a team match", "guest_not_allowed", {})
        try:
            body = await request.json()
        except ValueError:
            body = None
        try:
            setup = parse_setup(body)
        except ValueError as e:
            field, message = e.args if len(e.args) == 2 else ("body", str(e))
            raise error(400, f"{field}: {message}", "bad_team_match", {"field": field}) from None
        if await manager.run_db(running_of, user.id) >= MAX_RUNNING:
            raise error(429, f"you already run {MAX_RUNNING} team matches; let one finish first",
                        "too_many_team_matches", {"limit": MAX_RUNNING})
        try:
            mid = await service.create(setup, user.id)
        except NotAnAccount as e:
            raise error(409, f"{e.name} has no account: a team match seats accounts or bots", "not_an_account",
                        {"name": e.name}) from None
        return {"id": mid, "url": f"/teammatch/{mid}"}

    @router.get("/api/teammatches")
    def listing(user: CurrentUser) -> Any:
        """The newest team matches."""
        return {"matches": [{"id": m.id, "name": m.name, "status": m.status, "n_boards": m.n_boards,
                             "ranked": m.ranked} for m in store.recent(50)]}

    @router.get("/api/teammatches/{match_id}")
    def get_match(match_id: str, user: CurrentUser) -> Any:
        """The match for the viewer (nothing of a board before both tables played it)."""
        m = load(match_id)
        store.settle(m.id)
        return match_json(store.get(m.id) or m, store.plays(m.id), user)

    @router.post("/api/teammatches/{match_id}/tables/{table}/next")
    async def next_board(match_id: str, table: str, user: RequiredUser) -> Any:
        """Start the next board at ``table`` (its players or the organiser)."""
        m = await manager.run_db(load, match_id)
        if table not in ("1", "2"):
            raise error(404, "a team match has tables 1 and 2", "no_table", {"table": table[:4]})
        t = int(table)
        seated = any(s.lower() == user.name.lower() for s in seating(m.seats, t))
        if not seated and user.id != m.organiser:
            raise error(403, "only the table's players or the organiser start its boards", "not_your_table",
                        {"table": t})
        await manager.run_db(store.settle, m.id)
        m = await manager.run_db(load, match_id)
        if m.status != "playing":
            raise error(409, "the match is over", "team_match_over", {})
        room = await manager.run_db(store.start_board, m.id, t)
        if room is None:
            raise error(409, f"table {t} is playing a board (each board is played once per table)",
                        "board_in_progress", {"table": t})
        await manager.start_game(room, grace_s=service.grace_s)
        plays = await manager.run_db(store.plays, m.id)
        return {"room": room, "board": next(p.board for p in plays if p.room == room)}

    return router


__all__ = ["MAX_RUNNING", "TeamMatchService", "make_teammatch_router", "match_json"]
