"""Drive a :class:`~guandan.core.match.Game` with agents (the engine never calls agents).

The driver asks the game what is pending and who acts, builds that seat's view, asks the
seat's agent, and applies the answer through :meth:`Game.apply` (which checks it).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from guandan.agents.base import Agent
from guandan.core.match import Game
from guandan.core.plays import PlayT
from guandan.core.views import seat_view


def step(game: Game, agents: Sequence[Agent]) -> tuple[int, PlayT]:
    """Ask the seat to act for one action and apply it.

    Returns:
        ``(seat, action applied)``.
    Raises:
        ValueError: the game is over.
        IllegalAction: the agent answered an illegal action (the game is unchanged).
    """
    seat = game.to_act()
    if seat is None:
        raise ValueError("the game is over")
    action = agents[seat].act(seat_view(game, seat))
    return seat, game.apply(action, seat)


def run_game(
    game: Game,
    agents: Sequence[Agent],
    on_step: Callable[[Game, int, PlayT], None] | None = None,
    max_actions: int = 1_000_000,
) -> Game:
    """Play ``game`` to the end with four agents (index = seat).

    Args:
        game: the game to drive (mutated).
        agents: four agents, ``agents[s]`` plays seat ``s``.
        on_step: called after each applied action with ``(game, seat, action)``.
        max_actions: safety bound on the number of actions.
    Returns:
        ``game``, now over.
    Raises:
        ValueError: not four agents, or ``max_actions`` exceeded.
    """
    if len(agents) != 4:
        raise ValueError("run_game needs four agents, one per seat")
    for _ in range(max_actions):
        if game.over:
            return game
        seat, act = step(game, agents)
        if on_step is not None:
            on_step(game, seat, act)
    raise ValueError(f"game did not end within {max_actions} actions")
