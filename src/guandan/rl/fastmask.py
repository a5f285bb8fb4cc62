"""The ``abstract`` action mask of a play-phase decision, computed from rank counts.

:meth:`guandan.rl.table.Table.mask` in ``abstract`` mode needs only *which* abstract ids
(:mod:`guandan.rl.abstract`) have a legal realisation, not every card-level play. Enumerating
the card-level legal actions (:func:`guandan.core.movegen.legal_plays`) and grouping them costs
about as much as the rest of a step together, mostly in following positions where the answer is
a handful of ids. This module answers the question directly from the hand's natural counts per
rank, its wilds, its per-suit rank masks and the play to beat, with the feasibility conditions
the move generator implements (docs/rules.md R8-R27):

* single of rank r: a natural card of r, or a wild when r is the level (R15); jokers natural;
* pair of rank r: two naturals, one natural + one wild, or two wilds when r is the level (R15);
  joker pairs natural only (R19);
* triple of rank r (0..12): naturals + wilds >= 3 (at least one natural follows, w <= 2);
* full house t/p (R21): the triple needs ``max(0, 3 - nat[t])`` wilds, the pair 0 (two
  naturals or a joker pair, the latter only under ``full_house_joker_pair``), 1 (one natural)
  or 2 (two wilds, only as a pair of level cards, R15); feasible when the two together use at
  most the wilds held and p != t;
* straight / tube / plate windows (R10): the positions short of 1 / 2 / 3 naturals take wilds,
  at most the wilds held; a straight additionally needs a realisation whose natural cards are
  not all of one suit (that would be a straight flush, AMB-27): impossible exactly when every
  natural position offers one suit only, the same suit everywhere;
* rank bombs of size 4..10: naturals + wilds >= size; straight flushes: the five positions of
  a window in one suit, missing positions filled by wilds; four jokers (R19, R24).

Following (R23-R27): the table's type with a higher key (level order R9 for ranks, the top rank
for sequences), then every bomb above the table's power on the ladder (R24), plus pass.

:func:`play_group` gives the card-level plays of one id (for the canonical realisation,
:func:`guandan.rl.abstract.canonical_choice`) with the move generator's own per-type
functions, so realisations are exactly the engine's. Equality with the enumerate-and-group path
is tested over random positions under every preset (``tests/test_rl_fast.py``).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence

from guandan.core import movegen as _mg
from guandan.core.plays import (
    BOMB,
    FULL_HOUSE,
    JOKER_BOMB,
    JOKER_BOMB_POWER,
    PAIR,
    PLATE,
    PLATE_WINDOWS,
    SF_BASE,
    SINGLE,
    STRAIGHT,
    STRAIGHT_FLUSH,
    STRAIGHT_WINDOWS,
    STRENGTH,
    TRIPLE,
    TUBE,
    TUBE_WINDOWS,
    PlayT,
    bomb_power,
)

from . import abstract as ab

_BOMB_BASE = (0, 0, 0, 0, 0, 100, 300, 400, 500, 600, 700)  # by size (R24)
_BITS01 = bytes.maketrans(b"\x00\x01\x02", b"011")  # per-face counts -> '0'/'1' digits
_STRAIGHT_WIN = tuple((top, STRAIGHT_WINDOWS[top]) for top in range(3, 13))
_TUBE_WIN = tuple((top, TUBE_WINDOWS[top]) for top in range(1, 13))
_PLATE_WIN = tuple((top, PLATE_WINDOWS[top]) for top in range(0, 13))
# straight-flush windows as 13-bit rank masks, by top 3..12
_SF_WIN = tuple((top, sum(1 << r for r in STRAIGHT_WINDOWS[top])) for top in range(3, 13))


class HandShapes:
    """Which abstract ids one hand can realise, by type, with each id's comparison key.

    Args:
        hand: per-face counts (54).
        level: the deal's level (rank index 0..12).
        full_house_joker_pair: rule option ``full_house_joker_pair`` (R21).
    Each ``by type`` list holds ``(id, key)`` in ascending key order (so following is a binary
    search): key = strength in level order (singles, pairs, triples, full houses by triple),
    top rank (sequences) or bomb power. Lists are built on first use.
    """

    __slots__ = ("level", "w", "nat", "sj", "bj", "smask", "suits", "fhjp", "_lists", "_strength", "_sorted", "_lead")

    def __init__(self, hand: Sequence[int], level: int, full_house_joker_pair: bool = True) -> None:
        self.level = level
        wface = level * 4 + 1
        w = hand[wface]
        self.w = w
        nat = [hand[b] + hand[b + 1] + hand[b + 2] + hand[b + 3] for b in range(0, 52, 4)]
        nat[level] -= w  # the level's hearts are the wilds, never natural (R8)
        self.nat = nat
        self.sj = hand[52]
        self.bj = hand[53]
        self.fhjp = full_house_joker_pair
        self.smask: list[int] | None = None
        self.suits: list[int] | None = None
        self._lists: dict[str, list[tuple[int, int]]] = {}
        self._sorted: dict[str, tuple[list[int], list[int]]] = {}
        self._lead: list[int] | None = None
        self._strength = STRENGTH[level]

    def _suit_info(self, hand: Sequence[int]) -> None:
        # per suit a 13-bit rank mask from the counts (bytes translate: one C pass per suit)
        sm = [int(bytes(hand[s:52:4]).translate(_BITS01)[::-1], 2) for s in range(4)]
        if self.w:
            sm[1] &= ~(1 << self.level)  # the level's hearts are the wilds
        self.smask = sm

    def ids(self, ptype: str, hand: Sequence[int]) -> list[tuple[int, int]]:
        """``(id, key)`` of every realisable id of ``ptype`` (``bomb`` = the whole bomb ladder:
        rank bombs, straight flushes and four jokers, keyed by power)."""
        got = self._lists.get(ptype)
        if got is not None:
            return got
        nat, w, level, st = self.nat, self.w, self.level, self._strength
        order = _mg.ORDER[level]  # ranks 0..12 in ascending level order (R9): keys ascending
        out: list[tuple[int, int]] = []
        if ptype == SINGLE:
            out = [(ab.SINGLE_BASE + r, st[r]) for r in order if nat[r] or (w and r == level)]
            if self.sj:
                out.append((ab.SINGLE_BASE + 13, 13))
            if self.bj:
                out.append((ab.SINGLE_BASE + 14, 14))
        elif ptype == PAIR:
            out = [(ab.PAIR_BASE + r, st[r]) for r in order
                   if nat[r] >= 2 or (w and nat[r]) or (w == 2 and r == level)]
            if self.sj == 2:
                out.append((ab.PAIR_BASE + 13, 13))
            if self.bj == 2:
                out.append((ab.PAIR_BASE + 14, 14))
        elif ptype == TRIPLE:
            out = [(ab.TRIPLE_BASE + r, st[r]) for r in order if nat[r] + w >= 3]
        elif ptype == FULL_HOUSE:
            pairs = []  # (rank, wilds it needs)
            for p in range(13):
                n = nat[p]
                if n >= 2:
                    pairs.append((p, 0))
                elif n == 1:
                    if w:
                        pairs.append((p, 1))
                elif p == level and w == 2:
                    pairs.append((p, 2))
            if self.fhjp:
                if self.sj == 2:
                    pairs.append((13, 0))
                if self.bj == 2:
                    pairs.append((14, 0))
            if pairs:
                for t in order:
                    jt = 3 - nat[t]
                    if jt < 0:
                        jt = 0
                    if jt > w:
                        continue
                    left = w - jt
                    base = ab.FULL_HOUSE_BASE + 14 * t
                    key = st[t]
                    out.extend([(base + (p if p < t else p - 1), key) for p, jp in pairs if p != t and jp <= left])
        elif ptype == STRAIGHT:
            for top, ranks in _STRAIGHT_WIN:
                missing = 0
                for r in ranks:
                    if not nat[r]:
                        missing += 1
                if missing > w:
                    continue
                suits = self.suits
                if suits is None:
                    if self.smask is None:
                        self._suit_info(hand)
                    s0, s1, s2, s3 = self.smask  # type: ignore[misc]
                    suits = self.suits = [(s0 >> r & 1) | (s1 >> r & 1) << 1 | (s2 >> r & 1) << 2 | (s3 >> r & 1) << 3
                                          for r in range(13)]
                # all-one-suit only when every natural position offers the same single suit
                common = 15
                mono = True
                for r in ranks:
                    if nat[r]:
                        x = suits[r]
                        if x & (x - 1):
                            mono = False
                            break
                        common &= x
                if mono and common:
                    continue
                out.append((ab.STRAIGHT_BASE + top - 3, top))
        elif ptype == TUBE:
            for top, ranks in _TUBE_WIN:
                need = 0
                for r in ranks:
                    n = nat[r]
                    if n < 2:
                        need += 2 - n
                if need <= w:
                    out.append((ab.TUBE_BASE + top - 1, top))
        elif ptype == PLATE:
            for top, ranks in _PLATE_WIN:
                need = 0
                for r in ranks:
                    n = nat[r]
                    if n < 3:
                        need += 3 - n
                if need <= w:
                    out.append((ab.PLATE_BASE + top, top))
        elif ptype == BOMB:
            out = self._bombs(hand)
        else:
            raise ValueError(f"no abstract ids of type {ptype!r}")
        self._lists[ptype] = out
        return out

    def _bombs(self, hand: Sequence[int]) -> list[tuple[int, int]]:
        """The bomb ladder in ascending power (R24): 4- and 5-card bombs, straight flushes,
        6- to 10-card bombs, four jokers."""
        nat, w, st = self.nat, self.w, self._strength
        out: list[tuple[int, int]] = []
        cand: list[int] = []
        most = max(nat) + w
        if most >= 4:
            cand = [r for r in _mg.ORDER[self.level] if nat[r] + w >= 4]
            for size in (4, 5) if most >= 5 else (4,):
                base, pw = ab.BOMB_BASE + 13 * (size - 4), _BOMB_BASE[size]
                out.extend([(base + r, pw + st[r]) for r in cand if nat[r] + w >= size])
        if sum(nat) + w >= 5:
            if self.smask is None:
                self._suit_info(hand)
            sm = self.smask
            assert sm is not None
            need = 5 - w
            suits = [m for m in sm if m.bit_count() >= need]
            if suits:
                if w == 0:
                    # five consecutive ranks of one suit: a window's bits all set (A low via bit 12)
                    run = 0
                    for m in suits:
                        e = (m << 1) | (m >> 12 & 1)  # bit 0: the ace played low, bit r + 1: rank r
                        run |= e & e >> 1 & e >> 2 & e >> 3 & e >> 4
                    for i in range(10):  # window i: extended bits i..i+4, top rank i + 3
                        if run >> i & 1:
                            out.append((ab.SF_BASE + i, SF_BASE + i + 3))
                else:
                    for top, wm in _SF_WIN:
                        for m in suits:
                            if (m & wm).bit_count() >= need:
                                out.append((ab.SF_BASE + top - 3, SF_BASE + top))
                                break
        if most >= 6:
            for size in range(6, min(most, 10) + 1):
                base, pw = ab.BOMB_BASE + 13 * (size - 4), _BOMB_BASE[size]
                out.extend([(base + r, pw + st[r]) for r in cand if nat[r] + w >= size])
        if self.sj == 2 and self.bj == 2:
            out.append((ab.JOKER_BOMB_ID, JOKER_BOMB_POWER))
        return out


_LEAD_TYPES = (SINGLE, PAIR, TRIPLE, FULL_HOUSE, STRAIGHT, TUBE, PLATE, BOMB)
_SEQUENCE_TYPES = (STRAIGHT, TUBE, PLATE)


def _by_key(shapes: HandShapes, ptype: str, hand: Sequence[int]) -> tuple[list[int], list[int]]:
    """``(keys ascending, ids in that order)`` of ``ptype`` (cached on ``shapes``)."""
    got = shapes._sorted.get(ptype)
    if got is None:
        pairs = shapes.ids(ptype, hand)  # already in ascending key order
        got = shapes._sorted[ptype] = ([k for _, k in pairs], [i for i, _ in pairs])
    return got


def legal_ids(shapes: HandShapes, hand: Sequence[int], top: PlayT | None) -> list[int]:
    """The unmasked abstract ids of a play-phase decision (pass first when following).

    Args:
        shapes: the acting seat's :class:`HandShapes` (may be reused while the hand is unchanged).
        hand: its per-face counts.
        top: the play to beat, or ``None`` when leading (R27).
    Returns:
        The ids (each once), equal as a set to grouping :func:`guandan.core.movegen.legal_plays`.
    """
    if top is None:
        lead = shapes._lead
        if lead is None:
            lead = []
            for t in _LEAD_TYPES:
                lead.extend([i for i, _ in shapes.ids(t, hand)])
            shapes._lead = lead
        return list(lead)
    ttype, trank, tcards = top
    out = [ab.PASS_ID]
    if ttype == JOKER_BOMB:
        return out
    if ttype == BOMB or ttype == STRAIGHT_FLUSH:
        minp = bomb_power(ttype, trank, len(tcards), shapes.level)
        keys, ids = _by_key(shapes, BOMB, hand)
    else:
        assert trank is not None
        keys, ids = _by_key(shapes, ttype, hand)
        mink = trank if ttype in _SEQUENCE_TYPES else STRENGTH[shapes.level][trank]
        out.extend(ids[bisect_right(keys, mink):])
        minp = -1
        keys, ids = _by_key(shapes, BOMB, hand)
    out.extend(ids[bisect_right(keys, minp):])
    return out


def play_group(i: int, hand: Sequence[int], level: int, full_house_joker_pair: bool = True) -> list[PlayT]:
    """Every card-level play of abstract id ``i`` that ``hand`` can make, in engine order,
    whatever the play to beat (the caller checks ``i`` is unmasked: beating depends on the id
    alone). Built with the move generator's per-type functions, then filtered by id.

    Raises:
        ValueError: ``i`` is not a play id (pass, tribute and return have no group here).
    """
    t, r, size, x = ab.ID_TABLE[i]
    h = _mg.HandIndex(hand, level, full_house_joker_pair)
    out: list[PlayT] = []
    st = STRENGTH[level]
    if t == SINGLE:
        _mg._singles(h, st[r] - 1, out)  # type: ignore[index]
        return [a for a in out if a[1] == r]
    if t == PAIR or t == TRIPLE:
        _mg._rank_groups(h, size, t, st[r] - 1, out)  # type: ignore[index]
        return [a for a in out if a[1] == r]
    if t == FULL_HOUSE:
        _mg._full_houses(h, st[r] - 1, out)  # type: ignore[index]
    elif t == STRAIGHT:
        _mg._straights(h, r - 1, out)  # type: ignore[operator]
    elif t == TUBE:
        _mg._tubes(h, r - 1, out)  # type: ignore[operator]
    elif t == PLATE:
        _mg._plates(h, r - 1, out)  # type: ignore[operator]
    elif t == BOMB or t == STRAIGHT_FLUSH or t == JOKER_BOMB:
        _mg._bombs(h, bomb_power(t, r, size, level) - 1, out)
    else:
        raise ValueError(f"abstract id {i} ({t}) is not a play with a card-level group")
    return [a for a in out if ab.action_id(a, level) == i]
