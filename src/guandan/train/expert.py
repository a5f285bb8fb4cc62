"""Expert iteration: generate with the current bot, train both networks, repeat.

Round ``r`` (``r = 1 .. rounds``):

1. **Generate** whole self-play games in which every seat is a :class:`MixedTeacher`: at a
   play-phase decision, with probability ``label_rate`` it runs the ``expert`` search (search
   with the networks of round ``r - 1``, :func:`guandan.agents.expert.make_expert` in
   rollout-count mode, ``worlds`` sampled deals) and plays and records that choice as a policy
   sample; otherwise it plays the round ``r - 1`` policy network's choice, unrecorded (search
   at every decision would cost about ``worlds`` rollouts per candidate each time). Value
   samples are recorded as in :mod:`guandan.train.selfplay` with the outcomes of these games.
2. **Train** the value and the policy network, each starting from round ``r - 1``'s weights,
   on the shards of the last ``window`` rounds.
3. Export ``<out>/round-<r>/value.npz`` and ``policy.npz``; they drive round ``r + 1``.

Round 0's weights are ``--value``/``--policy`` (default: the shipped ones). The search labels
are the improvement operator: they are the search bot's choices given the current networks,
so the policy network learns to predict what search would do, and the next search starts from
better candidates and rollouts.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from guandan.agents.base import Agent
from guandan.core.plays import PlayT
from guandan.core.views import SeatView


class MixedTeacher:
    """One seat of expert-iteration self-play (see the module docstring).

    Args:
        seed: seed of the labelling coin and of the expert's world sampling.
        value_path, policy_path: the current networks (``None``: shipped).
        label_rate: share of play-phase decisions searched and recorded (0-1).
        worlds: sampled deals per searched decision; depth: the expert's rollout depth.
    Attributes:
        labelled: whether the last :meth:`act` was a searched, recorded decision.
    """

    name = "expert-iteration"

    def __init__(self, seed: int, value_path: str | None, policy_path: str | None, label_rate: float,
                 worlds: int, depth: int) -> None:
        from guandan.agents.expert import make_expert
        from guandan.agents.nets import PolicyAgent, PolicyNet

        self.rng = random.Random(seed)
        self.label_rate = label_rate
        self.expert = make_expert(seed, worlds=worlds, workers=1, rollout_depth=depth,
                                  value_path=value_path, policy_path=policy_path)
        self.fast = PolicyAgent(seed, PolicyNet.load(policy_path))
        self.labelled = False

    def act(self, view: SeatView) -> PlayT:
        """The expert's choice (labelled) or the policy network's (not labelled)."""
        self.labelled = False
        if view.phase == "play" and len(view.legal_actions) > 1 and self.rng.random() < self.label_rate:
            self.labelled = True
            return self.expert.act(view)
        return self.fast.act(view)


@dataclass
class ExpertTeacher:
    """Picklable factory of four :class:`MixedTeacher` seats for a game seed."""

    value_path: str | None
    policy_path: str | None
    label_rate: float = 0.1
    worlds: int = 4
    depth: int = 12

    def __call__(self, game_seed: int) -> list[Agent]:
        return [MixedTeacher(game_seed * 4 + s, self.value_path, self.policy_path, self.label_rate,
                             self.worlds, self.depth) for s in range(4)]


@dataclass
class RoundResult:
    """One round: its directory, the exported networks, their final metrics, data size and seconds."""

    round: int
    dir: Path
    value_npz: Path
    policy_npz: Path
    value_metrics: dict[str, float] = field(default_factory=dict)
    policy_metrics: dict[str, float] = field(default_factory=dict)
    games: int = 0
    policy_samples: int = 0
    value_samples: int = 0
    selfplay_seconds: float = 0.0
    train_seconds: float = 0.0


def expert_iteration(
    out: Path,
    rounds: int,
    games: int,
    seed: int,
    cfg: Any,
    value_init: Path | None = None,
    policy_init: Path | None = None,
    label_rate: float = 0.1,
    worlds: int = 4,
    depth: int = 12,
    window: int = 2,
    games_per_shard: int = 2,
    workers: int = 1,
    rules: Any = None,
    meta: dict[str, Any] | None = None,
    on_selfplay: Callable[[int, int, int], None] | None = None,
    on_train: Callable[[str, int, int, int, int], None] | None = None,
) -> list[RoundResult]:
    """Run ``rounds`` rounds (module docstring); resumable: finished rounds are skipped, and an
    interrupted round resumes from its shards and checkpoints.

    Args:
        out: run directory; rounds: >= 1; games: games per round; seed: master seed (round
            ``r`` uses ``seed * 100 + r``); cfg: :class:`guandan.train.trainer.TrainConfig`
            (its ``init`` is replaced by the previous round's weights).
        value_init, policy_init: round 0's networks (``None``: the shipped weights).
        label_rate, worlds, depth: see :class:`MixedTeacher`; window: rounds of data trained on.
        on_selfplay: ``(round, games_done, games)``; on_train: ``(kind, epoch, epochs, batch, batches)``.
    Returns:
        One :class:`RoundResult` per round.
    Raises:
        ValueError: bad counts or rates.
    """
    from dataclasses import replace

    from guandan.agents.nets import WEIGHTS_DIR

    from .selfplay import generate, load_shards, shard_stats
    from .trainer import train_policy, train_value

    if rounds < 1 or games < 1 or window < 1 or not 0 < label_rate <= 1 or worlds < 1 or depth < 0:
        raise ValueError("rounds, games, window, worlds >= 1; depth >= 0; label_rate in (0, 1]")
    value_prev = Path(value_init) if value_init else WEIGHTS_DIR / "value.npz"
    policy_prev = Path(policy_init) if policy_init else WEIGHTS_DIR / "policy.npz"
    results: list[RoundResult] = []
    data_dirs: list[Path] = []
    for r in range(1, rounds + 1):
        rdir = out / f"round-{r}"
        data_dir = rdir / "data"
        data_dirs.append(data_dir)
        teacher = ExpertTeacher(str(value_prev), str(policy_prev), label_rate, worlds, depth)
        paths, _ = generate(
            data_dir, teacher, games, seed * 100 + r, games_per_shard, rules, 0.25, 16,
            progress=(lambda d, t, r=r: on_selfplay(r, d, t)) if on_selfplay else None, workers=workers,
        )
        stats = shard_stats(paths)
        all_paths = sorted(p for d in data_dirs[-window:] for p in d.glob("shard-*.npz"))
        data = load_shards(all_paths)
        rmeta = dict(meta or {})
        rmeta.update(round=r, teacher=f"expert-iteration(worlds={worlds}, depth={depth}, label_rate={label_rate})",
                     games=stats.games, policy_samples=int(len(data["p_label"])),
                     value_samples=int(len(data["v_win"])), selfplay_seconds=round(stats.seconds, 1))
        res_v = train_value(data, rdir, replace(cfg, init=value_prev, hidden=()), rmeta, True,
                            (lambda e, E, b, B: on_train("value", e, E, b, B)) if on_train else None)
        res_p = train_policy(data, rdir, replace(cfg, init=policy_prev, hidden=()), rmeta, True,
                             (lambda e, E, b, B: on_train("policy", e, E, b, B)) if on_train else None)
        results.append(RoundResult(r, rdir, res_v.npz, res_p.npz, res_v.final, res_p.final, stats.games,
                                   stats.policy_samples, stats.value_samples, stats.seconds,
                                   res_v.seconds + res_p.seconds))
        value_prev, policy_prev = res_v.npz, res_p.npz
    return results
