"""Online tournament rounds in cluster mode (issue 21 item 4 on ``guandan serve --redis``): the match
clock, lateness and the result entering run at the process that owns each table, and move with it.

:class:`ClusterRounds` is the :class:`~guandan.server.tournament_rounds.OnlineRounds` of a cluster
process (the application picks it when ``settings.redis_url`` is set). What it changes:

* **Opening a round.** Any process pairs the round and creates its rooms and ``tournament_tables`` rows
  (:meth:`OnlineRounds.open_round`, unchanged); :meth:`ClusterRounds.start_rooms` then offers the rooms
  to the cluster (:meth:`~guandan.server.cluster.node.ClusterNode.offer`: every live process tries to
  take each, one wins per room), so a round's tables spread over the processes. A room nobody takes
  (the offer was lost) is ``playing`` in the database and the sweeps take it within ``lease_s / 3``.
* **Taking a table** (hook ``on_take``, before its connections are served): the table's
  :class:`~guandan.server.table.competition.Competition` is registered with the deadline and the
  timeouts stored in its row (so the match clock resumes from the stored deadline, R58, and the
  R54 counts go on), lateness is watched from the stored start and arrivals, and a game not started
  yet (a new round, or an owner that died before starting it) is started here; an extra deal's room
  (R58, a drawn knock-out match) calls time as it starts.
* **Dropping a table** (hook ``on_drop``: released, lease lost, shutdown): its clock task and
  lateness watch stop here; the next owner starts them again from the row.
* **Entering the result** runs at the owner when its game is stored (``TableManager._finished``, as
  on one process), through the same :meth:`OnlineRounds._enter`: the tournament is written over the
  version it was read at and the row moves ``playing → entered`` in the same transaction, so a result
  is entered exactly once whichever process, and however many, try.
* **A finished game whose result is not in** (its owner was killed between storing the game and
  entering it; a finished room is not swept like a playing one): every process looks every
  :data:`FINISH_S` seconds for rows still ``playing`` whose room is finished and nobody owns, and
  enters the result from the stored record once it saw the room so on two looks in a row (a live
  owner enters within milliseconds of releasing the lease, with the timeouts it counted last); the
  same version check makes this safe to race.

Not moved across processes: ``set_deadline``, ``release`` (a result typed by the organiser) and
``refresh_decision`` act on the tables this process owns; at another process's table the typed
result still wins (the row is ``entered``, the game's own result is then ignored) and the clock
task there stops when the game ends.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Callable
from typing import Any

from sqlalchemy import select

from guandan.tournament.director import find_match
from guandan.tournament.model import from_json

from . import models
from .table import competition
from .table.competition import Competition
from .table.info import FINISHED
from .tournament_rounds import OnlineError, OnlineRounds, _Live

log = logging.getLogger("guandan.server.tournaments")

#: seconds between two looks for finished games whose result is not entered (any process)
FINISH_S = 2.0


class ClusterRounds(OnlineRounds):
    """The online rounds of one cluster process: the tables it owns (see the module docstring).

    Args:
        session_factory: ``sessionmaker`` of the cluster's database.
        manager: the process's :class:`~guandan.server.manager.TableManager`, its cluster node attached
            (``manager.cluster``); the hooks are registered on that node.
        clock: the time in epoch seconds (``time.time``).
    Raises:
        ValueError: ``manager`` has no cluster node.
    """

    def __init__(self, session_factory: Callable[[], Any], manager: Any,
                 clock: Callable[[], float] = time.time) -> None:
        super().__init__(session_factory, manager, clock)
        if manager.cluster is None:
            raise ValueError("ClusterRounds needs a cluster node (serve --redis)")
        self.node = manager.cluster
        self.node.on_take.append(self.on_take)
        self.node.on_drop.append(self.on_drop)
        self._finisher: asyncio.Task[None] | None = None
        #: results entered by this process's look for finished games (monitoring and tests)
        self.recovered = 0
        #: finished rooms with a ``playing`` row and no owner at the last look
        self._suspects: set[str] = set()

    # -- a round starts ------------------------------------------------------------------------
    async def start_rooms(self, room_ids: list[str]) -> None:
        """Offer the new rooms to the cluster; each one's owner starts its game (:meth:`on_take`)."""
        await self.node.offer(list(room_ids))

    async def on_take(self, table: Any) -> None:
        """Hook: this process now owns ``table``. A tournament table still ``playing`` gets its match
        clock, timeouts and lateness from its row, and its game is started if it was not."""
        room_id = table.id
        if not await self._register(room_id):
            return
        if table.game is None:
            info = await self.manager.run_db(self.manager.store.load, room_id)
            if info is not None:
                await table.begin(info)
        comp = self.manager.competitions.get(room_id)
        if comp is not None and comp.play_deal and table.game is not None:
            async with table.lock:  # R58's extra deal: one deal at level 2
                if not table.game.time_called:
                    competition.call_time(table, play_deal=True)
        self._ensure_watcher()

    def on_drop(self, room_id: str) -> None:
        """Hook: this process no longer owns ``room_id``: its clock and lateness watch stop here."""
        self._forget(room_id)
        self.manager.competitions.pop(room_id, None)

    async def _clock_task(self, room_id: str) -> None:
        """The match clock of an owned table (:meth:`OnlineRounds._clock_task`); never opens a table
        this process does not own."""
        if room_id not in self.node.owned:
            return
        await super()._clock_task(room_id)

    async def _extra_deal(self, old_room: str) -> None:
        """R58: a drawn knock-out match: the extra deal's room is offered to the cluster like a new table."""
        self._forget(old_room)
        room_id = await self.manager.run_db(self._open_extra, old_room)
        await self.start_rooms([room_id])

    async def _connections(self, room_ids: list[str]) -> dict[str, list[bool]]:
        """Connections over every process (Redis; blocking, so off the event loop)."""
        def read() -> dict[str, list[bool]]:
            return {r: self.manager.connected(r) for r in room_ids if r in self.node.owned}

        return await self.manager.run_db(read)  # type: ignore[no-any-return]

    # -- the server starts and stops -----------------------------------------------------------
    async def start(self) -> int:
        """Application startup: open the tables a crash left unmade and offer them; start the look
        for finished games. The playing tables are taken by the sweeps (:meth:`on_take` resumes
        each). Returns 0 (no table is resumed here)."""
        for tid, number in await self.manager.run_db(self._unfinished_online_rounds):
            try:
                made = await self.manager.run_db(self.open_round, tid, number)
            except OnlineError as e:
                log.error("tournament %s round %s: cannot open its tables: %s", tid, number, e)
                continue
            await self.start_rooms(made)
        if self._finisher is None or self._finisher.done():
            self._finisher = asyncio.get_running_loop().create_task(self._finish_loop())
        return 0

    async def shutdown(self) -> None:
        """Stop the look for finished games, the clocks and the watcher."""
        if self._finisher is not None:
            self._finisher.cancel()
        await super().shutdown()

    # -- finished games whose result is not in -------------------------------------------------
    async def _finish_loop(self) -> None:
        while True:
            await asyncio.sleep(FINISH_S * random.uniform(0.8, 1.2))
            try:
                await self.finish_orphans()
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - looked at again next time
                log.exception("online rounds: entering finished games failed")

    async def finish_orphans(self) -> int:
        """Enter the result of every finished game whose row is still ``playing`` and whose room no
        process owned at this look and the one before. Returns how many this call entered."""
        rooms = [r for r, status in await self.manager.run_db(self._playing_rooms) if status == FINISHED]
        rooms = [r for r in rooms if r not in self.node.owned]
        if not rooms:
            self._suspects = set()
            return 0
        held = await self.node.r.mget([self.node.keys.lease(r) for r in rooms])
        free = {r for r, lease in zip(rooms, held, strict=True) if lease is None}  # with a lease: its owner enters it
        # only a room seen so on two looks in a row: a live owner releases the lease as the game is
        # stored and enters the result a few milliseconds later, with the timeouts it counted last
        ready, self._suspects = free & self._suspects, free
        n = 0
        for room_id in sorted(ready):
            self._suspects.discard(room_id)
            table = await self.manager.load_table(room_id)
            if table is None or table.game is None or not table.game.over:
                continue
            comp, live = await self.manager.run_db(self._from_row, room_id)
            if comp is None:
                continue
            result = self._result(table.game, comp, live)
            ends = [e for e in table.game.events if e["type"] == "deal_end"]
            head = "ab"[ends[-1]["finish_order"][0] % 2] if ends else None
            got = await self.manager.run_db(self._enter, room_id, result, table.game_id, "entered", head)
            log.info("room %s: the finished game's result, not entered by its owner: %s", room_id, got)
            if got == "entered":
                n += 1
                self.recovered += 1
            elif got == "extra":
                await self._extra_deal(room_id)
        return n

    def _from_row(self, room_id: str) -> tuple[Competition | None, _Live | None]:
        """The table's competition (timeouts) and lateness as stored in its row (blocking)."""
        with self.session_factory() as db:
            tt = db.scalars(select(models.TournamentTableRow).where(
                models.TournamentTableRow.room_id == room_id)).first()
            row = None if tt is None else db.get(models.TournamentRow, tt.tournament_id)
            if tt is None or row is None or tt.state != "playing":
                return None, None
            t = from_json(row.state)
            _r, m = find_match(t, tt.round, tt.table_no)
            bots = (bool(t.entry(m.a).bot), bool(t.entry(m.b).bot)) if m.b is not None else (True, True)
            comp = Competition(tt.tournament_id, tt.round, tt.table_no, tt.deadline, [tt.timeouts_a, tt.timeouts_b])
            live = _Live(tt.id, tt.tournament_id, tt.started_at, t.late_minutes, t.late_action, bots,
                         [tt.arrived_a, tt.arrived_b])
            return comp, live


__all__ = ["FINISH_S", "ClusterRounds"]
