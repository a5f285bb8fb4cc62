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
* ``done``: ``bool [B]`` the step ended an episode (the row already shows the next one).

Backends: ``"sync"`` (this process) or ``"process"`` (``n_workers`` worker processes via
:mod:`multiprocessing`, each stepping ``B / n_workers`` tables; arrays go through pipes).
"""

from __future__ import annotations

import multiprocessing as mp
from typing import Any

import numpy as np

from .table import Table


class _Block:
    """Tables stepped in one process."""

    def __init__(self, n: int, seed: int, kwargs: dict[str, Any]) -> None:
        self.tables = [Table(seed=seed + i, **kwargs) for i in range(n)]
        t0 = self.tables[0]
        self.n_actions = t0.n_actions
        self.obs_size = t0.obs_size
        n = len(self.tables)
        self.obs = np.zeros((n, self.obs_size), np.float32)
        self.mask = np.zeros((n, self.n_actions), bool)
        self.seat = np.zeros(n, np.int64)

    def _fill(self, i: int) -> None:
        t = self.tables[i]
        s = t.to_act
        assert s is not None
        self.seat[i] = s
        t.observe(s, self.obs[i])
        t.mask(self.mask[i])

    def reset(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        for i in range(len(self.tables)):
            self._fill(i)
        return self.obs, self.mask, self.seat

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, ...]:
        n = len(self.tables)
        rewards = np.zeros((n, 4), np.float32)
        done = np.zeros(n, bool)
        for i, t in enumerate(self.tables):
            rewards[i] = t.apply(int(actions[i]))
            if t.done:
                done[i] = True
                t.reset()
            self._fill(i)
        return self.obs, self.mask, self.seat, rewards, done


def _worker(conn: Any, n: int, seed: int, kwargs: dict[str, Any]) -> None:
    block = _Block(n, seed, kwargs)
    try:
        while True:
            cmd, arg = conn.recv()
            if cmd == "reset":
                conn.send(block.reset())
            elif cmd == "step":
                conn.send(block.step(arg))
            elif cmd == "close":
                break
    except (EOFError, KeyboardInterrupt):
        pass
    finally:
        conn.close()


class VecEnv:
    """``n_tables`` Guandan tables with array I/O; see the module docstring.

    Args:
        n_tables: tables (rows), at least 1.
        backend: ``"sync"`` or ``"process"``.
        n_workers: worker processes for the ``process`` backend (at most ``n_tables``).
        seed: table ``b`` is seeded ``seed + b``.
        **table_kwargs: ``preset``, ``action_mode``, ``obs``, ``reward``, ``max_candidates``
            (as :class:`~guandan.rl.table.Table`; ``candidates`` features are not batched here:
            use the ``abstract`` or ``cards`` mode).
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
        self._closed = False
        if backend == "sync":
            self._block = _Block(n_tables, seed, table_kwargs)
            self.n_actions, self.obs_size = self._block.n_actions, self._block.obs_size
            self._conns: list[Any] = []
            return
        if isinstance(n_workers, bool) or not isinstance(n_workers, int) or n_workers < 1:
            raise ValueError(f"n_workers must be a positive int, not {n_workers!r}")
        n_workers = min(n_workers, n_tables)
        sizes = [n_tables // n_workers + (1 if i < n_tables % n_workers else 0) for i in range(n_workers)]
        self._bounds = np.cumsum([0] + sizes)
        ctx = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")
        self._conns = []
        self._procs = []
        for i, n in enumerate(sizes):
            parent, child = ctx.Pipe()
            p = ctx.Process(target=_worker, args=(child, n, seed + int(self._bounds[i]), table_kwargs), daemon=True)
            p.start()
            child.close()
            self._conns.append(parent)
            self._procs.append(p)
        probe = Table(**table_kwargs)
        self.n_actions, self.obs_size = probe.n_actions, probe.obs_size

    def reset(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Observe every table: ``(obs [B, D], mask [B, A], seat [B])``."""
        if self.backend == "sync":
            o, m, s = self._block.reset()
            return o.copy(), m.copy(), s.copy()
        for c in self._conns:
            c.send(("reset", None))
        parts = [c.recv() for c in self._conns]
        return tuple(np.concatenate([p[k] for p in parts]) for k in range(3))  # type: ignore[return-value]

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Apply one action per table (``int [B]``, ids of the action mode).

        Returns:
            ``(obs [B, D], mask [B, A], seat [B], rewards [B, 4], done [B])``.
        Raises:
            ValueError: wrong number of actions, or an action that is masked.
        """
        actions = np.asarray(actions)
        if actions.shape != (self.n_tables,):
            raise ValueError(f"expected {self.n_tables} actions, got shape {actions.shape}")
        if self.backend == "sync":
            o, m, s, r, d = self._block.step(actions)
            return o.copy(), m.copy(), s.copy(), r, d
        for i, c in enumerate(self._conns):
            c.send(("step", actions[self._bounds[i] : self._bounds[i + 1]]))
        parts = [c.recv() for c in self._conns]
        return tuple(np.concatenate([p[k] for p in parts]) for k in range(5))  # type: ignore[return-value]

    def random_actions(self, mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One uniformly random legal action per row of ``mask`` (``int64 [B]``)."""
        u = rng.random(mask.shape) * mask
        return u.argmax(axis=1)

    def close(self) -> None:
        """Stop the worker processes (idempotent)."""
        if self._closed:
            return
        self._closed = True
        for c in self._conns:
            try:
                c.send(("close", None))
                c.close()
            except (BrokenPipeError, OSError):
                pass
        for p in getattr(self, "_procs", []):
            p.join(timeout=5)
            if p.is_alive():
                p.terminate()

    def __enter__(self) -> VecEnv:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass
