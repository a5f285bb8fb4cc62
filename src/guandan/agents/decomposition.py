"""Hand decomposition and its cost: the heuristic player's picture of a hand (docs/rules.md R18-R24).

The hand is partitioned into combinations that could each be played in one turn: straight
flushes, bombs, the four-joker bomb, straights, tubes, plates, full houses, triples, pairs and
singles (docs/rules.md R18-R24). Every combination has a *cost*, roughly "how many turns it still
needs": a weak combination costs about 1, a strong one (an Ace single, a 10-J-Q-K-A straight)
less because it tends to win its trick, and a bomb is negative because it can take the lead back
once. A depth-first search over the sequences (straights, tubes, plates; A low or high, R10) and
the straight flushes, with the rest grouped by rank, wilds (R12-R16) added where they help most
and triples carrying the weakest pairs as full houses, finds the partition of least total cost
(:func:`decompose`, :func:`hand_cost`). Results are cached by hand, so the decomposition after the
bot's own play is usually ready for its next turn. The cost parameters are a :class:`CostModel`.

Used by the heuristic player (:mod:`guandan.agents.heuristic`, which re-exports these names), the
fast rollout policy, the endgame solver, the search and the server's hints.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from guandan.core.cards import BIG_JOKER, FACE_RANK, SMALL_JOKER
from guandan.core.plays import (
    BOMB,
    FULL_HOUSE,
    JOKER_BOMB,
    PAIR,
    PLATE,
    PLATE_WINDOWS,
    SINGLE,
    STRAIGHT,
    STRAIGHT_FLUSH,
    STRAIGHT_WINDOWS,
    STRENGTH,
    TRIPLE,
    TUBE,
    TUBE_WINDOWS,
)

__all__ = ["DEFAULT_MODEL", "Combo", "CostModel", "Decomposition", "decompose", "hand_cost"]


# --------------------------------------------------------------------------------------------
# costs
# --------------------------------------------------------------------------------------------
class CostModel(NamedTuple):
    """Parameters of the combination costs (see the module docstring).

    A non-bomb combination costs ``1 - control`` where ``control = max(0, key - lo) / div``
    (capped at 0.95) grows with its key: the level-order strength 0..14 (R9) for singles,
    pairs, triples and full houses, the top rank for straights, tubes and plates (R10).
    Bombs cost ``-(bomb + bomb_step * (size - 4))``, a straight flush ``-sf`` and the
    four-joker bomb ``-joker_bomb`` (the ladder of R24).
    """

    single_lo: float = 7.0
    single_div: float = 8.0
    pair_lo: float = 6.0
    pair_div: float = 8.0
    triple_lo: float = 4.0
    triple_div: float = 9.0
    straight_lo: float = 6.0
    straight_div: float = 7.0
    tube_lo: float = 4.0
    tube_div: float = 9.0
    plate_lo: float = 3.0
    plate_div: float = 10.0
    bomb: float = 1.0
    bomb_step: float = 0.1
    sf: float = 1.15
    joker_bomb: float = 1.6


DEFAULT_MODEL = CostModel()
#: Nominal cost of a pair absorbed into a full house by a wild-made triple (wild placement).
_FH_PAIR = 0.9


def _ctrl(key: float, lo: float, div: float) -> float:
    return 1.0 - min(0.95, max(0.0, key - lo) / div)


def _single_cost(s: int, m: CostModel = DEFAULT_MODEL) -> float:
    """Cost of a single of level-order strength ``s`` (0..14, R9)."""
    return _ctrl(s, m.single_lo, m.single_div)


def _pair_cost(s: int, m: CostModel = DEFAULT_MODEL) -> float:
    return _ctrl(s, m.pair_lo, m.pair_div)


def _triple_cost(s: int, m: CostModel = DEFAULT_MODEL) -> float:
    return _ctrl(s, m.triple_lo, m.triple_div)


def _bomb_cost(n: int, s: int, m: CostModel = DEFAULT_MODEL) -> float:
    """A bomb takes the lead back once: negative cost, more so for bigger bombs (R24)."""
    return -(m.bomb + m.bomb_step * (n - 4) + 0.005 * s)


def _sf_cost(top: int, m: CostModel = DEFAULT_MODEL) -> float:
    """A straight flush sits between the 5- and 6-card bombs (R24)."""
    return -(m.sf + 0.003 * top)


def _seq_cost(width: int, top: int, m: CostModel = DEFAULT_MODEL) -> float:
    if width == 1:
        return 1.0 - max(0.0, top - m.straight_lo) / m.straight_div
    if width == 2:
        return 1.0 - max(0.0, top - m.tube_lo) / m.tube_div
    return 1.0 - max(0.0, top - m.plate_lo) / m.plate_div


_SEQ_TYPE = {1: STRAIGHT, 2: TUBE, 3: PLATE}
_WINDOWS = ((1, STRAIGHT_WINDOWS), (2, TUBE_WINDOWS), (3, PLATE_WINDOWS))


class _Tables:
    """Per-level cost tables: ``g[r][n]`` is the cost of ``n`` cards of rank ``r`` as one group."""

    __slots__ = ("g", "level", "model", "pc", "seqs", "st")

    def __init__(self, level: int, model: CostModel) -> None:
        self.level = level
        self.model = model
        st = STRENGTH[level]
        self.st = st
        g: list[list[float]] = []
        pc: list[float] = []
        for r in range(13):
            s = st[r]
            row = [0.0, _single_cost(s, model), _pair_cost(s, model), _triple_cost(s, model)]
            row += [_bomb_cost(n, s, model) for n in range(4, 11)]
            row.append(row[-1])  # never reached; guards n == 11
            g.append(row)
            pc.append(_pair_cost(s, model))
        self.g = g
        self.pc = pc
        # (width, top, ranks, cost) for every straight/tube/plate window (R10)
        self.seqs = [
            (width, top, tuple(ranks), _seq_cost(width, top, model))
            for width, windows in _WINDOWS
            for top, ranks in windows.items()
        ]


_TABLES: dict[tuple[int, CostModel], _Tables] = {}


def _tables(level: int, model: CostModel = DEFAULT_MODEL) -> _Tables:
    t = _TABLES.get((level, model))
    if t is None:
        t = _TABLES[(level, model)] = _Tables(level, model)
    return t


# --------------------------------------------------------------------------------------------
# decomposition
# --------------------------------------------------------------------------------------------
class Combo(tuple):  # type: ignore[type-arg]
    """One combination of a decomposition: ``(type, rank, parts, wilds, cost, faces)``.

    ``parts`` is a tuple of ``(rank, natural cards used)``; ``wilds`` the number of wilds;
    ``faces`` the exact faces for straight flushes and jokers (else ``None``: any faces of
    those ranks will do). ``cost`` as explained in the module docstring.
    """

    __slots__ = ()

    @property
    def type(self) -> str:
        return self[0]  # type: ignore[no-any-return]

    @property
    def rank(self) -> int | None:
        return self[1]  # type: ignore[no-any-return]

    @property
    def size(self) -> int:
        """Number of cards."""
        faces = self[5]
        extra = len(faces) if faces is not None and self[0] != STRAIGHT_FLUSH else 0
        return int(sum(k for _r, k in self[2]) + self[3] + extra)

    @property
    def cost(self) -> float:
        return self[4]  # type: ignore[no-any-return]


def _combo(ptype: str, rank: int | None, parts: tuple[tuple[int, int], ...], wilds: int, cost: float,
           faces: tuple[int, ...] | None = None) -> Combo:
    return Combo((ptype, rank, parts, wilds, cost, faces))


class Decomposition:
    """The best partition found for a hand: ``combos`` (list of :class:`Combo`) and ``cost``."""

    __slots__ = ("combos", "cost")

    def __init__(self, combos: list[Combo], cost: float) -> None:
        self.combos = combos
        self.cost = cost

    def __repr__(self) -> str:
        return f"Decomposition(cost={self.cost:.2f}, combos={[c[:2] for c in self.combos]})"


def _place_wilds(nat: list[int], w: int, T: _Tables, extra_pairs: int) -> list[int]:
    """Greedy wild placement; returns the ranks that received a wild (R12-R16).

    A lone wild is a level card (R15), so a wild may join rank ``r`` only if ``r`` already has
    a natural card or is the level rank. Full-house effects are approximated.
    """
    g = T.g
    level = T.level
    placed: list[int] = []
    for _ in range(w):
        ntrip = 0
        npair = extra_pairs
        for n in nat:
            if n == 3:
                ntrip += 1
            elif n == 2:
                npair += 1
        best_r = level
        best_d = 1e9
        for r in range(13):
            n = nat[r]
            if n == 0 and r != level:
                continue
            d = g[r][n + 1] - g[r][n]
            if n == 2:
                # the pair becomes a triple that may carry another pair (full house)
                if npair - 1 > ntrip:
                    d -= _FH_PAIR
                elif npair <= ntrip:
                    d += T.pc[r]
            elif n == 3 and npair >= ntrip:
                d += _FH_PAIR  # the triple no longer carries a pair
            elif n == 1 and ntrip > npair:
                d -= T.pc[r]  # the new pair completes a full house
            if d < best_d:
                best_d = d
                best_r = r
        nat[best_r] += 1
        placed.append(best_r)
    return placed


def _rest_cost(nat: list[int], w: int, T: _Tables, jpcs: list[float], jcost: float) -> float:
    """Cost of grouping the remaining natural cards by rank (singles … bombs) with ``w`` wilds."""
    if w:
        nat = nat[:]
        _place_wilds(nat, w, T, len(jpcs))
    g = T.g
    pcr = T.pc
    cost = jcost
    ntrip = 0
    pcs = jpcs[:] if jpcs else []
    for r in range(13):
        n = nat[r]
        if n:
            cost += g[r][n]
            if n == 3:
                ntrip += 1
            elif n == 2:
                pcs.append(pcr[r])
    if ntrip and pcs:
        if len(pcs) <= ntrip:
            cost -= sum(pcs)
        else:
            pcs.sort(reverse=True)
            cost -= sum(pcs[:ntrip])
    return cost


class _Search:
    """Depth-first search over sequences (straights, tubes, plates) for the least-cost partition."""

    __slots__ = ("T", "best", "best_path", "budget", "cands", "jcost", "jpcs", "nodes")

    def __init__(self, T: _Tables, jpcs: list[float], jcost: float, budget: int) -> None:
        self.T = T
        self.jpcs = jpcs
        self.jcost = jcost
        self.best = 1e9
        self.best_path: list[tuple[int, tuple[int, ...], int]] = []
        self.nodes = 0
        self.budget = budget
        self.cands: list[tuple[int, int, tuple[int, ...], float]] = []

    def run(self, nat: list[int], w: int) -> None:
        cands = []
        for cand in self.T.seqs:
            width, _top, ranks, _cost = cand
            need = 0
            for r in ranks:
                if nat[r] < width:
                    need += width - nat[r]
            # a sequence made mostly of wilds is never worth it; bombs are rarely broken
            if need <= w and need < width * len(ranks) - 1:
                cands.append(cand)
        self.cands = cands
        self._dfs(nat, w, 0, 0.0, [])

    def _dfs(self, nat: list[int], w: int, start: int, acc: float, path: list[tuple[int, tuple[int, ...], int]]) -> None:
        self.nodes += 1
        c = acc + _rest_cost(nat, w, self.T, self.jpcs, self.jcost)
        if c < self.best - 1e-9:
            self.best = c
            self.best_path = path[:]
        if self.nodes >= self.budget:
            return
        cands = self.cands
        for i in range(start, len(cands)):
            width, _top, ranks, cost = cands[i]
            need = 0
            for r in ranks:
                if nat[r] < width:
                    need += width - nat[r]
            if need > w:
                continue
            used = tuple([min(width, nat[r]) for r in ranks])
            for r, u in zip(ranks, used):
                nat[r] -= u
            path.append((i, used, need))
            self._dfs(nat, w - need, i, acc + cost, path)
            path.pop()
            for r, u in zip(ranks, used):
                nat[r] += u
            if self.nodes >= self.budget:
                return


def _joker_part(
    sj: int, bj: int, full_house_joker_pair: bool, m: CostModel
) -> tuple[list[float], float, list[Combo]]:
    """Jokers never join sequences (R19): ``(pair costs usable in full houses, fixed cost, combos)``."""
    if sj == 2 and bj == 2:
        return [], -m.joker_bomb, [_combo(JOKER_BOMB, None, (), 0, -m.joker_bomb, (52, 52, 53, 53))]
    jpcs: list[float] = []
    cost = 0.0
    combos: list[Combo] = []
    for face, n, s in ((SMALL_JOKER, sj, 13), (BIG_JOKER, bj, 14)):
        if n == 1:
            c = _single_cost(s, m)
            cost += c
            combos.append(_combo(SINGLE, s, (), 0, c, (face,)))
        elif n == 2:
            c = _pair_cost(s, m)
            cost += c
            combos.append(_combo(PAIR, s, (), 0, c, (face, face)))
            if full_house_joker_pair:
                jpcs.append(c)
    return jpcs, cost, combos


_SF_WINDOWS = tuple((top, ranks, sum(1 << r for r in ranks)) for top, ranks in STRAIGHT_WINDOWS.items())


def _sf_candidates(counts: Sequence[int], level: int, w: int) -> list[tuple[int, tuple[int, ...], int]]:
    """Straight flushes the hand can make: ``(top, natural faces, wilds needed)`` (R14, R24)."""
    W = level * 4 + 1
    out = []
    need_min = 5 - w
    for suit in range(4):
        mask = 0
        for r in range(13):
            f = r * 4 + suit
            if counts[f] and f != W:
                mask |= 1 << r
        if mask.bit_count() < need_min:
            continue
        for top, ranks, wmask in _SF_WINDOWS:
            k = (mask & wmask).bit_count()
            if k >= need_min and k >= 3:
                have = tuple(sorted(r * 4 + suit for r in ranks if mask >> r & 1))
                out.append((top, have, 5 - k))
    return out


def _first(x: tuple[Any, ...]) -> Any:
    return x[0]


#: Decompositions by (hand, level, option, budget, model); oldest entries are evicted first.
_DECOMP_CACHE: dict[tuple[Any, ...], Decomposition] = {}
_CACHE_MAX = 4_096


def decompose(counts: Sequence[int], level: int, full_house_joker_pair: bool = True,
              budget: int = 400, model: CostModel = DEFAULT_MODEL) -> Decomposition:
    """Partition a hand into combinations of least total cost (see the module docstring).

    Args:
        counts: per-face counts of the hand (length 54).
        level: the deal's level rank index 0..12 (R8).
        full_house_joker_pair: whether a joker pair may be a full house's pair (R21).
        budget: search nodes per straight-flush choice (bounds the time; about 10 µs a node).
        model: the :class:`CostModel`.
    Returns:
        A :class:`Decomposition` (cached: do not mutate it).
    """
    key = (tuple(counts), level, full_house_joker_pair, budget, model)
    got = _DECOMP_CACHE.get(key)
    if got is not None:
        return got
    if len(_DECOMP_CACHE) >= _CACHE_MAX:
        del _DECOMP_CACHE[next(iter(_DECOMP_CACHE))]
    T = _tables(level, model)
    W = level * 4 + 1
    w = counts[W]
    jpcs, jcost, jcombos = _joker_part(counts[SMALL_JOKER], counts[BIG_JOKER], full_house_joker_pair, model)
    nat = [counts[4 * r] + counts[4 * r + 1] + counts[4 * r + 2] + counts[4 * r + 3] for r in range(13)]
    nat[level] -= w

    # straight-flush choices: none, one, or two disjoint ones. Pre-filter by the cost of the
    # rest without sequences, then search the best few in full.
    choices: list[tuple[float, tuple[tuple[int, tuple[int, ...], int], ...]]] = [(0.0, ())]
    sfs = _sf_candidates(counts, level, w)
    if sfs:
        base = _rest_cost(nat, w, T, jpcs, jcost)
        scored: list[tuple[float, tuple[tuple[int, tuple[int, ...], int], ...]]] = []
        for sf in sfs:
            top, faces, need = sf
            for f in faces:
                nat[FACE_RANK[f]] -= 1
            scored.append((_sf_cost(top, model) + _rest_cost(nat, w - need, T, jpcs, jcost), (sf,)))
            for f in faces:
                nat[FACE_RANK[f]] += 1
        scored.sort(key=_first)
        singles = scored[:4]
        for i, (_c1, (sf1,)) in enumerate(singles):
            for _c2, (sf2,) in singles[i + 1:]:
                if sf1[2] + sf2[2] > w:
                    continue
                both = sf1[1] + sf2[1]
                if any(both.count(f) > counts[f] for f in set(both)):
                    continue
                for f in both:
                    nat[FACE_RANK[f]] -= 1
                c = _sf_cost(sf1[0], model) + _sf_cost(sf2[0], model) + _rest_cost(nat, w - sf1[2] - sf2[2], T, jpcs, jcost)
                for f in both:
                    nat[FACE_RANK[f]] += 1
                scored.append((c, (sf1, sf2)))
        scored.sort(key=_first)
        for c, sel in scored[:3]:
            if c < base + 0.5:
                choices.append((c, sel))

    best: tuple[float, Any, Any, list[int], int] | None = None
    for _c, sel in choices:
        nat2 = nat[:]
        w2 = w
        acc = 0.0
        for top, faces, need in sel:
            for f in faces:
                nat2[FACE_RANK[f]] -= 1
            w2 -= need
            acc += _sf_cost(top, model)
        s = _Search(T, jpcs, jcost, budget)
        s.run(nat2, w2)
        total = acc + s.best
        if best is None or total < best[0] - 1e-9:
            best = (total, sel, s, nat2, w2)
    assert best is not None
    total, sel, s, nat2, w2 = best
    combos: list[Combo] = []
    for top, faces, need in sel:
        combos.append(_combo(STRAIGHT_FLUSH, top, tuple((FACE_RANK[f], 1) for f in faces), need,
                             _sf_cost(top, model), faces + (W,) * need))
    rest = nat2[:]
    wl = w2
    for i, used, need in s.best_path:
        width, top, ranks, cost = s.cands[i]
        for r, u in zip(ranks, used):
            rest[r] -= u
        wl -= need
        combos.append(_combo(_SEQ_TYPE[width], top, tuple((r, u) for r, u in zip(ranks, used) if u), need, cost))
    combos.extend(_group_combos(rest, wl, T, jcombos, full_house_joker_pair))
    d = Decomposition(combos, total)
    _DECOMP_CACHE[key] = d
    return d


def _group_combos(nat: list[int], w: int, T: _Tables, jcombos: list[Combo], fhjp: bool) -> list[Combo]:
    """The same grouping as :func:`_rest_cost`, as combinations."""
    nat = nat[:]
    level = T.level
    jpairs = [c for c in jcombos if c[0] == PAIR] if fhjp else []
    placed = _place_wilds(nat, w, T, len(jpairs)) if w else []
    wilds_at = [0] * 13
    for r in placed:
        wilds_at[r] += 1
    st = T.st
    g = T.g
    triples: list[tuple[int, int, int]] = []  # (rank, naturals, wilds)
    pairs: list[tuple[float, Combo]] = []
    out: list[Combo] = []
    for r in range(13):
        n = nat[r]
        if not n:
            continue
        k = wilds_at[r]
        parts = ((r, n - k),) if n - k else ()
        if n == 1:
            out.append(_combo(SINGLE, r, parts, k, g[r][1]))
        elif n == 2:
            c = _combo(PAIR, r, parts, k, g[r][2])
            pairs.append((g[r][2], c))
        elif n == 3:
            triples.append((r, n - k, k))
        else:
            out.append(_combo(BOMB, r, parts, k, g[r][n]))
    for c in jcombos:
        if c[0] == PAIR and fhjp:
            pairs.append((c[4], c))
        else:
            out.append(c)
    # triples carry the weakest pairs (highest cost) as full houses; strongest triples first so
    # that weak triples stay available … order does not change the total
    pairs.sort(key=lambda x: -x[0])
    triples.sort(key=lambda t: st[t[0]])
    for i, (r, n, k) in enumerate(triples):
        tc = g[r][3]
        if i < len(pairs):
            pc = pairs[i][1]
            parts = (((r, n),) if n else ()) + pc[2]
            faces = pc[5]
            out.append(_combo(FULL_HOUSE, r, parts, k + pc[3], tc, faces))
        else:
            out.append(_combo(TRIPLE, r, ((r, n),) if n else (), k, tc))
    for _pcost, pc in pairs[len(triples):]:
        out.append(pc)
    del level
    return out


def hand_cost(counts: Sequence[int], level: int, full_house_joker_pair: bool = True, budget: int = 400,
              model: CostModel = DEFAULT_MODEL) -> float:
    """Cost of the best decomposition of a hand (lower is better; see :func:`decompose`)."""
    return decompose(counts, level, full_house_joker_pair, budget, model).cost
