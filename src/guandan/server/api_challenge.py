"""The daily duplicate challenge's HTTP API (issue 22; page ``/challenge``, ``static/js/challenge.js``).

* ``GET /api/challenge/today`` -- today's challenge (UTC), published on the first request of the
  day (:meth:`ChallengeStore.get_or_create`, race-safe): ``{day, closes_at, closed, preset, bots,
  n_boards, field, boards: [{number, status, room, result, pct, game, review_url, results}], me}``.
  ``status`` is ``open`` (not started by the viewer), ``playing`` or ``played``; ``result``,
  ``pct``, ``game``, ``review_url`` and ``results`` (how many results the board has) are given only
  for a board the viewer may see (:func:`guandan.server.challenge.board_visible`): one they
  played, or any board once the day has closed. ``me``: the viewer's standing of the day
  (``{ranked, pct, boards, rank}``) or ``null``.
* ``GET /api/challenge/days/{day}`` -- the same for a published day (404 ``no_challenge``
  otherwise: a day that was not published cannot be fetched, and is never published by a read).
* ``POST /api/challenge/boards/{n}/play`` -- start board ``n`` of today's challenge, or go back to
  it: ``{room, created}``; 401 without an account (a guest account plays unranked); 409
  ``board_played`` when the account has finished it (a board is played once per account).
* ``GET /api/challenge/days/{day}/boards/{n}?limit=200`` -- a board the viewer may see: ``{board
  (its JSON, every hand), frequencies: [{result, count, pct}], results: [{name, ranked, result, pct,
  game, replay_url, review_url}]}`` (the best ``limit`` results, and the viewer's); 404
  ``board_hidden`` otherwise (nothing about it is shown).
* ``GET /api/challenge/leaderboard?period=day|week&day=YYYY-MM-DD&limit=`` -- the day's or the
  ISO week's standings (average percentage, boards), ranked plays only: ``{period, day, days,
  standings: [{rank, name, pct, boards}], me}``.
* ``GET /api/challenge/me`` -- the signed-in account's history: ``{days: [{day, pct, boards, rank,
  plays: [{board, result, pct, game}]}], average, boards}`` (newest day first, 30 days).

Errors are the server's ``{"error", "code", "params"}``; the UI translates the codes
(``i18n_challenge.js``).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from sqlalchemy import select

from guandan.duplicate import DayScores

from .api_accounts import error, iso
from .auth import CurrentUser, RequiredUser
from .challenge import (
    ChallengeConfig,
    Play,
    board_visible,
    challenge_day,
    closes_at,
    is_closed,
    parse_day,
    standings_json,
    week_days,
    week_standings,
)
from .challenge_store import ChallengeInfo, ChallengeStore
from . import botgames, models
from .botgames import BotGameLimits, BotGameRefused
from .models import utcnow
from .table.bots import bot_agent
from .table.info import WAITING

#: Seconds during which a just-started board waits for its player's page before the bot covers
#: an absent player (the page opens the room right after starting it).
START_GRACE_S = 20.0


def _config(settings: Any) -> ChallengeConfig:
    return ChallengeConfig(
        boards=int(getattr(settings, "challenge_boards", 12)),
        preset=str(getattr(settings, "challenge_preset", "official")),
        bots=str(getattr(settings, "challenge_bots", "normal")),
    )


def _day_json(ch: ChallengeInfo, scores: DayScores, mine: list[Play], viewer: Any, closed: bool) -> dict[str, Any]:
    """The day view of ``ch`` for ``viewer`` (a ``User`` or ``None``; ``mine``: the viewer's
    plays): module docstring."""
    vid = viewer.id if viewer is not None else None
    by_board = {p.board: p for p in mine}
    boards = []
    for n in range(1, ch.n_boards + 1):
        p = by_board.get(n)
        row: dict[str, Any] = {"number": n, "status": "open" if p is None else "played" if p.finished else "playing",
                               "room": p.room if p is not None and not p.finished else None}
        if board_visible(n, vid, mine, closed):
            pct = scores.percentage(n, vid) if p is not None and p.ranked and p.finished else None
            row.update(result=p.result if p is not None else None, pct=None if pct is None else round(pct, 2),
                       game=p.game if p is not None else None,
                       review_url=f"/review/{p.game}?deal=1&seat=0" if p is not None and p.game else None,
                       results=scores.tables[n].n)
        elif p is not None and p.finished:
            row.update(result=p.result)  # a guest's own result: the board stays hidden until the close
        boards.append(row)
    st = scores.standing(vid) if vid is not None else None
    me = None
    if viewer is not None:
        me = {"ranked": not viewer.is_guest, "pct": round(st.pct, 2) if st else None,
              "boards": st.boards if st else 0, "rank": st.rank if st else None}
    return {"day": ch.day.isoformat(), "closes_at": iso(closes_at(ch.day)), "closed": closed, "preset": ch.preset,
            "bots": ch.bots, "n_boards": ch.n_boards, "field": len(scores), "boards": boards, "me": me}


def make_challenge_router(store: ChallengeStore, manager: Any, settings: Any,
                          limits: BotGameLimits | None = None) -> APIRouter:
    """The challenge's routes (module docstring).

    Args:
        store: the :class:`ChallengeStore`.
        manager: the :class:`~guandan.server.manager.TableManager` (starts a board's game).
        settings: server settings: ``challenge_boards`` (12), ``challenge_preset`` (``official``),
            ``challenge_bots`` (``normal``), ``challenge_start_grace_s`` (:data:`START_GRACE_S`).
        limits: the server's one :class:`~guandan.server.botgames.BotGameLimits` (shared with the
            rooms' router); default: a new one from ``settings``.
    Raises:
        ValueError: a bad challenge setting (:class:`ChallengeConfig`).
    """
    config = _config(settings)
    router = APIRouter()
    bot_limits = limits if limits is not None else botgames.from_settings(settings)

    def mark_playing(room_id: str, user_id: int, address: str) -> bool:
        """Set a waiting board room ``playing`` through the limits on games with bots (a room
        already playing is the player going back to it: not limited). Returns whether it was
        waiting. Raises BotGameRefused (the room stays waiting; a later try starts it)."""
        with store.session_factory() as db:
            status = db.scalar(select(models.Room.status).where(models.Room.id == room_id))
            if status != WAITING:
                return False
            with bot_limits.admit(db, user_id, address) as made:
                started = store.mark_playing(room_id)
                if started:
                    made.append(room_id)
                return started

    def today() -> ChallengeInfo:
        return store.get_or_create(challenge_day(utcnow()), config)

    def published(text: str) -> ChallengeInfo:
        try:
            day = parse_day(text)
        except ValueError:
            raise error(404, "no challenge on that day (days are written YYYY-MM-DD)", "no_challenge",
                        {"day": text[:10]}) from None
        ch = today() if day == challenge_day(utcnow()) else store.find(day)
        if ch is None:
            raise error(404, f"no challenge was published on {day.isoformat()}", "no_challenge",
                        {"day": day.isoformat()})
        return ch

    def day_view(ch: ChallengeInfo, user: Any) -> dict[str, Any]:
        mine = store.plays(ch, user_id=user.id) if user is not None else []
        with store.scores(ch) as (scores, _names):
            return _day_json(ch, scores, mine, user, is_closed(ch.day, utcnow()))

    @router.get("/api/challenge/today")
    def get_today(user: CurrentUser) -> Any:
        """Today's challenge for the viewer (published now if it is the day's first request)."""
        return day_view(today(), user)

    @router.get("/api/challenge/days/{day}")
    def get_day(day: str, user: CurrentUser) -> Any:
        """A published day's challenge for the viewer; 404 ``no_challenge``."""
        return day_view(published(day), user)

    @router.post("/api/challenge/boards/{number}/play")
    async def play(number: str, user: RequiredUser, request: Request) -> Any:
        """Start (or go back to) board ``number`` of today's challenge: ``{room, created}``. Starting
        one is a game with bots: 409 ``quick_game_running`` / 429 ``too_many_quick_games``
        (:mod:`guandan.server.botgames`)."""
        n = int(number) if number.isascii() and number.isdigit() and len(number) <= 3 else 0
        ch = await manager.run_db(today)
        if not 1 <= n <= ch.n_boards:
            raise error(404, f"today's challenge has boards 1-{ch.n_boards}", "no_board",
                        {"board": number[:8], "boards": ch.n_boards})
        started = await manager.run_db(store.start_play, ch, n, user.id, not user.is_guest, bot_agent(ch.bots))
        if started.finished:
            raise error(409, f"you have played board {n} of today's challenge; each board is played once",
                        "board_played", {"board": n})
        address = request.client.host if request.client is not None else "unknown"
        try:
            playing = await manager.run_db(mark_playing, started.room, user.id, address)
        except BotGameRefused as e:  # botgames: live games limits, as for every game with bots
            raise error(e.status, e.message, e.code, e.params) from None
        if playing:
            grace_s = float(getattr(settings, "challenge_start_grace_s", START_GRACE_S))
            await manager.start_game(started.room, grace_s=grace_s)
        return {"room": started.room, "created": started.created, "board": n}

    @router.get("/api/challenge/days/{day}/boards/{number}")
    def get_board(day: str, number: str, user: CurrentUser,
                  limit: Annotated[int, Query(ge=1, le=1000)] = 200) -> Any:
        """A board's deal and its results (the best ``limit``, and the viewer's), for a viewer who
        may see it; 404 ``board_hidden``."""
        ch = published(day)
        n = int(number) if number.isascii() and number.isdigit() and len(number) <= 3 else 0
        mine = store.plays(ch, user_id=user.id) if user is not None else []
        if not 1 <= n <= ch.n_boards or not board_visible(n, user.id if user else None, mine,
                                                          is_closed(ch.day, utcnow())):
            raise error(404, "this board is shown to those who have played it, and to everyone once the day closes",
                        "board_hidden", {"board": number[:8]})
        listed = store.plays(ch, board=n, finished=True, limit=limit)
        own = [p for p in mine if p.board == n and p.finished and p not in listed]
        with store.scores(ch) as (scores, _names):
            table = scores.tables[n]
            results = []
            for p in listed + own:
                pct = scores.percentage(n, p.player) if p.ranked and p.player in scores.results[n] else None
                results.append({"name": p.name, "ranked": p.ranked, "result": p.result,
                                "pct": None if pct is None else round(pct, 2), "game": p.game,
                                "replay_url": f"/replay/{p.game}" if p.game else None,
                                "review_url": f"/review/{p.game}?deal=1&seat=0" if p.game else None})
            freq = [{"result": v, "count": c, "pct": round(table.percentage(v), 2)} for v, c in table.frequencies()]
        return {"day": ch.day.isoformat(), "number": n, "board": ch.boards[n - 1], "frequencies": freq,
                "results": results}

    @router.get("/api/challenge/leaderboard")
    def leaderboard(user: CurrentUser, period: str = "day", day: str | None = None,
                    limit: Annotated[int, Query(ge=1, le=500)] = 100) -> Any:
        """The day's or the week's standings (module docstring)."""
        if period not in ("day", "week"):
            raise error(400, 'period must be "day" or "week"', "bad_period")
        d = challenge_day(utcnow()) if day is None else published(day).day
        chs = [today()] if period == "day" and day is None else \
            store.in_days([d] if period == "day" else week_days(d))
        vid = user.id if user is not None else None
        if period == "day":
            with store.scores(chs[0]) as (scores, names):
                lines = scores.leaderboard(0, limit)
                me = scores.standing(vid) if vid is not None else None
                out = standings_json(lines, names)
                mine = standings_json([me], names)[0] if me is not None else None
        else:
            names: dict[Any, str] = {}
            tables = []
            for ch in chs:
                with store.scores(ch) as (scores, day_names):
                    names.update(day_names)
                    tables.append(scores)
            standings = week_standings(tables)
            out = standings_json(standings[:limit], names)
            found = next((s for s in standings if s.player == vid), None) if vid is not None else None
            mine = standings_json([found], names)[0] if found is not None else None
        return {"period": period, "day": d.isoformat(), "days": [c.day.isoformat() for c in chs],
                "standings": out, "me": mine}

    @router.get("/api/challenge/me")
    def history(user: RequiredUser) -> Any:
        """The signed-in account's challenge history (module docstring)."""
        out = []
        total = 0.0
        count = 0
        for ch in store.user_days(user.id):
            mine = store.plays(ch, user_id=user.id)
            with store.scores(ch) as (scores, _names):
                st = scores.standing(user.id)
                rows = []
                for p in mine:
                    pct = scores.percentage(p.board, p.player) if p.ranked and p.finished else None
                    rows.append({"board": p.board, "result": p.result, "pct": None if pct is None else round(pct, 2),
                                 "game": p.game})
                    if pct is not None:
                        total += pct
                        count += 1
                out.append({"day": ch.day.isoformat(), "pct": round(st.pct, 2) if st else None,
                            "boards": st.boards if st else 0, "rank": st.rank if st else None,
                            "field": len(scores), "plays": rows})
        return {"days": out, "average": round(total / count, 2) if count else None, "boards": count}

    return router


__all__ = ["START_GRACE_S", "make_challenge_router"]
