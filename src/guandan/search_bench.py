"""Benchmark of the search path (``guandan bench-search``): copies, undo, world sampling, rollouts.

Figures (single process, wall clock, so they move with the machine's load):

* ``clone_us``: one :meth:`guandan.core.deal.Deal.clone` of a play-phase deal, microseconds;
* ``push_pop_us``: one :meth:`~guandan.core.deal.Deal.push_unchecked` plus
  :meth:`~guandan.core.deal.Deal.pop_unchecked` of a legal action, microseconds;
* ``apply_us``: the checked :meth:`~guandan.core.deal.Deal.apply` of the same action on a fresh
  clone (clone time subtracted), microseconds; for comparison;
* ``sample_ms``: building :class:`guandan.core.worlds.WorldConstraints` from a view and sampling
  one world, milliseconds;
* ``rollout_ms`` / ``rollout_heuristic_ms``: one rollout from the first decision of a deal to its
  end with :class:`guandan.agents.search.RolloutPolicy` / the full heuristic, milliseconds;
* ``actions_per_rollout``.

Positions: the first decision of ``positions`` seeded deals (``Game(seed=i)``), level 2.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Any

from guandan.agents.heuristic import HeuristicAgent
from guandan.agents.search import RolloutPolicy, rollout
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
    for key, policy in (("rollout_ms", RolloutPolicy()), ("rollout_heuristic_ms", HeuristicAgent())):
        if progress:
            progress(key.replace("_ms", "s").replace("_", " "))
        total = 0.0
        n = 0
        actions = 0
        for v in views:
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
    return out
