"""HTTP API of friends (issue 25 item 2): requests, the friends list with presence, invitations to
rooms, the friends leaderboard. Rules: :mod:`guandan.server.friends`; storage:
:mod:`guandan.server.friends_store`.

Every endpoint needs a registered account (401 ``login_required`` without a session, 403
``guest_no_friends`` for a guest). JSON bodies carry names, never ids, so a finished game's player
list or a profile page can add a friend by the name it shows.

* ``GET /api/friends`` -> :func:`~guandan.server.friends_store.overview`'s ``{friends, incoming,
  outgoing, blocked, invitations, leaderboard}`` (the lobby polls it every 20 s while the tab is visible).
* ``GET /api/friends/stream`` -> ``text/event-stream`` (server-sent events): an event ``friends`` whose
  ``data`` is the same panel as ``GET /api/friends``, sent when the stream opens and whenever the panel
  changes (:mod:`guandan.server.friends_push`); the open lobby listens to it instead of polling. Errors
  (before the stream starts, as for ``GET /api/friends``): 401 ``login_required``, 403 ``guest_no_friends``.
* ``POST /api/friends/requests {name}`` -> ``{outcome: "requested" | "accepted", name}`` (a request
  to someone who asked me first is accepted at once). Errors: 400 ``friend_self`` / ``guest_target``,
  404 ``no_user``, 409 ``already_friends`` / ``request_pending`` / ``you_blocked`` / ``too_many_friends``, 403 ``request_blocked``.
* ``POST /api/friends/accept {name}``, ``POST /api/friends/decline {name}`` -> ``{ok, name}``; 404
  ``no_request``.
* ``POST /api/friends/remove {name}`` -> ``{ok, name}`` (a friendship, or my own pending request);
  404 ``not_friends``.
* ``POST /api/friends/block {name}`` -> ``{ok, name}`` (ends a friendship or request, no request
  either way until unblocked; 400 ``friend_self`` / ``guest_target``, 404 ``no_user``, 409
  ``already_blocked``); ``POST /api/friends/unblock {name}`` -> ``{ok, name}`` (404 ``not_blocked``).
* ``POST /api/friends/invitations {name, room_id}`` -> ``{invitation: {id, to, room_id, expires_at}}``
  (201). Errors: 404 ``not_friends`` / ``no_room``, 403 ``invite_not_seated``, 409 ``room_not_waiting`` /
  ``already_seated`` / ``already_invited``.
* ``POST /api/friends/invitations/{id}/dismiss`` -> ``{ok}``; 404 ``no_invitation``.

The error shape is the server's (:mod:`guandan.server.errors`): ``{"error", "code", "params"}``.
Handlers are plain functions (FastAPI's thread pool): the database never blocks the event loop.
``GET /api/friends``, which every open lobby polls, is the exception: an ``async`` handler that
hands the whole request (session check, presence, panel, JSON) to one thread of a small pool of its
own (:class:`~guandan.server.account_calls.AccountCalls`, :data:`POLL_THREADS`, :func:`panel_json`), instead of one hand-off per dependency to the
shared pool (issue 25 "Speed and scale": 1,000 polling pages took the tables' throughput down by
half and made the polls wait seconds; docs/friends.md).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy.exc import IntegrityError

from guandan.server import friends_store as store
from guandan.server.api_accounts import error, iso
from guandan.server.account_calls import AccountCalls
from guandan.server.process_calls import ProcessCalls
from guandan.server.auth import COOKIE_NAME, RequiredUser, token_key
from guandan.server.db import DbSession
from guandan.server.friends import Account, FriendError, check_may_have_friends
from guandan.server.friends_push import FriendsPush
from guandan.server.models import utcnow

__all__ = ["POLL_THREADS", "STREAM_HEADERS", "make_friends_router", "panel_json", "stream_account"]


class NameBody(BaseModel):
    """``{name}``: an account's name as shown (case and surrounding spaces ignored)."""

    model_config = ConfigDict(extra="ignore")
    name: str = Field(max_length=64)


class InviteBody(BaseModel):
    """``{name, room_id}``: the friend to invite and the room."""

    model_config = ConfigDict(extra="ignore")
    name: str = Field(max_length=64)
    room_id: str = Field(max_length=16)


def _refused(e: FriendError) -> Exception:
    return error(e.status, e.message, e.code, e.params)


#: Threads that answer ``GET /api/friends`` when the app passes no pool (:func:`make_friends_router`).
POLL_THREADS = 2


def panel_json(db: Any, me: Any) -> bytes:
    """The friends panel of the account ``me`` (a ``User`` or an account row) as JSON (UTF-8): the
    work of ``GET /api/friends`` once the session is checked and the account marked seen
    (:class:`~guandan.server.account_calls.AccountCalls`): read the panel
    (:func:`~guandan.server.friends_store.overview`), commit (dead invitations deleted), encode.

    Raises:
        HTTPException: 403 ``guest_no_friends`` (a guest account).
    """
    now = utcnow()
    try:
        out = store.overview(db, me, now)
    except FriendError as e:
        raise _refused(e) from None
    db.commit()
    return store.panel_text(out)


def stream_account(db: Any, me: Any) -> int:
    """The account id a friends stream is opened for, once the session is checked (``db`` unused).

    Raises:
        HTTPException: 403 ``guest_no_friends`` (a guest account).
    """
    try:
        check_may_have_friends(Account(me.id, me.name, bool(me.is_guest)))
    except FriendError as e:
        raise _refused(e) from None
    return int(me.id)


#: Headers of a friends stream: never cached, never buffered by a proxy (nginx reads the second).
STREAM_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


def make_friends_router(polls: AccountCalls | ProcessCalls | None = None, push: FriendsPush | None = None) -> APIRouter:
    """The friends' routes (module docstring).

    Args:
        polls: the pool that answers ``GET /api/friends`` in one hand-off (at most its threads
            compete with the event loop for the interpreter and hold a database connection,
            however many pages poll at once; the others queue); default: :data:`POLL_THREADS` threads of its own.
        push: the sweeps that feed ``GET /api/friends/stream`` and are told of this router's changes
            (:class:`~guandan.server.friends_push.FriendsPush`, started by the app); ``None``: no
            stream route (the pages poll).
    Returns:
        An ``APIRouter`` to include in the app.
    """
    router = APIRouter(tags=["friends"])
    calls = polls if polls is not None else AccountCalls(POLL_THREADS, "guandan-friends")

    @router.get("/api/friends")
    async def friends_overview(request: Request) -> Response:
        """My friends with presence, requests both ways, invitations and the friends leaderboard."""
        body = await calls.run(request, panel_json)
        return Response(body, media_type="application/json")

    if push is not None:
        @router.get("/api/friends/stream")
        async def friends_stream(request: Request) -> Response:
            """My friends panel as server-sent events: now, and again whenever it changes."""
            account_id = await calls.run(request, stream_account)
            key = token_key(request.cookies.get(COOKIE_NAME) or "")
            return StreamingResponse(push.events(key, account_id), media_type="text/event-stream",
                                     headers=STREAM_HEADERS)

    def changed(*account_ids: int) -> None:
        """Friends of ``account_ids`` changed here: their open streams are read at the next sweep
        (called from a handler's worker thread)."""
        if push is not None:
            from anyio.from_thread import run_sync

            run_sync(push.nudge, set(account_ids))

    @router.post("/api/friends/requests")
    def friend_request(body: NameBody, db: DbSession, user: RequiredUser) -> Any:
        """Ask the account ``name`` to be friends (accepted at once if they asked first)."""
        for attempt in (1, 2):  # the other side may ask at the same moment: then the retry accepts
            try:
                outcome, other = store.send_request(db, user, body.name)
                db.commit()
                changed(user.id, other.id)
                return {"outcome": outcome, "name": other.name}
            except FriendError as e:
                db.rollback()
                raise _refused(e) from None
            except IntegrityError:
                db.rollback()
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def act(db: Any, user: Any, change: Callable[[], Any]) -> Any:
        """Run one store change on the account named in the body: commit it and answer ``{ok, name}``,
        or roll it back and answer the refusal."""
        try:
            other = change()
        except FriendError as e:
            db.rollback()
            raise _refused(e) from None
        db.commit()
        changed(user.id, other.id)
        return {"ok": True, "name": other.name}

    @router.post("/api/friends/accept")
    def accept_request(body: NameBody, db: DbSession, user: RequiredUser) -> Any:
        """Accept the pending request from ``name``."""
        return act(db, user, lambda: store.answer_request(db, user, body.name, True))

    @router.post("/api/friends/decline")
    def decline_request(body: NameBody, db: DbSession, user: RequiredUser) -> Any:
        """Decline (delete) the pending request from ``name``."""
        return act(db, user, lambda: store.answer_request(db, user, body.name, False))

    @router.post("/api/friends/remove")
    def remove(body: NameBody, db: DbSession, user: RequiredUser) -> Any:
        """End the friendship with ``name``, or take back my request to them."""
        return act(db, user, lambda: store.remove_friend(db, user, body.name))

    @router.post("/api/friends/block")
    def block(body: NameBody, db: DbSession, user: RequiredUser) -> Any:
        """Block ``name``: no friend request either way until I unblock them."""
        return act(db, user, lambda: store.block(db, user, body.name))

    @router.post("/api/friends/unblock")
    def unblock(body: NameBody, db: DbSession, user: RequiredUser) -> Any:
        """Lift my block of ``name``."""
        return act(db, user, lambda: store.unblock(db, user, body.name))

    @router.post("/api/friends/invitations")
    def invite(body: InviteBody, db: DbSession, user: RequiredUser) -> Any:
        """Invite the friend ``name`` to the waiting room ``room_id`` I sit in."""
        try:
            row = store.invite(db, user, body.name, body.room_id, utcnow())
            db.commit()
        except FriendError as e:
            db.rollback()
            raise _refused(e) from None
        except IntegrityError:  # the same invitation sent twice at the same moment
            db.rollback()
            raise error(409, f"{body.name} is already invited to this room", "already_invited",
                        {"name": body.name[:40]}) from None
        changed(user.id, row.to_id)
        return JSONResponse({"invitation": {"id": row.id, "to": body.name.strip(), "room_id": row.room_id,
                                            "expires_at": iso(row.expires_at)}}, status_code=201)

    @router.post("/api/friends/invitations/{invite_id}/dismiss")
    def dismiss(invite_id: str, db: DbSession, user: RequiredUser) -> Any:
        """Dismiss an invitation addressed to me (or take back one I sent)."""
        iid = int(invite_id) if invite_id.isascii() and invite_id.isdigit() and len(invite_id) <= 9 else -1
        try:
            other = store.dismiss(db, user, iid)
        except FriendError as e:
            db.rollback()
            raise _refused(e) from None
        db.commit()
        changed(user.id, other)
        return {"ok": True}

    return router
