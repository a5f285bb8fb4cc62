"""Tournaments in the server database: load the engine's state, let the engine decide, store the result.

A tournament is one ``tournaments`` row (:class:`~guandan.server.models.TournamentRow`) whose ``state``
is the engine's JSON (:func:`guandan.tournament.to_json`, the text the ``guandan tournament`` CLI saves,
written compact: :func:`state_text`; no second serialiser). Every change goes through :func:`change`:

1. the row is read and the acting user must be its organiser or a co-director (403 ``not_director``);
2. the client's ``version`` must be the row's (409 ``stale_version``: "the tournament changed; reload");
3. the engine applies the operation to the parsed state (its errors become 400/409 with the engine's
   stable ``code`` and ``params``, see :data:`ENGINE_STATUS`);
4. the new state is written with ``UPDATE ... WHERE id = ? AND version = ?`` and one
   ``tournament_audit`` row (who, when, operation, before, after) in the same transaction. When two
   organisers act at once on the same version, exactly one ``UPDATE`` matches a row; the other is
   rolled back and answered 409 ``stale_version``, so nothing is lost or counted twice.

The engine keeps its own log (``LogEntry``: the value before and after every result, correction and
penalty); the audit row copies the entries one action added. The deciding code stays in
:mod:`guandan.tournament`; this module only loads, calls and stores.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from fastapi import HTTPException
from sqlalchemy import select, update
from sqlalchemy.orm import Session

from guandan.tournament import brackets
from guandan.tournament.director import groups_of
from guandan.tournament.errors import TournamentError
from guandan.tournament.model import Tournament, from_json, to_json

from .hardening import bad_text
from .models import TournamentAuditRow, TournamentDirectorRow, TournamentRow, User

#: HTTP status of each engine error code (docs/tournaments.md "Errors"); 400 for any other code.
ENGINE_STATUS = {
    "not_director": 403,
    "duplicate_entry": 409,
    "entry_withdrawn": 409,
    "not_enough_entries": 409,
    "round_incomplete": 409,
    "round_has_results": 409,
    "no_more_rounds": 409,
    "result_already_entered": 409,
    "no_result": 409,
    "no_winner": 409,
}

STALE_MESSAGE = "the tournament changed; reload"

#: The operations of the audit log (``tournament_audit.operation``); the UI names each one.
OPERATIONS = ("create", "add_entries", "withdraw", "codirector", "remove_codirector", "pair", "repair", "result",
              "correct", "penalty", "claim")


def api_error(status: int, message: str, code: str, params: dict[str, Any] | None = None) -> HTTPException:
    """An ``HTTPException`` answered as ``{"error": message, "code": code, "params": params}``
    (:mod:`guandan.server.errors`; the UI translates ``code``)."""
    return HTTPException(status_code=status, detail={"message": message, "code": code, "params": params or {}})


def engine_error(e: TournamentError) -> HTTPException:
    """An engine error as an API error: its ``code``, its JSON ``params`` and its English message."""
    params = {k: v for k, v in e.params.items() if isinstance(v, (str, int, float, bool, list, type(None)))}
    return api_error(ENGINE_STATUS.get(e.code, 400), str(e), e.code, params)


def now_iso() -> str:
    """The current UTC time as ISO 8601 with a ``Z`` (the engine's ``at`` strings)."""
    return datetime.now(UTC).replace(microsecond=0).isoformat().replace("+00:00", "Z")


# --- reading ---------------------------------------------------------------------------------------


def load(db: Session, tournament_id: int) -> tuple[TournamentRow, Tournament]:
    """The row and its parsed state; 404 ``tournament_not_found`` (also for an id no database
    integer holds: a 20-digit id answered 500 with SQLite's OverflowError)."""
    row = db.get(TournamentRow, tournament_id) if 1 <= tournament_id < 2**31 else None
    if row is None:
        raise api_error(404, f"no tournament {tournament_id}", "tournament_not_found", {"id": tournament_id})
    return row, from_json(row.state)


def director_names(db: Session, row: TournamentRow) -> list[str]:
    """The co-directors' account names, in the order they were added."""
    q = (select(User.name).join(TournamentDirectorRow, TournamentDirectorRow.user_id == User.id)
         .where(TournamentDirectorRow.tournament_id == row.id).order_by(User.name))
    return list(db.execute(q).scalars())


def can_direct(db: Session, row: TournamentRow, user: User | None) -> bool:
    """Whether ``user`` is the organiser or a co-director of ``row``."""
    if user is None:
        return False
    if row.organiser_id == user.id:
        return True
    return db.get(TournamentDirectorRow, (row.id, user.id)) is not None


def require_director(db: Session, row: TournamentRow, user: User) -> None:
    """403 ``not_director`` unless ``user`` may change the tournament."""
    if not can_direct(db, row, user):
        raise api_error(403, "only the organiser and co-directors may change this tournament", "not_director")


def rounds_total(t: Tournament) -> int:
    """How many rounds the event will have: Swiss ``t.rounds``; a round robin its Berger rounds; groups
    then knock-out the longest group's rounds plus the knock-out's (log2 of its size). Before round 1 the
    field as it stands is counted."""
    if t.format == "swiss":
        return t.rounds
    if t.format == "round_robin":
        field = [e.id for e in t.entries if e.joined_round == 1]
        return len(brackets.berger_rounds(field)) if len(field) >= 2 else 0
    field = [e.id for e in t.entries if e.active]
    groups = groups_of(t) if t.played else brackets.snake_groups(field, max(1, t.options.groups))
    group_rounds = max((len(brackets.berger_rounds(g)) for g in groups if len(g) >= 2), default=0)
    return group_rounds + max(1, t.options.knockout_size).bit_length() - 1


def status_of(t: Tournament) -> str:
    """``registering`` (no round paired), ``running`` or ``finished`` (every round paired and complete)."""
    if not t.played:
        return "registering"
    total = rounds_total(t)
    return "finished" if len(t.played) >= total and t.played[-1].complete else "running"


def summary(row: TournamentRow) -> dict[str, Any]:
    """A line of ``GET /api/tournaments``."""
    return {"id": row.id, "name": row.name, "format": row.format, "status": row.status,
            "rounds_played": row.rounds_played, "rounds_total": row.rounds_total,
            "organiser": row.organiser.name if row.organiser is not None else None,
            "updated_at": row.updated_at.replace(microsecond=0).isoformat().replace("+00:00", "Z"),
            "version": row.version}


def list_rows(db: Session, limit: int = 200) -> list[TournamentRow]:
    """The most recently changed tournaments first."""
    return list(db.execute(select(TournamentRow).order_by(TournamentRow.updated_at.desc(), TournamentRow.id.desc())
                           .limit(limit)).scalars())


def audit_rows(db: Session, row: TournamentRow) -> list[dict[str, Any]]:
    """``GET .../log``: every audit row, oldest first, with the acting account's name."""
    q = select(TournamentAuditRow).where(TournamentAuditRow.tournament_id == row.id).order_by(TournamentAuditRow.id)
    out = []
    for a in db.execute(q).scalars():
        out.append({"id": a.id, "at": a.at.replace(microsecond=0).isoformat().replace("+00:00", "Z"),
                    "by": a.user.name if a.user is not None else None, "operation": a.operation,
                    "version": a.version, "before": a.before, "after": a.after})
    return out


# --- writing ---------------------------------------------------------------------------------------


def state_text(t: Tournament) -> str:
    """The ``state`` column's text of ``t``: :func:`guandan.tournament.model.to_json` in its compact
    form (one line; written by the C encoder: the server rewrites the state at every result, and the
    indented form of a 400-pair event took 59 ms of the event loop's interpreter lock, compact 13 ms).
    :func:`guandan.tournament.model.from_json` reads both forms.

    Raises:
        StateError: a number in the state is NaN or infinite.
    """
    return to_json(t, compact=True)


def _summary_values(t: Tournament) -> dict[str, Any]:
    """The row's copies of the state, for the list page."""
    return {"name": t.name, "format": t.format, "rounds_played": len(t.played), "rounds_total": rounds_total(t),
            "status": status_of(t)}


def create(db: Session, t: Tournament, organiser: User) -> TournamentRow:
    """Store a new tournament (version 1) with ``organiser`` as its organiser; audit ``create``."""
    t.directors = [organiser.name]
    row = TournamentRow(organiser_id=organiser.id, state=state_text(t), version=1, **_summary_values(t))
    db.add(row)
    db.flush()
    db.add(TournamentAuditRow(tournament_id=row.id, user_id=organiser.id, operation="create", version=1,
                              before=None, after={"name": t.name, "format": t.format, "rounds": t.rounds,
                                                  "preset": t.preset, "match_minutes": t.match_minutes}))
    db.commit()
    return row


def check_version(row: TournamentRow, version: Any) -> None:
    """400 ``version_required`` without an integer ``version``; 409 ``stale_version`` for another one."""
    if isinstance(version, bool) or not isinstance(version, int):
        raise api_error(400, "send the tournament's version (the number you last read)", "version_required")
    if version != row.version:
        raise api_error(409, STALE_MESSAGE, "stale_version", {"version": row.version, "sent": version})


def _audit_values(t: Tournament, first: int) -> tuple[Any, Any]:
    new = t.log[first:]
    if len(new) == 1:
        e = new[0]
        return e.before, {"round": e.round, "table": e.table, "value": e.after, "reason": e.reason}
    return None, [{"action": e.action, "round": e.round, "table": e.table, "value": e.after} for e in new]


def change(db: Session, tournament_id: int, user: User, version: Any, operation: str,
           apply: Callable[[Tournament], Any], *, audit: Callable[[Tournament], tuple[Any, Any]] | None = None,
           extra: Callable[[TournamentRow], None] | None = None) -> tuple[TournamentRow, Tournament, Any]:
    """Apply one organiser action and store it (see the module docstring).

    ``apply(t)`` calls the engine on the parsed state and returns what the answer needs; ``audit(t)``
    (after ``apply``) gives the audit row's ``(before, after)``, by default the engine log entries the
    action added; ``extra(row)`` adds rows of its own to the same transaction. Returns ``(row, state, apply's value)``; raises the API errors above.
    """
    if operation not in OPERATIONS:
        raise ValueError(f"unknown audit operation {operation!r}")
    row, t = load(db, tournament_id)
    require_director(db, row, user)
    check_version(row, version)
    first = len(t.log)
    try:
        value = apply(t)
        state = state_text(t)
    except TournamentError as e:
        raise engine_error(e) from None
    before, after = audit(t) if audit is not None else _audit_values(t, first)
    new_version = row.version + 1
    stamp = datetime.now(UTC)
    res = db.execute(
        update(TournamentRow)
        .where(TournamentRow.id == row.id, TournamentRow.version == row.version)
        .values(state=state, version=new_version, updated_at=stamp, **_summary_values(t))
        .execution_options(synchronize_session=False)
    )
    if res.rowcount != 1:  # type: ignore[attr-defined]
        db.rollback()
        raise api_error(409, STALE_MESSAGE, "stale_version", {"sent": version})
    db.add(TournamentAuditRow(tournament_id=row.id, user_id=user.id, operation=operation, version=new_version,
                              before=before, after=after, at=stamp))
    if extra is not None:
        extra(row)
    db.commit()
    db.refresh(row)
    return row, t, value


def add_codirector(db: Session, tournament_id: int, user: User, version: Any, name: Any) -> TournamentRow:
    """The organiser names a co-director by account name (only the organiser may: 403
    ``organiser_only``); 400 ``unknown_user``, 409 ``already_director``. Audited ``codirector``."""
    from .auth import find_user

    row, _t = load(db, tournament_id)
    if row.organiser_id != user.id:
        require_director(db, row, user)
        raise api_error(403, "only the organiser names co-directors", "organiser_only")
    if not isinstance(name, str) or not name.strip() or len(name) > 64 or bad_text(name):
        raise api_error(400, "name an account", "unknown_user", {"name": None})
    other = find_user(db, name.strip())
    if other is None or other.is_guest:
        raise api_error(400, "no registered account has that name", "unknown_user", {"name": name.strip()[:24]})
    if other.id == row.organiser_id or db.get(TournamentDirectorRow, (row.id, other.id)) is not None:
        raise api_error(409, f"{other.name} already directs this tournament", "already_director",
                        {"name": other.name})
    before = [row.organiser.name if row.organiser else None, *director_names(db, row)]

    def apply(t: Tournament) -> None:
        if other.name not in t.directors:
            t.directors.append(other.name)

    row, _t, _ = change(db, tournament_id, user, version, "codirector", apply,
                        audit=lambda t: (before, [*before, other.name]),
                        extra=lambda r: db.add(TournamentDirectorRow(tournament_id=r.id, user_id=other.id)))
    return row


def remove_codirector(db: Session, tournament_id: int, user: User, version: Any, name: str) -> TournamentRow:
    """The organiser removes the co-director ``name`` (an account name, compared as :func:`find_user`
    does). Only the organiser may (403 ``organiser_only``; 403 ``not_director`` for someone who directs
    nothing here); 404 ``not_codirector`` when ``name`` is not a co-director of this tournament (the
    organiser included: the organiser is not removed). Audited ``remove_codirector`` with the directors
    before and after."""
    from .auth import find_user

    row, _t = load(db, tournament_id)
    if row.organiser_id != user.id:
        require_director(db, row, user)
        raise api_error(403, "only the organiser removes co-directors", "organiser_only")
    other = find_user(db, name.strip()) if name.strip() and not bad_text(name) and len(name) <= 64 else None
    link = None if other is None else db.get(TournamentDirectorRow, (row.id, other.id))
    if other is None or link is None:
        raise api_error(404, f"{name.strip()[:24]} is not a co-director of this tournament", "not_codirector",
                        {"name": name.strip()[:24]})
    before = [row.organiser.name if row.organiser else None, *director_names(db, row)]
    after = [n for n in before if n != other.name]

    def apply(t: Tournament) -> None:
        t.directors = [n for n in t.directors if n != other.name]

    row, _t, _ = change(db, tournament_id, user, version, "remove_codirector", apply,
                        audit=lambda t: (before, after), extra=lambda r: db.delete(link))
    return row
