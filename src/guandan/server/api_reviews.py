"""HTTP API of the reviews of deals (复盘, issue 22): start a review, follow it, read it.

* ``POST /api/games/{id}/deals/{n}/review?seat=S`` (logged in, unless the review is cached) ->
  ``{job, status, done, total, game, deal, seat}``: the cached review at once (``status: "done"``
  with ``result``, 200), or a job queued or computing (202; the same job for the same request while
  it runs). ``n`` is the deal's 1-based place in the game's record, ``S`` the reviewed seat 0-3.
* ``GET /api/reviews/{job}`` -> the same object: ``status`` ``queued`` / ``running`` (with
  ``done`` of ``total`` decisions) / ``done`` (with ``result``, :func:`guandan.review.review_lines`'s
  JSON) / ``failed`` (with ``error.code``).

Errors (the server's shape, :mod:`guandan.server.errors`): 404 ``no_game`` (the access rule of the
replay, :func:`guandan.server.api_accounts.public_game`: a game the replay does not show has no
review), 409 ``game_unfinished`` (the record has no ``game_over``: an abandoned game), 404
``no_deal``, 400 ``bad_seat``, 403 ``review_own_seat`` (a daily-challenge board before the day
closes is reviewed only from its player's seat), 401 ``login_required`` (a review to compute needs an account), 429
``review_running`` / ``reviews_busy`` (limits, :mod:`guandan.server.reviews`), 404 ``no_review``.

The handlers are plain functions (FastAPI runs them in its thread pool): the database and the job
bookkeeping never block the event loop, and the review itself runs in worker processes.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi.responses import JSONResponse

from guandan.server.api_accounts import error, public_game
from guandan.server.auth import CurrentUser
from guandan.server.challenge_store import own_seat_only
from guandan.server.db import DbSession
from guandan.server.models import utcnow
from guandan.server.ratings import parse_record
from guandan.server.reviews import ReviewBusy, ReviewService, record_deals

__all__ = ["make_reviews_router"]


def _positive(text: str) -> int | None:
    return int(text) if text.isascii() and text.isdigit() and len(text) <= 10 else None


def make_reviews_router(service: ReviewService) -> APIRouter:
    """The reviews' routes (module docstring) over ``service``.

    Args:
        service: the server's :class:`~guandan.server.reviews.ReviewService`.
    Returns:
        An ``APIRouter`` to include in the app (after the accounts API's error handlers).
    """
    router = APIRouter()

    @router.post("/api/games/{game_id}/deals/{deal}/review")
    def start_review(game_id: str, deal: str, db: DbSession, user: CurrentUser, seat: str | None = None) -> Any:
        """Start the review of seat ``seat`` in deal ``deal`` of game ``game_id``, or answer the
        cached one (module docstring)."""
        gid = _positive(game_id)
        if gid is None:
            raise error(404, "no such game", "no_game", {"game": game_id[:20]})
        s = _positive(seat or "")
        if s is None or s > 3:
            raise error(400, "seat must be 0, 1, 2 or 3", "bad_seat")
        game = public_game(db, gid, user)
        own = own_seat_only(db, game.room_id, user.id if user is not None else None, utcnow())
        if own is not None and s != own:
            # a daily-challenge board before the day closes: its player reviews it from their own seat
            raise error(403, "until the day's challenge closes, a board is reviewed from its player's seat",
                        "review_own_seat", {"seat": own})
        try:
            record = parse_record(game.record)
        except ValueError:
            raise error(500, f"the stored record of game {gid} is corrupt", "corrupt_record", {"game": gid}) from None
        deals, over = record_deals(record)
        if not over:
            raise error(409, f"game {gid} did not finish: only finished games are reviewed", "game_unfinished",
                        {"game": gid})
        n = _positive(deal)
        if n is None or not 1 <= n <= deals:
            raise error(404, f"game {gid} has {deals} deal(s)", "no_deal", {"game": gid, "deal": deal[:20],
                                                                              "deals": deals})
        hit = service.cached(gid, n, s)
        if hit is not None:
            return hit.to_json()
        if user is None:
            raise error(401, "log in to have a deal reviewed", "login_required")
        lines = [ln for ln in game.record.splitlines() if ln.strip()]
        try:
            job = service.submit(gid, n, s, lines, user.id)
        except ReviewBusy as e:
            raise error(429, e.message, e.code, e.params) from None
        except RuntimeError:
            raise error(503, "the server is shutting down", "shutting_down") from None
        body = job.to_json()
        return JSONResponse(body, status_code=200 if job.status in ("done", "failed") else 202)

    @router.get("/api/reviews/{job}")
    def review_status(job: str) -> Any:
        """A review job's progress, then its result (module docstring); 404 ``no_review``."""
        found = service.get(job[:64])
        if found is None:
            raise error(404, "no such review", "no_review")
        return found.to_json()

    return router
