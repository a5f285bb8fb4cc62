"""Exact world sampling by rank groups, tilted by a belief (DESIGN.md section 6).

The second draw of the one world sampler (:class:`guandan.core.worlds.WorldConstraints`,
:meth:`~guandan.core.worlds.WorldConstraints.exact`): hidden hands drawn *exactly* from

    P(world) ∝ U(world) · ∏ over hidden seats s and groups g of  w[s][g][k(s, g)]

subject to every hard fact of the view, where ``U`` is the uniform law of consistent deals
(the cards as 108 distinguishable copies, R1), ``k(s, g)`` is how many cards of rank group
``g`` seat ``s`` holds in the world and ``w`` are non-negative weights given by a belief (for
example the ratio of a learned count distribution to the uniform one,
:mod:`guandan.agents.belief`). With every weight 1 the draw is exactly uniform over the
consistent deals (the greedy draw of :meth:`WorldConstraints.sample` is only close to it when
tribute facts bind).

Rank groups (16, :func:`group_faces`): the 13 ranks (the level rank without its heart), the
wild (the heart of the level rank, R8/R12), the small joker and the big joker.

Hard facts (all of them are the per-seat, per-face bounds ``lower``/``upper`` and the card
counts of :class:`WorldConstraints`, which implement R4, R31, R32 and the tribute facts
R44-R50, EC-31, EC-38/39, AMB-08): per group, every split of the group's unseen copies over
the hidden seats that respects the per-face bounds is listed with its number of ways (the
multinomial of each face's copies); a dynamic program over the 16 groups whose state is what
each hidden seat still needs to reach its card count sums the weights of every completion,
and the groups are then drawn one after the other from the exact conditional law (backward
sampling), the faces within a group last. A draw therefore never breaks a hard fact, and the
same ``random.Random`` state gives the same world.

Standard library only.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from math import factorial
from typing import Any

from .cards import BIG_JOKER, N_FACES, SMALL_JOKER, wild_face

__all__ = ["N_GROUPS", "MAX_GROUP", "ExactSampler", "InconsistentView", "group_faces", "group_of_faces"]

#: Four hands of faces (as :data:`guandan.core.worlds.World`).
World = tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...]]


class InconsistentView(ValueError):
    """No deal of the hidden cards agrees with the view (a malformed or hand-made view).

    Re-exported by :mod:`guandan.core.worlds`, where it is raised too."""

#: Rank groups: 13 ranks, the wild, small joker, big joker.
N_GROUPS = 16
#: Most copies of one group (a rank other than the level rank: 4 suits x 2 decks).
MAX_GROUP = 8
WILD_GROUP = 13


def group_faces(level: int) -> tuple[tuple[int, ...], ...]:
    """The faces of each of the 16 rank groups at ``level`` (module docstring).

    Returns:
        16 tuples of faces: group ``r`` (0..12) the faces of rank ``r`` except the wild,
        group 13 the wild face (R8), 14 the small joker, 15 the big joker.
    Raises:
        ValueError: ``level`` not a rank index 0..12.
    """
    if not 0 <= level <= 12:
        raise ValueError(f"level must be a rank index 0..12, not {level!r}")
    wild = wild_face(level)
    out = [tuple(f for f in range(4 * r, 4 * r + 4) if f != wild) for r in range(13)]
    out += [(wild,), (SMALL_JOKER,), (BIG_JOKER,)]
    return tuple(out)


def group_of_faces(level: int) -> tuple[int, ...]:
    """``group_of_faces(level)[face]``: the rank group (0..15) of each of the 54 faces."""
    out = [0] * N_FACES
    for g, faces in enumerate(group_faces(level)):
        for f in faces:
            out[f] = g
    return tuple(out)


def _splits(copies: int, lows: Sequence[int], highs: Sequence[int]) -> list[tuple[int, ...]]:
    """Every way to split ``copies`` over the seats within per-seat ``lows``/``highs``."""
    if not lows:
        return [()] if copies == 0 else []
    out: list[tuple[int, ...]] = []
    for x in range(lows[0], min(highs[0], copies) + 1):
        for rest in _splits(copies - x, lows[1:], highs[1:]):
            out.append((x,) + rest)
    return out


class ExactSampler:
    """Exact draws of worlds from one view's facts, tilted by per-seat, per-group weights.

    Build once per view (the dynamic program is computed lazily and cached), then call
    :meth:`sample` as often as needed.

    Args:
        cons: the view's :class:`~guandan.core.worlds.WorldConstraints`.
        weights: ``weights[s][g][k]`` (4 x 16 x 9, non-negative floats): the factor of a world
            in which hidden seat ``s`` holds ``k`` cards of group ``g``; rows of the viewer and
            of seats with no cards are ignored; ``None``: all 1 (the exact uniform law).
    Raises:
        InconsistentView: no consistent world has a positive weight.
        ValueError: ``weights`` has a bad shape or a negative entry.
    """

    def __init__(self, cons: Any, weights: Sequence[Sequence[Sequence[float]]] | None = None) -> None:
        # cons: a guandan.core.worlds.WorldConstraints (typed loosely: worlds imports this module)
        self.cons = cons
        self.seats = [s for s in cons.others if cons.counts[s] > 0]
        seats = self.seats
        if weights is not None:
            if len(weights) != 4 or any(len(weights[s]) != N_GROUPS for s in seats):
                raise ValueError("weights must be 4 x 16 x 9 (seat, group, count)")
            for s in seats:
                for row in weights[s]:
                    if len(row) != MAX_GROUP + 1 or min(row) < 0:
                        raise ValueError("each weight row must hold 9 non-negative floats")
        groups = group_faces(cons.level)
        # per group: {split of the group's copies over the seats: [(faces split, ways), ...]}
        self.options: list[dict[tuple[int, ...], list[tuple[tuple[tuple[int, ...], ...], float]]]] = []
        self.faces: list[tuple[int, ...]] = []
        for g, faces in enumerate(groups):
            faces = tuple(f for f in faces if cons.pool[f] > 0)
            self.faces.append(faces)
            per_face = [
                [(x, factorial(cons.pool[f]) / _prod_fact(x))
                 for x in _splits(cons.pool[f], [cons.lower[s][f] for s in seats],
                                  [cons.upper[s][f] for s in seats])]
                for f in faces
            ]
            opts: dict[tuple[int, ...], list[tuple[tuple[tuple[int, ...], ...], float]]] = {}
            for combo in _product(per_face):
                ways = 1.0
                total = [0] * len(seats)
                for x, n in combo:
                    ways *= n
                    for i, v in enumerate(x):
                        total[i] += v
                opts.setdefault(tuple(total), []).append((tuple(x for x, _n in combo), ways))
            if not opts:
                raise InconsistentView(f"no split of rank group {g} agrees with the view's facts")
            self.options.append(opts)
        # the group weight of a split: sum of its ways times the belief's factors
        self.gweights: list[list[tuple[tuple[int, ...], float]]] = []
        for g, opts in enumerate(self.options):
            row = []
            for t, ways in opts.items():
                w = sum(n for _x, n in ways)
                if weights is not None:
                    for i, s in enumerate(seats):
                        w *= weights[s][g][t[i]]
                if w > 0:
                    row.append((t, w))
            self.gweights.append(row)
        # the fewest and most each seat can still take from groups g.. (pruning)
        m = len(seats)
        self.cap = [[0] * m for _ in range(N_GROUPS + 1)]
        self.floor = [[0] * m for _ in range(N_GROUPS + 1)]
        for g in range(N_GROUPS - 1, -1, -1):
            for i in range(m):
                self.cap[g][i] = self.cap[g + 1][i] + max((t[i] for t, _w in self.gweights[g]), default=0)
                self.floor[g][i] = self.floor[g + 1][i] + min((t[i] for t, _w in self.gweights[g]), default=0)
        self._memo: dict[tuple[int, tuple[int, ...]], float] = {}
        self._choices: dict[tuple[int, tuple[int, ...]], tuple[list[tuple[tuple[int, ...], float]], float]] = {}
        self.need = tuple(cons.counts[s] for s in seats)
        if self._mass(0, self.need) <= 0:
            raise InconsistentView("no deal of the unseen cards with a positive belief weight satisfies the view")

    def _mass(self, g: int, need: tuple[int, ...]) -> float:
        """Total weight of the completions of groups ``g..15`` that give each seat ``need``."""
        if g == N_GROUPS:
            return 0.0 if any(need) else 1.0
        key = (g, need)
        memo = self._memo
        got = memo.get(key)
        if got is not None:
            return got
        cap, floor = self.cap[g], self.floor[g]
        for n, lo, hi in zip(need, floor, cap):
            if n < lo or n > hi:
                memo[key] = 0.0
                return 0.0
        total = 0.0
        for t, w in self.gweights[g]:
            nxt = tuple([n - x for n, x in zip(need, t)])
            sub = memo.get((g + 1, nxt))
            if sub is None:
                sub = self._mass(g + 1, nxt)
            total += w * sub
        memo[key] = total
        return total

    def _options(self, g: int, need: tuple[int, ...]) -> tuple[list[tuple[tuple[int, ...], float]], float]:
        key = (g, need)
        got = self._choices.get(key)
        if got is None:
            choices = []
            total = 0.0
            for t, w in self.gweights[g]:
                m = w * self._mass(g + 1, tuple([n - x for n, x in zip(need, t)]))
                if m > 0:
                    choices.append((t, m))
                    total += m
            got = self._choices[key] = (choices, total)
        return got

    def sample(self, rng: random.Random) -> World:
        """One world (four sorted hands, the viewer's own hand unchanged) from the exact law.

        Every hard fact holds (:meth:`WorldConstraints.consistent` is true for the result).
        """
        cons = self.cons
        seats = self.seats
        hands: list[list[int]] = [[] for _ in range(4)]
        need = self.need
        for g in range(N_GROUPS):
            choices, total = self._options(g, need)
            t = _pick(choices, total, rng)
            # faces within the group: the splits of this total, by their number of ways
            ways = self.options[g][t]
            x = _pick(ways, sum(n for _x, n in ways), rng)
            for f, split in zip(self.faces[g], x):
                for i, v in enumerate(split):
                    if v:
                        hands[seats[i]].extend((f,) * v)
            need = tuple(n - v for n, v in zip(need, t))
        hands[cons.seat] = list(cons.hand)
        h = [tuple(sorted(x)) for x in hands]
        return (h[0], h[1], h[2], h[3])


def _pick(choices: Sequence[tuple[object, float]], total: float, rng: random.Random):  # type: ignore[no-untyped-def]
    x = rng.random() * total
    for c, m in choices:
        x -= m
        if x < 0:
            return c
    return choices[-1][0]


def _prod_fact(xs: Sequence[int]) -> int:
    out = 1
    for x in xs:
        out *= factorial(x)
    return out


def _product(lists: Sequence[Sequence[tuple[tuple[int, ...], float]]]) -> list[list[tuple[tuple[int, ...], float]]]:
    out: list[list[tuple[tuple[int, ...], float]]] = [[]]
    for options in lists:
        out = [prev + [o] for prev in out for o in options]
    return out
