"""PyTorch training of the value and policy networks on the CPU; export to NumPy ``.npz``.

Needs the ``[train]`` extra (``pip install torch==2.13.0`` takes the CPU build on Python 3.11).

Both trainers are seeded (``torch.manual_seed`` and a NumPy generator per epoch), use one
intra-op thread by default (the machines are shared), keep a checkpoint after every epoch
(``<out>/<kind>.ckpt``: model, optimiser, epoch, metrics history) and resume from it when
run again with ``resume=True``, and export the network of the epoch with the lowest validation
loss (early stopping; the last epoch when nothing is held out) to ``<out>/<kind>.npz`` in the
format :class:`guandan.agents.nets.MLP` reads.

Losses:

* value: binary cross-entropy of the win logit against the deal's outcome for the
  point-of-view team (头游, R35) plus ``0.5 *`` the squared error of the level score;
* policy: cross-entropy of the softmax over each decision's candidate actions against the
  teacher's choice (imitation).

Validation: the last shard(s), about ``val_fraction`` of them, are held out (whole games, so
no deal is split across training and validation).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from guandan.agents.nets import ACTION_DIM, MLP, STATE_DIM, VIEW_DIM

#: ``progress(epoch, epochs, batch, batches)`` after each training batch.
TrainProgress = Callable[[int, int, int, int], None]

DEFAULT_VALUE_HIDDEN = (256, 128)
DEFAULT_POLICY_HIDDEN = (128, 64)


def require_torch() -> Any:
    """Import and return PyTorch.

    Raises:
        ImportError: PyTorch is missing; the message says how to install the CPU build.
    """
    try:
        import torch
    except ImportError as e:
        raise ImportError(
            "training needs PyTorch: pip install -e '.[train]' in the pyguandan checkout (on Python 3.11, "
            "pip install torch==2.13.0 takes the CPU build)"
        ) from e
    return torch


def build_model(n_in: int, hidden: Sequence[int], n_out: int) -> Any:
    """A ``torch.nn.Sequential`` of Linear and ReLU layers: ``n_in -> hidden... -> n_out``."""
    torch = require_torch()
    layers: list[Any] = []
    prev = n_in
    for h in hidden:
        layers += [torch.nn.Linear(prev, h), torch.nn.ReLU()]
        prev = h
    layers.append(torch.nn.Linear(prev, n_out))
    return torch.nn.Sequential(*layers)


def linear_layers(model: Any) -> list[Any]:
    """The ``torch.nn.Linear`` layers of a model built by :func:`build_model`, in order."""
    torch = require_torch()
    return [m for m in model if isinstance(m, torch.nn.Linear)]


def to_mlp(model: Any, meta: dict[str, Any]) -> MLP:
    """Copy a trained model into a NumPy :class:`~guandan.agents.nets.MLP` (weights as ``[in, out]``)."""
    ws, bs = [], []
    for lin in linear_layers(model):
        ws.append(lin.weight.detach().cpu().numpy().T.copy())
        bs.append(lin.bias.detach().cpu().numpy().copy())
    return MLP(ws, bs, dict(meta))


def load_mlp_into(model: Any, mlp: MLP) -> None:
    """Copy NumPy weights into a model of the same shape (to continue training from a ``.npz``).

    Raises:
        ValueError: the layer shapes differ.
    """
    torch = require_torch()
    lins = linear_layers(model)
    if len(lins) != len(mlp.weights) or any(
        tuple(lin.weight.shape) != tuple(w.T.shape) for lin, w in zip(lins, mlp.weights)
    ):
        raise ValueError("the network file's layer shapes differ from the model being trained")
    with torch.no_grad():
        for lin, w, b in zip(lins, mlp.weights, mlp.biases):
            lin.weight.copy_(torch.from_numpy(w.T.copy()))
            lin.bias.copy_(torch.from_numpy(b.copy()))


def hidden_of(mlp: MLP) -> tuple[int, ...]:
    """Hidden layer sizes of a network file."""
    return tuple(int(w.shape[1]) for w in mlp.weights[:-1])


@dataclass
class TrainConfig:
    """Training settings.

    Attributes:
        epochs: passes over the training data (>= 1); batch: samples per batch (decisions for
        the policy); lr: Adam learning rate; weight_decay: L2 factor; seed: master seed;
        hidden: hidden layer sizes; val_fraction: share of shards held out (0 keeps none);
        threads: torch intra-op threads; init: a ``.npz`` to start from (expert iteration);
        augment: show each training batch under a random renaming of the non-heart suits
        (:func:`suit_permutations`).
    """

    epochs: int = 4
    batch: int = 256
    lr: float = 1e-3
    weight_decay: float = 1e-5
    seed: int = 0
    hidden: tuple[int, ...] = ()
    val_fraction: float = 0.1
    threads: int = 1
    init: Path | None = None
    augment: bool = True

    def check(self) -> None:
        """Raises ``ValueError`` for settings out of range."""
        if self.epochs < 1 or self.batch < 1 or self.lr <= 0 or not 0 <= self.val_fraction < 1:
            raise ValueError("epochs and batch must be >= 1, lr > 0 and val_fraction in [0, 1)")


@dataclass
class TrainResult:
    """Outcome of a training run: ``kind``, the exported ``npz`` path, per-epoch ``history``
    (dicts of ``epoch``, ``train_loss``, ``val_loss`` and accuracy figures), training and
    validation sample counts, ``seconds`` of training (this run) and ``n_params``."""

    kind: str
    npz: Path
    history: list[dict[str, float]] = field(default_factory=list)
    n_train: int = 0
    n_val: int = 0
    seconds: float = 0.0
    n_params: int = 0

    #: the epoch whose weights were exported (lowest ``val_loss``; the last without validation)
    best_epoch: int | None = None

    @property
    def final(self) -> dict[str, float]:
        """Metrics of the exported epoch."""
        if self.best_epoch:
            return self.history[self.best_epoch - 1]
        return self.history[-1] if self.history else {}


def suit_permutations(dim: int, face_blocks: Sequence[int]) -> Any:
    """Index permutations of a feature vector for the 6 permutations of spades, clubs and
    diamonds (hearts stay: the wild is the heart of the level rank, R8), applied to the 52
    ranked faces of every face-count block starting at the offsets ``face_blocks``.

    A deal with those suits renamed is the same deal for the rules (no suit ranks, R9), so each
    training sample may be shown under any of them (data augmentation). Returns
    ``int64[6, dim]`` (row 0 is the identity).
    """
    import itertools

    import numpy as np

    out = []
    for perm in itertools.permutations((0, 2, 3)):
        suit_map = {1: 1, 0: perm[0], 2: perm[1], 3: perm[2]}
        idx = np.arange(dim)
        for base in face_blocks:
            for f in range(52):
                idx[base + (f & ~3) + suit_map[f & 3]] = base + f
        out.append(idx)
    return np.stack(out)


def _split(n_shards: int, shard_of: Any, val_fraction: float) -> tuple[Any, Any]:
    np = __import__("numpy")
    n_val = int(round(n_shards * val_fraction))
    if val_fraction > 0 and n_val == 0 and n_shards >= 2:
        n_val = 1
    val_mask = shard_of >= n_shards - n_val
    return np.nonzero(~val_mask)[0], np.nonzero(val_mask)[0]


def _checkpoint_path(out_dir: Path, kind: str) -> Path:
    return out_dir / f"{kind}.ckpt"


def _setup(kind: str, cfg: TrainConfig, n_in: int, n_out: int, default_hidden: tuple[int, ...],
           out_dir: Path, resume: bool) -> tuple[Any, Any, int, list[dict[str, float]]]:
    torch = require_torch()
    cfg.check()
    torch.manual_seed(cfg.seed)
    torch.set_num_threads(max(1, cfg.threads))
    hidden = cfg.hidden or default_hidden
    init_mlp = None
    if cfg.init is not None and not cfg.hidden:
        init_mlp = MLP.load(cfg.init, kind=kind)
        hidden = hidden_of(init_mlp)
    model = build_model(n_in, hidden, n_out)
    if cfg.init is not None:
        load_mlp_into(model, init_mlp or MLP.load(cfg.init, kind=kind))
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    start = 0
    history: list[dict[str, float]] = []
    ck = _checkpoint_path(out_dir, kind)
    if resume and ck.exists():
        state = _read_checkpoint(torch, ck)
        if tuple(state["hidden"]) != tuple(hidden):
            raise ValueError(f"{ck}: checkpoint hidden sizes {state['hidden']} differ from {list(hidden)}")
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        start = int(state["epoch"])
        history = list(state["history"])
        model.best_state = state.get("best")
        model.best_epoch = state.get("best_epoch")
    model.hidden = tuple(hidden)  # type: ignore[attr-defined]
    return model, opt, start, history


def _read_checkpoint(torch: Any, ck: Path) -> dict[str, Any]:
    """The checkpoint at ``ck`` as a dict with the keys resumption needs.

    Raises:
        ValueError: the file is truncated, not a checkpoint, or lacks a key (one line, naming the
            file and the two ways out: delete it or pass ``--no-resume``).
    """
    try:
        state = torch.load(ck, weights_only=False)
    except Exception as e:  # noqa: BLE001 - UnpicklingError, EOFError, RuntimeError (zip), ...
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        raise ValueError(f"{ck}: not a readable checkpoint ({first}); delete it or pass --no-resume") from None
    missing = [k for k in ("hidden", "model", "opt", "epoch", "history") if not isinstance(state, dict) or k not in state]
    if missing:
        raise ValueError(f"{ck}: not a checkpoint of this trainer (missing {', '.join(missing)}); "
                         "delete it or pass --no-resume")
    return state


def _save_checkpoint(out_dir: Path, kind: str, model: Any, opt: Any, epoch: int, history: list[dict[str, float]]) -> None:
    """Save the checkpoint; the weights of the epoch with the lowest ``val_loss`` so far are kept
    beside the current ones (``best``) and are what :func:`_export` writes (early stopping)."""
    import copy

    torch = require_torch()
    ck = _checkpoint_path(out_dir, kind)
    best = getattr(model, "best_state", None)
    losses = [h.get("val_loss") for h in history]
    if losses and losses[-1] is not None and all(x is None or losses[-1] <= x for x in losses):
        best = copy.deepcopy(model.state_dict())
        model.best_epoch = epoch
    model.best_state = best
    tmp = ck.with_suffix(".tmp")
    torch.save({"model": model.state_dict(), "opt": opt.state_dict(), "epoch": epoch, "history": history,
                "hidden": list(model.hidden), "best": best, "best_epoch": getattr(model, "best_epoch", None)}, tmp)
    tmp.replace(ck)


def train_value(
    data: dict[str, Any],
    out_dir: Path,
    cfg: TrainConfig,
    meta: dict[str, Any] | None = None,
    resume: bool = True,
    progress: TrainProgress | None = None,
) -> TrainResult:
    """Train the value network on shard data (:func:`guandan.train.selfplay.load_shards`).

    Args:
        data: arrays ``v_state``, ``v_win``, ``v_score``, ``v_shard``.
        out_dir: where the checkpoint and ``value.npz`` go (created).
        cfg: settings; meta: extra metadata stored in the ``.npz`` (command, seed, data size).
        resume: continue from ``out_dir/value.ckpt`` when present (epochs already done are skipped).
        progress: called after each batch.
    Returns:
        A :class:`TrainResult`; ``history`` entries hold ``train_loss``, ``val_loss``
        (BCE + 0.5 MSE), ``val_acc`` (win predicted on the right side of 1/2) and ``val_mse``.
    Raises:
        ValueError: empty data or bad settings. ImportError: PyTorch missing.
    """
    import numpy as np

    torch = require_torch()
    out_dir.mkdir(parents=True, exist_ok=True)
    x_all = data["v_state"]
    if len(x_all) == 0:
        raise ValueError("no value samples in the data")
    n_shards = int(data["v_shard"].max()) + 1
    tr, va = _split(n_shards, data["v_shard"], cfg.val_fraction)
    if len(tr) == 0:
        raise ValueError("every value sample is in validation: add shards or lower val_fraction")
    model, opt, start, history = _setup("value", cfg, STATE_DIM, 2, DEFAULT_VALUE_HIDDEN, out_dir, resume)
    x_t = torch.from_numpy(x_all.astype(np.float32))
    win_t = torch.from_numpy(data["v_win"].astype(np.float32))
    sc_t = torch.from_numpy(data["v_score"].astype(np.float32))
    bce = torch.nn.BCEWithLogitsLoss()

    perms = torch.from_numpy(suit_permutations(STATE_DIM, [72 * r for r in range(4)]))

    def losses(idx: Any, augment: bool = False) -> tuple[Any, Any, Any]:
        x = x_t[idx]
        if augment:
            x = x.gather(1, perms[torch.randint(0, 6, (len(idx),))])
        out = model(x)
        lw = bce(out[:, 0], win_t[idx])
        ls = ((out[:, 1] - sc_t[idx]) ** 2).mean()
        return lw + 0.5 * ls, out, ls

    t0 = time.perf_counter()
    nb = (len(tr) + cfg.batch - 1) // cfg.batch
    for epoch in range(start, cfg.epochs):
        gen = np.random.default_rng(cfg.seed * 1_000 + epoch)
        perm = tr[gen.permutation(len(tr))]
        model.train()
        tot = 0.0
        for b in range(nb):
            idx = torch.from_numpy(perm[b * cfg.batch : (b + 1) * cfg.batch])
            loss, _, _ = losses(idx, cfg.augment)
            opt.zero_grad()
            loss.backward()
            opt.step()
            tot += float(loss.detach()) * len(idx)
            if progress is not None:
                progress(epoch, cfg.epochs, b + 1, nb)
        rec: dict[str, float] = {"epoch": epoch + 1, "train_loss": tot / len(tr)}
        if len(va):
            model.eval()
            with torch.no_grad():
                vidx = torch.from_numpy(va)
                vl, out, ls = losses(vidx)
                acc = ((out[:, 0] > 0).float() == win_t[vidx]).float().mean()
            rec.update(val_loss=float(vl), val_acc=float(acc), val_mse=float(ls))
        history.append(rec)
        _save_checkpoint(out_dir, "value", model, opt, epoch + 1, history)
    secs = time.perf_counter() - t0
    return _export("value", model, out_dir, history, len(tr), len(va), secs, meta)


def _export(kind: str, model: Any, out_dir: Path, history: list[dict[str, float]], n_tr: int, n_va: int,
            secs: float, meta: dict[str, Any] | None) -> TrainResult:
    """Write ``<kind>.npz`` with the best-validation epoch's weights (the last epoch's when
    there is no validation data) and ``<kind>.metrics.json``."""
    best_epoch = getattr(model, "best_epoch", None)
    if getattr(model, "best_state", None) is not None:
        model.load_state_dict(model.best_state)
    chosen = history[best_epoch - 1] if best_epoch else (history[-1] if history else {})
    m = {"kind": kind, "version": 1, "hidden": list(model.hidden), "train_samples": n_tr,
         "val_samples": n_va, "final": chosen, "epochs_run": len(history)}
    m.update(meta or {})
    mlp = to_mlp(model, m)
    path = out_dir / f"{kind}.npz"
    mlp.save(path)
    (out_dir / f"{kind}.metrics.json").write_text(json.dumps({"history": history, "meta": m}, indent=1))
    return TrainResult(kind, path, history, n_tr, n_va, secs, mlp.n_params, best_epoch)


def _policy_batch(torch: Any, data: dict[str, Any], dec: Any, view_t: Any, act_t: Any,
                  perms: Any = None) -> tuple[Any, Any, Any, int]:
    """Rows of a batch of decisions: (input rows [M, VIEW+ACTION], group ids [M], label rows [B], B)."""
    import numpy as np

    off = data["p_offsets"]
    starts = off[dec]
    sizes = off[dec + 1] - starts
    group = np.repeat(np.arange(len(dec)), sizes)
    first = np.zeros(len(dec), np.int64)
    first[1:] = np.cumsum(sizes)[:-1]
    rows = np.repeat(starts - first, sizes) + np.arange(int(sizes.sum()))
    label_rows = first + data["p_label"][dec]
    g = torch.from_numpy(group)
    views = view_t[torch.from_numpy(dec)]
    if perms is not None:
        views = views.gather(1, perms[torch.randint(0, len(perms), (len(dec),))])
    x = torch.cat([views[g], act_t[torch.from_numpy(rows)]], dim=1)
    return x, g, torch.from_numpy(label_rows), len(dec)


def _segment_ce(torch: Any, z: Any, g: Any, label_rows: Any, b: int) -> tuple[Any, Any]:
    """Mean cross-entropy of per-group softmaxes and the top-1 agreement."""
    zmax = torch.full((b,), -1e30).scatter_reduce(0, g, z.detach(), reduce="amax", include_self=True)
    e = torch.exp(z - zmax[g])
    s = torch.zeros(b).index_add(0, g, e)
    lse = torch.log(s) + zmax
    loss = (lse - z[label_rows]).mean()
    agree = (z[label_rows] >= zmax - 1e-12).float().mean()
    return loss, agree


def train_policy(
    data: dict[str, Any],
    out_dir: Path,
    cfg: TrainConfig,
    meta: dict[str, Any] | None = None,
    resume: bool = True,
    progress: TrainProgress | None = None,
) -> TrainResult:
    """Train the policy network by imitation on shard data.

    Args:
        data: arrays ``p_view``, ``p_actions``, ``p_offsets``, ``p_label``, ``p_shard``.
        out_dir, cfg, meta, resume, progress: as :func:`train_value`.
    Returns:
        A :class:`TrainResult`; ``history`` entries hold ``train_loss``, ``val_loss``
        (cross-entropy) and ``val_agree`` (share of held-out decisions where the network's
        top action is the teacher's).
    Raises:
        ValueError: empty data or bad settings. ImportError: PyTorch missing.
    """
    import numpy as np

    torch = require_torch()
    out_dir.mkdir(parents=True, exist_ok=True)
    if len(data["p_label"]) == 0:
        raise ValueError("no policy samples in the data")
    n_shards = int(data["p_shard"].max()) + 1
    tr, va = _split(n_shards, data["p_shard"], cfg.val_fraction)
    if len(tr) == 0:
        raise ValueError("every policy sample is in validation: add shards or lower val_fraction")
    model, opt, start, history = _setup("policy", cfg, VIEW_DIM + ACTION_DIM, 1, DEFAULT_POLICY_HIDDEN, out_dir, resume)
    view_t = torch.from_numpy(data["p_view"].astype(np.float32))
    perms = torch.from_numpy(suit_permutations(VIEW_DIM, [0]))
    act_t = torch.from_numpy(data["p_actions"].astype(np.float32))
    t0 = time.perf_counter()
    nb = (len(tr) + cfg.batch - 1) // cfg.batch
    for epoch in range(start, cfg.epochs):
        gen = np.random.default_rng(cfg.seed * 1_000 + epoch)
        perm = tr[gen.permutation(len(tr))]
        model.train()
        tot = 0.0
        for b in range(nb):
            dec = perm[b * cfg.batch : (b + 1) * cfg.batch]
            x, g, lab, bsz = _policy_batch(torch, data, dec, view_t, act_t, perms if cfg.augment else None)
            loss, _ = _segment_ce(torch, model(x)[:, 0], g, lab, bsz)
            opt.zero_grad()
            loss.backward()
            opt.step()
            tot += float(loss.detach()) * bsz
            if progress is not None:
                progress(epoch, cfg.epochs, b + 1, nb)
        rec: dict[str, float] = {"epoch": epoch + 1, "train_loss": tot / len(tr)}
        if len(va):
            model.eval()
            vl = va_ag = 0.0
            with torch.no_grad():
                for b in range(0, len(va), 4096):
                    dec = va[b : b + 4096]
                    x, g, lab, bsz = _policy_batch(torch, data, dec, view_t, act_t)
                    loss, agree = _segment_ce(torch, model(x)[:, 0], g, lab, bsz)
                    vl += float(loss) * bsz
                    va_ag += float(agree) * bsz
            rec.update(val_loss=vl / len(va), val_agree=va_ag / len(va))
        history.append(rec)
        _save_checkpoint(out_dir, "policy", model, opt, epoch + 1, history)
    secs = time.perf_counter() - t0
    return _export("policy", model, out_dir, history, len(tr), len(va), secs, meta)
