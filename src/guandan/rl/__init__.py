"""Guandan as a research environment (optional extra ``pyguandan[rl]``: NumPy, PettingZoo, Gymnasium).

* :func:`env` / :func:`raw_env`: the PettingZoo AEC environment (:mod:`guandan.rl.aec`);
* :class:`~guandan.rl.table.Table`: one table stepped by decision, shared by every front end;
* :mod:`guandan.rl.abstract`: the ``abstract`` action ids and their canonical realisation;
* :mod:`guandan.rl.encoders`: the versioned observation layouts (``default``, ``danzero``);
* :class:`~guandan.rl.gym_env.SingleSeatEnv`: Gymnasium, one learning seat vs given agents;
* :class:`~guandan.rl.vec.VecEnv`: many tables with array I/O, auto-reset, worker processes.

This package imports :mod:`guandan.core` and :mod:`guandan.agents` only (never the server or
the protocol gateway); nothing in the base package imports it.
"""

from __future__ import annotations

from typing import Any

from .abstract import N_ABSTRACT
from .encoders import make_encoder
from .table import ACTION_MODES, REWARDS, Table

__all__ = ["env", "raw_env", "Table", "N_ABSTRACT", "ACTION_MODES", "REWARDS", "make_encoder"]


def env(preset: str = "aicomp", action_mode: str = "abstract", obs: str = "default", reward: str = "deal",
        **kwargs: Any) -> Any:
    """The PettingZoo AEC environment, wrapped (see :class:`guandan.rl.aec.GuandanAEC`).

    Args:
        preset: rule preset name (``aicomp`` default).
        action_mode: ``abstract`` | ``candidates`` | ``cards``.
        obs: ``default`` | ``danzero``.
        reward: ``deal`` | ``levels`` | ``game``.
        **kwargs: ``max_candidates``, ``privileged``, ``render_mode``.
    """
    from .aec import env as _env

    return _env(preset=preset, action_mode=action_mode, obs=obs, reward=reward, **kwargs)


def raw_env(**kwargs: Any) -> Any:
    """The unwrapped :class:`guandan.rl.aec.GuandanAEC` (arguments as :func:`env`)."""
    from .aec import raw_env as _raw

    return _raw(**kwargs)
