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

Speed (DESIGN.md section 3, "precompute per level at import"): everything that does not depend
on the hand is built once at import and never changes afterwards (there is no per-hand cache,
so every call is "cold"):

* per level: the ranks in level order above each strength (:data:`ORDER`, ``_ABOVE``), the
  wild's face and its 0/1/2-card tails;
* per rank and per natural-suit pattern (``code`` = cS + 3cH + 9cC + 27cD, each count 0..2):
  every sub-multiset of each size as a face tuple (``_COMBOS``), its card count and faces;
* per sequence type (straight, tube, plate) and per window: for each pattern of how many
  natural cards each position can supply and each number of wilds, the feasible wild
  distributions (``_FEAS``); the pattern is read from per-hand rank bit masks with two shifts;
* straight flushes from per-suit rank bit masks (ace both low and high), with the wild
  variants per 5-bit presence pattern precomputed (``_SF_VARIANTS``).

The output (the list, in order) is identical to that of the straightforward generator this
module replaced; the order is part of the contract because seeded games draw from it.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import product

from .cards import BIG_JOKER, SMALL_JOKER
from .plays import (
    BOMB,
    FULL_HOUSE,
    JOKER_BOMB,
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

# --- per-level tables (R9) ---------------------------------------------------------------

#: ``ORDER[level]``: ranks 0..12 in ascending level order (R9).
ORDER: tuple[tuple[int, ...], ...] = tuple(
    tuple(sorted(range(13), key=lambda r, lv=lv: STRENGTH[lv][r])) for lv in range(13)
)

# _ABOVE[level][s + 1]: the ranks 0..12 of strength > s, in ascending level order (s = -1..14).
_ABOVE: tuple[tuple[tuple[int, ...], ...], ...] = tuple(
    tuple(tuple(r for r in ORDER[lv] if STRENGTH[lv][r] > s) for s in range(-1, 15)) for lv in range(13)
)
# _WT[level]: the wild tails ((), (W,), (W, W)) where W is the level's heart (R8).
_WT: tuple[tuple[tuple[int, ...], ...], ...] = tuple(
    ((), (lv * 4 + 1,), (lv * 4 + 1, lv * 4 + 1)) for lv in range(13)
)
_BASES = tuple(range(0, 52, 4))
_R81 = tuple(r * 81 for r in range(13))

# --- per-rank natural pools ---------------------------------------------------------------


def _distributions(n: int, width: int, w: int) -> tuple[tuple[int, ...], ...]:
    """Every vector of wilds per position (each <= width) with total <= w, in lexicographic order."""
    out = [()]  # type: list[tuple[int, ...]]
    for _ in range(n):
        out = [d + (j,) for d in out for j in range(min(width, w) + 1)]
    return tuple(d for d in out if sum(d) <= w)


def _build_combos(rank: int, code: int) -> tuple[tuple[tuple[int, ...], ...], ...]:
    """``[k]``: every sub-multiset of size ``k`` (0..8) of a rank's natural cards, as sorted
    face tuples, for the per-suit counts encoded in ``code``."""
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


# _COMBOS[rank * 81 + code][k]: see _build_combos (built for every rank and code at import).
_COMBOS: tuple[tuple[tuple[tuple[int, ...], ...], ...], ...] = tuple(
    _build_combos(r, code) for r in range(13) for code in range(81)
)
# _NATN[code]: number of natural cards; _SUITS[code]: bit s set when suit s is present.
_NATN: tuple[int, ...] = tuple(c % 3 + c // 3 % 3 + c // 9 % 3 + c // 27 for c in range(81))
_SUITS: tuple[int, ...] = tuple(
    (c % 3 > 0) | (c // 3 % 3 > 0) << 1 | (c // 9 % 3 > 0) << 2 | (c // 27 > 0) << 3 for c in range(81)
)
# _SINGLE_FACES[rank * 81 + code]: the distinct faces as 1-tuples, ascending (singles);
# _FACES_DESC[...]: the distinct faces as ints in the order of _COMBOS[...][1] (descending).
_SINGLE_FACES = tuple(tuple(sorted(c[1])) for c in _COMBOS)
_FACES_DESC = tuple(tuple(f for (f,) in c[1]) for c in _COMBOS)


def _combos(rank: int, code: int) -> tuple[tuple[tuple[int, ...], ...], ...]:
    """``_COMBOS`` entry of ``rank`` and suit-count ``code`` (see :func:`_build_combos`)."""
    return _COMBOS[rank * 81 + code]


# --- sequences (R10) ----------------------------------------------------------------------

# Windows as (top, ranks in ascending index order) for quick iteration.
_SEQ = {
    1: tuple((top, tuple(sorted(rs))) for top, rs in STRAIGHT_WINDOWS.items()),
    2: tuple((top, tuple(sorted(rs))) for top, rs in TUBE_WINDOWS.items()),
    3: tuple((top, tuple(sorted(rs))) for top, rs in PLATE_WINDOWS.items()),
}
_SEQ_TYPE = {1: STRAIGHT, 2: TUBE, 3: PLATE}
_NPOS = {1: 5, 2: 3, 3: 2}

_DIST = {(n, width, w): _distributions(n, width, w) for n, width in ((5, 1), (3, 2), (2, 3)) for w in range(3)}


def _check_windows() -> None:
    """The windows are, in dict order, tops ``npos - 2 + i`` for i = 0, 1, ...; window 0 is the
    ace-low one whose sorted ranks put the ace last; the others are consecutive ranks."""
    for width, npos in _NPOS.items():
        for i, (top, ranks) in enumerate(_SEQ[width]):
            assert top == npos - 2 + i
            if i == 0:
                assert ranks == tuple(range(npos - 1)) + (12,)
            else:
                assert ranks == tuple(range(i - 1, i - 1 + npos))


_check_windows()


def _feasible(width: int, w: int) -> tuple[tuple[tuple[int, ...], ...], ...]:
    """``[pattern]``: the distributions of ``_DIST[(npos, width, w)]`` (same order) where every
    position ``p`` needs at most its available natural cards.

    ``pattern`` = sum over levels ``j = 1..width`` of ``x_j << (npos * (j - 1))`` where bit ``p``
    of ``x_j`` says position ``p`` (sorted rank order) has at least ``j`` natural cards.
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


_FEAS = {(width, w): _feasible(width, w) for width in (1, 2, 3) for w in range(3)}


def _ext(mask: int) -> int:
    """Rank mask (bit r = rank r) shifted so bit 0 is the ace played low and bit r + 1 rank r."""
    return (mask << 1) | (mask >> 12 & 1)


# --- straight flushes (R19, R24) ----------------------------------------------------------

# _SF_FACES[i][suit]: the five faces of straight-flush window i (top = i + 3) ascending.
_SF_FACES = tuple(
    tuple(tuple(r * 4 + s for r in ranks) for s in range(4)) for _top, ranks in _SEQ[1]
)


def _sf_variants(pattern: int, w: int) -> tuple[tuple[tuple[int, ...], int], ...]:
    """Natural positions kept (sorted order) and wilds used, for each straight flush a window
    with natural positions ``pattern`` (bit p = position p present) allows with ``w`` wilds:
    the wilds fill the missing positions and, with spares, may replace natural cards."""
    have = [p for p in range(5) if pattern >> p & 1]
    missing = 5 - len(have)
    if missing > w:
        return ()
    spare = w - missing
    out = [(tuple(have), missing)]
    if spare >= 1:
        out.extend((tuple(q for q in have if q != x), missing + 1) for x in have)
    if spare >= 2:
        for i, x in enumerate(have):
            for y in have[i + 1 :]:
                out.append((tuple(q for q in have if q != x and q != y), 2))
    return tuple(out)


_SF_VARIANTS = tuple(tuple(_sf_variants(p, w) for p in range(32)) for w in range(3))


class HandIndex:
    """Analysis of one hand at one level: natural pools per rank (wilds excluded) and wilds.

    Args:
        counts: per-face counts, length 54.
        level: rank index 0..12 of the deal's level.
        full_house_joker_pair: option ``full_house_joker_pair`` (R21).

    Attributes:
        level, counts, W (the wild face), w (wilds held), wt (``((), (W,), (W, W))``),
        codes (per rank: natural suit-count code), natn (per rank: natural cards), combos
        (per rank: sub-multisets by size), suitmask (per rank: suits present), sj, bj (jokers
        held), joker_pair.
    """

    __slots__ = (
        "level", "w", "W", "wt", "codes", "natn", "counts", "sj", "bj", "joker_pair",
        "combos", "_parts", "_suitmask",
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
        ct = _COMBOS
        self.combos = [ct[k + x] for k, x in zip(_R81, codes)]
        self.sj = c[SMALL_JOKER]
        self.bj = c[BIG_JOKER]
        self.joker_pair = full_house_joker_pair
        self._parts: dict[int, list[tuple[int, tuple[int, ...]]]] | None = None
        self._suitmask: list[int] | None = None

    @property
    def suitmask(self) -> list[int]:
        """Per rank: bit ``s`` set when a natural card of suit ``s`` is held."""
        sm = self._suitmask
        if sm is None:
            sm = self._suitmask = [_SUITS[x] for x in self.codes]
        return sm

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
    level = h.level
    codes = h.codes
    sf = _SINGLE_FACES
    for r in _ABOVE[level][min_strength + 1]:
        code = codes[r]
        if code:
            out.extend([(SINGLE, r, c) for c in sf[r * 81 + code]])
    if h.w and 12 > min_strength:
        # the wild alone is a single level card (R15); keep level order: after the naturals
        out.append((SINGLE, level, (h.W,)))
    if h.sj and 13 > min_strength:
        out.append((SINGLE, 13, (SMALL_JOKER,)))
    if h.bj and 14 > min_strength:
        out.append((SINGLE, 14, (BIG_JOKER,)))


def _groups(h: HandIndex, r: int, k: int, ptype: str, out: list[PlayT]) -> None:
    """Every ``k``-card same-rank play of rank ``r`` (naturals, then with 1 and 2 wilds)."""
    natn = h.natn[r]
    w = h.w
    if natn + w < k:
        return
    combos = h.combos[r]
    if natn >= k:
        out.extend([(ptype, r, c) for c in combos[k]])
    if w:
        wt = h.wt
        for j in range(1, min(w, k) + 1):
            m = k - j
            if m > natn or (m == 0 and r != h.level):
                continue
            tail = wt[j]
            out.extend([(ptype, r, c + tail) for c in combos[m]])


def _rank_groups(h: HandIndex, k: int, ptype: str, min_strength: int, out: list[PlayT]) -> None:
    for r in _ABOVE[h.level][min_strength + 1]:
        _groups(h, r, k, ptype, out)
    if k == 2:
        if h.sj == 2 and 13 > min_strength:
            out.append((PAIR, 13, _SJ_PAIR))
        if h.bj == 2 and 14 > min_strength:
            out.append((PAIR, 14, _BJ_PAIR))


def _full_houses(h: HandIndex, min_strength: int, out: list[PlayT]) -> None:
    level, w, wt = h.level, h.w, h.wt
    natn = h.natn
    combos = h.combos
    # The pairs (R21), by rank index then wilds used; for each number of wilds ``left`` the
    # triple leaves, ``below[left]`` holds (natural faces, wilds) of the usable pairs and
    # ``above[left]`` their cards as they follow the triple (natural faces + their wilds +
    # the triple's wilds); ``start[left][p]`` is the index of rank p's first pair.
    n_left = w + 1
    below: list[list[tuple[tuple[int, ...], int]]] = [[] for _ in range(n_left)]
    start: list[list[int]] = [[0] * 16 for _ in range(n_left)]
    for p in range(13):
        n = natn[p]
        for left in range(n_left):
            start[left][p] = len(below[left])
        if n + w < 2:
            continue
        cp = combos[p]
        if n >= 2:
            ps = [(c, 0) for c in cp[2]]
            for left in range(n_left):
                below[left].extend(ps)
        if w:
            if n >= 1:
                ps = [(c, 1) for c in cp[1]]
                for left in range(1, n_left):
                    below[left].extend(ps)
            if p == level and w == 2:
                below[2].append(((), 2))  # two wilds: a pair of level cards (R15)
    for left in range(n_left):
        start[left][13] = len(below[left])
    if h.joker_pair:
        if h.sj == 2:
            for left in range(n_left):
                below[left].append((_SJ_PAIR, 0))
        if h.bj == 2:
            for left in range(n_left):
                below[left].append((_BJ_PAIR, 0))
    if not below[w]:
        return
    for left in range(n_left):
        start[left][14] = start[left][15] = len(below[left])
    if w == 0:
        b0 = below[0]
        above0 = [pc for pc, _j in b0]
        s0 = start[0]
        for t in _ABOVE[level][min_strength + 1]:
            n = natn[t]
            if n < 3:
                continue
            lo = b0[: s0[t]]
            hi = above0[s0[t + 1] :]
            for tc in combos[t][3]:
                out.extend([(FULL_HOUSE, t, pc + tc) for pc, _j in lo])
                out.extend([(FULL_HOUSE, t, tc + pc) for pc in hi])
        return
    # above[left]: the pair's faces followed by all the wilds of the play (triple's included)
    above = [[pc + wt[w - left + jp] for pc, jp in below[left]] for left in range(n_left)]
    for t in _ABOVE[level][min_strength + 1]:
        n = natn[t]
        if n + w < 3:
            continue
        ct = combos[t]
        for jt in range(min(w, 2) + 1):
            m = 3 - jt
            if m > n:
                continue
            left = w - jt
            st = start[left]
            lo = below[left][: st[t]]
            hi = above[left][st[t + 1] :]
            tails = (wt[jt], wt[jt + 1] if jt + 1 <= 2 else (), wt[jt + 2] if jt + 2 <= 2 else ())
            for tc in ct[m]:
                tcw = (tc + tails[0], tc + tails[1], tc + tails[2])
                out.extend([(FULL_HOUSE, t, pc + tcw[jp]) for pc, jp in lo])
                out.extend([(FULL_HOUSE, t, tc + x) for x in hi])


def _straights(h: HandIndex, min_top: int, out: list[PlayT]) -> None:
    """Straights above ``min_top``: never all naturals of one suit (that is a straight flush,
    AMB-27)."""
    w = h.w
    natn = h.natn
    codes = h.codes
    wt = h.wt
    fd = _FACES_DESC
    suits = _SUITS
    present = 0
    for r in range(13):
        if natn[r]:
            present |= 1 << r
    e = _ext(present)
    feas = _FEAS[(1, w)]
    for i, (top, ranks) in enumerate(_SEQ[1]):
        if top <= min_top:
            continue
        x = e >> i & 31
        if i == 0:
            x = (x >> 1) | (x & 1) << 4
        dists = feas[x]
        if not dists:
            continue
        for dist in dists:
            lists = []
            mask = 15
            used = 0
            for r, j in zip(ranks, dist):
                if j:
                    used += 1
                else:
                    code = codes[r]
                    lists.append(fd[r * 81 + code])
                    mask &= suits[code]
            tail = wt[used]
            if tail:
                chunk = [(STRAIGHT, top, c + tail) for c in product(*lists)]
            else:
                chunk = [(STRAIGHT, top, c) for c in product(*lists)]
            if mask:
                # drop the one-suit combinations (at most one per suit), from the last
                drop = []
                for s in range(4):
                    if mask >> s & 1:
                        idx = 0
                        for faces in lists:
                            idx = idx * len(faces) + faces.index((faces[0] & ~3) + s)
                        drop.append(idx)
                for idx in sorted(drop, reverse=True):
                    del chunk[idx]
            out.extend(chunk)


def _tubes(h: HandIndex, min_top: int, out: list[PlayT]) -> None:
    """Tubes (three consecutive pairs) above ``min_top``."""
    w = h.w
    natn = h.natn
    combos = h.combos
    wt = h.wt
    m1 = m2 = 0
    for r in range(13):
        n = natn[r]
        if n:
            m1 |= 1 << r
            if n >= 2:
                m2 |= 1 << r
    e1, e2 = _ext(m1), _ext(m2)
    feas = _FEAS[(2, w)]
    for i, (top, ranks) in enumerate(_SEQ[2]):
        if top <= min_top:
            continue
        x1 = e1 >> i & 7
        x2 = e2 >> i & 7
        if i == 0:
            x1 = (x1 >> 1) | (x1 & 1) << 2
            x2 = (x2 >> 1) | (x2 & 1) << 2
        dists = feas[x1 | x2 << 3]
        if not dists:
            continue
        ra, rb, rc = ranks
        ca, cb, cc = combos[ra], combos[rb], combos[rc]
        for ja, jb, jc in dists:
            tail = wt[ja + jb + jc]
            ab = [a + b for a in ca[2 - ja] for b in cb[2 - jb]]
            if tail:
                cs = [c + tail for c in cc[2 - jc]]
            else:
                cs = cc[2 - jc]
            out.extend([(TUBE, top, x + y) for x in ab for y in cs])


def _plates(h: HandIndex, min_top: int, out: list[PlayT]) -> None:
    """Plates (two consecutive triples) above ``min_top``."""
    w = h.w
    natn = h.natn
    combos = h.combos
    wt = h.wt
    m1 = m2 = m3 = 0
    for r in range(13):
        n = natn[r]
        if n:
            m1 |= 1 << r
            if n >= 2:
                m2 |= 1 << r
                if n >= 3:
                    m3 |= 1 << r
    e1, e2, e3 = _ext(m1), _ext(m2), _ext(m3)
    feas = _FEAS[(3, w)]
    for i, (top, ranks) in enumerate(_SEQ[3]):
        if top <= min_top:
            continue
        x1 = e1 >> i & 3
        x2 = e2 >> i & 3
        x3 = e3 >> i & 3
        if i == 0:
            x1 = (x1 >> 1) | (x1 & 1) << 1
            x2 = (x2 >> 1) | (x2 & 1) << 1
            x3 = (x3 >> 1) | (x3 & 1) << 1
        dists = feas[x1 | x2 << 2 | x3 << 4]
        if not dists:
            continue
        ra, rb = ranks
        ca, cb = combos[ra], combos[rb]
        for ja, jb in dists:
            tail = wt[ja + jb]
            if tail:
                bs = [b + tail for b in cb[3 - jb]]
            else:
                bs = cb[3 - jb]
            out.extend([(PLATE, top, a + b) for a in ca[3 - ja] for b in bs])


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
    level, w = h.level, h.w
    natn = h.natn
    st = STRENGTH[level]
    # ranks that can make a bomb, in level order, and the largest bomb size
    cand = [r for r in ORDER[level] if natn[r] + w >= 4]
    top_size = 0
    for r in cand:
        t = natn[r] + w
        if t > top_size:
            top_size = t
    if top_size > 10:
        top_size = 10
    for size in (4, 5):
        if size > top_size:
            break
        base = _BOMB_BASE[size]
        for r in cand:
            if base + st[r] > min_power and natn[r] + w >= size:
                _groups(h, r, size, BOMB, out)
    if SF_BASE + 12 > min_power:
        _straight_flushes(h, min_power, out)
    for size in range(6, top_size + 1):
        base = _BOMB_BASE[size]
        for r in cand:
            if base + st[r] > min_power and natn[r] + w >= size:
                _groups(h, r, size, BOMB, out)
    if h.sj == 2 and h.bj == 2 and min_power < 1000:
        out.append(_JOKER_BOMB_PLAY)


def _straight_flushes(h: HandIndex, min_power: int, out: list[PlayT]) -> None:
    """Straight flushes of power above ``min_power``, by top then suit (R19, R24)."""
    w = h.w
    wt = h.wt
    codes = h.codes
    suits = _SUITS
    masks = [0, 0, 0, 0]
    for r in range(13):
        sb = suits[codes[r]]
        if sb:
            bit = 1 << r
            if sb & 1:
                masks[0] |= bit
            if sb & 2:
                masks[1] |= bit
            if sb & 4:
                masks[2] |= bit
            if sb & 8:
                masks[3] |= bit
    need = 5 - w
    ext = []
    for s in range(4):
        m = masks[s]
        if m and m.bit_count() >= need:
            ext.append((s, _ext(m)))
    if not ext:
        return
    first = max(0, min_power - SF_BASE - 2)  # window i has top i + 3: power SF_BASE + i + 3
    if w == 0:
        runs = []
        for s, e in ext:
            run = e & e >> 1 & e >> 2 & e >> 3 & e >> 4
            if run >> first:
                runs.append((s, run))
        for i in range(first, 10):
            sff = _SF_FACES[i]
            for s, run in runs:
                if run >> i & 1:
                    out.append((STRAIGHT_FLUSH, i + 3, sff[s]))
        return
    variants = _SF_VARIANTS[w]
    for i in range(first, 10):
        sff = _SF_FACES[i]
        top = i + 3
        for s, e in ext:
            x = e >> i & 31
            if i == 0:
                x = (x >> 1) | (x & 1) << 4
            for keep, nw in variants[x]:
                faces = sff[s]
                out.append((STRAIGHT_FLUSH, top, tuple([faces[p] for p in keep]) + wt[nw]))


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
