"""The agent registry: names and specs → agents (``make_agent``), above every agent it builds.

The agents themselves (:mod:`.base`, :mod:`.heuristic`, :mod:`.easy`, :mod:`.search`,
:mod:`.expert`, :mod:`.nets`) never import this module; spec parsing and the level settings live
in :mod:`.levels`. The agents are imported when first built (inside the functions below), so that
importing :mod:`guandan.agents` stays cheap and never loads NumPy; the learned agents check for
NumPy when they are built.
"""

from __future__ import annotations

from typing import Any

from .base import Agent, RandomAgent
from .levels import HARD_DEFAULTS, fast_policies, parse_spec

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


def make_level_agent(base: str, seed: int | None, kwargs: dict[str, Any]) -> Any:
    """Build ``easy`` or ``search`` with options; ``None`` for other names."""
    if base == "search":
        from .search import SearchAgent, default_workers

        kwargs = fast_policies({**HARD_DEFAULTS, "workers": default_workers(), **kwargs})
        return SearchAgent(seed, **kwargs)
    if base == "easy":
        from .easy import EasyAgent

        return EasyAgent(seed, **kwargs)
    return None
