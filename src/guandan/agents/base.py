"""The agent interface and the uniform random agent.

This module imports no other agent; agents are built by name in :mod:`guandan.agents.registry`.
"""

from __future__ import annotations

import random
from typing import Protocol, runtime_checkable

from guandan.core.plays import PlayT
from guandan.core.views import SeatView


@runtime_checkable
class Agent(Protocol):
    """A player. Drivers call :meth:`act` only when ``view.to_act == view.seat``; the answer
    must be one of ``view.legal_actions`` (tribute, return or play)."""

    name: str

    def act(self, view: SeatView) -> PlayT:
        """Choose an action from ``view.legal_actions``."""
        ...


class RandomAgent:
    """Chooses uniformly among the legal actions (tribute, return, pass and plays alike).

    Args:
        seed: seed of the agent's own ``random.Random``, or an ``rng`` to share.
    """

    name = "random"

    def __init__(self, seed: int | None = None, rng: random.Random | None = None) -> None:
        self.rng = rng if rng is not None else random.Random(seed)

    def act(self, view: SeatView) -> PlayT:
        """A uniformly random legal action; raises ``ValueError`` when there is none."""
        if not view.legal_actions:
            raise ValueError(f"seat {view.seat} has no legal action")
        return self.rng.choice(view.legal_actions)
