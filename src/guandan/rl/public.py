"""What every seat may know about a table, kept up to date as actions are applied.

:class:`PublicState` is what the observation encoders read, together with the observing seat's
own hand: nothing in it depends on another seat's hidden cards (DESIGN.md section 2, docs/rules.md
R32, R50). It is filled from a :class:`guandan.core.match.Game` by :meth:`PublicState.sync`
after every action, incrementally (the cards played this deal per seat are accumulated, not
recomputed from the history).
"""

from __future__ import annotations

import numpy as np

from guandan.core.deal import PLAY
from guandan.core.match import GAME_OVER, Game
from guandan.core.plays import PASS_TYPE, RETURN_TYPE, TRIBUTE_TYPE, PlayT


_ALL_VISIBLE = (True, True, True, True)


class PublicState:
    """The public part of a table (one per table, shared by the four seats' encoders).

    Attributes:
        played: ``int16 [4, 54]`` faces played so far this deal per seat (R50: plays are public).
        played_total: ``int16 [54]`` the sum over seats.
        played_rel: ``float32 [4, 216]``: for viewer ``v``, the played cards of relative seats
            0..3 (``v``, next, partner, previous) as four 54-blocks (kept incrementally so an
            encoder copies one row instead of gathering and converting).
        unseen_base: ``float32 [54]``: ``2 - played_total`` (cards not yet played, per face).
        last_action: per seat, its most recent action of this deal (``None`` before it acted).
        level: the deal's level (rank index 0..12); ``levels``: team levels ``(team02, team13)``.
        phase: ``tribute``, ``return``, ``play`` or ``game_over``; ``to_act``: seat or ``None``.
        n_cards: cards held per seat; ``counts_visible[s]`` whether seat ``s``'s count is
            public to the others (rule ``card_counts``, R32).
        trick: the current trick as ``(seat, action)`` pairs; ``top``/``top_seat``: the play to beat.
        finished: seats out so far, in order.
        return_target: during the return phase, the seat the acting seat returns to (R47).
        a_fails: failed target attempts per team (R41).
        deal_no: how many deals this state has followed (a new deal clears ``cache``).
        hand_version: per seat, bumped whenever that seat's hand changes (its plays; every
            seat on a tribute or return), so encoders can cache what depends on the hand only.
        cache: encoder scratch space for the current deal (keyed by the encoder).
    """

    __slots__ = (
        "played", "played_total", "played_rel", "unseen_base", "last_action", "level", "levels", "phase", "to_act", "n_cards",
        "counts_visible", "trick", "top", "top_seat", "finished", "return_target", "a_fails",
        "deal_no", "hand_version", "cache", "_deal", "_seen", "_le10",
    )

    def __init__(self) -> None:
        self.played = np.zeros((4, 54), dtype=np.int16)
        self.played_total = np.zeros(54, dtype=np.int16)
        self.played_rel = np.zeros((4, 216), dtype=np.float32)
        self.unseen_base = np.full(54, 2.0, dtype=np.float32)
        self.last_action: list[PlayT | None] = [None, None, None, None]
        self.deal_no = 0
        self.hand_version = [0, 0, 0, 0]
        self.cache: dict[object, object] = {}
        self._deal: object = None
        self._seen = 0
        self._le10 = False

    def sync(self, game: Game) -> None:
        """Bring the state up to date with ``game`` (call after every applied action)."""
        d = game.deal
        if d is not self._deal:
            self._deal = d
            self._seen = 0
            self.played.fill(0)
            self.played_total.fill(0)
            self.played_rel.fill(0.0)
            self.unseen_base.fill(2.0)
            self.last_action = [None, None, None, None]
            self._le10 = game.rules.card_counts == "le10"
            self.deal_no += 1
            self.cache.clear()
        hist = d.history
        if self._seen < len(hist):
            played, total, last = self.played, self.played_total, self.last_action
            rel, unseen = self.played_rel, self.unseen_base
            hv = self.hand_version
            for seat, act in hist[self._seen :]:
                t = act[0]
                if t == TRIBUTE_TYPE or t == RETURN_TYPE:
                    for s in range(4):  # a card moved between two hands
                        hv[s] += 1
                else:
                    last[seat] = act
                    if t != PASS_TYPE:
                        hv[seat] += 1
                        row = played[seat]
                        for f in act[2]:
                            row[f] += 1
                            total[f] += 1
                            unseen[f] -= 1.0
                            for v in range(4):
                                rel[v, 54 * ((seat - v) & 3) + f] += 1.0
            self._seen = len(hist)
        self.level = d.level
        self.levels = (game.score.levels[0], game.score.levels[1])
        self.phase = game.phase
        self.to_act = None if self.phase == GAME_OVER else d.turn
        self.n_cards = d.n_cards
        self.counts_visible = [n <= 10 for n in d.n_cards] if self._le10 else _ALL_VISIBLE
        in_play = d.phase == PLAY
        self.trick = d.trick if in_play else ()
        self.top = d.top if in_play else None
        self.top_seat = d.top_seat if in_play else None
        self.finished = d.finished
        self.return_target = None
        if d.phase == "return" and d.plan is not None and d.turn is not None:
            self.return_target = dict(d.plan.returns_due).get(d.turn)
        self.a_fails = (game.score.a_fails[0], game.score.a_fails[1])

    def copy(self) -> PublicState:
        """An independent copy (for :meth:`guandan.rl.table.Table.clone`)."""
        new = PublicState.__new__(PublicState)
        for name in PublicState.__slots__:
            if hasattr(self, name):
                setattr(new, name, getattr(self, name))
        new.played = self.played.copy()
        new.played_total = self.played_total.copy()
        new.played_rel = self.played_rel.copy()
        new.unseen_base = self.unseen_base.copy()
        new.last_action = list(self.last_action)
        new.hand_version = list(self.hand_version)
        new.cache = {}
        return new
