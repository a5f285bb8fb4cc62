"""The ``abstract`` action space: fixed ids for every play shape × key rank, tribute and return.

Layout (``ABSTRACT_VERSION = 1``; :data:`N_ABSTRACT` = 471 ids; the table is built by
:func:`_build_table` and listed by ``guandan.rl.abstract.describe()``):

========================  =======  ===========================================================
ids                       count    meaning (ranks are rank indices: 0..12 = 2..A, 13 SJ, 14 BJ)
========================  =======  ===========================================================
0                         1        pass (R27: only when following)
1..15                     15       single of rank 0..14 (a wild played alone is a single of the
                                   level rank, R15)
16..30                    15       pair of rank 0..14 (joker pairs are natural, R19)
31..43                    13       triple of rank 0..12
44..225                   182      full house: triple rank t (0..12) × pair rank p (0..14, p != t),
                                   id = 44 + 14*t + (p if p < t else p - 1)  (R21)
226..235                  10       straight, top rank 3..12 (A-2-3-4-5 has top 5 = rank 3, R10)
236..247                  12       tube (three consecutive pairs), top rank 1..12
248..260                  13       plate (two consecutive triples), top rank 0..12
261..351                  91       bomb of size 4..10 × rank 0..12, id = 261 + 13*(size-4) + rank
352..361                  10       straight flush, top rank 3..12 (any suit)
362                       1        joker bomb (four jokers)
363..416                  54       tribute of face 0..53 (R45)
417..470                  54       return of face 0..53 (R47)
========================  =======  ===========================================================

Ids whose shape cannot exist (a 9-card bomb of a rank without two wilds, ...) are simply never
unmasked. Tribute and return ids name the exact face; play ids are suit-independent.

Canonical realisation
---------------------
Several legal actions can share one id (different suits, wilds or not). :func:`canonical_choice`
picks one, by the smallest key, in this order:

1. **fewest wilds** (the ♥ of the level rank, R8) — wilds stay in hand for later;
2. **fewest natural straight flushes broken**: the number of five-card natural straight-flush
   windows (suit × top, A low or high, R10) the hand holds before minus after the play;
3. **least-used suits last**: the faces in ascending order (a fixed, documented tie-break; it
   only separates realisations that are equivalent under 1 and 2, i.e. that differ by suit
   labels alone).

The choice depends only on the hand and the legal list, so it is deterministic.
"""

from __future__ import annotations

from collections.abc import Sequence

from guandan.core.plays import (
    BOMB,
    FULL_HOUSE,
    JOKER_BOMB,
    PAIR,
    PASS_TYPE,
    PLATE,
    RETURN_TYPE,
    SINGLE,
    STRAIGHT,
    STRAIGHT_FLUSH,
    TRIBUTE_TYPE,
    TRIPLE,
    TUBE,
    PlayT,
)

ABSTRACT_VERSION = 1

PASS_ID = 0
SINGLE_BASE = 1
PAIR_BASE = 16
TRIPLE_BASE = 31
FULL_HOUSE_BASE = 44
STRAIGHT_BASE = 226  # + top - 3
TUBE_BASE = 236  # + top - 1
PLATE_BASE = 248  # + top
BOMB_BASE = 261  # + 13 * (size - 4) + rank
SF_BASE = 352  # + top - 3
JOKER_BOMB_ID = 362
TRIBUTE_BASE = 363  # + face
RETURN_BASE = 417  # + face
N_ABSTRACT = 471


def full_house_id(triple_rank: int, pair_rank: int) -> int:
    """Id of a full house with triple ``triple_rank`` (0..12) and pair ``pair_rank`` (0..14, != triple).

    Raises:
        ValueError: ranks out of range or equal.
    """
    if not (0 <= triple_rank <= 12 and 0 <= pair_rank <= 14) or triple_rank == pair_rank:
        raise ValueError(f"no full house with triple rank {triple_rank} and pair rank {pair_rank}")
    return FULL_HOUSE_BASE + 14 * triple_rank + (pair_rank if pair_rank < triple_rank else pair_rank - 1)


def _build_table() -> list[tuple[str, int | None, int, int | None]]:
    """``table[id] = (type, key rank, size, pair rank or face)``: what each id means."""
    t: list[tuple[str, int | None, int, int | None]] = [(PASS_TYPE, None, 0, None)]
    t += [(SINGLE, r, 1, None) for r in range(15)]
    t += [(PAIR, r, 2, None) for r in range(15)]
    t += [(TRIPLE, r, 3, None) for r in range(13)]
    for tr in range(13):
        t += [(FULL_HOUSE, tr, 5, p) for p in range(15) if p != tr]
    t += [(STRAIGHT, top, 5, None) for top in range(3, 13)]
    t += [(TUBE, top, 6, None) for top in range(1, 13)]
    t += [(PLATE, top, 6, None) for top in range(0, 13)]
    for size in range(4, 11):
        t += [(BOMB, r, size, None) for r in range(13)]
    t += [(STRAIGHT_FLUSH, top, 5, None) for top in range(3, 13)]
    t += [(JOKER_BOMB, None, 4, None)]
    t += [(TRIBUTE_TYPE, f >> 2 if f < 52 else f - 39, 1, f) for f in range(54)]
    t += [(RETURN_TYPE, f >> 2 if f < 52 else f - 39, 1, f) for f in range(54)]
    return t


#: ``ID_TABLE[id] = (type, key rank, size, pair rank for full houses / face for tribute and return)``
ID_TABLE: tuple[tuple[str, int | None, int, int | None], ...] = tuple(_build_table())
assert len(ID_TABLE) == N_ABSTRACT
assert ID_TABLE[FULL_HOUSE_BASE][0] == FULL_HOUSE and ID_TABLE[STRAIGHT_BASE] == (STRAIGHT, 3, 5, None)
assert ID_TABLE[BOMB_BASE] == (BOMB, 0, 4, None) and ID_TABLE[SF_BASE] == (STRAIGHT_FLUSH, 3, 5, None)
assert ID_TABLE[JOKER_BOMB_ID][0] == JOKER_BOMB and ID_TABLE[TRIBUTE_BASE][3] == 0
assert ID_TABLE[RETURN_BASE][3] == 0 and ID_TABLE[-1] == (RETURN_TYPE, 14, 1, 53)

# id of the simple shapes by (type, rank): every type but full house, bomb, tribute and return
_SIMPLE: dict[tuple[str, int | None], int] = {}
for _i, (_t, _r, _n, _x) in enumerate(ID_TABLE):
    if _t in (SINGLE, PAIR, TRIPLE, STRAIGHT, TUBE, PLATE, STRAIGHT_FLUSH, JOKER_BOMB, PASS_TYPE):
        _SIMPLE[(_t, _r)] = _i


# per simple type, ids indexed by key rank (pass and joker bomb, whose rank is None, at index 15)
_BY_TYPE: dict[str, list[int]] = {}
for (_t, _r), _i in _SIMPLE.items():
    _BY_TYPE.setdefault(_t, [-1] * 16)[15 if _r is None else _r] = _i


def action_id(action: PlayT, level: int) -> int:
    """The abstract id of a legal action ``(type, rank, cards)`` at ``level``.

    Raises:
        KeyError: the action has no id (not a legal action shape).
    """
    t, r, cards = action
    if t == FULL_HOUSE:
        return full_house_id(r, _pair_rank(cards, r, level))  # type: ignore[arg-type]
    if t == BOMB:
        return BOMB_BASE + 13 * (len(cards) - 4) + r  # type: ignore[operator]
    if t == TRIBUTE_TYPE:
        return TRIBUTE_BASE + cards[0]
    if t == RETURN_TYPE:
        return RETURN_BASE + cards[0]
    return _SIMPLE[(t, r)]


def _pair_rank(cards: Sequence[int], triple_rank: int, level: int) -> int:
    """The pair's rank in a full house: the natural cards not of the triple rank, else the level
    (two wilds form a pair of level cards only, R15)."""
    w = level * 4 + 1
    for f in cards:
        if f != w:
            r = f >> 2 if f < 52 else f - 39
            if r != triple_rank:
                return r
    return level


def group_actions(legal: Sequence[PlayT], level: int) -> dict[int, list[PlayT]]:
    """Group legal actions by abstract id (insertion order = engine order).

    Returns:
        ``{id: [actions sharing it]}``; every legal action appears in exactly one group.
    """
    groups: dict[int, list[PlayT]] = {}
    by_type = _BY_TYPE
    w = level * 4 + 1
    for a in legal:
        t = a[0]
        tab = by_type.get(t)
        if tab is not None:
            r = a[1]
            i = tab[15 if r is None else r]
        elif t == FULL_HOUSE:
            tr = a[1]
            p = level
            for f in a[2]:
                if f != w:
                    r = f >> 2 if f < 52 else f - 39
                    if r != tr:
                        p = r
                        break
            i = FULL_HOUSE_BASE + 14 * tr + (p if p < tr else p - 1)  # type: ignore[operator]
        elif t == BOMB:
            i = BOMB_BASE + 13 * (len(a[2]) - 4) + a[1]  # type: ignore[operator]
        elif t == TRIBUTE_TYPE:
            i = TRIBUTE_BASE + a[2][0]
        elif t == RETURN_TYPE:
            i = RETURN_BASE + a[2][0]
        else:
            raise KeyError(f"no abstract id for action type {t!r}")
        g = groups.get(i)
        if g is None:
            groups[i] = [a]
        else:
            g.append(a)
    return groups


# straight-flush windows as 13-bit rank masks (A low in the lowest window, R10)
_SF_MASKS: tuple[int, ...] = tuple(
    sum(1 << r for r in ((12, 0, 1, 2, 3) if top == 3 else range(top - 4, top + 1))) for top in range(3, 13)
)


_BITS01 = bytes.maketrans(b"\x00\x01\x02", b"011")  # per-face counts -> '0'/'1' digits


def natural_straight_flushes(counts: Sequence[int], level: int) -> int:
    """How many natural five-card straight-flush windows (suit × top) ``counts`` holds.

    The wild (♥ of the level rank) does not count as a natural card here (R8, R22).
    """
    n = 0
    for s in range(4):
        m = int(bytes(counts[s:52:4]).translate(_BITS01)[::-1], 2)  # bit r: rank r of suit s held
        if s == 1:
            m &= ~(1 << level)  # the wild
        if m:
            e = (m << 1) | (m >> 12 & 1)  # bit 0: the ace played low (R10), bit r + 1: rank r
            n += (e & e >> 1 & e >> 2 & e >> 3 & e >> 4).bit_count()
    return n


def _natural_straight_flushes_slow(counts: Sequence[int], level: int) -> int:
    """Reference implementation of :func:`natural_straight_flushes` (one window at a time)."""
    w = level * 4 + 1
    n = 0
    for s in range(4):
        m = 0
        for r in range(13):
            f = r * 4 + s
            if counts[f] and f != w:
                m |= 1 << r
        if m:
            for wm in _SF_MASKS:
                if m & wm == wm:
                    n += 1
    return n


def canonical_choice(candidates: Sequence[PlayT], hand: Sequence[int], level: int) -> PlayT:
    """The canonical realisation among ``candidates`` (all sharing one abstract id).

    Args:
        candidates: legal actions with the same abstract id (non-empty).
        hand: per-face counts (54) of the acting seat.
        level: the deal's level.
    Returns:
        The candidate with the smallest (wilds used, natural straight flushes broken, faces) key;
        see the module docstring.
    """
    if len(candidates) == 1:
        return candidates[0]
    w = level * 4 + 1
    best = None
    best_key = None
    sf_before = None
    for a in candidates:
        cards = a[2]
        nw = cards.count(w)
        if best_key is not None and nw > best_key[0]:
            continue
        if sf_before is None:
            sf_before = natural_straight_flushes(hand, level)
        if sf_before:
            after = list(hand)
            for f in cards:
                after[f] -= 1
            broken = sf_before - natural_straight_flushes(after, level)
        else:
            broken = 0  # nothing to break
        key = (nw, broken, cards)
        if best_key is None or key < best_key:
            best, best_key = a, key
    assert best is not None
    return best


def describe(i: int) -> str:
    """Human-readable meaning of abstract id ``i`` (e.g. ``'full_house t=K p=2'``).

    Raises:
        IndexError: ``i`` is not 0..N_ABSTRACT-1.
    """
    from guandan.core.cards import card_text, rank_char

    if not 0 <= i < N_ABSTRACT:
        raise IndexError(f"abstract action id must be 0..{N_ABSTRACT - 1}, not {i}")
    t, r, n, x = ID_TABLE[i]
    if t == PASS_TYPE:
        return "pass"
    if t == JOKER_BOMB:
        return "joker_bomb"
    if t in (TRIBUTE_TYPE, RETURN_TYPE):
        return f"{t} {card_text(x)}"  # type: ignore[arg-type]
    assert r is not None
    if t == FULL_HOUSE:
        return f"full_house t={rank_char(r)} p={rank_char(x)}"  # type: ignore[arg-type]
    if t == BOMB:
        return f"bomb {n}x{rank_char(r)}"
    return f"{t} {rank_char(r)}"
