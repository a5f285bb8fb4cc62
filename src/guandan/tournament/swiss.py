"""Swiss / points-paired rounds (积分编排) by maximum-weight matching (networkx).

**Round 1** (:func:`pair_first_round`). ``"seeded"``: the entries in seeding order (seed number, then
rating, then entry id) are cut into a top and a bottom half and entry *i* of the top half meets entry *i*
of the bottom half: with N entries, 1 v N/2+1, 2 v N/2+2, … (the "slide" system; strongest entries never
meet in round 1). An odd field gives the bye to the last entry of the seeding order first. ``"random"``:
the order is shuffled by ``random.Random(seed)`` and consecutive entries meet, the last one taking the bye.

**Later rounds** (:func:`pair_round`). Every two active entries are joined by an edge, plus one "bye" node
when the field is odd; ``networkx.max_weight_matching(maxcardinality=True)`` picks a perfect matching of
least total cost. An edge's cost has four tiers, scaled so that they are lexicographic (each tier's unit
is larger than the most the lower tiers can add up to over a whole round; the weights are integers, so
the matching is computed exactly):

1. **violations**: a bye to an entry that has had ``k`` more byes than the active entry with the fewest
   costs ``k · (n//2 + 2)`` (one extra bye costs more than every repeat a round can hold together), a
   repeat pairing costs 1. A round therefore gives the bye to an entry with the fewest byes so far
   whenever one is active: no second bye while an entry without a bye is active, no third while one
   with a single bye is, and so on (3 entries over 3 rounds: one bye each; over 6 rounds: two each).
   Then it has no repeat whenever some such pairing without one exists, and otherwise as few repeats
   as possible;
2. **the bye**: the bye edge costs the recipient's distance from the bottom of the standings (0 for the
   last entry): the bye goes to the lowest-ranked entry with the fewest byes, unless that forces a
   repeat (tier 1);
3. **field-point difference**: ``(fp_i − fp_j)²`` (the square prefers two pairs one point apart to one
   pair two points apart: fewer, smaller floats between score groups);
4. **standings order**: ``(r_i − r_j)²`` where r is the place in the current standings (seed order before
   any result), so that within a score group 1 meets 2, 3 meets 4 (积分编排's adjacent pairing).

A bye scores as a win (3 field points, R58 "win"); see :mod:`guandan.tournament.scoring`.

**Large fields.** The blossom algorithm is O(n³) in pure Python (a complete 600-entry graph takes over ten
seconds), so above ``full_limit`` (64) entries the standings are matched in sliding windows: the top
``window`` (24) unpaired entries are matched, the pairs that include one of the window's top half are
kept, and the window slides down; the last window takes the bye node. If any kept pair is a repeat or a
bye beyond the fewest, the round is matched again with windows twice as large, and in the end on the complete
graph, so tier 1 is as good as the complete matching's. Tiers 3 and 4 are then optimal within each
window rather than over the whole field.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

import networkx as nx

BYE = -1


def seeding_order(entries: Iterable[tuple[int, int | None, float | None]]) -> list[int]:
    """Entry ids in seeding order from ``(id, seed, rating)``: seed number ascending (no seed after every
    seed), then rating descending (no rating last), then id."""
    return [i for i, _, _ in sorted(entries, key=lambda e: (e[1] is None, e[1] or 0, e[2] is None, -(e[2] or 0), e[0]))]


def pair_first_round(order: Sequence[int], mode: str = "seeded",
                     seed: int | None = None) -> tuple[list[tuple[int, int]], int | None]:
    """Round 1: ``(pairs, bye)`` from ids in seeding order (module docstring). ``mode``: ``"seeded"`` or
    ``"random"`` (``seed`` makes it reproducible)."""
    ids = list(order)
    if mode == "random":
        random.Random(seed).shuffle(ids)
        bye = ids.pop() if len(ids) % 2 else None
        return [(ids[i], ids[i + 1]) for i in range(0, len(ids), 2)], bye
    bye = ids.pop() if len(ids) % 2 else None
    half = len(ids) // 2
    return [(ids[i], ids[i + half]) for i in range(half)], bye


def bye_counts(had_bye: Mapping[int, int] | Iterable[int]) -> Counter[int]:
    """Byes per entry from a mapping ``{id: byes}`` or an iterable of ids (each occurrence one bye)."""
    if isinstance(had_bye, Mapping):
        return Counter({e: int(c) for e, c in had_bye.items()})
    return Counter(had_bye)


class _Costs:
    """The four-tier integer costs of the module docstring for one round."""

    def __init__(self, ranked: Sequence[int], fp: dict[int, int], played: set[frozenset[int]],
                 had_bye: Mapping[int, int] | Iterable[int]) -> None:
        self.n = n = len(ranked)
        self.rank = {e: i for i, e in enumerate(ranked)}
        self.fp = fp
        self.played = played
        byes = bye_counts(had_bye)
        fewest = min((byes[e] for e in ranked), default=0)
        #: byes beyond the fewest of the active entries, per entry (tier 1 of a bye to that entry)
        self.extra_byes = {e: byes[e] - fewest for e in ranked}
        self.fp_floor = min((fp.get(e, 0) for e in ranked), default=0)
        spread = max((fp.get(e, 0) for e in ranked), default=0) - self.fp_floor
        pairs = n // 2 + 1
        self.b4 = (n + 1) ** 2 * pairs + 1
        self.b3 = spread * spread * pairs + 1
        self.b2 = n + 1
        self.second_bye = n // 2 + 2
        most = max(self.extra_byes.values(), default=0)
        self.top = (max(most, 1) * self.second_bye + 2) * self.b2 * self.b3 * self.b4 + 1

    def cost(self, i: int, j: int) -> int:
        if j == BYE:
            i, j = j, i
        if i == BYE:
            r = self.rank[j]
            t1 = self.second_bye * self.extra_byes[j]
            t2 = self.n - 1 - r
            d = self.fp.get(j, 0) - self.fp_floor
            t4 = (self.n - r) ** 2
        else:
            t1 = 1 if frozenset((i, j)) in self.played else 0
            t2 = 0
            d = self.fp.get(i, 0) - self.fp.get(j, 0)
            t4 = (self.rank[i] - self.rank[j]) ** 2
        return ((t1 * self.b2 + t2) * self.b3 + d * d) * self.b4 + t4

    def violation(self, i: int, j: int) -> bool:
        if j == BYE:
            i, j = j, i
        if i == BYE:
            return self.extra_byes[j] > 0
        return frozenset((i, j)) in self.played


def _match(nodes: Sequence[int], costs: _Costs) -> list[tuple[int, int]]:
    g = nx.Graph()
    g.add_nodes_from(nodes)
    for x in range(len(nodes)):
        for y in range(x + 1, len(nodes)):
            g.add_edge(nodes[x], nodes[y], weight=costs.top - costs.cost(nodes[x], nodes[y]))
    matching = nx.max_weight_matching(g, maxcardinality=True)
    return [_order(a, b, costs) for a, b in matching]


def _order(a: int, b: int, costs: _Costs) -> tuple[int, int]:
    if a == BYE or (b != BYE and costs.rank[b] < costs.rank[a]):
        a, b = b, a
    return a, b


def pair_round(ranked: Sequence[int], fp: dict[int, int], played: Iterable[frozenset[int]],
               had_bye: Mapping[int, int] | Iterable[int], *, window: int = 24,
               full_limit: int = 64) -> tuple[list[tuple[int, int]], int | None]:
    """Pair one Swiss round after round 1.

    ``ranked``: the active entries in current standings order (best first); ``fp``: their field points;
    ``played``: the pairs that have met (``frozenset({a, b})``); ``had_bye``: the byes so far, as
    ``{entry: byes}`` or as entry ids, one per bye (a set: at most one each).
    Returns ``(pairs, bye)``: pairs ``(a, b)`` with ``a`` the higher-ranked, in standings order of ``a``;
    ``bye`` the entry with the bye or None. Weights and the large-field windows: module docstring.
    """
    ranked = list(ranked)
    costs = _Costs(ranked, fp, set(played), had_bye)
    while len(ranked) > full_limit and window < len(ranked):
        got = _windowed(ranked, costs, window)
        if got is not None:
            return _finish(got, costs)
        window *= 2
    return _finish(_match(_with_bye(ranked), costs), costs)


def _windowed(ranked: list[int], costs: _Costs, window: int) -> list[tuple[int, int]] | None:
    """Sliding-window matching (module docstring); None when a kept pair is a repeat or a second bye."""
    kept: list[tuple[int, int]] = []
    rest = ranked
    while len(rest) > window:
        pool = rest[:window]
        head = set(pool[: window // 2])
        take = [p for p in _match(pool, costs) if p[0] in head or p[1] in head]
        if not take or any(costs.violation(a, b) for a, b in take):
            return None
        kept += take
        used = {e for p in take for e in p}
        rest = [e for e in rest if e not in used]
    last = _match(_with_bye(rest), costs)
    if any(costs.violation(a, b) for a, b in last):
        return None
    return kept + last


def _with_bye(ids: list[int]) -> list[int]:
    return ids + [BYE] if len(ids) % 2 else ids


def _finish(pairs: list[tuple[int, int]], costs: _Costs) -> tuple[list[tuple[int, int]], int | None]:
    bye = next((a for a, b in pairs if b == BYE), None)
    real = sorted(((a, b) for a, b in pairs if b != BYE), key=lambda p: costs.rank[p[0]])
    return real, bye


def round_cost(pairs: Iterable[tuple[int, int]], bye: int | None, ranked: Sequence[int], fp: dict[int, int],
               played: Iterable[frozenset[int]],
               had_bye: Mapping[int, int] | Iterable[int]) -> tuple[int, int, int, int]:
    """The four tiers ``(violations, bye distance, Σ fp difference², Σ rank difference²)`` of a round, for
    tests and reports (violations weighted as in tier 1)."""
    c = _Costs(list(ranked), fp, set(played), had_bye)
    t1 = sum(frozenset((a, b)) in c.played for a, b in pairs)
    t1 += c.second_bye * c.extra_byes[bye] if bye is not None else 0
    t2 = c.n - 1 - c.rank[bye] if bye is not None else 0
    t3 = sum((fp.get(a, 0) - fp.get(b, 0)) ** 2 for a, b in pairs)
    t3 += (fp.get(bye, 0) - c.fp_floor) ** 2 if bye is not None else 0
    t4 = sum((c.rank[a] - c.rank[b]) ** 2 for a, b in pairs) + ((c.n - c.rank[bye]) ** 2 if bye is not None else 0)
    return t1, t2, t3, t4
