"""Hints against a pair of level cards (reported: "nothing beats" with four kings in hand).

At level 2 the 2s rank above the aces (R9), so no pair beats a pair of 2s, but any bomb does
(R24); the hint list must offer the bomb (the 提示 contract: every play that beats the table,
bombs last), never an empty list.
"""

from __future__ import annotations

import random
from collections import Counter

from guandan.core.cards import parse_cards
from guandan.core.match import Game, shuffle_deal
from guandan.core.plays import BOMB_TYPES
from guandan.core.views import seat_view
from guandan.server.table.hints import hint_actions


def _deal(wanted: dict[int, str], seed: int) -> list[list[int]]:
    """A shuffled 27-card deal (R4) with ``wanted[seat]`` swapped into that seat."""
    hands = [list(h) for h in shuffle_deal(random.Random(seed))]
    need = {s: Counter(parse_cards(t)) for s, t in wanted.items()}
    every = sum(need.values(), Counter())
    for seat, cards in need.items():
        for face, n in cards.items():
            while Counter(hands[seat])[face] < n:
                src = next(o for o in range(4) if o != seat and Counter(hands[o])[face] > need.get(o, Counter())[face])
                give = next(f for f in hands[seat] if Counter(hands[seat])[f] > cards[f] and f not in every)
                hands[src].remove(face)
                hands[src].append(give)
                hands[seat].remove(give)
                hands[seat].append(face)
    return hands


def test_a_pair_of_level_cards_is_beaten_by_a_king_bomb_in_the_hints():
    for seed, pair in ((1, "2S 2C"), (2, "2S 2H"), (3, "2D 2H")):  # 2H: the wild (R8), R15 pair
        hands = _deal({0: pair, 1: "KS KH KC KD"}, seed)
        game = Game(hands=hands, first_leader=0, seed=seed)
        assert game.deal.level == 0
        lead = next(a for a in game.legal_actions() if a[0] == "pair" and sorted(a[2]) == sorted(parse_cards(pair)))
        game.apply(lead, 0)
        view = seat_view(game, 1)
        hints = hint_actions(view)
        kings = sorted(parse_cards("KS KH KC KD"))
        assert any(h[0] == "bomb" and sorted(h[2]) == kings for h in hints) or any(
            h[0] == "bomb" and h[1] == 11 and len(h[2]) == 4 for h in hints), hints
        # every non-pass legal action has a hint of its type and rank; bombs come last (R24)
        legal = {(a[0], a[1], len(a[2])) for a in view.legal_actions if a[0] != "pass"}
        assert legal <= {(h[0], h[1], len(h[2])) for h in hints}
        kinds = [h[0] in BOMB_TYPES for h in hints]
        assert kinds == sorted(kinds)
