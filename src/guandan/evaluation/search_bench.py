"""Benchmark of the search path (``guandan bench-search``): copies, undo, world sampling, rollouts.

Figures (single process, wall clock, so they move with the machine's load):

* ``clone_us``: one :meth:`guandan.core.deal.Deal.clone` of a play-phase deal, microseconds;
* ``push_pop_us``: one :meth:`~guandan.core.deal.Deal.push_unchecked` plus
  :meth:`~guandan.core.deal.Deal.pop_unchecked` of a legal action, microseconds;
* ``apply_us``: the checked :meth:`~guandan.core.deal.Deal.apply` of the same action on a fresh
  clone (clone time subtracted), microseconds; for comparison;
* ``sample_ms``: building :class:`guandan.core.worlds.WorldConstraints` from a view and sampling
  one world, milliseconds;
* ``rollout_ms`` / ``rollout_heuristic_ms`` / ``rollout_fast_ms``: one rollout from the first
  decision of a deal to its end with :class:`guandan.agents.search.RolloutPolicy` / the full
  heuristic / :class:`guandan.agents.fast_rollout.FastRolloutPolicy`, milliseconds;
* ``actions_per_rollout``;
* ``late_rollout_heuristic_ms`` / ``late_rollout_fast_ms``: the same from late positions (the
  first decision of a heuristic self-play game ``Game(seed=1000 + i)`` where a seat still
  playing holds 10 cards or fewer: what the ``hard`` level searches), and
  ``late_actions_per_rollout``.

Positions: the first decision of ``positions`` seeded deals (``Game(seed=i)``), level 2.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Any

from guandan.agents.fast_rollout import FastRolloutPolicy
from guandan.agents.heuristic import HeuristicAgent
from guandan.agents.search import RolloutPolicy, is_late, rollout
from guandan.core.match import Game
from guandan.core.views import seat_view
from guandan.core.worlds import WorldConstraints, world_deal


def _per_call(fn: Callable[[], Any], n: int) -> float:
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t0) / n


def run_search_bench(positions: int = 6, rollouts: int = 3, seed: int = 1,
                     progress: Callable[[str], None] | None = None) -> dict[str, float]:
    """Measure the figures of the module docstring.

    Args:
        positions: number of seeded start positions (>= 1).
        rollouts: rollouts per position and policy (>= 1).
        seed: seed of the world sampling.
        progress: optional callback with a short label before each step.
    Returns:
        A dict of the figures (floats; units in the key names).
    Raises:
        ValueError: ``positions`` or ``rollouts`` below 1.
    """
    if positions < 1 or rollouts < 1:
        raise ValueError("positions and rollouts must be >= 1")
    rng = random.Random(seed)
    views = []
    for i in range(positions):
        g = Game(seed=i)
        views.append(seat_view(g, g.to_act()))
    out: dict[str, float] = {}
    if progress:
        progress("clone, push/pop, apply")
    deal = world_deal(views[0], WorldConstraints(views[0]).sample(rng))
    act = deal.legal_actions()[-1]
    out["clone_us"] = 1e6 * _per_call(deal.clone, 2000)

    def push_pop() -> None:
        deal.push_unchecked(act)
        deal.pop_unchecked()

    out["push_pop_us"] = 1e6 * _per_call(push_pop, 2000)

    def clone_apply() -> None:
        deal.clone().apply(act)

    out["apply_us"] = max(0.0, 1e6 * _per_call(clone_apply, 2000) - out["clone_us"])
    if progress:
        progress("world sampling")
    out["sample_ms"] = 1e3 * _per_call(lambda: WorldConstraints(views[0]).sample(rng), 200)
    late = _late_views(positions)
    for key, policy, where in (("rollout_ms", RolloutPolicy(), views),
                               ("rollout_heuristic_ms", HeuristicAgent(), views),
                               ("rollout_fast_ms", FastRolloutPolicy(), views),
                               ("late_rollout_heuristic_ms", HeuristicAgent(), late),
                               ("late_rollout_fast_ms", FastRolloutPolicy(), late)):
        if progress:
            progress(key.replace("_ms", "s").replace("_", " "))
        total = 0.0
        n = 0
        actions = 0
        for v in where:
            cons = WorldConstraints(v)
            for _ in range(rollouts):
                d = world_deal(v, cons.sample(rng))
                before = len(d.history)
                t0 = time.perf_counter()
                rollout(d, policy, v.seat & 1)
                total += time.perf_counter() - t0
                actions += len(d.history) - before
                n += 1
        out[key] = 1e3 * total / n
        if key == "rollout_ms":
            out["actions_per_rollout"] = actions / n
        if key == "late_rollout_fast_ms":
            out["late_actions_per_rollout"] = actions / n
    return out


def _late_views(positions: int, late_cards: int = 10) -> list[Any]:
    """Late play-phase views (a seat still playing holds at most ``late_cards`` cards, nobody out
    yet), one from each of ``positions`` heuristic self-play games (``Game(seed=1000 + i)``):
    the positions the ``hard`` level searches."""
    h = HeuristicAgent()
    out = []
    for i in range(positions):
        g = Game(seed=1000 + i)
        while not g.settlements:
            seat = g.to_act()
            assert seat is not None
            v = seat_view(g, seat)
            if v.phase == "play" and not v.finished and len(v.legal_actions) > 1 and is_late(v, late_cards):
                out.append(v)
                break
            g.apply(h.act(v), seat)
    return out
