"""Deviation audit of a search bot (``guandan bench-search --audit N``).

Why: an arena of a few hundred duplicate deals cannot tell a search that deviates from the
heuristic on 1 decision in 20 from the heuristic itself (the confidence interval is ±6
points). The audit looks only at the decisions where the search *does* deviate, and scores each
deviation exactly, on the real hands.

How: ``games`` whole games of heuristic self-play (``Game(seed=seed + i)``, played to the first
settlement, R35-R41) are walked decision by decision. At every play-phase decision with more
than one legal action, before any seat has gone out (after that the deal's winning team is
settled, R35), in a "late" position
(:func:`guandan.agents.search.is_late` with ``late_cards``; ``None``: every position), each agent
spec is asked for its move from that seat's view. When it differs from the heuristic's move
(a **deviation**), both moves are played out on the real deal (all four true hands) with the
heuristic for every seat (R29-R33), and the deviation is **gained** when the deviating move wins
the deal for the seat's team (R35) and the heuristic's move loses it, **lost** the other way
round, **even** when both end the same. The game itself always continues with the heuristic's
move, so every spec is audited on the same positions.

Figures per spec: ``positions`` (decisions asked), ``deviations``, ``gained``, ``lost``,
``even``, ``seconds`` (time spent in the spec's ``act``), ``failures`` (search failures that
fell back to the heuristic, :attr:`guandan.agents.search.SearchAgent.failures`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from guandan.agents import make_agent
from guandan.agents.base import Agent
from guandan.agents.heuristic import HeuristicAgent
from guandan.agents.search import is_late, rollout
from guandan.core.match import Game
from guandan.core.plays import PlayT
from guandan.core.views import SeatView, seat_view

__all__ = ["late_positions", "run_search_audit"]

#: Most actions in one audited game (a safety net against a policy that never ends a game).
_MAX_GAME_ACTIONS = 20_000



def true_outcome(game: Game, seat: int, action: PlayT, cache: dict[Any, int], agent: Agent) -> int:
    """The outcome for ``seat``'s team of playing ``action`` in ``game``'s current deal, the real hands
    known: one rollout of ``agent`` for all four seats (:func:`guandan.agents.search.rollout`), memoised in
    ``cache`` (keyed by action; pass a fresh dict per position).

    Returns:
        +1 when the team of ``seat`` wins the deal, -1 when it loses (R35).
    Raises:
        RuntimeError: the deal did not end within 2,000 actions (from the rollout).
    """
    if action not in cache:
        deal = game.deal.clone()
        deal.apply_unchecked(action)
        result = rollout(deal, agent, seat & 1)
        assert isinstance(result, tuple)
        cache[action] = result[0]
    return cache[action]

def run_search_audit(
    specs: Sequence[str],
    games: int,
    seed: int = 1,
    late_cards: int | None = 10,
    agent_seed: int = 1,
    progress: Callable[[int, dict[str, dict[str, Any]]], None] | None = None,
) -> dict[str, dict[str, Any]]:
    """Audit each agent spec's deviations from the heuristic (module docstring).

    Args:
        specs: agent specs (:func:`guandan.agents.make_agent`), e.g. ``hard:worlds=32,workers=1``.
        games: heuristic self-play games walked (>= 1); game ``i`` is ``Game(seed=seed + i)``.
        seed: seed of the first game.
        late_cards: audit only late positions (a seat still playing holds at most this many
            cards); ``None``: every play-phase position.
        agent_seed: seed given to every agent.
        progress: called after each game with ``(games done, figures so far)``.
    Returns:
        ``{spec: {"positions", "deviations", "gained", "lost", "even", "seconds", "failures"}}``
        (ints, ``seconds`` a float).
    Raises:
        ValueError: ``games`` below 1, no spec, or a bad spec (from ``make_agent``).
    """
    if games < 1:
        raise ValueError(f"games must be >= 1, not {games!r}")
    if not specs:
        raise ValueError("at least one agent spec is needed")
    heuristic = HeuristicAgent(agent_seed)
    agents = [make_agent(s, agent_seed) for s in specs]
    stats: dict[str, dict[str, Any]] = {
        s: {"positions": 0, "deviations": 0, "gained": 0, "lost": 0, "even": 0, "seconds": 0.0, "failures": 0}
        for s in specs
    }

    def game_done(g: int) -> None:
        if progress is not None:
            progress(g + 1, stats)

    for _g, game, seat, view, a0 in late_positions(seed, games, late_cards, heuristic, game_done):
        truth: dict[PlayT, int] = {}
        for spec, agent in zip(specs, agents):
            st = stats[spec]
            st["positions"] += 1
            t0 = time.perf_counter()
            a1 = agent.act(view)
            st["seconds"] += time.perf_counter() - t0
            st["failures"] = int(getattr(agent, "failures", 0))
            if a1 == a0:
                continue
            st["deviations"] += 1
            delta = true_outcome(game, seat, a1, truth, heuristic) - true_outcome(game, seat, a0, truth, heuristic)
            st["gained" if delta > 0 else "lost" if delta < 0 else "even"] += 1
    return stats


def late_positions(
    seed: int,
    games: int,
    late_cards: int | None,
    heuristic: Agent,
    on_game_end: Callable[[int], None] | None = None,
) -> Iterator[tuple[int, Game, int, SeatView, PlayT]]:
    """Walk heuristic self-play games and yield their late decisions (the audit's positions).

    Game ``g`` (0-based) is ``Game(seed=seed + g)``, played by ``heuristic`` for every seat to
    its first settlement (R33). Yielded: ``(g, game, seat, view, heuristic move)`` at every
    play-phase decision with more than one legal action, before the deciding seat is out, where a
    seat still playing holds at most ``late_cards`` cards (``None``: every such decision). The
    game is advanced with the heuristic's move once the consumer asks for the next position, so
    the consumer may read (not change) ``game`` meanwhile.

    Args:
        on_game_end: called with ``g`` after each game.
    Raises:
        RuntimeError: a game did not end within ``_MAX_GAME_ACTIONS`` actions.
    """
    for g in range(games):
        game = Game(seed=seed + g)
        n = 0
        while not game.settlements:
            seat = game.to_act()
            assert seat is not None
            view = seat_view(game, seat)
            a0 = heuristic.act(view)
            if (view.phase == "play" and len(view.legal_actions) > 1 and not view.finished
                    and (late_cards is None or is_late(view, late_cards))):
                yield g, game, seat, view, a0
            game.apply(a0, seat)
            n += 1
            if n > _MAX_GAME_ACTIONS:
                raise RuntimeError(f"game {seed + g} did not end within {_MAX_GAME_ACTIONS} actions")
        if on_game_end is not None:
            on_game_end(g)
