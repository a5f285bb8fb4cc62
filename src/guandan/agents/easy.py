"""A casual player (name ``easy``): the heuristic with believable mistakes, never absurd ones.

At each play-phase decision with a real choice, with probability ``mistake_rate`` the agent
plays a plausible alternative instead of the heuristic's move: another combination of its own
hand decomposition (a different lead, an answer that is not the cheapest), or a pass where it
could have answered an opponent. The alternatives come from
:func:`guandan.agents.search.candidate_actions`, so every one is a natural play of the hand.

What it never does (the "never absurd" rules):

* it goes out whenever the heuristic would go out (R31);
* it never spends a bomb, straight flush or joker bomb the heuristic would keep (R24), and
  never bombs its partner's trick;
* it never beats its partner's trick when the heuristic passes on it (R28);
* when an opponent is about to go out (``CLOSE`` cards or fewer), it plays like the heuristic;
* tribute and return are the heuristic's (R45, R47).

Deterministic for a seed: the mistakes are drawn from the agent's own ``random.Random``.
"""

from __future__ import annotations

import random

from guandan.core.plays import BOMB_TYPES, PASS_TYPE, PlayT
from guandan.core.views import SeatView

from .heuristic import HeuristicAgent


class EasyAgent:
    """Casual player (name ``easy``; module docstring).

    Args:
        seed: seed of the agent's ``random.Random`` (which decisions are mistakes).
        mistake_rate: probability of a mistake at a decision with a real choice, 0..1.
    Raises:
        ValueError: ``mistake_rate`` outside 0..1.
    """

    name = "easy"
    #: an opponent with this many cards or fewer: no mistakes
    CLOSE = 3

    def __init__(self, seed: int | None = None, mistake_rate: float = 0.3) -> None:
        if not 0.0 <= mistake_rate <= 1.0:
            raise ValueError(f"mistake_rate must be in [0, 1], not {mistake_rate!r}")
        self.rng = random.Random(seed)
        self.mistake_rate = mistake_rate
        self.heuristic = HeuristicAgent(seed)
        #: decisions where a mistake was played
        self.mistakes = 0

    def act(self, view: SeatView) -> PlayT:
        """Choose one of ``view.legal_actions``.

        Raises:
            ValueError: the view offers no legal action.
        """
        best = self.heuristic.act(view)
        legal = view.legal_actions
        if view.phase != "play" or len(legal) <= 1 or len(best[2]) == len(view.hand):
            return best
        counts = [27 if c is None else c for c in view.card_counts]
        opps = ((view.seat + 1) % 4, (view.seat + 3) % 4)
        if any(0 < counts[s] <= self.CLOSE for s in opps):
            return best
        if self.rng.random() >= self.mistake_rate:
            return best
        from .search import candidate_actions  # lazy: search imports the core world sampler

        partner_on_top = view.top_seat == (view.seat + 2) % 4
        options = []
        for a in candidate_actions(view, self.heuristic, best, limit=5):
            if a == best:
                continue
            if a[0] in BOMB_TYPES and best[0] not in BOMB_TYPES:
                continue  # never spend a bomb the heuristic keeps
            if partner_on_top and a[0] != PASS_TYPE:
                continue  # never beat the partner's trick
            options.append(a)
        if not options:
            return best
        self.mistakes += 1
        return self.rng.choice(options)
