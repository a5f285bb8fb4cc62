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


AGENT_NAMES: tuple[str, ...] = ("random", "heuristic", "search", "easy", "normal", "hard", "policy", "expert")


def make_agent(name: str, seed: int | None = None) -> Agent:
    """Build an agent by name: ``random``, ``heuristic``, ``search``, or a difficulty level
    ``easy``, ``normal`` (= heuristic), ``hard`` (= search), ``expert`` (search with the
    learned networks, :mod:`guandan.agents.expert`), or ``policy`` (the policy network alone,
    :class:`guandan.agents.nets.PolicyAgent`); options may follow a colon, e.g.
    ``hard:budget=0.25,workers=1`` (see :mod:`guandan.agents.levels`).

    Raises:
        ValueError: unknown name or option, listing the valid ones; a learned agent
            (``policy``, ``expert``) when NumPy (the ``[bots]`` extra) is not installed,
            saying how to install it.
    """
    from .levels import make_level_agent, parse_spec

    base, kwargs = parse_spec(name)
    if base == "random" and not kwargs:
        return RandomAgent(seed)
    if base == "heuristic" and not kwargs:
        from .heuristic import HeuristicAgent

        return HeuristicAgent(seed)
    if base in ("policy", "expert"):
        return _learned_agent(base, seed, kwargs)
    agent = make_level_agent(base, seed, kwargs)
    if agent is not None:
        return agent  # type: ignore[no-any-return]
    raise ValueError(f"unknown agent {name!r}; valid agents: {', '.join(AGENT_NAMES)}")


def _learned_agent(name: str, seed: int | None, kwargs: dict[str, object]) -> Agent:
    """A bot that needs NumPy (the ``[bots]`` extra); ``ValueError`` with the install command
    when NumPy is missing, so every place a bot can sit reports it the same way."""
    try:
        from .nets import require_numpy

        require_numpy()
    except ImportError as e:
        raise ValueError(f"agent {name!r}: {e}") from None
    if name == "policy":
        from .nets import PolicyAgent

        return PolicyAgent(seed)
    from .expert import make_expert

    return make_expert(seed, **kwargs)  # type: ignore[arg-type]
