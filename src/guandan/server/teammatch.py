"""Duplicate team matches for people (复式, issue 22 item 3): what is decided, with no I/O.

Eight players, two teams of two pairs. Team A's pair 1 meets team B's pair 1 at table 1, pair 2
meets pair 2 at table 2 (:func:`seating`). The match has ``n`` boards (:data:`DEFAULT_BOARDS` 8,
the organiser's choice :data:`MIN_BOARDS`..:data:`MAX_BOARDS`), dealt once from the secure random
source (:func:`guandan.duplicate.deal_board_set` with no seed) and played at both tables with the
teams' seats swapped: team A holds seats 0/2 (the board's south/north hands) at table 1 and seats
1/3 at table 2 (:func:`team_a_side`), so each team holds each board's two sides once.

**Scoring** (:mod:`guandan.tournament.teams`, R35, R58): a board's result at one table, seen from
team A, is the upgrade the preset gives the deal's finish (:func:`result_for_a`: ``+3/+2/+1`` when
team A's pair took 头游 with its partner 2nd/3rd/4th under the official ``3/2/1``, negative when
team B's did; the upgrade, not Anhui points, also under a points preset, as the tournament engine
counts). The board scores ``t1 + t2`` for team A; the match total is team A's points on the 26-point
scale ``13 + Σ(t1 + t2)`` capped to 0..26, team B's the rest (:func:`totals`).

**Who may see what** (:func:`board_open`): nothing about a board (its cards, either table's result
or record) is shown by the match's page or API, nor by any replay, review or record endpoint,
until the board has been played at both tables; a table's players see their own deal as any
player does while playing it. The running score counts only boards played at both tables (a
partial sum would tell one table the other's result).

**Order of play**: each table plays the boards 1..n in order, independently of the other table
(:func:`next_board`); a board is started once per table (the store's unique key).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from guandan.core.deal import DealResult
from guandan.core.rules import RuleSet
from guandan.core.deal import partner
from guandan.tournament import teams

__all__ = [
    "DEFAULT_BOARDS", "MAX_BOARDS", "MIN_BOARDS", "BoardPlay", "abandoned_result", "MatchSetup", "board_open", "board_results",
    "finished", "is_bot", "next_board", "parse_setup", "result_code", "result_for_a", "seating", "team_a_side", "totals",
]

DEFAULT_BOARDS = 8
MIN_BOARDS = 4
MAX_BOARDS = 16
#: a bot player is written ``bot:<level>``
_BOT = re.compile(r"bot:(easy|normal|hard|expert)")
TABLES = (1, 2)


def is_bot(player: str) -> bool:
    """Whether ``player`` (a seat of :class:`MatchSetup`) is a bot (``bot:easy`` .. ``bot:expert``)."""
    return bool(_BOT.fullmatch(player))


@dataclass(frozen=True)
class MatchSetup:
    """A team match as the organiser asks for it.

    Attributes:
        name: the match's name (1-80 characters).
        team_a, team_b: each two pairs ``((p, p), (p, p))``; a player is an account name or
            ``bot:<level>`` (practice: the match is then unrated).
        boards: number of boards, :data:`MIN_BOARDS`..:data:`MAX_BOARDS`.
        preset: the rule preset of the boards.
        overrides: rule options changed from the preset, ``((option, value text), ...)`` as a
            tournament keeps them (:attr:`guandan.tournament.model.Tournament.overrides`); a team
            round of a tournament plays its boards under the tournament's rules.
    """

    name: str
    team_a: tuple[tuple[str, str], tuple[str, str]]
    team_b: tuple[tuple[str, str], tuple[str, str]]
    boards: int = DEFAULT_BOARDS
    preset: str = "official"
    overrides: tuple[tuple[str, str], ...] = ()

    @property
    def rules(self) -> RuleSet:
        """The boards' rule set: the preset with the overrides applied.

        Raises:
            ValueError: an unknown preset, option or value (:meth:`RuleSet.from_dict`).
        """
        return RuleSet.from_dict(dict(self.overrides), base=RuleSet.preset(self.preset))

    @property
    def players(self) -> list[str]:
        """The eight players, team A's pair 1, pair 2, then team B's."""
        return [p for team in (self.team_a, self.team_b) for pair in team for p in pair]

    @property
    def ranked(self) -> bool:
        """False when any seat is a bot (a practice match)."""
        return not any(is_bot(p) for p in self.players)

    def seats_json(self) -> dict[str, Any]:
        """``{"a": [[p, p], [p, p]], "b": [...]}``."""
        return {"a": [list(p) for p in self.team_a], "b": [list(p) for p in self.team_b]}


def parse_setup(body: Any) -> MatchSetup:
    """A :class:`MatchSetup` from a request body ``{name, team_a: [[p, p], [p, p]], team_b, boards?,
    preset?}``.

    Raises:
        ValueError: ``(field, message)`` as args: a missing or malformed field, a board count out of
            :data:`MIN_BOARDS`..:data:`MAX_BOARDS`, an unknown preset, a person named twice.
    """
    if not isinstance(body, dict):
        raise ValueError("body", "send a JSON object")
    name = body.get("name") or "Team match"
    if not isinstance(name, str) or not 1 <= len(name.strip()) <= 80:
        raise ValueError("name", "a name of 1-80 characters")
    teams_: list[tuple[tuple[str, str], tuple[str, str]]] = []
    for key in ("team_a", "team_b"):
        raw = body.get(key)
        ok = (isinstance(raw, list) and len(raw) == 2
              and all(isinstance(p, list) and len(p) == 2 and all(isinstance(x, str) and 1 <= len(x.strip()) <= 32
                                                                  for x in p) for p in raw))
        if not ok:
            raise ValueError(key, "two pairs of two players (account names or bot:normal)")
        teams_.append(((raw[0][0].strip(), raw[0][1].strip()), (raw[1][0].strip(), raw[1][1].strip())))
    n = body.get("boards", DEFAULT_BOARDS)
    if isinstance(n, bool) or not isinstance(n, int) or not MIN_BOARDS <= n <= MAX_BOARDS:
        raise ValueError("boards", f"{MIN_BOARDS}-{MAX_BOARDS} boards")
    preset = body.get("preset", "official")
    try:
        RuleSet.preset(preset)
    except Exception:  # noqa: BLE001 - any unknown preset
        raise ValueError("preset", "an unknown rule preset") from None
    setup = MatchSetup(name.strip(), teams_[0], teams_[1], n, preset)
    people = [p.lower() for p in setup.players if not is_bot(p)]
    if len(people) != len(set(people)):
        raise ValueError("team_a", "a person sits once")
    return setup


def seating(setup_seats: dict[str, Any], table: int) -> list[str]:
    """The four seats (0..3) of ``table`` (1 or 2): table 1 has team A's pair 1 at seats 0/2 and team
    B's pair 1 at 1/3; table 2 has team B's pair 2 at 0/2 and team A's pair 2 at 1/3 (the teams'
    seats swapped). ``setup_seats``: :meth:`MatchSetup.seats_json`.

    Raises:
        ValueError: ``table`` is not 1 or 2.
    """
    if table not in TABLES:
        raise ValueError(f"a team match has tables 1 and 2, not {table!r}")
    a, b = setup_seats["a"][table - 1], setup_seats["b"][table - 1]
    ns, ew = (a, b) if table == 1 else (b, a)
    return [ns[0], ew[0], ns[1], ew[1]]


def team_a_side(table: int) -> int:
    """The side (0: seats 0/2, 1: seats 1/3) team A holds at ``table`` (1 or 2)."""
    if table not in TABLES:
        raise ValueError(f"a team match has tables 1 and 2, not {table!r}")
    return 0 if table == 1 else 1


def result_code(result: DealResult, table: int) -> str:
    """The result of a board's deal at ``table`` as :func:`guandan.tournament.teams.deal_value`'s code,
    seen from team A: ``a1-2``/``a1-3``/``a1-4`` when team A's pair took 头游 (R33) with its partner
    2nd/3rd/last, ``b1-2``... when team B's did (R35)."""
    first = result.finish_order[0]
    side = "a" if first % 2 == team_a_side(table) else "b"
    fo = list(result.finish_order)
    p = partner(first)
    place = 2 if len(fo) >= 2 and fo[1] == p else 3 if len(fo) >= 3 and fo[2] == p else 4
    return f"{side}1-{place}"


def result_for_a(rules: RuleSet, result: DealResult, table: int) -> int:
    """Team A's signed result of a board's deal at ``table``: the preset's upgrade (R35) of
    :func:`result_code` (``+3..+1`` / ``-1..-3`` with the official ``3/2/1``)."""
    return teams.deal_value(result_code(result, table), tuple(rules.upgrade))


def abandoned_result(rules: RuleSet, seats: Sequence[str], table: int) -> int:
    """Team A's result at ``table`` of a board whose deal did not reach its end (its people left it and the
    game was ended unfinished, or its record is damaged): the worst result (a 1-2 against, R35: ``-3``
    with the official 3/2/1) for the team whose people sat there, so leaving a bad board never pays;
    ``0`` when people of both teams sat there (or none: a bots' table), where it cannot say who left.
    ``seats``: the table's four players (:func:`seating`)."""
    sides = {s % 2 for s, p in enumerate(seats) if not is_bot(p)}
    if len(sides) != 1:
        return 0
    worst = int(rules.upgrade[0])
    return -worst if sides == {team_a_side(table)} else worst


@dataclass(frozen=True)
class BoardPlay:
    """One board at one table (plain data read from the store): ``board`` (1-based), ``table`` (1, 2),
    ``result`` (team A's, None while it is played), ``room`` and ``game`` (the stored game's id)."""

    board: int
    table: int
    result: int | None
    room: str | None = None
    game: int | None = None


def board_open(board: int, plays: Iterable[BoardPlay]) -> bool:
    """Whether ``board`` has been played at both tables (its cards, results and records may be shown)."""
    done = {p.table for p in plays if p.board == board and p.result is not None}
    return done == set(TABLES)


def next_board(plays: Iterable[BoardPlay], table: int, n_boards: int) -> int | None:
    """The board ``table`` plays next: the lowest not yet started there; None when all are (the
    tables advance independently). A board still being played there is not "next": None while one
    is in progress."""
    mine = [p for p in plays if p.table == table]
    if any(p.result is None for p in mine):
        return None
    started = {p.board for p in mine}
    return next((k for k in range(1, n_boards + 1) if k not in started), None)


def board_results(plays: Sequence[BoardPlay], n_boards: int) -> list[list[int]]:
    """``[[t1, t2], ...]`` of the boards played at both tables, in board order (the ``team_deals`` of
    :class:`guandan.tournament.model.MatchResult`)."""
    out = []
    for k in range(1, n_boards + 1):
        if board_open(k, plays):
            by = {p.table: p.result for p in plays if p.board == k}
            out.append([int(by[1]), int(by[2])])  # type: ignore[arg-type]
    return out


def totals(plays: Sequence[BoardPlay], n_boards: int) -> tuple[int, int, int]:
    """``(difference, points_a, points_b)``: team A's level difference over the boards played at both
    tables, and the two teams' points on the 26-point scale (R58, :func:`teams.scale_points`)."""
    deals = board_results(plays, n_boards)
    a = teams.scale_points(deals)
    return teams.level_difference(deals), a, teams.TOTAL_POINTS - a


def finished(plays: Sequence[BoardPlay], n_boards: int) -> bool:
    """Every board has been played at both tables."""
    return all(board_open(k, plays) for k in range(1, n_boards + 1))
