"""Determinized search over sampled deals (name ``search``, difficulty ``hard``).

How it decides (play phase; tribute and return are left to the heuristic, R45/R47)
------------------------------------------------------------------------------------
1. **Candidates** (:func:`candidate_actions`): a short list of plays worth comparing: the
   heuristic's choice first, PASS when following (R28), the smallest bomb when following and a
   bomb is legal (R24), then the combinations of the heuristic's hand decomposition that are
   legal now (weakest first), deduplicated up to suits. A ``candidate_policy`` can replace it.
   With ``late_cards`` set (the ``hard`` level: 10), only "late" positions are searched (a
   seat still playing holds at most that many cards, :func:`is_late`) and earlier ones get the
   heuristic's move at once; a late position's list is widened with the other legal plays
   (``late_candidates``) and its rollouts use the full heuristic.
2. **Worlds**: hidden hands are sampled from the seat's view by the one world sampler
   (:class:`guandan.core.worlds.WorldConstraints`: counts, plays, tribute and return cards,
   anti-tribute jokers). World ``i`` of a decision comes from its own ``random.Random`` seeded by
   the agent's seed, the position (game, deal, actions so far, seat) and ``i``, so that a
   decision is reproducible whatever the number of worker processes. ``world_sampler``
   (:func:`world_sampler`) picks the draw: the default greedy uniform one, the exact uniform
   one, or exact draws tilted by a learned belief (``table``, ``net``; :mod:`.belief`,
   :mod:`.belief_net`, issue 23: not the default, docs/bot-strength.md). With ``belief_weight``
   > 1 a world is weighted by how many of the other seats' recent decisions the heuristic
   (``belief_model``) would have made with that world's hands (:func:`world_agreement`: the
   deal is replayed from the start of the play phase): sampled hands are uniform given the
   public record, real hands are not. With ``belief_slack`` (the belief roulette,
   :func:`_belief_weight`) a world explaining far fewer decisions than the best of the first
   worlds is rolled out only with the probability of its relative weight.
   With ``belief_moves`` (the belief chain, :func:`belief_chain`) each sampled world is instead
   moved by Metropolis card swaps towards the worlds that explain those decisions and counts
   once; with a model that reads the deal itself (:class:`~guandan.agents.fast_rollout.FastRolloutPolicy`)
   the agreement is computed seat by seat (:class:`SeatAgreement`).
3. **Rollouts**: every candidate is played out on the **same** worlds (common random numbers)
   with a fast rollout policy for all four seats (default :class:`RolloutPolicy`, the heuristic
   with a cheaper follow rule; the ``hard`` level uses
   :class:`~guandan.agents.fast_rollout.FastRolloutPolicy` in late positions, which reads the
   deal directly and is reset before every world) until the deal ends (R29-R33), or for
   ``rollout_depth`` actions and then scored by ``value_fn``. With ``solver_nodes`` (off by
   default) a world with few cards left and nobody out is first solved exactly
   (:mod:`.endgame`: the race to 头游 with every hand known) and rolled out only when the
   solver's node budget does not settle every candidate.
4. **Target**: the team of 头游 wins the deal (R35); levels are the tie-break. A rollout scores
   ``±1 ± level_weight * levels`` (levels 3/2/1 for 1-2/1-3/1-4, docs/rules.md R35) from the searching
   seat's team's side. The heuristic's choice stands unless another candidate beats it on the
   same (weighted) worlds by more than ``prior_bonus`` with ``switch_z`` standard errors of the
   paired difference to spare (over an effective number of worlds of at least ``min_worlds``,
   ``(sum w)^2 / sum w^2``): with a few dozen worlds the
   largest of several noisy means is mostly noise, and a conservative switch keeps the search
   from playing worse than its heuristic.

Budget and determinism
----------------------
* **Time mode** (default): worlds are played until ``budget_s`` seconds (``clock`` time,
  injectable for tests) have passed since the decision started; a world is counted only when
  every candidate has been played on it (anytime: the best so far is returned).
* **Rollout-count mode** (``worlds=N``): exactly ``N`` worlds per decision; the choice is then a
  pure function of the view and the seed (outcomes are summed as integers, so the order in which
  workers finish does not matter).
* **Processes**: with ``workers > 1`` (and a budget of at least ``MIN_PARALLEL_BUDGET`` seconds
  in time mode) the worlds are shared out over a process pool kept for the whole process.
* **Fallback**: any exception inside the search (or a candidate that is not legal) is counted in
  :attr:`SearchAgent.failures` and the heuristic's move is played.

Hooks for learned evaluation (difficulty ``expert``): ``rollout_policy`` (an agent acting from a
:class:`~guandan.core.views.SeatView`), ``candidate_policy`` (``(view, heuristic_move) -> list of
actions``), ``value_fn`` (``(deal, team) -> expected score in [-1 - 3w, 1 + 3w]``) with
``rollout_depth``.
"""

from __future__ import annotations

import atexit
import math
import multiprocessing
import os
import random
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from guandan.core.deal import Deal
from guandan.core.plays import BOMB_TYPES, PASS, PlayT, play_key
from guandan.core.views import SeatView
from guandan.core.worlds import WorldConstraints, world_deal

from .base import Agent
from .endgame import EndgameSolver, SolveStopped
from .heuristic import HeuristicAgent, _Ctx, _signature
from .rollouts import RolloutPolicy, RolloutStopped, deal_view, rollout
from .agreement import (
    SeatAgreement,
    belief_chain,
    past_decisions,
    world_agreement,
)

__all__ = [
    "RolloutPolicy", "RolloutStopped", "SearchAgent", "SearchStats", "SeatAgreement", "belief_chain",
    "candidate_actions", "deal_view", "is_late",
    "past_decisions", "rollout", "world_agreement", "world_sampler",
]

#: Share of the time budget kept back for choosing and answering (workers stop this early).
BUDGET_RESERVE = 0.05
#: Below this time budget (seconds) a decision is searched in-process (no worker pool).
MIN_PARALLEL_BUDGET = 0.25
#: One deal win in the integer score sums (a level counts ``level_weight * _UNITS``).
_UNITS = 1000



def candidate_actions(view: SeatView, heuristic: HeuristicAgent, first: PlayT, limit: int = 5,
                      widen: bool = False) -> list[PlayT]:
    """A short list of legal actions worth searching (module docstring, step 1).

    Args:
        view: a play-phase view of the seat to act.
        heuristic: the heuristic agent whose decomposition proposes plays.
        first: the heuristic's own choice (listed first).
        limit: most candidates returned.
        widen: after the short list, fill up to ``limit`` with the other legal actions
            (distinct up to suits; non-bombs before bombs, weakest first) — used late in a
            deal, where hands are small and rollouts short.
    Returns:
        Distinct legal actions, ``first`` first, at most ``limit``.
    """
    legal = view.legal_actions
    legal_set = set(legal)
    level = view.level
    out: list[PlayT] = []
    seen: set[Any] = set()

    def add(a: PlayT | None) -> None:
        if a is None or a not in legal_set or len(out) >= limit:
            return
        sig = _signature(a, level)
        if sig in seen:
            return
        seen.add(sig)
        out.append(a)

    add(first)
    following = view.top is not None
    if following:
        add(PASS)
        bombs = [a for a in legal if a[0] in BOMB_TYPES]
        if bombs and first[0] not in BOMB_TYPES:
            add(min(bombs, key=lambda a: (play_key(a, level), len(a[2]))))
    ctx = _Ctx(view)
    heuristic._level = level
    d = heuristic._dec(ctx.counts)
    combos = sorted(d.combos, key=lambda c: (c[0] in BOMB_TYPES, -c[4], -c.size))
    for c in combos:
        if len(out) >= limit:
            break
        if following and c[0] != view.top[0]:  # type: ignore[index]
            continue
        add(heuristic._combo_action(ctx, c, d))
    if following and len(out) < limit:
        answers = [a for a in legal if a[0] not in BOMB_TYPES and a[0] != "pass"]
        if answers:
            add(min(answers, key=lambda a: play_key(a, level)))
            add(max(answers, key=lambda a: play_key(a, level)))
    if widen and len(out) < limit:
        rest = [a for a in legal if a[0] != "pass"]  # PASS is on the short list when following
        for a in sorted(rest, key=lambda a: (a[0] in BOMB_TYPES, play_key(a, level), len(a[2]))):
            if len(out) >= limit:
                break
            add(a)
    return out


def is_late(view: SeatView, late_cards: int) -> bool:
    """Whether a play-phase position is "late": some seat still playing holds at most
    ``late_cards`` cards (R31: the first seat out decides the deal's winner, R35). Hidden
    counts (``None``) are read as more than ``late_cards`` unless the seat is finished."""
    fin = set(view.finished)
    for s, n in enumerate(view.card_counts):
        if s in fin:
            continue
        if s == view.seat:
            n = len(view.hand)
        if n is not None and n <= late_cards:
            return True
    return False


@dataclass
class SearchStats:
    """What the last search did: candidates, worlds completed, per-candidate mean scores,
    seconds spent and whether the heuristic's move was played because of a failure."""

    candidates: list[PlayT] = field(default_factory=list)
    worlds: int = 0
    means: list[float] = field(default_factory=list)
    seconds: float = 0.0
    chosen: PlayT | None = None
    fell_back: bool = False
    #: worlds scored by the exact endgame solver instead of rollouts (``solver_nodes``)
    solved: int = 0


@dataclass(frozen=True)
class _Task:
    view: SeatView
    candidates: tuple[PlayT, ...]
    seed_key: str
    offset: int  # world indices offset, offset + stride, … (below ``count`` when it is set)
    stride: int
    count: int | None
    deadline: float | None  # clock() value to stop at (time mode), None: play all indices
    level_weight_units: int
    policy: Agent
    value_fn: Callable[[Deal, int], float] | None
    rollout_depth: int | None
    belief_weight: int = 1
    belief_model: Agent | None = None
    belief_depth: int = 4
    belief_slack: int | None = None
    belief_moves: int = 0
    solver_nodes: int = 0
    solver_cards: int = 40
    world_sampler: str = "greedy"


#: Worlds whose agreements set the reference of the belief roulette (``belief_slack``).
BELIEF_PILOT = 8


def _belief_weight(task: _Task, agreement: int, ref: int, i: int) -> int:
    """Integer weight of world ``i`` with ``agreement`` explained decisions (``-1``: reject it).

    Without ``belief_slack``: ``belief_weight ** agreement``. With it, relative to the pilot's best
    agreement ``ref``: a world within ``belief_slack`` decisions of ``ref`` keeps the weight
    ``belief_weight ** (agreement - ref + slack)``; a less likely one survives with probability
    ``belief_weight ** (agreement - ref + slack)`` (< 1; drawn from the world's own seeded
    generator) and then weighs 1, else it is rejected and never rolled out. The expected weight
    of every world is the same as without the roulette, up to one constant factor, so the
    weighted means estimate the same thing while the rollouts go to the worlds that carry the
    weight.
    """
    b = task.belief_weight
    if task.belief_slack is None:
        return b ** agreement
    e = agreement - ref + task.belief_slack
    if e >= 0:
        return b ** e
    u = random.Random(f"{task.seed_key}:{i}:roulette").random()
    return 1 if u * b ** (-e) < 1.0 else -1



def _run_worlds(task: _Task, clock: Callable[[], float] = time.perf_counter) -> tuple[int, list[Any]]:
    """Play every candidate on the task's worlds; ``(worlds completed, sums)``.

    ``sums`` (length ``2 k + 3`` for ``k`` candidates): the weighted score sums of the
    candidates, the weighted sums of squared differences to candidate 0, the sum of the world
    weights, the sum of their squares and the number of worlds the endgame solver settled.
    A world's weight is ``belief_weight ** agreements`` (:func:`world_agreement`; 1 without a
    belief model), or the roulette weight of
    :func:`_belief_weight` with ``belief_slack`` (rejected worlds count as completed but add
    nothing to the sums). Scores are integers in thousandths of
    a win (``win * 1000 + levels * units``) unless a value function is used, so that sums do not
    depend on the order worlds are played in or on how they are shared out between processes.
    """
    view = task.view
    cons = WorldConstraints(view)
    sample = world_sampler(task.world_sampler, view, cons)
    team = view.seat & 1
    k = len(task.candidates)
    sums: list[Any] = [0] * (2 * k + 3)
    done = 0
    units = _UNITS
    deadline = task.deadline
    stop = None if deadline is None else (lambda: clock() >= deadline)
    checks = past_decisions(view, task.belief_depth) if task.belief_model is not None and task.belief_weight > 1 else ()
    ref = 0
    if checks and task.belief_slack is not None:
        # the reference agreement: the best of the first worlds (the same for every worker)
        ref = max(world_agreement(view, sample(random.Random(f"{task.seed_key}:{j}")), checks,
                                  task.belief_model)  # type: ignore[arg-type]
                  for j in range(BELIEF_PILOT if task.count is None else min(BELIEF_PILOT, task.count)))
    reset = getattr(task.policy, "reset", None)
    # the exact endgame solver: only before anyone is out (the race to 头游, R33/R35) and when few
    # enough cards are left (the same for every world of the decision, so every worker agrees)
    counts = [len(view.hand) if s == view.seat else c for s, c in enumerate(view.card_counts)]
    solve_here = (task.solver_nodes > 0 and not view.finished and None not in counts
                  and sum(counts) <= task.solver_cards)  # type: ignore[arg-type]
    order = getattr(task.policy, "act_deal", None)
    solved_win = units + task.level_weight_units
    i = task.offset - task.stride
    while True:
        i += task.stride
        if task.count is not None and i >= task.count:
            break
        if task.deadline is not None and clock() >= task.deadline:
            break
        rng = random.Random(f"{task.seed_key}:{i}")
        world = sample(rng)
        w = 1
        if checks and task.belief_moves > 0:
            assert task.belief_model is not None
            world, _agree = belief_chain(cons, world, view, checks, task.belief_model, task.belief_weight,
                                         task.belief_moves, rng)
        base = world_deal(view, world)
        if checks and task.belief_moves <= 0:
            assert task.belief_model is not None
            w = _belief_weight(task, world_agreement(view, world, checks, task.belief_model), ref, i)
            if w < 0:  # rejected by the roulette: no rollouts
                done += 1
                continue
        row: list[Any] = []
        aborted = False
        if reset is not None:
            reset()  # a policy's memory must not carry over from world to world (determinism)
        if solve_here:
            try:
                exact = EndgameSolver(base.clone(), order, stop).solve_actions(
                    team, task.candidates, task.solver_nodes)
            except SolveStopped:
                break
            if None not in exact:
                # the exact winner under best play; the levels are a fixed 1-4 tie-break (the
                # solver decides 头游 only, R35), so candidates that win the same worlds tie
                row = [solved_win if v else -solved_win for v in exact]
                sums[2 * k + 2] += 1
            if reset is not None:
                reset()
        rollouts = () if row else task.candidates  # a world settled by the solver needs none
        for c in rollouts:
            d = base.clone()
            d.apply_unchecked(c)
            try:
                r = rollout(d, task.policy, team, task.level_weight_units, task.value_fn,
                            task.rollout_depth, stop)
            except RolloutStopped:
                aborted = True
                break
            if isinstance(r, tuple):
                row.append(r[0] * units + r[1])
            else:
                row.append(r * units)
        if aborted:
            break
        for j in range(k):
            sums[j] += w * row[j]
            sums[k + j] += w * (row[j] - row[0]) ** 2
        sums[2 * k] += w
        sums[2 * k + 1] += w * w
        done += 1
    return done, sums


_POOLS: dict[int, ProcessPoolExecutor] = {}


def _pool(workers: int) -> ProcessPoolExecutor:
    """The process-wide pool of ``workers`` processes (created on first use).

    ``fork`` when this process runs a single thread (no re-import of the caller's main module,
    so scripts without a ``__main__`` guard work), else ``forkserver`` or ``spawn`` (forking a
    threaded process, e.g. a web server, can deadlock).
    """
    pool = _POOLS.get(workers)
    if pool is None:
        methods = multiprocessing.get_all_start_methods()
        if "fork" in methods and threading.active_count() == 1:
            method = "fork"
        else:
            method = "forkserver" if "forkserver" in methods else "spawn"
        pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context(method))
        _POOLS[workers] = pool
    return pool


def _drop_pool(workers: int) -> None:
    pool = _POOLS.pop(workers, None)
    if pool is not None:
        pool.shutdown(wait=False, cancel_futures=True)


@atexit.register
def _shutdown_pools() -> None:
    for pool in _POOLS.values():
        pool.shutdown(wait=True, cancel_futures=True)
    _POOLS.clear()


#: The world samplers of :func:`world_sampler` (``SearchAgent(world_sampler=...)``).
WORLD_SAMPLERS = ("greedy", "exact", "table", "net")
_PRIORS: dict[str, Any] = {}


def world_sampler(kind: str, view: SeatView, cons: WorldConstraints) -> Callable[[random.Random], Any]:
    """The draw of one world for a decision: ``greedy`` (:meth:`WorldConstraints.sample`),
    ``exact`` (exact uniform, :meth:`WorldConstraints.exact`), ``table`` (exact, tilted by the
    shipped counted prior :class:`~guandan.agents.belief.TablePrior`) or ``net`` (exact, tilted
    by the shipped belief network :class:`~guandan.agents.belief_net.NetPrior`); the priors are
    loaded once per process, NumPy only. Every draw keeps every hard fact of the view (R4, R31, R32, R44-R50).

    Raises:
        ValueError: an unknown ``kind``.
    """
    if kind == "greedy":
        return cons.sample
    if kind == "exact":
        return cons.exact().sample
    if kind in ("table", "net"):
        prior = _PRIORS.get(kind)
        if prior is None:
            from .belief import TablePrior
            from .belief_net import NetPrior

            prior = _PRIORS[kind] = TablePrior.load() if kind == "table" else NetPrior.load()
        return cons.exact(prior.weights(view, cons)).sample
    raise ValueError(f"unknown world sampler {kind!r} (one of {', '.join(WORLD_SAMPLERS)})")


#: Longest time budget per decision (seconds) a search agent accepts: an hour.
MAX_BUDGET_S = 3600.0


class SearchAgent:
    """Determinized search bot (name ``search``; see the module docstring).

    Args:
        seed: seed of the world sampling (the same seed and view give the same worlds).
        budget_s: seconds per decision in time mode (default 1.0); must be > 0 and at most
            :data:`MAX_BUDGET_S` (``inf`` would never decide).
        worlds: rollout-count mode: exactly this many worlds per decision (``None``: time mode).
        workers: worker processes (1: search in this process).
        max_candidates: most candidate actions compared (>= 1).
        level_weight: weight of one level against a deal win (R35 tie-break), 0..0.3.
        prior_bonus: margin (mean score units, a deal win = 1) another candidate must beat the
            heuristic's choice by, on the same worlds.
        switch_z: standard errors of the paired difference that margin must hold with.
        min_worlds: fewest worlds before the heuristic's choice can be overruled.
        rollout_policy: agent used for all seats in rollouts (default :class:`RolloutPolicy`).
        candidate_policy: ``(view, heuristic_move) -> actions`` replacing :func:`candidate_actions`.
        value_fn: ``(deal, team) -> score`` used after ``rollout_depth`` actions of a rollout.
        rollout_depth: rollout length before ``value_fn`` (needs ``value_fn``).
        clock: time source in seconds (tests inject a fake one).
        late_cards: search only "late" positions (:func:`is_late`: a seat still playing holds
            at most this many cards) and play the heuristic's move instantly before; ``None``:
            search every position.
        late_candidates: most candidates in a late position (the short list widened with the
            other legal actions, :func:`candidate_actions`).
        late_rollout_policy: rollout policy in late positions (default: the full heuristic,
            so that the heuristic's own move is scored by the policy that would play on).
        belief_weight: integer factor a sampled world's weight is multiplied by for each
            recent decision of the other seats that ``belief_model`` would have made with that
            world's hands (:func:`world_agreement`); 1: worlds are equally likely.
        belief_model: the model of the other players (default: the heuristic).
        belief_depth: recent decisions per other seat asked (:func:`past_decisions`).
        belief_slack: belief roulette (:func:`_belief_weight`): worlds explaining more than this
            many fewer decisions than the best of the first :data:`BELIEF_PILOT` worlds are
            rolled out only with probability ``belief_weight ** -excess`` (and then weigh as a
            world at the slack), so rollouts go to the worlds that carry the weight; ``None``:
            every world is rolled out with its full weight.
        belief_moves: belief chain (:func:`belief_chain`): each sampled world is moved by this
            many Metropolis proposals (card swaps between other seats) towards the worlds that
            explain the other seats' decisions (law ``belief_weight ** agreement``), and then
            counts once; 0: importance weights instead.
        solver_nodes: exact endgame solver (:mod:`.endgame`) per sampled world: before anyone is
            out and with at most ``solver_cards`` cards left in all, each world is first solved
            for every candidate within this many nodes in all; when every candidate is settled
            the world scores the exact winner of the race to 头游 (±1 deal plus a fixed one-level
            tie-break, R35) and no rollout is played, else it is rolled out as usual. 0: off.
            In time mode the solver's nodes spend the same budget as the rollouts: with a large
            node budget at positions it cannot settle (an unsettled world costs the whole node
            budget, about 2.5 s at 20,000 nodes), a decision may end with few or no worlds and
            keep the heuristic's move; use a small budget (e.g. 2,000) or ``worlds=N``.
        solver_cards: most cards left in all (the four hands) for the solver to be tried.
        world_sampler: how worlds are drawn (:func:`world_sampler`): ``greedy`` (the default,
            :meth:`WorldConstraints.sample`), ``exact`` (exact uniform draws by rank groups,
            :meth:`WorldConstraints.exact`), ``table`` (exact draws tilted by the counted
            belief prior, :class:`~guandan.agents.belief.TablePrior`) or ``net`` (tilted by the
            belief network, :class:`~guandan.agents.belief_net.NetPrior`).
    Raises:
        ValueError: a bad budget, world count, worker count or candidate limit.
    """

    name = "search"

    def __init__(
        self,
        seed: int | None = None,
        budget_s: float = 1.0,
        worlds: int | None = None,
        workers: int = 1,
        max_candidates: int = 5,
        level_weight: float = 0.05,
        prior_bonus: float = 0.02,
        switch_z: float = 2.0,
        min_worlds: int = 4,
        rollout_policy: Agent | None = None,
        candidate_policy: Callable[[SeatView, PlayT], Sequence[PlayT]] | None = None,
        value_fn: Callable[[Deal, int], float] | None = None,
        rollout_depth: int | None = None,
        clock: Callable[[], float] = time.perf_counter,
        late_cards: int | None = None,
        late_candidates: int = 8,
        late_rollout_policy: Agent | None = None,
        belief_weight: int = 1,
        belief_model: Agent | None = None,
        belief_depth: int = 4,
        belief_slack: int | None = None,
        belief_moves: int = 0,
        solver_nodes: int = 0,
        solver_cards: int = 40,
        world_sampler: str = "greedy",
    ) -> None:
        if not 0 < budget_s <= MAX_BUDGET_S:
            raise ValueError(f"budget_s must be > 0 and at most {MAX_BUDGET_S:g} seconds, not {budget_s!r}")
        if worlds is not None and (isinstance(worlds, bool) or not isinstance(worlds, int) or worlds < 1):
            raise ValueError(f"worlds must be a positive int or None, not {worlds!r}")
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise ValueError(f"workers must be a positive int, not {workers!r}")
        if max_candidates < 1:
            raise ValueError(f"max_candidates must be >= 1, not {max_candidates!r}")
        if not 0 <= level_weight <= 0.3:
            raise ValueError(f"level_weight must be in [0, 0.3], not {level_weight!r}")
        if late_cards is not None and (isinstance(late_cards, bool) or late_cards < 0):
            raise ValueError(f"late_cards must be >= 0 or None, not {late_cards!r}")
        if isinstance(belief_weight, bool) or not isinstance(belief_weight, int) or belief_weight < 1:
            raise ValueError(f"belief_weight must be an int >= 1, not {belief_weight!r}")
        if belief_slack is not None and (isinstance(belief_slack, bool) or not isinstance(belief_slack, int)
                                         or belief_slack < 0):
            raise ValueError(f"belief_slack must be an int >= 0 or None, not {belief_slack!r}")
        if isinstance(belief_moves, bool) or not isinstance(belief_moves, int) or belief_moves < 0:
            raise ValueError(f"belief_moves must be an int >= 0, not {belief_moves!r}")
        if isinstance(solver_nodes, bool) or not isinstance(solver_nodes, int) or solver_nodes < 0:
            raise ValueError(f"solver_nodes must be an int >= 0, not {solver_nodes!r}")
        if isinstance(solver_cards, bool) or not isinstance(solver_cards, int) or solver_cards < 0:
            raise ValueError(f"solver_cards must be an int >= 0, not {solver_cards!r}")
        if world_sampler not in WORLD_SAMPLERS:
            raise ValueError(f"world_sampler must be one of {', '.join(WORLD_SAMPLERS)}, not {world_sampler!r}")
        if late_candidates < 1:
            raise ValueError(f"late_candidates must be >= 1, not {late_candidates!r}")
        if rollout_depth is not None and value_fn is None:
            raise ValueError("rollout_depth needs a value_fn")
        self.seed = 0 if seed is None else seed
        self.budget_s = float(budget_s)
        self.worlds = worlds
        self.workers = workers
        self.max_candidates = max_candidates
        self.level_units = round(level_weight * _UNITS)
        self.prior_bonus = prior_bonus
        self.switch_z = switch_z
        self.min_worlds = min_worlds
        self.heuristic = HeuristicAgent(seed)
        self.rollout_policy: Agent = rollout_policy if rollout_policy is not None else RolloutPolicy(seed)
        self.candidate_policy = candidate_policy
        self.value_fn = value_fn
        self.rollout_depth = rollout_depth
        self.clock = clock
        self.late_cards = late_cards
        self.late_candidates = late_candidates
        self.late_rollout_policy: Agent = (
            late_rollout_policy if late_rollout_policy is not None else HeuristicAgent(seed))
        self.belief_weight = belief_weight
        self.belief_model: Agent = belief_model if belief_model is not None else HeuristicAgent(seed)
        self.belief_depth = belief_depth
        self.belief_slack = belief_slack
        self.belief_moves = belief_moves
        self.solver_nodes = solver_nodes
        self.solver_cards = solver_cards
        self.world_sampler = world_sampler
        #: decisions answered by the heuristic without search (early positions, ``late_cards``)
        self.skipped = 0
        #: decisions that fell back to the heuristic because the search failed
        self.failures = 0
        #: the last failure, ``"ExceptionType: message"`` (``None`` before any)
        self.last_error: str | None = None
        self.last = SearchStats()
        #: decisions whose worker pool failed (searched in this process instead)
        self.pool_failures = 0
        #: worlds completed by each searched decision (for reports: how much search a budget buys)
        self.worlds_log: list[int] = []

    def act(self, view: SeatView) -> PlayT:
        """Choose one of ``view.legal_actions`` (module docstring).

        Raises:
            ValueError: the view offers no legal action.
        """
        legal = view.legal_actions
        if not legal:
            raise ValueError(f"seat {view.seat} has no legal action")
        start = self.clock()
        first = self.heuristic.act(view)
        if len(legal) == 1 or view.phase != "play":
            self.last = SearchStats([first], 0, [], 0.0, first)
            return first
        if self.late_cards is not None and not is_late(view, self.late_cards):
            self.skipped += 1
            self.last = SearchStats([first], 0, [], self.clock() - start, first)
            return first
        try:
            choice = self._search(view, first, start)
            if choice not in legal:
                raise RuntimeError(f"search chose an illegal action {choice!r}")
            return choice
        except Exception as e:  # noqa: BLE001 - any failure: play the heuristic's move
            self.failures += 1
            self.last_error = f"{type(e).__name__}: {e}"
            self.last = SearchStats([first], 0, [], self.clock() - start, first, fell_back=True)
            return first

    def _select(self, sums: list[Any], k: int, done: int) -> int:
        """Index of the chosen candidate: the heuristic's move (0) unless another one beats it on
        the same worlds by more than ``prior_bonus`` with ``switch_z`` standard errors to spare
        (weighted paired differences over the effective number of worlds ``(sum w)^2 / sum w^2``,
        which must be at least ``min_worlds``). ``sums`` is laid out as :func:`_run_worlds` returns it."""
        if done < self.min_worlds:
            return 0
        wsum, w2 = sums[2 * k], sums[2 * k + 1]
        if wsum <= 0:
            return 0
        n_eff = wsum * wsum / w2
        if n_eff < self.min_worlds:
            return 0
        best, best_d = 0, 0.0
        for j in range(1, k):
            d = (sums[j] - sums[0]) / wsum
            var = max(0.0, sums[k + j] / wsum - d * d)
            se = math.sqrt(var / n_eff)
            if d - self.switch_z * se > self.prior_bonus * _UNITS and d > best_d:
                best, best_d = j, d
        return best

    def _parallel(self, view: SeatView, cands: list[PlayT], seed_key: str,
                  deadline: float | None) -> tuple[int, list[Any]] | None:
        return _parallel_worlds(self, view, cands, seed_key, deadline)

    def _late(self, view: SeatView) -> bool:
        return self.late_cards is not None and is_late(view, self.late_cards)

    def _candidates(self, view: SeatView, first: PlayT) -> list[PlayT]:
        late = self._late(view)
        limit = max(self.max_candidates, self.late_candidates) if late else self.max_candidates
        if self.candidate_policy is not None:
            cands = [a for a in self.candidate_policy(view, first) if a in view.legal_actions]
            if first not in cands:
                cands.insert(0, first)
            if late:
                for a in candidate_actions(view, self.heuristic, first, limit, widen=True):
                    if a not in cands:
                        cands.append(a)
            return cands[:limit]
        return candidate_actions(view, self.heuristic, first, limit, widen=late)

    def _policy(self, view: SeatView) -> Agent:
        return self.late_rollout_policy if self._late(view) else self.rollout_policy

    def _search(self, view: SeatView, first: PlayT, start: float) -> PlayT:
        cands = self._candidates(view, first)
        if len(cands) <= 1:
            self.last = SearchStats(cands, 0, [], self.clock() - start, first)
            return first
        seed_key = f"{self.seed}:{view.game_number}:{view.deal_number}:{len(view.history)}:{view.seat}"
        # stop searching a little early: collecting the answer takes time too
        deadline = None if self.worlds is not None else start + self.budget_s * (1.0 - BUDGET_RESERVE)
        parallel = self.workers > 1 and (self.worlds is not None or self.budget_s >= MIN_PARALLEL_BUDGET)
        result = self._parallel(view, cands, seed_key, deadline) if parallel else None
        if result is None:  # in this process (also when the pool broke)
            task = _Task(view, tuple(cands), seed_key, 0, 1, self.worlds, deadline,
                         self.level_units, self._policy(view), self.value_fn, self.rollout_depth,
                         self.belief_weight, self.belief_model, self.belief_depth,
                         self.belief_slack, self.belief_moves, self.solver_nodes, self.solver_cards,
                         self.world_sampler)
            result = _run_worlds(task, self.clock)
        done, sums = result
        if done == 0 or sums[2 * len(cands)] == 0:  # no world (or every world rejected)
            self.worlds_log.append(0)
            self.last = SearchStats(cands, 0, [], self.clock() - start, first)
            return first
        self.worlds_log.append(done)
        k = len(cands)
        means = [s / (_UNITS * sums[2 * k]) for s in sums[:k]]
        best = self._select(sums, k, done)
        self.last = SearchStats(cands, done, means, self.clock() - start, cands[best], solved=sums[2 * k + 2])
        return cands[best]


def _parallel_worlds(agent: SearchAgent, view: SeatView, cands: list[PlayT], seed_key: str,
                     deadline: float | None) -> tuple[int, list[Any]] | None:
    """Share the worlds out over the pool; ``None`` when the pool cannot be used (then the
    pool is dropped and the caller searches in its own process)."""
    from concurrent.futures.process import BrokenProcessPool

    # the workers stop by wall-clock time: their clocks are their own
    wall_deadline = None if deadline is None else time.time() + (deadline - agent.clock())
    try:
        pool = _pool(agent.workers)
        futures = [
            pool.submit(
                _run_worlds_wall,
                _Task(view, tuple(cands), seed_key, w, agent.workers, agent.worlds, wall_deadline,
                      agent.level_units, agent._policy(view), agent.value_fn, agent.rollout_depth,
                      agent.belief_weight, agent.belief_model, agent.belief_depth,
                      agent.belief_slack, agent.belief_moves, agent.solver_nodes, agent.solver_cards,
                      agent.world_sampler),
            )
            for w in range(agent.workers)
        ]
        done, sums = 0, [0] * (2 * len(cands) + 3)
        for fut in futures:
            d, part = fut.result()
            done += d
            sums = [a + b for a, b in zip(sums, part)]
        return done, sums
    except (BrokenProcessPool, OSError, RuntimeError):
        agent.pool_failures += 1
        _drop_pool(agent.workers)
        return None


def _run_worlds_wall(task: _Task) -> tuple[int, list[Any]]:
    return _run_worlds(task, time.time)


def default_workers() -> int:
    """Worker processes for the ``hard`` level: 2 when the machine has 2 or more cores, else 1."""
    return 2 if (os.cpu_count() or 1) >= 2 else 1
