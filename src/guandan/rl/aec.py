"""The PettingZoo AEC environment (``guandan.rl.env(...)``).

Agents ``seat_0`` … ``seat_3`` (teams {seat_0, seat_2} and {seat_1, seat_3}, R2). Only the seat
to act is selected; tribute and return (R44-R47) are decisions like plays. ``observe(agent)``
returns ``{"observation": float32 [D], "action_mask": bool [A]}`` (plus ``"candidates":
float32 [K, F]`` in the ``candidates`` mode) for any agent at any time: a seat that is not to
act gets an all-false mask.

Rewards are team-shared and zero-sum (see :mod:`guandan.rl.table` for the episode and reward
definitions). A deal ends on some seat's play, but every seat gets its reward at that step, so
a seat that did not act last still sees it: PettingZoo's ``_cumulative_rewards`` accumulate
until that seat is next returned by ``last()`` (the env then steps each terminated agent with
``None``, as the AEC API requires).

``infos[agent]`` holds ``obs_version``, ``action_mode``, ``seat``; for the seat to act in the
``cards`` mode ``legal_actions`` (the engine actions, index = action) and in the ``candidates``
mode ``candidates``; and, only when the env was built with ``privileged=True``, ``hidden_hands``
(``int8 [4, 54]``, every seat's cards: labels for critics, never part of an observation).
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv

from guandan.core.rules import RuleSet

from .encoders import Encoder
from .table import DEFAULT_MAX_CANDIDATES, Table

AGENTS = ("seat_0", "seat_1", "seat_2", "seat_3")


class GuandanAEC(AECEnv):  # type: ignore[misc]
    """Guandan as a PettingZoo AEC environment; see the module docstring.

    Args:
        preset: rule preset (default ``aicomp``) or a :class:`RuleSet`.
        action_mode: ``abstract`` (default), ``candidates`` or ``cards``.
        obs: ``default`` or ``danzero``.
        reward: ``deal`` (default), ``levels`` or ``game``.
        max_candidates: rows of the ``candidates`` array.
        privileged: put every seat's hidden cards in ``infos[agent]["hidden_hands"]``.
        render_mode: ``None`` or ``"ansi"`` (text of the last action and the table).
    Raises:
        ValueError: unknown option values.
    """

    metadata = {"name": "guandan_v1", "render_modes": ["ansi"], "is_parallelizable": False}

    def __init__(
        self,
        preset: str | RuleSet = "aicomp",
        action_mode: str = "abstract",
        obs: str | Encoder = "default",
        reward: str = "deal",
        max_candidates: int = DEFAULT_MAX_CANDIDATES,
        privileged: bool = False,
        render_mode: str | None = None,
    ) -> None:
        super().__init__()
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode must be None or 'ansi', not {render_mode!r}")
        self.table = Table(preset, action_mode, obs, reward, None, max_candidates)
        self.render_mode = render_mode
        self.privileged = privileged
        self.possible_agents = list(AGENTS)
        self.agents = list(AGENTS)
        t = self.table
        obs_space: dict[str, spaces.Space[Any]] = {
            "observation": spaces.Box(0.0, 28.0, (t.obs_size,), np.float32),
            "action_mask": spaces.MultiBinary(t.n_actions),
        }
        if t.action_mode == "candidates":
            obs_space["candidates"] = spaces.Box(0.0, 10.0, (max_candidates, t.encoder.action_size), np.float32)
        self._obs_space = spaces.Dict(obs_space)
        self._act_space = spaces.Discrete(t.n_actions)
        self.observation_spaces = {a: self._obs_space for a in AGENTS}
        self.action_spaces = {a: self._act_space for a in AGENTS}
        self._last_text = ""
        self._init_dicts()

    def observation_space(self, agent: str) -> spaces.Space[Any]:
        return self._obs_space

    def action_space(self, agent: str) -> spaces.Space[Any]:
        return self._act_space

    # -- API -------------------------------------------------------------------------------
    def _init_dicts(self) -> None:
        self.agents = list(AGENTS)
        self.rewards = {a: 0.0 for a in AGENTS}
        self._cumulative_rewards = {a: 0.0 for a in AGENTS}
        self.terminations = {a: False for a in AGENTS}
        self.truncations = {a: False for a in AGENTS}
        self.infos: dict[str, dict[str, Any]] = {a: {} for a in AGENTS}
        self._update_selection()

    def _update_selection(self) -> None:
        seat = self.table.to_act
        if seat is not None:
            self.agent_selection = AGENTS[seat]
        self._fill_infos()

    def _fill_infos(self) -> None:
        t = self.table
        seat = t.to_act
        for i, a in enumerate(AGENTS):
            info: dict[str, Any] = {"obs_version": t.encoder.version, "action_mode": t.action_mode, "seat": i}
            if seat == i:
                if t.action_mode == "cards":
                    info["legal_actions"] = t.legal()
                elif t.action_mode == "candidates":
                    info["candidates"] = t.candidates()
            if self.privileged:
                info["hidden_hands"] = t.hidden_hands()
            self.infos[a] = info

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Start an episode (see :meth:`guandan.rl.table.Table.reset`): a new seeded game when
        ``seed`` is given, else the next deal of the current game (or a new game)."""
        self.table.reset(seed)
        self._last_text = ""
        self._init_dicts()

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """``{"observation", "action_mask"[, "candidates"]}`` of ``agent`` (see the module docstring).

        Raises:
            ValueError: ``agent`` is not one of ``seat_0`` … ``seat_3``.
        """
        if agent not in AGENTS:
            raise ValueError(f"unknown agent {agent!r}; agents are {', '.join(AGENTS)}")
        seat = AGENTS.index(agent)
        t = self.table
        obs = np.empty(t.obs_size, dtype=np.float32)
        t.observe(seat, obs)
        mask = np.zeros(t.n_actions, dtype=np.int8)
        if t.to_act == seat:
            m = np.zeros(t.n_actions, dtype=bool)
            t.mask(m)
            mask = m.astype(np.int8)
        out = {"observation": obs, "action_mask": mask}
        if t.action_mode == "candidates":
            c = np.zeros((t.max_candidates, t.encoder.action_size), dtype=np.float32)
            if t.to_act == seat:
                t.candidate_features(c)
            out["candidates"] = c
        return out

    def step(self, action: Any) -> None:
        """Apply ``action`` for :attr:`agent_selection` (``None`` for a terminated agent).

        Raises:
            ValueError: the action is masked / illegal now.
        """
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        t = self.table
        if self.render_mode == "ansi":
            from guandan.core.plays import play_text

            self._last_text = f"{agent}: {play_text(t.resolve(action))}"
        rew = t.apply(action)  # raises ValueError for a masked action, before any change
        self._cumulative_rewards[agent] = 0.0
        for i, a in enumerate(AGENTS):
            self.rewards[a] = float(rew[i])
        if t.done:
            for a in AGENTS:
                self.terminations[a] = True
            self._fill_infos()
        else:
            self._update_selection()
        self._accumulate_rewards()

    def render(self) -> str | None:
        """With ``render_mode="ansi"``: the last action and the table as text."""
        if self.render_mode != "ansi":
            return None
        g = self.table.game
        d = g.deal
        from guandan.core.cards import cards_text, rank_char

        lines = [f"game {g.game_number} deal {g.deal_number} level {rank_char(d.level)} phase {g.phase}"]
        if self._last_text:
            lines.append(self._last_text)
        lines.append(f"cards held: {list(d.n_cards)}; finished: {list(d.finished)}")
        if d.top is not None:
            lines.append(f"to beat: {cards_text(d.top[2])} (seat {d.top_seat})")
        return "\n".join(lines)

    def close(self) -> None:
        pass

    # -- research hooks ----------------------------------------------------------------------
    def clone(self) -> GuandanAEC:
        """An independent copy of the env in its current state (for search and analysis)."""
        new = GuandanAEC.__new__(GuandanAEC)
        new.__dict__.update(self.__dict__)
        new.table = self.table.clone()
        new.rewards = dict(self.rewards)
        new._cumulative_rewards = dict(self._cumulative_rewards)
        new.terminations = dict(self.terminations)
        new.truncations = dict(self.truncations)
        new.agents = list(self.agents)
        new.infos = {a: dict(v) for a, v in self.infos.items()}
        return new

    def sample_world(self, seat: int | str, rng: random.Random) -> list[list[int]]:
        """Hidden hands consistent with everything public to ``seat`` (``0..3`` or ``"seat_k"``),
        from the project's one sampler :func:`guandan.core.worlds.sample_world`.

        Returns:
            Four sorted face lists; ``seat``'s own is its real hand.
        """
        s = AGENTS.index(seat) if isinstance(seat, str) else seat
        return self.table.sample_world(s, rng)


def env(**kwargs: Any) -> GuandanAEC:
    """Build the AEC environment wrapped in PettingZoo's order-enforcing and assertion wrappers
    (arguments as :class:`GuandanAEC`)."""
    from pettingzoo.utils import wrappers

    e: Any = GuandanAEC(**kwargs)
    e = wrappers.AssertOutOfBoundsWrapper(e)
    e = wrappers.OrderEnforcingWrapper(e)
    return e  # type: ignore[no-any-return]


def raw_env(**kwargs: Any) -> GuandanAEC:
    """The unwrapped :class:`GuandanAEC`."""
    return GuandanAEC(**kwargs)
