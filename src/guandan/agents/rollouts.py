"""Rollouts of the search bot: play a sampled deal out with one policy for every seat.

Split out of :mod:`guandan.agents.search` (which re-exports every name): the cheap rollout
policy (:class:`RolloutPolicy`), the bare seat view of a deal inside a rollout
(:func:`deal_view`) and :func:`rollout` itself (R29-R33 by the engine, the result by R35).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from guandan.core.cards import faces_of
from guandan.core.deal import OVER, Deal
from guandan.core.views import SeatView

from .base import Agent
from .heuristic import Decomposition, HeuristicAgent, decompose

__all__ = ["LEVELS", "RolloutPolicy", "RolloutStopped", "deal_view", "rollout"]

#: Levels gained by the winning team per result (R35, official upgrade table).
LEVELS = {"1-2": 3, "1-3": 2, "1-4": 1}
_LEVELS = LEVELS
_MAX_ACTIONS = 2_000

class RolloutPolicy(HeuristicAgent):
    """The heuristic made about 3x cheaper, for rollouts (name ``rollout``).

    It evaluates one answer that breaks a combination (``MAX_EVAL = 1``) and decomposes hands
    with a smaller search budget (``DEC_BUDGET`` nodes per straight-flush choice instead of
    400); the rules for leading, bombs and tribute are the heuristic's.
    """

    name = "rollout"
    MAX_EVAL = 1
    EVAL_BUDGET = 40
    #: decomposition budget (search nodes) for the hand itself
    DEC_BUDGET = 60

    def _dec(self, counts: Sequence[int], budget: int = 400) -> Decomposition:
        return decompose(counts, self._level, self.fhjp, min(budget, self.DEC_BUDGET), self.MODEL)

    def _cost(self, counts: Sequence[int], budget: int = 400) -> float:
        return self._dec(counts, budget).cost


def deal_view(deal: Deal, seat: int) -> SeatView:
    """A :class:`SeatView` of ``seat`` in a bare play-phase ``deal`` (inside a rollout).

    Only the deal's own facts are filled in (levels, match scores and tribute events are
    neutral): enough for policies that play one deal.
    """
    legal = tuple(deal.legal_actions()) if deal.turn == seat else ()
    return SeatView(
        seat=seat,
        phase="play" if deal.phase != OVER else "game_over",
        to_act=deal.turn,
        hand=faces_of(deal.hands[seat]),
        card_counts=tuple(deal.n_cards),
        level=deal.level,
        levels=(deal.level, deal.level),
        game_number=1,
        deal_number=1,
        trick=tuple(deal.trick),
        top=deal.top,
        top_seat=deal.top_seat,
        finished=tuple(deal.finished),
        history=tuple(deal.history),
        tribute_events=(),
        legal_actions=legal,
        a_fails=(0, 0),
        points=(0, 0, 0, 0),
        rules=deal.rules,
    )


class RolloutStopped(Exception):
    """A rollout was stopped by its ``should_stop`` callback (the time budget ran out)."""


def rollout(
    deal: Deal,
    policy: Agent,
    team: int,
    level_weight_units: int = 1,
    value_fn: Callable[[Deal, int], float] | None = None,
    rollout_depth: int | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> tuple[int, int] | float:
    """Play ``deal`` out in place with ``policy`` for every seat.

    Returns:
        ``(win, levels)`` from ``team``'s side when the deal ends: ``win`` is +1 or -1 (R35),
        ``levels`` ±3/2/1 times ``level_weight_units``; or ``value_fn(deal, team)`` (a float)
        after ``rollout_depth`` actions when both are given.
    Raises:
        RolloutStopped: ``should_stop()`` returned true (checked before every action).
        RuntimeError: the deal did not end within 2,000 actions (a policy bug).
    """
    n = 0
    # a policy that reads the deal itself (FastRolloutPolicy) skips the view and the legal list
    act_deal = getattr(policy, "act_deal", None)
    while deal.phase != OVER:
        if should_stop is not None and should_stop():
            raise RolloutStopped
        if value_fn is not None and rollout_depth is not None and n >= rollout_depth:
            return float(value_fn(deal, team))
        seat = deal.turn
        assert seat is not None
        if act_deal is not None:
            act = act_deal(deal)
        else:
            legal = deal.legal_actions()
            act = legal[0] if len(legal) == 1 else policy.act(deal_view(deal, seat))
        deal.apply_unchecked(act)
        n += 1
        if n > _MAX_ACTIONS:
            raise RuntimeError("rollout did not end")
    res = deal.result
    assert res is not None
    sign = 1 if res.winner_team == team else -1
    return sign, sign * _LEVELS[res.result] * level_weight_units
