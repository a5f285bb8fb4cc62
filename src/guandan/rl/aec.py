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

Speed (issue 26, item 18): an observation is built only when ``observe(agent)`` / ``last()`` asks
for it, for that agent, with the fast paths the :class:`~guandan.rl.vec.VecEnv` uses (the
``abstract`` mask from rank counts, the ``default`` encoder's cached blocks), written straight into
the arrays returned (the mask as ``int8``, no ``bool`` copy). Asked again before the next
``step``/``reset`` (e.g. ``last()`` then ``observe()``), the agent's observation is not rebuilt:
copies of the one built at the table's current :attr:`~guandan.rl.table.Table.version` are
returned (every call returns fresh arrays, safe to keep or modify). :func:`env`'s wrappers are PettingZoo's
order-enforcing and out-of-bounds wrappers with the same checks, but they reach the env's
attributes directly instead of through two ``__getattr__`` fallbacks per access, and an in-range
Python ``int`` action is checked without Gymnasium's ``Discrete.contains`` (anything else still
goes through it). Where the infos cannot change within an episode (``abstract`` mode without
``privileged``) they are made at ``reset`` and kept for the episode; elsewhere they are made anew
at every step, as before.
"""

from __future__ import annotations

import operator
import random
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers
from pettingzoo.utils.env_logger import EnvLogger
from pettingzoo.utils.wrappers.order_enforcing import AECOrderEnforcingIterable, AECOrderEnforcingIterator

from guandan.core.rules import RuleSet

from .encoders import Encoder
from .table import DEFAULT_MAX_CANDIDATES, Table

AGENTS = ("seat_0", "seat_1", "seat_2", "seat_3")
_SEAT = {a: i for i, a in enumerate(AGENTS)}


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
        self._n_actions = t.n_actions
        self._cand = t.action_mode == "candidates"
        self._abstract = t.action_mode == "abstract"
        self._info_mode = t.action_mode if t.action_mode in ("cards", "candidates") else None
        self._info_static = self._info_mode is None and not privileged
        self._info_base = tuple({"obs_version": t.encoder.version, "action_mode": t.action_mode, "seat": i}
                                for i in range(4))
        # per seat: the observation built last, as (table, table.version, observation bytes,
        # mask bytes, candidate rows used): private copies (see observe)
        self._obs_cache: list[tuple[Any, ...] | None] = [None, None, None, None]
        self._paid = False  # the last step paid a non-zero reward
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
        self._paid = False
        seat = self.table.to_act
        if seat is not None:
            self.agent_selection = AGENTS[seat]
        self._fill_infos(seat, fresh=True)

    def _fill_infos(self, seat: int | None, fresh: bool = False) -> None:
        """Fresh info dicts for the agents (nothing returned earlier is modified later), copied
        from the per-seat constant part. Where their content cannot change within an episode
        (``abstract`` mode, not ``privileged``) they are made at ``reset`` only (``fresh``) and
        kept for the episode, as PettingZoo's own classic environments keep theirs."""
        if self._info_static and not fresh:
            return
        infos = self.infos
        b0, b1, b2, b3 = self._info_base
        infos["seat_0"], infos["seat_1"], infos["seat_2"], infos["seat_3"] = b0.copy(), b1.copy(), b2.copy(), b3.copy()
        if seat is not None and self._info_mode is not None:
            t = self.table
            if self._info_mode == "cards":
                infos[AGENTS[seat]]["legal_actions"] = t.legal()
            else:
                infos[AGENTS[seat]]["candidates"] = t.candidates()
        if self.privileged:
            for a in AGENTS:
                infos[a]["hidden_hands"] = self.table.hidden_hands()

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        """Start an episode (see :meth:`guandan.rl.table.Table.reset`): a new seeded game when
        ``seed`` is given, else the next deal of the current game (or a new game)."""
        self.table.reset(seed)
        self._last_text = ""
        self._init_dicts()

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """``{"observation", "action_mask"[, "candidates"]}`` of ``agent`` (see the module docstring):
        ``float32 [obs_size]``, ``int8 [n_actions]`` (all zero unless ``agent`` is to act),
        ``float32 [max_candidates, action_size]``. Fresh arrays at every call.

        Raises:
            ValueError: ``agent`` is not one of ``seat_0`` … ``seat_3``.
        """
        seat = _SEAT.get(agent) if isinstance(agent, str) else None
        if seat is None:
            raise ValueError(f"unknown agent {agent!r}; agents are {', '.join(AGENTS)}")
        t = self.table
        got = self._obs_cache[seat]
        if got is not None and got[0] is t and got[1] == t.version:  # asked again, nothing changed
            out = {"observation": np.frombuffer(got[2], np.float32).copy(),
                   "action_mask": np.frombuffer(got[3], np.int8).copy()}
            if self._cand:
                c = np.zeros((t.max_candidates, t.encoder.action_size), dtype=np.float32)
                c[: len(got[4])] = got[4]
                out["candidates"] = c
            return out
        obs = np.empty(t.obs_size, dtype=np.float32)
        t.observe(seat, obs)
        mask = np.zeros(self._n_actions, dtype=np.int8)
        acting = t.to_act == seat
        if acting:  # 1 at the legal ids: Table.mask's values, as int8, into the zeroed array
            if self._abstract:
                mask[t.legal_ids()] = 1
            else:
                t.mask(mask)
        out = {"observation": obs, "action_mask": mask}
        rows = None
        if self._cand:
            c = np.zeros((t.max_candidates, t.encoder.action_size), dtype=np.float32)
            n = 0
            if acting:
                t.candidate_features(c)
                n = len(t.candidates())
            out["candidates"] = c
            rows = c[:n].copy()  # the rest is zero padding
        # the cache keeps its own copies (bytes), so what the caller does to ``out`` cannot reach it
        self._obs_cache[seat] = (t, t.version, obs.tobytes(), mask.tobytes(), rows)
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
        r0 = t.advance(action)  # raises ValueError for a masked action, before any change
        self._cumulative_rewards[agent] = 0.0
        rewards = self.rewards
        if r0:  # team-shared, zero-sum (R35): seats 0 and 2 get r0, seats 1 and 3 -r0
            r0 = float(r0)
            rewards["seat_0"] = rewards["seat_2"] = r0
            rewards["seat_1"] = rewards["seat_3"] = -r0
            self._paid = True
        elif self._paid:
            for a in AGENTS:
                rewards[a] = 0.0
            self._paid = False
        if t.done:
            for a in AGENTS:
                self.terminations[a] = True
            self._fill_infos(None)
        else:
            seat = t.game.to_act()
            self.agent_selection = AGENTS[seat]  # type: ignore[index]
            self._fill_infos(seat)
        if self._paid:  # adding the zero rewards of every other step changes nothing
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
        new._obs_cache = [None, None, None, None]
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


class _Bounds(wrappers.AssertOutOfBoundsWrapper):  # type: ignore[misc]
    """PettingZoo's :class:`AssertOutOfBoundsWrapper`, the same assertion: a Python ``int`` in
    ``[0, n_actions)`` passes at once (what ``Discrete.contains`` answers for it); any other action
    goes through the original check."""

    def __init__(self, env: GuandanAEC) -> None:
        super().__init__(env)
        self._raw = env

    def step(self, action: Any) -> None:
        raw = self._raw
        if type(action) is int and 0 <= action < raw._n_actions:
            raw.step(action)
        else:
            super().step(action)


def _forward(name: str) -> property:
    """A property reading ``name`` from the unwrapped env once :meth:`reset` was called (before:
    the ``AttributeError`` of :class:`OrderEnforcingWrapper`)."""
    read = operator.attrgetter(name)

    def get(self: _OrderEnforcing) -> Any:
        if self._has_reset:
            return read(self._raw)
        raise AttributeError(f"{name} cannot be accessed before reset")

    return property(get, doc=f"The unwrapped env's ``{name}``.")


class _Iterator(AECOrderEnforcingIterator):  # type: ignore[misc]
    """PettingZoo's order-enforcing ``agent_iter`` iterator, the same stops and assertion,
    reading the unwrapped env directly."""

    def __next__(self) -> str:
        env = self.env
        raw = env._raw
        if not raw.agents or self.iters_til_term <= 0:
            raise StopIteration
        self.iters_til_term -= 1
        assert env._has_updated, "need to call step() or reset() in a loop over `agent_iter`"
        env._has_updated = False
        return raw.agent_selection  # type: ignore[no-any-return]


class _Iterable(AECOrderEnforcingIterable):  # type: ignore[misc]
    def __iter__(self) -> _Iterator:
        return _Iterator(self.env, self.max_iter)


class _OrderEnforcing(wrappers.OrderEnforcingWrapper):  # type: ignore[misc]
    """PettingZoo's :class:`OrderEnforcingWrapper` with the same checks, errors and warnings;
    the attributes an AEC loop reads at every step are properties reading the unwrapped env
    (PettingZoo's wrappers reach them through a failed lookup and ``__getattr__`` per wrapper),
    and ``agent_iter`` / ``last`` / ``observe`` / ``step`` reach it directly once the env was
    reset (``step`` still makes the out-of-bounds wrapper's check, see :class:`_Bounds`)."""

    agents = _forward("agents")
    agent_selection = _forward("agent_selection")
    rewards = _forward("rewards")
    terminations = _forward("terminations")
    truncations = _forward("truncations")
    infos = _forward("infos")
    _cumulative_rewards = property(lambda self: self._raw._cumulative_rewards)

    def __init__(self, env: _Bounds, raw: GuandanAEC) -> None:
        super().__init__(env)
        self._raw = raw

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if not self._has_reset:
            return super().last(observe)  # type: ignore[no-any-return]
        raw = self._raw
        agent = raw.agent_selection
        assert agent is not None
        return (raw.observe(agent) if observe else None, raw._cumulative_rewards[agent],
                raw.terminations[agent], raw.truncations[agent], raw.infos[agent])

    def observe(self, agent: str) -> dict[str, np.ndarray] | None:
        if not self._has_reset:
            return super().observe(agent)  # type: ignore[no-any-return]
        return self._raw.observe(agent)

    def step(self, action: Any) -> None:
        raw = self._raw
        if self._has_reset and raw.agents:
            self._has_updated = True
            if type(action) is int and 0 <= action < raw._n_actions:  # _Bounds.step's check, inline
                raw.step(action)
            else:
                self.env.step(action)
        else:
            super().step(action)

    def agent_iter(self, max_iter: int = 2**63) -> _Iterable:
        if not self._has_reset:
            EnvLogger.error_agent_iter_before_reset()
        return _Iterable(self, max_iter)

    def __str__(self) -> str:
        return str(self.env)


def env(**kwargs: Any) -> GuandanAEC:
    """Build the AEC environment wrapped in PettingZoo's order-enforcing and assertion wrappers
    (arguments as :class:`GuandanAEC`; the wrappers are subclasses of PettingZoo's with the
    same checks and direct attribute access, see the module docstring)."""
    raw = GuandanAEC(**kwargs)
    return _OrderEnforcing(_Bounds(raw), raw)  # type: ignore[return-value]


def raw_env(**kwargs: Any) -> GuandanAEC:
    """The unwrapped :class:`GuandanAEC`."""
    return GuandanAEC(**kwargs)
