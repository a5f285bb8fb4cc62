"""Differential tests: the engine against the naive brute-force reference (tests/reference.py).

Hypothesis draws card multisets biased towards few ranks, short runs of ranks, one or two
suits, the wilds and the jokers, so that the interesting readings (wild bombs, straight
flushes, tubes and plates, joker pairs in full houses) come up often. It checks:

* ``classify`` == ``ref_classify`` as sets of readings (R9-R22, R15, R20, AMB-27), with
  canonical cards and no duplicate readings, under both values of ``full_house_joker_pair``;
* ``beats`` == ``ref_beats`` on random pairs of plays (R23-R26);
* ``legal_plays`` == ``ref_legal_plays`` on hands of up to 12 cards, leading and following
  (R27, R28), and the engine's list has no duplicates.

The example counts keep the file well under a minute.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from reference import canonical, play_line, ref_beats, ref_classify, ref_legal_plays

from guandan.core.cards import cards_text, counts_of, parse_cards, parse_rank, wild_face
from guandan.core.movegen import legal_plays
from guandan.core.plays import beats, classify

SETTINGS = {"deadline": None, "suppress_health_check": [HealthCheck.too_slow]}

SUIT_CHOICES = [(0,), (1,), (2,), (3,), (0, 2), (1, 3), (0, 1), (0, 1, 2, 3)]


@st.composite
def themed_cards(draw, level: int, min_size: int = 1, max_size: int = 10) -> list[int]:
    """A multiset of faces (each face at most twice, R1) at ``level``.

    Themes: a few ranks (bombs, full houses), a run of consecutive ranks with A low or high
    (straights, tubes, plates), or any rank; suits from a small set (straight flushes); the two
    wilds and the jokers added with good probability.
    """
    theme = draw(st.sampled_from(["few", "run", "run", "any"]))
    if theme == "few":
        ranks = draw(st.lists(st.integers(0, 12), min_size=1, max_size=3, unique=True))
        if draw(st.booleans()):
            ranks.append(level)  # level-rank bombs, level triples in full houses
    elif theme == "run":
        start = draw(st.integers(-1, 11))
        width = draw(st.integers(2, 5))
        ranks = [12 if p == -1 else p for p in range(start, min(start + width, 13))]
    else:
        ranks = list(range(13))
    suits = draw(st.sampled_from(SUIT_CHOICES))
    w = wild_face(level)
    pool: list[int] = []
    for f in sorted({r * 4 + s for r in ranks for s in suits}):
        pool += [f, f]
    if w not in pool and draw(st.integers(0, 2)) > 0:
        pool += [w, w]
    if draw(st.integers(0, 3)) == 0:
        pool += [52, 52, 53, 53]
    hi = min(max_size, len(pool))
    idx = draw(st.lists(st.integers(0, len(pool) - 1), min_size=min(min_size, hi), max_size=hi, unique=True))
    return [pool[i] for i in idx]


@st.composite
def level_and_cards(draw, min_size: int = 1, max_size: int = 10) -> tuple[int, list[int]]:
    level = draw(st.integers(0, 12))
    return level, draw(themed_cards(level, min_size, max_size))


def _engine_readings(cards, level, fhjp):
    plays = classify(cards, level, fhjp)
    readings = [(p.type, p.rank, len(p.cards)) for p in plays]
    assert len(set(readings)) == len(readings), f"duplicate readings {plays}"
    for p in plays:
        assert tuple(p.cards) == canonical(cards, level)
    return set(readings)


def _cards(text: str) -> list[int]:
    return list(parse_cards(text))


def _play(text: str, level: str, ptype: str) -> tuple:
    """The only reading of type ``ptype`` of the cards ``text`` at ``level`` (reference)."""
    lv = parse_rank(level)
    cards = _cards(text)
    (reading,) = [r for r in ref_classify(cards, lv) if r[0] == ptype]
    return (reading[0], reading[1], canonical(cards, lv))


# --- classify --------------------------------------------------------------------------------
@settings(max_examples=3000, **SETTINGS)
@given(level_and_cards(), st.booleans())
# EC-20: L=5, 777+WW is a full house or a 5-bomb
@example((parse_rank("5"), _cards("7S 7C 7D 5H 5H")), True)
# EC-21: 5566+WW: plate 555666, tubes 445566 and 556677
@example((parse_rank("9"), _cards("5S 5C 6S 6C 9H 9H")), True)
# R20: three natural level cards + both wilds are five level cards: a bomb, not a full house
@example((parse_rank("7"), _cards("7S 7C 7D 7H 7H")), True)
# EC-01: straight flush with a wild, tops Q and J
@example((parse_rank("7"), _cards("8S 9S TS JS 7H")), True)
# EC-18: joker pair full house (option on and off)
@example((parse_rank("2"), _cards("3S 3C 3D BJ BJ")), True)
@example((parse_rank("2"), _cards("3S 3C 3D BJ BJ")), False)
# EC-10: ten-card bomb
@example((parse_rank("2"), _cards("9S 9S 9H 9H 9C 9C 9D 9D 2H 2H")), True)
# the four-joker bomb; jokers with a wild are nothing
@example((parse_rank("2"), _cards("SJ SJ BJ BJ")), True)
@example((parse_rank("2"), _cards("SJ BJ BJ 2H")), True)
def test_classify_matches_reference(lc, fhjp):
    level, cards = lc
    got = _engine_readings(cards, level, fhjp)
    want = ref_classify(cards, level, fhjp)
    assert got == want, f"level {level} cards {cards_text(sorted(cards))}: engine-ref {got - want}, ref-engine {want - got}"


# --- beats -----------------------------------------------------------------------------------
@st.composite
def two_plays(draw):
    level = draw(st.integers(0, 12))
    plays = []
    for _ in range(2):
        while True:
            cards = draw(themed_cards(level, 1, 10))
            readings = sorted(ref_classify(cards, level), key=str)
            if readings:
                break
        t, r, _ = draw(st.sampled_from(readings))
        plays.append((t, r, canonical(cards, level)))
    return level, plays[0], plays[1]


@settings(max_examples=1500, **SETTINGS)
@given(two_plays())
# EC-09, EC-12, EC-13, EC-14, EC-15, EC-22 (comparisons at the heart of the ladder)
@example((5, _play("JS TS 9S 8S 7S", "7", "straight_flush"), _play("KS KC KD KH KS", "7", "bomb")))
@example((5, _play("SJ SJ BJ BJ", "7", "joker_bomb"), _play("9S 9S 9H 9H 9C 9C 9D 9D 7H 7H", "7", "bomb")))
@example((0, _play("TS JS QS KS AS", "2", "straight_flush"), _play("TH JH QH KH AH", "2", "straight_flush")))
@example((0, _play("2S 2C 2D 2S", "2", "bomb"), _play("BJ", "2", "single")))
@example((5, _play("7S 7C 7D 2S 2S", "7", "full_house"), _play("AS AC AD KS KC", "7", "full_house")))
def test_beats_matches_reference(lab):
    level, a, b = lab
    assert beats(a, b, level) == ref_beats(a, b, level), f"level {level}: {play_line(a)} over {play_line(b)}"
    assert beats(b, a, level) == ref_beats(b, a, level), f"level {level}: {play_line(b)} over {play_line(a)}"
    assert not (ref_beats(a, b, level) and ref_beats(b, a, level))  # beating is asymmetric


# --- legal_plays -----------------------------------------------------------------------------
@st.composite
def hand_and_table(draw):
    level = draw(st.integers(0, 12))
    hand = draw(themed_cards(level, 1, 12))
    table = None
    if draw(st.integers(0, 4)) > 0:
        cards = draw(themed_cards(level, 1, 10))
        readings = sorted(ref_classify(cards, level), key=str)
        if readings:
            t, r, _ = draw(st.sampled_from(readings))
            table = (t, r, canonical(cards, level))
    return level, hand, table, draw(st.booleans())


@settings(max_examples=500, **SETTINGS)
@given(hand_and_table())
@example((parse_rank("T"), _cards("TS TS TH TH TC TC TD TD"), None, True))
@example((parse_rank("7"), _cards("5S 5C 6S 6C 7H 7H 8D 9D TD"), None, True))
@example((parse_rank("5"), _cards("KS 5H 3C 8D"), ("pair", 10, (40, 43)), True))
def test_legal_plays_match_reference(hlt):
    level, hand, table, fhjp = hlt
    got = legal_plays(counts_of(hand), level, table, fhjp)
    assert len(got) == len(set(got)), "duplicate plays in the engine's list"
    want = ref_legal_plays(hand, level, table, fhjp)
    missing = sorted(play_line(p) for p in want - set(got))
    extra = sorted(play_line(p) for p in set(got) - want)
    assert not missing and not extra, (
        f"level {level} hand {cards_text(sorted(hand))} table {table}: missing {missing} extra {extra}"
    )


def test_reference_is_not_vacuous():
    """The reference itself finds the readings docs/rules.md names (guards against a reference
    that agrees with the engine by being empty)."""
    lv7 = parse_rank("7")
    assert ref_classify(_cards("8S 9S TS JS 7H"), lv7) == {
        ("straight_flush", parse_rank("Q"), 5),
        ("straight_flush", parse_rank("J"), 5),
    }  # EC-01
    assert ref_classify(_cards("5S 5C 6S 6C 9H 9H"), parse_rank("9")) == {
        ("plate", parse_rank("6"), 6),
        ("tube", parse_rank("6"), 6),
        ("tube", parse_rank("7"), 6),
    }  # EC-21
    assert ref_classify(_cards("7S 7C 7D 5H 5H"), parse_rank("5")) == {
        ("full_house", parse_rank("7"), 5),
        ("bomb", parse_rank("7"), 5),
    }  # EC-20
    assert ref_classify(_cards("SJ BJ"), lv7) == set()  # EC-17
    assert ref_classify(_cards("7H"), lv7) == {("single", lv7, 1)}  # EC-16
    assert ref_classify(_cards("KS QD JH TC 9S"), lv7) == {("straight", parse_rank("K"), 5)}
    assert ref_classify(_cards("KS AS 2S 3S 4S"), lv7) == set()  # no wrap (R10)
    hand = _cards("5S 5C 5D 5H")
    assert len(ref_legal_plays(hand, lv7, None)) == 4 + 6 + 4 + 1  # singles, pairs, triples, bomb
    assert ref_legal_plays(hand, lv7, ("bomb", parse_rank("6"), tuple(_cards("6S 6C 6D 6H")))) == set()


@pytest.mark.parametrize(
    "a, b, level, expected",
    [
        # EC-09: straight flush over a 5-bomb; a 6-bomb over the straight flush
        ("4C 5C 6C 7C 8C", "9S 9C 9D 9S 9D", "2", True),
        ("3S 3C 3D 3S 3C 3D", "4C 5C 6C 7C 8C", "2", True),
        # EC-11: level-rank bomb beats an ace bomb of the same size
        ("7S 7C 7D 7S", "AS AC AD AH", "7", True),
        # EC-13: equal never beats
        ("9S TS JS QS KS", "9C TC JC QC KC", "2", False),
        # EC-04: 23456 beats A2345
        ("2S 3C 4D 5S 6C", "AS 2C 3D 4S 5C", "9", True),
        # EC-07: at level Q, TJQKA beats 9TJQK
        ("TS JC QD KS AC", "9S TC JD QS KC", "Q", True),
    ],
)
def test_reference_beats_named_cases(a, b, level, expected):
    lv = parse_rank(level)

    def play(text):
        cards = _cards(text)
        (reading,) = [r for r in ref_classify(cards, lv) if r[0] != "full_house"]
        return (reading[0], reading[1], canonical(cards, lv))

    pa, pb = play(a), play(b)
    assert ref_beats(pa, pb, lv) is expected
    assert beats(pa, pb, lv) is expected
