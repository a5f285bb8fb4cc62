"""Player ratings after a finished game: openskill (Plackett-Luce), team-aware, plus Anhui points.

A game is two teams, seats 0+2 against seats 1+3 (docs/rules.md R1); the winner team ranks first.
People are rated; bots are not (and a room flagged ``unrated``, a matched room filled with bots, is
not rated at all: :func:`guandan.server.games.record_finished_game`): a bot seat takes part in the update with a fixed stand-in rating
(:data:`BOT_RATINGS`) that never changes, so a person partnered with a bot is still rated, and a
win against weak bots moves a rating less than a win against strong players. The rating shown to
people is the conservative ``mu - 3*sigma`` (0 for a new player).

Anhui points (docs/rules.md section 2.1, preset option ``points``): when the game's rules award them,
each person adds the sum of the per-deal ``points`` of the record's ``deal_end`` events for their
seat to ``users.anhui_points``; :func:`guandan.core.scoring.anhui_title` names the title.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from openskill.models import PlackettLuce
from sqlalchemy import select
from sqlalchemy.orm import Session

from guandan.server.models import DEFAULT_MU, DEFAULT_SIGMA, GameRow, User

#: Fixed stand-in (mu, sigma) of each bot kind: the random bot is weak, the heuristic bot average.
BOT_RATINGS: dict[str, tuple[float, float]] = {
    "random": (15.0, 3.0),
    "heuristic": (25.0, 3.0),
}
#: Stand-in of a bot kind not listed above (the prior of a new player).
UNKNOWN_BOT_RATING = (DEFAULT_MU, DEFAULT_SIGMA)

_MODEL = PlackettLuce(mu=DEFAULT_MU, sigma=DEFAULT_SIGMA)


def display_rating(mu: float, sigma: float) -> float:
    """The rating shown to people: ``mu - 3*sigma`` rounded to one decimal."""
    return round(mu - 3.0 * sigma, 1)


def team_of(seat: int) -> int:
    """Team of a seat: 0 for seats 0 and 2, 1 for seats 1 and 3 (docs/rules.md R1)."""
    return seat % 2


def parse_record(text: str) -> list[dict[str, Any]]:
    """The JSON objects of a JSON Lines record (header first), skipping blank lines.

    Raises:
        ValueError: a line that is not JSON or not a JSON object (the message names the line).
    """
    out: list[dict[str, Any]] = []
    for i, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"record line {i} is not JSON: {exc.msg}") from None
        if not isinstance(obj, dict):
            raise ValueError(f"record line {i} is not a JSON object")  # noqa: TRY004 (bad data, not a bad type)
        out.append(obj)
    return out


def record_points(lines: Sequence[dict[str, Any]]) -> list[int] | None:
    """Per-seat Anhui points of a whole game record, or ``None`` when its rules award none.

    The rules award points when the header's ``options.points`` is true; the points are the sums
    of the ``points`` lists of the ``deal_end`` events (docs/rules.md section 2.1: 1-2 gives ±4,
    1-3 ±2, 1-4 ±1 per deal).
    """
    if not lines or not (lines[0].get("options") or {}).get("points"):
        return None
    total = [0, 0, 0, 0]
    for ev in lines[1:]:
        pts = ev.get("points") if ev.get("type") == "deal_end" else None
        if isinstance(pts, list) and len(pts) == 4:
            for s in range(4):
                if isinstance(pts[s], int) and not isinstance(pts[s], bool):
                    total[s] += pts[s]
    return total


@dataclass(frozen=True)
class RatingChange:
    """One person's change from a game.

    Attributes:
        user_id: the user.
        seat: the seat played (0-3).
        won: their team won.
        rating_before, rating_after: display ratings (mu - 3*sigma, one decimal).
        points: Anhui points added (0 when the rules award none).
    """

    user_id: int
    seat: int
    won: bool
    rating_before: float
    rating_after: float
    points: int


def _add_points_only(db: Session, game: GameRow, points: list[int] | None) -> None:
    """Add each seated person's Anhui points of ``game``'s finished deals (nothing else changes);
    a user seated twice counts once, at the first seat (as :func:`update_ratings`)."""
    if points is None or not any(points):
        return
    seat_of: dict[int, int] = {}
    for p in sorted(game.players, key=lambda p: p.seat):
        if p.user_id is not None:
            seat_of.setdefault(p.user_id, p.seat)
    if not seat_of:
        return
    # rows locked in id order: every transaction that locks several users (the presence batch too) takes
    # them in the same order, so two of them cannot deadlock on PostgreSQL
    users = db.scalars(select(User).where(User.id.in_(seat_of)).order_by(User.id).with_for_update()
                       .execution_options(populate_existing=True)).all()
    for user in users:
        user.anhui_points = (user.anhui_points or 0) + points[seat_of[user.id]]
    db.flush()


def update_ratings(db: Session, game: GameRow) -> list[RatingChange]:
    """Update the people of a finished game: rating, games played/won and Anhui points.

    Every seated person (a ``game_players`` row with a ``user_id``; guests too) gets one more game
    played, one more win if their team is ``game.winner_team``, the Anhui points of their seat when
    the record's rules award them, and a new openskill rating from the two-team result (winners
    first). A user seated more than once is counted once (the first seat). Nothing is committed.

    Args:
        db: session the ``game`` and its players belong to.
        game: a stored game with its players and ``winner_team`` (0 or 1).
    An abandoned game (``winner_team`` ``None``) rates nobody and counts no game, but the Anhui
    points of its finished deals are added all the same (issue 21 item 7: every finished deal
    counts toward the ladder, whether or not the game reached its end).

    Returns:
        The changes, one per person, in seat order; empty when ``winner_team`` is not 0 or 1.
    Raises:
        ValueError: the stored record is not JSON Lines.
    """
    points = record_points(parse_record(game.record))
    if game.winner_team not in (0, 1):
        _add_points_only(db, game, points)
        return []
    players = sorted(game.players, key=lambda p: p.seat)
    ids = {p.user_id for p in players if p.user_id is not None}
    # Lock the rows (PostgreSQL) and read fresh values, so that two games ending together add up.
    locked = db.scalars(
        select(User).where(User.id.in_(ids)).order_by(User.id).with_for_update()
        .execution_options(populate_existing=True)
    ).all() if ids else []
    users = {u.id: u for u in locked}
    humans: dict[int, tuple[int, User]] = {}  # user id -> (seat, user)
    stand_ins: dict[int, Any] = {}
    for p in players:
        if p.user_id is not None:
            user = users.get(p.user_id)
            if user is not None and p.user_id not in humans:
                humans[p.user_id] = (p.seat, user)
                stand_ins[p.seat] = _MODEL.rating(mu=user.rating_mu, sigma=user.rating_sigma)
                continue
        mu, sigma = BOT_RATINGS.get(p.bot or "", UNKNOWN_BOT_RATING)
        stand_ins[p.seat] = _MODEL.rating(mu=mu, sigma=sigma)
    if not humans:
        return []
    for seat in range(4):  # a seat without a player row: treat as an unknown bot
        stand_ins.setdefault(seat, _MODEL.rating(mu=UNKNOWN_BOT_RATING[0], sigma=UNKNOWN_BOT_RATING[1]))

    winners = [s for s in range(4) if team_of(s) == game.winner_team]
    losers = [s for s in range(4) if team_of(s) != game.winner_team]
    rated = _MODEL.rate([[stand_ins[s] for s in winners], [stand_ins[s] for s in losers]])
    new_by_seat = dict(zip(winners + losers, rated[0] + rated[1], strict=True))

    changes: list[RatingChange] = []
    for user_id, (seat, user) in sorted(humans.items(), key=lambda kv: kv[1][0]):
        before = display_rating(user.rating_mu, user.rating_sigma)
        new = new_by_seat[seat]
        user.rating_mu = float(new.mu)
        user.rating_sigma = float(new.sigma)
        won = team_of(seat) == game.winner_team
        user.games_played = (user.games_played or 0) + 1
        user.games_won = (user.games_won or 0) + (1 if won else 0)
        gained = points[seat] if points is not None else 0
        user.anhui_points = (user.anhui_points or 0) + gained
        changes.append(
            RatingChange(user_id, seat, won, before, display_rating(user.rating_mu, user.rating_sigma), gained)
        )
    db.flush()
    return changes
