"""Team matches (复式): the 26-point level-difference scale (R58).

A team is two pairs. In a team match, team A's pair 1 meets team B's pair 1 at table 1 and team A's pair 2
meets team B's pair 2 at table 2; the same deals (the same cards, dealt once) are played at both tables
with the teams' seats swapped: the seats team A holds at table 1 are team B's at table 2.

**A deal's result at one table**, seen from team A, is the upgrade (R35) that the tournament's rule preset
gives the deal's result (docs/rules.md section P, option ``upgrade``): with the official 3/2/1, +3, +2, +1
when team A's pair took 头游 with its partner 2nd, 3rd, 4th (1-2, 1-3, 1-4), and −3, −2, −1 when team B's
pair did; with ``anhui`` (6/4/2) ±6, ±4, ±2; a ``--rule upgrade=...`` override counts the same way
(:func:`upgrade_of`, :func:`deal_value`, :func:`deal_values`). The result's upgrade is counted, not the
levels actually moved: the cap at A (R36) and the A rules (R37–R41) depend on where each table's game
stands, which differs between the two tables, while the upgrade depends only on how the cards were played.

**Comparing the tables deal by deal.** Deal k scores ``t1 + t2`` for team A (the sum of its results at
the two tables). With the seats swapped, the same play of the same cards at both tables gives
``t1 = −t2`` and the deal scores 0; a deal scores for team A exactly by how much better team A's pairs did
with the same cards. The match's level difference is ``D = Σ_k (t1_k + t2_k)`` plus the penalty levels
(R54) gained by team A minus those gained by team B (one level, one point).

**The 26-point scale.** docs/rules.md R58 records that the 2017 rules' summary mentions "a 26-point
level-difference scale" without its table. We define it as a split of 26 points: team A scores
``13 + D`` capped to 0..26 and team B the rest, ``26 − (13 + D)``. 13:13 is a draw; a difference of 13
levels or more takes all 26 (13 is the number of levels from 2 to A, R6, so one game's whole ladder
decides the whole match). Field points follow R58 from the scale: more than 13 wins (3), 13 draws (2),
less loses (1). The tie-breaks of team matches are ``net`` = own points − 13 and ``cumulative`` = own
points (see :mod:`guandan.tournament.scoring`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

TOTAL_POINTS = 26
DRAW_POINTS = TOTAL_POINTS // 2
#: The three results of 头游's team, in the order of the ``upgrade`` option (R35).
RESULTS = ("1-2", "1-3", "1-4")
_CODE = re.compile(r"([ab])1-?([234])")


def rules_of(preset: str, overrides: Mapping[str, str] | None = None) -> Any:
    """The :class:`~guandan.core.rules.RuleSet` the games of a tournament are played under: the rule
    ``preset`` with the ``overrides`` (``{"upgrade": "6/4/2", "target_level": "8"}``...).

    Raises :class:`~guandan.tournament.errors.ConfigError` (``params["field"] == "preset"``) for an unknown
    preset or an invalid override."""
    from guandan.core.errors import RuleConfigError
    from guandan.core.rules import RuleSet, apply_overrides

    from .errors import ConfigError

    try:
        return apply_overrides(RuleSet.preset(preset), [f"{k}={v}" for k, v in (overrides or {}).items()])
    except RuleConfigError as e:
        raise ConfigError(f"rule preset {preset!r}: {e}", field="preset", value=preset) from None


def upgrade_of(preset: str, overrides: Mapping[str, str] | None = None) -> tuple[int, int, int]:
    """The levels gained for 1-2, 1-3, 1-4 (R35) under the rule ``preset`` with the ``overrides``
    (``{"upgrade": "6/4/2"}``...), as the games of the tournament are played.

    Raises :class:`~guandan.tournament.errors.ConfigError` (``params["field"] == "preset"``) for an unknown
    preset or an invalid override."""
    return tuple(rules_of(preset, overrides).upgrade)  # type: ignore[return-value]


def target_of(preset: str, overrides: Mapping[str, str] | None = None) -> int:
    """The target level of the tournament's games as 2..14 (``target_level``, AMB-17: A = 14 by default,
    8 where the preset or an override says so): the level a side passes to win the game (R37 for A).
    Raises :class:`~guandan.tournament.errors.ConfigError` as :func:`rules_of`."""
    from .model import parse_level

    return parse_level(str(rules_of(preset, overrides).target_level), "target_level")


def deal_values(upgrade: Sequence[int]) -> list[int]:
    """Every value a deal's result at one table can have for team A, from the ``upgrade`` of 1-2, 1-3,
    1-4: ``[−u12, −u13, −u14, u14, u13, u12]`` (team B's 头游 first), e.g. −3..−1, 1..3 for 3/2/1."""
    return [-u for u in upgrade] + [u for u in reversed(upgrade)]


def deal_value(code: str, upgrade: Sequence[int]) -> int:
    """Team A's signed result at one table from a result code: ``"a1-2"``, ``"a1-3"``, ``"a1-4"`` when
    team A's pair took 头游 with its partner 2nd, 3rd, 4th, ``"b1-2"``... when team B's did (the dash
    may be left out: ``"a12"``); worth the ``upgrade`` of that result (R35), negative for team B.

    Raises ValueError for any other code (ASCII only)."""
    m = _CODE.fullmatch(code.strip().lower()) if code.isascii() else None
    if m is None:
        raise ValueError(f"{code!r} is not a deal result: write a1-2, a1-3, a1-4, b1-2, b1-3 or b1-4")
    value = upgrade[int(m.group(2)) - 2]
    return value if m.group(1) == "a" else -value


def level_difference(deals: list[list[int]], penalty_levels: int = 0) -> int:
    """``D`` for team A: ``Σ (t1 + t2)`` over ``deals`` (each ``[t1, t2]``, team A's signed result at table 1
    and table 2) plus ``penalty_levels`` (team A's penalty gains minus team B's)."""
    return sum(t1 + t2 for t1, t2 in deals) + penalty_levels


def scale_points(deals: list[list[int]], penalty_levels: int = 0) -> int:
    """Team A's points on the 26-point scale: ``13 + D`` capped to 0..26 (team B has ``26 −`` that)."""
    return max(0, min(TOTAL_POINTS, DRAW_POINTS + level_difference(deals, penalty_levels)))
