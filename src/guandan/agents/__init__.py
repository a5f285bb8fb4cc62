"""Players that act from a :class:`~guandan.core.views.SeatView` (never the full state).

``make_agent(name, seed)`` builds an agent by name: ``random``, ``heuristic``, ``search``, or a
difficulty level ``easy``, ``normal``, ``hard``, ``expert`` (:mod:`guandan.agents.registry`; options in
:mod:`guandan.agents.levels`).
"""

from __future__ import annotations

from .base import Agent, RandomAgent
from .registry import AGENT_NAMES, make_agent

__all__ = ["Agent", "RandomAgent", "make_agent", "AGENT_NAMES"]
