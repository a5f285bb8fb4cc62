"""How well a sampled world explains the other seats' past decisions (the search's belief weighting).

Split out of :mod:`guandan.agents.search` (which re-exports every name): the decisions asked
(:func:`past_decisions`), the agreement of a world (:func:`world_agreement`, replayed by the
engine from the start of the play phase, R29-R33), its seat-by-seat memoised form
(:class:`SeatAgreement`) and the Metropolis belief chain (:func:`belief_chain`).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

from guandan.core.deal import Deal
from guandan.core.plays import RETURN_TYPE, TRIBUTE_TYPE, PlayT
from guandan.core.views import SeatView
from guandan.core.worlds import World, WorldConstraints

from .base import Agent
from .heuristic import _signature
from .rollouts import deal_view

__all__ = ["SeatAgreement", "belief_chain", "past_decisions", "world_agreement"]


def _play_history(view: SeatView) -> list[tuple[int, PlayT]]:
    """The play-phase actions of the view's history (tribute and return actions left out)."""
    return [(s, a) for s, a in view.history if a[0] not in (TRIBUTE_TYPE, RETURN_TYPE)]


def past_decisions(view: SeatView, per_seat: int = 4) -> tuple[int, ...]:
    """The other seats' recent decisions that a sampled world can be asked about.

    Returns:
        Indices into the play-phase history (:func:`_play_history` order, ascending) of the
        last ``per_seat`` decisions (plays and passes) of every seat other than ``view.seat``.
    """
    plays = _play_history(view)
    out: list[int] = []
    seen = [0, 0, 0, 0]
    for i in range(len(plays) - 1, -1, -1):
        s = plays[i][0]
        if s != view.seat and seen[s] < per_seat:
            seen[s] += 1
            out.append(i)
    return tuple(sorted(out))


def world_agreement(view: SeatView, world: Sequence[Sequence[int]], decisions: Sequence[int],
                    model: Agent) -> int:
    """How many of the past ``decisions`` (:func:`past_decisions`) ``model`` would have made
    with the hands of the sampled ``world`` (the same play up to suits, or PASS).

    The deal is replayed from the start of the play phase (each seat's hand then = its world
    hand plus the cards it has played since, R29-R33 trick rules by the engine) and ``model``
    is asked, from that seat's view then, at each decision of ``decisions``. A decision with a
    single legal answer agrees by force.
    """
    plays = _play_history(view)
    if not decisions or not plays:
        return 0
    start = [list(h) for h in world]
    for seat, act in plays:
        if act[0] != "pass":
            start[seat].extend(act[2])
    deal = Deal(view.rules, view.level, start, random.Random(0), first_leader=plays[0][0])
    level = view.level
    want = set(decisions)
    last = max(want)
    act_deal = getattr(model, "act_deal", None)  # a model that reads the deal itself
    agree = 0
    for i, (seat, act) in enumerate(plays):
        if i > last:
            break
        if i in want:
            legal = deal.legal_actions()
            if len(legal) <= 1:
                agree += 1
            else:
                got = act_deal(deal) if act_deal is not None else model.act(deal_view(deal, seat))
                if got == act or (got[0] != "pass" and act[0] != "pass"
                                  and _signature(got, level) == _signature(act, level)):
                    agree += 1
        deal.push_unchecked(act)
    return agree


class _FrozenDeal:
    """The facts a deal-reading model (:meth:`FastRolloutPolicy.act_deal`) reads at one past
    decision: seat to act, hands (the seat's own, and the unseen cards as one other hand), card
    counts, the table, level and rules."""

    __slots__ = ("hands", "level", "n_cards", "rules", "top", "top_seat", "turn")


class SeatAgreement:
    """:func:`world_agreement` split by seat, for models that read the deal itself.

    A seat's decisions depend only on its own hand and public facts (the unseen cards are the
    deck less its hand and the cards played), so the agreement of a world is the sum over the
    other seats of a function of that seat's hand alone; :meth:`seat` memoises it per hand,
    which makes a card swap between two seats cost the decisions of those two seats at most.

    Args:
        view: the searching seat's view.
        decisions: indices of :func:`_play_history` (:func:`past_decisions`).
        model: an agent with ``act_deal`` (e.g. :class:`FastRolloutPolicy`).
        world: any world consistent with the view (only used to replay the tricks).
    """

    def __init__(self, view: SeatView, decisions: Sequence[int], model: Any,
                 world: Sequence[Sequence[int]]) -> None:
        self.model = model
        self.level = view.level
        plays = _play_history(view)
        n_now = [len(view.hand) if s == view.seat else (c if c is not None else 0)
                 for s, c in enumerate(view.card_counts)]
        # replay the public record backwards: cards each seat played from index i on
        after = [[0] * 54 for _ in range(4)]
        played_before = [0] * 54
        for _s, a in plays:
            if a[0] != "pass":
                for f in a[2]:
                    played_before[f] += 1
        n_at = n_now[:]
        want = set(decisions)
        per: dict[int, list[tuple[Any, ...]]] = {}
        # walk backwards so that "after" and "n_at" hold the state just before decision i
        states: list[tuple[Any, ...]] = []
        for i in range(len(plays) - 1, -1, -1):
            seat, act = plays[i]
            if act[0] != "pass":
                for f in act[2]:
                    after[seat][f] += 1
                    played_before[f] -= 1
                n_at[seat] += len(act[2])
            if i in want:
                states.append((i, seat, act, tuple(after[seat]), tuple(played_before), tuple(n_at)))
        # the table at each decision: replay forwards (trick rules by the engine)
        tops: dict[int, tuple[Any, Any]] = {}
        if states:
            # any consistent world replays the tricks (who still holds cards, R29-R30)
            start = [list(h) for h in world]
            for seat, act in plays:
                if act[0] != "pass":
                    start[seat].extend(act[2])
            deal = Deal(view.rules, view.level, start, random.Random(0), first_leader=plays[0][0])
            last = max(want)
            for i, (seat, act) in enumerate(plays):
                if i > last:
                    break
                if i in want:
                    tops[i] = (deal.top, deal.top_seat)
                deal.push_unchecked(act)
        for i, seat, act, aft, before, n_at_i in states:
            top, top_seat = tops.get(i, (None, None))
            per.setdefault(seat, []).append((act, aft, before, n_at_i, top, top_seat))
        self.per = per
        self.rules = view.rules
        self._memo: dict[tuple[int, tuple[int, ...]], int] = {}

    def seat(self, s: int, hand: Sequence[int]) -> int:
        """Decisions of seat ``s`` the model makes the same with ``hand`` (its hand now)."""
        key = (s, tuple(hand))
        got = self._memo.get(key)
        if got is not None:
            return got
        rows = self.per.get(s, ())
        agree = 0
        level = self.level
        now = [0] * 54
        for f in hand:
            now[f] += 1
        zero = [0] * 54
        for act, aft, before, n_at_i, top, top_seat in rows:
            own = [a + b for a, b in zip(now, aft)]
            unseen = [2 - o - p for o, p in zip(own, before)]
            d = _FrozenDeal()
            d.turn = s
            hands = [zero, zero, zero, zero]
            hands[s] = own
            hands[(s + 1) % 4] = unseen
            d.hands = hands
            d.level = level
            d.rules = self.rules
            d.n_cards = list(n_at_i)
            d.top = top
            d.top_seat = top_seat
            got_a = self.model.act_deal(d)
            if got_a == act or (got_a[0] != "pass" and act[0] != "pass"
                                and _signature(got_a, level) == _signature(act, level)):
                agree += 1
        self._memo[key] = agree
        return agree

    def world(self, world: Sequence[Sequence[int]]) -> int:
        """Agreement of a whole world (the sum over the seats that made checked decisions)."""
        return sum(self.seat(s, world[s]) for s in self.per)


def belief_chain(cons: WorldConstraints, world: World, view: SeatView, decisions: Sequence[int], model: Agent,
                 factor: int, moves: int, rng: random.Random) -> tuple[World, int]:
    """Move a sampled world towards the worlds that explain the other seats' decisions.

    A Metropolis chain over worlds (``moves`` proposals): a proposal swaps one card between two
    other seats still holding cards, kept only when both hands stay within the view's facts
    (``cons.lower``/``cons.upper``: counts per seat never change, cards seen played or passed
    to a seat stay where they must, R45-R48); it is accepted with probability
    ``factor ** (agreement_new - agreement_old)`` (capped at 1), where the agreement is
    :func:`world_agreement` of ``decisions`` under ``model``. The chain's stationary law is
    the uniform law of consistent worlds weighted by ``factor ** agreement`` (the swap is its own
    reverse, so proposals are symmetric): the importance weights of plain ``belief_weight``
    become samples, and a world counts once. The chain stops early once every decision is
    explained.

    Returns:
        ``(world, agreement)`` after the last move.
    """
    seats = [s for s in cons.others if cons.counts[s] > 0]
    hands = [list(h) for h in world]
    split = SeatAgreement(view, decisions, model, world) if hasattr(model, "act_deal") else None

    def agreement(w: Sequence[Sequence[int]]) -> int:
        if split is not None:
            return split.world(w)
        return world_agreement(view, w, decisions, model)

    agree = agreement(world)
    if len(seats) < 2 or not decisions:
        return world, agree
    lower, upper = cons.lower, cons.upper
    top = len(decisions)
    for _ in range(moves):
        if agree >= top:
            break
        s1, s2 = rng.sample(seats, 2)
        h1, h2 = hands[s1], hands[s2]
        i, j = rng.randrange(len(h1)), rng.randrange(len(h2))
        a, b = h1[i], h2[j]
        if a == b:
            continue
        # seat s1 gives a and takes b; seat s2 the reverse: both within their bounds
        if (h1.count(a) - 1 < lower[s1][a] or h1.count(b) + 1 > upper[s1][b]
                or h2.count(b) - 1 < lower[s2][b] or h2.count(a) + 1 > upper[s2][a]):
            continue
        h1[i], h2[j] = b, a
        new = tuple(tuple(sorted(h)) for h in hands)
        got = agreement(new)
        if got >= agree or rng.random() * factor ** (agree - got) < 1.0:
            agree = got
        else:
            h1[i], h2[j] = a, b
    out = tuple(tuple(sorted(h)) for h in hands)
    return out, agree  # type: ignore[return-value]
