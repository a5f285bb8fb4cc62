"""Train the belief network (:mod:`guandan.agents.belief_net`) on self-play belief data (PyTorch, CPU).

Data: files written by ``python -m guandan.train.belief gen`` (with the ``hist`` array). Rows
are split by deal into training and held-out rows (:func:`guandan.train.belief.split`); the
loss is the cross-entropy of each hidden seat's true count of each rank group under the
masked softmax (counts outside the hard bounds are impossible, :func:`~guandan.agents.belief_net.masks`).
Seeded (``torch.manual_seed``, a NumPy generator for the batches): the same data and
arguments give the same weights. The result is written in the NumPy format of
:class:`~guandan.agents.belief_net.NetPrior` with the held-out log loss against the uniform law
and the counted table in its ``meta``.

Run: ``python -m guandan.train.belief_net DATA.npz... --out NET.npz [--epochs 8 --seed 0]``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from guandan.agents.belief_net import N_IN, NetPrior, encode, masks
from guandan.core.exact_worlds import MAX_GROUP, N_GROUPS
from guandan.train.belief import fit_table, load, log_loss, rows_features, split

__all__ = ["arrays", "train"]


def arrays(data: dict[str, np.ndarray], rows: Sequence[int] | np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(x, mask, y)`` of some rows: inputs ``(R, N_IN)``, allowed counts ``(R, 16, 9)`` and
    labels ``(R, 16)``, groups in level order (:mod:`guandan.agents.belief_net`)."""
    feats = rows_features(data, rows)
    x = np.zeros((len(feats), N_IN), dtype=np.float32)
    m = np.zeros((len(feats), N_GROUPS, MAX_GROUP + 1), dtype=bool)
    y = np.zeros((len(feats), N_GROUPS), dtype=np.int64)
    hist = data["hist"]
    for i, (r, f) in enumerate(zip(rows, feats)):
        x[i] = encode(f, hist[r].astype(np.float32).tolist())
        mk = masks(f)
        for g in range(N_GROUPS):
            m[i, f.gs[g]] = mk[g]
            y[i, f.gs[g]] = int(data["y"][r, g])
    return x, m, y


def train(data: dict[str, np.ndarray], rows: np.ndarray, epochs: int = 8, seed: int = 0, hidden: int = 128,
          lr: float = 2e-3, batch: int = 512, log: Any = None) -> NetPrior:
    """Fit a :class:`NetPrior` on ``rows`` of ``data`` (module docstring)."""
    import torch
    from torch import nn

    torch.manual_seed(seed)
    x, m, y = arrays(data, rows)
    net = nn.Sequential(nn.Linear(N_IN, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                        nn.Linear(hidden, N_GROUPS * (MAX_GROUP + 1)))
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    X, M, Y = torch.from_numpy(x), torch.from_numpy(m), torch.from_numpy(y)
    gen = np.random.default_rng(seed)
    for ep in range(epochs):
        order = gen.permutation(len(x))
        total = 0.0
        for i in range(0, len(order), batch):
            idx = torch.from_numpy(order[i : i + batch])
            logits = net(X[idx]).view(-1, N_GROUPS, MAX_GROUP + 1)
            logits = logits.masked_fill(~M[idx], -1e9)
            loss = nn.functional.cross_entropy(logits.reshape(-1, MAX_GROUP + 1), Y[idx].reshape(-1))
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += float(loss.detach()) * len(idx)
        if log is not None:
            log(f"epoch {ep + 1}: train loss {total / len(x):.4f}")
    layers = [(lin.weight.detach().numpy().T.copy(), lin.bias.detach().numpy().copy())
              for lin in net if isinstance(lin, nn.Linear)]
    return NetPrior(layers)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m guandan.train.belief_net")
    ap.add_argument("data", nargs="+")
    ap.add_argument("--out", required=True)
    ap.add_argument("--epochs", type=int, default=8)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--hidden", type=int, default=128)
    ap.add_argument("--held", type=int, default=4000, help="held-out rows scored (a sample)")
    a = ap.parse_args(argv)
    t0 = time.process_time()
    data = load(a.data)
    tr, held = split(data)
    score = np.random.default_rng(0).choice(held, size=min(a.held, len(held)), replace=False)
    net = train(data, tr, a.epochs, a.seed, a.hidden, log=lambda s: print(s, file=sys.stderr, flush=True))
    hist = data["hist"]
    ll_net = log_loss(lambda f, r: net.predict(f, hist[r].astype(np.float32).tolist()), data, score, with_row=True)
    from guandan.agents.belief import uniform_predict

    ll_uni = log_loss(uniform_predict, data, score)
    ll_tab = log_loss(fit_table(data, tr).predict, data, score)
    net.meta = {"data": list(a.data), "rows": int(len(data["n"])), "train_rows": int(len(tr)),
                "held_out_rows_scored": int(len(score)), "epochs": a.epochs, "seed": a.seed, "hidden": a.hidden,
                "log_loss_net": round(ll_net, 4), "log_loss_table": round(ll_tab, 4),
                "log_loss_uniform": round(ll_uni, 4)}
    net.save(a.out)
    print(json.dumps({**net.meta, "cpu_s": round(time.process_time() - t0, 1)}))
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
