"""Scoring of matches and standings (docs/rules.md R58, penalties R54, the cap at A R36).

**One match** (:func:`score_match`). A match is decided by the levels reached (R58); a side that passed A
wins outright (R37, R58). Penalties (R54) are turned into levels for the opponents:

* timeouts: from the ``free_timeouts + 1``-th (R54: the 3rd) on, +1 level for the opponents each;
* lateness: +1 level for the opponents per full ``late_minutes_per_level`` (R54: 5) minutes late
  (4 minutes late costs nothing, 5–9 minutes one level, 10 two levels);
* the organiser's manual penalties (``levels`` with a reason; ``loses_match`` loses the game outright,
  R54's 3rd hiding of cards or 3rd illegal signal).

The penalty levels are added to the opponents' level reached and the sum is **capped at A** (R36: a team
cannot jump past A). A penalty never counts as passing A: passing A needs a deal won at the team's own
A (R37), so a penalty can bring the opponents level with A but not past it; the levels cut off by the cap
are reported (``capped``) and lost. A side that passed A keeps its win whatever levels the opponents gain
from penalties (the game was over; R58 "passing A is a win"); only a ``loses_match`` penalty takes it away.

Outcome and field points (R58): win 3, draw 2, loss 1, absent 0. A walkover (``absent`` one side) is a
win for the side present; a bye is a win too (3 field points). Both score the small scores
``Options.bye_net`` and ``Options.bye_cumulative`` (default 0 and 0) so that a bye neither helps nor hurts
the tie-breaks; the absent side scores 0 field points and 0 small scores. A knock-out match whose levels
are level is settled by one extra deal at level 2 won by the team that takes 头游 (R58): the result's
``extra_deal`` names that side, and it gets the win (3) while the small scores stay those of the draw.

**Nobody wins** when both sides are absent (0 field points each) or both sides lose the match by
penalty (R54 "loses the game": a ``loses_match`` penalty against each side, or against the side present
at a walkover): each scores a loss (1 field point) and the small scores of the levels. In a knock-out
such a match has no winner (:func:`knockout_winner` returns None) and nobody goes through; the
director then refuses to pair on (:class:`~guandan.tournament.errors.NoWinner`).

Small scores (R58): 净积小分 ``net`` = own level − opponents' level (after penalties); 累积小分
``cumulative`` = own level − 2, +1 for passing A. Team matches (复式) use the 26-point scale of
:mod:`guandan.tournament.teams`: ``net`` = own scale points − 13, ``cumulative`` = own scale points.

**Standings** (:func:`standings`): field points, then the tie-breaks in ``Options.tiebreaks`` order:
``net`` and ``cumulative`` (sums over the matches), ``opponents`` (the sum of the current field points of
every opponent met at a table: byes and walkovers add nothing; a Buchholz score), ``head_to_head`` (the
field points each tied entry took in matches against the other entries tied with it on every earlier
criterion), ``seed`` (the lower seed number first; no seed ranks after every seed). The entry id settles
whatever is still equal, so places are 1..N without ties. A knock-out puts its entries first, by the
knock-out round in which they lost (the champion first), each group of them ordered as above.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Callable

from .errors import ImpossibleLevel, InvalidResult, UnknownRound
from .model import LEVEL_A, LEVEL_MIN, SIDES, Match, MatchResult, Options, Penalty, Tournament
from .teams import DRAW_POINTS, deal_values, scale_points, upgrade_of

WIN, DRAW, LOSS, ABSENT = 3, 2, 1, 0
#: :func:`decide`'s answer when each side has a penalty that loses the match (R54).
BOTH_LOSE = "both_lose"
TIEBREAKS = ("net", "cumulative", "opponents", "head_to_head", "seed")


def other(side: str) -> str:
    return "b" if side == "a" else "a"


@dataclass
class SideScore:
    """One side's scored match: ``outcome`` (``"win"``, ``"draw"``, ``"loss"``, ``"absent"``, ``"bye"``),
    ``field_points``, ``net``, ``cumulative``, ``level`` (after penalties, capped at A), ``reached``
    (the level reached at the table), ``gained`` (penalty levels credited to this side before the cap),
    ``capped`` (levels lost to the cap), ``penalties`` (the penalties against this side)."""

    outcome: str
    field_points: int
    net: int = 0
    cumulative: int = 0
    level: int = LEVEL_MIN
    reached: int = LEVEL_MIN
    gained: int = 0
    capped: int = 0
    penalties: list[Penalty] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"outcome": self.outcome, "field_points": self.field_points, "net": self.net,
                "cumulative": self.cumulative, "level": self.level, "reached": self.reached,
                "gained": self.gained, "capped": self.capped,
                "penalties": [p.__dict__.copy() for p in self.penalties]}


def validate_result(r: MatchResult, *, knockout: bool = False, team: bool = False,
                    options: Options | None = None, upgrade: Sequence[int] | None = None,
                    target: int = LEVEL_A) -> None:
    """Check a reported result before it is stored.

    ``upgrade``: the levels gained for 1-2, 1-3, 1-4 under the tournament's rule preset
    (:func:`guandan.tournament.teams.upgrade_of`; default the official preset's): a team deal's value at
    a table must be one of :func:`~guandan.tournament.teams.deal_values` of it (R35).

    ``target``: the games' target level as 2..14 (AMB-17: A = 14, or 8;
    :func:`guandan.tournament.teams.target_of`): ``passed_a`` names the side that passed it.

    Raises :class:`ImpossibleLevel` for a level that is not an int in 2..A or a pass of the target by a
    side whose level is not the target (R37: A is passed from A; with target 8, 8 from 8); :class:`InvalidResult` (``params["reason"]``) for counts
    (timeouts, minutes late, penalty levels) that are not ints (``not_a_count``: a float such as NaN is
    never taken) or are negative,
    a side name other than a/b, an absent side with play reported, an extra deal where none is needed
    or missing where a knock-out match is drawn (R58), team deals missing or malformed (the 复式 scale),
    ``bad_team_deal`` for a value that no result has under ``upgrade``.
    """
    for name in ("level_a", "level_b"):
        v = getattr(r, name)
        if isinstance(v, bool) or not isinstance(v, int) or not LEVEL_MIN <= v <= LEVEL_A:
            raise ImpossibleLevel(f"{name} {v!r} is outside 2..A (R6)", field=name, value=v)
    for name in ("timeouts_a", "timeouts_b", "late_a", "late_b"):
        v = getattr(r, name)
        if isinstance(v, bool) or not isinstance(v, int):
            raise InvalidResult(f"{name} {v!r} is not a whole number", reason="not_a_count", field=name, value=repr(v))
        if v < 0:
            raise InvalidResult(f"{name} is negative", reason="negative_count", field=name)
    for name, v in (("passed_a", r.passed_a), ("absent", r.absent), ("extra_deal", r.extra_deal)):
        if v is not None and v not in SIDES and not (name == "absent" and v == "both"):
            raise InvalidResult(f"{name} must be 'a' or 'b'", reason="bad_side", field=name, value=v)
    for p in r.penalties:
        if p.side not in SIDES:
            raise InvalidResult("a penalty names side 'a' or 'b'", reason="bad_side", field="penalty", value=p.side)
        if isinstance(p.levels, bool) or not isinstance(p.levels, int):
            raise InvalidResult(f"penalty levels {p.levels!r} are not a whole number", reason="penalty_levels",
                                value=repr(p.levels))
        if p.levels < 0 or (p.levels == 0 and not p.loses_match):
            raise InvalidResult("a penalty gives the opponents 1 level or more", reason="penalty_levels",
                                value=p.levels)
    if r.absent is not None:
        if r.passed_a or r.extra_deal or r.team_deals or r.level_a != LEVEL_MIN or r.level_b != LEVEL_MIN:
            raise InvalidResult("an absent side cannot have play reported", reason="absent_with_play")
        return
    if team:
        if not r.team_deals:
            raise InvalidResult("a team match needs its deals from both tables", reason="team_deals_needed")
        allowed = deal_values(upgrade if upgrade is not None else upgrade_of("official"))
        for d in r.team_deals:
            if (not isinstance(d, list) or len(d) != 2
                    or any(isinstance(x, bool) or not isinstance(x, int) or x not in allowed for x in d)):
                raise InvalidResult(f"a team deal is [table 1, table 2], each one of {sorted(set(allowed))} "
                                    "(the preset's upgrades for 1-2, 1-3, 1-4, R35)", reason="bad_team_deal",
                                    value=d, allowed=sorted(set(allowed)))
        if r.passed_a or (r.extra_deal and not knockout):
            raise InvalidResult("team matches are scored on the 26-point scale", reason="team_deals_not_team")
    elif r.team_deals is not None:
        raise InvalidResult("team deals in a pair match", reason="team_deals_not_team")
    if r.passed_a is not None and getattr(r, f"level_{r.passed_a}") != target:
        at = "A" if target == LEVEL_A else str(target)
        raise ImpossibleLevel(f"only a side at {at} can pass the target level {at} (R37, AMB-17)", field="passed_a",
                              value=r.passed_a)
    if knockout:
        drawn = _decide(r, team, options=options) is None  # BOTH_LOSE needs no extra deal: nobody won
        if drawn and r.extra_deal is None:
            raise InvalidResult("a drawn knock-out match needs the extra deal's winner (R58)",
                                reason="extra_deal_needed")
        if not drawn and r.extra_deal is not None:
            raise InvalidResult("the extra deal is only played after a draw", reason="extra_deal_not_needed")
    elif r.extra_deal is not None:
        raise InvalidResult("the extra deal is only played in a knock-out", reason="extra_deal_not_needed")


def penalties_of(r: MatchResult, options: Options) -> list[Penalty]:
    """Every penalty of the match: the automatic timeouts and lateness ones (R54) then the manual ones."""
    out: list[Penalty] = []
    for s in SIDES:
        n = getattr(r, f"timeouts_{s}")
        if n > options.free_timeouts:
            out.append(Penalty(s, n - options.free_timeouts, f"{n} timeouts", "timeouts"))
        late = getattr(r, f"late_{s}")
        if late >= options.late_minutes_per_level:
            out.append(Penalty(s, late // options.late_minutes_per_level, f"{late} minutes late", "late"))
    return out + list(r.penalties)


def _levels(r: MatchResult, pens: list[Penalty]) -> tuple[dict[str, int], dict[str, int], dict[str, int]]:
    """Levels after penalties, capped at A (R36): ``(level, gained, capped)`` per side."""
    gained = {"a": 0, "b": 0}
    for p in pens:
        gained["b" if p.side == "a" else "a"] += p.levels
    raw_a, raw_b = r.level_a + gained["a"], r.level_b + gained["b"]
    level = {"a": min(raw_a, LEVEL_A), "b": min(raw_b, LEVEL_A)}
    return level, gained, {"a": raw_a - level["a"], "b": raw_b - level["b"]}


def decide(r: MatchResult, options: Options, *, team: bool = False) -> str | None:
    """The side (``"a"``/``"b"``) that wins a played match before any extra deal, None for a draw, or
    :data:`BOTH_LOSE` when each side has a penalty that loses the match (R54). Levels after the R54
    penalties and the R36 cap decide; passing A wins (R58); team matches compare the 26-point scale.
    An ``absent`` side is not looked at (see :func:`score_match`)."""
    return _decide(r, team, options=options)


def _decide(r: MatchResult, team: bool, options: Options | None = None,
            pens: list[Penalty] | None = None) -> str | None:
    """The winning side before any extra deal, None for a draw, :data:`BOTH_LOSE` when both lose."""
    if pens is None:
        pens = penalties_of(r, options or Options())
    losers = {p.side for p in pens if p.loses_match}
    if len(losers) == 2:
        return BOTH_LOSE
    if len(losers) == 1:
        return other(losers.pop())
    if team:
        pts = scale_points(r.team_deals or [], _team_penalty(pens))
        return None if pts == DRAW_POINTS else ("a" if pts > DRAW_POINTS else "b")
    if r.passed_a is not None:
        return r.passed_a
    level, _, _ = _levels(r, pens)
    if level["a"] == level["b"]:
        return None
    return "a" if level["a"] > level["b"] else "b"


def _team_penalty(pens: list[Penalty]) -> int:
    """Penalty levels gained by team a minus those gained by team b (each level is one scale point)."""
    return sum(-p.levels if p.side == "a" else p.levels for p in pens)


_POINTS = {"win": WIN, "draw": DRAW, "loss": LOSS}


def score_match(m: Match, options: Options, *, knockout: bool = False, team: bool = False) -> dict[str, SideScore]:
    """Score one match with a final result (or a bye): ``{"a": SideScore, "b": SideScore}`` (only ``"a"``
    for a bye). Implements R58 with R54 penalties and the R36 cap as described in the module docstring.

    Raises :class:`InvalidResult` (``reason="no_result"``) for a table without a final result.
    """
    if m.b is None:
        return {"a": SideScore("bye", WIN, options.bye_net, options.bye_cumulative)}
    r = m.result
    if r is None:
        raise InvalidResult(f"table {m.table} has no final result", reason="no_result", table=m.table)
    pens = penalties_of(r, options)
    against: dict[str, list[Penalty]] = {"a": [], "b": []}
    for p in pens:
        against[p.side].append(p)
    if r.absent == "both":
        return {s: SideScore("absent", ABSENT, penalties=against[s]) for s in SIDES}
    if r.absent in SIDES:
        present = other(r.absent)  # type: ignore[arg-type]
        absent = SideScore("absent", ABSENT, penalties=against[r.absent])  # type: ignore[index]
        if any(p.loses_match for p in against[present]):  # the side present lost by penalty: nobody won
            return {present: SideScore("loss", LOSS, penalties=against[present]), r.absent: absent}  # type: ignore[dict-item]
        return {present: SideScore("win", WIN, options.bye_net, options.bye_cumulative, penalties=against[present]),
                r.absent: absent}  # type: ignore[dict-item]
    winner = _decide(r, team, pens=pens)
    if winner is None and knockout:
        winner = r.extra_deal
    if winner == BOTH_LOSE:
        oa = ob = "loss"
    else:
        oa = "draw" if winner is None else ("win" if winner == "a" else "loss")
        ob = "draw" if winner is None else ("win" if winner == "b" else "loss")
    if team:
        pts = scale_points(r.team_deals or [], _team_penalty(pens))
        return {"a": SideScore(oa, _POINTS[oa], pts - DRAW_POINTS, pts, penalties=against["a"]),
                "b": SideScore(ob, _POINTS[ob], DRAW_POINTS - pts, 2 * DRAW_POINTS - pts, penalties=against["b"])}
    level, gained, capped = _levels(r, pens)
    la, lb = level["a"], level["b"]
    return {"a": SideScore(oa, _POINTS[oa], la - lb, la - 2 + (r.passed_a == "a"), la, r.level_a, gained["a"],
                           capped["a"], against["a"]),
            "b": SideScore(ob, _POINTS[ob], lb - la, lb - 2 + (r.passed_a == "b"), lb, r.level_b, gained["b"],
                           capped["b"], against["b"])}


def knockout_winner(m: Match, options: Options, *, team: bool = False) -> str | None:
    """The side that goes through a knock-out match with a final result: ``"a"`` or ``"b"`` (``"a"`` for a
    bye), or None when nobody won it (both absent, or both lost by penalty; module docstring). A drawn
    match goes to the extra deal's winner (R58).

    Raises :class:`InvalidResult` (``reason="no_result"``) for a table without a final result."""
    winners = [s for s, sc in score_match(m, options, knockout=True, team=team).items() if sc.outcome in ("win", "bye")]
    return winners[0] if len(winners) == 1 else None


def no_winner_reason(r: MatchResult) -> str:
    """Why a knock-out match has no winner: ``"both_absent"``, or ``"both_lose"`` (each side lost: by R54
    penalties, or one side absent and the other penalised with the loss of the match)."""
    return "both_absent" if r.absent == "both" else "both_lose"


@dataclass
class Standing:
    """One line of the standings: ``place`` (1..N), the entry's ``id`` and ``name``, ``field_points``,
    the small scores, ``opponents`` (opponents' field points), counts, ``penalty_levels`` (levels its
    penalties gave the opponents), ``penalties`` (round, table, kind, levels, reason), ``withdrawn``,
    ``knockout_out`` (the knock-out round it lost; the champion has the final's number + 1), and
    ``tiebreaks``: the values of the tie-breaks in the options' order (head-to-head as computed in its
    tied group, seed as the seed number or None)."""

    place: int
    id: int
    name: str
    field_points: int = 0
    net: int = 0
    cumulative: int = 0
    opponents: int = 0
    played: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    byes: int = 0
    absences: int = 0
    penalty_levels: int = 0
    penalties: list[dict[str, Any]] = field(default_factory=list)
    withdrawn: bool = False
    knockout_out: int | None = None
    tiebreaks: list[Any] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def standings(t: Tournament, upto_round: int | None = None, *, group: int | None = None) -> list[Standing]:
    """The standings after ``upto_round`` (default: every round with results), places 1..N.

    Only final results count (a pending or disputed table adds nothing yet). ``group``: only the entries
    of that group and the group rounds (groups_knockout). Tie-breaks as in the module docstring (R58).

    Raises :class:`~guandan.tournament.errors.UnknownRound` when ``upto_round`` is not a paired round
    (1..the number of rounds paired).
    """
    if upto_round is not None and not (isinstance(upto_round, int) and 1 <= upto_round <= len(t.played)):
        raise UnknownRound(f"round {upto_round} has not been paired (rounds paired: "
                           f"{'1..' + str(len(t.played)) if t.played else 'none'})", round=upto_round)
    opts = t.options
    entries = [e for e in t.entries if group is None or e.group == group]
    rows = {e.id: Standing(0, e.id, e.name, withdrawn=not e.active) for e in entries}
    met: dict[int, list[int]] = {e.id: [] for e in entries}
    pair_points: dict[tuple[int, int], int] = {}
    ko_rounds = [r.number for r in t.played if r.kind == "knockout"]
    for rnd in t.played:
        if upto_round is not None and rnd.number > upto_round:
            break
        if group is not None and rnd.kind == "knockout":
            continue
        ko = rnd.kind == "knockout"
        for m in rnd.matches:
            if m.a not in rows or (m.b is not None and m.b not in rows):
                continue
            if m.b is not None and m.result is None:
                continue
            sc = score_match(m, opts, knockout=ko, team=t.team)
            ids = {"a": m.a, "b": m.b}
            for s, score in sc.items():
                row = rows[ids[s]]  # type: ignore[index]
                row.field_points += score.field_points
                row.net += score.net
                row.cumulative += score.cumulative
                if score.outcome == "bye":
                    row.byes += 1
                elif score.outcome == "absent":
                    row.absences += 1
                else:
                    row.played += 1
                    row.wins += score.outcome == "win"
                    row.draws += score.outcome == "draw"
                    row.losses += score.outcome == "loss"
                for p in score.penalties:
                    row.penalty_levels += p.levels
                    row.penalties.append({"round": rnd.number, "table": m.table, "kind": p.kind,
                                          "levels": p.levels, "reason": p.reason, "loses_match": p.loses_match})
                if ko and m.b is not None:
                    if score.outcome in ("loss", "absent"):  # an absent entry is out too (R58)
                        row.knockout_out = rnd.number
                    elif score.outcome == "win" and rnd.number == max(ko_rounds) and len(rnd.matches) == 1:
                        row.knockout_out = rnd.number + 1
            if m.b is not None and m.result is not None and m.result.absent is None:
                met[m.a].append(m.b)
                met[m.b].append(m.a)
                for s in SIDES:
                    key = (ids[s], ids[other(s)])  # type: ignore[assignment]
                    pair_points[key] = pair_points.get(key, 0) + sc[s].field_points  # type: ignore[index]
    for eid, opp in met.items():
        rows[eid].opponents = sum(rows[o].field_points for o in opp if o in rows)
    seeds = {e.id: e.seed for e in entries}

    def h2h(group_ids: list[int]) -> dict[int, int]:
        ids = set(group_ids)
        return {i: sum(pair_points.get((i, j), 0) for j in ids if j != i) for i in group_ids}

    keys: dict[str, Callable[[list[int]], dict[int, Any]]] = {
        "net": lambda g: {i: -rows[i].net for i in g},
        "cumulative": lambda g: {i: -rows[i].cumulative for i in g},
        "opponents": lambda g: {i: -rows[i].opponents for i in g},
        "head_to_head": lambda g: {i: -v for i, v in h2h(g).items()},
        "seed": lambda g: {i: (seeds[i] is None, seeds[i] or 0) for i in g},
    }
    tb_values: dict[int, dict[str, Any]] = {i: {} for i in rows}

    def refine(group_ids: list[int], criteria: list[str]) -> list[int]:
        if len(group_ids) <= 1 or not criteria:
            return sorted(group_ids)
        name, rest = criteria[0], criteria[1:]
        vals = keys[name](group_ids)
        if name == "head_to_head":
            for i, v in vals.items():
                tb_values[i][name] = -v
        buckets: dict[Any, list[int]] = {}
        for i in group_ids:
            buckets.setdefault(vals[i], []).append(i)
        return [j for k in sorted(buckets) for j in refine(buckets[k], rest)]

    def ko_key(i: int) -> int:
        out = rows[i].knockout_out
        return -out if out is not None else 0

    first: dict[tuple[int, int], list[int]] = {}
    for i in rows:
        first.setdefault((ko_key(i), -rows[i].field_points), []).append(i)
    order = [j for k in sorted(first) for j in refine(first[k], list(opts.tiebreaks))]
    out = []
    for place, i in enumerate(order, 1):
        row = rows[i]
        row.place = place
        row.tiebreaks = [_tb_value(row, name, tb_values[i], seeds[i]) for name in opts.tiebreaks]
        out.append(row)
    return out


def _tb_value(row: Standing, name: str, computed: dict[str, Any], seed: int | None) -> Any:
    if name == "head_to_head":
        return computed.get(name, 0)
    if name == "seed":
        return seed
    return getattr(row, name)


def prize_list(table: list[Standing], k: int) -> list[dict[str, Any]]:
    """The top ``k`` places as ``{"place", "id", "name", "field_points"}`` (withdrawn entries keep their
    place but are skipped for prizes)."""
    out = []
    for s in table:
        if len(out) >= k:
            break
        if not s.withdrawn:
            out.append({"place": s.place, "id": s.id, "name": s.name, "field_points": s.field_points})
    return out
