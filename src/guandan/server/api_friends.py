"""HTTP API of friends (issue 25 item 2): requests, the friends list with presence, invitations to
rooms, the friends leaderboard. Rules: :mod:`guandan.server.friends`; storage:
:mod:`guandan.server.friends_store`.

Every endpoint needs a registered account (401 ``login_required`` without a session, 403
``guest_no_friends`` for a guest). JSON bodies carry names, never ids, so a finished game's player
list or a profile page can add a friend by the name it shows.

* ``GET /api/friends`` -> :func:`~guandan.server.friends_store.overview`'s ``{friends, incoming,
  outgoing, blocked, invitations, leaderboard}`` (the lobby polls it every 20 s while the tab is visible).
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

import json
from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy.exc import IntegrityError

from guandan.server import friends_store as store
from guandan.server.api_accounts import error, iso
from guandan.server.account_calls import AccountCalls
from guandan.server.process_calls import ProcessCalls
from guandan.server.auth import RequiredUser
from guandan.server.db import DbSession
from guandan.server.friends import FriendError
from guandan.server.models import utcnow

__all__ = ["POLL_THREADS", "make_friends_router", "panel_json"]


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
    return json.dumps(out, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8")


def make_friends_router(polls: AccountCalls | ProcessCalls | None = None) -> APIRouter:
    """The friends' routes (module docstring).

    Args:
        polls: the pool that answers ``GET /api/friends`` in one hand-off (at most its threads
            compete with the event loop for the interpreter and hold a database connection,
            however many pages poll at once; the others queue); default: :data:`POLL_THREADS` threads of its own.
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

    @router.post("/api/friends/requests")
    def friend_request(body: NameBody, db: DbSession, user: RequiredUser) -> Any:
        """Ask the account ``name`` to be friends (accepted at once if they asked first)."""
        for attempt in (1, 2):  # the other side may ask at the same moment: then the retry accepts
            try:
                outcome, other = store.send_request(db, user, body.name)
                db.commit()
                return {"outcome": outcome, "name": other.name}
            except FriendError as e:
                db.rollback()
                raise _refused(e) from None
            except IntegrityError:
                db.rollback()
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def act(db: Any, change: Callable[[], Any]) -> Any:
        """Run one store change on the account named in the body: commit it and answer ``{ok, name}``,
        or roll it back and answer the refusal."""
        try:
            other = change()
        except FriendError as e:
            db.rollback()
            raise _refused(e) from None
        db.commit()
        return {"ok": True, "name": other.name}

    @router.post("/api/friends/accept")
    def accept_request(body: NameBody, db: DbSession, user: RequiredUser) -> Any:
        """Accept the pending request from ``name``."""
        return act(db, lambda: store.answer_request(db, user, body.name, True))

    @router.post("/api/friends/decline")
    def decline_request(body: NameBody, db: DbSession, user: RequiredUser) -> Any:
        """Decline (delete) the pending request from ``name``."""
        return act(db, lambda: store.answer_request(db, user, body.name, False))

    @router.post("/api/friends/remove")
    def remove(body: NameBody, db: DbSession, user: RequiredUser) -> Any:
        """End the friendship with ``name``, or take back my request to them."""
        return act(db, lambda: store.remove_friend(db, user, body.name))

    @router.post("/api/friends/block")
    def block(body: NameBody, db: DbSession, user: RequiredUser) -> Any:
        """Block ``name``: no friend request either way until I unblock them."""
        return act(db, lambda: store.block(db, user, body.name))

    @router.post("/api/friends/unblock")
    def unblock(body: NameBody, db: DbSession, user: RequiredUser) -> Any:
        """Lift my block of ``name``."""
        return act(db, lambda: store.unblock(db, user, body.name))

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
        return JSONResponse({"invitation": {"id": row.id, "to": body.name.strip(), "room_id": row.room_id,
                                            "expires_at": iso(row.expires_at)}}, status_code=201)

    @router.post("/api/friends/invitations/{invite_id}/dismiss")
    def dismiss(invite_id: str, db: DbSession, user: RequiredUser) -> Any:
        """Dismiss an invitation addressed to me (or take back one I sent)."""
        iid = int(invite_id) if invite_id.isascii() and invite_id.isdigit() and len(invite_id) <= 9 else -1
        try:
            store.dismiss(db, user, iid)
        except FriendError as e:
            db.rollback()
            raise _refused(e) from None
        db.commit()
        return {"ok": True}

    return router
