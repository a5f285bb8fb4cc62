"""Leaving a game under way (issue 25, item 9): what becomes of the seat and of the game.

Plain code with no I/O (contract ``table-flow``): the rooms API (``POST /api/rooms/{id}/leave``)
asks the table's host to run :func:`leave_game` at the table's owner (in a cluster, the process
holding the room's lease), which decides with :func:`leave_outcome`:

* **Nobody else is there** (every other seat holds a bot, or a person who left before): the game
  ends at once, unfinished (:meth:`~guandan.server.table.flow.Table.abandon`): it is stored with no
  winner, nobody is rated and no rating changes (docs/ratings: an abandoned game counts no game).
* **Other people play on**: the bot plays the seat for the rest of the game (托管 with reason
  :data:`LEFT`; every connection gets the notice ``auto_on`` with ``reason: "left"`` and the state
  frame's ``auto_reason`` names it, so the table shows the seat as left). The game goes on and is
  rated as any game of that room; the seat stays the leaver's.

**Coming back.** The leaver may rejoin: opening the room again shows the table with the seat still
played by the bot (unlike an absence, ``reason: "away"``, a new connection does not end it), and
taking it back is the ordinary 取消托管 (the ``auto`` message with ``on: false``) or playing a move.
A decision was needed here: the seat is the leaver's (their name is in the record and on the
rating), so handing it to nobody else and letting them back is the least surprising; the
partner is never left with a seat nobody may play.

A tournament table cannot be left this way (its result belongs to the tournament: R54's lateness
and forfeit rules apply instead); the API refuses with ``tournament_table``.

Single process: the ``left`` mark lives with the table; after a restart of the only server the seat
is played by the bot as any absent person's (``away``) until the person returns. In a cluster it
travels with the table's snapshot to the next owner.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from guandan.core.errors import IllegalAction

from .info import PLAYING

#: 托管 reason of a seat whose person left the game (state frame ``auto_reason``, notice ``auto_on``).
LEFT = "left"
#: :func:`leave_outcome`: the game ends unfinished (nobody else is at the table).
END = "ended"
#: :func:`leave_outcome`: the bot plays the seat on (other people are at the table).
BOT = "bot"


def leave_outcome(people: Sequence[int | None], auto_reason: Sequence[str | None], seat: int) -> str:
    """What the person in ``seat`` leaving does to the game.

    Args:
        people: per seat (4), the account id of the person seated there, ``None`` for a bot.
        auto_reason: per seat, why the bot plays it now (``None``: it does not); ``"left"`` marks a
            person who left before.
        seat: the leaver's seat, 0-3.
    Returns:
        :data:`END` when no other person still plays at the table (only bots, or people who left),
        else :data:`BOT`.
    Raises:
        ValueError: ``seat`` not 0-3, or not four seats given.
    """
    if len(people) != 4 or len(auto_reason) != 4:
        raise ValueError("four seats are needed")
    if not 0 <= seat <= 3:
        raise ValueError(f"seat must be 0-3, not {seat!r}")
    others = [s for s in range(4) if s != seat and people[s] is not None and auto_reason[s] != LEFT]
    return BOT if others else END


async def leave_game(table: Any, seat: int) -> str:
    """The person of ``seat`` leaves ``table``'s game (a :class:`~guandan.server.table.flow.Table`;
    run at the table's owner).

    Returns:
        :data:`END` (the game was abandoned: stored unfinished, unrated) or :data:`BOT` (the bot
        plays the seat on with 托管 reason :data:`LEFT`).
    Raises:
        IllegalAction: ``not_started`` (no game), ``game_over`` (over already), ``not_seated`` (no
            person in that seat).
    """
    async with table.lock:
        game = table.game
        if game is None:
            raise IllegalAction("not_started", "the game has not started")
        if game.over or table.info.status != PLAYING:
            raise IllegalAction("game_over", "the game is over")
        people = [s.user_id for s in table.info.seats]
        if not 0 <= seat <= 3 or people[seat] is None:
            raise IllegalAction("not_seated", "no person sits in that seat")
        outcome = leave_outcome(people, table.auto_reason, seat)
        if outcome == BOT:
            if table.auto[seat]:  # already played by the bot (away, timeouts, by choice): now it is left
                table.auto_reason[seat] = LEFT
                table.notice("auto_on", seat=seat, reason=LEFT)
            else:
                table._auto_on(seat, LEFT)
            table.timeouts[seat] = 0
            table._schedule()
            table._broadcast()
            return BOT
    await table.abandon()  # takes the lock itself
    return END


__all__ = ["BOT", "END", "LEFT", "leave_game", "leave_outcome"]
