"""Limits on quick games (issue 26 item 7: one guest created 2,000 quick games in 183 s; the
server's CPU saturated and every other table slowed down).

A *quick game* (``POST /api/quick``) is a started room with one person and three bots. Before a
new one is made, :meth:`QuickGameLimits.check` refuses it when

* the account already sits in a live quick game: a room being played (``playing``) in which it
  is the only person (409 ``quick_game_running``, ``params.room`` = that room, so the UI can open
  it): one at a time per account (``settings.quick_games_per_account``, default 1);
* the client address already started ``settings.quick_games_per_address`` quick games (default
  4: a family or a classroom behind one address) that are still being played (429
  ``too_many_quick_games``, ``params.max``). Guests are free to make, so this limit is per
  address, over every account.

Games end by being finished or abandoned (``POST /api/rooms/{id}/abandon``); a room whose game is
over no longer counts. 0 turns a limit off. The per-address count is kept in memory per process
(the rooms are checked in the database each time); the per-account one is read from the
database. Plain code: the database session is passed in.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import select

from . import models
from .errors import HttpError
from .table.info import PLAYING

#: Default live quick games per account and per client address.
DEFAULT_PER_ACCOUNT = 1
DEFAULT_PER_ADDRESS = 4


class QuickGameRefused(HttpError):
    """A quick game refused by a limit (an :class:`~guandan.server.errors.HttpError`): 409
    ``quick_game_running`` or 429 ``too_many_quick_games``."""


def solo_games(db: Any, user_id: int) -> list[str]:
    """The rooms being played in which ``user_id`` is the only person (the others are bots or
    empty), oldest first.

    Args:
        db: a SQLAlchemy session. user_id: the account.
    Returns:
        Room ids.
    """
    seat = models.RoomSeat
    mine = db.execute(
        select(models.Room.id).join(seat, seat.room_id == models.Room.id)
        .where(seat.user_id == user_id, models.Room.status == PLAYING)
        .order_by(models.Room.created_at, models.Room.id)
    ).scalars().all()
    out: list[str] = []
    for room_id in dict.fromkeys(mine):
        people = db.execute(select(seat.user_id).where(seat.room_id == room_id, seat.user_id.is_not(None))).scalars()
        if all(u == user_id for u in people):
            out.append(room_id)
    return out


class QuickGameLimits:
    """The limits on live quick games (see the module docstring), per process.

    Args:
        per_account: live quick games one account may have (0: no limit).
        per_address: live quick games one client address may have started (0: no limit).
    """

    def __init__(self, per_account: int = DEFAULT_PER_ACCOUNT, per_address: int = DEFAULT_PER_ADDRESS) -> None:
        self.per_account = max(0, int(per_account))
        self.per_address = max(0, int(per_address))
        self._by_address: dict[str, list[str]] = {}
        self._lock = threading.Lock()

    def _live(self, db: Any, rooms: list[str]) -> list[str]:
        if not rooms:
            return []
        playing = set(db.execute(select(models.Room.id).where(models.Room.id.in_(rooms),
                                                             models.Room.status == PLAYING)).scalars())
        return [r for r in rooms if r in playing]

    def check(self, db: Any, user_id: int, address: str) -> None:
        """Refuse a new quick game of ``user_id`` from ``address`` when a limit is reached.

        Raises:
            QuickGameRefused: 409 ``quick_game_running`` (``params.room``: the running game) or
                429 ``too_many_quick_games`` (``params.max``).
        """
        if self.per_account:
            running = solo_games(db, user_id)
            if len(running) >= self.per_account:
                raise QuickGameRefused(409, "you already have a game against bots running; go back to it or "
                                       "abandon it first", "quick_game_running", {"room": running[0]})
        if self.per_address:
            live = self._live(db, self._by_address.get(address, []))
            if live:
                self._by_address[address] = live
            else:
                self._by_address.pop(address, None)
            if len(live) >= self.per_address:
                raise QuickGameRefused(429, f"at most {self.per_address} games against bots may run from one "
                                       "address; finish or abandon one first", "too_many_quick_games",
                                       {"max": self.per_address})

    @contextmanager
    def admit(self, db: Any, user_id: int, address: str) -> Iterator[list[str]]:
        """Check the limits, then let the caller make the room: one caller at a time (two requests
        at once cannot both pass). Append the new room's id to the yielded list; it is then
        counted for ``address``.

        Raises:
            QuickGameRefused: see :meth:`check`.
        """
        with self._lock:
            self.check(db, user_id, address)
            made: list[str] = []
            yield made
            if made and self.per_address:
                if len(self._by_address) > 100_000:  # bound memory under a flood of addresses
                    self._by_address.clear()
                self._by_address.setdefault(address, []).extend(made)


__all__ = ["DEFAULT_PER_ACCOUNT", "DEFAULT_PER_ADDRESS", "QuickGameLimits", "QuickGameRefused", "solo_games"]
