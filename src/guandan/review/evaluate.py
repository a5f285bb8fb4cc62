"""The review's evaluation of one decision (复盘, issue 22): two views of the same candidates.

**What the seat could see** (:func:`assess_view`) takes a :class:`~guandan.core.views.SeatView`
and nothing else, so it cannot read the other seats' hidden cards: worlds (hidden hands) are
sampled from the view by the project's one sampler (:class:`guandan.core.worlds.WorldConstraints`:
counts, cards played, tribute and return cards, anti-tribute jokers; R32, R45-R50), optionally
weighted by how many of the other seats' recent decisions the heuristic would have made with
those hands (the ``hard`` bot's belief weighting, :func:`guandan.agents.search.world_agreement`).
Every candidate is played on the **same** worlds (common random numbers, as the ``hard`` bot
does) and the rest of the deal is rolled out by the fast rollout policy for all four seats
(:class:`guandan.agents.fast_rollout.FastRolloutPolicy`, :func:`guandan.agents.search.rollout`).
A candidate's estimate is the share of worlds its side wins (the team of 头游 wins the deal, R35)
and the mean result in the board's units (:func:`guandan.duplicate.boards.side_result`: levels
``±3/±2/±1`` with the preset's upgrade table, or Anhui points).

**What would have won** (:func:`assess_real`) takes the real deal (every hand) at that moment:
with few enough cards left and nobody out, the exact solver (:mod:`guandan.agents.endgame`)
says whether the side gets 头游 under best play by both teams; otherwise, and for the result's
size, one rollout on the real hands by the same policy (deterministic).

Both are pure functions of their inputs and the seed in world-count mode (``Budget.seconds`` is
``None``); a time cap makes the first view depend on the machine's speed.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from guandan.agents.fast_rollout import FastRolloutPolicy
from guandan.agents.heuristic import HeuristicAgent
from guandan.agents.search import candidate_actions, past_decisions, rollout, world_agreement
from guandan.core.cards import FACE_RANK
from guandan.core.deal import PLAY, Deal
from guandan.core.plays import PASS_TYPE, PlayT
from guandan.core.rules import RuleSet
from guandan.core.views import SeatView
from guandan.core.worlds import WorldConstraints, world_deal

__all__ = ["Budget", "Estimate", "ViewAssessment", "assess_real", "assess_view", "review_candidates",
           "same_play", "LEVEL_WEIGHT"]

#: Weight of one unit of result (a level) against a deal win when choosing the best move (the
#: search's tie-break, R35).
LEVEL_WEIGHT = 0.05
_CODE = {3: 0, 2: 1, 1: 2}  # rollout level magnitude (official table) -> index of 1-2/1-3/1-4
_ANHUI = (4, 2, 1)  # section 2.1: points per seat for 1-2 / 1-3 / 1-4


@dataclass(frozen=True)
class Budget:
    """How much work one decision gets.

    Attributes:
        worlds: sampled worlds per decision (first view); every candidate is played on each.
        candidates: most moves compared per decision, the move played included.
        seconds: optional cap per decision on the first view's sampling (``None``: none, the
            review is then a pure function of record, seat, budget and seed).
        belief: weight factor per recent decision of the other seats a world explains (4, as
            the ``hard`` bot); 1: every consistent world weighs the same.
        solver_nodes: node budget of the exact solver on the real hands (0: rollouts only).
        solver_cards: most cards left in all for the solver to be tried.
    Raises:
        ValueError: a value out of range.
    """

    worlds: int = 40
    candidates: int = 6
    seconds: float | None = None
    belief: int = 4
    solver_nodes: int = 3000
    solver_cards: int = 40

    def __post_init__(self) -> None:
        for name in ("worlds", "candidates", "belief"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"budget {name} must be an int >= 1, not {v!r}")
        for name in ("solver_nodes", "solver_cards"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise ValueError(f"budget {name} must be an int >= 0, not {v!r}")
        if self.seconds is not None and not (isinstance(self.seconds, (int, float)) and 0 < self.seconds <= 3600):
            raise ValueError(f"budget seconds must be in (0, 3600] or None, not {self.seconds!r}")

    def to_json(self) -> dict[str, Any]:
        """The budget's fields as a JSON object."""
        return asdict(self)

    @classmethod
    def parse(cls, spec: str) -> Budget:
        """``"worlds=24,candidates=6,seconds=2,belief=4,solver=3000,solver_cards=40"`` (any
        subset, the rest default; ``""`` is the default budget).

        Raises:
            ValueError: an unknown key or a bad value.
        """
        keys = {"worlds": ("worlds", int), "candidates": ("candidates", int), "seconds": ("seconds", float),
                "belief": ("belief", int), "solver": ("solver_nodes", int), "solver_cards": ("solver_cards", int)}
        kw: dict[str, Any] = {}
        for item in spec.split(","):
            if not item.strip():
                continue
            k, eq, v = item.partition("=")
            k = k.strip()
            if not eq or k not in keys:
                raise ValueError(f"bad budget item {item.strip()!r}; keys: {', '.join(keys)}")
            name, typ = keys[k]
            try:
                kw[name] = typ(v.strip())
            except ValueError:
                raise ValueError(f"budget {k} needs a {typ.__name__}, not {v.strip()!r}") from None
        return cls(**kw)


@dataclass(frozen=True)
class Estimate:
    """One move's estimate.

    Attributes:
        win: probability that the seat's side wins the deal (takes 头游, R35), 0..1.
        levels: expected result for the seat's side (:func:`~guandan.duplicate.boards.side_result`
            units); ``None`` when unknown (a solved loss or win whose rollout disagreed).
        n: worlds behind the estimate (1 on the real hands).
        method: ``"worlds"`` (sampled worlds), ``"rollout"`` or ``"solved"`` (real hands).
    """

    win: float
    levels: float | None
    n: int
    method: str

    def to_json(self) -> dict[str, Any]:
        """``{"win", "levels", "n", "method"}`` with floats rounded to 4 places."""
        return {"win": round(self.win, 4), "levels": None if self.levels is None else round(self.levels, 4),
                "n": self.n, "method": self.method}


def result_value(rules: RuleSet, win: int, magnitude: int) -> int:
    """A rollout's outcome in result units: ``win`` ±1, ``magnitude`` 3/2/1 for 1-2/1-3/1-4 (the
    official table :func:`guandan.agents.search.rollout` reports); the preset's upgrade (R35) or
    Anhui points (section 2.1), signed for the side."""
    idx = _CODE[abs(magnitude)]
    unit = _ANHUI[idx] if rules.points else rules.upgrade[idx]
    return unit if win > 0 else -unit


def same_play(a: PlayT, b: PlayT, level: int) -> bool:
    """Whether two actions do the same up to suits: same type, rank and card ranks (the wild,
    the ♥ of the level rank R8, counted apart). Straight flushes keep their suit."""
    if a == b:
        return True
    if a[0] != b[0] or a[1] != b[1] or a[0] in (PASS_TYPE, "straight_flush"):
        return False
    wild = level * 4 + 1

    def ranks(p: PlayT) -> list[int]:
        return sorted(99 if f == wild else FACE_RANK[f] for f in p[2])

    return ranks(a) == ranks(b)


def review_candidates(view: SeatView, played: PlayT, limit: int, heuristic: HeuristicAgent | None = None) -> list[PlayT]:
    """The moves compared at a decision, from the view alone: the move played first, then the
    heuristic's choice, a play that goes out at once (R31) if there is one, then the search's
    short list widened with the other legal plays (:func:`guandan.agents.search.candidate_actions`),
    distinct up to suits (:func:`same_play`), at most ``limit`` (>= 1).

    Raises:
        ValueError: ``played`` is not one of the view's legal actions.
    """
    legal = view.legal_actions
    if played not in legal:
        raise ValueError(f"the move played {played!r} is not a legal action of the view")
    h = heuristic or HeuristicAgent(0)
    first = h.act(view)
    out = [played]

    def add(a: PlayT) -> None:
        if len(out) < limit and not any(same_play(a, b, view.level) for b in out):
            out.append(a)

    add(first)
    n = len(view.hand)
    for a in legal:
        if a[0] != PASS_TYPE and len(a[2]) == n:
            add(a)
            break
    for a in candidate_actions(view, h, first, max(limit, 2), widen=True):
        add(a)
    return out


@dataclass(frozen=True)
class ViewAssessment:
    """The first view's estimates of a decision's candidates (aligned with ``candidates``).

    Attributes:
        candidates: the moves (the move played first).
        estimates: one :class:`Estimate` each.
        worlds: worlds played (every candidate on each).
        z: per candidate, standard errors of its paired win-rate difference to the move played
            (over the effective number of worlds); 0 for the move played.
    """

    candidates: tuple[PlayT, ...]
    estimates: tuple[Estimate, ...]
    worlds: int
    z: tuple[float, ...]


def assess_view(view: SeatView, candidates: Sequence[PlayT], budget: Budget, seed_key: str) -> ViewAssessment:
    """Estimate each candidate on worlds consistent with ``view`` (module docstring).

    Args:
        view: the deciding seat's view (play phase, the seat to act). Nothing else is read.
        candidates: legal actions of the view (the move played first).
        budget: worlds, optional time cap, belief weighting.
        seed_key: the decision's seed (world ``i`` uses ``random.Random(f"{seed_key}:{i}")``).
    Raises:
        ValueError: the view is not a play-phase view of the seat to act, or a candidate is not legal.
        InconsistentView: the view admits no deal (never for a real game's view).
    """
    if view.phase != PLAY or view.to_act != view.seat:
        raise ValueError("assess_view needs a play-phase view of the seat to act")
    cands = tuple(candidates)
    if not cands or any(c not in view.legal_actions for c in cands):
        raise ValueError("every candidate must be a legal action of the view")
    cons = WorldConstraints(view)
    team = view.seat & 1
    policy = FastRolloutPolicy()
    model = FastRolloutPolicy(dec_budget=400, max_eval=6, incremental=False) if budget.belief > 1 else None
    checks = past_decisions(view, 4) if model is not None else ()
    k = len(cands)
    win = [0.0] * k
    lev = [0.0] * k
    d2 = [0.0] * k
    wsum = w2sum = 0.0
    done = 0
    start = time.perf_counter()
    for i in range(budget.worlds):
        if budget.seconds is not None and done >= 4 and time.perf_counter() - start >= budget.seconds:
            break
        rng = random.Random(f"{seed_key}:{i}")
        world = cons.sample(rng)
        w = 1.0
        if model is not None and checks:
            w = float(budget.belief ** world_agreement(view, world, checks, model))
        base = world_deal(view, world)
        row_w: list[int] = []
        for j, c in enumerate(cands):
            d = base.clone()
            d.apply_unchecked(c)
            policy.reset()
            r = rollout(d, policy, team, 1)
            assert isinstance(r, tuple)
            row_w.append(1 if r[0] > 0 else 0)
            win[j] += w * row_w[-1]
            lev[j] += w * result_value(view.rules, r[0], r[1])
        for j in range(k):
            d2[j] += w * (row_w[j] - row_w[0]) ** 2
        wsum += w
        w2sum += w * w
        done += 1
    if wsum <= 0:
        raise RuntimeError("no world was played")
    n_eff = wsum * wsum / w2sum
    ests = tuple(Estimate(win[j] / wsum, lev[j] / wsum, done, "worlds") for j in range(k))
    zs = []
    for j in range(k):
        diff = ests[j].win - ests[0].win
        var = max(0.0, d2[j] / wsum - diff * diff)
        se = math.sqrt(var / n_eff)
        zs.append(0.0 if j == 0 or diff == 0 else (math.copysign(math.inf, diff) if se == 0 else diff / se))
    return ViewAssessment(cands, ests, done, tuple(zs))


def assess_real(deal: Deal, seat: int, candidates: Sequence[PlayT], budget: Budget) -> tuple[Estimate, ...]:
    """Evaluate each candidate on the real hands (module docstring): the exact solver's verdict
    on 头游 when it settles the position within ``budget.solver_nodes``, else one rollout of the
    fast policy for all four seats; the result's size from that rollout.

    Args:
        deal: the real deal just before the decision (play phase, ``seat`` to act); not changed.
        seat: the deciding seat.
        candidates: legal actions of that seat now.
        budget: the solver's node budget and card limit.
    Raises:
        ValueError: the deal is not at ``seat``'s play-phase decision.
    """
    if deal.phase != PLAY or deal.turn != seat:
        raise ValueError("assess_real needs the deal at the seat's play-phase decision")
    from guandan.agents.endgame import EndgameSolver

    team = seat & 1
    policy = FastRolloutPolicy()
    solved: list[bool | None] = [None] * len(candidates)
    if (budget.solver_nodes > 0 and not deal.finished and min(deal.n_cards) > 0
            and sum(deal.n_cards) <= budget.solver_cards):
        solved = EndgameSolver(deal.clone(), FastRolloutPolicy().act_deal).solve_actions(
            team, list(candidates), budget.solver_nodes)
    out: list[Estimate] = []
    for c, exact in zip(candidates, solved):
        d = deal.clone()
        d.apply_unchecked(c)
        policy.reset()
        r = rollout(d, policy, team, 1)
        assert isinstance(r, tuple)
        value = result_value(deal.rules, r[0], r[1])
        if exact is None:
            out.append(Estimate(1.0 if r[0] > 0 else 0.0, float(value), 1, "rollout"))
        else:
            agrees = (r[0] > 0) == exact
            out.append(Estimate(1.0 if exact else 0.0, float(value) if agrees else None, 1, "solved"))
    return tuple(out)
