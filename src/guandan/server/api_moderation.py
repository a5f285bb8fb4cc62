"""HTTP API of reports and moderation (issue 25 item 8). Rules: :mod:`guandan.server.moderation`;
storage: :mod:`guandan.server.moderation_store`.

* ``POST /api/reports {name, reason, room_id?, game_id?, deal?}`` -> 201 ``{report: {id, target, reason,
  room_id, game_id, deal}}``. Any logged-in player (401 ``login_required``). Errors: 400 ``report_self`` /
  ``bad_reason`` / ``bad_deal`` / ``table_required``, 403 ``not_table_mate``, 404 ``no_user``, 409
  ``already_reported``, 429 ``too_many_reports``.
* ``GET /api/moderation/me`` -> ``{admin: bool, phrases_muted_until}`` (the UI shows the admin page link;
  200 with ``admin: false`` when not signed in).
* Admins only (403 ``admin_only``; the role is set by ``guandan admin grant NAME``):
  ``GET /api/admin/reports`` -> ``{reports: [...]}`` (open ones, oldest first: ``moderation_store.report_json``);
  ``GET /api/admin/log`` -> ``{log: [...]}`` (newest first: who, what, when, why);
  ``POST /api/admin/actions {action, name? | report_id?, hours?, why}`` -> ``{entry}``: ``mute_phrases`` /
  ``suspend`` (``hours``), ``unmute_phrases`` / ``unsuspend``, ``dismiss`` (a report). A suspension ends
  the account's sessions, closes its table websockets (4401) and takes it out of the match queue. Errors: those of
  :func:`guandan.server.moderation_store.act`.

The suspended account's login is refused with 403 ``account_suspended`` ``{until}`` (``api_accounts.login``
asks :func:`guandan.server.moderation_store.suspended_until`). Handlers are plain functions (FastAPI's thread pool).
"""

from __future__ import annotations

import logging
import time
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy.orm import Session

from guandan.server import moderation_store as store
from guandan.server.api_accounts import error, iso
from guandan.server.auth import CurrentUser, RequiredUser
from guandan.server.db import DbSession
from guandan.server.models import User, utcnow
from guandan.server.moderation import ModerationError

__all__ = ["make_moderation_router"]

log = logging.getLogger(__name__)


class ReportBody(BaseModel):
    """``{name, reason, room_id?, game_id?, deal?}``: whom, why, where."""

    model_config = ConfigDict(extra="ignore")
    name: str = Field(max_length=64)
    reason: str = Field(max_length=32)
    room_id: str | None = Field(default=None, max_length=16)
    game_id: int | None = None
    deal: int | None = None


class ActionBody(BaseModel):
    """``{action, name?, report_id?, hours?, why}``: an admin's action."""

    model_config = ConfigDict(extra="ignore")
    action: str = Field(max_length=32)
    name: str | None = Field(default=None, max_length=64)
    report_id: int | None = None
    hours: int | None = None
    why: str = Field(default="", max_length=2000)


def _refused(e: ModerationError) -> Exception:
    return error(e.status, e.message, e.code, e.params)


def _admin(db: Session, user: User) -> None:
    if not store.is_admin(db, user.id):
        raise error(403, "only admins may see this page", "admin_only")


def _close_sockets(request: Request, keys: list[str]) -> None:
    """Close the table websockets of the ended sessions (4401), from the handler's worker thread."""
    manager = getattr(request.app.state, "manager", None)
    if manager is None or not keys:
        return
    from anyio.from_thread import run_sync

    for key in keys:
        run_sync(manager.revoke_session, key)


def _leave_queue(request: Request, user_id: int) -> None:
    """Take a suspended account out of the match queue (a ready check counts as declined), so that it is
    never matched nor holds others' ready check up; a busy queue lock is logged, not answered."""
    service = getattr(request.app.state, "matchmaking", None)
    if service is None:
        return
    try:
        service.queue.leave(user_id, time.time())
    except Exception:  # noqa: BLE001 - MatchError (lock busy) or a Redis hiccup: the suspension stands
        log.warning("could not take suspended account %s out of the match queue", user_id, exc_info=True)


def make_moderation_router() -> APIRouter:
    """The reports and admin routes (module docstring).

    Returns:
        An ``APIRouter`` to include in the app.
    """
    router = APIRouter(tags=["moderation"])

    @router.post("/api/reports")
    def report(body: ReportBody, db: DbSession, user: RequiredUser) -> Any:
        """Report a player you sat at a table with."""
        try:
            row = store.file_report(db, user, body.name, body.reason, body.room_id, body.game_id, body.deal, utcnow())
            out = {"id": row.id, "target": row.target.name, "reason": row.reason, "room_id": row.room_id,
                   "game_id": row.game_id, "deal": row.deal_no}
            db.commit()
        except ModerationError as e:
            db.rollback()
            raise _refused(e) from None
        return JSONResponse({"report": out}, status_code=201)

    @router.get("/api/moderation/me")
    def me(db: DbSession, user: CurrentUser) -> Any:
        """Whether I am an admin, and the end of my phrase mute (or null); not signed in: not an admin
        (200, so that the header's check never logs a failed request)."""
        if user is None:
            return {"admin": False, "phrases_muted_until": None}
        state = store.state_of(db, user.id)
        now = utcnow()
        muted = state.phrases_muted_until if state is not None else None
        return {"admin": bool(state is not None and state.is_admin),
                "phrases_muted_until": iso(muted) if muted is not None and muted > now else None}

    @router.get("/api/admin/reports")
    def reports(db: DbSession, user: RequiredUser) -> Any:
        """The open reports (admins only)."""
        _admin(db, user)
        return {"reports": store.open_reports(db, utcnow())}

    @router.get("/api/admin/log")
    def log(db: DbSession, user: RequiredUser) -> Any:
        """The newest admin actions (admins only)."""
        _admin(db, user)
        return {"log": store.log_entries(db)}

    @router.post("/api/admin/actions")
    def action(body: ActionBody, request: Request, db: DbSession, user: RequiredUser) -> Any:
        """Mute, suspend, lift either, or dismiss a report (admins only); logged."""
        try:
            entry, keys = store.act(db, user, body.action, body.hours, body.why, utcnow(), body.name, body.report_id)
            out = store.log_json(entry)
            db.commit()
        except ModerationError as e:
            db.rollback()
            raise _refused(e) from None
        _close_sockets(request, keys)
        if body.action == "suspend" and entry.target_id is not None:
            _leave_queue(request, entry.target_id)
        return {"entry": out}

    return router
