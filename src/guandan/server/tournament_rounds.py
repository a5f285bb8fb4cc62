"""Online tournament rounds (issue 21 item 4): rooms for a paired round, the match clocks, lateness,
timeouts, and the results flowing into the tournament.

The deciding code stays in :mod:`guandan.tournament` (seating, the result of a game, entering it once)
and in the table's flow (:mod:`guandan.server.table.competition`: the match clock, delayed spectating,
timeouts per pair); this module creates the rooms, stores what must survive a restart in
``tournament_tables`` (:class:`~guandan.server.models.TournamentTableRow`) and calls them.

* :meth:`OnlineRounds.open_round` (a handler's worker thread, after the round is paired): one room per
  table, pair a in seats 0/2 and pair b in 1/3, the tournament's preset and overrides, the move clocks
  (R53: ``clock_lead_s``/``clock_follow_s``), each room ``playing``; one ``tournament_tables`` row per
  table with the round's start and the match clock's deadline (R58: ``match_minutes``, or
  ``knockout_minutes`` in a knock-out). :meth:`start_rooms` (on the event loop) starts the games and
  arms the clocks. Both are idempotent: a table that has a row keeps it.
* At the deadline the deal in progress is finished and the game ends (:func:`competition.call_time`).
* Every move-clock timeout is stored per pair (``timeouts_a``/``timeouts_b``, R54).
* Lateness (``Tournament.late_minutes``): a pair arrives when one of its players has an open connection
  (a bot pair has arrived). In both modes a pair's minutes late go into the result (R54: +1 level for
  the opponents per full 5 minutes). ``late_action == "forfeit"`` (the default): a pair still missing N
  minutes after the start forfeits (result ``absent``; the room's game is abandoned). ``"levels"``: the
  pair may come at any time and plays on.
* When the game is stored, its result (levels reached, A passed, time called, timeouts, minutes late) is
  entered through :func:`guandan.tournament.online.enter_online_result`: the tournament state is written
  only over the version it was read at and the table's row moves from ``playing`` to ``entered`` in the
  same transaction, so a repeated event or a restart never enters it twice. The results of games that
  end within half a second of each other are entered in one write (:mod:`.tournament_entries`).
* A drawn knock-out match (R58) is settled by one extra deal at level 2 in a new room with the same
  seats (``pending`` keeps the drawn result meanwhile); the team that takes 头游 wins.
* :meth:`start` (application startup): every table still ``playing`` is registered again with its stored
  deadline and timeouts; a game that ended while the server was down is entered from its stored record.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import bindparam, select, update

from guandan.core.rules import RuleSet
from guandan.tournament.director import find_match
from guandan.tournament.model import LEVEL_MIN, Tournament, from_json
from guandan.tournament.online import (decision_of, forfeit_result, late_minutes,
                                       match_minutes, result_of_game, seating)

from . import models
from .tournament_entries import Entry, ResultQueue, enter_many
from .tournament_parsed import ParsedStates
from .table import competition
from .table.bots import bot_agent
from .table.competition import Competition
from .table.info import FINISHED, PLAYING

log = logging.getLogger("guandan.server.tournaments")

#: seconds between two looks at who is connected (arrival, lateness)
WATCH_S = 1.0


class OnlineError(Exception):
    """A round that cannot be played online: ``code`` (``not_an_account``, ``team_online``) and
    ``params`` (``name``: the player without an account)."""

    def __init__(self, message: str, code: str, **params: Any) -> None:
        super().__init__(message)
        self.code = code
        self.params = params

    def http(self) -> Any:
        """The API error (409 with ``code`` and ``params``) answered for it."""
        from .tournament_store import api_error

        return api_error(409, str(self), self.code, self.params)


@dataclass
class _Live:
    """What the watcher keeps of one playing table."""

    row_id: int
    tournament_id: int
    started: float
    late_minutes: int | None
    late_action: str
    bot_sides: tuple[bool, bool]
    arrived: list[float | None]


def check_accounts(db: Any, t: Tournament) -> None:
    """Raise :class:`OnlineError` unless every active entry of ``t`` can sit at an online table: a bot
    entry, or two players whose names are registered accounts (``not_an_account``), and no team
    tournament (``team_online``)."""
    if t.team:
        raise OnlineError("team matches are not played online", "team_online")
    check_players_are_accounts(db, t)


def check_players_are_accounts(db: Any, t: Tournament) -> None:
    """Raise :class:`OnlineError` (``not_an_account``) unless every player of every active entry that is
    not a bot entry (a pair's two, a team's four) is a registered account: an online table seats accounts."""
    from .auth import find_user

    for e in t.entries:
        if not e.active or e.bot:
            continue
        for p in e.players:
            u = find_user(db, p.account or p.name)
            if u is None or u.is_guest:
                raise OnlineError(f"{p.name} has no account: an online round seats accounts", "not_an_account",
                                  name=p.name)


def playing_table(db: Any, tournament_id: int, round_no: int, table: int) -> Any:
    """The ``tournament_tables`` row of an online table whose game is still being played (state
    ``playing``), or None (a physical table, a bye, a table whose result is in, forfeit or held)."""
    return db.scalars(select(models.TournamentTableRow).where(
        models.TournamentTableRow.tournament_id == tournament_id, models.TournamentTableRow.round == round_no,
        models.TournamentTableRow.table_no == table, models.TournamentTableRow.state == "playing")).first()


def check_hand_result(db: Any, t: Tournament, tournament_id: int, round_no: int, table: int, override: bool,
                      by: str) -> Callable[[Any], None] | None:
    """A result typed by the organiser for ``table`` of ``round_no`` (issue 21 item 4). At an online table
    still being played it is refused with 409 ``table_playing`` unless ``override``; with ``override`` the
    returned callback (``store.change``'s ``extra``, in the same transaction as the result) moves the
    table's row to ``entered`` (note ``override by <name>``), so that the live game's later result is not
    applied a second time (:meth:`OnlineRounds._enter` enters only over ``playing``). None: nothing to do."""
    if t.venue != "online":
        return None
    tt = playing_table(db, tournament_id, round_no, table)
    if tt is None:
        return None
    if not override:
        from .tournament_store import api_error

        raise api_error(409, f"table {table} of round {round_no} is still being played online; send override: true"
                        " to enter its result by hand (the game's own result is then ignored)", "table_playing",
                        {"round": round_no, "table": table, "room": tt.room_id})
    row_id, room = tt.id, tt.room_id

    def mark(_row: Any) -> None:
        done = db.execute(update(models.TournamentTableRow).where(
            models.TournamentTableRow.id == row_id, models.TournamentTableRow.state == "playing")
            .values(state="entered", note=f"override by {by}"[:200]).execution_options(synchronize_session=False))
        if done.rowcount != 1:  # type: ignore[attr-defined]  # the game's result went in meanwhile
            from .tournament_store import STALE_MESSAGE, api_error

            db.rollback()
            raise api_error(409, STALE_MESSAGE, "stale_version", {"room": room})

    return mark


def room_options(t: Tournament) -> dict[str, Any]:
    """The rule options of the tournament's rooms: its preset, its overrides, the move clocks (R53)."""
    rules = RuleSet.from_dict(dict(t.overrides), base=RuleSet.preset(t.preset))
    return rules.replace(clock_lead_s=float(t.clock_lead_s), clock_follow_s=float(t.clock_follow_s)).to_dict()


class OnlineRounds:
    """The online rounds of every tournament of this server (one per application, single process).

    Args:
        session_factory: ``sessionmaker`` of the server's database.
        manager: the :class:`~guandan.server.manager.TableManager` whose rooms play the matches.
        clock: the time in epoch seconds (``time.time``).
    """

    def __init__(self, session_factory: Callable[[], Any], manager: Any,
                 clock: Callable[[], float] = time.time) -> None:
        self.session_factory = session_factory
        self.manager = manager
        self.clock = clock
        self.live: dict[str, _Live] = {}
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._watcher: asyncio.Task[None] | None = None
        #: the last state each tournament's result entry wrote, kept parsed (tournament_parsed)
        self.parsed = ParsedStates()
        #: finished games' results, entered several in one write (tournament_entries)
        self.results = ResultQueue(manager.run_db, functools.partial(enter_many, session_factory, self.parsed))

    # -- a round starts ------------------------------------------------------------------------
    def open_round(self, tournament_id: int, round_no: int) -> list[str]:
        """Create the rooms and rows of round ``round_no`` (blocking: a worker thread). Tables that have a
        row, a result or are byes are skipped. Returns the ids of the rooms created (their games are
        started by :meth:`start_rooms`). Raises :class:`OnlineError` (see :func:`check_accounts`)."""
        from .auth import find_user

        with self.session_factory() as db:
            row = db.get(models.TournamentRow, tournament_id)
            assert row is not None
            t = from_json(row.state)
            check_accounts(db, t)
            rnd = t.played[round_no - 1]
            minutes = match_minutes(t, rnd)
            now = self.clock()
            have = {r.table_no for r in db.scalars(select(models.TournamentTableRow).where(
                models.TournamentTableRow.tournament_id == tournament_id, models.TournamentTableRow.round == round_no))}
            options = room_options(t)
            created: list[str] = []
            for m in rnd.matches:
                if m.b is None or m.result is not None or m.table in have:
                    continue
                room_id = _new_room_id(db)
                name = f"{t.name} · R{round_no} T{m.table}"[:models.ROOM_NAME_MAX]
                db.add(models.Room(id=room_id, name=name, preset=t.preset, options=options,
                                   owner_id=row.organiser_id, status=PLAYING, seed=None, record="",
                                   default_clocks=False))
                db.flush()
                for s, seat in enumerate(seating(t, m)):
                    user = None if seat["bot"] else find_user(db, seat["account"])
                    db.add(models.RoomSeat(room_id=room_id, seat=s, user_id=None if user is None else user.id,
                                           bot=bot_agent(seat["bot"]) if seat["bot"] else None))
                db.add(models.TournamentTableRow(tournament_id=tournament_id, round=round_no, table_no=m.table,
                                                 room_id=room_id, started_at=now,
                                                 deadline=None if minutes is None else now + 60 * minutes,
                                                 timeouts_a=0, timeouts_b=0, state="playing"))
                created.append(room_id)
            db.commit()
            return created

    async def start_rooms(self, room_ids: list[str]) -> None:
        """Register the tables of ``room_ids``, start their games (those not started) and arm the clocks."""
        for room_id in room_ids:
            if await self._register(room_id) and room_id not in self.manager.tables:
                await self.manager.start_game(room_id)
        self._ensure_watcher()

    async def _register(self, room_id: str) -> bool:
        """Load the table's row and register its :class:`Competition`; False when it is not ``playing``."""
        tt, t = await self.manager.run_db(self._row_and_state, room_id)
        if tt is None or tt.state != "playing":
            return False
        comp = self.manager.competitions.get(room_id)
        if comp is None:
            comp = Competition(tt.tournament_id, tt.round, tt.table_no, tt.deadline, [tt.timeouts_a, tt.timeouts_b],
                               listener=self, play_deal=tt.pending is not None)
            self.manager.competitions[room_id] = comp
        rnd = t.played[tt.round - 1]
        _r, m = find_match(t, tt.round, tt.table_no)
        bots = (bool(t.entry(m.a).bot), bool(t.entry(m.b).bot)) if m.b is not None else (True, True)
        self.live[room_id] = _Live(tt.id, tt.tournament_id, tt.started_at, t.late_minutes, t.late_action, bots,
                                   [tt.arrived_a, tt.arrived_b])
        del rnd
        if tt.deadline is not None and room_id not in self._tasks:
            self._tasks[room_id] = asyncio.get_running_loop().create_task(self._clock_task(room_id))
        return True

    def _row_and_state(self, room_id: str) -> tuple[Any, Tournament | None]:
        with self.session_factory() as db:
            tt = db.scalars(select(models.TournamentTableRow).where(models.TournamentTableRow.room_id == room_id)).first()
            if tt is None:
                return None, None
            db.expunge(tt)
            row = db.get(models.TournamentRow, tt.tournament_id)
            return tt, from_json(row.state) if row is not None else None

    # -- the match clock -----------------------------------------------------------------------
    async def _clock_task(self, room_id: str) -> None:
        try:
            while True:
                comp = self.manager.competitions.get(room_id)
                if comp is None or comp.deadline is None:
                    return
                left = comp.deadline - self.clock()
                if left > 0:
                    await asyncio.sleep(min(left, 5.0))  # re-read: the deadline may be moved
                    continue
                table = self.manager.tables.get(room_id) or await self.manager.open(room_id)
                if table is None:
                    return
                async with table.lock:
                    if competition.call_time(table):
                        log.info("room %s: the match clock ran out (R58)", room_id)
                return
        except asyncio.CancelledError:
            raise
        except Exception:  # noqa: BLE001 - never kill the server
            log.exception("room %s: calling time failed", room_id)
        finally:
            if self._tasks.get(room_id) is asyncio.current_task():
                self._tasks.pop(room_id, None)

    async def set_deadline(self, room_id: str, deadline: float | None) -> None:
        """Move the match clock of a playing table to ``deadline`` (epoch seconds; None: untimed), stored
        so that a restart keeps it. Raises ``LookupError`` for a room that is not a playing tournament table."""
        comp = self.manager.competitions.get(room_id)
        if comp is None:
            raise LookupError(f"room {room_id} is not a playing tournament table")
        await self.manager.run_db(self._store, room_id, {"deadline": deadline})
        comp.deadline = deadline
        task = self._tasks.pop(room_id, None)
        if task is not None:
            task.cancel()
        if deadline is not None:
            self._tasks[room_id] = asyncio.get_running_loop().create_task(self._clock_task(room_id))
        table = self.manager.tables.get(room_id)
        if table is not None:
            async with table.lock:
                table._broadcast()

    def _store(self, room_id: str, values: dict[str, Any]) -> None:
        with self.session_factory() as db:
            db.execute(update(models.TournamentTableRow).where(models.TournamentTableRow.room_id == room_id)
                       .values(**values))
            db.commit()

    def _store_arrivals(self, rooms_of: dict[str, list[str]], at: float) -> None:
        """Store ``arrived_a``/``arrived_b`` = ``at`` for the rooms listed under ``"a"``/``"b"`` in
        one transaction (one ``executemany`` per side)."""
        t = models.TournamentTableRow.__table__
        with self.session_factory() as db:
            conn = db.connection()
            for side, rooms in rooms_of.items():
                if rooms:
                    conn.execute(update(t).where(t.c.room_id == bindparam("rid")).values({f"arrived_{side}": at}),
                                 [{"rid": r} for r in rooms])
            db.commit()

    # -- timeouts (R54) ------------------------------------------------------------------------
    def timed_out(self, room_id: str, side: str, count: int) -> None:
        """A move-clock timeout of pair ``side`` (its ``count``-th): stored off the event loop."""
        task = asyncio.get_running_loop().create_task(
            self.manager.run_db(self._store_timeouts, room_id, side, count))
        task.add_done_callback(_log_failure)

    def _store_timeouts(self, room_id: str, side: str, count: int) -> None:
        col = models.TournamentTableRow.timeouts_a if side == "a" else models.TournamentTableRow.timeouts_b
        with self.session_factory() as db:
            db.execute(update(models.TournamentTableRow).where(models.TournamentTableRow.room_id == room_id,
                                                               col < count).values({col: count}))
            db.commit()

    # -- results -------------------------------------------------------------------------------
    async def game_stored(self, table: Any) -> None:
        """The table's game is over and stored (``table.game_id``): enter its result in the tournament."""
        try:
            game = table.game
            comp = self.manager.competitions.get(table.id)
            live = self.live.get(table.id)
            if game is None or comp is None or not game.over:
                return
            result = self._result(game, comp, live)
            ends = [e for e in game.events if e["type"] == "deal_end"]
            head = "ab"[ends[-1]["finish_order"][0] % 2] if ends else None  # 头游's team (R58 extra deal)
            got, decision = await self.results.enter(Entry(table.id, result, table.game_id, head))
            if got == "extra":
                await self._extra_deal(table.id)
            elif got in ("entered", "already"):
                await self._show_decision(table.id, decision)
        except Exception:  # noqa: BLE001 - logged; the row stays playing and the restart enters it
            log.exception("room %s: entering the tournament result failed", table.id)
        finally:
            self._forget(table.id)

    def _result(self, game: Any, comp: Competition, live: _Live | None) -> Any:
        levels = (game.score.levels[0] + LEVEL_MIN, game.score.levels[1] + LEVEL_MIN)
        passed = game.winner if game.settlements and game.settlements[-1].passed else None
        late = (0, 0)
        if live is not None and live.late_minutes is not None:  # both modes: R54's +1 per 5 minutes late
            now = self.clock()
            late = tuple(0 if live.bot_sides[i] else late_minutes(live.started, live.arrived[i], now)
                         for i in (0, 1))  # type: ignore[assignment]
        return result_of_game(levels, passed, bool(game.time_called), (comp.timeouts[0], comp.timeouts[1]), late)

    def _enter(self, room_id: str, result: Any, game_id: int | None, state: str = "entered",
               head: str | None = None) -> str:
        """Enter ``result`` for the table of ``room_id`` exactly once (see the module docstring).
        Returns ``entered``, ``already`` (entered before: nothing changes), ``extra`` (a drawn knock-out
        match: the result is kept in ``pending`` and the extra deal is to be played) or ``held`` (the
        engine refused it; the row keeps the reason for the organiser). When the row has a ``pending``
        result, the game was its extra deal: ``head`` (the side that took 头游) is its winner (R58)."""
        return self._enter_decided(room_id, result, game_id, head, state)[0]

    def _enter_decided(self, room_id: str, result: Any, game_id: int | None, head: str | None = None,
                       state: str = "entered") -> tuple[str, dict[str, Any] | None]:
        """:meth:`_enter`, and the match's :func:`~guandan.tournament.online.decision_of` read from the
        state just written (``entered``, or ``already`` when the organiser had typed the same result),
        else None: the game-over panel then needs no second read of the whole tournament (a 400-pair
        event's state is 0.4 MB of JSON, parsed in about 15 ms while holding the interpreter lock).
        One result alone through :func:`~guandan.server.tournament_entries.enter_many`; finished games
        go through :attr:`results`, which enters those that end together in one write."""
        got = enter_many(self.session_factory, self.parsed, [Entry(room_id, result, game_id, head, state)])[0]
        if isinstance(got, Exception):
            raise got
        return got

    async def _show_decision(self, room_id: str, decision: dict[str, Any] | None = None) -> None:
        """Put the tournament's decision of the table's match into its state frames (the game-over panel
        shows what the standings say, after R54 penalties) and send them. ``decision``: already read
        (:meth:`_enter_decided`); None: read it from the stored tournament."""
        if decision is None:
            decision = await self.manager.run_db(self._decision, room_id)
        comp = self.manager.competitions.get(room_id)
        if comp is None or decision is None:
            return
        comp.decision = decision
        table = self.manager.tables.get(room_id)
        if table is not None:
            async with table.lock:
                table._broadcast()

    async def refresh_decision(self, tournament_id: int, round_no: int, table: int) -> None:
        """The organiser changed a result (a correction, a penalty): the table of that match, if its game
        is over and shows the decision, shows the new one."""
        room_id = await self.manager.run_db(self._room_of, tournament_id, round_no, table)
        comp = None if room_id is None else self.manager.competitions.get(room_id)
        if comp is not None and comp.decision is not None:
            await self._show_decision(room_id)

    def _room_of(self, tournament_id: int, round_no: int, table: int) -> str | None:
        with self.session_factory() as db:
            return db.scalars(select(models.TournamentTableRow.room_id).where(
                models.TournamentTableRow.tournament_id == tournament_id, models.TournamentTableRow.round == round_no,
                models.TournamentTableRow.table_no == table)).first()

    def _decision(self, room_id: str) -> dict[str, Any] | None:
        with self.session_factory() as db:
            tt = db.scalars(select(models.TournamentTableRow).where(models.TournamentTableRow.room_id == room_id)).first()
            row = None if tt is None else db.get(models.TournamentRow, tt.tournament_id)
            if tt is None or row is None:
                return None
            return decision_of(from_json(row.state), tt.round, tt.table_no)

    async def _extra_deal(self, old_room: str) -> None:
        """R58: the knock-out match of ``old_room`` is drawn: one deal at level 2 in a new room with the
        same seats; the team that takes 头游 wins (:meth:`game_stored` enters it)."""
        self._forget(old_room)
        room_id = await self.manager.run_db(self._open_extra, old_room)
        await self._register(room_id)
        table = await self.manager.start_game(room_id)
        async with table.lock:
            competition.call_time(table, play_deal=True)
        self._ensure_watcher()

    def _open_extra(self, old_room: str) -> str:
        with self.session_factory() as db:
            old = db.get(models.Room, old_room)
            tt = db.scalars(select(models.TournamentTableRow).where(models.TournamentTableRow.room_id == old_room)).one()
            room_id = _new_room_id(db)
            db.add(models.Room(id=room_id, name=old.name, preset=old.preset, options=dict(old.options),
                               owner_id=old.owner_id, status=PLAYING, seed=None, record="", default_clocks=False))
            db.flush()
            for s in old.seats:
                db.add(models.RoomSeat(room_id=room_id, seat=s.seat, user_id=s.user_id, bot=s.bot))
            tt.room_id, tt.deadline = room_id, None
            db.commit()
            return room_id

    def release(self, room_id: str) -> None:
        """Stop watching the table of ``room_id`` (its clock, lateness): its result was entered by hand
        (on the event loop)."""
        self._forget(room_id)

    def _forget(self, room_id: str) -> None:
        self.live.pop(room_id, None)
        task = self._tasks.pop(room_id, None)
        if task is not None and task is not asyncio.current_task():
            task.cancel()

    # -- arrival and lateness ------------------------------------------------------------------
    def _ensure_watcher(self) -> None:
        if self._watcher is None or self._watcher.done():
            self._watcher = asyncio.get_running_loop().create_task(self._watch())

    async def _watch(self) -> None:
        while self.live:
            try:
                await self._look()
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - looked at again next time
                log.exception("online rounds: checking arrivals failed")
            await asyncio.sleep(WATCH_S)

    async def _connections(self, room_ids: list[str]) -> dict[str, list[bool]]:
        """Per room, per seat: whether the seated person has an open connection (this process's tables)."""
        return {room_id: self.manager.connected(room_id) for room_id in room_ids}

    async def _look(self) -> None:
        now = self.clock()
        conns = await self._connections(list(self.live))
        arrivals: dict[str, list[str]] = {"a": [], "b": []}
        for room_id, live in list(self.live.items()):
            conn = conns.get(room_id)
            if conn is None:
                continue
            for i, side in enumerate("ab"):
                if live.arrived[i] is None and (live.bot_sides[i] or conn[i] or conn[i + 2]):
                    live.arrived[i] = now
                    arrivals[side].append(room_id)
        if arrivals["a"] or arrivals["b"]:
            # one transaction for every arrival of this look: a round's start brings hundreds at once,
            # which were hundreds of transactions one after another
            await self.manager.run_db(self._store_arrivals, arrivals, now)
        for room_id, live in list(self.live.items()):
            if conns.get(room_id) is None:
                continue
            if live.late_minutes is None or live.late_action != "forfeit":
                continue
            if now < live.started + 60 * live.late_minutes:
                continue
            missing = [s for i, s in enumerate("ab") if live.arrived[i] is None]
            if missing:
                await self._forfeit(room_id, "both" if len(missing) == 2 else missing[0])

    async def _forfeit(self, room_id: str, absent: str) -> None:
        """R54: the pair ``absent`` (or both) did not arrive in time: the match is lost by absence."""
        got = await self.manager.run_db(self._enter, room_id, forfeit_result(absent), None, "forfeit")
        log.info("room %s: pair %s did not arrive: %s", room_id, absent, got)
        self._forget(room_id)
        try:
            await self.manager.abandon(room_id)
        except Exception as e:  # noqa: BLE001 - the game may have ended meanwhile
            log.info("room %s: not abandoned: %s", room_id, e)

    # -- the server starts and stops -----------------------------------------------------------
    async def start(self) -> int:
        """Application startup: resume every ``playing`` table (its stored deadline and timeouts), enter
        the result of a game that ended while the server was down. Returns the tables resumed."""
        for tid, number in await self.manager.run_db(self._unfinished_online_rounds):
            try:  # a round paired just before the server stopped, its rooms not all made yet
                made = await self.manager.run_db(self.open_round, tid, number)
            except OnlineError as e:
                log.error("tournament %s round %s: cannot open its tables: %s", tid, number, e)
                continue
            if made:
                await self.start_rooms(made)
        rows = await self.manager.run_db(self._playing_rooms)
        n = 0
        ended: list[Any] = []
        for room_id, status in rows:
            if not await self._register(room_id):
                continue
            if status == FINISHED:
                table = self.manager.tables.get(room_id) or await self.manager.open(room_id)
                if table is not None and table.game is not None and table.game.over:
                    table.game_id = table.game_id or await self.manager.run_db(self.manager.store.game_id_of, room_id)
                    ended.append(table)
                continue
            table = self.manager.tables.get(room_id) or await self.manager.open(room_id)
            comp = self.manager.competitions.get(room_id)
            if table is not None and comp is not None and comp.play_deal and table.game is not None:
                async with table.lock:  # the extra deal's room started before the server stopped
                    if not table.game.time_called:
                        competition.call_time(table, play_deal=True)
            n += 1
        # the games that ended while the server was down, entered together (one write per tournament)
        await asyncio.gather(*(self.game_stored(table) for table in ended))
        self._ensure_watcher()
        return n

    def _unfinished_online_rounds(self) -> list[tuple[int, int]]:
        """``(tournament, round)`` of every running online tournament whose latest round is not complete."""
        out = []
        with self.session_factory() as db:
            for row in db.scalars(select(models.TournamentRow).where(models.TournamentRow.status == "running")):
                t = from_json(row.state)
                # a team tournament's rounds are team matches (tournament_teams.py)
                if t.venue == "online" and not t.team and t.played and not t.played[-1].complete:
                    out.append((row.id, t.played[-1].number))
        return out

    def _playing_rooms(self) -> list[tuple[str, str]]:
        with self.session_factory() as db:
            q = (select(models.TournamentTableRow.room_id, models.Room.status)
                 .join(models.Room, models.Room.id == models.TournamentTableRow.room_id)
                 .where(models.TournamentTableRow.state == "playing"))
            return [(r, s) for r, s in db.execute(q)]

    async def shutdown(self) -> None:
        """Stop the clocks and the watcher (their state is stored; :meth:`start` resumes them)."""
        for task in [*self._tasks.values(), *([self._watcher] if self._watcher else [])]:
            task.cancel()
        self._tasks.clear()
        self.results.close()

    # -- reading -------------------------------------------------------------------------------
    def tables_json(self, db: Any, tournament_id: int) -> list[dict[str, Any]]:
        """The online tables of a tournament for its page: ``{round, table, room, state, deadline_ms,
        timeouts: [a, b], game_id}`` each, by round and table."""
        q = (select(models.TournamentTableRow).where(models.TournamentTableRow.tournament_id == tournament_id)
             .order_by(models.TournamentTableRow.round, models.TournamentTableRow.table_no))
        return [{"round": r.round, "table": r.table_no, "room": r.room_id, "state": r.state,
                 "deadline_ms": None if r.deadline is None else int(r.deadline * 1000),
                 "timeouts": [r.timeouts_a, r.timeouts_b], "game_id": r.game_id} for r in db.scalars(q)]


def _new_room_id(db: Any) -> str:
    import secrets

    room_id = secrets.token_urlsafe(6)
    while db.get(models.Room, room_id) is not None:
        room_id = secrets.token_urlsafe(6)
    return room_id


def _log_failure(task: asyncio.Task[Any]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("online rounds: storing a timeout failed: %s", task.exception())


__all__ = ["OnlineRounds", "OnlineError", "check_accounts", "check_hand_result", "playing_table", "room_options"]
