"""``VecEnv``: many tables stepped at once with array inputs and outputs.

Each row ``b`` is one table; at every step the row holds the decision of the seat to act there
(``seat[b]``), so one policy can drive all four seats (self-play) or a trainer can route rows
by seat. Finished episodes reset automatically (the next deal of the same game with ``deal`` /
``levels`` rewards, see :mod:`guandan.rl.table`).

Arrays (``B = n_tables``, ``D`` = observation size, ``A`` = action-space size):

* ``obs``: ``float32 [B, D]`` observation of the seat to act;
* ``mask``: ``bool [B, A]`` its legal actions;
* ``seat``: ``int64 [B]`` the seat to act (0..3);
* ``rewards``: ``float32 [B, 4]`` per seat, non-zero only at the step that ended an episode;
* ``done``: ``bool [B]`` the step ended an episode (the row already shows the next one);
* ``candidates`` mode only, from :meth:`VecEnv.features`: ``float32 [B, K, F]`` the features
  of each row's candidate actions (``K = max_candidates``, zero rows where the mask is false).

Backends: ``"sync"`` (this process) or ``"process"`` (``n_workers`` worker processes via
:mod:`multiprocessing`, each stepping ``B / n_workers`` tables and writing its rows of the
arrays in place in one shared-memory block, features included; one message per worker per step
is one byte (the actions are written into shared memory too), nothing is pickled per step). Returned arrays are
copies, safe to keep. Each worker process, once its tables are set up, applies
:func:`guandan.gctune.tune_gc` (frozen set-up, rarer young collections: stepping makes no
reference cycles); the ``sync`` backend leaves the calling process's collector alone.
:meth:`VecEnv.worker_cpu_seconds` reports the CPU time each worker used (for benchmarks).
"""

from __future__ import annotations

import multiprocessing as mp
import struct
import time
from typing import Any

import numpy as np

from guandan.gctune import tune_gc
from .table import Table


class _Block:
    """Tables stepped in one process; writes into ``bufs`` (views of shared memory for the
    ``process`` backend) or into its own arrays.

    One :meth:`step` applies the actions of every table of the block and refills its rows:
    observations are written in place row by row (the encoders' cached path), the masks of the
    whole block are cleared once and set with one flat index assignment, and in ``candidates``
    mode only the feature rows used last time are cleared before the new ones are written.
    """

    def __init__(self, n: int, seed: int, kwargs: dict[str, Any], bufs: dict[str, np.ndarray] | None = None) -> None:
        self.tables = [Table(seed=seed + i, **kwargs) for i in range(n)]
        t0 = self.tables[0]
        self.n_actions = t0.n_actions
        self.obs_size = t0.obs_size
        self.cand = t0.action_mode == "candidates"
        self.feat_shape = (t0.max_candidates, t0.encoder.action_size) if self.cand else (0, 0)
        n = len(self.tables)
        if bufs is None:
            bufs = _alloc(n, self.obs_size, self.n_actions, self.feat_shape)
        self.obs, self.mask, self.seat = bufs["obs"], bufs["mask"], bufs["seat"]
        self.rewards, self.done = bufs["rewards"], bufs["done"]
        self.feats = bufs.get("feats")
        self._used = [0] * n  # candidate rows written per table

    def _fill(self) -> None:
        tables, obs, seat = self.tables, self.obs, self.seat
        A = self.n_actions
        flat: list[int] = []
        abstract_mode = tables[0].action_mode == "abstract"
        for i, t in enumerate(tables):
            s = t.to_act
            assert s is not None
            seat[i] = s
            t.observe(s, obs[i])
            base = i * A
            if abstract_mode:
                flat.extend([base + k for k in t.legal_ids()])
            else:
                n = len(t.candidates() if self.cand else t.legal())
                if n > A:
                    raise RuntimeError(f"{n} legal actions exceed the cards action space ({A})")
                flat.extend(range(base, base + n))
            if self.cand:
                self._write_features(i, t)
        m = self.mask.reshape(-1)
        m[:] = False
        m[flat] = True

    def _write_features(self, i: int, t: Table) -> None:
        feats = self.feats
        assert feats is not None
        cands = t.candidates()
        row = feats[i]
        row[: max(self._used[i], len(cands))] = 0.0
        level = t.game.deal.level
        enc = t.encoder
        for k, a in enumerate(cands):
            enc.action_features(a, level, row[k])
        self._used[i] = len(cands)

    def reset(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if self.feats is not None:
            self.feats[:] = 0.0
            self._used = [0] * len(self.tables)
        self._fill()
        return self.obs, self.mask, self.seat

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, ...]:
        rewards, done = self.rewards, self.done
        for i, t in enumerate(self.tables):
            rewards[i] = t.apply(int(actions[i]))
            done[i] = t.done
            if t.done:
                t.reset()
        self._fill()
        return self.obs, self.mask, self.seat, rewards, done


_FIELDS = ("obs", "mask", "seat", "rewards", "done", "feats")


def _layout(n: int, obs_size: int, n_actions: int, feat_shape: tuple[int, int] = (0, 0)) -> list[tuple[str, tuple[int, ...], Any]]:
    out = [("obs", (n, obs_size), np.float32), ("mask", (n, n_actions), np.bool_), ("seat", (n,), np.int64),
           ("rewards", (n, 4), np.float32), ("done", (n,), np.bool_), ("actions", (n,), np.int64)]
    if feat_shape[0]:
        out.append(("feats", (n, *feat_shape), np.float32))
    return out


def _alloc(n: int, obs_size: int, n_actions: int, feat_shape: tuple[int, int] = (0, 0)) -> dict[str, np.ndarray]:
    return {name: np.zeros(shape, dtype) for name, shape, dtype in _layout(n, obs_size, n_actions, feat_shape)}


def _views(buf: Any, n: int, obs_size: int, n_actions: int, feat_shape: tuple[int, int] = (0, 0), lo: int = 0,
           hi: int | None = None) -> dict[str, np.ndarray]:
    """Arrays laid out one after another in the shared buffer ``buf``; rows ``lo:hi`` of each."""
    out = {}
    off = 0
    for name, shape, dtype in _layout(n, obs_size, n_actions, feat_shape):
        size = int(np.prod(shape)) * np.dtype(dtype).itemsize
        arr = np.ndarray(shape, dtype=dtype, buffer=buf, offset=off)
        out[name] = arr[lo:hi]
        off += (size + 63) // 64 * 64
    return out


def _nbytes(n: int, obs_size: int, n_actions: int, feat_shape: tuple[int, int] = (0, 0)) -> int:
    return sum((int(np.prod(s)) * np.dtype(d).itemsize + 63) // 64 * 64
               for _, s, d in _layout(n, obs_size, n_actions, feat_shape))


def _worker(conn: Any, shm_name: str, dims: tuple[int, int, int, tuple[int, int]], lo: int, hi: int, seed: int,
            kwargs: dict[str, Any]) -> None:
    from multiprocessing import shared_memory

    shm = shared_memory.SharedMemory(name=shm_name)
    try:
        block = _Block(hi - lo, seed, kwargs, _views(shm.buf, *dims, lo=lo, hi=hi))
        actions = _views(shm.buf, *dims, lo=lo, hi=hi)["actions"]
        # our own process: freeze the set-up, rarer young collections (guandan.gctune); no
        # collection first: a forked worker must never finalize what it inherited from its parent
        # (a crash seen in the full test suite, whose process held Ray/gRPC, torch and browser state)
        tune_gc(collect=False)
        while True:
            cmd = conn.recv_bytes()  # one byte per command; the actions are in shared memory
            if cmd == b"s":
                block.step(actions)
                conn.send_bytes(b"k")
            elif cmd == b"r":
                block.reset()
                conn.send_bytes(b"k")
            elif cmd == b"t":  # CPU seconds this worker has used
                conn.send_bytes(struct.pack("<d", time.process_time()))
            else:  # b"c": close
                break
    except (EOFError, KeyboardInterrupt):
        pass
    finally:
        block = None  # drop the views before closing the mapping
        conn.close()
        shm.close()


class VecEnv:
    """``n_tables`` Guandan tables with array I/O; see the module docstring.

    Args:
        n_tables: tables (rows), at least 1.
        backend: ``"sync"`` or ``"process"``.
        n_workers: worker processes for the ``process`` backend (at most ``n_tables``).
        seed: table ``b`` is seeded ``seed + b``.
        **table_kwargs: ``preset``, ``action_mode``, ``obs``, ``reward``, ``max_candidates``
            (as :class:`~guandan.rl.table.Table`); in ``candidates`` mode :meth:`features`
            gives the padded per-action features ``[B, K, F]`` next to the mask ``[B, K]``.
    Raises:
        ValueError: bad sizes or backend.
    """

    def __init__(
        self, n_tables: int, backend: str = "sync", n_workers: int = 2, seed: int = 0, **table_kwargs: Any
    ) -> None:
        if isinstance(n_tables, bool) or not isinstance(n_tables, int) or n_tables < 1:
            raise ValueError(f"n_tables must be a positive int, not {n_tables!r}")
        if backend not in ("sync", "process"):
            raise ValueError(f"backend must be 'sync' or 'process', not {backend!r}")
        self.n_tables = n_tables
        self.backend = backend
        self._rows = np.arange(n_tables)
        self._closed = False
        if backend == "sync":
            self._block = _Block(n_tables, seed, table_kwargs)
            self.n_actions, self.obs_size = self._block.n_actions, self._block.obs_size
            self.feat_shape = self._block.feat_shape
            self._conns: list[Any] = []
            return
        if isinstance(n_workers, bool) or not isinstance(n_workers, int) or n_workers < 1:
            raise ValueError(f"n_workers must be a positive int, not {n_workers!r}")
        from multiprocessing import shared_memory

        n_workers = min(n_workers, n_tables)
        sizes = [n_tables // n_workers + (1 if i < n_tables % n_workers else 0) for i in range(n_workers)]
        self._bounds = np.cumsum([0] + sizes)
        probe = Table(**table_kwargs)
        self.n_actions, self.obs_size = probe.n_actions, probe.obs_size
        self.feat_shape = (probe.max_candidates, probe.encoder.action_size) if probe.action_mode == "candidates" else (0, 0)
        dims = (n_tables, self.obs_size, self.n_actions, self.feat_shape)
        # observations, masks, seats, rewards and done flags live in one shared-memory block that
        # the workers write in place; only the actions and a "done" token cross the pipes
        self._shm = shared_memory.SharedMemory(create=True, size=_nbytes(*dims))
        self._bufs = _views(self._shm.buf, *dims)
        ctx = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")
        self._conns = []
        self._procs = []
        for i in range(n_workers):
            lo, hi = int(self._bounds[i]), int(self._bounds[i + 1])
            parent, child = ctx.Pipe()
            p = ctx.Process(target=_worker, args=(child, self._shm.name, dims, lo, hi, seed + lo, table_kwargs),
                            daemon=True)
            p.start()
            child.close()
            self._conns.append(parent)
            self._procs.append(p)

    def reset(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Observe every table: ``(obs [B, D], mask [B, A], seat [B])``."""
        self._observed = True
        if self.backend == "sync":
            o, m, s = self._block.reset()
            return o.copy(), m.copy(), s.copy()
        for c in self._conns:
            c.send_bytes(b"r")
        for c in self._conns:
            c.recv_bytes()
        b = self._bufs
        return b["obs"].copy(), b["mask"].copy(), b["seat"].copy()

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Apply one action per table (``int [B]``, ids of the action mode).

        Returns:
            ``(obs [B, D], mask [B, A], seat [B], rewards [B, 4], done [B])``.
        Raises:
            ValueError: wrong number of actions, non-integer ids, step before reset(), or an id
                out of range or masked in any row (then no table is stepped).
        """
        actions = np.asarray(actions)
        if actions.shape != (self.n_tables,):
            raise ValueError(f"expected {self.n_tables} actions, got shape {actions.shape}")
        self._check_actions(actions)
        if self.backend == "sync":
            o, m, s, r, d = self._block.step(actions)
            return o.copy(), m.copy(), s.copy(), r.copy(), d.copy()
        self._bufs["actions"][:] = actions
        for c in self._conns:
            c.send_bytes(b"s")
        for c in self._conns:
            c.recv_bytes()
        b = self._bufs
        return b["obs"].copy(), b["mask"].copy(), b["seat"].copy(), b["rewards"].copy(), b["done"].copy()

    def features(self) -> np.ndarray:
        """``candidates`` mode: the per-action features of the current decisions,
        ``float32 [B, K, F]`` (``K = max_candidates``, ``F`` = the encoder's ``action_size``;
        row ``k`` of table ``b`` describes candidate ``k``, zeros where ``mask[b, k]`` is false),
        as of the last :meth:`reset` / :meth:`step` (a copy).

        Raises:
            ValueError: the action mode is not ``candidates``, or before :meth:`reset`.
        """
        if not self.feat_shape[0]:
            raise ValueError("features() is for action_mode='candidates'")
        if not getattr(self, "_observed", False):
            raise ValueError("call reset() before features()")
        f = self._block.feats if self.backend == "sync" else self._bufs["feats"]
        return f.copy()  # type: ignore[union-attr]

    def _check_actions(self, actions: np.ndarray) -> None:
        """Refuse the whole batch before any table moves: integer ids, in range, legal in the current
        mask (otherwise a bad id in row ``b`` would leave rows before ``b`` stepped and the rest not,
        and a worker process would die on it). The common case (every id legal) is one range test
        and one gather; the row named in an error is looked up only when something is wrong."""
        if actions.dtype.kind not in "iu":
            raise ValueError(f"actions must be integer action ids, not dtype {actions.dtype}")
        if not getattr(self, "_observed", False):
            raise ValueError("call reset() before step()")
        if int(actions.min()) < 0 or int(actions.max()) >= self.n_actions:
            b = int(np.flatnonzero((actions < 0) | (actions >= self.n_actions))[0])
            raise ValueError(f"action {int(actions[b])} of table {b} is out of range (0..{self.n_actions - 1})")
        mask = self._block.mask if self.backend == "sync" else self._bufs["mask"]
        ok = mask[self._rows, actions]
        if not ok.all():
            b = int(np.flatnonzero(~ok)[0])
            raise ValueError(f"action {int(actions[b])} of table {b} is masked (not legal now); no table was stepped")

    def random_actions(self, mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One uniformly random legal action per row of ``mask`` (``bool [B, A]``): ``int64 [B]``
        (``0`` for a row with no legal action). One uniform draw per row picks among that row's
        legal ids (no ``[B, A]`` random array)."""
        B, A = mask.shape
        flat = np.flatnonzero(mask)  # legal (row, id) pairs as flat positions, ascending
        if flat.size == 0:
            return np.zeros(B, np.int64)
        row0 = np.arange(0, (B + 1) * A, A, dtype=np.int64)  # flat position of each row's id 0
        bounds = np.searchsorted(flat, row0)  # row b's legal ids: flat[bounds[b]:bounds[b + 1]]
        counts = bounds[1:] - bounds[:-1]
        pick = bounds[:-1] + (rng.random(B) * counts).astype(np.int64)
        out = flat[np.minimum(pick, flat.size - 1)] - row0[:-1]
        if counts.min() == 0:
            out[counts == 0] = 0
        return out

    def worker_cpu_seconds(self) -> list[float]:
        """CPU time (user + system, s) used so far by each worker process (``process``
        backend), or by this process (``sync``: one entry). For benchmarks: decisions per
        worker-CPU-second is the per-decision cost, whatever share of the cores the machine gave.

        Raises:
            RuntimeError: after :meth:`close`.
        """
        if self._closed:
            raise RuntimeError("the VecEnv is closed")
        if self.backend == "sync":
            return [time.process_time()]
        for c in self._conns:
            c.send_bytes(b"t")
        return [struct.unpack("<d", c.recv_bytes())[0] for c in self._conns]

    def close(self) -> None:
        """Stop the worker processes (idempotent)."""
        if self._closed:
            return
        self._closed = True
        for c in self._conns:
            try:
                c.send_bytes(b"c")
                c.close()
            except (BrokenPipeError, OSError):
                pass
        for p in getattr(self, "_procs", []):
            p.join(timeout=5)
            if p.is_alive():
                p.terminate()
        shm = getattr(self, "_shm", None)
        if shm is not None:
            self._bufs = {}
            shm.close()
            shm.unlink()

    def __enter__(self) -> VecEnv:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass
