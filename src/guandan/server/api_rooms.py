"""Rooms HTTP API (server contract, "HTTP API"; docs/table-contract.md): create, list, get, take a
seat, leave, fill with bots, start, play again, quick game, and the UI's ``/api/config``.

Every answer is JSON; errors are ``{"error": "one line", "code": code, "params": {...}}`` with a 4xx
status: 400 bad input (a bad preset or rule option gives the ``RuleConfigError`` message, docs/rules.md
section P), 401 not logged in, 403 not the room's owner, 404 no such room, 409 the room is not in a
state that allows it (seat taken, game under way, seats not all filled), 413 body too large. The
codes are listed in docs/table-contract.md section 14.

A new room is ``waiting`` with its creator in seat 0; people take and change seats while it waits;
the owner fills the empty seats with bots and starts the game once four seats are filled, after
which the live :class:`~guandan.server.table.flow.Table` plays it.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from sqlalchemy import select
from sqlalchemy.orm import defer

from guandan.core.errors import RuleConfigError
from guandan.core.rules import CLOCK_MAX_S, CLOCK_MIN_S, PRESET_NAMES, RuleSet, clock_problem

from . import botgames
from .botgames import BotGameLimits, BotGameRefused
from .errors import HttpError, error_body
from .gamestore import GameStore
from .hardening import bad_text_field, valid_room_id
from .roomstore import room_info
from .table.bots import BOT_NAMES, DIFFICULTIES, DIFFICULTY_AGENTS, bot_agent
from .table.info import DAMAGED, FINISHED, PLAYING, WAITING

if TYPE_CHECKING:
    from .manager import TableManager

#: Longest room name (characters).
ROOM_NAME_MAX = 64
#: Rooms listed by ``GET /api/rooms`` (most recently updated first).
LIST_LIMIT = 100
#: Largest accepted request body (bytes).
MAX_BODY = 16 * 1024


class ApiError(HttpError):
    """An error of the rooms and games API (:class:`~guandan.server.errors.HttpError`: ``status``,
    ``message``, ``code``, ``params``)."""


def _error(e: HttpError) -> JSONResponse:
    from .api_accounts import status_code_name

    return JSONResponse(error_body(e.message, e.code or status_code_name(e.status), e.params), status_code=e.status)


async def _body(request: Request) -> dict[str, Any]:
    """The request's JSON object (``{}`` for an empty body).

    Raises:
        ApiError(400): ``body_too_large``; ``bad_body`` (not a JSON object); ``invalid_text`` with
            ``{field}`` (dotted path) when any string in it, keys included, holds a NUL character or
            a lone surrogate (``"\\ud800"``), so that no later answer echoes it.
    """
    raw = await request.body()
    if len(raw) > MAX_BODY:
        raise ApiError(400, f"the request body is too large (at most {MAX_BODY} bytes)", "body_too_large",
                       {"max_bytes": MAX_BODY})
    if not raw.strip():
        return {}
    import json

    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        raise ApiError(400, "the request body must be a JSON object", "bad_body") from None
    if not isinstance(data, dict):
        raise ApiError(400, "the request body must be a JSON object", "bad_body")
    field = bad_text_field(data)
    if field is not None:  # before any field is read: no answer echoes text that cannot be encoded
        raise ApiError(400, f"{field or 'the body'} holds a character that is not allowed (NUL or a lone "
                       "surrogate)", "invalid_text", {"field": field})
    return data


def _seconds(name: str, v: Any) -> float | None:
    """A top-level clock field of ``POST /api/rooms`` (``clock_lead_s``/``clock_follow_s``), checked
    by the same :func:`guandan.core.rules.clock_problem` as the rule options of the same names.

    Raises:
        ApiError(400, bad_seconds): not ``None`` nor a number of seconds from
            :data:`~guandan.core.rules.CLOCK_MIN_S` to :data:`~guandan.core.rules.CLOCK_MAX_S`
            (``params``: ``{field, min, max}``).
    """
    if clock_problem(v) is not None:
        raise ApiError(400, f"{name} must be a number of seconds from {CLOCK_MIN_S:g} to {CLOCK_MAX_S:g}, "
                       "or null", "bad_seconds", {"field": name, "min": CLOCK_MIN_S, "max": CLOCK_MAX_S})
    return v  # type: ignore[no-any-return]


def build_rules(preset: Any, options: Any, clock_lead_s: Any = None, clock_follow_s: Any = None,
                clocks_given: tuple[bool, bool] = (False, False)) -> RuleSet:
    """The rule set of a new room: ``preset`` plus ``options`` overrides (docs/rules.md section P).

    ``clock_lead_s`` / ``clock_follow_s`` (seconds or ``None``; R53, AMB-25) override the options
    of the same names when ``clocks_given`` says they were sent. Every value, top-level or in
    ``options``, is checked once, by :class:`~guandan.core.rules.RuleSet` with the bounds of
    :mod:`guandan.core.rules` (clocks ``CLOCK_MIN_S``..``CLOCK_MAX_S``, ``a_fail_limit``
    1..``A_FAIL_LIMIT_MAX``).

    Raises:
        ApiError(400): ``bad_preset`` (unknown preset), ``bad_options`` (options not an object),
            ``unknown_rule_option``, ``bad_rule_option`` (an invalid or out-of-bounds value: the
            ``RuleConfigError`` message), ``bad_seconds`` (a top-level clock out of bounds).
    """
    if not isinstance(preset, str) or preset not in PRESET_NAMES:
        shown = preset if isinstance(preset, str) and len(preset) <= 32 else None
        raise ApiError(400, f"unknown preset {shown!r}; preset must be one of: {', '.join(PRESET_NAMES)}",
                       "bad_preset", {"preset": shown, "valid": list(PRESET_NAMES)})
    if options is None:
        options = {}
    if not isinstance(options, dict):
        raise ApiError(400, "options must be an object {option: value}", "bad_options")
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
        raise rule_error(e, options) from None
    return rules


def _from_thread(fn: Callable[..., Any], *args: Any) -> Any:
    """Run the coroutine function ``fn(*args)`` on the event loop from a handler's worker thread.

    The handlers are plain functions: FastAPI runs them in its thread pool, so their database
    calls never block the event loop (issue 11: a login flood froze every table)."""
    from anyio.from_thread import run

    return run(fn, *args)


def rule_error(e: RuleConfigError, options: dict[str, Any]) -> ApiError:
    """The 400 answer of a ``RuleConfigError``: ``unknown_rule_option`` (``{option}``) or
    ``bad_rule_option`` (``{option, value, valid}``; ``valid`` the values listed, or null)."""
    message = str(e).splitlines()[0]
    m = re.match(r"unknown rule option '([^']*)'", message)
    if m:
        return ApiError(400, message, "unknown_rule_option", {"option": m.group(1)[:64]})
    m = re.match(r"rule option (\w+)", message)
    option = m.group(1) if m else None
    valid = message.split("valid values: ", 1)[1] if "valid values: " in message else None
    value = options.get(option) if option is not None else None
    if not isinstance(value, (str, int, float, bool, type(None), list)):
        value = None
    return ApiError(400, message, "bad_rule_option", {"option": option, "value": value, "valid": valid})


def make_rooms_router(session_factory: Callable[[], Any], manager: TableManager, settings: Any = None,
                      limits: BotGameLimits | None = None) -> APIRouter:
    """The rooms endpoints as a FastAPI router (include it in the app).

    Args:
        session_factory: zero-argument callable returning a SQLAlchemy ``Session`` (``sessionmaker``).
        manager: the application's :class:`TableManager` (live tables, connected flags).
        settings: server settings (clocks, the limits on games with bots).
        limits: the server's one :class:`~guandan.server.botgames.BotGameLimits` (shared with the
            challenge's router); default: a new one from ``settings``.
    Returns:
        An ``APIRouter`` with ``GET/POST /api/rooms``, ``GET /api/rooms/{id}`` and
        ``POST /api/rooms/{id}/seat|leave|bots|start``.
    """
    from . import models
    from .auth import COOKIE_NAME, user_from_token

    router = APIRouter()
    bot_limits = limits if limits is not None else botgames.from_settings(settings)

    @contextmanager
    def bot_game(db: Any, user_id: int, request: Request, seats: Any) -> Iterator[list[str]]:
        """Start a game through the limits on games with bots (:mod:`guandan.server.botgames`)
        when ``seats`` hold a bot: append the started room's id to the yielded list. Raises
        BotGameRefused (409 ``quick_game_running``, 429 ``too_many_quick_games``)."""
        if not botgames.has_bots(seats):
            yield []
            return
        address = request.client.host if request.client is not None else "unknown"
        whose, solo = botgames.players_of(seats, user_id)  # the one person seated, else the starter
        with bot_limits.admit(db, whose, address, solo) as made:
            yield made

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
            shown = room_id[:16] if isinstance(room_id, str) else None
            raise ApiError(404, f"no room {shown!r}", "no_room", {"room": shown})
        return room

    def info_of(db: Any, room: Any) -> Any:
        info = room_info(db, room)
        info.public_url = manager.public_url
        info.next_room = manager.next_room(room.id)
        return info

    def summary(db: Any, room: Any) -> dict[str, Any]:
        db.refresh(room)
        return info_of(db, room).summary(manager.connected(room.id))

    def seat_rows(room: Any) -> dict[int, Any]:
        return {row.seat: row for row in room.seats}

    def room_reply(room_id: str) -> dict[str, Any]:
        """``{room}``: the summary of ``room_id`` read in a fresh session (404 ApiError when unknown)."""
        with session_factory() as db:
            return {"room": summary(db, room_of(db, room_id))}

    @router.get("/api/rooms")
    def list_rooms(request: Request) -> Any:
        """Rooms waiting or being played, most recently updated first (at most 100); board rooms
        (the daily challenge) are never listed."""
        with session_factory() as db:
            rooms = db.scalars(
                select(models.Room)
                .options(defer(models.Room.record))  # a damaged record may not even be UTF-8
                .where(models.Room.status.in_((WAITING, PLAYING, DAMAGED)), models.Room.board.is_(None))
                .order_by(models.Room.updated_at.desc())
                .limit(LIST_LIMIT)
            ).all()
            return {"rooms": [info_of(db, r).summary(manager.connected(r.id)) for r in rooms]}

    @router.post("/api/rooms")
    def create_room(request: Request) -> Any:
        """Create a room from ``{name?, preset, options?, clock_lead_s?, clock_follow_s?, clocks?}``;
        the creator takes seat 0. ``clocks`` is ``"default"`` (R53 clocks, 60 s / 30 s, when the game
        starts with more than one person and no clock value was given) or ``"off"``. Answers ``{room}``."""
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
                clocks = body.get("clocks", "default")
                if clocks not in ("default", "off"):
                    raise ApiError(400, 'clocks must be "default" or "off"', "bad_clocks")
                options = body.get("options") or {}
                given = any(k in body or k in options for k in ("clock_lead_s", "clock_follow_s"))
                # R53 by default: decided when the game starts (how many people sit then)
                default_clocks = clocks == "default" and not given
                name = body.get("name")
                if name is None or (isinstance(name, str) and not name.strip()):
                    name = f"{user.name}'s table"
                if not isinstance(name, str):
                    raise ApiError(400, "name must be a string", "bad_room_name")
                name = " ".join(name.split())
                if len(name) > ROOM_NAME_MAX:
                    raise ApiError(400, f"the room name must have at most {ROOM_NAME_MAX} characters",
                                   "room_name_too_long", {"max": ROOM_NAME_MAX})
                room = new_room(db, user.id, name, preset, rules.to_dict(),
                                [(user.id, None), (None, None), (None, None), (None, None)], default_clocks)
                db.commit()
                return {"room": summary(db, room)}
        except ApiError as e:
            return _error(e)

    @router.get("/api/rooms/{room_id}")
    def get_room(room_id: str) -> Any:
        """``{room}`` of ``room_id`` (404 when unknown)."""
        try:
            return room_reply(room_id)
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
                    raise ApiError(400, "seat must be 0, 1, 2 or 3", "bad_seat")
                if room.status != WAITING:
                    raise ApiError(409, "the game has started; seats can no longer change", "seats_locked")
                rows = seat_rows(room)
                target = rows[seat]
                if target.user_id is not None and target.user_id != user.id:
                    raise ApiError(409, f"seat {seat} is taken", "seat_taken", {"seat": seat})
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
        """Give up one's seat while the room waits, or leave the game under way
        (:mod:`guandan.server.table.leaving`): with no other person at the table the game ends
        unfinished (stored, unrated); otherwise the bot plays the seat on (托管 reason ``left``) and
        the leaver may come back and take it again. Answers ``{room, left}`` with ``left`` one of
        ``"seat"`` (the room waited), ``"ended"`` or ``"bot"``. 409 ``no_seat``, ``tournament_table``
        (a tournament match cannot be left), ``not_playing`` (the game is over)."""
        try:
            with session_factory() as db:
                user = user_of(db, request)
                room = room_of(db, room_id)
                rows = [r for r in room.seats if r.user_id == user.id]
                if not rows:
                    raise ApiError(409, "you have no seat in this room", "no_seat")
                if room.status == WAITING:
                    for r in rows:
                        r.user_id = None
                    db.commit()
                    out = {"room": summary(db, room), "left": "seat"}
                    playing_seat = None
                elif room.status == PLAYING:
                    _not_a_tournament_table(db, room_id)
                    playing_seat = rows[0].seat
                else:
                    raise ApiError(409, "no game is being played in this room", "not_playing")
            if playing_seat is None:
                _from_thread(manager.room_changed, room_id)
                return out
            try:
                outcome = _from_thread(manager.leave, room_id, playing_seat)  # at the table's owner in a cluster
            except Exception:  # noqa: BLE001 - LookupError/IllegalAction: no live game, or over meanwhile
                raise ApiError(409, "no game is being played in this room", "not_playing") from None
            return {**room_reply(room_id), "left": outcome}
        except ApiError as e:
            return _error(e)

    @router.post("/api/rooms/{room_id}/bots")
    def fill_bots(room_id: str, request: Request) -> Any:
        """Owner only: put ``{bot: difficulty}`` (``easy``/``normal``/``hard``/``expert`` where
        installed; the old names ``heuristic`` and ``random`` too) in every empty seat. Answers ``{room}``."""
        try:
            body = _from_thread(_body, request)
            with session_factory() as db:
                user = user_of(db, request)
                room = room_of(db, room_id)
                bot = body.get("bot", "normal")
                if not isinstance(bot, str) or bot not in BOT_NAMES:
                    shown = bot if isinstance(bot, str) and len(bot) <= 32 else None
                    raise ApiError(400, f"bot must be one of: {', '.join(BOT_NAMES)}", "bad_bot",
                                   {"bot": shown, "valid": list(BOT_NAMES)})
                if room.owner_id != user.id:
                    raise ApiError(403, "only the room's owner may add bots", "not_owner", {"action": "bots"})
                if room.status != WAITING:
                    raise ApiError(409, "the game has started; seats can no longer change", "seats_locked")
                agent = bot_agent(bot)
                for row in room.seats:
                    if row.user_id is None and row.bot is None:
                        row.bot = agent
                db.commit()
                out = {"room": summary(db, room)}
            _from_thread(manager.room_changed, room_id)
            return out
        except ApiError as e:
            return _error(e)

    @router.post("/api/rooms/{room_id}/start")
    def start(room_id: str, request: Request) -> Any:
        """Owner only: start the game once the four seats are filled. Answers ``{room}``. With a bot
        seat, the limits on games with bots apply (:mod:`guandan.server.botgames`: 409
        ``quick_game_running``, 429 ``too_many_quick_games``; the room stays waiting)."""
        try:
            with session_factory() as db:
                user = user_of(db, request)
                room = room_of(db, room_id)
                if room.owner_id != user.id:
                    raise ApiError(403, "only the room's owner may start the game", "not_owner", {"action": "start"})
                if room.status == PLAYING:
                    raise ApiError(409, "the game has already started", "already_started")
                if room.status == FINISHED:
                    raise ApiError(409, "this room's game is over; create a new room", "game_finished")
                if room.status == DAMAGED:
                    raise ApiError(409, "this room's stored game is damaged and cannot be played; create a new room",
                                   "room_damaged")
                empty = [r.seat for r in room.seats if r.user_id is None and r.bot is None]
                if empty or len(room.seats) != 4:
                    raise ApiError(
                        409, f"all four seats must be filled first (empty: {', '.join(map(str, empty))})",
                        "seats_empty", {"empty": empty},
                    )
                apply_default_clocks(room, settings)
                with bot_game(db, user.id, request, room.seats) as made:  # botgames: live games limits
                    room.status = PLAYING
                    db.commit()
                    made.append(room_id)
            start_or_restore(room_id)
            return room_reply(room_id)
        except (ApiError, BotGameRefused) as e:
            return _error(e)

    def start_or_restore(room_id: str) -> None:
        """Start the live game of a room just set ``playing`` (from a handler's worker thread); on
        failure put it back to ``waiting``.

        Raises:
            ApiError(409, start_failed): the game could not start.
        """
        try:
            _from_thread(manager.start_game, room_id)
        except Exception as e:  # noqa: BLE001 - put the room back so that it can be started again
            started = GameStore(session_factory).count(room_id) > 0  # its header is stored
            with session_factory() as db:
                r = db.get(models.Room, room_id)
                if r is not None and not r.record and not started:
                    r.status = WAITING
                    db.commit()
            detail = str(e).splitlines()[0] if str(e) else type(e).__name__
            raise ApiError(409, f"the game could not start: {detail}", "start_failed", {"detail": detail}) from None

    # "play again" checks for a new room and makes one under manager.again_lock(room) (a Redis
    # lock in a cluster, so that two processes never make two new rooms)

    @router.post("/api/rooms/{room_id}/again")
    def play_again(room_id: str, request: Request) -> Any:
        """Owner only, once the game is over: a new room with the same seats (people and bots), name
        and rules, started at once; every connection of the old room is sent ``{"type": "moved",
        "room": new_id}``. Pressing it again answers the same new room. Answers ``{room}`` (the new
        room). 403 ``not_owner``, 409 ``game_not_over``; with a bot seat, the limits on games with
        bots (:mod:`guandan.server.botgames`: 409 ``quick_game_running``, 429
        ``too_many_quick_games``). Requests at once (a double click, two
        tabs) are taken one after another, so they all answer the one new room."""
        with manager.again_lock(room_id):
            return _play_again(room_id, request)

    def _play_again(room_id: str, request: Request) -> Any:
        try:
            _from_thread(_body, request)
            with session_factory() as db:
                user = user_of(db, request)
                room = room_of(db, room_id)
                if room.owner_id != user.id:
                    raise ApiError(403, "only the room's owner may start another game", "not_owner",
                                   {"action": "again"})
                if room.status != FINISHED:
                    raise ApiError(409, "play again is possible once the game is over", "game_not_over")
                _not_a_tournament_table(db, room_id)
                done = manager.next_room(room_id)
                if done is not None and db.get(models.Room, done) is not None:
                    return {"room": summary(db, room_of(db, done))}
                rows = seat_rows(room)
                seats = [(rows[s].user_id, rows[s].bot) if s in rows else (None, None) for s in range(4)]
                if any(u is None and b is None for u, b in seats):
                    raise ApiError(409, "a seat of the finished game is empty", "seats_empty",
                                   {"empty": [s for s, (u, b) in enumerate(seats) if u is None and b is None]})
                with bot_game(db, user.id, request, seats) as made:  # botgames: live games limits
                    new = new_room(db, user.id, room.name, room.preset, dict(room.options or {}), seats,
                                   bool(getattr(room, "default_clocks", False)),
                                   unrated=bool(getattr(room, "unrated", False)))
                    new.status = PLAYING
                    new_id = new.id
                    db.commit()
                    made.append(new_id)
            start_or_restore(new_id)
            _from_thread(manager.moved_to, room_id, new_id)
            return room_reply(new_id)
        except (ApiError, BotGameRefused) as e:
            return _error(e)

    @router.post("/api/quick")
    def quick_game(request: Request) -> Any:
        """A game against three bots at once: ``{difficulty?: "normal", preset?: "official", clocks?:
        "default"}`` (a guest session is enough). Answers ``{room}``: a new started room, the caller in
        seat 0, three bots of that difficulty, the preset's rules. ``clocks`` ``"default"`` gives the
        move clocks of the server's defaults (R53: ``settings.default_clock_lead_s`` /
        ``_follow_s``, 60 s / 30 s) as commercial tables always run one; ``"off"`` none (issue 25,
        item 9). 400 ``bad_difficulty``, ``bad_preset``, ``bad_clocks``; 409 ``quick_game_running``
        (``params.room``: the caller's live game against bots) and 429 ``too_many_quick_games`` from
        the limits of :mod:`guandan.server.botgames`."""
        try:
            body = _from_thread(_body, request)
            with session_factory() as db:
                user = user_of(db, request)
                difficulty = body.get("difficulty", "normal")
                if not isinstance(difficulty, str) or difficulty not in DIFFICULTY_AGENTS:
                    shown = difficulty if isinstance(difficulty, str) and len(difficulty) <= 32 else None
                    raise ApiError(400, f"difficulty must be one of: {', '.join(DIFFICULTIES)}", "bad_difficulty",
                                   {"difficulty": shown, "valid": list(DIFFICULTIES)})
                preset = body.get("preset", "official")
                clocks = body.get("clocks", "default")
                if clocks not in ("default", "off"):
                    raise ApiError(400, 'clocks must be "default" or "off"', "bad_clocks")
                if clocks == "default":
                    lead, follow = _default_clock(settings, "lead"), _default_clock(settings, "follow")
                    rules = build_rules(preset, None, lead, follow, (True, True))
                else:
                    rules = build_rules(preset, None)
                agent = DIFFICULTY_AGENTS[difficulty]
                seats = [(user.id, None), (None, agent), (None, agent), (None, agent)]
                with bot_game(db, user.id, request, seats) as made:  # botgames: live games limits
                    room = new_room(db, user.id, f"{user.name} vs bots", preset, rules.to_dict(), seats)
                    room.status = PLAYING
                    room_id = room.id
                    db.commit()
                    made.append(room_id)
            start_or_restore(room_id)
            return room_reply(room_id)
        except (ApiError, BotGameRefused) as e:
            return _error(e)

    def _not_a_tournament_table(db: Any, room_id: str) -> None:
        """409 ``tournament_table``: the room plays a tournament match (its result belongs to the
        tournament: abandoning it left the table "playing" for good, and "play again" made a
        stray room of the match)."""
        if db.scalar(select(models.TournamentTableRow.id).where(models.TournamentTableRow.room_id == room_id)
                     .limit(1)) is not None:
            raise ApiError(409, "this room plays a tournament match: its result is the tournament's",
                           "tournament_table")

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
                _not_a_tournament_table(db, room_id)
                if any(r.user_id is not None and r.user_id != user.id for r in room.seats):
                    raise ApiError(409, "other people play in this room; the game cannot be abandoned",
                                   "abandon_not_alone")
                if room.status != PLAYING:
                    raise ApiError(409, "no game is being played in this room", "not_playing")
            try:
                _from_thread(manager.abandon, room_id)  # at the table's owner in a cluster
            except Exception:  # noqa: BLE001 - LookupError/IllegalAction: no live game, or over meanwhile
                raise ApiError(409, "no game is being played in this room", "not_playing") from None
            return room_reply(room_id)
        except ApiError as e:
            return _error(e)

    @router.get("/api/config")
    async def config() -> Any:
        """What the UI needs to know about this server (docs/table-contract.md section 2)."""
        from guandan.core.rules import PRESETS

        return {
            "public_url": manager.public_url,
            "difficulties": list(DIFFICULTIES),
            "default_difficulty": "normal" if "normal" in DIFFICULTIES else (DIFFICULTIES or (None,))[0],
            "ready_timeout_s": manager.ready_timeout_s,
            "timeouts_to_auto": manager.timeouts_to_auto,
            "default_clocks": {"lead_s": _default_clock(settings, "lead"), "follow_s": _default_clock(settings, "follow")},
            "presets": [{"name": n, "options": rs.to_dict()} for n, rs in PRESETS.items()],
        }

    return router


def new_room(db: Any, owner_id: int, name: str, preset: str, options: dict[str, Any],
             seats: list[tuple[int | None, str | None]], default_clocks: bool = False,
             unrated: bool = False) -> Any:
    """A new ``waiting`` room row with its four seats (``(user_id, bot agent)`` each), flushed.
    Used by ``create_room``, ``play_again``, ``quick_game`` and matchmaking
    (:mod:`guandan.server.api_matchmaking`); ``unrated``: its games move no rating (``rooms.unrated``)."""
    from . import models

    room_id = secrets.token_urlsafe(6)
    while db.get(models.Room, room_id) is not None:
        room_id = secrets.token_urlsafe(6)
    # no seed: deals come from secrets.SystemRandom (tables.Table._new_game)
    room = models.Room(id=room_id, name=name, preset=preset, options=options, owner_id=owner_id,
                       status=WAITING, seed=None, record="", default_clocks=default_clocks,
                       unrated=unrated)
    db.add(room)
    db.flush()
    for s, (user_id, bot) in enumerate(seats):
        db.add(models.RoomSeat(room_id=room_id, seat=s, user_id=user_id, bot=bot))
    db.flush()
    return room


def _default_clock(settings: Any, which: str) -> float:
    default = {"lead": 60.0, "follow": 30.0}[which]
    return float(getattr(settings, f"default_clock_{which}_s", default))


def apply_default_clocks(room: Any, settings: Any) -> bool:
    """docs/rules.md R53 by default: a room created with ``clocks: "default"`` and no clock values gets
    the default move clocks (``settings.default_clock_lead_s`` / ``_follow_s``, 60 s / 30 s) when
    its game starts with more than one person; with one person (and bots) it has none.

    Args:
        room: a ``models.Room`` with its seats (its ``options`` are replaced when clocks are set).
        settings: server settings (or ``None``: 60 s / 30 s).
    Returns:
        True when the clocks were set.
    """
    if not getattr(room, "default_clocks", False):
        return False
    people = sum(1 for r in room.seats if r.user_id is not None)
    if people < 2:
        return False
    options = dict(room.options or {})
    if options.get("clock_lead_s") is not None or options.get("clock_follow_s") is not None:
        return False
    options["clock_lead_s"] = _default_clock(settings, "lead")
    options["clock_follow_s"] = _default_clock(settings, "follow")
    room.options = options
    return True


__all__ = ["ApiError", "apply_default_clocks", "build_rules", "make_rooms_router", "new_room"]
