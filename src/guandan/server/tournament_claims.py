"""Players enter their own result with their pair's code (issue 21 item 5): physical tables only.

Each pair of each table of a round played at real tables gets its own short random code
(:func:`new_code`: 6 characters from 32 that cannot be mistaken for one another, from :mod:`secrets`),
stored in ``tournament_table_codes`` (:class:`~guandan.server.models.TournamentTableCodeRow`, migrations
``0016`` and ``0021``: one row per table and side) and printed on that pair's tear-off half of the table
card. The directors read them (``GET /api/tournaments/{id}/rounds/{n}/codes``, 403 ``not_director`` for
anyone else: a code never reaches a player except on the card); the codes are made the first time they
are read, and made again when the round has been paired again (the stored ``pairing`` no longer matches).

A player of the table, without an account, sends the table's result with the pair's code
(``POST /api/tournaments/{id}/claims`` ``{round, table, code, level_a, level_b, passed_a, time_called,
...}``). The side (a or b) is the side whose code it is; a ``side`` in the body is ignored, so one
pair cannot claim for both (issue 21 item 5: "both pairs must agree"). The engine decides
(:func:`guandan.tournament.director.claim_result`): one pair's claim waits (``claimed``) for the other
pair or the organiser, who confirms it by entering the result (``POST .../results``); two equal claims
stand as the result (``final``); two different ones wait for the organiser (``disputed``). The answer
is the table's status only: the other pair's claim is never shown to a player.

Errors: 403 ``bad_table_code`` (wrong code, or a round or table without one: the answer does not tell
which), 429 ``too_many_codes`` (``params.wait_s``) after :data:`WRONG_CODES_MAX` wrong codes from one
address in :data:`WRONG_CODES_WINDOW_S` seconds (counted in this process: 32**6 codes make guessing
hopeless even over many processes), 429 ``too_many_claims`` (``params.wait_s``) after
:data:`CLAIMS_MAX` claims of one pair in :data:`CLAIMS_WINDOW_S` seconds (right code; counted in this
process), 409 ``online_venue`` for an online event, and the engine's codes
(``result_already_entered``, ``impossible_level``, ...). Every claim is in the audit log (operation
``claim``, no account).
"""

from __future__ import annotations

import secrets
import threading
import time
from collections import deque
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter, Request
from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from guandan.tournament.director import claim_result, find_match
from guandan.tournament.errors import TournamentError
from guandan.tournament.model import Round, Tournament, result_to_dict

from . import tournament_store as store
from .api_tournaments import Body
from .auth import RequiredUser
from .db import DbSession
from .models import TournamentAuditRow, TournamentRow, TournamentTableCodeRow
from .tournament_store import api_error
from .tournament_views import result_from_body

#: The letters of a table code: no 0/O, 1/I (read aloud or from a printed card without doubt).
CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 6
#: Wrong codes one address may send per window before 429 ``too_many_codes``.
WRONG_CODES_MAX = 10
WRONG_CODES_WINDOW_S = 600.0
#: Claims one pair (right code) may send per window before 429 ``too_many_claims``.
CLAIMS_MAX = 5
CLAIMS_WINDOW_S = 600.0
SIDES = ("a", "b")


def new_code() -> str:
    """A table code: :data:`CODE_LENGTH` characters of :data:`CODE_ALPHABET` from the secure random source."""
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def normal_code(text: Any) -> str | None:
    """The code as typed, read leniently: spaces and dashes dropped, upper case; None when it is not text."""
    if not isinstance(text, str) or len(text) > 40:
        return None
    return text.replace(" ", "").replace("-", "").strip().upper()


class WrongCodes:
    """Wrong table codes per client address, in memory, thread-safe: at most ``limit`` per ``window_s``.

    :meth:`check` before a code is compared (a blocked address is refused even with the right code),
    :meth:`failed` after a wrong one. ``clock``: monotonic seconds (injected by tests). The key may be
    any text (:class:`ClaimLimit` counts per pair)."""

    error_code = "too_many_codes"
    message = "too many wrong table codes from this address"

    def __init__(self, limit: int = WRONG_CODES_MAX, window_s: float = WRONG_CODES_WINDOW_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.limit, self.window_s, self.clock = limit, window_s, clock
        self._seen: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def _recent(self, address: str, now: float) -> deque[float]:
        q = self._seen.setdefault(address, deque())
        while q and q[0] <= now - self.window_s:
            q.popleft()
        return q

    def check(self, address: str) -> None:
        """Raise 429 ``too_many_codes`` (``params.wait_s``: seconds until one more try) when ``address``
        sent :attr:`limit` wrong codes in the window."""
        now = self.clock()
        with self._lock:
            q = self._recent(address, now)
            if len(q) >= self.limit:
                wait = int(q[0] + self.window_s - now) + 1
                raise api_error(429, f"{self.message}; try again in {wait} s", self.error_code, {"wait_s": wait})

    def failed(self, address: str) -> None:
        """Count one wrong code from ``address``."""
        now = self.clock()
        with self._lock:
            if len(self._seen) > 100_000:
                self._seen.clear()
            self._recent(address, now).append(now)


class ClaimLimit(WrongCodes):
    """Claims per pair (key ``"<tournament>/<round>/<table>/<side>"``), right code: at most
    :data:`CLAIMS_MAX` per :data:`CLAIMS_WINDOW_S` seconds, then 429 ``too_many_claims``; :meth:`failed`
    counts one claim taken."""

    error_code = "too_many_claims"
    message = "too many results sent by this pair"

    def __init__(self, limit: int = CLAIMS_MAX, window_s: float = CLAIMS_WINDOW_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(limit, window_s, clock)


def _pairing(rnd: Round, a: int, b: int) -> str:
    return f"{rnd.paired_at or ''}|{a}-{b}"[:64]


def round_codes(db: Session, row: TournamentRow, t: Tournament, round_no: int) -> dict[int, dict[str, str]]:
    """The code of each pair of every table (not a bye) of round ``round_no``, made where missing or where
    the round was paired again since (committed). Returns ``{table: {"a": code, "b": code}}``; 404
    ``unknown_round``."""
    if not 1 <= round_no <= len(t.played):
        raise api_error(404, f"round {round_no} has not been paired", "unknown_round", {"round": round_no})
    rnd = t.played[round_no - 1]
    want = {m.table: _pairing(rnd, m.a, m.b) for m in rnd.matches if m.b is not None}
    for _attempt in range(3):
        have = {(c.table_no, c.side): c for c in db.scalars(select(TournamentTableCodeRow).where(
            TournamentTableCodeRow.tournament_id == row.id, TournamentTableCodeRow.round == round_no))}
        changed = False
        for table, pairing in want.items():
            for side in SIDES:
                c = have.get((table, side))
                if c is None:
                    db.add(TournamentTableCodeRow(tournament_id=row.id, round=round_no, table_no=table, side=side,
                                                  code=new_code(), pairing=pairing))
                    changed = True
                elif c.pairing != pairing:
                    c.code, c.pairing = new_code(), pairing
                    changed = True
        if not changed:
            return {table: {side: have[(table, side)].code for side in SIDES} for table in want}
        try:
            db.commit()
        except IntegrityError:  # another director read them at the same moment: read theirs
            db.rollback()
    raise api_error(409, store.STALE_MESSAGE, "stale_version")


def codes_json(t: Tournament, round_no: int, codes: dict[int, dict[str, str]]) -> dict[str, Any]:
    """``GET .../rounds/{n}/codes``: ``{round, tables: [{table, a, b, codes: {a, b}, status, claims: {a, b}}]}``
    (``codes``: each pair's code; ``claims``: each pair's claim as a result object, or null)."""
    rnd = t.played[round_no - 1]
    return {"round": round_no, "tables": [
        {"table": m.table, "a": m.a, "b": m.b, "codes": codes.get(m.table), "status": m.status,
         "claims": {s: result_to_dict(m.claims.get(s)) for s in ("a", "b")}}
        for m in rnd.matches if m.b is not None]}


def _codes_of(db: Session, tournament_id: int, t: Tournament, round_no: Any, table: Any) -> dict[str, str]:
    """The stored codes of that table's pairs (``{side: code}``) that are still theirs (not paired again
    since); empty when there are none."""
    if (isinstance(round_no, bool) or isinstance(table, bool) or not isinstance(round_no, int)
            or not isinstance(table, int) or not 1 <= round_no <= len(t.played)):
        return {}
    rnd = t.played[round_no - 1]
    m = next((m for m in rnd.matches if m.table == table and m.b is not None), None)
    if m is None:
        return {}
    rows = db.scalars(select(TournamentTableCodeRow).where(
        TournamentTableCodeRow.tournament_id == tournament_id, TournamentTableCodeRow.round == round_no,
        TournamentTableCodeRow.table_no == table))
    return {c.side: c.code for c in rows if c.side in SIDES and c.pairing == _pairing(rnd, m.a, m.b)}


def _side_of(codes: dict[str, str], typed: str | None) -> str | None:
    """The side whose code ``typed`` is (both compared in constant time), or None."""
    found = None
    for side in SIDES:
        code = codes.get(side)
        if code is not None and typed is not None and secrets.compare_digest(code.encode(), typed.encode()):
            found = side
    return found


def submit_claim(db: Session, tournament_id: int, body: dict[str, Any], address: str, guard: WrongCodes,
                 limit: ClaimLimit | None = None) -> dict[str, Any]:
    """A player's claim (see the module docstring): the side is the side whose code was typed. Returns
    ``{"status", "round", "table", "side"}`` with the table's status after it (``claimed``, ``final`` or
    ``disputed``). ``limit``: the claims per pair (a fresh :class:`ClaimLimit` when None)."""
    guard.check(address)
    limit = limit if limit is not None else ClaimLimit()
    round_no, table = body.get("round"), body.get("table")
    typed = normal_code(body.get("code"))
    for _attempt in range(20):
        row, t = store.load(db, tournament_id)
        if t.venue != "tables":
            raise api_error(409, "an online event's results come from its tables", "online_venue")
        side = _side_of(_codes_of(db, row.id, t, round_no, table), typed)
        if side is None:
            guard.failed(address)
            raise api_error(403, "that is not the code of this table", "bad_table_code",
                            {"round": round_no if isinstance(round_no, int) else None,
                             "table": table if isinstance(table, int) else None})
        assert isinstance(round_no, int) and isinstance(table, int)
        pair_key = f"{row.id}/{round_no}/{table}/{side}"
        limit.check(pair_key)
        result = result_from_body(body)
        first = len(t.log)
        try:
            _rnd, m = find_match(t, round_no, table)
            entry = m.a if side == "a" else m.b
            assert entry is not None
            m = claim_result(t, round_no, table, entry, result, by=f"table {table} ({side})", at=store.now_iso())
            state = store.state_text(t)
        except TournamentError as e:
            raise store.engine_error(e) from None
        stamp = datetime.now(UTC)
        done = db.execute(update(TournamentRow).where(TournamentRow.id == row.id, TournamentRow.version == row.version)
                          .values(state=state, version=row.version + 1, updated_at=stamp, **store._summary_values(t))
                          .execution_options(synchronize_session=False))
        if done.rowcount != 1:  # type: ignore[attr-defined]  # an organiser wrote meanwhile: read again
            db.rollback()
            continue
        after = [{"action": e.action, "round": e.round, "table": e.table, "value": e.after, "reason": e.reason}
                 for e in t.log[first:]]
        db.add(TournamentAuditRow(tournament_id=row.id, user_id=None, operation="claim", version=row.version + 1,
                                  before=t.log[first].before, after=after, at=stamp))
        db.commit()
        limit.failed(pair_key)
        return {"status": m.status, "round": round_no, "table": table, "side": side}
    raise api_error(409, store.STALE_MESSAGE, "stale_version")


def _guard(request: Request) -> WrongCodes:
    state = request.app.state
    guard = getattr(state, "wrong_table_codes", None)
    if guard is None:
        guard = state.wrong_table_codes = WrongCodes()
    return guard


def _claim_limit(request: Request) -> ClaimLimit:
    state = request.app.state
    limit = getattr(state, "claim_limit", None)
    if limit is None:
        limit = state.claim_limit = ClaimLimit()
    return limit


def make_claims_router() -> APIRouter:
    """``GET /api/tournaments/{id}/rounds/{n}/codes`` (directors) and ``POST /api/tournaments/{id}/claims``
    (anyone with a pair's code), mounted by :func:`guandan.server.app.create_app`."""
    router = APIRouter(tags=["tournaments"])

    @router.get("/api/tournaments/{tid}/rounds/{number}/codes")
    def table_codes(tid: int, number: int, user: RequiredUser, db: DbSession) -> Any:
        row, t = store.load(db, tid)
        store.require_director(db, row, user)
        if t.venue != "tables":
            raise api_error(409, "an online event has no table codes", "online_venue")
        return codes_json(t, number, round_codes(db, row, t, number))

    @router.post("/api/tournaments/{tid}/claims")
    def claim(tid: int, request: Request, body: Body, db: DbSession) -> Any:
        address = request.client.host if request.client is not None else "unknown"
        return submit_claim(db, tid, body, address, _guard(request), _claim_limit(request))

    return router


__all__ = ["CLAIMS_MAX", "CLAIMS_WINDOW_S", "CODE_ALPHABET", "CODE_LENGTH", "ClaimLimit", "WrongCodes", "codes_json", "make_claims_router", "new_code",
           "round_codes", "submit_claim"]
