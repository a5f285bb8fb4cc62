"""A deliberately naive, independent reference for readings, comparison and legal moves.

Written from docs/rules.md only (R9-R26, R12-R16, AMB-27), without importing the engine's
``guandan.core.plays`` or ``guandan.core.movegen``; only the card notation helpers of
``guandan.core.cards`` are used (for parsing and printing). It is slow on purpose: it
tries every assignment of every wild and every sub-multiset of a hand, so that the fast
engine can be checked against it (DESIGN.md section 4, differential tests).

Representation (the same as the engine's, so that outputs can be compared directly):

* a face is ``rank * 4 + suit`` for ranks ``0..12`` (``2..A``) and suits ``0..3`` (S H C D);
  ``52`` is the small joker, ``53`` the big joker; rank ``13`` = SJ, ``14`` = BJ;
* a reading is ``(type, rank, size)``; a play is ``(type, rank, cards)`` with cards in
  canonical order: natural faces ascending, then the wilds (the ♥ of the level rank).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from itertools import combinations_with_replacement, product

from guandan.core.cards import wild_face

SJ = 52
BJ = 53
SJ_RANK = 13
BJ_RANK = 14
ACE = 12

BOMB_TYPES = frozenset(("bomb", "straight_flush", "joker_bomb"))
SEQUENCE_TYPES = frozenset(("straight", "tube", "plate", "straight_flush"))

Reading = tuple[str, "int | None", int]
PlayT = tuple[str, "int | None", tuple[int, ...]]


def _rank(face: int) -> int:
    return face // 4 if face < 52 else (SJ_RANK if face == SJ else BJ_RANK)


def _suit(face: int) -> int:
    return face % 4 if face < 52 else -1


# --- sequence windows (R10) -----------------------------------------------------------------
def _windows(width: int) -> list[tuple[frozenset[int], int]]:
    """Every run of ``width`` consecutive ranks in sequence order, as (rank set, top rank).

    A may be low (before 2) or high (after K); no wrap-around (R10, EC-04, EC-08).
    """
    # sequence positions: A-low = -1, 2..A = 0..12; a window is positions p..p+width-1
    out = []
    for start in range(-1, 13 - width + 1):
        positions = range(start, start + width)
        ranks = frozenset(ACE if p == -1 else p for p in positions)
        out.append((ranks, start + width - 1))
    return out


STRAIGHT_WINDOWS = _windows(5)  # A2345 (top 5 = rank 3) .. TJQKA (top A)
TUBE_WINDOWS = _windows(3)  # AA2233 (top 3) .. QQKKAA
PLATE_WINDOWS = _windows(2)  # AAA222 (top 2) .. KKKAAA


def _window_top(ranks: Counter[int], width: int, copies: int) -> list[int]:
    """Top ranks of every window where ``ranks`` is exactly ``copies`` of each of ``width``
    consecutive ranks (no jokers)."""
    tops = []
    if len(ranks) != width or any(n != copies for n in ranks.values()):
        return tops
    keys = frozenset(ranks)
    for window, top in _windows(width):
        if window == keys:
            tops.append(top)
    return tops


# --- readings of one concrete card multiset (no wilds left) ---------------------------------
def _concrete_readings(ranks: list[int], level: int, fh_joker_pair: bool) -> set[Reading]:
    """Readings of concrete cards given only their ranks; suits are handled by the caller.

    Straight flushes are *not* produced here (they need suits); plain straights are.
    """
    n = len(ranks)
    cnt = Counter(ranks)
    out: set[Reading] = set()
    jokers = cnt[SJ_RANK] + cnt[BJ_RANK]
    if n == 1:
        out.add(("single", ranks[0], 1))
    if len(cnt) == 1:
        (r,) = cnt
        if n == 2:  # SJ SJ and BJ BJ are pairs (R19 table row 2)
            out.add(("pair", r, 2))
        elif n == 3 and r < SJ_RANK:
            out.add(("triple", r, 3))
        elif 4 <= n <= 10 and r < SJ_RANK and (r != level or n <= 8):
            out.add(("bomb", r, n))  # R19 row 8, EC-11
    if n == 5 and len(cnt) == 2:
        (r1, n1), (r2, n2) = cnt.items()
        if n1 == 2:
            (r1, n1), (r2, n2) = (r2, n2), (r1, n1)
        if n1 == 3 and n2 == 2 and r1 < SJ_RANK and (r2 < SJ_RANK or fh_joker_pair):  # R21, AMB-18
            out.add(("full_house", r1, 5))
    if jokers == 0:
        if n == 5:
            for top in _window_top(cnt, 5, 1):
                out.add(("straight", top, 5))
        if n == 6:
            for top in _window_top(cnt, 3, 2):
                out.add(("tube", top, 6))
            for top in _window_top(cnt, 2, 3):
                out.add(("plate", top, 6))
    return out


def _straight_tops(ranks: list[int]) -> list[int]:
    return _window_top(Counter(ranks), 5, 1) if SJ_RANK not in ranks and BJ_RANK not in ranks else []


def ref_classify(
    cards: Iterable[int], level: int, full_house_joker_pair: bool = True
) -> set[Reading]:
    """Every reading ``(type, rank, size)`` of ``cards`` at ``level`` by brute force.

    Every wild (♥ of the level rank, R8) is tried as every non-joker face (R12, R13: this
    includes the wild as itself), and the resulting concrete cards are checked against the
    combination table (R19-R22). The rank of each assigned face is enumerated first and its
    suit only where suits matter, i.e. for a straight flush (R11: suits matter for nothing
    else), so the enumeration is still exhaustive. Extra rules: lone wilds are only a level
    single / pair (R15); five physical cards of one rank (the wilds count as the level rank
    they are) are never a full house (R20); the four-joker bomb is exactly SJ SJ BJ BJ
    (R19 row 10, R14: no wilds); a plain straight whose top X can also be a straight flush
    is not listed (AMB-27).

    Args:
        cards: faces ``0..53`` (any order, repeats allowed).
        level: the deal's level rank index ``0..12``.
        full_house_joker_pair: option ``full_house_joker_pair`` (R21).
    Returns:
        The set of readings; empty when the cards are no legal play.
    """
    cards = list(cards)
    n = len(cards)
    if not 1 <= n <= 10:
        return set()
    w = wild_face(level)
    n_wild = cards.count(w)
    natural = [f for f in cards if f != w]
    if n_wild == n:  # R15: lone wilds
        return {("single", level, 1)} if n == 1 else ({("pair", level, 2)} if n == 2 else set())
    out: set[Reading] = set()
    if sorted(cards) == [SJ, SJ, BJ, BJ]:
        out.add(("joker_bomb", None, 4))
    nat_ranks = [_rank(f) for f in natural]
    nat_suits = [_suit(f) for f in natural]
    # wilds are interchangeable, so unordered rank assignments suffice
    for wr in combinations_with_replacement(range(13), n_wild):
        ranks = nat_ranks + list(wr)
        out |= _concrete_readings(ranks, level, full_house_joker_pair)
        if n == 5:
            tops = _straight_tops(ranks)
            if tops:
                for ws in product(range(4), repeat=n_wild):
                    if len(set(nat_suits) | set(ws)) == 1:
                        for top in tops:
                            out.add(("straight_flush", top, 5))
    for t, r, s in list(out):  # AMB-27
        if t == "straight" and ("straight_flush", r, s) in out:
            out.discard((t, r, s))
    if n == 5 and len({_rank(f) for f in cards}) == 1:
        # R20: five cards of one rank are a 5-bomb, never a full house. Physically the wilds
        # are level-rank cards (R8), so three natural level cards + both wilds are five level
        # cards: not "level triple + some pair".
        out = {x for x in out if x[0] != "full_house"}
    return out


# --- comparison (R9, R23-R26) ---------------------------------------------------------------
def level_strength(rank: int, level: int) -> float:
    """Level order (R9): 2 < 3 < ... < A < level rank < SJ < BJ."""
    if rank == level:
        return 12.5
    return float(rank)


_BOMB_RUNG = {4: 0, 5: 1, 6: 3, 7: 4, 8: 5, 9: 6, 10: 7}  # straight flush is rung 2 (R24)


def _bomb_key(play: PlayT, level: int) -> tuple[int, float]:
    t, r, cards = play
    if t == "joker_bomb":
        return (8, 0.0)
    if t == "straight_flush":
        assert r is not None
        return (2, float(r))
    assert r is not None
    return (_BOMB_RUNG[len(cards)], level_strength(r, level))


def ref_beats(a: PlayT, b: PlayT, level: int) -> bool:
    """Whether play ``a`` may be played over ``b`` (table) at ``level`` (R23-R26).

    Bombs (rank bombs, straight flushes, the four jokers) beat every non-bomb (R25) and follow
    the ladder 4 < 5 < SF < 6 < ... < 10 < jokers (R24); non-bombs need the same type and the
    same number of cards and a strictly higher key (R23, R26): level order for singles, pairs,
    triples and full houses (by the triple), top rank in sequence order for sequences.
    """
    a_bomb, b_bomb = a[0] in BOMB_TYPES, b[0] in BOMB_TYPES
    if a_bomb and not b_bomb:
        return True
    if b_bomb and not a_bomb:
        return False
    if a_bomb and b_bomb:
        return _bomb_key(a, level) > _bomb_key(b, level)
    if a[0] != b[0] or len(a[2]) != len(b[2]):
        return False
    assert a[1] is not None and b[1] is not None
    if a[0] in SEQUENCE_TYPES:
        return a[1] > b[1]
    return level_strength(a[1], level) > level_strength(b[1], level)


# --- legal plays by brute force -------------------------------------------------------------
def canonical(cards: Iterable[int], level: int) -> tuple[int, ...]:
    """Natural faces ascending, then the wilds."""
    w = wild_face(level)
    cards = list(cards)
    nat = sorted(f for f in cards if f != w)
    return tuple(nat) + (w,) * (len(cards) - len(nat))


def _sub_multisets(counts: Sequence[tuple[int, int]], lo: int, hi: int) -> Iterable[tuple[int, ...]]:
    """Every sub-multiset with ``lo..hi`` cards of ``[(face, copies), ...]``."""
    items = list(counts)

    def rec(i: int, chosen: list[int]) -> Iterable[tuple[int, ...]]:
        if i == len(items):
            if lo <= len(chosen) <= hi:
                yield tuple(chosen)
            return
        face, k = items[i]
        for take in range(k + 1):
            if len(chosen) + take > hi:
                break
            yield from rec(i + 1, chosen + [face] * take)

    yield from rec(0, [])


def ref_all_plays(
    hand: Iterable[int], level: int, full_house_joker_pair: bool = True, sizes: Iterable[int] | None = None
) -> set[PlayT]:
    """Every play (any reading of any sub-multiset) of ``hand``.

    Sub-multisets of 1..6 cards are all tried. A reading of 7..10 cards can only be a rank
    bomb (R19 table: every other type has at most 6 cards), whose cards are all of one rank,
    naturally or by being a wild (wilds may stand for any rank, naturals keep theirs); so for
    7..10 cards only the sets made of one rank's natural cards plus wilds are tried. ``sizes``
    restricts the card counts tried (a pure optimisation for callers that know which sizes
    can matter).
    """
    hand = list(hand)
    w = wild_face(level)
    want = set(range(1, 11)) if sizes is None else set(sizes)
    out: set[PlayT] = set()
    counts = sorted(Counter(hand).items())
    small = [s for s in want if s <= 6]
    if small:
        for sub in _sub_multisets(counts, min(small), max(small)):
            if len(sub) not in want:
                continue
            for t, r, _ in ref_classify(sub, level, full_house_joker_pair):
                out.add((t, r, canonical(sub, level)))
    if any(s >= 7 for s in want):
        n_w = hand.count(w)
        for rank in range(13):
            pool = [(f, k) for f, k in counts if f != w and _rank(f) == rank]
            if n_w:
                pool.append((w, n_w))
            for sub in _sub_multisets(pool, 7, 10):
                if len(sub) not in want:
                    continue
                for t, r, _ in ref_classify(sub, level, full_house_joker_pair):
                    out.add((t, r, canonical(sub, level)))
    return out


def ref_legal_plays(
    hand: Iterable[int], level: int, table: PlayT | None = None, full_house_joker_pair: bool = True
) -> set[PlayT]:
    """Every legal play of ``hand`` (faces) at ``level``: all plays when leading (R27), else
    those that beat ``table`` (R23-R26). Returns a set of ``(type, rank, canonical cards)``.

    When following, only sub-multisets of the table's size or of 4..10 cards (bombs, the four
    jokers) can beat the table (R23, R25), so only those sizes are enumerated.
    """
    if table is None:
        return ref_all_plays(hand, level, full_house_joker_pair)
    sizes = {len(table[2])} | set(range(4, 11))
    return {
        p
        for p in ref_all_plays(hand, level, full_house_joker_pair, sizes)
        if ref_beats(p, table, level)
    }


def play_line(play: PlayT) -> str:
    """A play in text notation, e.g. ``'pair T: TH TD'`` (for fingerprints and messages)."""
    from guandan.core.cards import card_text, rank_char

    t, r, cards = play
    return f"{t} {'-' if r is None else rank_char(r)}: {' '.join(card_text(f) for f in cards)}"
