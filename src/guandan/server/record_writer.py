"""The record writer: the tables' record lines stored off the event loop, in order, with retries.

It is the single-process and cluster implementation of :class:`guandan.server.table.ports.RecordSink`
(the cluster's fencing comes through the store it writes to and the manager's ``ownership``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from typing import TYPE_CHECKING, Any

from .append_batcher import AppendBatcher
from .gamestore import DuplicateEventError
from .table.info import FINISHED
from .table.views import game_summary

if TYPE_CHECKING:
    from .manager import TableManager
    from .table.flow import Table

log = logging.getLogger("guandan.server.tables")


class RecordWriter:
    """Stores the tables' record lines off the event loop (issue 11: a blocking save on the loop
    froze every table while the connection pool was exhausted; issue 10: append-only rows).

    Per room, writes run one at a time, in order, in :attr:`TableManager.db_executor`; lines
    appended while a write runs are merged into one batch (one transaction, one multi-row insert),
    so a slow database gets fewer, larger writes and no action waits for it. A failed write is
    retried with a growing pause (up to :data:`RETRIES` times); nothing is lost while the
    database comes back. A retry refused as a duplicate (:class:`~guandan.server.gamestore.
    DuplicateEventError`) whose rows equal the batch means the failed try had in fact been
    stored: it counts as done. Any other duplicate means another writer stored different lines
    (two owners of one table): it is logged as an error, counted in :attr:`lost`, the room's
    later appends are dropped (they would leave holes), and the game's end is not stored by this
    writer (:attr:`conflicted`): the other writer's record is kept. After :meth:`halt` (the
    server lost its database lock), or once a write was refused by the database's fencing token
    (:class:`~guandan.server.dblock.DatabaseFenced`), nothing more is stored. A game's end (:meth:`finish`) is stored after the room's pending appends, then
    ``game_over`` is sent.

    Args:
        manager: the :class:`TableManager` (its ``store`` and ``db_executor``).
    """

    #: attempts of one write before it is given up (logged)
    RETRIES = 30

    def __init__(self, manager: TableManager) -> None:
        self.manager = manager
        self._pending: dict[str, deque[list[Any]]] = {}
        self._tasks: dict[str, asyncio.Task[None]] = {}
        #: rooms whose rows conflict with this server's (appends dropped until the game ends)
        self._broken: set[str] = set()
        #: writes that failed for good (tests and monitoring)
        self.lost = 0
        #: writes that failed once and were retried
        self.retried = 0
        #: appends of all rooms gathered into one transaction
        self._batch = AppendBatcher(manager)
        #: write transactions run and record lines stored by them (benchmarks)
        self.batches = 0
        self.lines_written = 0
        #: per room, record lines stored so far (index of the first line not known stored); the
        #: cluster publishes a change's frames once its lines are stored (:meth:`wait_stored`)
        self.stored: dict[str, int] = {}
        self._progress: dict[str, asyncio.Event] = {}
        #: rooms where this writer met a line stored by another writer: their game's end is never
        #: stored by this writer (the other writer's game is the one kept; issue 26 item 1)
        self.conflicted: set[str] = set()
        #: set once this server lost its right to the database (``dblock``): nothing more is stored
        self.halted = False

    def halt(self) -> None:
        """Store nothing more, from now on (this server lost the database lock: another server may
        be serving the database). Thread-safe: only sets a flag that the writes check."""
        self.halted = True

    def start(self, room_id: str, lines: list[str]) -> None:
        """Queue a new game's header and first events (:meth:`GameStore.start`: the room becomes
        ``playing``)."""
        self._queue(room_id, ["start", 0, list(lines)])

    def append(self, room_id: str, index: int, lines: list[str]) -> None:
        """Queue record ``lines`` for indices ``index``, ``index + 1``, ... (:meth:`GameStore.append`)."""
        self._queue(room_id, ["append", index, list(lines)])

    def finish(self, table: Table, record: str, winner: int | None) -> None:
        """Queue the end of ``table``'s game: store it (``RoomStore.finish``), then send every
        connection ``{"type": "game_over", "winner_team", "game_id"}``."""
        self._queue(table.id, ["finish", table, record, winner])

    def _queue(self, room_id: str, item: list[Any]) -> None:
        if self.halted:
            return
        q = self._pending.setdefault(room_id, deque())
        if q and q[-1][0] == "finish":  # nothing is written after a game's end
            return
        if item[0] == "append" and q and q[-1][0] == "append" and q[-1][1] + len(q[-1][2]) == item[1]:
            q[-1][2].extend(item[2])  # one batch with the lines still waiting
        else:
            q.append(item)
        task = self._tasks.get(room_id)
        if task is None or task.done():
            self._tasks[room_id] = asyncio.get_running_loop().create_task(self._run(room_id))

    def _fenced(self, room_id: str, q: Any, broken: bool) -> None:
        """A write refused because this process lost the table's lease (cluster): drop the room's
        queued writes (``broken``: and its later lines until the game ends) and hand the table to
        the new owner, which stores them."""
        q.clear()
        if broken:
            self._broken.add(room_id)
        self.manager.ownership.demote(room_id, "fenced before a write")  # a cluster's new owner stores them

    def _lock_lost(self, room_id: str, exc: Exception) -> None:
        """A write refused by the database fence (:class:`~guandan.server.dblock.DatabaseFenced`:
        a newer server claimed the database): store nothing more, from any room."""
        self.halt()
        self.lost += 1
        log.error("room %s: %s; this server stores nothing more", room_id, exc)

    async def _run(self, room_id: str) -> None:
        games = self.manager.store.games
        q = self._pending.get(room_id)
        while q and not self.halted:
            item = q.popleft()
            if item[0] == "finish":
                self._broken.discard(room_id)
                if room_id in self.conflicted:  # another writer's lines are stored: never overwrite them
                    self.conflicted.discard(room_id)
                    self.lost += 1
                    log.error("room %s: not storing the end of the game: another server stored lines of this "
                              "room, and its record is the one kept", room_id)
                    continue
                for attempt in range(self.RETRIES):
                    try:
                        await self._finish(*item[1:])
                        break
                    except asyncio.CancelledError:
                        raise
                    except Exception as e:  # noqa: BLE001 - retried (storing is compare-and-set)
                        if getattr(e, "fenced", False):  # cluster: the new owner stores the end
                            self._fenced(room_id, q, broken=False)
                            break
                        if getattr(e, "lock_lost", False):  # a newer server serves the database
                            self._lock_lost(room_id, e)
                            break
                        self.retried += 1
                        if attempt == self.RETRIES - 1:
                            self.lost += 1
                            log.exception("room %s: storing the end of the game failed for good", room_id)
                        else:
                            log.warning("room %s: storing the end of the game failed; retrying", room_id)
                            await asyncio.sleep(min(5.0, 0.2 * (attempt + 1)))
                continue
            if room_id in self._broken:
                continue
            kind, index, lines = item
            for attempt in range(self.RETRIES):
                try:
                    if kind == "start":
                        await self.manager.run_db(games.start, room_id, lines[0], lines[1:])
                    elif attempt == 0:
                        await self._batch.append(room_id, index, lines)
                    else:
                        await self.manager.run_db(games.append, room_id, index, lines)
                    self.batches += 1
                    self.lines_written += len(lines)
                    self._stored_through(room_id, index + len(lines))
                    break
                except asyncio.CancelledError:
                    raise
                except DuplicateEventError:
                    if attempt > 0:
                        try:
                            stored = await self.manager.run_db(games.lines, room_id, index, index + len(lines))
                        except Exception:  # noqa: BLE001 - compared again on the next try
                            stored = None
                        if stored == lines:  # the earlier, failed-looking try had been stored
                            self._stored_through(room_id, index + len(lines))
                            break
                        if stored is None:
                            await asyncio.sleep(min(5.0, 0.2 * (attempt + 1)))
                            continue
                    self.lost += 1
                    self._broken.add(room_id)
                    self.conflicted.add(room_id)
                    log.error("room %s: record line %d is stored already with other content (another server "
                              "writes this table?); this server stops storing its lines", room_id, index)
                    # another owner took the table (cluster): stop here
                    self.manager.ownership.demote(room_id, "a record line was stored by another owner")
                    break
                except Exception as e:  # noqa: BLE001 - retried
                    if getattr(e, "fenced", False):  # cluster: the lease is lost; the new owner writes
                        self._fenced(room_id, q, broken=True)
                        break
                    if getattr(e, "lock_lost", False):  # a newer server serves the database
                        self._lock_lost(room_id, e)
                        break
                    self.retried += 1
                    if attempt == self.RETRIES - 1:
                        self.lost += 1
                        self._broken.add(room_id)
                        log.exception("room %s: writing the record failed for good", room_id)
                    else:
                        log.warning("room %s: writing the record failed; retrying", room_id)
                        await asyncio.sleep(min(5.0, 0.2 * (attempt + 1)))
        self._pending.pop(room_id, None)
        self._tasks.pop(room_id, None)
        ev = self._progress.pop(room_id, None)
        if ev is not None:
            ev.set()  # the writer stopped: nobody waits for lines it will not write

    async def _finish(self, table: Table, record: str, winner: int | None) -> None:
        try:
            table.game_id = await self.manager.run_db(self.manager.store.finish, table.info, record, winner)
        except Exception as e:  # the game is stored as the room's record at least
            if getattr(e, "fenced", False) or getattr(e, "lock_lost", False):  # another writer stores it
                raise
            log.exception("room %s: storing the finished game failed", table.id)
            await self.manager.run_db(self.manager.store.save, table.id, record, FINISHED)
        go: dict[str, Any] = {"type": "game_over", "winner_team": winner, "game_id": table.game_id}
        if table.game is not None and table.game.over:
            go["summary"] = game_summary(table.game)
        table.final = {k: v for k, v in go.items() if k != "type"}
        table._broadcast()  # the state a reloaded page gets now carries the stored game's id
        for c in list(table.conns):
            c.send(go)
        self.manager._finished(table)

    def _stored_through(self, room_id: str, n: int) -> None:
        if n > self.stored.get(room_id, 0):
            self.stored[room_id] = n
        ev = self._progress.pop(room_id, None)
        if ev is not None:
            ev.set()

    async def wait_stored(self, room_id: str, n: int, timeout_s: float = 30.0) -> None:
        """Wait (at most ``timeout_s`` seconds) until the room's record lines ``0 .. n - 1`` are
        stored, or its writer has nothing left to do (a finished game, a refused write); unlike
        :meth:`wait`, lines queued later (the next bot move) are not waited for."""
        end = time.monotonic() + timeout_s
        while self.stored.get(room_id, 0) < n:
            task = self._tasks.get(room_id)
            left = end - time.monotonic()
            if task is None or task.done() or left <= 0:
                return
            ev = self._progress.setdefault(room_id, asyncio.Event())
            try:
                await asyncio.wait_for(ev.wait(), left)
            except TimeoutError:
                return

    def forget(self, room_id: str) -> None:
        """Drop what is known of ``room_id``'s stored lines (its game ended or moved away)."""
        self.stored.pop(room_id, None)

    async def wait(self, room_id: str, timeout_s: float = 30.0) -> None:
        """Wait (at most ``timeout_s`` seconds) until the room's queued writes are done."""
        task = self._tasks.get(room_id)
        if task is not None and not task.done():
            await asyncio.wait([task], timeout=timeout_s)

    async def flush(self, timeout_s: float = 30.0) -> None:
        """Wait (at most ``timeout_s`` seconds) until every queued write is done."""
        end = time.monotonic() + timeout_s
        while self._tasks and time.monotonic() < end:
            await asyncio.wait(list(self._tasks.values()), timeout=max(0.01, end - time.monotonic()))
