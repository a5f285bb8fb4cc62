"""Gymnasium single-agent wrapper: one seat learns, the other three are given agents.

``SingleSeatEnv(seat=0, opponents="random")``: ``reset()`` / ``step(action)`` follow the Gymnasium
API; the observation is ``{"observation": float32 [D], "action_mask": int8 [A]}`` of the learning
seat, and the other seats act in between with their agents. Opponents are, per seat, a name
(``random``, ``heuristic``: :func:`guandan.agents.make_agent`), an agent with ``act(view)``
(:class:`guandan.agents.Agent`) or any callable ``f(view) -> action`` taking a
:class:`~guandan.core.views.SeatView` and returning one of ``view.legal_actions``. The partner
seat is an opponent-controlled seat too (it plays for the learner's team).

The reward is the learning seat's team reward (:mod:`guandan.rl.table`); an episode ends with
the deal (``deal``/``levels``) or the game (``game``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from guandan.agents import make_agent
from guandan.core.views import SeatView, seat_view

from .table import Table

Opponent = Any  # a name, an Agent, or a callable(view) -> action


def _as_policy(spec: Opponent, seed: int) -> Callable[[SeatView], Any]:
    if isinstance(spec, str):
        agent = make_agent(spec, seed)
        return agent.act
    if hasattr(spec, "act"):
        return spec.act  # type: ignore[no-any-return]
    if callable(spec):
        return spec  # type: ignore[no-any-return]
    raise ValueError(f"an opponent is a name (random, heuristic), an agent or a callable, not {spec!r}")


class SingleSeatEnv(gym.Env):  # type: ignore[misc]
    """See the module docstring.

    Args:
        seat: the learning seat 0..3.
        opponents: one spec for all three other seats, or a sequence of three (in seat order,
            skipping ``seat``).
        seed: table seed.
        **table_kwargs: ``preset``, ``action_mode`` (``abstract`` or ``cards``), ``obs``, ``reward``.
    Raises:
        ValueError: a bad seat or opponent spec.
    """

    metadata = {"render_modes": []}

    def __init__(self, seat: int = 0, opponents: Opponent | Sequence[Opponent] = "random",
                 seed: int | None = None, **table_kwargs: Any) -> None:
        if seat not in (0, 1, 2, 3) or isinstance(seat, bool):
            raise ValueError(f"seat must be 0-3, not {seat!r}")
        if table_kwargs.get("action_mode") == "candidates":
            raise ValueError("SingleSeatEnv supports the abstract and cards action modes (use the AEC env for candidates)")
        self.seat = seat
        self.table = Table(seed=seed, **table_kwargs)
        others = [s for s in range(4) if s != seat]
        if isinstance(opponents, (list, tuple)):
            if len(opponents) != 3:
                raise ValueError("give one opponent spec or three (one per other seat)")
            specs = list(opponents)
        else:
            specs = [opponents] * 3
        base = 0 if seed is None else seed
        self.policies = {s: _as_policy(sp, base * 4 + s) for s, sp in zip(others, specs)}
        t = self.table
        self.observation_space = spaces.Dict({
            "observation": spaces.Box(0.0, 28.0, (t.obs_size,), np.float32),
            "action_mask": spaces.MultiBinary(t.n_actions),
        })
        self.action_space = spaces.Discrete(t.n_actions)
        self._pending = 0.0

    def _obs(self) -> dict[str, np.ndarray]:
        t = self.table
        obs = np.empty(t.obs_size, np.float32)
        t.observe(self.seat, obs)
        m = np.zeros(t.n_actions, bool)
        if t.to_act == self.seat:
            t.mask(m)
        return {"observation": obs, "action_mask": m.astype(np.int8)}

    def _run_others(self) -> float:
        """Let the other seats act until the learner must act or the episode ends; their rewards
        for the learner's team are summed."""
        t = self.table
        total = 0.0
        while not t.done and t.to_act != self.seat:
            s = t.to_act
            assert s is not None
            act = self.policies[s](seat_view(t.game, s))
            total += float(t.apply(tuple(act))[self.seat])
        return total

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        super().reset(seed=seed)
        self.table.reset(seed)
        r = self._run_others()
        while self.table.done:  # the others ended the deal before the learner acted (rare)
            self.table.reset()
            r = self._run_others()
        self._pending = r
        return self._obs(), {"seat": self.seat}

    def step(self, action: Any) -> tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]:
        t = self.table
        r = self._pending + float(t.apply(action)[self.seat])
        self._pending = 0.0
        r += self._run_others()
        return self._obs(), r, t.done, False, {"seat": self.seat}
