"""HTTP API of accounts, profiles, the leaderboard, game history, stored games and presets.

Endpoints (server contract, all JSON; errors ``{"error": "one line"}`` with a 4xx status):

* ``POST /api/register {name, password}`` -> ``{user}`` and the ``gd_session`` cookie (400 bad
  name/password, 409 name taken).
* ``POST /api/login {name, password}`` -> ``{user}`` and the cookie (401 wrong name or password,
  429 too many failures from this address or its backoff on the account, with ``wait_s``; 503
  ``server_busy`` when the fair hash gate has no room for this address; see
  :class:`guandan.server.auth.LoginLimiter` and :mod:`guandan.server.hashgate`).
* ``POST /api/guest {}`` -> ``{user}``: a new ``guest-xxxxxx`` account and the cookie (a request
  that is already logged in gets its own user back); always a new session and cookie, the
  request's old session deleted.
* ``POST /api/logout`` -> ``{"ok": true}``; ``GET /api/me`` -> ``{user}`` or 401.
* ``GET /api/users/{name}`` -> ``{user, win_rate, recent_games: [{id, preset, finished_at, won, seat}]}``.
* ``GET /api/leaderboard?limit=100`` -> ``{players: [user...]}`` (registered people with at least
  one game, best display rating first).
* ``GET /api/history?limit=50&before=ID`` (logged in) -> ``{games: [{id, preset, finished_at, won,
  seat, winner_team, room_id, players}]}``, newest first.
* ``GET /api/games/{id}`` -> ``{id, preset, record: [JSON objects], damaged, players: [{seat, name, bot}],
  winner_team, room_id, finished_at}``; a damaged stored record (not JSON, or bytes that were not
  UTF-8) answers ``damaged: true`` and ``record: []``, never a 500. History and profile rows carry
  ``damaged`` too; a damaged name is shown with U+FFFD where its bad bytes were.
* ``GET /api/presets`` -> ``{presets: {name: options}, options: {name: valid values}}``.

``user = {id, name, is_guest, rating, games_played, games_won, anhui_points, anhui_title}`` with
``rating = mu - 3*sigma`` rounded to one decimal. Time stamps are ISO 8601 UTC (``...Z``).

The router holds no engine: the session comes from :func:`guandan.server.db.get_db`, which reads
``app.state.session_factory``; :func:`install_error_handlers` gives the app the error format.
:func:`record_finished_game` (stores a finished game; :mod:`guandan.server.games`) is importable from here too.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Depends, FastAPI, HTTPException, Query, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict
from sqlalchemy import or_, select
from sqlalchemy.orm import Session

from guandan.server.errors import error_body
from starlette.exceptions import HTTPException as StarletteHTTPException

from guandan.core.rules import PRESETS, option_help
from guandan.core.scoring import anhui_title
from guandan.server import auth, moderation_store
from guandan.server.auth import AuthError, CurrentUser, RequiredUser
from guandan.server.db import DbSession, SessionFactory, make_engine, make_session_factory, migrate
from guandan.server.challenge_store import secret_room
from guandan.server.models import NAME_MAX, GamePlayer, GameRow, Room, User, utcnow
from guandan.server.games import record_finished_game  # noqa: F401 - importable from here too
from guandan.server.table.bots import bot_difficulty
from guandan.server.ratings import display_rating, parse_record, team_of
from guandan.server.hardening import bad_text

log = logging.getLogger("guandan.server.accounts")

#: Largest request body accepted by these endpoints (bytes).
MAX_BODY = 16 * 1024


def _limit_body(request: Request) -> None:
    """Refuse bodies announced larger than :data:`MAX_BODY` (413) before they are parsed."""
    length = request.headers.get("content-length")
    if length is not None and (not length.isdigit() or int(length) > MAX_BODY):
        raise error(413, f"the request body is too large (at most {MAX_BODY} bytes)", "body_too_large",
                    {"max_bytes": MAX_BODY})


router = APIRouter(tags=["accounts"], dependencies=[Depends(_limit_body)])

_limiter_lock = threading.Lock()


# -- JSON shapes -----------------------------------------------------------------------------------


def iso(ts: datetime | None) -> str | None:
    """An aware UTC datetime as ISO 8601 with a ``Z`` (``2025-01-02T03:04:05Z``), or ``None``."""
    if ts is None:
        return None
    return ts.replace(microsecond=0).isoformat().replace("+00:00", "Z")


def user_json(user: User) -> dict[str, Any]:
    """The contract's ``user`` object: ``{id, name, is_guest, rating, games_played, games_won,
    anhui_points, anhui_title}`` (rating = mu - 3*sigma, one decimal; title per docs/rules.md 2.1)."""
    return {
        "id": user.id,
        "name": user.name,
        "is_guest": bool(user.is_guest),
        "rating": display_rating(user.rating_mu, user.rating_sigma),
        "games_played": user.games_played,
        "games_won": user.games_won,
        "anhui_points": user.anhui_points,
        "anhui_title": anhui_title(user.anhui_points),
    }


def error(status: int, message: str, code: str | None = None,
          params: dict[str, Any] | None = None) -> HTTPException:
    """An ``HTTPException`` that the error handlers answer as ``{"error": message, "code", "params"}``
    (see :mod:`guandan.server.errors`)."""
    if code is None:
        return HTTPException(status_code=status, detail=message)
    return HTTPException(status_code=status, detail={"message": message, "code": code, "params": params or {}})


def _validation_message(exc: RequestValidationError) -> str:
    errs = exc.errors()
    if not errs:
        return "invalid request"
    first = errs[0]
    if first.get("type") == "json_invalid":
        return "the request body is not valid JSON"
    loc = [str(x) for x in first.get("loc", ()) if x not in ("body", "query", "path")]
    msg = str(first.get("msg", "invalid value")).splitlines()[0]
    return f"{'.'.join(loc)}: {msg}" if loc else msg


#: The code of an error that was raised without one, by HTTP status (Starlette's own 404/405, ...).
STATUS_CODES = {400: "bad_request", 401: "login_required", 403: "forbidden", 404: "not_found",
                405: "method_not_allowed", 413: "body_too_large", 429: "rate_limited", 500: "internal"}


def status_code_name(status: int) -> str:
    """The error code used for an HTTP ``status`` when the raiser gave none (``not_found`` for 404,
    ``method_not_allowed`` for 405, ...; ``http_<status>`` otherwise)."""
    return STATUS_CODES.get(status, f"http_{status}")


def _status_params(request: Request, status: int) -> dict[str, Any]:
    if status == 404:
        return {"path": request.url.path[:200]}
    if status == 405:
        return {"method": request.method}
    return {}


def _validation_params(exc: RequestValidationError) -> dict[str, Any]:
    """``{field, problem}`` of the first validation error: the dotted field name and the pydantic
    error type (``less_than_equal``, ``int_parsing``, ``json_invalid``, ...), with its limits
    (``ge``/``le``) when there are any."""
    errs = exc.errors()
    if not errs:
        return {"field": None, "problem": "invalid"}
    first = errs[0]
    loc = [str(x) for x in first.get("loc", ()) if x not in ("body", "query", "path")]
    params: dict[str, Any] = {"field": ".".join(loc) or None, "problem": str(first.get("type", "invalid"))}
    ctx = first.get("ctx") or {}
    for k in ("ge", "le", "gt", "lt"):
        if k in ctx and isinstance(ctx[k], (int, float)):
            params[k] = ctx[k]
    return params


def install_error_handlers(app: FastAPI) -> None:
    """Answer every HTTP error of ``app`` as ``{"error": "one line"}``.

    ``HTTPException`` -> its status and detail; :class:`~guandan.server.auth.AuthError` -> its
    status and message; request validation errors -> 422 with the first problem
    (``"limit: Input should be less than or equal to 100"``).
    """

    async def http_error(_request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, StarletteHTTPException)
        if isinstance(exc.detail, dict) and "message" in exc.detail:
            body = error_body(str(exc.detail["message"]), exc.detail.get("code") or status_code_name(exc.status_code),
                              exc.detail.get("params"))
        else:
            body = error_body(exc.detail if isinstance(exc.detail, str) else "request failed",
                              status_code_name(exc.status_code), _status_params(_request, exc.status_code))
            if exc.status_code == 404 and exc.detail == "Not Found":
                body["error"] = "no such API endpoint"
        return JSONResponse(body, status_code=exc.status_code, headers=exc.headers)

    async def auth_error(_request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, AuthError)
        return JSONResponse(error_body(exc.message, exc.code, exc.params), status_code=exc.status)

    async def validation_error(_request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        return JSONResponse(error_body(_validation_message(exc), "invalid_request", _validation_params(exc)),
                            status_code=422)

    app.add_exception_handler(StarletteHTTPException, http_error)
    app.add_exception_handler(AuthError, auth_error)
    app.add_exception_handler(RequestValidationError, validation_error)


# -- request bodies --------------------------------------------------------------------------------


class Credentials(BaseModel):
    """Body of register and login; the values are checked by :mod:`guandan.server.auth` (clear 400s)."""

    model_config = ConfigDict(extra="ignore")
    name: Any = None
    password: Any = None


class Empty(BaseModel):
    """A body with nothing needed (``{}``)."""

    model_config = ConfigDict(extra="ignore")


# -- helpers ---------------------------------------------------------------------------------------


def _session_days(request: Request) -> int:
    settings = getattr(request.app.state, "settings", None)
    return int(getattr(settings, "session_days", auth.DEFAULT_SESSION_DAYS))


def _cluster(request: Request) -> Any:
    """The app's cluster node (``guandan serve --redis``), or ``None`` on a single server."""
    manager = getattr(request.app.state, "manager", None)
    return getattr(manager, "cluster", None)


def _limiter(request: Request) -> Any:
    state = request.app.state
    lim = getattr(state, "login_limiter", None)
    if lim is None:
        with _limiter_lock:
            lim = getattr(state, "login_limiter", None)
            if lim is None:
                cluster = _cluster(request)
                if cluster is not None:  # counted once over every process of the cluster
                    from .cluster.limits import SharedLoginLimiter

                    lim = SharedLoginLimiter(cluster.sync, cluster.keys.p)
                else:
                    lim = auth.LoginLimiter()
                state.login_limiter = lim
    return lim


def _address_limit(request: Request, what: str) -> Any:
    """The per-address limit of ``what`` (``registrations``: ``settings.registrations_per_hour``;
    ``guest accounts``: ``settings.guests_per_hour``; 0 = unlimited)."""
    state = request.app.state
    limits = getattr(state, "address_limits", None)
    if limits is None:
        with _limiter_lock:
            limits = getattr(state, "address_limits", None)
            if limits is None:
                settings = getattr(state, "settings", None)
                per_hour = {"registrations": getattr(settings, "registrations_per_hour", 20),
                            "guest accounts": getattr(settings, "guests_per_hour", 120)}
                cluster = _cluster(request)
                if cluster is not None:  # counted once over every process of the cluster
                    from .cluster.limits import SharedRateLimiter

                    limits = {k: SharedRateLimiter(cluster.sync, cluster.keys.p, v if v > 0 else 10**9, 3600.0, k)
                              for k, v in per_hour.items()}
                else:
                    limits = {k: auth.RateLimiter(v if v > 0 else 10**9, 3600.0, k) for k, v in per_hour.items()}
                state.address_limits = limits
    return limits[what]


def _client(request: Request) -> str:
    return request.client.host if request.client is not None else "unknown"


def _hash_caller(limiter: Any, client: str, name: str) -> Any:
    """Who a password hash or check is for the hash gate (:mod:`guandan.server.hashgate`): the
    client address, the account, the address's recent failures and whether it is trusted (a
    recent good login). A limiter without :meth:`~guandan.server.auth.LoginLimiter.caller` (the
    cluster's) gives only the address and the account."""
    from guandan.server.hashgate import Caller

    how = getattr(limiter, "caller", None)
    if how is not None:
        return how(client, name)
    return Caller(client=client, account=auth.limiter_key(name))


def _start_session(db: Session, request: Request, response: Response, user: User) -> None:
    """Replace the request's session (if any) by a new one for ``user``, commit, set the cookie."""
    auth.end_session(db, request.cookies.get(auth.COOKIE_NAME))
    days = _session_days(request)
    sess = auth.create_session(db, user, days)
    db.commit()
    auth.set_session_cookie(response, request, sess.cookie_token, days)


# -- accounts --------------------------------------------------------------------------------------


@router.post("/api/register")
def register(body: Credentials, request: Request, response: Response, db: DbSession) -> Any:
    """Create an account and log it in: ``{user}``; 400 bad name/password, 409 name taken."""
    client = _client(request)
    _address_limit(request, "registrations").hit(client)
    with auth.HASH_GATE.caller(_hash_caller(_limiter(request), client, "")):
        user = auth.register(db, body.name, body.password)
    _start_session(db, request, response, user)
    return {"user": user_json(user)}


@router.post("/api/login")
def login(body: Credentials, request: Request, response: Response, db: DbSession) -> Any:
    """Log in: ``{user}``; 401 wrong name or password, 403 ``account_suspended`` (``until``) while an
    admin's suspension lasts, 429 after too many failures."""
    limiter = _limiter(request)
    client = _client(request)
    key = body.name if isinstance(body.name, str) else ""
    caller = _hash_caller(limiter, client, key)
    limiter.attempt(client, key)  # checks the limits and counts this try in one step
    with auth.HASH_GATE.caller(caller):  # fair admission to the password check (hashgate)
        user = auth.authenticate(db, body.name, body.password)
    limiter.succeeded(client, key)
    until = moderation_store.suspended_until(db, user.id, utcnow())  # issue 25 item 8
    if until is not None:
        raise error(403, f"this account is suspended until {iso(until)}", "account_suspended", {"until": iso(until)})
    _start_session(db, request, response, user)
    return {"user": user_json(user)}


@router.post("/api/guest")
def guest(
    request: Request,
    response: Response,
    db: DbSession,
    user: CurrentUser,
    body: Empty | None = None,
) -> Any:
    """Play as a guest: ``{user}`` named ``guest-xxxxxx``, always with a new session and cookie.

    A request that is already logged in gets its own user back, under a new session: the session
    it came with is deleted and its table websockets are closed (4401 ``logged out``), so that a
    session token known before the call (one planted in the browser, say) never carries on. Only
    a request with no session creates a guest account (429 ``rate_limited`` past
    ``settings.guests_per_hour`` from one address)."""
    old_token = request.cookies.get(auth.COOKIE_NAME)
    if user is None:
        _address_limit(request, "guest accounts").hit(_client(request))
        user = auth.create_guest(db)
    _start_session(db, request, response, user)  # deletes the old session, if any
    _close_session_sockets(request, old_token)
    return {"user": user_json(user)}


def _close_session_sockets(request: Request, token: str | None) -> None:
    """Close the table websockets opened with the (now deleted) session ``token`` (4401 ``logged
    out``; in a cluster on every process). Called from a handler's worker thread."""
    manager = getattr(request.app.state, "manager", None)
    if manager is not None and isinstance(token, str) and token:
        from anyio.from_thread import run_sync

        run_sync(manager.revoke_session, auth.token_key(token))


@router.post("/api/logout")
def logout(request: Request, response: Response, db: DbSession) -> Any:
    """End the session and drop the cookie: ``{"ok": true}`` (also when not logged in). The
    table websockets opened with the session are closed (4401 ``logged out``)."""
    token = request.cookies.get(auth.COOKIE_NAME)
    auth.end_session(db, token)
    db.commit()
    _close_session_sockets(request, token)
    auth.clear_session_cookie(response)
    return {"ok": True}


@router.get("/api/me")
def me(user: RequiredUser) -> Any:
    """The logged-in user: ``{user}``; 401 when not logged in."""
    return {"user": user_json(user)}


# -- profiles, leaderboard, history ----------------------------------------------------------------


def _find_or_404(db: Session, name: str) -> User:
    if len(name) > 4 * NAME_MAX or bad_text(name):
        raise error(404, "no such player", "no_player", {"name": "" if bad_text(name) else name[:NAME_MAX]})
    user = auth.find_user(db, name)
    if user is None:
        raise error(404, f"no player called {name!r}", "no_player", {"name": name})
    return user


def _game_summaries(db: Session, user: User, limit: int, before: int | None = None,
                    public: bool = False) -> list[dict[str, Any]]:
    """``user``'s stored games, newest first; ``public``: leave out the games still secret to
    others (daily-challenge boards before the day closes: :func:`public_game`)."""
    q = (
        select(GamePlayer.seat, GameRow, Room.unrated)
        .join(GameRow, GameRow.id == GamePlayer.game_id)
        .outerjoin(Room, Room.id == GameRow.room_id)
        .where(GamePlayer.user_id == user.id)
        .order_by(GameRow.id.desc())
        .limit(limit)
    )
    if public:
        secret = select(Room.id).where(Room.secret_until.is_not(None), Room.secret_until > utcnow())
        q = q.where(or_(GameRow.room_id.is_(None), GameRow.room_id.not_in(secret)))
    if before is not None:
        q = q.where(GameRow.id < before)
    out = []
    for seat, game, unrated in db.execute(q).all():
        out.append(
            {
                "id": game.id,
                "preset": game.preset,
                "finished_at": iso(game.finished_at),
                "won": game.winner_team is not None and team_of(seat) == game.winner_team,
                "seat": seat,
                "winner_team": game.winner_team,
                "room_id": game.room_id,
                "unrated": bool(unrated),
                "_record": game.record,
            }
        )
    return out


def _players_of(db: Session, game_ids: Sequence[int]) -> dict[int, list[dict[str, Any]]]:
    out: dict[int, list[dict[str, Any]]] = {gid: [] for gid in game_ids}
    if not game_ids:
        return out
    rows = db.execute(
        select(GamePlayer.game_id, GamePlayer.seat, GamePlayer.bot, User.name)
        .outerjoin(User, User.id == GamePlayer.user_id)
        .where(GamePlayer.game_id.in_(list(game_ids)))
        .order_by(GamePlayer.game_id, GamePlayer.seat)
    ).all()
    for gid, seat, bot, name in rows:
        out[gid].append({"seat": seat, "name": name, "bot": bot, "difficulty": bot_difficulty(bot)})
    return out


def record_outcome(record_text: str) -> dict[str, Any]:
    """What a history row shows of a stored record: ``levels`` (final team levels after the last
    ``deal_end``, rank text, or ``None`` when there is none), ``deals`` (deals played) and
    ``drawn`` (the record ends with a ``game_over`` without a winner after ``time_called``: a
    timed match drawn on equal levels, R58). Only those lines are parsed."""
    import json

    deals = 0
    levels = None
    timed = drawn = False
    for line in record_text.splitlines():
        if '"deal_end"' not in line and '"time_called"' not in line and '"game_over"' not in line:
            continue
        try:
            ev = json.loads(line)
        except ValueError:
            continue
        if not isinstance(ev, dict):
            continue
        if ev.get("type") == "deal_end":
            deals += 1
            levels = ev.get("levels")
        elif ev.get("type") == "time_called":
            timed = True
        elif ev.get("type") == "game_over":
            drawn = timed and ev.get("winner_team") is None
    return {"levels": levels, "deals": deals, "drawn": drawn}


def record_damaged(record_text: str) -> bool:
    """Whether a stored record is visibly damaged (issue 26 item 9): its first line is not a JSON
    object with a ``format`` (the header), or it held bytes that were not UTF-8 (read as U+FFFD,
    :func:`guandan.server.db.sqlite_text`; the server never writes that character in a record).
    Cheap: only the first line is parsed."""
    import json

    if "\ufffd" in record_text:
        return True
    first = record_text.split("\n", 1)[0]
    try:
        head = json.loads(first)
    except ValueError:
        return True
    return not isinstance(head, dict) or "format" not in head


def history_row(game: dict[str, Any], players: list[dict[str, Any]], outcome: dict[str, Any]) -> dict[str, Any]:
    """Add to a game summary (``_game_summaries``) what the history page shows (contract section 12):
    ``players``, ``partner``, ``opponents``, final ``levels`` (team 0, team 1), ``my_level`` /
    ``their_level``, ``deals``, ``result`` (``won``/``lost``/``drawn``/``unfinished``), ``record_url`` and
    ``replay_url``."""
    seat = game["seat"]
    by_seat = {p["seat"]: p for p in players}
    levels = outcome["levels"]
    mine = seat % 2
    row = dict(game)
    row.update(
        players=players,
        partner=by_seat.get((seat + 2) % 4),
        opponents=[by_seat[s] for s in ((seat + 1) % 4, (seat + 3) % 4) if s in by_seat],
        levels=levels,
        my_level=levels[mine] if levels else None,
        their_level=levels[1 - mine] if levels else None,
        deals=outcome["deals"],
        result=("drawn" if outcome.get("drawn") else "unfinished") if game["winner_team"] is None
        else ("won" if game["won"] else "lost"),
        record_url=f"/api/games/{game['id']}/record",
        replay_url=f"/replay/{game['id']}",
        damaged=record_damaged(game["_record"]) if "_record" in game else bool(game.get("damaged")),
    )
    row.pop("_record", None)
    return row


@router.get("/api/users/{name}")
def profile(name: str, db: DbSession) -> Any:
    """A player's profile: ``{user, win_rate, recent_games}`` (last 20 games, newest first); 404 unknown."""
    user = _find_or_404(db, name)
    games = _game_summaries(db, user, 20, public=True)
    recent = [{k: g[k] for k in ("id", "preset", "finished_at", "won", "seat")} for g in games]
    for g, r in zip(games, recent):
        outcome = record_outcome(g["_record"])
        r.update(levels=outcome["levels"], deals=outcome["deals"], damaged=record_damaged(g["_record"]))
    win_rate = round(user.games_won / user.games_played, 3) if user.games_played else 0.0
    return {"user": user_json(user), "win_rate": win_rate, "recent_games": recent}


@router.get("/api/leaderboard")
def leaderboard(db: DbSession, limit: Annotated[int, Query(ge=1, le=500)] = 100) -> Any:
    """``{players: [user...]}``: registered people with at least one game, best rating first."""
    rating = User.rating_mu - 3.0 * User.rating_sigma
    users = db.scalars(
        select(User)
        .where(User.is_guest.is_(False), User.games_played >= 1)
        .order_by(rating.desc(), User.games_won.desc(), User.id)
        .limit(limit)
    ).all()
    return {"players": [user_json(u) for u in users]}


@router.get("/api/history")
def history(
    user: RequiredUser,
    db: DbSession,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    before: Annotated[int | None, Query(ge=1, le=2**31 - 1)] = None,
) -> Any:
    """The logged-in user's games, newest first: ``{games: [...]}`` (page with ``before=<last id>``); 401.

    Each row: ``id, preset, finished_at, won, seat, winner_team, room_id, unrated`` (the game moved no
    rating: a matched room filled with bots, 不计分), ``players`` and (contract
    section 12) ``partner, opponents, levels, my_level, their_level, deals, result, record_url,
    replay_url``."""
    games = _game_summaries(db, user, limit, before)
    players = _players_of(db, [g["id"] for g in games])
    rows = []
    for g in games:
        outcome = record_outcome(g["_record"])
        rows.append(history_row(g, players[g["id"]], outcome))  # drops "_record", adds "damaged"
    return {"games": rows}


def public_game(db: Session, game_id: int, viewer: User | None = None) -> GameRow:
    """The stored game that the replay shows: the one access rule of ``GET /api/games/{id}``,
    ``GET /api/games/{id}/record`` and the reviews (:mod:`guandan.server.api_reviews`), so that
    a review never shows a game the replay does not. Every stored game (finished or abandoned)
    is public, except a game whose room is secret (a daily-challenge board before the day
    closes: :func:`guandan.server.challenge_store.secret_room`), which only its own seats
    (``viewer``) see; games in progress are not stored here.

    Raises:
        HTTPException: 404 ``no_game`` for an id out of range, not stored, or secret to ``viewer``
            (the same answer: a secret game's existence is not revealed either).
    """
    if game_id < 1 or game_id > 2**31 - 1:
        raise error(404, "no such game", "no_game", {"game": game_id})
    game = db.get(GameRow, game_id)
    if game is None or secret_room(db, game.room_id, viewer.id if viewer is not None else None, utcnow()):
        raise error(404, f"no game {game_id}", "no_game", {"game": game_id})
    return game


@router.get("/api/games/{game_id}")
def game_detail(game_id: int, db: DbSession, user: CurrentUser) -> Any:
    """A stored game for the replay viewer: ``{id, preset, record, players, winner_team, ...}``; 404 unknown
    (or secret: :func:`public_game`)."""
    game = public_game(db, game_id, user)
    damaged = record_damaged(game.record)
    if not damaged:
        try:
            record = parse_record(game.record)
        except ValueError:
            damaged = True
    if damaged:  # the game's other facts are still shown; the replay says the record is damaged
        log.warning("game %d: the stored record is damaged", game_id)
        record = []
    return {
        "id": game.id,
        "preset": game.preset,
        "record": record,
        "damaged": damaged,
        "players": _players_of(db, [game.id])[game.id],
        "winner_team": game.winner_team,
        "room_id": game.room_id,
        "finished_at": iso(game.finished_at),
    }


@router.get("/api/games/{game_id}/record")
def game_record(game_id: int, db: DbSession, user: CurrentUser) -> Response:
    """Download a stored game as the JSON Lines record that ``guandan replay`` reads:
    ``application/x-ndjson``, attachment ``game-<id>.jsonl``; 404 ``no_game`` (or secret: :func:`public_game`)."""
    game = public_game(db, game_id, user)
    text = game.record if game.record.endswith("\n") else game.record + "\n"
    return Response(
        content=text.encode("utf-8"),
        media_type="application/x-ndjson",
        headers={"Content-Disposition": f'attachment; filename="game-{game_id}.jsonl"'},
    )


@router.get("/api/presets")
def presets() -> Any:
    """Every preset's options and every option's valid values (docs/rules.md section P)."""
    return {"presets": {name: rs.to_dict() for name, rs in PRESETS.items()}, "options": option_help()}


# -- wiring ----------------------------------------------------------------------------------------


def setup_storage(app: FastAPI, settings: Any, *, run_migrations: bool = True) -> SessionFactory:
    """Give ``app`` its database and the accounts API (what ``create_app`` calls once).

    Creates the engine for ``settings.db_url``, runs the migrations (``upgrade head``), stores
    ``app.state.settings``, ``app.state.engine`` and ``app.state.session_factory`` (read by
    :func:`~guandan.server.db.get_db` and available to the tables), installs the
    ``{"error": ...}`` handlers and includes :data:`router`.

    Args:
        app: the FastAPI app.
        settings: a :class:`~guandan.server.settings.Settings` (``db_url``, ``session_days``).
        run_migrations: ``False`` to skip the migrations (the schema is known to be current).
    Returns:
        The session factory (also ``app.state.session_factory``).
    Raises:
        ValueError: a database URL that cannot be read.
        sqlalchemy.exc.OperationalError: the database cannot be reached.
    """
    # a bounded wait for a connection: an exhausted pool answers 503 database_busy (hardening)
    engine = make_engine(settings.db_url, pool_size=10, max_overflow=20,
                         pool_timeout=float(getattr(settings, "db_timeout_s", 5.0)))
    auth.HASH_GATE.configure(int(getattr(settings, "hash_concurrency", 2)))
    if run_migrations:
        migrate(engine)
    factory = make_session_factory(engine)
    app.state.settings = settings
    app.state.engine = engine
    app.state.session_factory = factory
    install_error_handlers(app)
    app.include_router(router)
    return factory
