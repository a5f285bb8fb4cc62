"""A learned belief over the hidden hands: the counted (tabular) prior (NumPy, no PyTorch).

What it predicts
----------------
For one seat's view, for each hidden seat ``s`` still holding cards and each of the 16 rank
groups ``g`` (:func:`guandan.core.exact_worlds.group_faces`: 13 ranks, the wild, small
joker, big joker), a distribution over ``k`` = how many cards of ``g`` seat ``s`` holds
(0..8), from public facts only (R32, R50):

* ``nb``: the seat's card count, bucketed (1..12 exact, then 13-16, 17-21, 22-27);
* ``u``: the group's unseen copies (not in the viewer's hand, not played, R1);
* ``gs``: the group's strength in level order (R9: the ranks 0..12 with the level rank 12,
  then the wild 13, small joker 14, big joker 15);
* ``pl``: cards of the group the seat has played this deal (0, 1, 2 or more);
* ``po``: what the seat passed over (R28): 3 when it passed on an opponent's single that the
  group outranks, 2 on such a pair, 1 on such a triple, 0 never (the strongest evidence kept).

The table holds the counted outcomes of our own self-play (``guandan.train.belief``) per cell
``(nb, u, gs, pl, po)`` and per back-off cell ``(nb, u, gs)``; a prediction is smoothed
additively towards the back-off cell and that towards ``h``, the hypergeometric law of the
uniform sampler (``k`` of the ``u`` copies among the seat's ``n`` of the ``U`` hidden cards):

    q_back(k) = (C_back[k] + beta h(k)) / (N_back + beta)
    q(k)      = (C[k] + alpha q_back(k)) / (N + alpha)

Used by the search (:meth:`TablePrior.weights`): the exact sampler
(:meth:`guandan.core.worlds.WorldConstraints.exact`) tilts the uniform law of consistent
deals by ``q(k) / h(k)`` per seat and group, so that the sampled hands' group counts follow
the belief while every hard fact holds.

File format (``.npz``, ``allow_pickle=False``): ``counts`` float64 ``(16, 9, 16, 3, 4, 9)``,
``back`` float64 ``(16, 9, 16, 9)``, ``alpha`` and ``beta`` scalars and a JSON ``meta``
string (data, command, metrics); the shipped one is ``weights/belief_table.npz``
(``weights/BELIEF_CARD.md``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from math import comb
from typing import Any

from guandan.core.deal import partner
from guandan.core.exact_worlds import MAX_GROUP, N_GROUPS, group_of_faces
from guandan.core.plays import PLAY_TYPES, STRENGTH
from guandan.core.views import SeatView
from guandan.core.worlds import WorldConstraints, played_by_seat

__all__ = [
    "DEFAULT_TABLE", "TABLE_SHAPE", "SeatFeatures", "TablePrior", "count_bucket", "group_strengths",
    "hypergeometric", "seat_features",
]

#: The shipped table.
DEFAULT_TABLE = os.path.join(os.path.dirname(__file__), "weights", "belief_table.npz")
#: Cells of the table: count bucket, unseen copies, strength, played, passed over.
TABLE_SHAPE = (16, MAX_GROUP + 1, N_GROUPS, 3, 4)
_PASS_CODE = {"single": 3, "pair": 2, "triple": 1}


def count_bucket(n: int) -> int:
    """The card-count bucket 0..15 of a seat holding ``n`` cards (1..12 exact, 13-16, 17-21, 22+)."""
    if n <= 12:
        return max(0, n)
    return 13 + (n >= 17) + (n >= 22)


def group_strengths(level: int) -> tuple[int, ...]:
    """Strength (0..15) of each rank group at ``level`` (module docstring, R9)."""
    st = STRENGTH[level]
    return tuple(st[r] for r in range(13)) + (13, 14, 15)


def hypergeometric(n: int, u: int, total: int) -> list[float]:
    """P(k) for k = 0..8: ``k`` of ``u`` marked cards among ``n`` drawn of ``total`` (uniform draw)."""
    out = [0.0] * (MAX_GROUP + 1)
    if total <= 0 or n <= 0:
        out[0] = 1.0
        return out
    n = min(n, total)
    u = min(u, total)
    den = comb(total, n)
    for k in range(0, min(u, n, MAX_GROUP) + 1):
        out[k] = comb(u, k) * comb(total - u, n - k) / den
    return out


class SeatFeatures:
    """The public features of one hidden seat (module docstring).

    Attributes:
        seat: the hidden seat; n: its card count; total: hidden cards of all other seats;
        u, gs, pl, po: per group (16 ints each); lo, hi: per group the fewest and most cards
        the view's hard facts allow the seat (sums of ``WorldConstraints.lower``/``upper``).
    """

    __slots__ = ("gs", "hi", "lo", "n", "pl", "po", "seat", "total", "u")

    def __init__(self, seat: int, n: int, total: int, u: list[int], gs: tuple[int, ...], pl: list[int],
                 po: list[int], lo: list[int], hi: list[int]) -> None:
        self.seat, self.n, self.total = seat, n, total
        self.u, self.gs, self.pl, self.po, self.lo, self.hi = u, gs, pl, po, lo, hi


def seat_features(view: SeatView, cons: WorldConstraints | None = None) -> list[SeatFeatures]:
    """Features of every hidden seat of ``view`` that still holds cards (module docstring).

    Args:
        view: a seat's view (any phase).
        cons: its :class:`WorldConstraints` (built when ``None``).
    Raises:
        InconsistentView: from :class:`WorldConstraints` for a malformed view.
    """
    cons = cons if cons is not None else WorldConstraints(view)
    level = view.level
    gof = group_of_faces(level)
    gs = group_strengths(level)
    st = STRENGTH[level]
    unseen = [0] * N_GROUPS
    for f, c in enumerate(cons.pool):
        unseen[gof[f]] += c
    played = played_by_seat(view.history)
    total = sum(cons.counts[s] for s in cons.others)
    out: list[SeatFeatures] = []
    # what each seat passed over: the last play before a pass is the play it passed on (R28)
    passed = [[0] * N_GROUPS for _ in range(4)]
    top: tuple[int, Any] | None = None
    for seat, act in view.history:
        if act[0] in PLAY_TYPES:
            top = (seat, act)
        elif act[0] == "pass" and top is not None:
            tseat, tact = top
            code = _PASS_CODE.get(tact[0])
            if code and tseat != partner(seat) and tseat != seat:
                ts = st[tact[1]]
                row = passed[seat]
                for g in range(N_GROUPS):
                    if gs[g] > ts and row[g] < code:
                        row[g] = code
    for s in cons.others:
        n = cons.counts[s]
        if n <= 0:
            continue
        pl = [0] * N_GROUPS
        lo = [0] * N_GROUPS
        hi = [0] * N_GROUPS
        for f in range(54):
            g = gof[f]
            pl[g] += played[s][f]
            lo[g] += cons.lower[s][f]
            hi[g] += cons.upper[s][f]
        out.append(SeatFeatures(s, n, total, unseen[:], gs, [min(2, x) for x in pl], passed[s][:], lo, hi))
    return out


class TablePrior:
    """The counted prior (module docstring); NumPy only.

    Args:
        counts: ``(16, 9, 16, 3, 4, 9)`` counted outcomes per cell and count.
        back: ``(16, 9, 16, 9)`` counted outcomes per back-off cell.
        alpha, beta: smoothing strengths (> 0).
        meta: free description (data, metrics).
    Raises:
        ValueError: bad shapes or smoothing strengths.
    """

    def __init__(self, counts: Any, back: Any, alpha: float = 20.0, beta: float = 5.0,
                 meta: dict[str, Any] | None = None) -> None:
        import numpy as np

        self.counts = np.asarray(counts, dtype=np.float64)
        self.back = np.asarray(back, dtype=np.float64)
        if self.counts.shape != TABLE_SHAPE + (MAX_GROUP + 1,):
            raise ValueError(f"counts must have shape {TABLE_SHAPE + (MAX_GROUP + 1,)}, not {self.counts.shape}")
        if self.back.shape != TABLE_SHAPE[:3] + (MAX_GROUP + 1,):
            raise ValueError(f"back must have shape {TABLE_SHAPE[:3] + (MAX_GROUP + 1,)}, not {self.back.shape}")
        if not (alpha > 0 and beta > 0):
            raise ValueError("alpha and beta must be > 0")
        self.alpha = float(alpha)
        self.beta = float(beta)
        self.meta = dict(meta or {})

    @classmethod
    def load(cls, path: str | os.PathLike[str] | None = None) -> TablePrior:
        """Read a table written by :meth:`save` (default: the shipped one).

        Raises:
            FileNotFoundError: no such file.
            ValueError: not a belief table.
        """
        import numpy as np

        with np.load(path or DEFAULT_TABLE, allow_pickle=False) as z:
            if "counts" not in z.files or "back" not in z.files:
                raise ValueError(f"{path}: not a belief table (no counts/back arrays)")
            meta = json.loads(str(z["meta"])) if "meta" in z.files else {}
            return cls(z["counts"], z["back"], float(z["alpha"]), float(z["beta"]), meta)

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the table as a compressed ``.npz`` (module docstring)."""
        import numpy as np

        with open(path, "wb") as fh:
            np.savez_compressed(fh, counts=self.counts.astype(np.float32), back=self.back.astype(np.float32),
                                alpha=np.float64(self.alpha), beta=np.float64(self.beta),
                                meta=np.array(json.dumps(self.meta, sort_keys=True)))

    def predict(self, f: SeatFeatures) -> list[list[float]]:
        """``q[g][k]`` for one hidden seat: 16 distributions over k = 0..8, each restricted to
        the hard bounds ``f.lo[g] <= k <= f.hi[g]`` and to ``k <= n`` and renormalised."""
        nb = count_bucket(f.n)
        out: list[list[float]] = []
        for g in range(N_GROUPS):
            u = min(f.u[g], MAX_GROUP)
            h = hypergeometric(f.n, u, f.total)
            cb = self.back[nb, u, f.gs[g]]
            nbk = float(cb.sum())
            qb = [(cb[k] + self.beta * h[k]) / (nbk + self.beta) for k in range(MAX_GROUP + 1)]
            c = self.counts[nb, u, f.gs[g], f.pl[g], f.po[g]]
            nc = float(c.sum())
            q = [(c[k] + self.alpha * qb[k]) / (nc + self.alpha) for k in range(MAX_GROUP + 1)]
            lo, hi = f.lo[g], min(f.hi[g], f.n, u)
            q = [q[k] if lo <= k <= hi else 0.0 for k in range(MAX_GROUP + 1)]
            z = sum(q)
            out.append([x / z for x in q] if z > 0 else h)
        return out

    def weights(self, view: SeatView, cons: WorldConstraints | None = None) -> list[list[list[float]]]:
        """Belief factors for :meth:`WorldConstraints.exact`: ``w[s][g][k] = q(k) / h(k)``.

        Returns:
            4 x 16 x 9 floats; rows of the viewer and of seats without cards are all 1.
        """
        cons = cons if cons is not None else WorldConstraints(view)
        w = [[[1.0] * (MAX_GROUP + 1) for _ in range(N_GROUPS)] for _ in range(4)]
        for f in seat_features(view, cons):
            q = self.predict(f)
            for g in range(N_GROUPS):
                h = hypergeometric(f.n, min(f.u[g], MAX_GROUP), f.total)
                w[f.seat][g] = [q[g][k] / h[k] if h[k] > 0 else 0.0 for k in range(MAX_GROUP + 1)]
        return w


def uniform_predict(f: SeatFeatures) -> list[list[float]]:
    """The uniform sampler's law per group (hypergeometric, restricted to the hard bounds)."""
    out = []
    for g in range(N_GROUPS):
        u = min(f.u[g], MAX_GROUP)
        h = hypergeometric(f.n, u, f.total)
        lo, hi = f.lo[g], min(f.hi[g], f.n, u)
        q = [h[k] if lo <= k <= hi else 0.0 for k in range(MAX_GROUP + 1)]
        z = sum(q)
        out.append([x / z for x in q] if z > 0 else h)
    return out


def seat_groups(world_hand: Sequence[int], level: int) -> list[int]:
    """How many cards of each of the 16 rank groups a hand (faces) holds."""
    gof = group_of_faces(level)
    out = [0] * N_GROUPS
    for f in world_hand:
        out[gof[f]] += 1
    return out
