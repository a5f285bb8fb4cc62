"""Append-only storage of live games (issue 10): one ``game_events`` row per record line.

A live game's JSON Lines record (DESIGN.md section 3: a header, then one event per line) is stored
as rows of ``game_events``: ``idx`` 0 holds the header, ``idx`` i >= 1 the game's event i - 1
(``Game.events[i - 1]``). An action therefore costs one small insert (its event lines, usually one
or two, a few hundred bytes) however long the game already is, where the server used to rewrite
the room's whole record (about 70 KB late in a game).

The primary key (``room_id``, ``idx``) is the guard against an action stored twice: a second write
of an index that exists fails with :class:`DuplicateEventError` (a stale owner in a cluster, a
retried write that had in fact succeeded). The complete record is assembled from the rows when the
game is over (:meth:`GameStore.finish` stores it in ``games`` and ``rooms.record`` and deletes the
rows), and for restore after a restart (:meth:`GameStore.load`).

Every method is blocking database work: call it from a worker thread
(:meth:`guandan.server.manager.TableManager.run_db`), never on the event loop.

API summary::

    store = GameStore(session_factory)
    store.start(room_id, header_line, [event_line, ...])   # idx 0, 1, ...; room becomes "playing"
    store.append(room_id, index, [line, ...])     # idx index, index + 1, ... in one transaction
    store.append_many([(room_id, index, [line, ...]), ...])   # several rooms, one transaction
    store.load(room_id) -> list[str]              # header + events, in order ([] when none)
    store.count(room_id) -> int                   # the next index to append
    store.lines(room_id, start, stop) -> list[str]
    store.record_text(room_id) -> str             # "\\n"-terminated JSON Lines text
    store.finish(room_id, winner_team, players, record=None) -> game id | None
    store.discard(room_id) -> int                 # rows deleted
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Sequence
from typing import Any

log = logging.getLogger("guandan.server.gamestore")


class DuplicateEventError(Exception):
    """A record line was written at an index the room already holds (the write changed nothing).

    Attributes:
        room_id: the room. index: the first index of the refused write. count: lines of the write.
    """

    def __init__(self, room_id: str, index: int, count: int) -> None:
        super().__init__(f"room {room_id}: record line {index} is stored already (a write of {count} "
                         "line(s) was refused: an action is never stored twice)")
        self.room_id = room_id
        self.index = index
        self.count = count


class StoredRecordError(ValueError):
    """The rows of a room do not form a record: an index is missing (``idx`` not 0, 1, 2, ...)."""


@functools.lru_cache(maxsize=1)
def _insert_statement() -> Any:
    from sqlalchemy import bindparam

    from . import models

    ev = models.GameEvent.__table__
    return ev.insert().values(room_id=bindparam("r"), idx=bindparam("i"), line=bindparam("l"))


class GameStore:
    """The ``game_events`` rows of live games (see the module docstring).

    Args:
        session_factory: zero-argument callable returning a SQLAlchemy ``Session`` usable as a
            context manager (``sessionmaker``); SQLite or PostgreSQL.

    Attributes:
        fence: ``None``, or a callable run with the ``Connection`` first in every write transaction
            (:meth:`start`, :meth:`append_many`, :meth:`finish`); it raises to refuse the write
            (``guandan serve`` sets :meth:`guandan.server.dblock.DatabaseLock.fence`: issue 26
            item 1). The refused transaction is rolled back; the exception propagates.
    """

    def __init__(self, session_factory: Callable[[], Any]) -> None:
        self.session_factory = session_factory
        self.fence: Callable[[Any], None] | None = None

    def _fenced_connection(self, db: Any) -> Any:
        """The session's connection, after the :attr:`fence` check (if any) passed."""
        conn = db.connection()
        if self.fence is not None:
            self.fence(conn)
        return conn

    # -- writing ---------------------------------------------------------------------------------
    def start(self, room_id: str, header: str, events: Sequence[str] = ()) -> None:
        """Store a new game's header (``idx`` 0) and its first events (``idx`` 1, 2, ...: the
        first deal, which a new ``Game`` has already made) and set the room's status to
        ``playing`` (its ``record`` emptied), in one transaction.

        Args:
            room_id: an existing room. header: the record's header line (no line end).
            events: the event lines the game holds already.
        Raises:
            DuplicateEventError: the room already holds a game's rows.
            sqlalchemy.exc.IntegrityError: no such room.
        """
        from . import models

        rooms = models.Room.__table__
        with self.session_factory() as db:
            try:
                conn = self._fenced_connection(db)
                rows = [{"r": room_id, "i": k, "l": line} for k, line in enumerate([header, *events])]
                conn.execute(_insert_statement(), rows)
                conn.execute(rooms.update().where(rooms.c.id == room_id)
                             .values(status="playing", record="", updated_at=models.utcnow()))
                db.commit()
            except Exception as e:
                db.rollback()
                self._raise_duplicate(e, room_id, 0, 1 + len(events))
                raise

    def append(self, room_id: str, index: int, lines: Sequence[str]) -> None:
        """Store ``lines`` at indices ``index``, ``index + 1``, ... of the room's record, in one
        transaction (one multi-row insert): all or nothing.

        Args:
            room_id: the room. index: the index of the first line (>= 1 for events; 0 is the
                header, see :meth:`start`). lines: record lines without line ends (JSON objects).
        Raises:
            DuplicateEventError: one of the indices is stored already (nothing was written).
            ValueError: ``index`` < 0.
            sqlalchemy.exc.IntegrityError: no such room.
        """
        self.append_many([(room_id, index, lines)])

    def append_many(self, items: Sequence[tuple[str, int, Sequence[str]]]) -> None:
        """Store the lines of several rooms in one transaction (one multi-row insert): what
        :meth:`append` does for each ``(room_id, index, lines)``, all or nothing. The server's
        writer gathers the lines of every table that acted since its last write into one call.

        Raises:
            DuplicateEventError: one batch of one item holds an index that is stored already (with
                several items it is not said which: write them one by one to find it).
            sqlalchemy.exc.IntegrityError: a duplicate among several items, or no such room.
            ValueError: an index < 0.
        """
        rows = []
        for room_id, index, lines in items:
            if index < 0:
                raise ValueError(f"index must be >= 0, not {index}")
            rows.extend({"r": room_id, "i": index + k, "l": line} for k, line in enumerate(lines))
        if not rows:
            return
        with self.session_factory() as db:
            try:
                self._fenced_connection(db).execute(_insert_statement(), rows)
                db.commit()
            except Exception as e:
                db.rollback()
                if len(items) == 1:
                    self._raise_duplicate(e, items[0][0], items[0][1], len(items[0][2]))
                raise

    def _raise_duplicate(self, exc: Exception, room_id: str, index: int, count: int) -> None:
        """Raise :class:`DuplicateEventError` when ``exc`` is a key conflict on an existing index."""
        from sqlalchemy.exc import IntegrityError

        if not isinstance(exc, IntegrityError):
            return
        if self.lines(room_id, index, index + count):  # the conflict is ours, not a missing room
            raise DuplicateEventError(room_id, index, count) from exc

    # -- reading ---------------------------------------------------------------------------------
    def lines(self, room_id: str, start: int = 0, stop: int | None = None) -> list[str]:
        """The stored lines with ``start <= idx < stop`` (``stop`` ``None``: to the end), in
        index order (missing indices are simply absent)."""
        from sqlalchemy import select

        from . import models

        ev = models.GameEvent.__table__
        q = select(ev.c.line).where(ev.c.room_id == room_id, ev.c.idx >= start)
        if stop is not None:
            q = q.where(ev.c.idx < stop)
        with self.session_factory() as db:
            return list(db.execute(q.order_by(ev.c.idx)).scalars())

    def load(self, room_id: str) -> list[str]:
        """The room's live record: header then events, one line each without line ends (``[]``
        when the room has no rows).

        Raises:
            StoredRecordError: the indices are not 0, 1, 2, ... (a write was lost).
        """
        from sqlalchemy import select

        from . import models

        ev = models.GameEvent.__table__
        with self.session_factory() as db:
            rows = db.execute(select(ev.c.idx, ev.c.line).where(ev.c.room_id == room_id).order_by(ev.c.idx)).all()
        for k, (idx, _) in enumerate(rows):
            if idx != k:
                raise StoredRecordError(f"room {room_id}: record line {k} is missing (next stored: {idx})")
        return [line for _, line in rows]

    def count(self, room_id: str) -> int:
        """The number of stored lines (the next index to append when nothing is missing)."""
        from sqlalchemy import func, select

        from . import models

        ev = models.GameEvent.__table__
        with self.session_factory() as db:
            return int(db.execute(select(func.count()).select_from(ev).where(ev.c.room_id == room_id)).scalar_one())

    def record_text(self, room_id: str) -> str:
        """The live record as JSON Lines text, every line ``\\n``-terminated (``""`` when none).

        Raises:
            StoredRecordError: see :meth:`load`.
        """
        return "".join(line + "\n" for line in self.load(room_id))

    # -- the end of a game -----------------------------------------------------------------------
    def finish(self, room_id: str, winner_team: int | None, players: Sequence[dict[str, Any]],
               record: str | None = None) -> int | None:
        """Store the finished (or abandoned) game, in one transaction: the room becomes
        ``finished`` (only if it is still ``playing``: compare-and-set, so a game is never stored
        twice), the complete record is assembled from the rows into ``rooms.record`` and a new
        ``games`` row (with ratings and points: ``games.record_finished_game``), and the
        rows are deleted.

        Args:
            room_id: the room. winner_team: 0, 1, or ``None`` (abandoned: nobody rated).
            players: per seat ``{"seat", "user_id", "bot"}``.
            record: the live game's record as the owner holds it (optional). When given and the
                rows differ from it (a write was lost for good), it is stored instead, and the
                difference logged.
        Returns:
            The ``games`` id, or ``None`` when the room was not ``playing`` (nothing stored).
        """
        from sqlalchemy import select, update

        from . import models
        from .games import record_finished_game

        ev = models.GameEvent.__table__
        with self.session_factory() as db:
            self._fenced_connection(db)
            claimed = db.execute(
                update(models.Room).where(models.Room.id == room_id, models.Room.status == "playing")
                .values(status="finished").execution_options(synchronize_session=False)
            ).rowcount
            if not claimed:
                db.rollback()
                return None
            rows = db.execute(select(ev.c.idx, ev.c.line).where(ev.c.room_id == room_id).order_by(ev.c.idx)).all()
            text = "".join(line + "\n" for _, line in rows)
            if record is not None and text != record:
                log.error("room %s: the stored rows (%d lines) differ from the live game's record (%d lines); "
                          "storing the live record", room_id, len(rows), record.count("\n"))
                text = record
            room = db.get(models.Room, room_id)
            if room is None:  # deleted meanwhile
                db.rollback()
                return None
            room.record = text
            room.status = "finished"
            room.updated_at = models.utcnow()
            result = record_finished_game(db, room, text, winner_team, list(players))
            db.execute(ev.delete().where(ev.c.room_id == room_id))
            db.commit()
        game_id = getattr(result, "id", result)
        return game_id if isinstance(game_id, int) else None

    def discard(self, room_id: str) -> int:
        """Delete the room's rows (a game that will not be stored). Returns the rows deleted."""
        from . import models

        ev = models.GameEvent.__table__
        with self.session_factory() as db:
            n = db.execute(ev.delete().where(ev.c.room_id == room_id)).rowcount
            db.commit()
            return int(n or 0)


__all__ = ["DuplicateEventError", "GameStore", "StoredRecordError"]
