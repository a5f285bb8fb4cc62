"""Team matches (复式): the 26-point level-difference scale (R58).

A team is two pairs. In a team match, team A's pair 1 meets team B's pair 1 at table 1 and team A's pair 2
meets team B's pair 2 at table 2; the same deals (the same cards, dealt once) are played at both tables
with the teams' seats swapped: the seats team A holds at table 1 are team B's at table 2.

**A deal's result at one table**, seen from team A, is the deal's upgrade class (R35): +3, +2, +1 when team
A's pair took 头游 with its partner 2nd, 3rd, 4th (1-2, 1-3, 1-4), and −3, −2, −1 when team B's pair did
(with a preset such as ``anhui`` the values are its 6/4/2). The class is counted, not the levels actually
moved: the cap at A (R36) and the A rules (R37–R41) depend on where each table's game stands, which differs
between the two tables, while the class depends only on how the cards were played.

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

TOTAL_POINTS = 26
DRAW_POINTS = TOTAL_POINTS // 2


def level_difference(deals: list[list[int]], penalty_levels: int = 0) -> int:
    """``D`` for team A: ``Σ (t1 + t2)`` over ``deals`` (each ``[t1, t2]``, team A's signed result at table 1
    and table 2) plus ``penalty_levels`` (team A's penalty gains minus team B's)."""
    return sum(t1 + t2 for t1, t2 in deals) + penalty_levels


def scale_points(deals: list[list[int]], penalty_levels: int = 0) -> int:
    """Team A's points on the 26-point scale: ``13 + D`` capped to 0..26 (team B has ``26 −`` that)."""
    return max(0, min(TOTAL_POINTS, DRAW_POINTS + level_difference(deals, penalty_levels)))
