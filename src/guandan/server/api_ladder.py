"""HTTP API of the points ladder (比赛积分制, issue 21 item 7; docs/rules.md section 2.1, seed 000).

* ``GET /api/ladder?limit=100`` -> ``{players: [user...]}``: registered people whose accumulated
  Anhui points are not zero, most points first (ties: more games won, then the older account),
  each the contract's ``user`` object (:func:`guandan.server.api_accounts.user_json`: ``anhui_points``
  and ``anhui_title``) plus ``place`` (1-based; equal points share a place, 1, 1, 3, ...).

Every finished deal of a game whose rules award points counts, including the finished deals of an
abandoned game (:func:`guandan.server.ratings.update_ratings`). The rating leaderboard stays at
``/api/leaderboard``.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query
from sqlalchemy import select

from guandan.server.api_accounts import user_json
from guandan.server.db import DbSession
from guandan.server.models import User

__all__ = ["router"]

router = APIRouter()


@router.get("/api/ladder")
def ladder(db: DbSession, limit: Annotated[int, Query(ge=1, le=500)] = 100) -> Any:
    """``{players: [user + place]}``: the points ladder, most Anhui points first (see the module)."""
    users = db.scalars(
        select(User)
        .where(User.is_guest.is_(False), User.anhui_points != 0)
        .order_by(User.anhui_points.desc(), User.games_won.desc(), User.id)
        .limit(limit)
    ).all()
    players: list[dict[str, Any]] = []
    for i, u in enumerate(users):
        row = user_json(u)
        same = players and players[-1]["anhui_points"] == u.anhui_points
        row["place"] = players[-1]["place"] if same else i + 1
        players.append(row)
    return {"players": players}
