"""Legal-move generation (docs/rules.md R9-R27).

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

Longer than ~800 lines on purpose: the generators of every play type share the wild-allocation
helpers and the hot-loop tables, and splitting them would put a call across modules in the inner loop.

Speed (DESIGN.md section 3, "precompute per level at import"). Everything that does not
depend on the hand is built once at import (about 10 ms) and never changes afterwards; there
is no per-hand cache, so every call is "cold":

* per level: the ranks in level order above each strength (:data:`ORDER`, ``_ABOVE``), the
  wild's face and its tails, and every natural single as a ready play (``_SINGLES``: a hand's
  singles are picked with ``itertools.compress`` over its counts);
* per rank and natural-suit pattern (``code`` = cS + 3cH + 9cC + 27cD, each count 0..2): every
  sub-multiset of each size as a face tuple (``_COMBOS``), the card count, the suits present;
* sequences: each window is read from per-hand rank bit masks (ace both low and high) with a
  shift; per number of wilds and per pattern of natural cards per position, the feasible wild
  distributions (``_FEAS``, ``_STRAIGHT_PLANS`` with ``itemgetter`` s of the natural positions);
* straight flushes: per-suit rank bit masks (five consecutive bits without wilds), the wild
  variants per 5-bit pattern (``_SF_VARIANTS``) and their natural faces (``_SF_NAT``).

Per call, :class:`HandIndex` computes the suit-count code and natural count of each rank;
sub-multiset lists, bit masks and suit masks are computed on first use. Plays are built in a
few large comprehensions (one per type rather than one per rank or window).

The output list, order included, is identical to that of the straightforward generator this
module replaced (checked against it and against a brute-force enumeration with ``classify``
and ``beats``); the order matters because seeded games and random agents draw from it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import compress, product, repeat, starmap
from operator import add, itemgetter

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
_JOKER_BOMB_PLAY: PlayT = (JOKER_BOMB, None, (SMALL_JOKER, SMALL_JOKER, BIG_JOKER, BIG_JOKER))
_SJ_PAIR = (SMALL_JOKER, SMALL_JOKER)
_BJ_PAIR = (BIG_JOKER, BIG_JOKER)
_SJ_PAIR_PLAY: PlayT = (PAIR, 13, _SJ_PAIR)
_BJ_PAIR_PLAY: PlayT = (PAIR, 14, _BJ_PAIR)
_SJ_SINGLE: PlayT = (SINGLE, 13, (SMALL_JOKER,))
_BJ_SINGLE: PlayT = (SINGLE, 14, (BIG_JOKER,))
_BITS01 = bytes.maketrans(b"\x00\x01\x02", b"011")  # per-face counts -> '0'/'1' digits
# per-rank natural counts (0..8) -> '1' when at least 1, 2, 3
_GE1 = bytes.maketrans(bytes(range(9)), b"011111111")
_GE2 = bytes.maketrans(bytes(range(9)), b"001111111")
_GE3 = bytes.maketrans(bytes(range(9)), b"000111111")

# --- per-level tables (R8, R9) -------------------------------------------------------------

#: ``ORDER[level]``: ranks 0..12 in ascending level order (R9).
ORDER: tuple[tuple[int, ...], ...] = tuple(
    tuple(sorted(range(13), key=STRENGTH[lv].__getitem__)) for lv in range(13)
)

# _ABOVE[level][s + 1]: the ranks 0..12 of strength > s, in ascending level order (s = -1..14).
_ABOVE: tuple[tuple[tuple[int, ...], ...], ...] = tuple(
    tuple(tuple(r for r in ORDER[lv] if STRENGTH[lv][r] > s) for s in range(-1, 15)) for lv in range(13)
)
# _WT[level]: the wild tails ((), (W,), (W, W)) where W is the level's heart (R8);
# _WL[level][n]: n wild singletons ((W,),) * n, to append to a ``product`` of face lists.
_WT: tuple[tuple[tuple[int, ...], ...], ...] = tuple(
    ((), (lv * 4 + 1,), (lv * 4 + 1, lv * 4 + 1)) for lv in range(13)
)
_WL = tuple(tuple(((lv * 4 + 1,),) * n for n in range(3)) for lv in range(13))
_R81 = tuple(r * 81 for r in range(13))
_BASES = tuple(range(0, 52, 4))


def _singles_table(level: int) -> tuple[tuple[tuple[int, ...], tuple[PlayT, ...]], ...]:
    """``[s + 1]``: (faces, their single plays) of the natural faces of strength > ``s``, in
    level order, faces ascending within a rank; the wild is not a natural card (R8)."""
    w_face = level * 4 + 1
    out = []
    for s in range(-1, 15):
        faces = [f for r in _ABOVE[level][s + 1] for f in range(r * 4, r * 4 + 4) if f != w_face]
        out.append((tuple(faces), tuple((SINGLE, f >> 2, (f,)) for f in faces)))
    return tuple(out)


_SINGLES = tuple(_singles_table(lv) for lv in range(13))
_WILD_SINGLE: tuple[PlayT, ...] = tuple((SINGLE, lv, (lv * 4 + 1,)) for lv in range(13))

# --- per-rank natural pools ---------------------------------------------------------------


def _distributions(n: int, width: int, w: int) -> tuple[tuple[int, ...], ...]:
    """Every vector of wilds per position (each <= width) with total <= w, in lexicographic order."""
    out = [()]  # type: list[tuple[int, ...]]
    for _ in range(n):
        out = [d + (j,) for d in out for j in range(min(width, w) + 1)]
    return tuple(d for d in out if sum(d) <= w)


def _build_combos(rank: int, code: int) -> tuple[tuple[tuple[int, ...], ...], ...]:
    """``[k]``: every sub-multiset of size ``k`` (0..8) of a rank's natural cards, as sorted
    face tuples, for the per-suit counts encoded in ``code`` (= cS + 3cH + 9cC + 27cD)."""
    cnt = (code % 3, code // 3 % 3, code // 9 % 3, code // 27)
    by_k: list[list[tuple[int, ...]]] = [[] for _ in range(9)]
    base = rank * 4
    for a in range(cnt[0] + 1):
        for b in range(cnt[1] + 1):
            for c in range(cnt[2] + 1):
                for d in range(cnt[3] + 1):
                    faces = (base,) * a + (base + 1,) * b + (base + 2,) * c + (base + 3,) * d
                    by_k[a + b + c + d].append(faces)
    return tuple(tuple(x) for x in by_k)


def _all_combos() -> tuple[tuple[tuple[tuple[int, ...], ...], ...], ...]:
    """``_build_combos(r, code)`` for every rank and code, built for rank 2 and shifted."""
    low = [_build_combos(0, code) for code in range(81)]
    out = list(low)
    for off in range(4, 52, 4):
        out.extend(
            tuple([tuple([tuple([f + off for f in c]) for c in byk]) for byk in entry]) for entry in low
        )
    return tuple(out)


# _COMBOS[rank * 81 + code][k]: see _build_combos (built for every rank and code at import).
_COMBOS: tuple[tuple[tuple[tuple[int, ...], ...], ...], ...] = _all_combos()
# _NATN[code]: number of natural cards; _SUITS[code]: bit s set when suit s is present.
_NATN: tuple[int, ...] = tuple(c % 3 + c // 3 % 3 + c // 9 % 3 + c // 27 for c in range(81))
_SUITS: tuple[int, ...] = tuple(
    (c % 3 > 0) | (c // 3 % 3 > 0) << 1 | (c // 9 % 3 > 0) << 2 | (c // 27 > 0) << 3 for c in range(81)
)
# _FACES_DESC[rank * 81 + code]: the distinct faces as ints, in the order of _COMBOS[...][1].
_FACES_DESC = tuple(tuple(f for (f,) in c[1]) for c in _COMBOS)


# --- sequences (R10) ----------------------------------------------------------------------
#
# A sequence window is addressed by an index i into its type's windows in top order; in an
# "extended" rank mask bit 0 is the ace played low and bit r + 1 is rank r (see _ext), so
# window i covers extended bits i .. i + npos - 1. The positions of a window are its ranks in
# ascending index order (the order of the cards): for i == 0 (A-2-3-4-5, A-2-3, A-2) the ace
# is the last position but extended bit 0, hence the rotation in _window_bits.

_SEQ = {
    1: tuple((top, tuple(sorted(rs))) for top, rs in STRAIGHT_WINDOWS.items()),
    2: tuple((top, tuple(sorted(rs))) for top, rs in TUBE_WINDOWS.items()),
    3: tuple((top, tuple(sorted(rs))) for top, rs in PLATE_WINDOWS.items()),
}
_NPOS = {1: 5, 2: 3, 3: 2}
_SEQ_RANKS = {width: tuple(ranks for _top, ranks in _SEQ[width]) for width in (1, 2, 3)}

_DIST = {(n, width, w): _distributions(n, width, w) for n, width in ((5, 1), (3, 2), (2, 3)) for w in range(3)}


def _check_windows() -> None:
    """Window i has top ``npos - 2 + i``; window 0 is the ace-low one (sorted ranks put the
    ace last), the others are consecutive ranks."""
    for width, npos in _NPOS.items():
        for i, (top, ranks) in enumerate(_SEQ[width]):
            assert top == npos - 2 + i
            if i == 0:
                assert ranks == tuple(range(npos - 1)) + (12,)
            else:
                assert ranks == tuple(range(i - 1, i - 1 + npos))


_check_windows()


def _ext(mask: int) -> int:
    """Rank mask (bit r = rank r) shifted so bit 0 is the ace played low and bit r + 1 rank r."""
    return (mask << 1) | (mask >> 12 & 1)


def _window_bits(e: int, i: int, npos: int) -> int:
    """Bit p = position p of window ``i`` is set in extended mask ``e``."""
    x = e >> i & ((1 << npos) - 1)
    if i == 0:
        x = (x >> 1) | (x & 1) << (npos - 1)
    return x


def _feasible(width: int, w: int) -> tuple[tuple[tuple[int, ...], ...], ...]:
    """``[pattern]``: the distributions of ``_DIST[(npos, width, w)]`` (same order) where no
    position needs more natural cards than it has.

    ``pattern`` = sum over ``j = 1..width`` of ``x_j << (npos * (j - 1))`` where bit ``p`` of
    ``x_j`` says position ``p`` has at least ``j`` natural cards.
    """
    npos = _NPOS[width]
    table = []
    for pattern in range(1 << (npos * width)):
        avail = [0] * npos
        for j in range(width):
            x = pattern >> (npos * j)
            for p in range(npos):
                avail[p] += x >> p & 1
        table.append(
            tuple(d for d in _DIST[(npos, width, w)] if all(width - d[p] <= avail[p] for p in range(npos)))
        )
    return tuple(table)


_FEAS = {(width, w): _feasible(width, w) for width in (2, 3) for w in range(1, 3)}


def _straight_plans(w: int) -> tuple[tuple[tuple[itemgetter, int, int], ...], ...]:  # type: ignore[type-arg]
    """``[pattern]`` (bit p: position p has a natural card): for each feasible distribution of
    ``w`` wilds (``_DIST`` order), ``(getter of the natural positions, their bit mask, wilds)``."""
    out = []
    for pattern in range(32):
        plans = []
        for d in _DIST[(5, 1, w)]:
            nat = tuple(p for p in range(5) if not d[p])
            if all(pattern >> p & 1 for p in nat):
                plans.append((itemgetter(*nat), sum(1 << p for p in nat), 5 - len(nat)))
        out.append(tuple(plans))
    return tuple(out)


_STRAIGHT_PLANS = tuple(_straight_plans(w) for w in range(3))


# --- straight flushes (R19, R24) ----------------------------------------------------------

# _SF_FACES[i][suit]: the five faces of straight-flush window i (top = i + 3) ascending.
_SF_FACES = tuple(tuple(tuple(r * 4 + s for r in ranks) for s in range(4)) for ranks in _SEQ_RANKS[1])


def _sf_variants(pattern: int, w: int) -> tuple[tuple[int, int], ...]:
    """Natural positions kept (bit mask) and wilds used, for each straight flush a window with
    natural positions ``pattern`` (bit p = position p held) allows with ``w`` wilds: the wilds
    fill the missing positions and, with spares, may replace natural cards (in this order:
    none replaced, one, two; each time in ascending position order)."""
    have = [p for p in range(5) if pattern >> p & 1]
    missing = 5 - len(have)
    if missing > w:
        return ()
    spare = w - missing
    out = [(pattern, missing)]
    if spare >= 1:
        out.extend((pattern & ~(1 << x), missing + 1) for x in have)
    if spare >= 2:
        for i, x in enumerate(have):
            for y in have[i + 1 :]:
                out.append((pattern & ~(1 << x) & ~(1 << y), 2))
    return tuple(out)


_SF_VARIANTS = tuple(tuple(_sf_variants(p, w) for p in range(32)) for w in range(3))
# _SF_NAT[i][suit][keep]: the natural faces of window i in ``suit`` at the positions in bit
# mask ``keep``, ascending.
_SF_NAT = tuple(
    tuple(tuple(tuple(f for p, f in enumerate(faces) if keep >> p & 1) for keep in range(32)) for faces in win)
    for win in _SF_FACES
)


class HandIndex:
    """Analysis of one hand at one level: natural pools per rank (wilds excluded) and wilds.

    Args:
        counts: per-face counts, length 54.
        level: rank index 0..12 of the deal's level.
        full_house_joker_pair: option ``full_house_joker_pair`` (R21).

    Attributes:
        level, counts, W (the wild face), w (wilds held), wt (``((), (W,), (W, W))``),
        codes (per rank: natural suit-count code), natn (per rank: natural cards), combos
        (per rank: sub-multisets by size, ``combos[r][k]``), suitmask (per rank: suits
        present), sj, bj (jokers held), joker_pair.
    """

    __slots__ = (
        "W",
        "_combos",
        "_nmasks",
        "_parts",
        "_present",
        "_smasks",
        "_suitmask",
        "bj",
        "codes",
        "counts",
        "joker_pair",
        "level",
        "natn",
        "sj",
        "w",
        "wt",
    )

    def __init__(self, counts: Sequence[int], level: int, full_house_joker_pair: bool = True) -> None:
        self.level = level
        self.counts = counts
        W = level * 4 + 1
        self.W = W
        w = counts[W]
        self.w = w
        self.wt = _WT[level]
        c = counts
        codes = [c[b] + 3 * c[b + 1] + 9 * c[b + 2] + 27 * c[b + 3] for b in _BASES]
        if w:
            codes[level] -= 3 * w  # the level's hearts are the wilds, never natural (R8)
        self.codes = codes
        natn_t = _NATN
        self.natn = [natn_t[x] for x in codes]
        self._combos: list[tuple[tuple[tuple[int, ...], ...], ...]] | None = None
        self.sj = c[SMALL_JOKER]
        self.bj = c[BIG_JOKER]
        self.joker_pair = full_house_joker_pair
        self._parts: dict[int, list[tuple[int, tuple[int, ...]]]] | None = None
        self._suitmask: list[int] | None = None
        self._smasks: list[int] | None = None
        self._nmasks: tuple[int, int, int] | None = None
        self._present = -1

    @property
    def combos(self) -> list[tuple[tuple[tuple[int, ...], ...], ...]]:
        """Per rank: ``combos[r][k]`` every sub-multiset of ``k`` natural cards (face tuples)."""
        cb = self._combos
        if cb is None:
            ct = _COMBOS
            cb = self._combos = [ct[k + x] for k, x in zip(_R81, self.codes)]
        return cb

    @property
    def suitmask(self) -> list[int]:
        """Per rank: bit ``s`` set when a natural card of suit ``s`` is held."""
        sm = self._suitmask
        if sm is None:
            sm = self._suitmask = [_SUITS[x] for x in self.codes]
        return sm

    def suit_masks(self) -> list[int]:
        """Per suit 0..3: bit ``r`` set when a natural card of rank ``r`` and that suit is held."""
        sm = self._smasks
        if sm is None:
            c = self.counts
            t = _BITS01
            sm = [int(bytes(c[s:52:4]).translate(t)[::-1], 2) for s in range(4)]
            if self.w:
                sm[1] &= ~(1 << self.level)  # the level's hearts are the wilds
            self._smasks = sm
        return sm

    def present_mask(self) -> int:
        """Rank bit mask of the ranks with a natural card."""
        m = self._present
        if m < 0:
            m = self._present = int(bytes(self.natn).translate(_GE1)[::-1], 2)
        return m

    def natn_masks(self) -> tuple[int, int, int]:
        """Rank bit masks of the ranks with at least 1, 2 and 3 natural cards."""
        nm = self._nmasks
        if nm is None:
            b = bytes(self.natn)
            nm = self._nmasks = (
                self.present_mask(),
                int(b.translate(_GE2)[::-1], 2),
                int(b.translate(_GE3)[::-1], 2),
            )
        return nm

    def parts(self, r: int, k: int) -> list[tuple[int, tuple[int, ...]]]:
        """``(wilds used, natural faces)`` for every k-card same-rank group of rank ``r``.

        At least one natural card unless ``r`` is the level rank (R15).
        """
        key = r * 16 + k
        if self._parts is None:
            self._parts = {}
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
    faces, plays = _SINGLES[h.level][min_strength + 1]
    out.extend(compress(plays, map(h.counts.__getitem__, faces)))
    if h.w and 12 > min_strength:
        # the wild alone is a single level card (R15); keep level order: after the naturals
        out.append(_WILD_SINGLE[h.level])
    if h.sj and 13 > min_strength:
        out.append(_SJ_SINGLE)
    if h.bj and 14 > min_strength:
        out.append(_BJ_SINGLE)


def _group_parts(h: HandIndex, r: int, k: int, parts: list[tuple[int, tuple[tuple[int, ...], ...], tuple[int, ...]]]) -> None:
    """Append ``(r, natural face tuples, wild tail)`` for every way to make a ``k``-card
    same-rank group of rank ``r``: naturals only, then with 1 and 2 wilds (wilds alone only
    for the level rank, R15)."""
    natn = h.natn[r]
    cr = h.combos[r]
    if natn >= k:
        parts.append((r, cr[k], ()))
    w = h.w
    if w and natn + w >= k:
        wt = h.wt
        for j in range(1, min(w, k) + 1):
            m = k - j
            if m > natn or (m == 0 and r != h.level):
                continue
            parts.append((r, cr[m], wt[j]))


def _rank_groups(h: HandIndex, k: int, ptype: str, min_strength: int, out: list[PlayT]) -> None:
    """Pairs (k = 2, with the joker pairs) or triples (k = 3) stronger than ``min_strength``."""
    natn = h.natn
    above = _ABOVE[h.level][min_strength + 1]
    if h.w:
        parts: list[tuple[int, tuple[tuple[int, ...], ...], tuple[int, ...]]] = []
        for r in above:
            _group_parts(h, r, k, parts)
        out.extend([(ptype, r, c + tail) for r, cs, tail in parts for c in cs])
    else:
        combos = h.combos
        nat = [(r, combos[r][k]) for r in above if natn[r] >= k]
        out.extend([(ptype, r, c) for r, cs in nat for c in cs])
    if k == 2:
        if h.sj == 2 and 13 > min_strength:
            out.append(_SJ_PAIR_PLAY)
        if h.bj == 2 and 14 > min_strength:
            out.append(_BJ_PAIR_PLAY)


def _full_houses(h: HandIndex, min_strength: int, out: list[PlayT]) -> None:
    """Full houses (R21) stronger than ``min_strength``: for each triple (level order, then
    wilds used, then faces), the pairs by rank index (then wilds used, then faces), joker pairs
    last. Cards: the pair before the triple when its rank index is lower, the wilds last."""
    level, w = h.level, h.w
    natn = h.natn
    combos = h.combos
    above = _ABOVE[level][min_strength + 1]
    jp = h.joker_pair and (h.sj == 2 or h.bj == 2)
    if w == 0:
        pairs: list[tuple[tuple[int, ...], int]] = []  # (faces, rank)
        for p in range(13):
            if natn[p] >= 2:
                pairs.extend(zip(combos[p][2], repeat(p)))
        if jp:
            if h.sj == 2:
                pairs.append((_SJ_PAIR, 13))
            if h.bj == 2:
                pairs.append((_BJ_PAIR, 14))
        if not pairs:
            return
        trip = [(t, combos[t][3]) for t in above if natn[t] >= 3]
        out.extend(
            [
                (FULL_HOUSE, t, tc + pc if p > t else pc + tc)
                for t, tcs in trip
                for tc in tcs
                for pc, p in pairs
                if p != t
            ]
        )
        return
    wt = h.wt
    # every pair: (natural faces, rank, wilds used)
    allp: list[tuple[tuple[int, ...], int, int]] = []
    for p in range(13):
        n = natn[p]
        if n >= 2:
            allp.extend(zip(combos[p][2], repeat(p), repeat(0)))
        if n >= 1:
            allp.extend(zip(combos[p][1], repeat(p), repeat(1)))
        if p == level and w == 2:
            allp.append(((), p, 2))  # two wilds: a pair of level cards (R15)
    if jp:
        if h.sj == 2:
            allp.append((_SJ_PAIR, 13, 0))
        if h.bj == 2:
            allp.append((_BJ_PAIR, 14, 0))
    if not allp:
        return
    # by wilds ``left`` for the pair: (faces, rank, wilds, cards when after the triple), the
    # latter being the pair's faces and every wild of the play (the triple used w - left)
    lists = [
        [(pc, p, jp_, pc + wt[w - left + jp_]) for pc, p, jp_ in allp if jp_ <= left] for left in range(w + 1)
    ]
    parts = []
    for t in above:
        n = natn[t]
        if n + w < 3:
            continue
        ct = combos[t]
        for jt in range(min(w, 2) + 1):
            m = 3 - jt
            if m > n:
                continue
            left = w - jt
            lst = lists[left]
            if not lst:
                continue
            # (triple faces, triple faces + wilds for a lower pair using 0..left wilds)
            tt: list[tuple[tuple[int, ...], tuple[tuple[int, ...], ...]]]
            if left == 0:
                t0 = wt[jt]
                tt = [(tc, (tc + t0,)) for tc in ct[m]]
            elif left == 1:
                t0, t1 = wt[jt], wt[jt + 1]
                tt = [(tc, (tc + t0, tc + t1)) for tc in ct[m]]
            else:
                t1, t2 = wt[1], wt[2]
                tt = [(tc, (tc, tc + t1, tc + t2)) for tc in ct[m]]
            parts.append((t, tt, lst))
    out.extend(
        [
            (FULL_HOUSE, t, tc + pcv if p > t else pc + tcv[jp_])
            for t, tt, lst in parts
            for tc, tcv in tt
            for pc, p, jp_, pcv in lst
            if p != t
        ]
    )


def _straights(h: HandIndex, min_top: int, out: list[PlayT]) -> None:
    """Straights above ``min_top``; never all naturals of one suit (a straight flush, AMB-27)."""
    w = h.w
    i0 = min_top - 2 if min_top > 2 else 0  # window i has top i + 3
    e = _ext(h.present_mask())
    if w == 0:
        run = e & e >> 1 & e >> 2 & e >> 3 & e >> 4
        if not run >> i0:
            return
    codes = h.codes
    fd = _FACES_DESC
    es = [_ext(m) for m in h.suit_masks()]
    parts: list[tuple[int, Iterable[tuple[int, ...]]]] = []
    if w == 0:
        for i in range(i0, 10):
            if not run >> i & 1:
                continue
            lists = [fd[r * 81 + codes[r]] for r in _SEQ_RANKS[1][i]]
            flush = [s for s in range(4) if es[s] >> i & 31 == 31]
            if flush:
                chunk = list(product(*lists))
                _drop_flushes(chunk, lists, flush)
                parts.append((i + 3, chunk))
            else:
                parts.append((i + 3, product(*lists)))
    else:
        plans = _STRAIGHT_PLANS[w]
        wl = _WL[h.level]
        need = 5 - w
        for i in range(i0, 10):
            todo = plans[_window_bits(e, i, 5)]
            if not todo:
                continue
            top = i + 3
            pf = [fd[r * 81 + codes[r]] for r in _SEQ_RANKS[1][i]]
            fl = [(s, q) for s in range(4) if (q := _window_bits(es[s], i, 5)).bit_count() >= need]
            for getter, nmask, nw in todo:
                lists = getter(pf)
                one_suit = [s for s, q in fl if q & nmask == nmask] if fl else None
                if one_suit:
                    chunk = list(product(*lists, *wl[nw]))
                    _drop_flushes(chunk, lists, one_suit)
                    parts.append((top, chunk))
                else:
                    parts.append((top, product(*lists, *wl[nw])))
    out.extend([(STRAIGHT, top, c) for top, it in parts for c in it])


def _drop_flushes(chunk: list[tuple[int, ...]], lists: Sequence[tuple[int, ...]], suits: list[int]) -> None:
    """Delete from ``chunk`` (the product of ``lists``, face lists of one rank each, possibly
    followed by one-element lists) the combinations whose natural faces are all of one of
    ``suits``."""
    drop = []
    for s in suits:
        idx = 0
        for faces in lists:
            idx = idx * len(faces) + faces.index((faces[0] & ~3) + s)
        drop.append(idx)
    drop.sort(reverse=True)
    for idx in drop:
        del chunk[idx]


def _tubes(h: HandIndex, min_top: int, out: list[PlayT]) -> None:
    """Tubes (three consecutive pairs, R19) above ``min_top``."""
    w = h.w
    combos = h.combos
    m1, m2, _m3 = h.natn_masks()
    i0 = max(0, min_top)  # window i has top i + 1
    e2 = _ext(m2)
    parts: list[tuple[int, list[tuple[int, ...]], Sequence[tuple[int, ...]]]] = []
    if w == 0:
        run = e2 & e2 >> 1 & e2 >> 2
        if not run >> i0:
            return
        for i in range(i0, 12):
            if run >> i & 1:
                ra, rb, rc = _SEQ_RANKS[2][i]
                parts.append((i + 1, list(starmap(add, product(combos[ra][2], combos[rb][2]))), combos[rc][2]))
    else:
        e1 = _ext(m1)
        feas = _FEAS[(2, w)]
        wt = h.wt
        for i in range(i0, 12):
            dists = feas[_window_bits(e1, i, 3) | _window_bits(e2, i, 3) << 3]
            if not dists:
                continue
            top = i + 1
            ra, rb, rc = _SEQ_RANKS[2][i]
            ca, cb, cc = combos[ra], combos[rb], combos[rc]
            abs_: dict[int, list[tuple[int, ...]]] = {}
            for ja, jb, jc in dists:
                key = ja * 3 + jb
                ab = abs_.get(key)
                if ab is None:
                    ab = abs_[key] = list(starmap(add, product(ca[2 - ja], cb[2 - jb])))
                used = ja + jb + jc
                if used:
                    parts.append((top, ab, list(map(add, cc[2 - jc], repeat(wt[used])))))
                else:
                    parts.append((top, ab, cc[2]))
    out.extend([(TUBE, top, x + y) for top, ab, cs in parts for x in ab for y in cs])


def _plates(h: HandIndex, min_top: int, out: list[PlayT]) -> None:
    """Plates (two consecutive triples, R19) above ``min_top``."""
    w = h.w
    combos = h.combos
    m1, m2, m3 = h.natn_masks()
    i0 = min_top + 1 if min_top >= 0 else 0  # window i has top i
    e3 = _ext(m3)
    parts: list[tuple[int, Sequence[tuple[int, ...]], Sequence[tuple[int, ...]]]] = []
    if w == 0:
        run = e3 & e3 >> 1
        if not run >> i0:
            return
        for i in range(i0, 13):
            if run >> i & 1:
                ra, rb = _SEQ_RANKS[3][i]
                parts.append((i, combos[ra][3], combos[rb][3]))
    else:
        e1, e2 = _ext(m1), _ext(m2)
        feas = _FEAS[(3, w)]
        wt = h.wt
        for i in range(i0, 13):
            dists = feas[_window_bits(e1, i, 2) | _window_bits(e2, i, 2) << 2 | _window_bits(e3, i, 2) << 4]
            if not dists:
                continue
            ra, rb = _SEQ_RANKS[3][i]
            ca, cb = combos[ra], combos[rb]
            for ja, jb in dists:
                used = ja + jb
                if used:
                    parts.append((i, ca[3 - ja], list(map(add, cb[3 - jb], repeat(wt[used])))))
                else:
                    parts.append((i, ca[3], cb[3]))
    out.extend([(PLATE, top, a + b) for top, as_, bs in parts for a in as_ for b in bs])


def _sequences(h: HandIndex, width: int, min_top: int, out: list[PlayT]) -> None:
    """Straights (width 1; never all one suit, AMB-27), tubes (2), plates (3) above ``min_top``."""
    if width == 1:
        _straights(h, min_top, out)
    elif width == 2:
        _tubes(h, min_top, out)
    else:
        _plates(h, min_top, out)


def _bombs(h: HandIndex, min_power: int, out: list[PlayT]) -> None:
    """Rank bombs (4-10 cards), straight flushes and the four-joker bomb above ``min_power``,
    in ladder order (R24): 4-card, 5-card, straight flushes, 6- to 10-card, four jokers."""
    w = h.w
    natn = h.natn
    most = max(natn) + w
    if most < 4 and (h.sj < 2 or h.bj < 2) and sum(natn) + w < 5:
        return  # no rank bomb, no four jokers, no straight flush (R19)
    cand: list[tuple[int, int]] = []
    if most >= 4:
        level = h.level
        st = STRENGTH[level]
        cand = [(r, st[r]) for r in ORDER[level] if natn[r] + w >= 4]
        parts: list[tuple[int, tuple[tuple[int, ...], ...], tuple[int, ...]]] = []
        for size in (4, 5):
            if size > most:
                break
            base = _BOMB_BASE[size]
            for r, sr in cand:
                if base + sr > min_power and natn[r] + w >= size:
                    _group_parts(h, r, size, parts)
        if parts:
            out.extend([(BOMB, r, c + tail) for r, cs, tail in parts for c in cs])
    if SF_BASE + 12 > min_power:
        _straight_flushes(h, min_power, out)
    if most >= 6:
        parts = []
        for size in range(6, min(most, 10) + 1):
            base = _BOMB_BASE[size]
            for r, sr in cand:
                if base + sr > min_power and natn[r] + w >= size:
                    _group_parts(h, r, size, parts)
        if parts:
            out.extend([(BOMB, r, c + tail) for r, cs, tail in parts for c in cs])
    if h.sj == 2 and h.bj == 2 and JOKER_BOMB_POWER > min_power:
        out.append(_JOKER_BOMB_PLAY)


def _straight_flushes(h: HandIndex, min_power: int, out: list[PlayT]) -> None:
    """Straight flushes of power above ``min_power``, by top then suit (R19, R24)."""
    w = h.w
    if w == 0:
        e = _ext(h.present_mask())
        if not e & e >> 1 & e >> 2 & e >> 3 & e >> 4:
            return  # no five consecutive ranks at all
    need = 5 - w
    ext = [(s, _ext(m)) for s, m in enumerate(h.suit_masks()) if m.bit_count() >= need]
    if not ext:
        return
    first = min_power - SF_BASE - 2 if min_power > SF_BASE + 2 else 0  # window i: power SF_BASE + i + 3
    if w == 0:
        runs = []
        for s, e in ext:
            run = e & e >> 1 & e >> 2 & e >> 3 & e >> 4
            if run >> first:
                runs.append((s, run))
        if not runs:
            return
        for i in range(first, 10):
            sff = _SF_FACES[i]
            for s, run in runs:
                if run >> i & 1:
                    out.append((STRAIGHT_FLUSH, i + 3, sff[s]))
        return
    wt = h.wt
    variants = _SF_VARIANTS[w]
    for i in range(first, 10):
        sfn = _SF_NAT[i]
        top = i + 3
        for s, e in ext:
            todo = variants[_window_bits(e, i, 5)]
            if todo:
                nat = sfn[s]
                out.extend([(STRAIGHT_FLUSH, top, nat[keep] + wt[nw]) for keep, nw in todo])


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
    Raises:
        ValueError: ``counts`` is not 54 counts of 0..2 or ``level`` is not 0..12 (checked
            cheaply; the engine itself always passes valid values).
    """
    if len(counts) != 54 or level.__class__ is not int or not 0 <= level <= 12:
        raise ValueError("legal_plays needs 54 per-face counts and a level 0..12")
    h = HandIndex(counts, level, full_house_joker_pair)
    out: list[PlayT] = []
    if table is None:
        _singles(h, -1, out)
        _rank_groups(h, 2, PAIR, -1, out)
        _rank_groups(h, 3, TRIPLE, -1, out)
        _full_houses(h, -1, out)
        _straights(h, -1, out)
        _tubes(h, -1, out)
        _plates(h, -1, out)
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
        _straights(h, trank, out)
    elif ttype == TUBE:
        _tubes(h, trank, out)
    elif ttype == PLATE:
        _plates(h, trank, out)
    _bombs(h, -1, out)
    return out
