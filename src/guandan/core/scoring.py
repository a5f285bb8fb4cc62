"""Settling a deal: upgrades, passing the target, failed attempts, streaks, Anhui points and
titles (docs/rules.md R35-R42, AMB-13..17, AMB-22, section 2.1).

Pure functions over plain values so that the match, the conformance runner and the server
share one implementation.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from .deal import DealResult, partner, team_of
from .rules import RuleSet

_RESULT_INDEX = {"1-2": 0, "1-3": 1, "1-4": 2}
_LOW = 0  # level 2


def target_index(rules: RuleSet) -> int:
    """Rank index of the target level: 12 for A, 6 for 8 (AMB-17)."""
    return 12 if rules.target_level == "A" else 6


@dataclass
class MatchScore:
    """What carries from deal to deal inside a game.

    Attributes:
        levels: team levels as rank indices, ``[team02, team13]`` (R6).
        a_fails: failed attempts at the own target level per team (R41).
        first_runs, last_runs: per-seat lengths of the current 头游 / 末游 runs (Yangzhou).
        points: per-seat cumulative Anhui points (section 2.1).
    """

    levels: list[int] = field(default_factory=lambda: [_LOW, _LOW])
    a_fails: list[int] = field(default_factory=lambda: [0, 0])
    first_runs: list[int] = field(default_factory=lambda: [0, 0, 0, 0])
    last_runs: list[int] = field(default_factory=lambda: [0, 0, 0, 0])
    points: list[int] = field(default_factory=lambda: [0, 0, 0, 0])

    def copy(self) -> MatchScore:
        return MatchScore(self.levels[:], self.a_fails[:], self.first_runs[:], self.last_runs[:], self.points[:])


@dataclass(frozen=True)
class Settlement:
    """The outcome of settling one deal.

    Attributes:
        winner: winning team (0 = seats 0/2, 1 = seats 1/3).
        result: ``'1-2'``, ``'1-3'`` or ``'1-4'``.
        upgrade: levels gained by the finish before caps (R35; 0 when
            ``target_no_upgrade_with_last`` applies), including any streak bonus.
        streak_bonus: extra levels from a 头游 run (Yangzhou), included in ``upgrade``.
        streak_penalty: per-team levels lost to 末游 runs (Yangzhou).
        levels_before, levels_after: team levels (rank indices).
        passed: the winner passed the target level (R37): the game is won.
        failed: teams that recorded a failed target attempt this deal (R38, R39, AMB-15).
        demoted: teams sent back to level 2 by ``a_fail_limit`` (R41, EC-44).
        next_level: the next deal's level (R7); after passing the target ``None`` (game over) or
            level 2 when ``after_target`` is ``restart`` (R42).
        points_delta: per-seat Anhui points of this deal (zeros when ``points`` is off).
    """

    winner: int
    result: str
    upgrade: int
    streak_bonus: int
    streak_penalty: tuple[int, int]
    levels_before: tuple[int, int]
    levels_after: tuple[int, int]
    passed: bool
    failed: tuple[int, ...]
    demoted: tuple[int, ...]
    next_level: int | None
    points_delta: tuple[int, int, int, int]


def anhui_points(result: DealResult) -> tuple[int, int, int, int]:
    """Per-seat points of one deal under seed 000 (Anhui): 1-2: ±4; 1-3: ±2; 1-4: ±1.

    1-2: 1st and 2nd +4, both losers -4. 1-3: 1st +2, 2nd -2, 3rd +2, 4th -2.
    1-4: 1st +1, 2nd -1, 3rd -1, 4th +1 (the winners are 1st and 4th).
    """
    pts = [0, 0, 0, 0]
    first = result.first
    code = result.result
    unit = {"1-2": 4, "1-3": 2, "1-4": 1}[code]
    for s in range(4):
        pts[s] = unit if team_of(s) == team_of(first) else -unit
    return (pts[0], pts[1], pts[2], pts[3])


TITLES: tuple[tuple[int, str], ...] = (
    (100000, "皇帝"),
    (80000, "宰相"),
    (50000, "一品大學士"),
    (30000, "二品巡撫"),
    (20000, "三品侍郎"),
    (12000, "四品知府"),
    (7000, "五品知州"),
    (3000, "六品通判"),
    (1500, "七品知縣"),
    (800, "八品縣丞"),
    (400, "九品主簿"),
    (100, "舉人"),
    (0, "秀才"),
)


def anhui_title(points: int) -> str:
    """Anhui title for cumulative points (section 2.1; AMB-22: 0 is 秀才, below 0 平民)."""
    for floor, name in TITLES:
        if points >= floor:
            return name
    return "平民"


def settle(
    rules: RuleSet,
    deal_level: int,
    result: DealResult,
    score: MatchScore,
) -> Settlement:
    """Settle a finished deal and update ``score`` in place.

    Args:
        rules: the rule set (``upgrade``, ``target_level``, ``pass_target``,
            ``target_no_upgrade_with_last``, ``a_fail_limit``, ``streaks``, ``points``).
        deal_level: the level the deal was played at (rank index).
        result: the deal's finishing order.
        score: the match score before the deal; updated to after it.
    Returns:
        The :class:`Settlement`.

    A team plays "at its own level" when its level equals the deal's level (R37; AMB-15 when
    both teams are at that level).
    """
    target = target_index(rules)
    levels_before = (score.levels[0], score.levels[1])
    code = result.result
    winner = result.winner_team
    loser = 1 - winner
    base = rules.upgrade[_RESULT_INDEX[code]]
    win_own = levels_before[winner] == deal_level
    lose_own = levels_before[loser] == deal_level
    at_target = levels_before[winner] == target
    target_deal = deal_level == target

    # Yangzhou streaks (AMB-17): run of n >= 3 gives +-(n - 2)
    bonus = 0
    penalty = [0, 0]
    first = result.first
    lasts = result.last
    for s in range(4):
        score.first_runs[s] = score.first_runs[s] + 1 if s == first else 0
        score.last_runs[s] = score.last_runs[s] + 1 if s in lasts else 0
    if rules.streaks:
        if score.first_runs[first] >= 3:
            bonus = score.first_runs[first] - 2
        for s in lasts:
            if score.last_runs[s] >= 3:
                penalty[team_of(s)] += score.last_runs[s] - 2

    upgrade = base + bonus
    if rules.target_no_upgrade_with_last and target_deal and code == "1-4":
        upgrade = 0  # Yangzhou: a target-level deal won with a 末游 gives no upgrade

    passed = False
    failed: list[int] = []
    levels = list(levels_before)
    if at_target and (win_own or rules.pass_target == "lenient"):
        if rules.pass_target == "double_up_only":
            passed = code == "1-2"
        else:
            passed = code in ("1-2", "1-3")  # R37; lenient also at the opponents' level
        if not passed and win_own:
            failed.append(winner)  # R38: 1-4 (or 1-3 under double_up_only) at the own target
    else:
        levels[winner] = min(levels[winner] + upgrade, target)  # R35, R36 cap
    if lose_own and levels_before[loser] == target:
        failed.append(loser)  # R39: losing a deal at the own target level
    for t in (0, 1):
        if penalty[t]:
            levels[t] = max(_LOW, levels[t] - penalty[t])

    demoted: list[int] = []
    if passed:
        failed = []  # the game is over: no attempt is pending any more
    else:
        for t in failed:
            score.a_fails[t] += 1
            if rules.a_fail_limit is not None and score.a_fails[t] >= rules.a_fail_limit:
                levels[t] = _LOW  # R41, EC-44
                score.a_fails[t] = 0
                demoted.append(t)
    score.levels[0], score.levels[1] = levels

    pts = anhui_points(result) if rules.points else (0, 0, 0, 0)
    for s in range(4):
        score.points[s] += pts[s]

    if passed:
        # R42 / AMB-28: a following game (after_target=restart) starts both teams at 2
        next_level = _LOW if rules.after_target == "restart" else None
    else:
        next_level = levels[winner]  # R7
    return Settlement(
        winner=winner,
        result=code,
        upgrade=upgrade,
        streak_bonus=bonus,
        streak_penalty=(penalty[0], penalty[1]),
        levels_before=levels_before,
        levels_after=(levels[0], levels[1]),
        passed=passed,
        failed=tuple(failed),
        demoted=tuple(demoted),
        next_level=next_level,
        points_delta=pts,
    )


def upgrade_for(rules: RuleSet, finish_order: Sequence[int]) -> int:
    """Levels gained by the finish alone (R35): ``rules.upgrade`` by where 头游's partner finished."""
    fo = list(finish_order)
    p = partner(fo[0])
    if len(fo) >= 2 and fo[1] == p:
        return rules.upgrade[0]
    if len(fo) >= 3 and fo[2] == p:
        return rules.upgrade[1]
    return rules.upgrade[2]
