"""Every live table of this process, by room id: loading, restoring, starting and dropping them.

:class:`TableManager` is the host of each :class:`~guandan.server.table.flow.Table`
(:class:`guandan.server.table.ports.TableHost`): it gives the tables their settings, the record
writer and the gate of automatic moves. Persistence (issue 10, :mod:`guandan.server.gamestore`):
the live game's record is stored as one ``game_events`` row per line (:class:`RecordWriter`, off
the event loop); :meth:`TableManager.restore` rebuilds every room with status ``playing`` by
replaying the rows (:func:`guandan.records.replay_lines`), so a server restart loses nothing.

Cluster mode (``settings.redis_url``): the application attaches a
:class:`guandan.server.cluster.ClusterNode` (:meth:`TableManager.attach_cluster`); this module
never imports the cluster. The node is then the table's owner check (:class:`~guandan.server.
table.ports.Ownership`) and the calls below that concern every process go through it.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from .gamestore import StoredRecordError
from .record_writer import RecordWriter
from .roomstore import RoomStore
from .table.bots import make_search_gate
from .table.flow import Table
from .table.info import DAMAGED, FINISHED, PLAYING

log = logging.getLogger("guandan.server.tables")


class SoleOwner:
    """Ownership of a single process (:class:`~guandan.server.table.ports.Ownership`): it owns
    every table, so a write is never fenced and a table is never handed away."""

    def check_lease(self, room: str) -> None:
        """Nothing to check: the one process owns every table."""

    def demote(self, room: str, why: str) -> None:
        """Never happens on one process (no other owner exists)."""


class TableManager:
    """Every live :class:`Table`, by room id.

    Args:
        session_factory: zero-argument callable returning a SQLAlchemy ``Session`` (``sessionmaker``).
        settings: server settings; ``bot_delay_s`` (seconds a bot waits before acting) is used.
        store: the database adaptor (default :class:`RoomStore` over ``session_factory``).
        away_grace_s: seconds the table waits for a person with no open connection before the
            bot plays for the seat (at least ``bot_delay_s``); the bot then keeps the seat (auto)
            until the person reconnects or acts.
    """

    def __init__(
        self,
        session_factory: Callable[[], Any],
        settings: Any = None,
        store: RoomStore | None = None,
        *,
        away_grace_s: float = 2.0,
    ) -> None:
        self.session_factory = session_factory
        self.settings = settings
        self.store = store or RoomStore(session_factory)
        self.away_grace_s = float(away_grace_s)
        #: after a restart, pages reconnect with backoff (up to ~20 s): at a restored table an
        #: absent person is not replaced by the bot for this many seconds (see :meth:`start`)
        self.restart_grace_s = 25.0
        self.closing = False
        self.tables: dict[str, Table] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        #: automatic moves (bots, 托管, clock timeouts) of every table take this in turn, one
        #: per pass of the event loop: people's messages are handled between two of them, so a
        #: person's action is answered at once however many bot moves are due (loadtest p99)
        self.bot_gate = asyncio.Lock()
        #: the searching bots' decisions of every table share the process pool through this
        #: (:mod:`~guandan.server.table.search_gate`); ``None`` with ``search_max_wait_s`` 0
        self.search_gate = make_search_gate(settings)
        #: database work of the tables runs here, never on the event loop
        self.db_executor = ThreadPoolExecutor(max_workers=4, thread_name_prefix="guandan-db")
        self._again_lock = threading.Lock()
        self.writer = RecordWriter(self)
        #: old room id -> the room "play again" made of it (kept after the old table is dropped)
        self.moved: dict[str, str] = {}
        #: cluster mode (``settings.redis_url``): this process's :class:`~guandan.server.cluster.ClusterNode`,
        #: attached by the application (:meth:`attach_cluster`)
        self.cluster: Any = None
        #: who may write the tables (:class:`~guandan.server.table.ports.Ownership`): this process
        #: alone, or the cluster node's leases
        self.ownership: Any = SoleOwner()
        #: room id -> :class:`~guandan.server.table.competition.Competition` (tournament tables,
        #: registered by :class:`guandan.server.tournament_rounds.OnlineRounds`)
        self.competitions: dict[str, Any] = {}
        #: ``f(table)`` called (on the event loop, must not block) when a game has been stored: the team
        #: matches' service (:mod:`guandan.server.api_teammatch`) starts the table's next board
        self.finish_hooks: list[Any] = []
        #: ``f(session_key) -> int`` called by :meth:`revoke_session` (on the event loop): other
        #: long-lived connections of a login session, such as the lobby's friends stream, end too
        self.session_listeners: list[Callable[[str], int]] = []

    def attach_cluster(self, node: Any) -> None:
        """Cluster mode: ``node`` (a :class:`guandan.server.cluster.ClusterNode` built over this
        manager) owns the tables through its leases; every write of :attr:`store` is fenced by
        ``node.check_lease`` (:func:`guandan.server.cluster.make_store_fenced`, done by the caller)."""
        self.cluster = node
        self.ownership = node

    @property
    def settings_bot_delay(self) -> float:
        """``settings.bot_delay_s`` (seconds), 0.6 when no settings were given."""
        return float(getattr(self.settings, "bot_delay_s", 0.6))

    @property
    def ready_timeout_s(self) -> float:
        """``settings.ready_timeout_s``: the longest pause between deals (seconds, default 20)."""
        return float(getattr(self.settings, "ready_timeout_s", 20.0))

    @property
    def timeouts_to_auto(self) -> int:
        """``settings.timeouts_to_auto``: consecutive clock timeouts that turn 托管 on (default 2)."""
        return max(1, int(getattr(self.settings, "timeouts_to_auto", 2)))

    @property
    def public_url(self) -> str | None:
        """``settings.public_url`` (for invite links), or ``None``."""
        url = getattr(self.settings, "public_url", None)
        return url.rstrip("/") if isinstance(url, str) and url else None

    def board_game(self, board: dict[str, Any]) -> Any:
        """A board room's game (:func:`guandan.server.board_rooms.board_game`)."""
        from .board_rooms import board_game

        return board_game(board)

    def replay_board(self, lines: list[str]) -> Any:
        """A board room's record replayed (:func:`guandan.server.board_rooms.replay_board`)."""
        from .board_rooms import replay_board

        return replay_board(lines)

    def next_room(self, room_id: str) -> str | None:
        """The room "play again" created from ``room_id`` while this server runs (any process of
        a cluster), or ``None``."""
        if self.cluster is not None:
            return self.cluster.next_room(room_id)  # type: ignore[no-any-return]
        t = self.tables.get(room_id)
        return t.info.next_room if t is not None else self.moved.get(room_id)

    def connected(self, room_id: str) -> list[bool]:
        """Per seat of ``room_id``: whether the seated person has an open connection (callable
        from a worker thread: a set changed meanwhile is read again). In a cluster: a connection
        on any live process."""
        if self.cluster is not None:
            return self.cluster.connected(room_id)  # type: ignore[no-any-return]
        t = self.tables.get(room_id)
        for _ in range(5):
            try:
                return t.connected() if t is not None else [False] * 4
            except RuntimeError:  # the loop changed the connections while this thread read them
                continue
        return [False] * 4

    async def run_db(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Run the blocking ``fn(*args)`` (database work) in :attr:`db_executor`; returns its result."""
        return await asyncio.get_running_loop().run_in_executor(self.db_executor, functools.partial(fn, *args))

    def restore(self, db: Any = None) -> int:
        """Rebuild every room with status ``playing`` by replaying its stored record.

        Timers (bots, clocks) start when the event loop runs (:meth:`start`); call this before
        serving. ``db`` is accepted for symmetry with the storage API and unused (each room is
        loaded with its own session). Rooms whose record cannot be replayed are logged and skipped.

        Returns:
            The number of tables restored (0 in cluster mode: the processes take the playing
            rooms over through their leases once they run).
        """
        n = 0
        if self.cluster is not None:
            return 0
        for room_id in self.store.playing_ids():
            if room_id in self.tables:
                continue
            table = self._restore_one(room_id)
            if table is None:
                continue
            self.tables[room_id] = table
            n += 1
        return n

    def _restore_one(self, room_id: str) -> Table | None:
        """Load and replay one playing room; a room that fails (a record that is not UTF-8, does
        not parse or does not replay) is marked :data:`DAMAGED` with a one-line log, and the other
        rooms go on (issue 11: one corrupt record stopped the server)."""
        try:
            info = self.store.load(room_id)
            if info is None:
                return None
            table = Table(self, info)
            table.restore_game()
            return table
        except Exception as e:  # noqa: BLE001 - a corrupt record must not stop the server
            text = (str(e).strip().splitlines() or [type(e).__name__])[0]
            log.error("room %s: cannot restore the game (%s); the room is marked %s", room_id, text, DAMAGED)
            try:
                self.store.mark_damaged(room_id)
            except Exception as e2:  # noqa: BLE001
                log.error("room %s: cannot mark the room %s: %s", room_id, DAMAGED, str(e2).splitlines()[0])
            return None

    async def start(self) -> int:
        """Restore the playing rooms and arm their bots and clocks (call at application startup).

        Returns:
            The number of tables restored (cluster mode: 0; the cluster node starts and takes
            free playing rooms over within ``lease_s / 3`` seconds).

        Raises:
            redis.exceptions.ConnectionError: cluster mode and Redis cannot be reached.
        """
        if self.cluster is not None:
            await self.cluster.start()
            return 0
        n = self.restore()
        until = time.monotonic() + self.restart_grace_s
        for table in list(self.tables.values()):
            table.restored_grace_until = until
            async with table.lock:
                table._schedule()
        return n

    async def shutdown(self) -> None:
        """Stop every timer and close every connection (call at application shutdown). In a
        cluster the tables are handed over: each finishes its action in progress, is stored, and
        its lease is released so that another process takes it at once."""
        if self.cluster is not None:
            await self.cluster.stop()
        self.closing = True
        for table in list(self.tables.values()):
            table.shutdown()
        await self.writer.flush()
        self.db_executor.shutdown(wait=False)

    async def open(self, room_id: str) -> Table | None:
        """The table of ``room_id`` for a new connection, loading the room if needed (``None``: no
        such room). A finished room gets a table showing the final state."""
        table = self.tables.get(room_id)
        if table is not None:
            return table
        lock = self._locks.setdefault(room_id, asyncio.Lock())
        async with lock:
            table = self.tables.get(room_id)
            if table is not None:
                return table
            table = await self.load_table(room_id)
            if table is not None:
                self.tables[room_id] = table
                if table.info.status == PLAYING:
                    async with table.lock:
                        table._schedule()
            return table

    async def load_table(self, room_id: str, schedule: bool = True) -> Table | None:
        """A new :class:`Table` of ``room_id`` from the database (game replayed from the stored
        record; a finished room gets its final state and stored game id), not registered and
        with no timer armed. ``None`` when there is no such room. ``schedule`` is accepted for
        the cluster's takeover and unused."""
        try:
            info = await self.run_db(self.store.load, room_id)
        except StoredRecordError as e:  # a row is missing: the game cannot be rebuilt
            log.error("room %s: cannot restore the game (%s); the room is marked %s", room_id, e, DAMAGED)
            await self.run_db(self.store.mark_damaged, room_id)
            info = await self.run_db(self.store.load, room_id)
        if info is None:
            return None
        table = Table(self, info)
        if info.status in (PLAYING, FINISHED) and info.record:
            try:
                table.restore_game()
            except Exception as e:  # noqa: BLE001 - a corrupt record must not stop the server
                log.error("room %s: cannot restore the game: %s", room_id, e)
        if info.status == FINISHED and table.final is not None:
            table.game_id = table.final["game_id"] = await self.run_db(self.store.game_id_of, room_id)
        info.next_room = await self.run_db(self.next_room, room_id) if self.cluster is not None \
            else self.moved.get(room_id)
        return table

    async def room_changed(self, room_id: str) -> None:
        """Reload ``room_id`` from the database and send its connections the new state (seats taken,
        bots added, players left). In a cluster every process's connections of the room hear it."""
        if self.cluster is not None:
            await self.cluster.room_changed(room_id)
            return
        table = self.tables.get(room_id)
        if table is None:
            return
        info = await self.run_db(self.store.load, room_id)
        if info is not None:
            await table.refresh(info)

    async def start_game(self, room_id: str, grace_s: float = 0.0) -> Table:
        """Start the game of ``room_id`` (its four seats filled; the caller checked the owner).

        Args:
            room_id: the room.
            grace_s: seconds during which an absent person is not yet replaced by the bot (a
                page still opening the room: the daily challenge and team matches start a board
                before its page connects); in a cluster the room's owner applies it.
        Returns:
            The live table.
        Raises:
            LookupError: no such room.
            TimeoutError: cluster mode: no process could own the room in time.
        """
        if self.cluster is not None:
            await self.cluster.call(room_id, "start", grace_s=grace_s)
            return self.tables.get(room_id)  # type: ignore[return-value]
        info = await self.run_db(self.store.load, room_id)
        if info is None:
            raise LookupError(f"no room {room_id!r}")
        table = self.tables.get(room_id)
        if table is None:
            table = Table(self, info)
            self.tables[room_id] = table
        if grace_s > 0:
            table.restored_grace_until = max(table.restored_grace_until, time.monotonic() + grace_s)
        await table.begin(info)
        await self.writer.wait(room_id)  # the started game is stored when the API answers
        return table

    def revoke_session(self, session_key: str) -> int:
        """Close every websocket opened with the login session ``session_key`` (``auth.token_key``
        of its token) with code 4401 ``logged out``, and tell :attr:`session_listeners`; call on the
        event loop (logout does).

        Returns:
            The number of connections closed (the listeners' counts included) (in a cluster: those of this process; the other
            processes close theirs when they hear of it).
        """
        n = sum(listener(session_key) for listener in self.session_listeners)
        if self.cluster is not None:
            for proxy in list(self.cluster.proxies.values()):
                for c in list(proxy.conns):
                    if c.session_key is not None and c.session_key == session_key:
                        c.close(4401, "logged out")
                        n += 1
            asyncio.get_running_loop().create_task(self.cluster.revoke_session(session_key))
            return n
        for table in list(self.tables.values()):
            for c in list(table.conns):
                if c.session_key is not None and c.session_key == session_key:
                    c.close(4401, "logged out")
                    n += 1
        return n

    async def moved_to(self, room_id: str, new_id: str) -> None:
        """"Play again" made ``new_id`` from the finished room ``room_id``: remember it and send every
        connection of the old room ``{"type": "moved", "room": new_id}``."""
        if self.cluster is not None:
            await self.run_db(self.cluster.set_next_room, room_id, new_id)
            await self.cluster.call(room_id, "moved", take=False, new=new_id)
            return
        self.moved[room_id] = new_id
        if len(self.moved) > 100_000:  # bound memory; the oldest entries go first
            for k in list(self.moved)[:50_000]:
                del self.moved[k]
        table = self.tables.get(room_id)
        if table is not None:
            async with table.lock:
                table.moved(new_id)
                table._broadcast()

    async def abandon(self, room_id: str) -> None:
        """End ``room_id``'s game unfinished (:meth:`Table.abandon`, at the owner in a cluster) and
        wait until it is stored.

        Raises:
            LookupError: no live table for the room.
            IllegalAction: no game, or the game is over.
        """
        if self.cluster is not None:
            await self.cluster.call(room_id, "abandon")
            return
        table = self.tables.get(room_id)
        if table is None:
            raise LookupError(f"no live table {room_id!r}")
        await table.abandon()
        await self.writer.wait(room_id)

    async def leave(self, room_id: str, seat: int) -> str:
        """The person of ``seat`` leaves ``room_id``'s game (:func:`guandan.server.table.leaving.leave_game`,
        at the owner in a cluster); waits until what it changed is stored.

        Returns:
            ``"ended"`` (nobody else was there: the game was abandoned, unrated) or ``"bot"`` (the
            bot plays the seat on, 托管 reason ``left``).
        Raises:
            LookupError: no live table for the room.
            IllegalAction: no game, the game is over, or no person in that seat.
        """
        if self.cluster is not None:
            return str(await self.cluster.call(room_id, "leave", seat=seat))
        from .table.leaving import leave_game

        table = self.tables.get(room_id)
        if table is None:
            raise LookupError(f"no live table {room_id!r}")
        outcome = await leave_game(table, seat)
        await self.writer.wait(room_id)
        return outcome

    def again_lock(self, room_id: str) -> Any:
        """The lock "play again" of ``room_id`` holds (one new room, even from several processes)."""
        if self.cluster is not None:
            return self.cluster.lock(f"again:{room_id}")
        return self._again_lock

    def _finished(self, table: Table) -> None:
        """A game ended: drop the table once nobody is connected (kept while people look at it). A
        tournament table's listener hears of it (the result goes into the tournament)."""
        comp = self.competitions.get(table.id)
        if comp is not None and comp.listener is not None:
            asyncio.get_running_loop().create_task(comp.listener.game_stored(table))
        for hook in self.finish_hooks:
            try:
                hook(table)
            except Exception:  # noqa: BLE001 - a hook's failure never stops storing games
                log.exception("room %s: a finish hook failed", table.id)
        if self.cluster is not None:
            asyncio.get_running_loop().create_task(self.cluster.release(table.id))
            return
        if not table.conns:
            self.tables.pop(table.id, None)

    def forget_if_idle(self, room_id: str) -> None:
        """Drop a waiting or finished room's table when it has no connection (memory)."""
        t = self.tables.get(room_id)
        if t is not None and not t.conns and (t.game is None or t.game.over):
            self.tables.pop(room_id, None)
