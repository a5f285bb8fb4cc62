"""HTTP API of matchmaking (issue 25 item 1, 匹配): the queue for a game with people.

Decisions: :mod:`guandan.server.matchmaking` (ranges, tables, bot fill, ready check); storage:
:mod:`guandan.server.matchmaking_store` (memory on one process, Redis in a cluster). Every
endpoint needs a session (a guest may queue alone; a partner must be a registered friend).

* ``GET /api/match`` -> the caller's state (:func:`view`): ``{status: "idle" | "queued" |
  "ready_check" | "seated", entry?, ready_check?, room?, levels, bot_fill_after_s, ready_s}``.
* ``POST /api/match/join {partner?: name, bot_level?: level | null}`` -> the state (201 when a new
  entry was made, 200 with the existing entry when the caller was already queued or in a ready
  check: a second tab never makes a second entry). Errors: 400 ``bad_bot_level``, 400
  ``partner_self``, 403 ``guest_no_partner``, 404 ``no_user``, 409 ``not_friends``, 409 ``partner_busy``,
  409 ``seated_in_game`` (``params.room``: the caller sits in a game under way there; the UI offers
  to go back to it), 409 ``partner_in_game`` (``params.name``), 429 ``decline_cooldown``
  (``params.retry_s``: 3 ready checks declined in 10 minutes, 2 minutes' wait) or ``partner_cooldown``
  (``params.name``, ``retry_s``), with ``Retry-After``; 429 ``too_many_quick_games`` (``params.max``) when a
  bot level is asked and the client address's live games with bots are at their limit
  (:mod:`guandan.server.botgames`: a bot-fill match is a game with bots of the first person's address,
  checked again when it is seated; refused then, its people leave the queue).
* ``POST /api/match/bots {bot_level: level | null}`` -> the state; 409 ``not_queued``, 429
  ``too_many_quick_games``.
* ``POST /api/match/leave`` -> ``{ok, left}`` (one tap: the caller and partner leave the queue; in a
  ready check it counts as a decline).
* ``POST /api/match/ready`` and ``POST /api/match/decline`` -> the state; 409 ``no_ready_check``.

Every endpoint runs in one hand-off to a small thread pool (:mod:`guandan.server.account_calls`:
the session checked with one query, presence, then the queue), not one hand-off per dependency:
1,000 players joining at once cost the server 2.1 ms of CPU each that way, most of it the
hand-offs and the ORM (docs/matchmaking.md).

Every endpoint that changes the queue answers the retryable 503 ``temporarily_unavailable``
(``params.retry_s``, ``Retry-After``) when the queue's lock (Redis in a cluster) is not taken in
time, instead of a 500.

A background loop (:class:`MatchService`, every :data:`TICK_S` seconds, in every process of a
cluster; the store's lock lets one at a time decide) forms matches, settles ready checks and seats
accepted matches (a person seated meanwhile in another game under way leaves the queue instead, the
others go back to its front) in a new room with the ``official`` rules and the default move clocks (R53),
started at once; the seated people's state then names the room.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from typing import Any

from fastapi import APIRouter, Body, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from . import matchmaking as mm
from .api_accounts import error
from .api_rooms import apply_default_clocks, build_rules, new_room
from .account_calls import AccountCalls, validated
from .botgames import BotGameLimits, BotGameRefused
from .matchmaking_store import MatchError, MatchQueue, MemoryBackend, RedisBackend
from .models import FriendLink, User
from .ratings import display_rating
from .table.bots import DIFFICULTIES, DIFFICULTY_AGENTS
from .table.info import PLAYING

log = logging.getLogger(__name__)

#: Seconds between two rounds of the matching loop (a round with nothing to do, an empty queue or a
#: burst still arriving, makes a few small reads without the queue's lock; a short round lets a
#: burst's tables form soon after its last join: ``matchmaking.formed_now``).
TICK_S = 0.1
#: The rules of a matched room.
MATCH_PRESET = "official"
#: The name of a matched room (shown in the room list and header).
MATCH_ROOM_NAME = "匹配 Match"
#: Threads that answer the queue's requests (:func:`make_match_router`). A join can wait for the
#: queue's lock (up to ``matchmaking_store.LOCK_WAIT_S``, held by the matching round in a cluster) while
#: holding its thread; with 16, a reader (``GET /api/match``, ready, decline) waits behind joins only
#: when 16 of them wait at once (4 threads: a state read waited 2 s behind 8 joins held on the lock).
CALL_THREADS = 16

__all__ = ["CALL_THREADS", "MatchService", "live_room_of", "make_match_router", "view"]


class JoinBody(BaseModel):
    """``{partner?, bot_level?}``."""

    model_config = ConfigDict(extra="ignore")
    partner: str | None = Field(default=None, max_length=64)
    bot_level: str | None = Field(default=None, max_length=16)


class BotsBody(BaseModel):
    """``{bot_level}``: a difficulty, or ``null`` for no bot fill."""

    model_config = ConfigDict(extra="ignore")
    bot_level: str | None = Field(default=None, max_length=16)


def _body_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The OpenAPI request body of an endpoint that takes its body as parsed JSON and checks it
    against ``model`` after the session (:func:`~guandan.server.account_calls.validated`)."""
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": model.model_json_schema()}}}}


def _level(level: str | None) -> str | None:
    if level is None or level in DIFFICULTY_AGENTS:
        return level
    raise MatchError(400, f"bot_level must be one of: {', '.join(DIFFICULTIES)}", "bad_bot_level",
                     {"valid": list(DIFFICULTIES)})


def view(state: dict[str, Any], me: int, now: float) -> dict[str, Any]:
    """The JSON answer of a queue state (:meth:`MatchQueue.state`) for the person ``me``.

    ``entry`` (queued or in a ready check): ``{id, names, partner, rating, waited_s, range,
    range_low, range_high, bot_level, bot_fill_in_s}`` where ``range`` is the allowed half-width
    (rating points; ``None`` = any rating, ``range_low``/``range_high`` then ``None``) and
    ``bot_fill_in_s`` the seconds until bot fill (``None`` without a level). ``ready_check``:
    ``{id, seconds_left, players: [{name, ready}], me_ready, bot_seats, bot_level}``. Only names
    leave the server: no rating of another person, no user id.
    """
    out: dict[str, Any] = {"status": state["status"], "levels": list(DIFFICULTIES),
                           "bot_fill_after_s": mm.BOT_FILL_AFTER_S, "ready_s": mm.READY_S}
    t = state.get("ticket")
    if t is not None:
        waited = max(0.0, now - float(t["joined_at"]))
        width = mm.allowed_range(waited)
        rating = sum(t["ratings"]) / len(t["ratings"])
        names = list(t["names"])
        mine = t["members"].index(me) if me in t["members"] else 0
        out["entry"] = {
            "id": t["id"], "names": names, "partner": names[1 - mine] if len(names) == 2 else None,
            "rating": round(rating, 1), "waited_s": round(waited, 1), "range": width,
            "range_low": None if width is None else round(rating - width, 1),
            "range_high": None if width is None else round(rating + width, 1),
            "bot_level": t.get("bot_level"),
            "bot_fill_in_s": None if t.get("bot_level") is None else round(max(0.0, mm.BOT_FILL_AFTER_S - waited), 1),
        }
    p = state.get("proposal")
    if p is not None:
        name_of = {u: n for tk in p["tickets"] for u, n in zip(tk["members"], tk["names"], strict=True)}
        out["ready_check"] = {
            "id": p["id"], "seconds_left": round(max(0.0, float(p["deadline"]) - now), 1),
            "players": [{"name": name_of[u], "ready": u in p["ready"]} for u in p["seats"] if u is not None],
            "me_ready": me in p["ready"], "bot_seats": sum(1 for u in p["seats"] if u is None),
            "bot_level": p.get("bot_level"),
        }
    if state["status"] == "seated":
        out["room"] = state["room"]
    return out


def _refused(e: MatchError | BotGameRefused) -> Exception:
    exc = error(e.status, e.message, e.code, e.params)
    retry = e.params.get("retry_s") if e.status in (429, 503) else None
    if isinstance(retry, int):
        exc.headers = {"Retry-After": str(retry)}
    return exc


@contextmanager
def _refusals() -> Iterator[None]:
    """Answer a :class:`MatchError` raised inside as its HTTP error (status, code, params)."""
    try:
        yield
    except (MatchError, BotGameRefused) as e:
        raise _refused(e) from None  # type: ignore[arg-type]


def live_room_of(db: Any, user_id: int) -> str | None:
    """The id of a room whose game is under way (``playing``) with ``user_id`` in a seat, or ``None``.
    A seat left to the bot during the game stays the person's (:mod:`guandan.server.table.leaving`),
    so its room counts until the game ends."""
    from sqlalchemy import select

    from .models import Room, RoomSeat

    return db.scalar(select(Room.id).join(RoomSeat, RoomSeat.room_id == Room.id)
                     .where(RoomSeat.user_id == user_id, Room.status == PLAYING)
                     .order_by(Room.created_at.desc()).limit(1))


class MatchService:
    """The queue of this process and its matching loop.

    Args:
        session_factory: SQLAlchemy sessions (to make the rooms of accepted matches).
        manager: the :class:`~guandan.server.manager.TableManager` (starts the games).
        settings: server settings (default clocks; ``redis_url``/``redis_prefix`` in a cluster).
        queue: a queue to use (tests); default: Redis in cluster mode, else memory.
        limits: the server's one :class:`~guandan.server.botgames.BotGameLimits`: a bot-fill match is a
            game with bots started from the first person's address (``None``: no limits).
    """

    def __init__(self, session_factory: Callable[[], Any], manager: Any, settings: Any,
                 queue: MatchQueue | None = None, limits: BotGameLimits | None = None) -> None:
        self.session_factory = session_factory
        self.limits = limits
        self.manager = manager
        self.settings = settings
        if queue is None:
            cluster = getattr(manager, "cluster", None)
            if cluster is not None:
                queue = MatchQueue(RedisBackend(cluster.sync, getattr(settings, "redis_prefix", None) or "gd:"),
                                   clock=time.time)
            else:
                queue = MatchQueue(MemoryBackend(), clock=time.time)
        self.queue = queue
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Start the matching loop (the app's lifespan)."""
        self._task = asyncio.create_task(self._loop())

    async def stop(self) -> None:
        """Stop the matching loop."""
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
            self._task = None

    async def _loop(self) -> None:
        out_of_reach = False  # Redis unreachable: said once per outage, in one line (no traceback)
        while True:
            try:
                await self.tick()
                if out_of_reach:
                    log.info("matchmaking: the shared store answers again")
                out_of_reach = False
            except asyncio.CancelledError:
                raise
            except MatchError as e:  # the lock was busy (another process's round): try again next round
                log.info("matchmaking round skipped: %s", e.message)
            except Exception as e:  # noqa: BLE001 - a Redis or database hiccup: try again next round
                if type(e).__module__.startswith("redis"):  # the cluster's store (the extra is optional)
                    if not out_of_reach:
                        log.warning("matchmaking: Redis out of reach (%s); retrying every %.2f s", e, TICK_S)
                    out_of_reach = True
                else:
                    log.exception("matchmaking round failed")
            await asyncio.sleep(TICK_S)

    async def tick(self) -> list[str]:
        """One round (:meth:`MatchQueue.tick`), then seat the accepted matches.

        Returns:
            The ids of the rooms made.
        """
        claimed = await asyncio.to_thread(self.queue.tick, time.time())
        made: list[str] = []
        for p in claimed:
            busy = await asyncio.to_thread(self._busy, p)
            if busy:  # started another game after joining (a second tab): never seated twice
                await asyncio.to_thread(self.queue.seat_failed, p["id"], busy)
                continue
            try:
                room_id = await asyncio.to_thread(self._make_room, p)
            except BotGameRefused:  # the address's games with bots filled up after joining: no bot fill now
                await asyncio.to_thread(self.queue.seat_failed, p["id"],
                                        {u for t in p["tickets"] for u in t["members"]})
                continue
            except Exception:  # noqa: BLE001 - put them back in the queue rather than lose them
                log.exception("could not seat a match")
                await asyncio.to_thread(self.queue.seat_failed, p["id"])
                continue
            try:
                await self.manager.start_game(room_id)
            except Exception:  # noqa: BLE001 - put them back in the queue rather than lose them
                log.exception("could not seat a match")
                await asyncio.to_thread(self.queue.seat_failed, p["id"])
                continue
            await asyncio.to_thread(self.queue.seated, p["id"], room_id, time.time())
            made.append(room_id)
        return made

    def _busy(self, p: dict[str, Any]) -> set[int]:
        """The people of proposal ``p`` seated in a game under way now (:func:`live_room_of`): joining
        refuses them, but a game may have been started after joining (a quick game from another tab,
        which would also pass the limit of one game against bots, :mod:`guandan.server.botgames`)."""
        with self.session_factory() as db:
            return {u for u in p["seats"] if u is not None and live_room_of(db, u) is not None}

    def _make_room(self, p: dict[str, Any]) -> str:
        agent = DIFFICULTY_AGENTS.get(p.get("bot_level") or "normal") or next(iter(DIFFICULTY_AGENTS.values()))
        seats = [(u, None) if u is not None else (None, agent) for u in p["seats"]]
        owner = next(u for u in p["seats"] if u is not None)
        bots = any(u is None for u in p["seats"])
        address = next((t.get("address") for t in p["tickets"] if owner in t["members"]), None) or "unknown"
        with self.session_factory() as db:
            with (self.limits.admit(db, owner, address, solo=sum(u is not None for u in p["seats"]) == 1)
                  if bots and self.limits is not None else nullcontext([])) as made:
                room = new_room(db, owner, MATCH_ROOM_NAME, MATCH_PRESET, build_rules(MATCH_PRESET, None).to_dict(),
                                seats, default_clocks=True, unrated=bots)
                db.refresh(room)
                apply_default_clocks(room, self.settings)
                room.status = PLAYING
                db.commit()
                made.append(str(room.id))
            return str(room.id)


def _partner(db: Any, me: Any, name: str) -> User:
    wanted = name.strip()
    if me.is_guest:
        raise MatchError(403, "guests play alone; register to queue with a friend", "guest_no_partner")
    from .friends_store import user_by_name

    other = user_by_name(db, wanted)
    if other is None:
        raise MatchError(404, f"no account named {wanted[:40]!r}", "no_user", {"name": wanted[:40]})
    if other.id == me.id:
        raise MatchError(400, "your partner must be someone else", "partner_self")
    link = db.get(FriendLink, (min(me.id, other.id), max(me.id, other.id)))
    if link is None or link.status != "accepted":
        raise MatchError(409, f"{other.name} is not your friend", "not_friends", {"name": other.name})
    return other


def _not_in_game(db: Any, people: list[Any]) -> None:
    """Refuse to queue people seated in a game under way: 409 ``seated_in_game`` with the joiner's
    room, 409 ``partner_in_game`` with the partner's name (not their room)."""
    for i, u in enumerate(people):
        room = live_room_of(db, u.id)
        if room is None:
            continue
        if i == 0:
            raise MatchError(409, "you are seated in a game under way; finish or leave it first", "seated_in_game",
                             {"room": room})
        raise MatchError(409, f"{u.name} is playing a game right now", "partner_in_game", {"name": u.name[:40]})


def make_match_router(service: MatchService, calls: AccountCalls | None = None) -> APIRouter:
    """The matchmaking routes (module docstring) over ``service``'s queue.

    Args:
        service: the process's :class:`MatchService`.
        calls: the pool that runs each request in one hand-off (:mod:`guandan.server.account_calls`);
            default: a pool of :data:`CALL_THREADS` threads of its own.
    Returns:
        An ``APIRouter`` to include in the app.
    """
    router = APIRouter(tags=["matchmaking"])
    queue = service.queue
    calls = calls if calls is not None else AccountCalls(CALL_THREADS, "guandan-match")

    def answer(me: Any, status_code: int = 200) -> Any:
        now = time.time()
        body = view(queue.state(me.id, now), me.id, now)
        return body if status_code == 200 else JSONResponse(body, status_code=status_code)

    @router.get("/api/match")
    async def match_state(request: Request) -> Any:
        """Where I stand in the queue (idle, queued, ready check, seated)."""
        return await calls.run(request, lambda db, me: answer(me))

    def address_of(request: Request) -> str:
        return request.client.host if request.client is not None else "unknown"

    def bot_room_left(db: Any, me: Any, level: str | None, address: str) -> None:
        """Bot fill asked: 429 ``too_many_quick_games`` now when the address's games with bots are at
        their limit (:mod:`guandan.server.botgames`; checked again when the match is seated)."""
        if level is not None and service.limits is not None:
            service.limits.check(db, me.id, address, solo=False)

    def join_now(db: Any, me: Any, data: Any, address: str) -> Any:
        body = validated(JoinBody, data)
        with _refusals():
            level = _level(body.bot_level)
            people = [me]
            if body.partner is not None and body.partner.strip():
                people.append(_partner(db, me, body.partner))
            if queue.state(me.id, time.time())["status"] not in ("queued", "ready_check"):
                _not_in_game(db, people)
                bot_room_left(db, me, level, address)
            _, created = queue.join([u.id for u in people], [display_rating(u.rating_mu, u.rating_sigma) for u in people],
                                    [u.name for u in people], level, time.time(), address)
        return answer(me, 201 if created else 200)

    @router.post("/api/match/join", openapi_extra=_body_schema(JoinBody))
    async def join(request: Request, data: Any = Body(None)) -> Any:
        """Join the queue, alone or with a friend as partner, with an optional bot-fill level."""
        return await calls.run(request, join_now, data, address_of(request))

    def bots_now(db: Any, me: Any, data: Any, address: str) -> Any:
        body = validated(BotsBody, data)
        with _refusals():
            level = _level(body.bot_level)
            bot_room_left(db, me, level, address)
            queue.set_bot_level(me.id, level, time.time())
        return answer(me)

    @router.post("/api/match/bots", openapi_extra=_body_schema(BotsBody))
    async def bots(request: Request, data: Any = Body(None)) -> Any:
        """Choose the bot level that fills empty seats after the wait (``null``: none)."""
        return await calls.run(request, bots_now, data, address_of(request))

    def leave_now(db: Any, me: Any) -> Any:
        with _refusals():
            return {"ok": True, "left": queue.leave(me.id, time.time())}

    @router.post("/api/match/leave")
    async def leave(request: Request) -> Any:
        """Leave the queue (one tap)."""
        return await calls.run(request, leave_now)

    def respond(db: Any, me: Any, accept: bool) -> Any:
        with _refusals():
            if not queue.answer(me.id, accept, time.time()):
                raise error(409, "no game is waiting for your answer", "no_ready_check")
        return answer(me)

    @router.post("/api/match/ready")
    async def ready(request: Request) -> Any:
        """Accept the match found (the ready check)."""
        return await calls.run(request, respond, True)

    @router.post("/api/match/decline")
    async def decline(request: Request) -> Any:
        """Decline the match found: I leave the queue, the others go back to its front."""
        return await calls.run(request, respond, False)

    return router
