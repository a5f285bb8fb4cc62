"""Finished games in the database: the ``games`` and ``game_players`` rows and the ratings.

Called by the live tables' storage (:meth:`guandan.server.gamestore.GameStore.finish`) and by tools
and tests that store a game played elsewhere; it sits below the HTTP routers, which only read.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy.orm import Session

from guandan.server.models import GamePlayer, GameRow, Room, User, utcnow
from guandan.server.ratings import parse_record, update_ratings


def _seat_player(item: Any, seat: int) -> tuple[int | None, str | None]:
    if isinstance(item, dict):
        user_id, bot = item.get("user_id"), item.get("bot")
    elif isinstance(item, (tuple, list)) and len(item) == 2:
        user_id, bot = item
    elif isinstance(item, User):
        user_id, bot = item.id, None
    elif hasattr(item, "user_id") and hasattr(item, "bot"):
        user_id, bot = item.user_id, item.bot
    else:
        raise ValueError(f"seat {seat}: give (user_id, bot), a dict, a User or a RoomSeat, not {item!r}")
    if (user_id is None) == (bot is None):
        raise ValueError(f"seat {seat} must have exactly one of a user id and a bot name")
    if user_id is not None and (isinstance(user_id, bool) or not isinstance(user_id, int)):
        raise ValueError(f"seat {seat}: the user id must be an int")
    if bot is not None and not isinstance(bot, str):
        raise ValueError(f"seat {seat}: the bot must be a name")
    return user_id, bot


def record_finished_game(
    db: Session,
    room: Room | None,
    record_text: str,
    winner_team: int | None,
    players: Sequence[Any],
) -> GameRow:
    """Store a finished game (``games`` + ``game_players`` rows) and update the people's ratings
    (not for a board room's game, the daily challenge: its result counts in the challenge only, and
    an account's points would show it before the day closes; not for an online tournament match:
    its result is the tournament's; not for an unrated room, ``rooms.unrated``: a matched room
    filled with bots, issue 25 "rated games count toward the rating only with no bot seats",
    docs/matchmaking.md). Those games change no rating, no games played/won and no Anhui points.

    Flushes but does not commit: call it inside the caller's transaction (e.g.
    ``with session_scope(factory) as db: record_finished_game(db, ...)``).

    Args:
        db: the session.
        room: the room the game was played in (its ``preset`` is stored), or ``None``.
        record_text: the complete JSON Lines record (header + events, ``\\n``-separated).
        winner_team: 0 (seats 0+2) or 1 (seats 1+3); ``None`` takes it from the record's last
            ``game_over`` event (still ``None`` for an abandoned game: stored, nobody rated).
        players: four entries, seat order, each ``(user_id, bot)`` with exactly one not ``None``,
            or ``{"user_id":..., "bot":...}``, a :class:`User`, or a :class:`RoomSeat` (``room.seats``).
    Returns:
        The new :class:`GameRow` (``.id`` is set).
    Raises:
        ValueError: not four players, a seat with both or neither of user and bot, a record that
            is not JSON Lines, or a winner team other than 0, 1 or ``None``.
    """
    if len(players) != 4:
        raise ValueError("a game needs four players, one per seat")
    seats = [_seat_player(p, s) for s, p in enumerate(players)]
    lines = parse_record(record_text)
    if not lines:
        raise ValueError("the record is empty")
    if winner_team is None:
        ends = [ev for ev in lines[1:] if ev.get("type") == "game_over"]
        winner_team = ends[-1].get("winner_team") if ends else None
    if winner_team is not None and (isinstance(winner_team, bool) or winner_team not in (0, 1)):
        raise ValueError(f"winner_team must be 0, 1 or None, not {winner_team!r}")
    preset = (room.preset if room is not None else None) or lines[0].get("preset") or "custom"
    game = GameRow(
        room_id=room.id if room is not None else None,
        preset=str(preset)[:32],
        record=record_text,
        winner_team=winner_team,
        finished_at=utcnow(),
    )
    for s, (user_id, bot) in enumerate(seats):
        game.players.append(GamePlayer(seat=s, user_id=user_id, bot=bot))
    db.add(game)
    db.flush()
    if room is None or (getattr(room, "board", None) is None and not getattr(room, "unrated", False)
                        and not _tournament_room(db, room.id)):
        update_ratings(db, game)  # a daily-challenge board or an unrated room moves no rating and no points
    return game


def _tournament_room(db: Session, room_id: str) -> bool:
    """Whether the room plays an online tournament match. Such games move no rating and no Anhui
    points: their result is the tournament's, and an organiser could otherwise enter any two
    accounts and have the bot lose their games for them while they are away."""
    from sqlalchemy import select

    from guandan.server.models import TournamentTableRow

    return db.scalar(select(TournamentTableRow.id).where(TournamentTableRow.room_id == room_id).limit(1)) is not None


__all__ = ["record_finished_game"]
