"""Tournaments HTTP API: organisers run an event at physical tables, everyone reads the standings.

Public (no login): ``GET /api/tournaments`` (list), ``GET /api/tournaments/{id}`` (entries, every round's
pairings and results, standings with tie-breaks and penalties, prize list), ``GET .../export.csv``
(standings) and ``GET .../export.json`` (the engine's state, the file ``guandan tournament`` reads;
the organiser's log is left out unless a director asks).

Signed in: ``POST /api/tournaments`` creates one (the creator is its organiser). The organiser and the
co-directors only (401 without login, 403 ``not_director`` otherwise), each body carrying the
``version`` last read (409 ``stale_version`` when the tournament changed since: reload):

* ``POST .../entries`` ``{entries: [{name?, players: [a, b], club?, rating?, seed?}]}`` or ``{csv: text}``
  (header ``name,partner,club,rating``); ``POST .../entries/{entry}/withdraw``;
* ``POST .../codirectors`` ``{name}``, ``DELETE .../codirectors/{name}?version=V`` (the organiser only;
  404 ``not_codirector``);
* ``POST .../rounds`` pairs the next round; ``DELETE .../rounds/{n}?version=V`` pairs the latest round
  again, only before its first result (409 ``round_has_results``);
* ``POST .../results`` ``{round, table, level_a, level_b, passed_a, time_called, ..., correct?, reason?}``:
  the same result twice is answered ``unchanged``; a different one 409 ``result_already_entered``
  unless ``correct`` is true (the correction is kept in the log with the value before); at an online
  table still being played 409 ``table_playing`` unless ``override`` is true (the game's own result is
  then not entered);
* ``POST .../penalties`` ``{round, table, side, levels, reason, loses_match?}``;
* ``GET .../log``: the audit log (who, when, operation, before, after).

Errors are the server's ``{"error", "code", "params"}`` (:mod:`guandan.server.errors`); the engine's
codes (docs/tournaments.md) pass through with their params, and the UI translates them.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

from anyio import from_thread
from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response

from guandan.core.rules import PRESET_NAMES
from guandan.tournament import (
    Player,
    add_entry,
    add_penalty,
    correct_result,
    enter_result,
    pair_next_round,
    repair_round,
    withdraw,
)
from guandan.tournament.director import check_config, find_match
from guandan.tournament.errors import TournamentError
from guandan.tournament.model import FORMATS, LATE_ACTIONS, VENUES, Options, Tournament, to_dict

from . import tournament_store as store
from .auth import CurrentUser, RequiredUser
from .db import DbSession
from .hardening import bad_text
from .models import TOURNAMENT_NAME_MAX
from .passwords import invisible
from .table.bots import BOT_NAMES
from .tournament_rounds import OnlineError, check_accounts, check_hand_result
from .tournament_teams import check_team_accounts, team_matches_json
from .tournament_store import api_error
from .tournament_views import detail_json, parse_entries_csv, result_from_body, round_json, standings_csv

#: Largest request body (bytes), the app's limit (``Settings.max_body_bytes``): a CSV of 300 entries fits.
MAX_BODY = 16 * 1024
MAX_ROUNDS = 30
TEXT_MAX = 64


async def json_body(request: Request) -> dict[str, Any]:
    """The request's JSON object (``{}`` when empty); 400 ``bad_body`` for anything else, 413
    ``body_too_large`` (the app's guard already refuses bodies that are not JSON, with 415)."""
    raw = await request.body()
    if len(raw) > MAX_BODY:
        raise api_error(413, f"the request body is too large (at most {MAX_BODY} bytes)", "body_too_large",
                        {"max_bytes": MAX_BODY})
    if not raw.strip():
        return {}
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise api_error(400, "the request body must be UTF-8", "bad_body") from None
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        raise api_error(400, "the request body must be a JSON object", "bad_body") from None
    if not isinstance(data, dict):
        raise api_error(400, "the request body must be a JSON object", "bad_body")
    return data


Body = Annotated[dict[str, Any], Depends(json_body)]


def _text(body: dict[str, Any], key: str, *, required: bool = False, code: str = "bad_text") -> str | None:
    v = body.get(key)
    if v is None or (isinstance(v, str) and not v.strip()):
        if required:
            raise api_error(400, f"{key} is required", code, {"field": key})
        return None
    if not isinstance(v, str) or bad_text(v) or len(v.strip()) > TEXT_MAX:
        raise api_error(400, f"{key} must be text of at most {TEXT_MAX} characters", code,
                        {"field": key, "max": TEXT_MAX})
    return v.strip()


def _int(body: dict[str, Any], key: str, lo: int, hi: int, default: Any = None, code: str = "bad_number") -> Any:
    """``body[key]`` as an int in ``lo..hi``; absent or ``null`` means ``default`` (a ``null`` clock used to
    reach the engine and answer 500). Anything else (text, a fraction, true/false, out of range): 400
    ``code`` with ``params = {field, min, max}``."""
    v = body.get(key)
    if v is None:
        v = default
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        raise api_error(400, f"{key} must be a whole number from {lo} to {hi} (or null for the default)", code,
                        {"field": key, "min": lo, "max": hi})
    return v


def _overrides(body: dict[str, Any]) -> dict[str, str]:
    """``body["overrides"]``: rule options over the preset (docs/rules.md section P), e.g.
    ``{"target_level": "8"}`` (AMB-17); absent or ``null``: none. 400 ``bad_overrides`` unless an object of at
    most 16 names, each value text or a whole number (the engine then checks each one: 400 ``bad_config``)."""
    raw = body["overrides"] if "overrides" in body else None
    if raw is None:
        return {}
    if (not isinstance(raw, dict) or len(raw) > 16
            or not all(isinstance(k, str) and 0 < len(k) <= 40 and not bad_text(k) for k in raw)
            or not all((isinstance(v, str) and len(v) <= 40 and not bad_text(v))
                       or (isinstance(v, int) and not isinstance(v, bool)) for v in raw.values())):
        raise api_error(400, "overrides is an object of at most 16 rule options, e.g. target_level: 8",
                        "bad_overrides")
    return {k: str(v) for k, v in raw.items()}


def _entry_args(raw: Any, team: bool, index: int) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise api_error(400, f"entry {index} must be an object", "bad_entry", {"index": index})
    players = raw.get("players")
    want = 4 if team else 2
    if not isinstance(players, list) or len(players) != want:
        raise api_error(400, f"entry {index} needs {want} players", "bad_entry", {"index": index, "players": want})
    names = []
    for p in players:
        if not isinstance(p, str) or not p.strip() or bad_text(p) or len(p.strip()) > TEXT_MAX:
            raise api_error(400, f"entry {index}: every player needs a name", "bad_entry", {"index": index})
        names.append(p.strip())
    bot = raw.get("bot")
    if bot is not None and bot not in BOT_NAMES:
        raise api_error(400, f"entry {index}: bot must be one of {', '.join(BOT_NAMES)}", "bad_entry",
                        {"index": index})
    rating = raw.get("rating")
    if rating is not None and (isinstance(rating, bool) or not isinstance(rating, (int, float))):
        raise api_error(400, f"entry {index}: rating must be a number", "bad_entry", {"index": index})
    return {"name": _text(raw, "name", code="bad_entry") or " / ".join(names), "players": names,
            "club": _text(raw, "club", code="bad_entry"), "rating": rating,
            "seed": _int(raw, "seed", 1, 100000, code="bad_entry"), "bot": bot}


def make_tournaments_router() -> APIRouter:
    """The router of ``/api/tournaments`` (mounted by :func:`guandan.server.app.create_app`)."""
    router = APIRouter(tags=["tournaments"])

    @router.get("/api/tournaments")
    def list_tournaments(db: DbSession) -> Any:
        return {"tournaments": [store.summary(r) for r in store.list_rows(db)]}

    @router.post("/api/tournaments", status_code=201)
    def create_tournament(body: Body, user: RequiredUser, db: DbSession) -> Any:
        name = _text(body, "name", required=True, code="bad_tournament_name")
        assert name is not None
        if len(name) > TOURNAMENT_NAME_MAX:
            raise api_error(400, "the name is too long", "bad_tournament_name", {"max": TOURNAMENT_NAME_MAX})
        if all(invisible(ch) for ch in name):  # only zero-width or blank characters: nothing to show
            raise api_error(400, "the name must contain visible characters", "bad_tournament_name",
                            {"field": "name", "invisible": True})
        fmt = body.get("format", "swiss")
        if fmt not in FORMATS:
            raise api_error(400, f"format must be one of {', '.join(FORMATS)}", "bad_format", {"valid": list(FORMATS)})
        preset = body.get("preset", "official")
        if preset not in PRESET_NAMES:
            raise api_error(400, f"preset must be one of {', '.join(PRESET_NAMES)}", "bad_preset",
                            {"valid": list(PRESET_NAMES)})
        rounds = _int(body, "rounds", 1, MAX_ROUNDS, default=5)
        minutes = _int(body, "time_limit", 0, 600, default=70)
        opts = Options(groups=_int(body, "groups", 1, 64, default=2),
                       knockout_size=_int(body, "knockout_size", 2, 64, default=4),
                       prizes=_int(body, "prizes", 0, 100, default=3))
        venue = body.get("venue", "tables")
        if venue not in VENUES:
            raise api_error(400, f"venue must be one of {', '.join(VENUES)}", "bad_venue", {"valid": list(VENUES)})
        late_action = body.get("late_action", "forfeit")
        if late_action not in LATE_ACTIONS:
            raise api_error(400, f"late_action must be one of {', '.join(LATE_ACTIONS)}", "bad_late_action",
                            {"valid": list(LATE_ACTIONS)})
        ko_minutes = _int(body, "knockout_time_limit", 0, 600, default=120)
        team = body.get("team", False)  # entries are teams of two pairs (复式 matches)
        if not isinstance(team, bool):
            raise api_error(400, "team must be true or false", "bad_team", {"field": "team"})
        t = Tournament(name=name, format=fmt, rounds=rounds, preset=preset, overrides=_overrides(body),
                       match_minutes=minutes or None,
                       knockout_minutes=ko_minutes or None, options=opts, venue=venue,
                       clock_lead_s=_int(body, "clock_lead_s", 1, 600, default=60),
                       clock_follow_s=_int(body, "clock_follow_s", 1, 600, default=30),
                       late_minutes=_int(body, "late_minutes", 1, 120), late_action=late_action, team=team)
        try:
            check_config(t)
        except TournamentError as e:
            raise store.engine_error(e) from None
        row = store.create(db, t, user)
        return {"tournament": store.summary(row)}

    @router.get("/api/tournaments/{tid}")
    def get_tournament(tid: int, request: Request, db: DbSession, user: CurrentUser) -> Any:
        row, t = store.load(db, tid)
        out = detail_json(row, t, store.director_names(db, row), store.can_direct(db, row, user))
        out["venue"] = t.venue
        out["online_tables"] = request.app.state.online_rounds.tables_json(db, tid) if t.venue == "online" else []
        out["team_matches"] = team_matches_json(db, tid) if t.venue == "online" and t.team else []
        return out

    @router.post("/api/tournaments/{tid}/entries")
    def add_entries(tid: int, body: Body, user: RequiredUser, db: DbSession) -> Any:
        row, t = store.load(db, tid)
        if "csv" in body:
            items = parse_entries_csv(body["csv"], t.team)
        elif isinstance(body.get("entries"), list) and body["entries"]:
            items = [_entry_args(e, t.team, i) for i, e in enumerate(body["entries"], 1)]
        else:
            raise api_error(400, "send entries (a list) or csv (text)", "bad_entry", {"index": 0})

        def apply(t: Tournament) -> list[int]:
            at = store.now_iso()
            return [add_entry(t, e["name"], [Player(p) for p in e["players"]], by=user.name, at=at,
                              club=e["club"], rating=e["rating"], seed=e["seed"], bot=e.get("bot")).id
                    for e in items]

        row, t, ids = store.change(db, tid, user, body.get("version"), "add_entries", apply)
        return {"added": ids, "version": row.version}

    @router.post("/api/tournaments/{tid}/entries/{entry_id}/withdraw")
    def withdraw_entry(tid: int, entry_id: int, body: Body, user: RequiredUser, db: DbSession) -> Any:
        reason = _text(body, "reason")
        row, _t, _ = store.change(db, tid, user, body.get("version"), "withdraw",
                                  lambda t: withdraw(t, entry_id, by=user.name, at=store.now_iso(), reason=reason))
        return {"withdrawn": entry_id, "version": row.version}

    @router.post("/api/tournaments/{tid}/codirectors")
    def add_codirector(tid: int, body: Body, user: RequiredUser, db: DbSession) -> Any:
        row = store.add_codirector(db, tid, user, body.get("version"), body.get("name"))
        return {"codirectors": store.director_names(db, row), "version": row.version}

    @router.delete("/api/tournaments/{tid}/codirectors/{name}")
    def remove_codirector(tid: int, name: str, user: RequiredUser, db: DbSession, version: int | None = None) -> Any:
        row = store.remove_codirector(db, tid, user, version, name)
        return {"codirectors": store.director_names(db, row), "version": row.version}

    @router.post("/api/tournaments/{tid}/rounds")
    def pair_round(tid: int, request: Request, body: Body, user: RequiredUser, db: DbSession) -> Any:
        row, t = store.load(db, tid)
        if t.venue == "online":
            store.require_director(db, row, user)
            try:
                if t.team:  # one team match per pairing (tournament_teams.py)
                    check_team_accounts(db, t)
                else:
                    check_accounts(db, t)
            except OnlineError as e:
                raise e.http() from None
        row, t, rnd = store.change(db, tid, user, body.get("version"), "pair",
                                   lambda t: pair_next_round(t, by=user.name, at=store.now_iso()))
        if t.venue == "online" and t.team:  # one duplicate team match per table (issue 21 item 2)
            from_thread.run(request.app.state.team_rounds.open_round, tid, rnd.number)
        elif t.venue == "online":  # the server plays the round: one room per table (issue 21 item 4)
            online = request.app.state.online_rounds
            from_thread.run(online.start_rooms, online.open_round(tid, rnd.number))
        return {"round": round_json(t, rnd.number), "version": row.version}

    @router.delete("/api/tournaments/{tid}/rounds/{number}")
    def repair(tid: int, number: int, user: RequiredUser, db: DbSession, version: int | None = None) -> Any:
        def apply(t: Tournament) -> Any:
            if not 1 <= number <= len(t.played):
                raise api_error(404, f"round {number} has not been paired", "unknown_round", {"round": number})
            if t.venue == "online":  # its rooms play already: the games cannot be taken back
                raise api_error(409, f"round {number} is played online and its tables have started",
                                "online_round_started", {"round": number})
            if number != len(t.played) or t.played[-1].has_results:
                raise api_error(409, f"round {number} already has results: it can no longer be paired again",
                                "round_has_results", {"round": number})
            return repair_round(t, by=user.name, at=store.now_iso())

        row, t, rnd = store.change(db, tid, user, version, "repair", apply)
        return {"round": round_json(t, rnd.number), "version": row.version}

    @router.post("/api/tournaments/{tid}/results")
    def enter(tid: int, request: Request, body: Body, user: RequiredUser, db: DbSession) -> Any:
        round_no = _int(body, "round", 1, 1000, code="unknown_round")
        table = _int(body, "table", 1, 100000, code="unknown_table")
        if round_no is None or table is None:
            raise api_error(400, "name the round and the table", "unknown_table", {"round": round_no, "table": table})
        result = result_from_body(body)
        reason = _text(body, "reason")
        row, t = store.load(db, tid)
        store.require_director(db, row, user)
        try:
            _rnd, m = find_match(t, round_no, table)
        except TournamentError as e:
            raise store.engine_error(e) from None
        if m.result is not None and m.result == result and not body.get("correct"):
            store.check_version(row, body.get("version"))
            return {"unchanged": True, "version": row.version, "round": round_json(t, round_no)}
        correct = bool(body.get("correct"))
        live = check_hand_result(db, t, tid, round_no, table, body.get("override") is True, user.name)

        def apply(t: Tournament) -> Any:
            if correct:
                return correct_result(t, round_no, table, result, by=user.name, at=store.now_iso(), reason=reason)
            return enter_result(t, round_no, table, result, by=user.name, at=store.now_iso(), reason=reason)

        row, t, _ = store.change(db, tid, user, body.get("version"), "correct" if correct else "result", apply,
                                 extra=live)
        if live is not None:  # the table's clock and lateness watch stop: its result is in
            room = next(x["room"] for x in request.app.state.online_rounds.tables_json(db, tid)
                        if (x["round"], x["table"]) == (round_no, table))
            from_thread.run_sync(request.app.state.online_rounds.release, room)
        elif correct and t.venue == "online":  # the finished table shows the corrected decision
            from_thread.run(request.app.state.online_rounds.refresh_decision, tid, round_no, table)
        return {"unchanged": False, "version": row.version, "round": round_json(t, round_no)}

    @router.post("/api/tournaments/{tid}/penalties")
    def penalty(tid: int, request: Request, body: Body, user: RequiredUser, db: DbSession) -> Any:
        round_no = _int(body, "round", 1, 1000, code="unknown_round")
        table = _int(body, "table", 1, 100000, code="unknown_table")
        levels = _int(body, "levels", 0, 13, default=0)
        reason = _text(body, "reason", required=True, code="reason_required")
        side = body.get("side")
        if side not in ("a", "b"):
            raise api_error(400, "side must be 'a' or 'b'", "invalid_result", {"reason": "bad_side", "field": "side"})
        if round_no is None or table is None:
            raise api_error(400, "name the round and the table", "unknown_table", {"round": round_no, "table": table})
        loses = bool(body.get("loses_match", False))
        row, t, _ = store.change(db, tid, user, body.get("version"), "penalty",
                                 lambda t: add_penalty(t, round_no, table, side, levels, reason or "",
                                                       loses_match=loses, by=user.name, at=store.now_iso()))
        if t.venue == "online":  # the finished table shows the decision after this penalty
            from_thread.run(request.app.state.online_rounds.refresh_decision, tid, round_no, table)
        return {"version": row.version, "round": round_json(t, round_no)}

    @router.get("/api/tournaments/{tid}/log")
    def audit_log(tid: int, user: RequiredUser, db: DbSession) -> Any:
        row, _t = store.load(db, tid)
        store.require_director(db, row, user)
        return {"log": store.audit_rows(db, row), "version": row.version}

    @router.get("/api/tournaments/{tid}/export.csv")
    def export_csv(tid: int, db: DbSession) -> Response:
        row, t = store.load(db, tid)
        return Response(standings_csv(t).encode("utf-8"), media_type="text/csv; charset=utf-8",
                        headers={"Content-Disposition": f'attachment; filename="tournament-{row.id}-standings.csv"'})

    @router.get("/api/tournaments/{tid}/export.json")
    def export_json(tid: int, db: DbSession, user: CurrentUser) -> Response:
        row, t = store.load(db, tid)
        state = to_dict(t)
        if not store.can_direct(db, row, user):
            state["log"] = []  # the organisers' log is theirs (GET .../log)
        text = json.dumps(state, ensure_ascii=False, indent=1)
        return Response(text.encode("utf-8"), media_type="application/json",
                        headers={"Content-Disposition": f'attachment; filename="tournament-{row.id}.json"'})

    return router
