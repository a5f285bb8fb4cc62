"""Belief data from our own self-play, and the counted prior fitted on it (NumPy only).

Data (:func:`generate`): whole games of a population of our own policies (``heuristic`` and
``easy`` at mistake rates 0.1, 0.3 and 0.5, drawn per seat and game; never the 2020
competition bots, whose licence allows evaluation only), alternating the ``official`` and
``aicomp`` presets, each game played for up to ``deals`` deals so that tribute, return and
anti-tribute deals (R44-R50) are included. At each play-phase decision with probability
``rate`` the acting seat's view is taken and, for each hidden seat still holding cards, its
public features (:func:`guandan.agents.belief.seat_features`) and its true count of each of the
16 rank groups are recorded. Seeded: the same arguments give the same arrays.

Arrays (one row per hidden seat at a recorded decision; ``G`` = 16 groups): ``n``, ``total``,
``deal`` (game * 100 + deal number, for held-out splits), ``preset`` (0 official, 1 aicomp),
``level``, ``(rows, G)`` int8 ``u``, ``gs``, ``pl``, ``po``, ``lo``, ``hi``, ``y`` (the label), and
``hist`` float16 ``(rows, N_HIST)``: the seat's history features
(:func:`guandan.agents.belief_net.history_features`) for the belief network.

Fit (:func:`fit_table`): counts per table cell (:data:`guandan.agents.belief.TABLE_SHAPE`) and
back-off cell; :func:`log_loss` scores a predictor on held-out rows against the uniform law.

Run: ``python -m guandan.train.belief gen OUT.npz --games N --seed S`` and
``python -m guandan.train.belief fit DATA.npz... --out TABLE.npz``.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from guandan.agents.belief import (
    TABLE_SHAPE,
    SeatFeatures,
    TablePrior,
    count_bucket,
    seat_features,
    uniform_predict,
)
from guandan.agents.belief_net import history_features
from guandan.agents.easy import EasyAgent
from guandan.agents.heuristic import HeuristicAgent
from guandan.core.exact_worlds import MAX_GROUP, N_GROUPS, group_of_faces
from guandan.core.match import Game
from guandan.core.rules import RuleSet
from guandan.core.views import seat_view
from guandan.core.worlds import WorldConstraints

__all__ = ["POPULATION", "fit_table", "generate", "log_loss", "rows_features"]

#: The policies of the data (name, factory from a seed).
POPULATION: tuple[tuple[str, Callable[[int], Any]], ...] = (
    ("heuristic", lambda s: HeuristicAgent(s)),
    ("easy0.1", lambda s: EasyAgent(s, 0.1)),
    ("easy0.3", lambda s: EasyAgent(s, 0.3)),
    ("easy0.5", lambda s: EasyAgent(s, 0.5)),
)
PRESETS = ("official", "aicomp")
_KEYS = ("u", "gs", "pl", "po", "lo", "hi", "y")


def generate(games: int, seed: int = 0, deals: int = 6, rate: float = 0.25,
             log: Callable[[str], None] | None = None) -> dict[str, np.ndarray]:
    """Self-play belief data (module docstring).

    Args:
        games: games played (each up to ``deals`` deals); game ``i`` uses seed ``seed * 100003 + i``.
        seed: data seed. deals: most deals per game. rate: share of decisions recorded (0..1].
    Returns:
        The arrays of the module docstring.
    Raises:
        ValueError: ``games`` < 1 or ``rate`` outside (0, 1].
    """
    if games < 1 or not 0 < rate <= 1:
        raise ValueError("games must be >= 1 and rate in (0, 1]")
    cols: dict[str, list[Any]] = {k: [] for k in ("n", "total", "deal", "preset", "level", "hist") + _KEYS}
    for i in range(games):
        gseed = seed * 100003 + i
        rng = random.Random(gseed)
        preset = i % 2
        game = Game(RuleSet.preset(PRESETS[preset]), seed=gseed)
        agents = [POPULATION[rng.randrange(len(POPULATION))][1](gseed * 4 + s) for s in range(4)]
        steps = 0
        while not game.over and len(game.settlements) < deals and steps < 20_000:
            seat = game.to_act()
            assert seat is not None
            view = seat_view(game, seat)
            act = agents[seat].act(view)
            if view.phase == "play" and rng.random() < rate:
                cons = WorldConstraints(view)
                gof = group_of_faces(view.level)
                hist = history_features(view)
                for f in seat_features(view, cons):
                    cols["hist"].append(hist[f.seat])
                    y = [0] * N_GROUPS
                    for face, c in enumerate(game.deal.hands[f.seat]):
                        y[gof[face]] += c
                    cols["n"].append(f.n)
                    cols["total"].append(f.total)
                    cols["deal"].append(i * 100 + len(game.settlements))
                    cols["preset"].append(preset)
                    cols["level"].append(view.level)
                    for k, v in (("u", f.u), ("gs", f.gs), ("pl", f.pl), ("po", f.po), ("lo", f.lo),
                                 ("hi", f.hi), ("y", y)):
                        cols[k].append(v)
            game.apply(act, seat)
            steps += 1
        if log is not None and (i + 1) % 10 == 0:
            log(f"{i + 1}/{games} games, {len(cols['n'])} rows")
    out = {k: np.asarray(cols[k], dtype=np.int16 if k in ("n", "total", "deal") else np.int8)
           for k in ("n", "total", "preset", "level") + _KEYS}
    out["deal"] = np.asarray(cols["deal"], dtype=np.int32)
    out["hist"] = np.asarray(cols["hist"], dtype=np.float16)
    return out


def rows_features(data: dict[str, np.ndarray], rows: Sequence[int] | np.ndarray) -> list[SeatFeatures]:
    """The :class:`SeatFeatures` of some data rows (for predicting with a prior)."""
    out = []
    for r in rows:
        out.append(SeatFeatures(-1, int(data["n"][r]), int(data["total"][r]), data["u"][r].tolist(),
                                tuple(data["gs"][r].tolist()), data["pl"][r].tolist(), data["po"][r].tolist(),
                                data["lo"][r].tolist(), data["hi"][r].tolist()))
    return out


def fit_table(data: dict[str, np.ndarray], rows: np.ndarray | None = None, alpha: float = 20.0,
              beta: float = 5.0, meta: dict[str, Any] | None = None) -> TablePrior:
    """Count the outcomes of ``rows`` (default all) into a :class:`TablePrior`."""
    idx = np.arange(len(data["n"])) if rows is None else np.asarray(rows)
    counts = np.zeros(TABLE_SHAPE + (MAX_GROUP + 1,))
    back = np.zeros(TABLE_SHAPE[:3] + (MAX_GROUP + 1,))
    nb = np.array([count_bucket(int(x)) for x in range(64)])[data["n"][idx].astype(np.int64)]
    for g in range(N_GROUPS):
        u = np.minimum(data["u"][idx, g], MAX_GROUP).astype(np.int64)
        gs = data["gs"][idx, g].astype(np.int64)
        pl = data["pl"][idx, g].astype(np.int64)
        po = data["po"][idx, g].astype(np.int64)
        y = np.minimum(data["y"][idx, g], MAX_GROUP).astype(np.int64)
        np.add.at(counts, (nb, u, gs, pl, po, y), 1.0)
        np.add.at(back, (nb, u, gs, y), 1.0)
    return TablePrior(counts, back, alpha, beta, meta)


def log_loss(predict: Callable[..., list[list[float]]], data: dict[str, np.ndarray],
             rows: Sequence[int] | np.ndarray, with_row: bool = False) -> float:
    """Mean negative log-likelihood (nats) per hidden seat and group of the true counts
    (``predict(features)``, or ``predict(features, row)`` with ``with_row``)."""
    total = 0.0
    n = 0
    for r, f in zip(rows, rows_features(data, rows)):
        q = predict(f, r) if with_row else predict(f)
        y = data["y"][r]
        for g in range(N_GROUPS):
            total -= math.log(max(q[g][int(y[g])], 1e-12))
            n += 1
    return total / max(n, 1)


def load(paths: Sequence[str]) -> dict[str, np.ndarray]:
    """Concatenate data files written by ``gen`` (deal ids offset per file)."""
    parts = []
    for i, p in enumerate(paths):
        with np.load(p) as z:
            d = {k: z[k] for k in z.files}
        d["deal"] = d["deal"] + i * 10_000_000
        parts.append(d)
    return {k: np.concatenate([d[k] for d in parts]) for k in parts[0]}


def split(data: dict[str, np.ndarray], held_share: float = 0.2) -> tuple[np.ndarray, np.ndarray]:
    """Train and held-out rows, split by deal (every deal whose id hashes below the share is held out)."""
    deals = data["deal"].astype(np.int64)
    held = ((deals * 2654435761) % 1000) < held_share * 1000
    return np.nonzero(~held)[0], np.nonzero(held)[0]


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m guandan.train.belief")
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("gen", help="self-play belief data")
    g.add_argument("out")
    g.add_argument("--games", type=int, default=40)
    g.add_argument("--seed", type=int, default=0)
    g.add_argument("--deals", type=int, default=6)
    g.add_argument("--rate", type=float, default=0.25)
    f = sub.add_parser("fit", help="fit the counted prior; report held-out log loss")
    f.add_argument("data", nargs="+")
    f.add_argument("--out", required=True)
    f.add_argument("--alpha", type=float, default=20.0)
    f.add_argument("--beta", type=float, default=5.0)
    f.add_argument("--held", type=int, default=4000, help="held-out rows scored (a sample)")
    a = ap.parse_args(argv)
    t0 = time.process_time()
    if a.cmd == "gen":
        data = generate(a.games, a.seed, a.deals, a.rate, log=lambda m: print(m, file=sys.stderr))
        np.savez_compressed(a.out, **data)
        print(json.dumps({"rows": int(len(data["n"])), "cpu_s": round(time.process_time() - t0, 1)}))
        return 0
    data = load(a.data)
    train, held = split(data)
    rng = np.random.default_rng(0)
    score = rng.choice(held, size=min(a.held, len(held)), replace=False)
    table = fit_table(data, train, a.alpha, a.beta)
    ll_table = log_loss(table.predict, data, score)
    ll_uniform = log_loss(uniform_predict, data, score)
    full = fit_table(data, None, a.alpha, a.beta, meta={
        "data": a.data, "rows": int(len(data["n"])), "held_out_rows_scored": int(len(score)),
        "log_loss_table": round(ll_table, 4), "log_loss_uniform": round(ll_uniform, 4),
        "alpha": a.alpha, "beta": a.beta})
    full.save(a.out)
    print(json.dumps({"rows": int(len(data["n"])), "train": int(len(train)), "held": int(len(held)),
                      "scored": int(len(score)), "log_loss_table": round(ll_table, 4),
                      "log_loss_uniform": round(ll_uniform, 4), "cpu_s": round(time.process_time() - t0, 1)}))
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
