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


AGENT_NAMES: tuple[str, ...] = ("random", "heuristic", "search", "easy", "normal", "hard")


def make_agent(name: str, seed: int | None = None) -> Agent:
    """Build an agent by name: ``random``, ``heuristic``, ``search``, or a difficulty level
    ``easy``, ``normal`` (= heuristic), ``hard`` (= search); options may follow a colon, e.g.
    ``hard:budget=0.25,workers=1`` (see :mod:`guandan.agents.levels`).

    Raises:
        ValueError: unknown name or option, listing the valid ones.
    """
    from .levels import make_level_agent, parse_spec

    base, kwargs = parse_spec(name)
    if base == "random" and not kwargs:
        return RandomAgent(seed)
    if base == "heuristic" and not kwargs:
        from .heuristic import HeuristicAgent

        return HeuristicAgent(seed)
    agent = make_level_agent(base, seed, kwargs)
    if agent is not None:
        return agent  # type: ignore[no-any-return]
    raise ValueError(f"unknown agent {name!r}; valid agents: {', '.join(AGENT_NAMES)}")
