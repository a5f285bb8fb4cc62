"""Legal-move generation (RULES.md R9-R27).

``legal_plays(counts, level, table)`` returns every distinct play ``(type, rank, cards)`` a hand
can make: all plays when leading (``table is None``); when following only the plays that beat
``table`` (type-directed: the table's type with a higher key, plus the bombs that beat it),
never generating the rest. PASS is not included (the deal adds it).

No duplicates by construction: a wild is never part of any rank's natural pool, so each
``(type, rank, cards)`` arises from exactly one allocation of wilds to positions.

Wilds (R12-R16) stand for any non-joker card in every type except the four-joker bomb: both
wilds may form one pair inside a tube, complete a straight flush of any suit, or fill 9- and
10-card bombs; lone wilds are only a single or a pair of level cards (R15).

Cards in every generated play are in canonical order (:func:`guandan.core.plays.canonical`):
natural cards ascending by face, then the wilds.

For speed the generator returns plain tuples ``(type, rank, cards)``; they compare equal to
:class:`guandan.core.plays.Play` values.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import product

from .cards import BIG_JOKER, SMALL_JOKER
from .plays import (
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

_BOMB_BASE = (0, 0, 0, 0, 0, 100, 300, 400, 500, 600, 700)  # indexed by size (R24)

#: ``ORDER[level]``: ranks 0..12 in ascending level order (R9).
ORDER: tuple[tuple[int, ...], ...] = tuple(
    tuple(sorted(range(13), key=lambda r, lv=lv: STRENGTH[lv][r])) for lv in range(13)
)

# Windows as (top, ranks in ascending index order) for quick iteration.
_SEQ = {
    1: tuple((top, tuple(sorted(rs))) for top, rs in STRAIGHT_WINDOWS.items()),
    2: tuple((top, tuple(sorted(rs))) for top, rs in TUBE_WINDOWS.items()),
    3: tuple((top, tuple(sorted(rs))) for top, rs in PLATE_WINDOWS.items()),
}
_SEQ_TYPE = {1: STRAIGHT, 2: TUBE, 3: PLATE}


def _distributions(n: int, width: int, w: int) -> tuple[tuple[int, ...], ...]:
    """Every vector of wilds per position (each <= width) with total <= w."""
    out = [()]  # type: list[tuple[int, ...]]
    for _ in range(n):
        out = [d + (j,) for d in out for j in range(min(width, w) + 1)]
    return tuple(d for d in out if sum(d) <= w)


_DIST = {(n, width, w): _distributions(n, width, w) for n, width in ((5, 1), (3, 2), (2, 3)) for w in range(3)}

# _COMBOS[rank * 81 + code][k]: every sub-multiset of size k of a rank's natural cards as a
# sorted face tuple, where code = cS + 3cH + 9cC + 27cD (per-suit counts 0..2).
_COMBOS: dict[int, tuple[tuple[tuple[int, ...], ...], ...]] = {}


def _combos(rank: int, code: int) -> tuple[tuple[tuple[int, ...], ...], ...]:
    key = rank * 81 + code
    got = _COMBOS.get(key)
    if got is not None:
        return got
    cnt = (code % 3, code // 3 % 3, code // 9 % 3, code // 27)
    by_k: list[list[tuple[int, ...]]] = [[] for _ in range(9)]
    base = rank * 4
    for a in range(cnt[0] + 1):
        for b in range(cnt[1] + 1):
            for c in range(cnt[2] + 1):
                for d in range(cnt[3] + 1):
                    faces = (base,) * a + (base + 1,) * b + (base + 2,) * c + (base + 3,) * d
                    by_k[a + b + c + d].append(faces)
    res = tuple(tuple(x) for x in by_k)
    _COMBOS[key] = res
    return res


class HandIndex:
    """Analysis of one hand at one level: natural pools per rank (wilds excluded) and wilds.

    Args:
        counts: per-face counts, length 54.
        level: rank index 0..12 of the deal's level.
        full_house_joker_pair: option ``full_house_joker_pair`` (R21).
    """

    __slots__ = (
        "level", "w", "W", "wt", "codes", "natn", "counts", "sj", "bj", "joker_pair",
        "suitmask", "combos", "_parts",
    )

    def __init__(self, counts: Sequence[int], level: int, full_house_joker_pair: bool = True) -> None:
        self.level = level
        self.counts = counts
        W = level * 4 + 1
        self.W = W
        w = counts[W]
        self.w = w
        self.wt = ((), (W,), (W, W))
        codes = [0] * 13
        natn = [0] * 13
        suitmask = [0] * 13
        combos = []
        for r in range(13):
            b = r * 4
            cs, ch, cc, cd = counts[b], counts[b + 1], counts[b + 2], counts[b + 3]
            if r == level:
                ch = 0
            code = cs + 3 * ch + 9 * cc + 27 * cd
            codes[r] = code
            natn[r] = cs + ch + cc + cd
            suitmask[r] = (cs > 0) | (ch > 0) << 1 | (cc > 0) << 2 | (cd > 0) << 3
            combos.append(_combos(r, code))
        self.codes = codes
        self.natn = natn
        self.suitmask = suitmask
        self.combos = combos
        self.sj = counts[SMALL_JOKER]
        self.bj = counts[BIG_JOKER]
        self.joker_pair = full_house_joker_pair
        self._parts: dict[int, list[tuple[int, tuple[int, ...]]]] = {}

    def parts(self, r: int, k: int) -> list[tuple[int, tuple[int, ...]]]:
        """``(wilds used, natural faces)`` for every k-card same-rank group of rank ``r``.

        At least one natural card unless ``r`` is the level rank (R15).
        """
        key = r * 16 + k
        got = self._parts.get(key)
        if got is not None:
            return got
        w = self.w
        natn = self.natn[r]
        out: list[tuple[int, tuple[int, ...]]] = []
        if natn + w >= k:
            combos = self.combos[r]
            for j in range(min(w, k) + 1):
                m = k - j
                if m > natn or (m == 0 and r != self.level):
                    continue
                out.extend([(j, c) for c in combos[m]])
        self._parts[key] = out
        return out


def _singles(h: HandIndex, min_strength: int, out: list[PlayT]) -> None:
    st = STRENGTH[h.level]
    counts = h.counts
    W = h.W
    for r in ORDER[h.level]:
        if st[r] <= min_strength:
            continue
        b = r * 4
        out.extend([(SINGLE, r, (f,)) for f in range(b, b + 4) if counts[f] and f != W])
    if h.w and st[h.level] > min_strength:
        # the wild alone is a single level card (R15); keep level order: insert after naturals
        out.append((SINGLE, h.level, (W,)))
    if h.sj and 13 > min_strength:
        out.append((SINGLE, 13, (SMALL_JOKER,)))
    if h.bj and 14 > min_strength:
        out.append((SINGLE, 14, (BIG_JOKER,)))


def _rank_groups(h: HandIndex, k: int, ptype: str, min_strength: int, out: list[PlayT]) -> None:
    st = STRENGTH[h.level]
    wt = h.wt
    for r in ORDER[h.level]:
        if st[r] > min_strength:
            out.extend([(ptype, r, c + wt[j]) for j, c in h.parts(r, k)])
    if k == 2:
        if h.sj == 2 and 13 > min_strength:
            out.append((PAIR, 13, (SMALL_JOKER, SMALL_JOKER)))
        if h.bj == 2 and 14 > min_strength:
            out.append((PAIR, 14, (BIG_JOKER, BIG_JOKER)))


def _full_houses(h: HandIndex, min_strength: int, out: list[PlayT]) -> None:
    level, w, wt = h.level, h.w, h.wt
    st = STRENGTH[level]
    pairs: list[tuple[int, int, tuple[int, ...]]] = []
    for p in range(13):
        pairs.extend([(p, j, c) for j, c in h.parts(p, 2)])
    if h.joker_pair:
        if h.sj == 2:
            pairs.append((13, 0, (SMALL_JOKER, SMALL_JOKER)))
        if h.bj == 2:
            pairs.append((14, 0, (BIG_JOKER, BIG_JOKER)))
    if not pairs:
        return
    for t in ORDER[level]:
        if st[t] <= min_strength:
            continue
        triples = h.parts(t, 3)
        if not triples:
            continue
        if w == 0:
            below = [pc for p, _j, pc in pairs if p < t]
            above = [pc for p, _j, pc in pairs if p > t]
            for _jt, tc in triples:
                out.extend([(FULL_HOUSE, t, pc + tc) for pc in below])
                out.extend([(FULL_HOUSE, t, tc + pc) for pc in above])
        else:
            for jt, tc in triples:
                left = w - jt
                out.extend(
                    [(FULL_HOUSE, t, pc + tc + wt[jt + jp]) for p, jp, pc in pairs if p < t and jp <= left]
                )
                out.extend(
                    [(FULL_HOUSE, t, tc + pc + wt[jt + jp]) for p, jp, pc in pairs if p > t and jp <= left]
                )


def _sequences(h: HandIndex, width: int, min_top: int, out: list[PlayT]) -> None:
    """Straights (width 1; never all one suit, AMB-27), tubes (2), plates (3) above ``min_top``."""
    w = h.w
    natn = h.natn
    combos = h.combos
    wt = h.wt
    ptype = _SEQ_TYPE[width]
    npos = 6 // width if width > 1 else 5
    dists = _DIST[(npos, width, w)]
    suitmask = h.suitmask
    for top, ranks in _SEQ[width]:
        if top <= min_top:
            continue
        short = 0
        for r in ranks:
            if natn[r] < width:
                short += width - natn[r]
        if short > w:
            continue
        for dist in dists:
            lists = []
            for r, j in zip(ranks, dist):
                m = width - j
                if m > natn[r]:
                    break
                lists.append(combos[r][m])
            else:
                used = sum(dist)
                tail = wt[used]
                if width == 1:
                    # naturals of one suit would be a straight flush (AMB-27)
                    mask = 15
                    for r, j in zip(ranks, dist):
                        if not j:
                            mask &= suitmask[r]
                    if mask:
                        for combo in product(*lists):
                            cards = sum(combo, ())
                            s0 = cards[0] & 3
                            for f in cards:
                                if f & 3 != s0:
                                    out.append((ptype, top, cards + tail))
                                    break
                    else:
                        out.extend([(ptype, top, sum(combo, ()) + tail) for combo in product(*lists)])
                elif width == 2:
                    out.extend([(ptype, top, a + b + c + tail) for a, b, c in product(*lists)])
                else:
                    out.extend([(ptype, top, a + b + tail) for a, b in product(*lists)])


def _bombs(h: HandIndex, min_power: int, out: list[PlayT]) -> None:
    """Rank bombs (4-10 cards), straight flushes and the four-joker bomb above ``min_power``,
    in ladder order (R24)."""
    level, w, W, wt = h.level, h.w, h.W, h.wt
    st = STRENGTH[level]
    natn = h.natn
    found: list[tuple[int, PlayT]] = []
    for r in range(13):
        total = natn[r] + w
        if total < 4:
            continue
        sr = st[r]
        for size in range(4, min(total, 10) + 1):
            power = _BOMB_BASE[size] + sr
            if power > min_power:
                found.extend([(power, (BOMB, r, c + wt[j])) for j, c in h.parts(r, size)])
    if SF_BASE + 12 > min_power:
        counts = h.counts
        for suit in range(4):
            for top, ranks in _SEQ[1]:
                power = SF_BASE + top
                if power <= min_power:
                    continue
                have = [r for r in ranks if counts[r * 4 + suit] and r * 4 + suit != W]
                missing = 5 - len(have)
                if missing > w:
                    continue
                # wilds fill the missing positions and, with spares, may replace natural cards
                spare = w - missing
                found.append((power, (STRAIGHT_FLUSH, top, tuple([r * 4 + suit for r in have]) + wt[missing])))
                if spare >= 1:
                    for x in have:
                        nat = tuple([r * 4 + suit for r in have if r != x])
                        found.append((power, (STRAIGHT_FLUSH, top, nat + wt[missing + 1])))
                if spare >= 2:
                    for i, x in enumerate(have):
                        for y in have[i + 1 :]:
                            nat = tuple([r * 4 + suit for r in have if r != x and r != y])
                            found.append((power, (STRAIGHT_FLUSH, top, nat + wt[2])))
    if h.sj == 2 and h.bj == 2 and JOKER_BOMB_POWER > min_power:
        found.append((JOKER_BOMB_POWER, (JOKER_BOMB, None, (52, 52, 53, 53))))
    found.sort(key=_first)
    out.extend([p for _pw, p in found])


def _first(x: tuple[int, PlayT]) -> int:
    return x[0]


def legal_plays(
    counts: Sequence[int],
    level: int,
    table: PlayT | None = None,
    full_house_joker_pair: bool = True,
) -> list[PlayT]:
    """Every distinct legal play of a hand (PASS not included).

    Args:
        counts: per-face counts of the hand, length 54 (see :mod:`guandan.core.cards`).
        level: the deal's level rank index 0..12 (wilds are its two hearts, R8).
        table: the play to beat, or ``None`` when leading (R27).
        full_house_joker_pair: option ``full_house_joker_pair`` (R21).
    Returns:
        Distinct plays ``(type, rank, cards)`` with canonical cards. Leading: every play, grouped
        by type. Following: only plays that beat ``table`` (R23-R26): the table's type first
        (ascending key), then bombs in ladder order.
    """
    h = HandIndex(counts, level, full_house_joker_pair)
    out: list[PlayT] = []
    if table is None:
        _singles(h, -1, out)
        _rank_groups(h, 2, PAIR, -1, out)
        _rank_groups(h, 3, TRIPLE, -1, out)
        _full_houses(h, -1, out)
        _sequences(h, 1, -1, out)
        _sequences(h, 2, -1, out)
        _sequences(h, 3, -1, out)
        _bombs(h, -1, out)
        return out
    ttype, trank, tcards = table
    if ttype == JOKER_BOMB:
        return out
    if ttype == BOMB or ttype == STRAIGHT_FLUSH:
        _bombs(h, bomb_power(ttype, trank, len(tcards), level), out)
        return out
    assert trank is not None
    if ttype == SINGLE:
        _singles(h, STRENGTH[level][trank], out)
    elif ttype == PAIR:
        _rank_groups(h, 2, PAIR, STRENGTH[level][trank], out)
    elif ttype == TRIPLE:
        _rank_groups(h, 3, TRIPLE, STRENGTH[level][trank], out)
    elif ttype == FULL_HOUSE:
        _full_houses(h, STRENGTH[level][trank], out)
    elif ttype == STRAIGHT:
        _sequences(h, 1, trank, out)
    elif ttype == TUBE:
        _sequences(h, 2, trank, out)
    elif ttype == PLATE:
        _sequences(h, 3, trank, out)
    _bombs(h, -1, out)
    return out
