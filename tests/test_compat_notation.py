"""Platform notation conversions (PROTOCOL.md §3-4), round trips over real move lists."""

from __future__ import annotations

import random

import pytest

from guandan.compat.notation import (
    action_from_platform,
    action_to_platform,
    card_from_platform,
    card_to_platform,
)
from guandan.core import NotationError, parse_cards, parse_rank
from guandan.core.match import shuffle_deal
from guandan.core.movegen import legal_plays
from guandan.core.cards import counts_of


def test_cards() -> None:
    assert card_to_platform(parse_cards("TH")[0]) == "HT"
    assert card_to_platform(parse_cards("2S")[0]) == "S2"
    assert card_to_platform(52) == "SB" and card_to_platform(53) == "HR"
    assert card_from_platform("DQ") == parse_cards("QD")[0]
    for f in range(54):
        assert card_from_platform(card_to_platform(f)) == f
    with pytest.raises(NotationError):
        card_from_platform("TH")  # rank-then-suit is ours, not the platform's
    with pytest.raises(NotationError):
        card_from_platform("HB")


def _act(cards: str, ptype: str, rank: str | None, level: str):
    from guandan.core import classify

    for p in classify(parse_cards(cards), parse_rank(level)):
        if p.type == ptype and (rank is None or p.rank == parse_rank(rank)):
            return tuple(p)
    raise AssertionError("no such reading")


def test_sequence_rank_is_lowest_card() -> None:
    # A-2-3-4-5 is written with rank 'A', 10-J-Q-K-A with 'T' (PROTOCOL.md §4)
    assert action_to_platform(_act("AS 2D 3C 4H 5S", "straight", "5", "9")) == ["Straight", "A", ["D2", "C3", "H4", "S5", "SA"]]
    assert action_to_platform(_act("TS JD QC KH AS", "straight", "A", "9"))[1] == "T"
    assert action_to_platform(_act("AS AD 2S 2D 3S 3D", "tube", "3", "9"))[:2] == ["ThreePair", "A"]
    assert action_to_platform(_act("AS AD AC 2S 2D 2C", "plate", "2", "9"))[:2] == ["TwoTrips", "A"]
    assert action_to_platform(_act("SJ SJ BJ BJ", "joker_bomb", None, "9"))[:2] == ["Bomb", "JOKER"]
    assert action_to_platform(_act("BJ BJ", "pair", None, "9"))[:2] == ["Pair", "R"]
    assert action_to_platform(_act("7S 7D 7C 9S 9D", "full_house", "7", "2"))[:2] == ["ThreeWithTwo", "7"]


def test_wild_written_as_heart_level_card() -> None:
    # the manual's example: ['Pair', '6', ['S6', 'H2']] at level 2
    act = action_from_platform(["Pair", "6", ["S6", "H2"]], parse_rank("2"))
    assert act == ("pair", parse_rank("6"), (parse_cards("6S")[0], parse_cards("2H")[0]))  # wild last
    # ['Bomb', '2', ['S2','H2','H2','C2','H9']] at level 9, H9 wild
    act = action_from_platform(["Bomb", "2", ["S2", "H2", "H2", "C2", "H9"]], parse_rank("9"))
    assert act[0] == "bomb" and act[1] == parse_rank("2") and len(act[2]) == 5


def test_round_trip_on_real_move_lists() -> None:
    rng = random.Random(4)
    n = 0
    for _ in range(6):
        level = rng.randrange(13)
        hand = shuffle_deal(rng)[0]
        for act in legal_plays(counts_of(hand), level):
            assert action_from_platform(action_to_platform(act), level) == act
            n += 1
    assert n > 1000
    assert action_from_platform(["PASS", "PASS", "PASS"], 0) == ("pass", None, ())
    assert action_from_platform(["back", "back", ["D5"]], 0) == ("return", parse_rank("5"), parse_cards("5D"))


def test_rejects_what_is_not_a_reading() -> None:
    from guandan.core import IllegalAction

    with pytest.raises(IllegalAction):
        action_from_platform(["Pair", "6", ["S6", "S7"]], 0)
    with pytest.raises(IllegalAction):
        action_from_platform(["Nonsense", "6", ["S6"]], 0)
    with pytest.raises(IllegalAction):
        action_from_platform({"actIndex": 1}, 0)
