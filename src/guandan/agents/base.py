"""The agent interface and the uniform random agent."""

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


AGENT_NAMES: tuple[str, ...] = ("random", "heuristic", "policy")


def make_agent(name: str, seed: int | None = None) -> Agent:
    """Build an agent by name (``random``, ``heuristic`` or ``policy``, the policy network
    alone: :class:`guandan.agents.nets.PolicyAgent`).

    Raises:
        ValueError: unknown name, listing the valid ones; a learned agent (``policy``) when
            NumPy (the ``[bots]`` extra) is not installed, saying how to install it.
    """
    if name == "random":
        return RandomAgent(seed)
    if name == "heuristic":
        from .heuristic import HeuristicAgent

        return HeuristicAgent(seed)
    if name == "policy":
        return _learned_agent(name, seed)
    raise ValueError(f"unknown agent {name!r}; valid agents: {', '.join(AGENT_NAMES)}")


def _learned_agent(name: str, seed: int | None) -> Agent:
    """A bot that needs NumPy (the ``[bots]`` extra); ``ValueError`` with the install command
    when NumPy is missing, so every place a bot can sit reports it the same way."""
    try:
        from .nets import PolicyAgent, require_numpy

        require_numpy()
    except ImportError as e:
        raise ValueError(f"agent {name!r}: {e}") from None
    return PolicyAgent(seed)
