"""A seeded simulation of a whole event with random match results (``guandan tournament simulate``).

:func:`simulate` creates ``pairs`` entries named ``Pair 1``… (ids 1..N, seeds 1..N), pairs every round
in the chosen format, gives each table a random result from ``random.Random(seed)`` and returns the
pairings and the final standings. The same arguments give the same output, byte for byte.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from .director import add_entry, enter_result, pair_next_round
from .errors import NoMoreRounds
from .model import LEVEL_A, LEVEL_MIN, MatchResult, Options, Player, Round, Tournament
from .scoring import standings
from .teams import deal_values, upgrade_of


def random_result(rng: random.Random, *, knockout: bool = False, team: bool = False,
                  upgrade: Sequence[int] | None = None) -> MatchResult:
    """A plausible result: each side's level uniform in 2..A; a side at A passed it with probability
    1/2 (never both); a knock-out draw gets an extra deal won by a random side; team matches get 2–12
    random deals with each table's result one of the six results (1-2, 1-3, 1-4 for either team) valued
    by ``upgrade``, the rule preset's (:func:`guandan.tournament.teams.upgrade_of`; default official)."""
    if team:
        values = deal_values(upgrade if upgrade is not None else upgrade_of("official"))
        deals = [[rng.choice(values), rng.choice(values)] for _ in range(rng.randint(2, 12))]
        r = MatchResult(team_deals=deals)
        if knockout and sum(a + b for a, b in deals) == 0:
            r.extra_deal = rng.choice("ab")
        return r
    a, b = rng.randint(LEVEL_MIN, LEVEL_A), rng.randint(LEVEL_MIN, LEVEL_A)
    passed = None
    if a == LEVEL_A and rng.random() < 0.5:
        passed = "a"
    elif b == LEVEL_A and rng.random() < 0.5:
        passed = "b"
    r = MatchResult(level_a=a, level_b=b, passed_a=passed, time_called=passed is None)
    if knockout and passed is None and a == b:
        r.extra_deal = rng.choice("ab")
    return r


def play_round_randomly(t: Tournament, rnd: Round, rng: random.Random, at: str | None = None) -> None:
    """Enter a random final result at every table of ``rnd``."""
    upgrade = upgrade_of(t.preset, t.overrides)
    for m in rnd.matches:
        if m.b is not None:
            enter_result(t, rnd.number, m.table,
                         random_result(rng, knockout=rnd.kind == "knockout", team=t.team, upgrade=upgrade),
                         by=t.directors[0] if t.directors else "organiser", at=at)


def build(pairs: int, rounds: int, fmt: str = "swiss", seed: int = 0, *, groups: int = 2,
          knockout_size: int = 4) -> Tournament:
    """The simulated tournament itself (see :func:`simulate`)."""
    t = Tournament(name=f"simulation {seed}", format=fmt, rounds=rounds,
                   options=Options(groups=groups, knockout_size=knockout_size, random_seed=seed))
    for i in range(1, pairs + 1):
        add_entry(t, f"Pair {i}", [Player(f"P{i}a"), Player(f"P{i}b")], seed=i)
    rng = random.Random(seed)
    limit = rounds if fmt == "swiss" else 10_000
    while len(t.played) < limit:
        try:
            rnd = pair_next_round(t)
        except NoMoreRounds:
            break
        play_round_randomly(t, rnd, rng)
    return t


def summary(t: Tournament) -> dict[str, Any]:
    """``{"rounds": [{"round", "tables": [[a, b], ...], "byes": [..]}], "standings": [{"pair",
    "field_points", "tiebreaks"}]}`` with entries named by id and the standings in final order."""
    return {
        "rounds": [{"round": r.number, "tables": [[m.a, m.b] for m in r.matches if m.b is not None],
                    "byes": [m.a for m in r.matches if m.b is None]} for r in t.played],
        "standings": [{"pair": s.id, "field_points": s.field_points, "tiebreaks": s.tiebreaks}
                      for s in standings(t)],
    }


def simulate(pairs: int, rounds: int, fmt: str = "swiss", seed: int = 0, **kw: Any) -> dict[str, Any]:
    """Simulate an event and return :func:`summary` of it. ``fmt``: ``swiss`` (``rounds`` rounds),
    ``round_robin`` or ``groups_knockout`` (all their rounds; ``rounds`` is ignored)."""
    return summary(build(pairs, rounds, fmt, seed, **kw))
