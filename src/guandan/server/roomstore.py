"""Rooms in the database: the live tables' reads and writes of ``rooms`` (server contract).

The game's record lines are ``game_events`` rows (:mod:`guandan.server.gamestore`); a finished game
goes to ``games``. :class:`RoomStore` is what :class:`~guandan.server.manager.TableManager` and
the record writer call, always off the event loop.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from datetime import UTC
from typing import Any

from .gamestore import GameStore
from .table.info import DAMAGED, PLAYING, RoomInfo, SeatInfo

log = logging.getLogger("guandan.server.tables")


class RoomStore:
    """Database access of the live tables, through the storage helper's models (server contract).

    Args:
        session_factory: a zero-argument callable returning a SQLAlchemy ``Session`` usable as a
            context manager (``sessionmaker``).
    """

    def __init__(self, session_factory: Callable[[], Any]) -> None:
        self.session_factory = session_factory
        #: the live games' rows (``game_events``)
        self.games = GameStore(session_factory)
        self._fence: Callable[[Any], None] | None = None

    def set_fence(self, fence: Callable[[Any], None] | None) -> None:
        """Run ``fence(connection)`` first in every write of a game (:meth:`save` and the
        :class:`GameStore` writes; see :attr:`GameStore.fence`); ``None`` removes it."""
        self._fence = fence
        self.games.fence = fence

    def load(self, room_id: str) -> RoomInfo | None:
        """The room ``room_id`` with its seats, or ``None`` when there is no such room.

        ``info.record`` is the game's record: for a ``playing`` room assembled from its
        ``game_events`` rows (``info.stored_lines`` of them); a playing room whose record is
        still in ``rooms.record`` (written by an older server) is moved into rows first. For a
        finished room, ``rooms.record``; for a damaged one, ``""`` (it may not even be UTF-8).

        Raises:
            StoredRecordError: the rows of a playing room have a missing index.
        """
        from . import models

        from sqlalchemy.orm import defer

        with self.session_factory() as db:
            room = db.get(models.Room, room_id, options=[defer(models.Room.record)])
            if room is None:
                return None
            info = room_info(db, room)
            if room.status == PLAYING:
                legacy = room.record or ""
            elif room.status != DAMAGED:
                info.record = room.record or ""
                return info
            else:
                return info
        lines = self.games.load(room_id)
        if not lines and legacy.strip():
            lines = [ln for ln in legacy.split("\n") if ln.strip()]
            self.games.append(room_id, 0, lines)
            self._clear_record(room_id)
        info.record = "".join(ln + "\n" for ln in lines)
        info.stored_lines = len(lines)
        return info

    def _clear_record(self, room_id: str) -> None:
        from . import models

        rooms = models.Room.__table__
        with self.session_factory() as db:
            db.execute(rooms.update().where(rooms.c.id == room_id).values(record=""))
            db.commit()

    def mark_damaged(self, room_id: str) -> None:
        """Set the room's status to :data:`DAMAGED` (its record is not read)."""
        from . import models

        rooms = models.Room.__table__
        with self.session_factory() as db:
            db.execute(rooms.update().where(rooms.c.id == room_id).values(status=DAMAGED))
            db.commit()

    def playing_ids(self) -> list[str]:
        """Ids of every room whose status is ``playing``."""
        from sqlalchemy import select

        from . import models

        with self.session_factory() as db:
            return list(db.scalars(select(models.Room.id).where(models.Room.status == PLAYING)))

    def save(self, room_id: str, record: str, status: str) -> None:
        """Store the room's whole record text and status in ``rooms`` (the fallback when storing
        a finished game fails; live games append rows instead: :class:`GameStore`)."""
        from . import models

        with self.session_factory() as db:
            conn = db.connection()
            if self._fence is not None:
                self._fence(conn)
            # a Core statement built once: the ORM path costs more than SQLite itself here
            conn.execute(_save_statement(), {"b_id": room_id, "b_record": record, "b_status": status, "b_ts": models.utcnow()})
            db.commit()

    def game_id_of(self, room_id: str) -> int | None:
        """The id of the stored game played in ``room_id`` (the latest), or ``None``."""
        from sqlalchemy import select

        from . import models

        try:
            with self.session_factory() as db:
                return db.scalars(
                    select(models.GameRow.id).where(models.GameRow.room_id == room_id).order_by(models.GameRow.id.desc())
                ).first()
        except Exception:  # noqa: BLE001 - only used for a link
            log.exception("room %s: looking up its game failed", room_id)
            return None

    def finish(self, info: RoomInfo, record: str | None, winner_team: int | None) -> int | None:
        """Mark the room finished and store the game assembled from its rows
        (:meth:`GameStore.finish`; ``record``, the live game's text, wins if the rows differ).

        Returns:
            The stored game's id (``None`` when the room is no longer ``playing``: its game was
            stored already and is not stored twice).
        """
        players = [{"seat": s.seat, "user_id": s.user_id, "bot": s.bot} for s in info.seats]
        return self.games.finish(info.id, winner_team, players, record)


@functools.lru_cache(maxsize=1)
def _save_statement() -> Any:
    from sqlalchemy import bindparam

    from . import models

    rooms = models.Room.__table__
    return (
        rooms.update()
        .where(rooms.c.id == bindparam("b_id"))
        .values(record=bindparam("b_record"), status=bindparam("b_status"), updated_at=bindparam("b_ts"))
    )


def _touch(room: Any) -> None:
    if hasattr(room, "updated_at"):
        from datetime import datetime

        room.updated_at = datetime.now(UTC)


def room_info(db: Any, room: Any) -> RoomInfo:
    """Build a :class:`RoomInfo` from a ``models.Room`` row (seats and names loaded through ``db``)."""
    seats = [SeatInfo(s) for s in range(4)]
    for row in room.seats:
        if 0 <= row.seat < 4:
            user = row.user if row.user_id is not None else None
            seats[row.seat] = SeatInfo(row.seat, row.user_id, user.name if user is not None else None, row.bot,
                                       user.anhui_points if user is not None else None)
    owner = room.owner if room.owner_id is not None else None
    return RoomInfo(
        id=room.id,
        name=room.name,
        preset=room.preset,
        options=dict(room.options or {}),
        status=room.status,
        owner=owner.name if owner is not None else None,
        owner_id=room.owner_id,
        seed=int(room.seed or 0),
        seats=seats,
        record="" if "record" in _unloaded(room) else (room.record or ""),
        default_clocks=bool(getattr(room, "default_clocks", False)),
        board=_board_json(getattr(room, "board", None)),
        unrated=bool(getattr(room, "unrated", False)),
    )


def _board_json(text: Any) -> dict[str, Any] | None:
    """A board room's board (``rooms.board``, JSON text), or ``None`` for any other room."""
    if not text:
        return None
    import json

    value = json.loads(text)
    return value if isinstance(value, dict) else None


def _unloaded(room: Any) -> set[str]:
    try:
        from sqlalchemy import inspect

        return set(inspect(room).unloaded)
    except Exception:  # noqa: BLE001 - not an ORM object (tests pass plain objects)
        return set()
