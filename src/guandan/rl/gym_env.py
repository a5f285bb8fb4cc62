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
        protocol_timeout: seconds a :class:`~guandan.rl.protocol.ProtocolBot` client has per
            decision before the host's fallback bot plays it (see :mod:`guandan.rl.protocol`).
        protocol_workdir: directory for the protocol clients' working directories and logs
            (default: a temporary directory).
        **table_kwargs: ``preset``, ``action_mode`` (``abstract`` or ``cards``), ``obs``, ``reward``.
    Raises:
        ValueError: a bad seat or opponent spec.
        guandan.rl.protocol.HostedSeatError: (from :meth:`reset`) a protocol client did not
            start or connect.

    When any opponent is a :class:`~guandan.rl.protocol.ProtocolBot`, the game is run by the
    compat host with every other seat as a protocol client (see :mod:`guandan.rl.protocol`);
    the clients start at the first :meth:`reset` and stop at :meth:`close`. ``reset(seed=...)``
    then restarts the hosted run with that seed.
    """

    metadata = {"render_modes": []}

    def __init__(self, seat: int = 0, opponents: Opponent | Sequence[Opponent] = "random",
                 seed: int | None = None, protocol_timeout: float = 30.0, protocol_workdir: str | None = None,
                 **table_kwargs: Any) -> None:
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
        from .protocol import ProtocolBot

        self.hosted: Any = None
        self._protocol = any(isinstance(sp, ProtocolBot) for sp in specs)
        if self._protocol:
            from .protocol import _as_agent

            for sp in specs:  # fail now on a bad spec, not at the first reset
                if not isinstance(sp, ProtocolBot):
                    _as_agent(sp, 0)
            self._specs = specs
            self._seed = seed
            self._protocol_timeout = protocol_timeout
            self._protocol_workdir = protocol_workdir
            self.policies = {}
        else:
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

    # -- protocol-bot opponents (the compat host runs the game) ---------------------------------
    def _hosted_wait(self) -> float:
        """Wait for the learner's next decision; returns the reward of a deal (or game) that ended
        on the way, and sets ``table.done`` when the episode is over (the host stays paused)."""
        from guandan.rl.protocol import HostedSeat  # noqa: F401 - documented dependency

        t = self.table
        h = self.hosted
        while True:
            kind = h.next_event()
            t.game = h.game
            if kind == "act":
                t.done = False
                t._refresh()
                return 0.0
            game = h.game
            st = game.settlements[-1]
            mode = t.reward_mode
            if mode == "game" and not game.over:
                h.resume()
                continue
            value = float(st.upgrade) if mode == "levels" else 1.0
            t.done = True
            t._refresh()
            return value if (self.seat & 1) == st.winner else -value

    def _hosted_reset(self, seed: int | None) -> float:
        from .protocol import HostedSeat

        if self.hosted is not None and seed is not None:
            self.hosted.close()
            self.hosted = None
        if self.hosted is None:
            run_seed = seed if seed is not None else self._seed
            self.hosted = HostedSeat(self.seat, self._specs, self.table.rules, seed=run_seed,
                                     timeout=self._protocol_timeout, workdir=self._protocol_workdir,
                                     preset=self.table.rules.preset_name())
        elif self.table.done:
            self.hosted.resume()
        r = self._hosted_wait()
        while self.table.done:  # the deal ended before the learner acted (rare)
            self.hosted.resume()
            r = self._hosted_wait()
        return r

    def close(self) -> None:
        """Stop the hosted game and its protocol clients, if any (idempotent)."""
        if self.hosted is not None:
            self.hosted.close()
            self.hosted = None

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        super().reset(seed=seed)
        if self._protocol:
            self._pending = self._hosted_reset(seed)
            return self._obs(), {"seat": self.seat}
        self.table.reset(seed)
        r = self._run_others()
        while self.table.done:  # the others ended the deal before the learner acted (rare)
            self.table.reset()
            r = self._run_others()
        self._pending = r
        return self._obs(), {"seat": self.seat}

    def step(self, action: Any) -> tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]:
        t = self.table
        if self._protocol:
            if self.hosted is None or t.done:
                raise RuntimeError("call reset() first (the episode is over or has not started)")
            play = t.resolve(action)  # ValueError when masked: the host is not told anything
            self.hosted.act(play)
            r = self._pending + self._hosted_wait()
            self._pending = 0.0
            return self._obs(), r, t.done, False, {"seat": self.seat}
        r = self._pending + float(t.apply(action)[self.seat])
        self._pending = 0.0
        r += self._run_others()
        return self._obs(), r, t.done, False, {"seat": self.seat}
