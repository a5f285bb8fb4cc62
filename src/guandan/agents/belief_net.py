"""The belief network: per hidden seat, a distribution over its count of each rank group (NumPy inference).

Inputs (public facts only, R32/R50), for one hidden seat of one view, :data:`N_IN` floats with
the 16 rank groups put in level order (R9: group ``g`` at position ``gs[g]`` of
:func:`guandan.agents.belief.group_strengths`, so one network serves every level):

* per group (16 each, in level order): unseen copies / 8, the hard bounds ``lo`` / 8 and
  ``hi`` / 8 (:class:`~guandan.agents.belief.SeatFeatures`), cards of the group the seat has
  played / 4, and how often the seat passed (R28) on an opponent's single, pair and triple that
  the group outranks (each capped at 3, / 3);
* per seat: card count / 27, its bucket one-hot (16), hidden cards of all seats / 81, how many
  plays of each of the 10 play types it made / 4 (capped at 8), passes / 10, and the share of
  passes among its last 3 actions (what it passed over, and when).

Output: 16 x 9 logits (level order); a group's logits outside ``lo <= k <= min(hi, n, u)``
are masked and the rest go through a softmax. Layers ``N_IN -> 128 -> 128 -> 144`` (ReLU),
weights ``w0, b0, ...`` float32 in an ``.npz`` with a JSON ``meta`` (``weights/belief_net.npz``,
``weights/BELIEF_CARD.md``); trained by ``guandan.train.belief_net`` (PyTorch), read here with
NumPy only. :meth:`NetPrior.weights` gives the exact sampler's factors ``q(k) / h(k)`` as
:meth:`guandan.agents.belief.TablePrior.weights` does.
"""

from __future__ import annotations

import json
import os
from typing import Any

from guandan.core.deal import partner
from guandan.core.exact_worlds import MAX_GROUP, N_GROUPS
from guandan.core.plays import PLAY_TYPES, STRENGTH
from guandan.core.views import SeatView
from guandan.core.worlds import WorldConstraints

from .belief import SeatFeatures, count_bucket, group_strengths, hypergeometric, seat_features

__all__ = ["DEFAULT_NET", "N_HIST", "N_IN", "NetPrior", "encode", "history_features"]

DEFAULT_NET = os.path.join(os.path.dirname(__file__), "weights", "belief_net.npz")
#: per-seat history features (:func:`history_features`)
N_HIST = 16 * 4 + len(PLAY_TYPES) + 2
#: network inputs (:func:`encode`)
N_IN = 16 * 7 + 1 + 16 + 1 + len(PLAY_TYPES) + 2
_PASS_SLOT = {"single": 0, "pair": 1, "triple": 2}


def history_features(view: SeatView) -> list[list[float]]:
    """Per seat (4 rows of :data:`N_HIST` floats, groups in the view's group order): passes on
    an opponent's single / pair / triple the group outranks (16 each, capped at 3, / 3), cards
    of the group played (16, / 4), plays per play type (/ 4, capped at 8), passes / 10 and the
    share of passes among the seat's last 3 actions."""
    from guandan.core.exact_worlds import group_of_faces

    level = view.level
    gof = group_of_faces(level)
    gs = group_strengths(level)
    st = STRENGTH[level]
    passes = [[[0] * N_GROUPS for _ in range(3)] for _ in range(4)]
    played = [[0] * N_GROUPS for _ in range(4)]
    types = [[0] * len(PLAY_TYPES) for _ in range(4)]
    n_pass = [0] * 4
    recent: list[list[int]] = [[] for _ in range(4)]
    top: tuple[int, Any] | None = None
    for seat, act in view.history:
        if act[0] in PLAY_TYPES:
            top = (seat, act)
            types[seat][PLAY_TYPES.index(act[0])] += 1
            for f in act[2]:
                played[seat][gof[f]] += 1
            recent[seat].append(0)
        elif act[0] == "pass":
            n_pass[seat] += 1
            recent[seat].append(1)
            if top is not None:
                tseat, tact = top
                slot = _PASS_SLOT.get(tact[0])
                if slot is not None and tseat != seat and tseat != partner(seat):
                    ts = st[tact[1]]
                    row = passes[seat][slot]
                    for g in range(N_GROUPS):
                        if gs[g] > ts:
                            row[g] += 1
    out = []
    for s in range(4):
        v: list[float] = []
        for slot in range(3):
            v += [min(x, 3) / 3 for x in passes[s][slot]]
        v += [x / 4 for x in played[s]]
        v += [min(x, 8) / 4 for x in types[s]]
        last = recent[s][-3:]
        v += [n_pass[s] / 10, sum(last) / 3 if last else 0.0]
        out.append(v)
    return out


def encode(f: SeatFeatures, hist: list[float]) -> list[float]:
    """The :data:`N_IN` inputs of one hidden seat (module docstring); groups in level order."""
    order = [0] * N_GROUPS
    for g in range(N_GROUPS):
        order[f.gs[g]] = g
    x: list[float] = []
    x += [f.u[g] / 8 for g in order]
    x += [f.lo[g] / 8 for g in order]
    x += [f.hi[g] / 8 for g in order]
    x += [hist[48 + g] for g in order]  # played / 4
    for slot in range(3):
        x += [hist[16 * slot + g] for g in order]
    x.append(f.n / 27)
    nb = [0.0] * 16
    nb[count_bucket(f.n)] = 1.0
    x += nb
    x.append(f.total / 81)
    x += hist[64:]
    return x


def masks(f: SeatFeatures) -> list[list[bool]]:
    """Allowed counts per group (view's group order): ``lo <= k <= min(hi, n, u)``."""
    return [[f.lo[g] <= k <= min(f.hi[g], f.n, f.u[g]) for k in range(MAX_GROUP + 1)] for g in range(N_GROUPS)]


class NetPrior:
    """The belief network at play time (NumPy only).

    Args:
        layers: ``[(w, b), ...]`` float arrays, ``w`` of shape ``(in, out)``; the last layer
            gives 144 = 16 x 9 logits.
        meta: description (data, metrics).
    Raises:
        ValueError: layer shapes that do not chain from :data:`N_IN` to 144.
    """

    def __init__(self, layers: list[tuple[Any, Any]], meta: dict[str, Any] | None = None) -> None:
        import numpy as np

        self.layers = [(np.asarray(w, dtype=np.float32), np.asarray(b, dtype=np.float32)) for w, b in layers]
        d = N_IN
        for w, b in self.layers:
            if w.shape[0] != d or b.shape != (w.shape[1],):
                raise ValueError(f"layer shape {w.shape} does not follow width {d}")
            d = w.shape[1]
        if d != N_GROUPS * (MAX_GROUP + 1):
            raise ValueError(f"the last layer must give {N_GROUPS * (MAX_GROUP + 1)} logits, not {d}")
        self.meta = dict(meta or {})

    @classmethod
    def load(cls, path: str | os.PathLike[str] | None = None) -> NetPrior:
        """Read ``w0, b0, w1, b1, ...`` and ``meta`` from an ``.npz`` (default: the shipped one).

        Raises:
            FileNotFoundError: no such file. ValueError: not a belief network.
        """
        import numpy as np

        with np.load(path or DEFAULT_NET, allow_pickle=False) as z:
            layers = []
            i = 0
            while f"w{i}" in z.files:
                layers.append((z[f"w{i}"], z[f"b{i}"]))
                i += 1
            if not layers:
                raise ValueError(f"{path}: not a belief network (no w0)")
            meta = json.loads(str(z["meta"])) if "meta" in z.files else {}
        return cls(layers, meta)

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the network as a compressed ``.npz`` (module docstring)."""
        import numpy as np

        arrays: dict[str, Any] = {}
        for i, (w, b) in enumerate(self.layers):
            arrays[f"w{i}"] = w
            arrays[f"b{i}"] = b
        arrays["meta"] = np.array(json.dumps(self.meta, sort_keys=True))
        with open(path, "wb") as fh:
            np.savez_compressed(fh, **arrays)

    def predict_many(self, feats: list[SeatFeatures], hists: list[list[float]]) -> list[list[list[float]]]:
        """``q[i][g][k]`` for several hidden seats (view's group order), masked and normalised."""
        import numpy as np

        if not feats:
            return []
        x = np.asarray([encode(f, h) for f, h in zip(feats, hists)], dtype=np.float32)
        for i, (w, b) in enumerate(self.layers):
            x = x @ w + b
            if i < len(self.layers) - 1:
                x = np.maximum(x, 0.0)
        logits = x.reshape(len(feats), N_GROUPS, MAX_GROUP + 1)
        out = []
        for i, f in enumerate(feats):
            rows = []
            m = masks(f)
            for g in range(N_GROUPS):
                z = logits[i, f.gs[g]]
                allowed = np.asarray(m[g])
                if not allowed.any():
                    rows.append(hypergeometric(f.n, f.u[g], f.total))
                    continue
                z = np.where(allowed, z, -np.inf)
                p = np.exp(z - z.max())
                rows.append((p / p.sum()).tolist())
            out.append(rows)
        return out

    def predict(self, f: SeatFeatures, hist: list[float]) -> list[list[float]]:
        """``q[g][k]`` for one hidden seat (see :meth:`predict_many`)."""
        return self.predict_many([f], [hist])[0]

    def weights(self, view: SeatView, cons: WorldConstraints | None = None) -> list[list[list[float]]]:
        """Belief factors for :meth:`WorldConstraints.exact`: ``w[s][g][k] = q(k) / h(k)``
        (4 x 16 x 9; rows of the viewer and of seats without cards all 1)."""
        cons = cons if cons is not None else WorldConstraints(view)
        feats = seat_features(view, cons)
        hist = history_features(view)
        qs = self.predict_many(feats, [hist[f.seat] for f in feats])
        w = [[[1.0] * (MAX_GROUP + 1) for _ in range(N_GROUPS)] for _ in range(4)]
        for f, q in zip(feats, qs):
            for g in range(N_GROUPS):
                h = hypergeometric(f.n, min(f.u[g], MAX_GROUP), f.total)
                w[f.seat][g] = [q[g][k] / h[k] if h[k] > 0 else 0.0 for k in range(MAX_GROUP + 1)]
        return w
