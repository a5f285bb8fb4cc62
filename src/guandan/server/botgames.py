"""Limits on live games with bots (issue 26 item 7: one guest created 2,000 quick games in 183 s;
the server's CPU saturated and every other table slowed down).

Every path that starts a game with a bot seat -- a quick game (``POST /api/quick``), a room
started with bots (``POST /api/rooms/{id}/start``), "play again" (再来一局, ``POST
/api/rooms/{id}/again``), a board of the daily challenge (``POST
/api/challenge/boards/{n}/play``) and a match filled with bots (``POST /api/match/join`` with a
``bot_level``, :mod:`guandan.server.api_matchmaking`) -- goes through :meth:`BotGameLimits.admit` of the one
:class:`BotGameLimits` of the server process, which refuses the start when

* the new game is against bots alone and the account already sits in a live game against bots:
  a room being played (``playing``) in which it is the only person, or which it owns with no
  person seated (bots only; :func:`players_of` says whose game a start is) (409 ``quick_game_running``,
  ``params.room`` = that room, so the UI can open it): one at a time per account
  (``settings.bot_games_per_account``, default 1). A game with friends and bots is not refused
  by this one (one's own game against bots does not keep one from a friends' table);
* the client address already started ``settings.bot_games_per_address`` games with bots (default
  4: a family or a classroom behind one address) that are still being played (429
  ``too_many_quick_games``, ``params.max``). Guests are free to make, so this limit is per
  address, over every account (``guandan serve --bot-games-per-address``; 0 for load tests).

Games end by being finished or abandoned (``POST /api/rooms/{id}/abandon``); a room whose game is
over no longer counts. 0 turns a limit off. A game of people only is never limited here. The
per-address count is kept in memory per process (the rooms are checked in the database each
time); the per-account one is read from the database. Plain code: the database session is passed in.
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


class BotGameRefused(HttpError):
    """A game with bots refused by a limit (an :class:`~guandan.server.errors.HttpError`): 409
    ``quick_game_running`` or 429 ``too_many_quick_games``."""


def solo_games(db: Any, user_id: int) -> list[str]:
    """The rooms being played in which ``user_id`` is the only person (the others are bots or
    empty), and those owned by ``user_id`` with no person seated at all (bots only), oldest first.

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
    seated = select(seat.room_id).where(seat.user_id.is_not(None))
    owned = db.execute(
        select(models.Room.id, models.Room.created_at)
        .where(models.Room.owner_id == user_id, models.Room.status == PLAYING, models.Room.id.not_in(seated))
    ).all()
    if owned:  # merge, oldest first as above
        when = dict(db.execute(select(models.Room.id, models.Room.created_at).where(models.Room.id.in_(out))).all())
        when.update({r: t for r, t in owned})
        out = sorted(when, key=lambda r: (when[r], r))
    return out


class BotGameLimits:
    """The limits on live games with bots (see the module docstring), one per server process.

    Args:
        per_account: live games against bots one account may have (0: no limit).
        per_address: live games with bots one client address may have started (0: no limit).
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

    def check(self, db: Any, user_id: int, address: str, solo: bool = True) -> None:
        """Refuse a new game with bots of ``user_id`` from ``address`` when a limit is reached.

        Args:
            solo: the new game is against bots alone (``user_id`` the only person in it): the
                per-account limit applies; a game with other people only counts per address.
        Raises:
            BotGameRefused: 409 ``quick_game_running`` (``params.room``: the running game) or
                429 ``too_many_quick_games`` (``params.max``).
        """
        if self.per_account and solo:
            running = solo_games(db, user_id)
            if len(running) >= self.per_account:
                raise BotGameRefused(409, "you already have a game against bots running; go back to it or "
                                       "abandon it first", "quick_game_running", {"room": running[0]})
        if self.per_address:
            live = self._live(db, self._by_address.get(address, []))
            if live:
                self._by_address[address] = live
            else:
                self._by_address.pop(address, None)
            if len(live) >= self.per_address:
                raise BotGameRefused(429, f"at most {self.per_address} games against bots may run from one "
                                       "address; finish or abandon one first", "too_many_quick_games",
                                       {"max": self.per_address})

    @contextmanager
    def admit(self, db: Any, user_id: int, address: str, solo: bool = True) -> Iterator[list[str]]:
        """Check the limits, then let the caller start the game: one caller at a time (two requests
        at once cannot both pass). Append the started room's id to the yielded list; it is then
        counted for ``address``.

        Args:
            db: a SQLAlchemy session. user_id: the account starting the game. address: its
                client address. solo: see :meth:`check`.
        Raises:
            BotGameRefused: see :meth:`check`.
        """
        with self._lock:
            self.check(db, user_id, address, solo)
            made: list[str] = []
            yield made
            if made and self.per_address:
                if len(self._by_address) > 100_000:  # bound memory under a flood of addresses
                    self._by_address.clear()
                self._by_address.setdefault(address, []).extend(made)


def from_settings(settings: Any) -> BotGameLimits:
    """The server's limits from ``settings.bot_games_per_account`` / ``bot_games_per_address``."""
    return BotGameLimits(getattr(settings, "bot_games_per_account", DEFAULT_PER_ACCOUNT),
                         getattr(settings, "bot_games_per_address", DEFAULT_PER_ADDRESS))


def has_bots(seats: Any) -> bool:
    """Whether a room's seats (rows or ``(user_id, bot)`` pairs) hold a bot."""
    return any((s[1] if isinstance(s, tuple) else s.bot) for s in seats)


def alone(seats: Any, user_id: int) -> bool:
    """Whether ``user_id`` is the only person in a room's seats (rows or ``(user_id, bot)`` pairs)."""
    return all(u in (None, user_id) for u in ((s[0] if isinstance(s, tuple) else s.user_id) for s in seats))


def players_of(seats: Any, starter: int) -> tuple[int, bool]:
    """Whose game against bots a start of ``seats`` (rows or ``(user_id, bot)`` pairs) by ``starter`` is,
    for the per-account limit: ``(account, solo)``. One person seated: that person's, whoever starts it
    (an owner who left the seat cannot start a second game against bots for someone else); no person
    (bots only): the starter's; two or more people: not a game against bots alone (``solo`` False)."""
    people = {u for u in ((s[0] if isinstance(s, tuple) else s.user_id) for s in seats) if u is not None}
    if len(people) == 1:
        return next(iter(people)), True
    return starter, not people


__all__ = ["DEFAULT_PER_ACCOUNT", "DEFAULT_PER_ADDRESS", "BotGameLimits", "BotGameRefused", "alone", "from_settings",
           "has_bots", "players_of", "solo_games"]
