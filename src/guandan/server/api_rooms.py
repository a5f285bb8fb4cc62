"""Rooms HTTP API (server contract, "HTTP API"): create, list, get, take a seat, leave, fill with
bots, start.

Every answer is JSON; errors are ``{"error": "one line"}`` with a 4xx status: 400 bad input (a bad
preset or rule option gives the ``RuleConfigError`` message, RULES.md section P), 401 not logged in,
403 not the room's owner, 404 no such room, 409 the room is not in a state that allows it (seat
taken, game under way, seats not all filled).

A new room is ``waiting`` with its creator in seat 0; people take and change seats while it waits;
the owner fills the empty seats with bots and starts the game once four seats are filled, after
which the live :class:`~guandan.server.tables.Table` plays it.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from sqlalchemy import select
from sqlalchemy.orm import defer

from guandan.core.errors import RuleConfigError
from guandan.core.rules import PRESET_NAMES, RuleSet

from .errors import error_body
from .hardening import bad_text, valid_room_id
from .tables import BOT_NAMES, DAMAGED, FINISHED, PLAYING, WAITING, TableManager, room_info

#: Longest room name (characters).
ROOM_NAME_MAX = 64
#: Rooms listed by ``GET /api/rooms`` (most recently updated first).
LIST_LIMIT = 100
#: Largest accepted request body (bytes).
MAX_BODY = 16 * 1024


class ApiError(Exception):
    """An error answered as ``{"error": message, "code": code, "params": params}`` with HTTP ``status``.

    ``code`` is a stable snake_case identifier that clients translate (with ``params`` filled in);
    ``message`` is the English sentence for scripts and logs.
    """

    def __init__(self, status: int, message: str, code: str | None = None,
                 params: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.code = code
        self.params = params or {}


def _error(e: ApiError) -> JSONResponse:
    return JSONResponse(error_body(e.message, e.code, e.params), status_code=e.status)


async def _body(request: Request) -> dict[str, Any]:
    raw = await request.body()
    if len(raw) > MAX_BODY:
        raise ApiError(400, f"the request body is too large (at most {MAX_BODY} bytes)")
    if not raw.strip():
        return {}
    import json

    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        raise ApiError(400, "the request body must be a JSON object") from None
    if not isinstance(data, dict):
        raise ApiError(400, "the request body must be a JSON object")
    return data


def _seconds(name: str, v: Any) -> float | None:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0 or v > 3600:
        raise ApiError(400, f"{name} must be a number of seconds between 0 and 3600, or null")
    return v


def build_rules(preset: Any, options: Any, clock_lead_s: Any = None, clock_follow_s: Any = None,
                clocks_given: tuple[bool, bool] = (False, False)) -> RuleSet:
    """The rule set of a new room: ``preset`` plus ``options`` overrides (RULES.md section P).

    ``clock_lead_s`` / ``clock_follow_s`` (seconds or ``None``; R53, AMB-25) override the options
    of the same names when ``clocks_given`` says they were sent.

    Raises:
        ApiError(400): unknown preset, options not an object, an unknown option or an invalid value
            (the ``RuleConfigError`` message).
    """
    if not isinstance(preset, str):
        raise ApiError(400, f"preset must be one of: {', '.join(PRESET_NAMES)}")
    if options is None:
        options = {}
    if not isinstance(options, dict):
        raise ApiError(400, "options must be an object {option: value}")
    try:
        base = RuleSet.preset(preset)
        rules = RuleSet.from_dict(options, base=base)
        extra: dict[str, Any] = {}
        if clocks_given[0]:
            extra["clock_lead_s"] = _seconds("clock_lead_s", clock_lead_s)
        if clocks_given[1]:
            extra["clock_follow_s"] = _seconds("clock_follow_s", clock_follow_s)
        if extra:
            rules = rules.replace(**extra)
    except RuleConfigError as e:
        raise ApiError(400, str(e).splitlines()[0]) from None
    return rules


def _from_thread(fn: Callable[..., Any], *args: Any) -> Any:
    """Run the coroutine function ``fn(*args)`` on the event loop from a handler's worker thread.

    The handlers are plain functions: FastAPI runs them in its thread pool, so their database
    calls never block the event loop (issue 11: a login flood froze every table)."""
    from anyio.from_thread import run

    return run(fn, *args)


def make_rooms_router(session_factory: Callable[[], Any], manager: TableManager, settings: Any = None) -> APIRouter:
    """The rooms endpoints as a FastAPI router (include it in the app).

    Args:
        session_factory: zero-argument callable returning a SQLAlchemy ``Session`` (``sessionmaker``).
        manager: the application's :class:`TableManager` (live tables, connected flags).
        settings: server settings (unused; kept for a uniform router signature).
    Returns:
        An ``APIRouter`` with ``GET/POST /api/rooms``, ``GET /api/rooms/{id}`` and
        ``POST /api/rooms/{id}/seat|leave|bots|start``.
    """
    from . import models
    from .auth import COOKIE_NAME, user_from_token

    router = APIRouter()

    def user_of(db: Any, request: Request) -> Any:
        token = request.cookies.get(COOKIE_NAME)
        user = user_from_token(db, token)
        if user is None:
            if token:
                db.commit()  # keeps the removal of an expired session
            raise ApiError(401, "log in first", "login_required")
        return user

    def room_of(db: Any, room_id: str) -> Any:
        room = (db.get(models.Room, room_id, options=[defer(models.Room.record)])
                if valid_room_id(room_id) else None)
        if room is None:
            raise ApiError(404, f"no room {room_id!r}")
        return room

    def summary(db: Any, room: Any) -> dict[str, Any]:
        db.refresh(room)
        return room_info(db, room).summary(manager.connected(room.id))

    def seat_rows(room: Any) -> dict[int, Any]:
        return {row.seat: row for row in room.seats}

    @router.get("/api/rooms")
    def list_rooms(request: Request) -> Any:
        """Rooms waiting or being played, most recently updated first (at most 100)."""
        with session_factory() as db:
            rooms = db.scalars(
                select(models.Room)
                .options(defer(models.Room.record))  # a damaged record may not even be UTF-8
                .where(models.Room.status.in_((WAITING, PLAYING, DAMAGED)))
                .order_by(models.Room.updated_at.desc())
                .limit(LIST_LIMIT)
            ).all()
            return {"rooms": [room_info(db, r).summary(manager.connected(r.id)) for r in rooms]}

    @router.post("/api/rooms")
    def create_room(request: Request) -> Any:
        """Create a room from ``{name?, preset, options?, clock_lead_s?, clock_follow_s?}``; the
        creator takes seat 0. Answers ``{room}``."""
        try:
            body = _from_thread(_body, request)
            with session_factory() as db:
                user = user_of(db, request)
                preset = body.get("preset", "official")
                rules = build_rules(
                    preset,
                    body.get("options"),
                    body.get("clock_lead_s"),
                    body.get("clock_follow_s"),
                    ("clock_lead_s" in body, "clock_follow_s" in body),
                )
                name = body.get("name")
                if name is None or (isinstance(name, str) and not name.strip()):
                    name = f"{user.name}'s table"
                if not isinstance(name, str):
                    raise ApiError(400, "name must be a string")
                if bad_text(name):
                    raise ApiError(400, "the room name holds a character that is not allowed (NUL or a lone "
                                   "surrogate)", "invalid_text", {"field": "name"})
                name = " ".join(name.split())
                if len(name) > ROOM_NAME_MAX:
                    raise ApiError(400, f"the room name must have at most {ROOM_NAME_MAX} characters")
                room_id = secrets.token_urlsafe(6)
                while db.get(models.Room, room_id) is not None:
                    room_id = secrets.token_urlsafe(6)
                room = models.Room(
                    id=room_id,
                    name=name,
                    preset=preset,
                    options=rules.to_dict(),
                    owner_id=user.id,
                    status=WAITING,
                    seed=None,  # deals come from secrets.SystemRandom (tables.Table._new_game)
                    record="",
                )
                db.add(room)
                db.flush()
                for s in range(4):
                    db.add(models.RoomSeat(room_id=room_id, seat=s, user_id=user.id if s == 0 else None, bot=None))
                db.commit()
                return {"room": summary(db, room)}
        except ApiError as e:
            return _error(e)

    @router.get("/api/rooms/{room_id}")
    def get_room(room_id: str) -> Any:
        """``{room}`` of ``room_id`` (404 when unknown)."""
        try:
            with session_factory() as db:
                return {"room": summary(db, room_of(db, room_id))}
        except ApiError as e:
            return _error(e)

    @router.post("/api/rooms/{room_id}/seat")
    def take_seat(room_id: str, request: Request) -> Any:
        """Take seat ``{seat: 0-3}`` (an empty one, or one held by a bot), or move to it.
        Only while the room waits. Answers ``{room}``."""
        try:
            body = _from_thread(_body, request)
            with session_factory() as db:
                user = user_of(db, request)
                room = room_of(db, room_id)
                seat = body.get("seat")
                if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat <= 3:
                    raise ApiError(400, "seat must be 0, 1, 2 or 3")
                if room.status != WAITING:
                    raise ApiError(409, "the game has started; seats can no longer change")
                rows = seat_rows(room)
                target = rows[seat]
                if target.user_id is not None and target.user_id != user.id:
                    raise ApiError(409, f"seat {seat} is taken")
                for row in rows.values():
                    if row.user_id == user.id and row.seat != seat:
                        row.user_id = None
                target.user_id = user.id
                target.bot = None
                db.commit()
                out = {"room": summary(db, room)}
            _from_thread(manager.room_changed, room_id)
            return out
        except ApiError as e:
            return _error(e)

    @router.post("/api/rooms/{room_id}/leave")
    def leave(room_id: str, request: Request) -> Any:
        """Give up one's seat while the room waits. Answers ``{room}``."""
        try:
            with session_factory() as db:
                user = user_of(db, request)
                room = room_of(db, room_id)
                rows = [r for r in room.seats if r.user_id == user.id]
                if not rows:
                    raise ApiError(409, "you have no seat in this room")
                if room.status != WAITING:
                    raise ApiError(
                        409, "the game is under way; while you are away the bot plays for you (托管)"
                    )
                for r in rows:
                    r.user_id = None
                db.commit()
                out = {"room": summary(db, room)}
            _from_thread(manager.room_changed, room_id)
            return out
        except ApiError as e:
            return _error(e)

    @router.post("/api/rooms/{room_id}/bots")
    def fill_bots(room_id: str, request: Request) -> Any:
        """Owner only: put ``{bot: 'heuristic'|'random'}`` in every empty seat. Answers ``{room}``."""
        try:
            body = _from_thread(_body, request)
            with session_factory() as db:
                user = user_of(db, request)
                room = room_of(db, room_id)
                bot = body.get("bot", "heuristic")
                if bot not in BOT_NAMES:
                    raise ApiError(400, f"bot must be one of: {', '.join(BOT_NAMES)}")
                if room.owner_id != user.id:
                    raise ApiError(403, "only the room's owner may add bots")
                if room.status != WAITING:
                    raise ApiError(409, "the game has started; seats can no longer change")
                for row in room.seats:
                    if row.user_id is None and row.bot is None:
                        row.bot = bot
                db.commit()
                out = {"room": summary(db, room)}
            _from_thread(manager.room_changed, room_id)
            return out
        except ApiError as e:
            return _error(e)

    @router.post("/api/rooms/{room_id}/start")
    def start(room_id: str, request: Request) -> Any:
        """Owner only: start the game once the four seats are filled. Answers ``{room}``."""
        try:
            with session_factory() as db:
                user = user_of(db, request)
                room = room_of(db, room_id)
                if room.owner_id != user.id:
                    raise ApiError(403, "only the room's owner may start the game")
                if room.status == PLAYING:
                    raise ApiError(409, "the game has already started")
                if room.status == FINISHED:
                    raise ApiError(409, "this room's game is over; create a new room")
                if room.status == DAMAGED:
                    raise ApiError(409, "this room's stored game is damaged and cannot be played; create a new room",
                                   "room_damaged")
                empty = [r.seat for r in room.seats if r.user_id is None and r.bot is None]
                if empty or len(room.seats) != 4:
                    raise ApiError(
                        409, f"all four seats must be filled first (empty: {', '.join(map(str, empty))})"
                    )
                room.status = PLAYING
                db.commit()
            try:
                _from_thread(manager.start_game, room_id)
            except Exception as e:  # noqa: BLE001 - put the room back so that it can be started again
                with session_factory() as db:
                    r = db.get(models.Room, room_id)
                    if r is not None and not r.record:
                        r.status = WAITING
                        db.commit()
                raise ApiError(409, f"the game could not start: {str(e).splitlines()[0] if str(e) else type(e).__name__}") from None
            with session_factory() as db:
                return {"room": summary(db, room_of(db, room_id))}
        except ApiError as e:
            return _error(e)

    @router.post("/api/rooms/{room_id}/abandon")
    def abandon(room_id: str, request: Request) -> Any:
        """Owner only, and only when every other seat holds a bot: end the game unfinished (stored
        with no winner, nobody rated); ``guandan loadtest`` does this on exit. Answers ``{room}``;
        409 ``abandon_not_alone`` when other people are seated, 409 ``not_playing`` when no game runs."""
        try:
            with session_factory() as db:
                user = user_of(db, request)
                room = room_of(db, room_id)
                if room.owner_id != user.id:
                    raise ApiError(403, "only the room's owner may abandon the game", "not_owner")
                if any(r.user_id is not None and r.user_id != user.id for r in room.seats):
                    raise ApiError(409, "other people play in this room; the game cannot be abandoned",
                                   "abandon_not_alone")
                if room.status != PLAYING:
                    raise ApiError(409, "no game is being played in this room", "not_playing")
            table = manager.tables.get(room_id)
            if table is None:
                raise ApiError(409, "no game is being played in this room", "not_playing")
            try:
                _from_thread(table.abandon)
            except Exception:  # noqa: BLE001 - IllegalAction: over meanwhile
                raise ApiError(409, "no game is being played in this room", "not_playing") from None
            _from_thread(manager.writer.wait, room_id)
            with session_factory() as db:
                return {"room": summary(db, room_of(db, room_id))}
        except ApiError as e:
            return _error(e)

    return router


__all__ = ["ApiError", "build_rules", "make_rooms_router"]
