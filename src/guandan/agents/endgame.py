"""Exact perfect-information ("double dummy") solver for the race to 头游 (docs/rules.md R27-R35).

The deal's winning team is the team of the first seat to go out (头游, R33/R35), so with every
hand known and nobody out yet, "does team T get the first seat out under best play by both
teams" is a two-team zero-sum game with boolean value that ends the moment a hand is empty
(R31: the last cards are one legal play). This module answers it by depth-first AND/OR search
(alpha-beta on a {0, 1} value: a seat of team T needs one winning move, a seat of the other
team one refutation) over the engine's own transitions (:meth:`Deal.push_unchecked` /
:meth:`Deal.pop_unchecked`, legal moves from :meth:`Deal.legal_actions`, R23-R29).

What makes it exact and fast enough:

* **No seat is out** inside the search, so the four seats all hold cards, a trick ends after
  three passes in a row (R29) and 接风 (R30) never arises: the first empty hand ends the search.
* **Going out at once**: a seat that can play its whole hand now (a legal play, R27/R28, of all
  its cards, R31) wins for its team; no other move is looked at.
* **Transposition table** keyed by the four hands, the seat to act and the trick state (the top
  play's comparison key ``(type, cards, key)`` and who played it; with all four seats in play the
  passes since are fixed by those, R29). Values are stored as "team 0 gets 头游", so one table
  serves both teams; every stored value is exact (a boolean search never returns a bound).
* **Suits that cannot matter**: suits only matter for straight flushes (R19/R24). A hand in which
  no straight flush can be formed (no suit has, in any of the ten straight windows R10, enough
  cards of that suit plus wilds, R12-R16, to make five) never gets one later either, so it is
  keyed by its rank counts, wilds and jokers. The wild (the heart of the level rank, R8) keeps
  its own count.
* **Equivalent moves**: two plays that leave the same (keyed) hand and the same top-play key
  lead to the same position; only the first is searched.
* **Move ordering**: an optional ``order`` callback (e.g. the fast rollout policy's
  ``act_deal``) names the move tried first, then a static order (following a partner: PASS
  first; otherwise the weakest plays that beat the table, bombs last, PASS last; leading: more
  cards first, bombs last).
* **Node budget**: each visited position counts one node; past ``max_nodes`` the answer is
  ``None`` (unknown), never a guess.

Standard library, :mod:`guandan.core` and the heuristic's straight-flush finder only.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from guandan.core.deal import PLAY, Deal
from guandan.core.plays import (
    BOMB_TYPES,
    PASS_TYPE,
    PlayT,
    play_key,
)

from .decomposition import _sf_candidates

__all__ = ["EndgameSolver", "SolveStopped", "solve", "solve_actions"]

_POW3 = tuple(3 ** f for f in range(54))
#: How often (visited nodes) the ``should_stop`` callback is asked.
STOP_EVERY = 256


class SolveStopped(Exception):
    """The solver's ``should_stop`` callback returned true (a time budget ran out)."""


class _Exhausted(Exception):
    """The node budget ran out."""


def _top_key(play: PlayT, level: int) -> tuple[str, int, int]:
    """What of a top play decides which plays beat it (R23-R26): type, card count, key."""
    return play[0], len(play[2]), play_key(play, level)


def _sf_possible(counts: Sequence[int], level: int) -> bool:
    """Whether some sub-multiset of ``counts`` is a straight flush (R19, R10 windows, wilds
    R12-R16 fill at most two positions): the heuristic's straight-flush finder, asked once."""
    return bool(_sf_candidates(counts, level, min(counts[level * 4 + 1], 2)))


class EndgameSolver:
    """Solves positions of one deal (their table is kept between calls on the same deal).

    Args:
        deal: a play-phase deal, every hand known, nobody out (:attr:`Deal.finished` empty,
            every seat holding cards). The solver moves it with push/pop and leaves it as given.
        order: optional ``deal -> action`` naming the move to try first at each position (it
            must return a legal action of the seat to act; anything else is ignored).
        should_stop: optional callback asked every :data:`STOP_EVERY` nodes; when it returns
            true, :class:`SolveStopped` is raised.
        table: keep the transposition table (``False``: every position is searched afresh; the
            same values, more nodes; for checking the table's keys).
    Raises:
        ValueError: the deal is not in the play phase, or a seat is out or holds no cards.
    """

    def __init__(self, deal: Deal, order: Callable[[Deal], Any] | None = None,
                 should_stop: Callable[[], bool] | None = None, table: bool = True) -> None:
        if deal.phase != PLAY:
            raise ValueError(f"the solver works in the play phase, not {deal.phase!r}")
        if deal.finished or min(deal.n_cards) <= 0:
            raise ValueError("the solver needs every seat still holding cards (nobody out)")
        self.deal = deal
        self.level = deal.level
        self.order = order
        self.should_stop = should_stop
        self.table = table
        self.codes = [sum(c * p for c, p in zip(h, _POW3)) for h in deal.hands]
        self.tt: dict[tuple[Any, ...], bool] = {}
        self._canon: dict[int, int] = {}
        #: nodes visited by the last call
        self.nodes = 0
        self._limit = 0

    # -- keys --------------------------------------------------------------------------------
    def _hand_key(self, code: int, counts: Sequence[int]) -> int:
        """The hand's code, or (straight-flush-free hands) a negative code of its rank counts."""
        got = self._canon.get(code)
        if got is not None:
            return got
        level = self.level
        if _sf_possible(counts, level):
            key = code
        else:
            wild = level * 4 + 1
            key = 0
            for r in range(13):
                n = sum(counts[r * 4 + s] for s in range(4) if r * 4 + s != wild)
                key = key * 9 + n
            key = ((key * 3 + counts[wild]) * 3 + counts[52]) * 3 + counts[53]
            key = -1 - key
        self._canon[code] = key
        return key

    def _key(self) -> tuple[Any, ...]:
        d = self.deal
        hands, codes = d.hands, self.codes
        hk = self._hand_key
        k = (hk(codes[0], hands[0]), hk(codes[1], hands[1]), hk(codes[2], hands[2]),
             hk(codes[3], hands[3]), d.turn)
        if d.top is None:
            return k
        return k + (_top_key(d.top, self.level), d.top_seat)

    # -- moves -------------------------------------------------------------------------------
    def _moves(self, seat: int) -> list[PlayT]:
        """Legal actions of ``seat`` (to act), one per equivalence class, ordered."""
        d = self.deal
        level = self.level
        legal = d.legal_actions()
        hand = d.hands[seat]
        code = self.codes[seat]
        seen: set[Any] = set()
        out: list[PlayT] = []
        for a in legal:
            if a[0] == PASS_TYPE:
                out.append(a)
                continue
            rest = code - sum(_POW3[f] for f in a[2])
            for f in a[2]:
                hand[f] -= 1
            k = (self._hand_key(rest, hand), _top_key(a, level))
            for f in a[2]:
                hand[f] += 1
            if k in seen:
                continue
            seen.add(k)
            out.append(a)
        top = d.top
        if top is None:
            out.sort(key=lambda a: (a[0] in BOMB_TYPES, -len(a[2]), play_key(a, level)))
        else:
            partner_top = d.top_seat == (seat + 2) % 4
            out.sort(key=lambda a: (
                (0 if partner_top else 2) if a[0] == PASS_TYPE else (1 + (a[0] in BOMB_TYPES)),
                0 if a[0] == PASS_TYPE else play_key(a, level),
            ))
        if self.order is not None and len(out) > 1:
            first = self.order(d)
            if first in out and first != out[0]:
                out.remove(first)
                out.insert(0, first)
        return out

    # -- search ------------------------------------------------------------------------------
    def _team0_wins(self) -> bool:
        """Whether team 0 gets 头游 from the deal's current position under best play."""
        self.nodes += 1
        if self.nodes > self._limit:
            raise _Exhausted
        if self.should_stop is not None and self.nodes % STOP_EVERY == 0 and self.should_stop():
            raise SolveStopped
        d = self.deal
        seat = d.turn
        assert seat is not None
        key = self._key()
        got = self.tt.get(key)
        if got is not None:
            return got
        mine = (seat & 1) == 0  # the value if the seat to act has its way
        n = d.n_cards[seat]
        moves = self._moves(seat)
        for a in moves:
            if len(a[2]) == n:  # R31: the whole hand as one legal play ends the race
                return mine
        codes = self.codes
        for a in moves:
            delta = sum(_POW3[f] for f in a[2])
            codes[seat] -= delta
            d.push_unchecked(a)
            try:
                v = self._team0_wins()
            finally:
                d.pop_unchecked()
                codes[seat] += delta
            if v == mine:
                if self.table:
                    self.tt[key] = mine
                return mine
        if self.table:
            self.tt[key] = not mine
        return not mine

    def solve(self, team: int, max_nodes: int) -> bool | None:
        """Whether ``team`` (0: seats 0/2, 1: seats 1/3) gets 头游 from the deal's position under
        best play by both teams (R33/R35); ``None`` when more than ``max_nodes`` positions would
        be visited (the deal is left as it was).

        Raises:
            SolveStopped: ``should_stop`` returned true.
        """
        self.nodes = 0
        self._limit = max_nodes
        try:
            v = self._team0_wins()  # every push inside is popped on the way out, even on errors
        except _Exhausted:
            return None
        return v if team == 0 else not v

    def solve_actions(self, team: int, actions: Sequence[PlayT], max_nodes: int) -> list[bool | None]:
        """For each of ``actions`` (legal actions of the seat to act), whether ``team`` gets 头游
        after it under best play; ``None`` for the actions not settled within ``max_nodes``
        nodes in all (the table is shared, so later actions reuse earlier work).

        Raises:
            SolveStopped: ``should_stop`` returned true.
        """
        d = self.deal
        seat = d.turn
        assert seat is not None
        out: list[bool | None] = []
        left = max_nodes
        for a in actions:
            if a[0] != PASS_TYPE and len(a[2]) == d.n_cards[seat]:
                out.append((seat & 1) == team)  # going out with this play (R31, R35)
                continue
            if left <= 0:
                out.append(None)
                continue
            delta = sum(_POW3[f] for f in a[2])
            self.codes[seat] -= delta
            d.push_unchecked(a)
            try:
                v = self.solve(team, left)
            finally:
                d.pop_unchecked()
                self.codes[seat] += delta
            left -= self.nodes
            out.append(v)
        return out


def solve(deal: Deal, team: int, max_nodes: int, order: Callable[[Deal], Any] | None = None) -> bool | None:
    """Whether ``team`` gets 头游 (R33/R35) from ``deal``'s position under best play by both
    teams, every hand known; ``None`` when ``max_nodes`` positions do not settle it.

    Raises:
        ValueError: see :class:`EndgameSolver`.
    """
    return EndgameSolver(deal, order).solve(team, max_nodes)


def solve_actions(deal: Deal, team: int, actions: Sequence[PlayT], max_nodes: int,
                  order: Callable[[Deal], Any] | None = None) -> list[bool | None]:
    """:meth:`EndgameSolver.solve_actions` on a fresh solver (``max_nodes`` in all).

    Raises:
        ValueError: see :class:`EndgameSolver`.
    """
    return EndgameSolver(deal, order).solve_actions(team, actions, max_nodes)
