"""What the tournament API shows and reads: the public JSON of a tournament, the standings as CSV,
entries from a CSV, and a table's result from a request body.

Everything computed comes from the engine (:func:`guandan.tournament.standings`,
:func:`~guandan.tournament.score_match`, :func:`~guandan.tournament.prize_list`); this module only puts
it into JSON or CSV. No private data: players are the names the organiser typed (or public account
names), organisers are account names; no session, no e-mail, no internal ids of users.
"""

from __future__ import annotations

import csv
import dataclasses
import io
from typing import Any

from guandan.tournament import prize_list, score_match, standings
from guandan.tournament.errors import TournamentError
from guandan.tournament.model import SIDES, MatchResult, Tournament, parse_level

from .hardening import bad_text
from .tournament_store import api_error, engine_error, rounds_total, status_of

#: Columns of ``GET .../export.csv`` (one line per entry, in standings order).
CSV_COLUMNS = ("place", "entry", "name", "players", "club", "field_points", "net", "cumulative", "opponents",
               "played", "wins", "draws", "losses", "byes", "penalty_levels", "withdrawn")
#: Most entries one CSV import may add.
MAX_IMPORT = 1000


def _result_json(r: MatchResult | None) -> dict[str, Any] | None:
    return None if r is None else dataclasses.asdict(r)


def round_json(t: Tournament, number: int) -> dict[str, Any]:
    """One paired round: its tables with both entries, status, result and each side's score."""
    rnd = t.played[number - 1]
    knockout = rnd.kind == "knockout"
    matches = []
    for m in rnd.matches:
        score = None
        if m.result is not None or m.b is None:
            sc = score_match(m, t.options, knockout=knockout, team=t.team)
            score = {side: s.to_dict() for side, s in sc.items()}
        matches.append({"table": m.table, "a": m.a, "b": m.b, "stage": m.stage, "status": m.status,
                        "result": _result_json(m.result), "score": score})
    return {"number": rnd.number, "kind": rnd.kind, "paired_at": rnd.paired_at, "complete": rnd.complete,
            "has_results": rnd.has_results, "matches": matches}


def standings_json(t: Tournament) -> list[dict[str, Any]]:
    """The engine's standings (field points, tie-breaks in ``t.options.tiebreaks`` order, penalties)."""
    return [dataclasses.asdict(s) for s in standings(t)]


def detail_json(row: Any, t: Tournament, codirectors: list[str], can_direct: bool) -> dict[str, Any]:
    """``GET /api/tournaments/{id}``: settings, entries, every round, standings, prize list."""
    table = standings(t)
    return {
        "id": row.id, "name": t.name, "format": t.format, "preset": t.preset, "team": t.team,
        "rounds": t.rounds, "rounds_played": len(t.played), "rounds_total": rounds_total(t),
        "status": status_of(t), "match_minutes": t.match_minutes, "knockout_minutes": t.knockout_minutes,
        "version": row.version,
        "organiser": row.organiser.name if row.organiser is not None else None,
        "codirectors": codirectors, "can_direct": can_direct,
        "tiebreaks": list(t.options.tiebreaks), "prizes_count": t.options.prizes,
        "entries": [{"id": e.id, "name": e.name, "players": [p.name for p in e.players], "club": e.club,
                     "rating": e.rating, "seed": e.seed, "joined_round": e.joined_round,
                     "withdrawn_after": e.withdrawn_after, "withdrawn": not e.active, "group": e.group}
                    for e in t.entries],
        "rounds_list": [round_json(t, r.number) for r in t.played],
        "standings": [dataclasses.asdict(s) for s in table],
        "prizes": prize_list(table, t.options.prizes),
    }


def standings_csv(t: Tournament) -> str:
    """The standings as CSV (:data:`CSV_COLUMNS`; players joined by `` / ``)."""
    players = {e.id: " / ".join(p.name for p in e.players) for e in t.entries}
    clubs = {e.id: e.club or "" for e in t.entries}
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for s in standings(t):
        w.writerow([s.place, s.id, s.name, players.get(s.id, ""), clubs.get(s.id, ""), s.field_points, s.net,
                    s.cumulative, s.opponents, s.played, s.wins, s.draws, s.losses, s.byes, s.penalty_levels,
                    "yes" if s.withdrawn else ""])
    return out.getvalue()


def _number(value: str, what: str, line: int, kind: type) -> Any:
    value = value.strip()
    if not value:
        return None
    try:
        return kind(value)
    except ValueError:
        raise api_error(400, f"CSV line {line}: {what} {value!r} is not a number", "bad_csv",
                        {"line": line, "field": what}) from None


def parse_entries_csv(text: Any, team: bool) -> list[dict[str, Any]]:
    """Entries from CSV text with the header ``name,partner,club,rating`` (optional ``seed``, ``pair``
    (the entry's name) and ``bot`` (a bot pair's level); teams add ``name2,partner2`` and ``team``), the
    CLI's format (docs/tournaments.md).

    Returns ``[{"name", "players", "club", "rating", "seed"}]`` (and ``"bot"`` where given); 400
    ``bad_csv`` (``params.line``)."""
    if not isinstance(text, str) or not text.strip():
        raise api_error(400, "the CSV is empty", "bad_csv", {"line": 1})
    if bad_text(text):
        raise api_error(400, "the CSV holds a character that is not allowed", "bad_csv", {"line": 1})
    reader = csv.DictReader(io.StringIO(text.lstrip("\ufeff")))
    fields = [(f or "").strip().lower() for f in reader.fieldnames or []]
    need = ["name", "partner"] + (["name2", "partner2"] if team else [])
    missing = [f for f in need if f not in fields]
    if missing:
        raise api_error(400, f"the CSV header needs the columns {', '.join(need)}", "bad_csv",
                        {"line": 1, "field": ",".join(missing)})
    out: list[dict[str, Any]] = []
    for line, raw in enumerate(reader, 2):
        r = {(k or "").strip().lower(): (v or "").strip() for k, v in raw.items() if isinstance(v, str)}
        if not any(r.values()):
            continue
        players = [r.get(c, "") for c in need]
        if not all(players):
            raise api_error(400, f"CSV line {line}: every player needs a name", "bad_csv",
                            {"line": line, "field": "name"})
        name = r.get("team" if team else "pair") or " / ".join(players)
        entry = {"name": name, "players": players, "club": r.get("club") or None,
                 "rating": _number(r.get("rating", ""), "rating", line, float),
                 "seed": _number(r.get("seed", ""), "seed", line, int)}
        if r.get("bot"):
            entry["bot"] = r["bot"]  # a bot pair of that level (checked with the JSON entries)
        out.append(entry)
        if len(out) > MAX_IMPORT:
            raise api_error(400, f"at most {MAX_IMPORT} entries at once", "bad_csv", {"line": line})
    if not out:
        raise api_error(400, "the CSV has no entries", "bad_csv", {"line": 2})
    return out


def _int(body: dict[str, Any], key: str, default: int | None = 0, lo: int = 0, hi: int = 1000) -> Any:
    v = body.get(key)
    if v is None:  # absent or null: the default
        v = default
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
        raise api_error(400, f"{key} must be a whole number from {lo} to {hi}", "bad_number",
                        {"field": key, "min": lo, "max": hi})
    return v


def _side(body: dict[str, Any], key: str, allow_both: bool = False) -> str | None:
    v = body.get(key)
    if v in (None, "", False):
        return None
    if v in SIDES or (allow_both and v == "both"):
        return str(v)
    raise api_error(400, f"{key} must be 'a' or 'b'", "invalid_result", {"reason": "bad_side", "field": key})


def result_from_body(body: dict[str, Any]) -> MatchResult:
    """A table's result from ``{level_a, level_b, passed_a, time_called, timeouts_a, timeouts_b, late_a,
    late_b, absent, extra_deal}``. Levels are 2..14 or ``"2".."10"``, ``"J"``, ``"Q"``, ``"K"``, ``"A"``
    (400 ``impossible_level``); the engine checks the rest when the result is entered."""
    try:
        absent = _side(body, "absent", allow_both=True)
        level_a = parse_level(body.get("level_a", 2) if absent else body.get("level_a"), "level_a")
        level_b = parse_level(body.get("level_b", 2) if absent else body.get("level_b"), "level_b")
    except TournamentError as e:
        raise engine_error(e) from None
    except (TypeError, ValueError):
        raise api_error(400, "levels are 2..10, J, Q, K or A", "impossible_level", {"field": "level"}) from None
    return MatchResult(level_a=level_a, level_b=level_b, passed_a=_side(body, "passed_a"),
                       time_called=bool(body.get("time_called", False)),
                       timeouts_a=_int(body, "timeouts_a"), timeouts_b=_int(body, "timeouts_b"),
                       late_a=_int(body, "late_a"), late_b=_int(body, "late_b"), absent=absent,
                       extra_deal=_side(body, "extra_deal"))
