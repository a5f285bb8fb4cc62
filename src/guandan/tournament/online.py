"""Online rounds (issue 21 item 4): what the server's rooms need from the engine, and what flows back.

Plain code with no I/O: the server (:mod:`guandan.server.tournament_rounds`) creates the rooms and
calls these functions.

* :func:`seating`: the four seats of a match's room: pair ``a`` in seats 0 and 2, pair ``b`` in 1 and 3
  (partners opposite, R1); a bot entry's seats get bots of its level.
* :func:`match_minutes`: the match clock of a round (R58: ``match_minutes`` in Swiss and groups,
  ``knockout_minutes`` in a knock-out; None: play to the target).
* :func:`result_of_game`: the :class:`MatchResult` of a finished game from the levels reached (R58:
  passing A wins; at time called the levels decide) and each pair's move-clock timeouts (R54: from the
  3rd on, +1 level for the opponents each, applied by :func:`guandan.tournament.scoring.penalties_of`).
* :func:`enter_online_result`: enter it exactly once (the same result again is a no-op; a different
  one raises :class:`ResultAlreadyEntered`: only the organiser corrects).
* :func:`late_minutes`: R54 lateness of a pair from when the round started and when it arrived.
* :func:`decision_of`: what the standings say of a finished match (after R54 penalties), for the table.

A drawn knock-out match needs the extra deal at level 2 (R58): the engine refuses the drawn result
(``extra_deal_needed``); the server keeps it, plays the extra deal as a new one-deal game at the same
seats, and enters the drawn result with ``extra_deal`` naming the side that took 头游.
"""

from __future__ import annotations

import copy
from typing import Any

from .director import find_match
from .errors import ResultAlreadyEntered
from .model import LEVEL_MIN, LogEntry, Match, MatchResult, Round, Tournament, result_to_dict


def match_minutes(t: Tournament, rnd: Round) -> int | None:
    """Minutes of a match of ``rnd`` (R58); None: untimed (played to the target)."""
    return t.knockout_minutes if rnd.kind == "knockout" else t.match_minutes


def seating(t: Tournament, m: Match) -> list[dict[str, Any]]:
    """Seats 0..3 of the room of match ``m`` (not a bye): ``{"side", "entry", "account", "bot"}`` each,
    side ``"a"`` at seats 0 and 2, ``"b"`` at 1 and 3. ``account`` is the player's account name (the
    name typed when no account was linked), None for a bot entry, whose ``bot`` is its level.

    Raises :class:`ValueError` for a bye or a team match (online team matches are not played)."""
    if m.b is None:
        raise ValueError("a bye has no table")
    if t.team:
        raise ValueError("team matches are not played online")
    seats = []
    for s in range(4):
        side = "a" if s % 2 == 0 else "b"
        e = t.entry(m.a if side == "a" else m.b)
        p = e.players[s // 2]
        seats.append({"side": side, "entry": e.id, "account": None if e.bot else (p.account or p.name),
                      "bot": e.bot})
    return seats


def result_of_game(levels: tuple[int, int], passed: int | None, time_called: bool,
                   timeouts: tuple[int, int] = (0, 0), late: tuple[int, int] = (0, 0)) -> MatchResult:
    """The result of an online match. ``levels``: the levels reached by team 0 (seats 0/2, side a) and
    team 1 as ints 2..14 (R6); ``passed``: the team that passed A (R37), None when time was called or
    nobody did; ``timeouts``: each side's move-clock timeouts (R54); ``late``: minutes late per side."""
    return MatchResult(level_a=levels[0], level_b=levels[1],
                       passed_a=None if passed is None else ("a" if passed == 0 else "b"),
                       time_called=time_called, timeouts_a=timeouts[0], timeouts_b=timeouts[1],
                       late_a=late[0], late_b=late[1])


def forfeit_result(absent: str) -> MatchResult:
    """The result of a match a pair forfeited by not arriving (``absent``: ``"a"``, ``"b"``, ``"both"``)."""
    return MatchResult(level_a=LEVEL_MIN, level_b=LEVEL_MIN, absent=absent)


def late_minutes(started: float, arrived: float | None, until: float) -> int:
    """Whole minutes between ``started`` and ``arrived`` (or ``until`` when the pair never arrived)."""
    end = until if arrived is None else arrived
    return max(0, int((end - started) // 60))


def decision_of(t: Tournament, round_no: int, table: int) -> dict[str, Any] | None:
    """What the standings say of a table's match once its result is final (issue 21: the table's game-over
    panel shows it, not the winner by raw levels), or None while it has no final result.

    Returns ``{"winner": "a" | "b" | None (a draw, or both lost), "outcome": [a, b] ("win", "draw",
    "loss", "absent"), "field_points": [a, b] (R58: 3 / 2 / 1 / 0), "levels": [a, b] (after the R54
    penalties, capped at A), "reached": [a, b] (the levels played to), "penalty_levels": [a, b] (levels
    each side was credited for the other's penalties), "passed": the side that passed the target or None,
    "time_called": bool, "extra_deal": the side that won R58's extra deal or None}``; levels as 2..14."""
    from .scoring import score_match

    rnd, m = find_match(t, round_no, table)
    if m.result is None or m.b is None:
        return None
    sc = score_match(m, t.options, knockout=rnd.kind == "knockout", team=t.team)
    a, b = sc["a"], sc["b"]
    winner = "a" if a.outcome == "win" else "b" if b.outcome == "win" else None
    return {"winner": winner, "outcome": [a.outcome, b.outcome], "field_points": [a.field_points, b.field_points],
            "levels": [a.level, b.level], "reached": [a.reached, b.reached], "penalty_levels": [a.gained, b.gained],
            "passed": m.result.passed_a, "time_called": m.result.time_called, "extra_deal": m.result.extra_deal}


def enter_online_result(t: Tournament, round_no: int, table: int, result: MatchResult, *, at: str | None,
                        game_id: int | None) -> bool:
    """Enter the result of an online table (logged ``online`` by ``"table"`` with the stored game's id).

    Returns False when that same result is already final (a repeated event: nothing changes), True when
    entered. Raises :class:`ResultAlreadyEntered` when another result is final, the validation errors of
    :func:`guandan.tournament.director.enter_result` (e.g. ``extra_deal_needed`` for a drawn knock-out),
    :class:`UnknownRound`, :class:`UnknownTable`."""
    from .director import _validate

    rnd, m = find_match(t, round_no, table)
    if m.result is not None:
        if m.result == result:
            return False
        raise ResultAlreadyEntered(f"table {table} of round {round_no} has its result", round=round_no, table=table)
    _validate(t, rnd, m, result)
    m.result = copy.deepcopy(result)
    t.log.append(LogEntry(action="online", by="table", at=at, round=round_no, table=table,
                          after={**(result_to_dict(result) or {}), "game_id": game_id}))
    return True


__all__ = ["match_minutes", "seating", "result_of_game", "forfeit_result", "late_minutes", "enter_online_result",
           "decision_of"]
