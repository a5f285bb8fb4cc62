"""The ``expert`` level: determinized search (:mod:`guandan.agents.search`) with the learned
networks (:mod:`guandan.agents.nets`).

What the networks change in the search bot
------------------------------------------
* **Value network cuts rollouts short** (``depth=N``, off by default): a rollout plays
  ``rollout_depth`` actions with the rollout policy and is then scored by the value network on
  the sampled full deal (:class:`NetValueFn`), instead of being played to the end of the deal
  (R33). A short rollout is cheaper, so more sampled deals fit in the time budget, and the
  network's expected outcome has less variance than one playout's ±1. It was the default
  (``depth=12``) until 2026-12-03 and is off now (:data:`DEFAULT_DEPTH` = 0: full rollouts)
  because it measured worse than full rollouts on the same deals: against ``heuristic``, arena
  seed 22, 100 boards at 32 worlds, ``depth=12`` won 46.5% of 200 deals and ``depth=0`` 52.5%,
  ``depth=0`` ahead on 20 of the 28 boards where they differ (sign test p = 0.036); against
  no-ai and njupt ``hard`` (full rollouts) led it 6 to 2 and 6 to 5 on the same deals
  (README "Bot strength", ``docs/bot-strength.md``).
* **Policy network widens the candidates** (:class:`PolicyCandidates`): the search bot's own
  short list (the heuristic's choice, PASS, the smallest bomb, the decomposition's plays) plus
  the policy network's best actions that are not already on it, up to ``max_candidates``.
* **Rollout policy**: ``rollout="fast"`` (default: the ``hard`` level's fast rollout policy,
  :class:`~guandan.agents.fast_rollout.FastRolloutPolicy`, in late positions, with its fast
  model of the other players for the belief weighting), ``rollout="heuristic"`` (the full
  heuristic, the settings before commit 9993b9d, 2026-12-02) or ``rollout="policy"`` (the
  policy network for all four seats).

Score scale: :class:`NetValueFn` returns ``(2 p - 1) + level_weight * 3 * s`` where ``p`` is
the predicted probability that the searching team gets 头游 and ``s`` its expected signed
level change / 3 (R35) — the same scale as a finished rollout's ``±1 ± level_weight * levels``.

Both callables are picklable without their weights (workers load the shipped or given
``.npz`` once per process), so the search bot's process pool can use them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from guandan.core.deal import Deal
from guandan.core.plays import PlayT
from guandan.core.views import SeatView

from .nets import PolicyAgent, PolicyNet, ValueNet, encode_state

#: Rollout actions before the value network scores the position; 0: full rollouts, no value
#: network (the default since 2026-12-03: ``depth=12``, about one round of tricks, measured worse).
DEFAULT_DEPTH = 0
#: Candidates the policy network may add to the search bot's list.
POLICY_EXTRA = 2

_NETS: dict[tuple[str, str], Any] = {}


def _load(kind: str, path: str | None) -> Any:
    key = (kind, path or "")
    net = _NETS.get(key)
    if net is None:
        net = ValueNet.load(path) if kind == "value" else PolicyNet.load(path)
        _NETS[key] = net
    return net


class NetValueFn:
    """``value_fn(deal, team) -> float`` for :class:`~guandan.agents.search.SearchAgent`.

    The point of view is the seat to act when it belongs to ``team``, else the next seat (the
    two points of view the value network was trained on).

    Args:
        path: a value ``.npz`` (default: the shipped weights).
        level_weight: weight of one level against a deal win (the search bot's ``level_weight``).
    """

    def __init__(self, path: str | None = None, level_weight: float = 0.05) -> None:
        self.path = None if path is None else str(path)
        self.level_weight = level_weight
        self.calls = 0

    def __getstate__(self) -> dict[str, Any]:
        return {"path": self.path, "level_weight": self.level_weight, "calls": 0}

    def __call__(self, deal: Deal, team: int) -> float:
        """Expected score of ``team`` (0: seats 0/2, 1: seats 1/3) in ``deal``, in
        ``[-1 - 3 w, 1 + 3 w]``; exact for a finished deal (R35)."""
        self.calls += 1
        res = deal.result
        if res is not None:
            sign = 1.0 if res.winner_team == team else -1.0
            return sign * (1.0 + self.level_weight * {"1-2": 3, "1-3": 2, "1-4": 1}[res.result])
        net: ValueNet = _load("value", self.path)
        turn = deal.turn if deal.turn is not None else team
        pov = turn if (turn & 1) == team else (turn + 1) % 4
        win, score = net.predict(encode_state(deal, pov)[None, :])
        return float(2.0 * win[0] - 1.0 + self.level_weight * 3.0 * score[0])


class PolicyCandidates:
    """``candidate_policy(view, heuristic_move) -> actions`` for the search bot: its default
    list (:func:`~guandan.agents.search.candidate_actions`) plus the policy network's best
    ``extra`` actions not already listed, at most ``limit`` in all.

    Args:
        limit: most candidates; extra: policy additions; path: a policy ``.npz`` (default shipped).
    """

    def __init__(self, limit: int = 6, extra: int = POLICY_EXTRA, path: str | None = None) -> None:
        self.limit = limit
        self.extra = extra
        self.path = None if path is None else str(path)
        self._heuristic: Any = None

    def __getstate__(self) -> dict[str, Any]:
        return {"limit": self.limit, "extra": self.extra, "path": self.path, "_heuristic": None}

    def __call__(self, view: SeatView, first: PlayT) -> list[PlayT]:
        from .heuristic import HeuristicAgent
        from .search import candidate_actions

        if self._heuristic is None:
            self._heuristic = HeuristicAgent()
        base = candidate_actions(view, self._heuristic, first, max(1, self.limit - self.extra))
        net: PolicyNet = _load("policy", self.path)
        added = 0
        for a in net.rank(view):
            if added >= self.extra or len(base) >= self.limit:
                break
            if a not in base:
                base.append(a)
                added += 1
        return base


class NetRolloutPolicy(PolicyAgent):
    """The policy network as the rollout policy (picklable without its weights)."""

    name = "policy-rollout"

    def __init__(self, seed: int | None = None, path: str | None = None) -> None:
        self.path = None if path is None else str(path)
        super().__init__(seed, _load("policy", self.path))

    def __getstate__(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        d["net"] = None
        return d

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.net = _load("policy", self.path)


def make_expert(
    seed: int | None = None,
    budget_s: float = 1.0,
    worlds: int | None = None,
    workers: int | None = None,
    max_candidates: int = 6,
    rollout_depth: int = DEFAULT_DEPTH,
    rollout: str = "fast",
    value_path: str | None = None,
    policy_path: str | None = None,
    **search_kwargs: Any,
) -> Any:
    """Build the ``expert`` bot: a :class:`~guandan.agents.search.SearchAgent` named ``expert``.

    Args:
        seed: world-sampling seed; budget_s: seconds per decision (time mode, default 1.0);
        worlds: rollout-count mode (deterministic for a seed); workers: processes (default:
            the search bot's :func:`~guandan.agents.search.default_workers`);
        max_candidates: most candidate actions (policy network additions included);
        rollout_depth: rollout actions before the value network scores the position
            (0, the default: play rollouts to the end, no value network);
        rollout: ``"fast"`` (the ``hard`` level's fast rollout policy and fast model of the
            other players), ``"heuristic"`` or ``"policy"`` (rollout policy for all four seats);
        value_path, policy_path: ``.npz`` files replacing the shipped weights;
        search_kwargs: other :class:`SearchAgent` arguments (``level_weight``, ``prior_bonus``,
            ``clock``, ``late_cards``, ``belief_weight``...; the ``hard`` level's
            :data:`~guandan.agents.levels.HARD_DEFAULTS` unless given).
    Raises:
        ValueError: a bad option (``rollout`` not fast/heuristic/policy, negative depth, or the
            search bot's own checks). FileNotFoundError: a weights file is missing.
    """
    from .levels import HARD_DEFAULTS
    from .search import SearchAgent, default_workers

    search_kwargs = {**HARD_DEFAULTS, **search_kwargs}

    if rollout not in ("fast", "heuristic", "policy"):
        raise ValueError(f"rollout must be 'fast', 'heuristic' or 'policy', not {rollout!r}")
    if rollout_depth < 0:
        raise ValueError(f"rollout_depth must be >= 0 (0: full rollouts), not {rollout_depth!r}")
    level_weight = float(search_kwargs.pop("level_weight", 0.05))
    # load now so that a missing or bad weights file fails here, not inside the search fallback
    _load("policy", policy_path)
    value_fn = None
    if rollout_depth > 0:
        _load("value", value_path)
        value_fn = NetValueFn(value_path, level_weight)
    if rollout == "fast":
        from .levels import fast_policies

        fast_policies(search_kwargs)
    late_policy = search_kwargs.pop("late_rollout_policy", None)
    if rollout == "policy":
        late_policy = late_policy or NetRolloutPolicy(seed, policy_path)
    agent = SearchAgent(
        seed,
        budget_s=budget_s,
        worlds=worlds,
        workers=default_workers() if workers is None else workers,
        max_candidates=max_candidates,
        level_weight=level_weight,
        rollout_policy=NetRolloutPolicy(seed, policy_path) if rollout == "policy" else None,
        late_rollout_policy=late_policy,
        candidate_policy=PolicyCandidates(max_candidates, POLICY_EXTRA, policy_path),
        value_fn=value_fn,
        rollout_depth=rollout_depth if rollout_depth > 0 else None,
        **search_kwargs,
    )
    agent.name = "expert"
    return agent


def expert_options() -> Sequence[str]:
    """The ``expert:key=value`` option names (see :mod:`guandan.agents.levels`)."""
    from .levels import _OPTIONS

    return tuple(_OPTIONS["expert"])
