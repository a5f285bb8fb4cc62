"""Reports and moderation in the database (issue 25 item 8): tables ``account_moderation``, ``reports``
and ``moderation_log``. The rules are :mod:`guandan.server.moderation`'s; these functions read and write
rows for them. Every function takes a SQLAlchemy ``Session`` and flushes; the caller commits (except
:func:`phrases_muted_until`, which opens its own session for the table websocket's thread pool).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from guandan.server import moderation as rules
from guandan.server.models import (AccountModeration, GamePlayer, GameRow, ModerationLogRow, ReportRow, RoomSeat,
                                   User, UserSession)
from guandan.server.moderation import ModerationError

__all__ = ["act", "file_report", "find_account", "is_admin", "log_entries", "log_json", "open_reports", "phrases_muted_until",
           "report_json", "set_admin", "state_of", "suspended_until"]

#: ``admin_name`` of actions taken from the command line (``guandan admin``).
CLI_ADMIN = "(command line)"


def find_account(db: Session, name: str) -> User | None:
    """The account named ``name`` (ASCII case ignored, surrounding spaces stripped), or ``None``."""
    return db.scalars(select(User).where(func.lower(User.name) == name.strip().lower())).first()


def state_of(db: Session, user_id: int, create: bool = False) -> AccountModeration | None:
    """The account's moderation row (created, flushed, when ``create`` and missing)."""
    row = db.get(AccountModeration, user_id)
    if row is None and create:
        row = AccountModeration(user_id=user_id, is_admin=False)
        db.add(row)
        db.flush()
    return row


def is_admin(db: Session, user_id: int) -> bool:
    """Whether the account holds the admin role."""
    row = db.get(AccountModeration, user_id)
    return bool(row is not None and row.is_admin)


def suspended_until(db: Session, user_id: int, now: datetime) -> datetime | None:
    """The end of the account's suspension when it is still suspended at ``now``, else ``None``."""
    row = db.get(AccountModeration, user_id)
    return rules.active_until(row.suspended_until if row is not None else None, now)


def phrases_muted_until(session_factory: Callable[[], Any], user_id: int, now: datetime) -> datetime | None:
    """The end of the account's phrase mute when it still holds at ``now``, else ``None`` (blocking:
    run it in a thread; opens and closes its own session)."""
    with session_factory() as db:
        row = db.get(AccountModeration, user_id)
        until = rules.active_until(row.phrases_muted_until if row is not None else None, now)
        db.commit()
    return until


def _log(db: Session, admin: User | None, action: str, target: User, why: str, now: datetime,
         until: datetime | None = None, report_id: int | None = None) -> ModerationLogRow:
    entry = ModerationLogRow(admin_id=admin.id if admin is not None else None,
                             admin_name=admin.name if admin is not None else CLI_ADMIN, action=action,
                             target_id=target.id, target_name=target.name, until=until, report_id=report_id,
                             why=why, created_at=now)
    db.add(entry)
    db.flush()
    return entry


def set_admin(db: Session, name: str, on: bool, now: datetime, why: str = "") -> tuple[User, bool]:
    """Give (``on``) or take the admin role from the command line, logged as ``grant_admin`` / ``revoke_admin``.

    Returns:
        ``(account, changed)``: ``changed`` is false when it already was so (nothing logged).
    Raises:
        LookupError: no account of that name. ValueError: a guest account (guests cannot be admins).
    """
    user = find_account(db, name)
    if user is None:
        raise LookupError(f"no account called {name!r}")
    if user.is_guest and on:
        raise ValueError(f"{user.name} is a guest account: guests cannot be admins")
    row = state_of(db, user.id, create=on)
    if row is None or row.is_admin == on:
        return user, False
    row.is_admin = on
    _log(db, None, "grant_admin" if on else "revoke_admin", user, why, now)  # no why: the page says "set from the command line" in the reader's language
    return user, True


def _shared_table(db: Session, a: int, b: int, room_id: str | None, game_id: int | None) -> tuple[bool, str | None]:
    """Whether accounts ``a`` and ``b`` both sat at the game (if given) or the room; and the room of the game."""
    if game_id is not None:
        game = db.get(GameRow, game_id)
        if game is None:
            return False, room_id
        seated = set(db.scalars(select(GamePlayer.user_id).where(GamePlayer.game_id == game_id)))
        return {a, b} <= seated, game.room_id
    if room_id:
        seated = set(db.scalars(select(RoomSeat.user_id).where(RoomSeat.room_id == room_id)))
        if {a, b} <= seated:
            return True, room_id
        # a finished room whose seats were emptied since: the stored games of the room count
        games = db.scalars(select(GameRow.id).where(GameRow.room_id == room_id)).all()
        for gid in games:
            if {a, b} <= set(db.scalars(select(GamePlayer.user_id).where(GamePlayer.game_id == gid))):
                return True, room_id
    return False, room_id


#: The largest row id: the database's integers are 64-bit signed (a larger number overflows the query: a 500).
ROW_ID_MAX = 2**63 - 1


def _row_id(value: object) -> bool:
    """Whether ``value`` can be a row id: an ``int`` (not a bool) in 1..:data:`ROW_ID_MAX`."""
    return isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= ROW_ID_MAX


def file_report(db: Session, reporter: User, target_name: str, reason: object, room_id: object, game_id: object,
                deal_no: object, now: datetime) -> ReportRow:
    """File ``reporter``'s report of the account ``target_name`` (rules: :func:`moderation.check_report`).

    Args:
        room_id: the room (8 characters) or ``None``; game_id: the finished game or ``None``; one is needed.
    Raises:
        ModerationError: 400 ``table_required`` (neither room nor game), 404 ``no_user`` (``name``), and
            :func:`guandan.server.moderation.check_report`'s.
    """
    if room_id is not None and (not isinstance(room_id, str) or not 1 <= len(room_id) <= 16):
        raise ModerationError(400, "room_id must be a room id", "table_required", {})
    if game_id is not None and not _row_id(game_id):
        raise ModerationError(400, "game_id must be a game number", "table_required", {})
    if room_id is None and game_id is None:
        raise ModerationError(400, "say at which table (room or game) it happened", "table_required", {})
    target = find_account(db, target_name)
    if target is None:
        raise ModerationError(404, f"no player called {target_name!r}", "no_user", {"name": target_name[:24]})
    shared, room = _shared_table(db, reporter.id, target.id, room_id, game_id)  # type: ignore[arg-type]
    same = select(func.count()).select_from(ReportRow).where(
        ReportRow.reporter_id == reporter.id, ReportRow.target_id == target.id, ReportRow.status == "open",
        (ReportRow.game_id == game_id) if game_id is not None else (ReportRow.room_id == room))
    recent = select(func.count()).select_from(ReportRow).where(
        ReportRow.reporter_id == reporter.id, ReportRow.created_at > now - timedelta(days=1))
    rules.check_report(reporter_id=reporter.id, target_id=target.id, reason=reason, deal_no=deal_no,
                       shared_table=shared, open_same=bool(db.scalar(same)), reports_last_day=int(db.scalar(recent) or 0))
    report = ReportRow(reporter_id=reporter.id, target_id=target.id, reason=reason, room_id=room,
                       game_id=game_id, deal_no=deal_no, status="open", created_at=now)
    db.add(report)
    db.flush()
    return report


def _iso(ts: datetime | None) -> str | None:
    return None if ts is None else ts.replace(microsecond=0).isoformat().replace("+00:00", "Z")


def report_json(db: Session, r: ReportRow, now: datetime) -> dict[str, Any]:
    """A report for the admin page: ``{id, reporter, target, reason, room_id, game_id, deal, link, status,
    created_at, target_state: {muted_until, suspended_until}}`` (``game_id`` is the room's finished
    game when the report named only the room and the game has ended since)."""
    game_id = r.game_id
    if game_id is None and r.room_id:
        game_id = db.scalars(select(GameRow.id).where(GameRow.room_id == r.room_id).order_by(GameRow.id.desc())).first()
    state = db.get(AccountModeration, r.target_id)
    return {
        "id": r.id, "reporter": r.reporter.name, "target": r.target.name, "reason": r.reason,
        "room_id": r.room_id, "game_id": game_id, "deal": r.deal_no, "link": rules.report_link(r.room_id, game_id),
        "status": r.status, "created_at": _iso(r.created_at),
        "target_state": {
            "muted_until": _iso(rules.active_until(state.phrases_muted_until if state else None, now)),
            "suspended_until": _iso(rules.active_until(state.suspended_until if state else None, now)),
        },
    }


def open_reports(db: Session, now: datetime, limit: int = 200) -> list[dict[str, Any]]:
    """The open reports, oldest first (at most ``limit``), as :func:`report_json`."""
    rows = db.scalars(select(ReportRow).where(ReportRow.status == "open").order_by(ReportRow.id).limit(limit)).all()
    return [report_json(db, r, now) for r in rows]


def log_json(e: ModerationLogRow) -> dict[str, Any]:
    """A log entry: ``{id, admin, cli, action, target, until, report_id, why, at}`` (``cli``: done from the
    command line, ``admin`` is then :data:`CLI_ADMIN`; account names cannot hold its parentheses)."""
    return {"id": e.id, "admin": e.admin_name, "cli": e.admin_name == CLI_ADMIN, "action": e.action, "target": e.target_name, "until": _iso(e.until),
            "report_id": e.report_id, "why": e.why, "at": _iso(e.created_at)}


def log_entries(db: Session, limit: int = 200) -> list[dict[str, Any]]:
    """The newest ``limit`` admin actions, newest first, as :func:`log_json`."""
    rows = db.scalars(select(ModerationLogRow).order_by(ModerationLogRow.id.desc()).limit(limit)).all()
    return [log_json(e) for e in rows]


def act(db: Session, admin: User, action: object, hours: object, why: object, now: datetime,
        name: object = None, report_id: object = None) -> tuple[ModerationLogRow, list[str]]:
    """Carry out an admin's action on the account ``name`` or the target of report ``report_id``, log it,
    and close the report when one is given.

    Returns:
        ``(log entry, session keys)``: a suspension deletes every session of the account; their keys are
        returned so the caller closes the table websockets opened with them.
    Raises:
        ModerationError: 403 ``admin_only``; :func:`moderation.check_action`'s 400s; 400 ``target_required``;
            404 ``no_user`` / ``no_report``; 409 ``report_closed``; 400 ``dismiss_needs_report``.
    """
    if not is_admin(db, admin.id):
        raise ModerationError(403, "only admins may do this", "admin_only", {})
    action, hours_ok, why_text = rules.check_action(action, hours, why)
    report: ReportRow | None = None
    if report_id is not None:
        report = db.get(ReportRow, report_id) if _row_id(report_id) else None
        if report is None:
            raise ModerationError(404, "no such report", "no_report", {})
        if report.status != "open":
            raise ModerationError(409, "this report is closed already", "report_closed", {"report": report.id})
    if action == "dismiss" and report is None:
        raise ModerationError(400, "dismiss closes a report: give report_id", "dismiss_needs_report", {})
    if report is not None:
        target = report.target
    elif isinstance(name, str) and name.strip():
        found = find_account(db, name)
        if found is None:
            raise ModerationError(404, f"no player called {name!r}", "no_user", {"name": name[:24]})
        target = found
    else:
        raise ModerationError(400, "name the account (name) or the report (report_id)", "target_required", {})
    until = rules.action_until(action, hours_ok, now)
    keys: list[str] = []
    if action in ("mute_phrases", "unmute_phrases"):
        state_of(db, target.id, create=True).phrases_muted_until = until  # type: ignore[union-attr]
    elif action in ("suspend", "unsuspend"):
        state_of(db, target.id, create=True).suspended_until = until  # type: ignore[union-attr]
        if action == "suspend":
            keys = list(db.scalars(select(UserSession.token).where(UserSession.user_id == target.id)))
            db.execute(delete(UserSession).where(UserSession.user_id == target.id))
    if report is not None:
        report.status = "closed"
        report.closed_at = now
    entry = _log(db, admin, action, target, why_text, now, until if action in rules.TIMED_ACTIONS else None,
                 report.id if report is not None else None)
    return entry, keys
