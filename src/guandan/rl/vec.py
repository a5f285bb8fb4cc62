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
:mod:`multiprocessing`, each stepping its share of the tables and writing its rows of the
arrays in place in one shared-memory block, features included; a step is a five-byte message per
worker (command and group) and the same five bytes back (the actions are written into shared memory too), nothing is
pickled per step; a worker sleeps in the pipe's ``recv`` between commands and the caller in its
own ``recv`` while waiting, neither polls). Returned arrays are copies, safe to keep. Each worker
process, once its tables are set up, applies :func:`guandan.runtime.gctune.tune_gc` (frozen set-up, rarer
young collections: stepping makes no reference cycles); the ``sync`` backend leaves the calling
process's collector alone. :meth:`VecEnv.worker_cpu_seconds` reports the CPU time each worker
used (for benchmarks). An exception inside a worker (a bug: the actions are checked before any
is sent) closes the ``VecEnv`` and is raised in the caller as a :class:`RuntimeError` carrying the
worker's traceback; a worker that dies (killed) closes it too.

Lock-step or pipelined: :meth:`VecEnv.step` steps every row and waits for all of them, so with
the ``process`` backend the workers are idle while the caller chooses the next actions and while
the slowest worker finishes. With ``groups=G`` the rows are cut into ``G`` contiguous groups,
each spread over all the workers; :meth:`VecEnv.step_async` starts one group and returns,
:meth:`VecEnv.step_wait` collects it. Restarting each group as soon as its results are in keeps
every worker busy with the other groups meanwhile (the loop is in the :class:`VecEnv`
docstring; ``guandan bench rl`` measures both ways). A table's trajectory depends only on its
seed and its actions, so both ways give the same results for the same actions.
"""

from __future__ import annotations

import multiprocessing as mp
import struct
import time
from typing import Any

import numpy as np

from guandan.runtime.gctune import tune_gc
from .table import Table


class _Block:
    """Tables stepped in one process; writes into ``bufs`` (views of shared memory for the
    ``process`` backend) or into its own arrays.

    One :meth:`step` applies the actions of every table of the block and refills its rows:
    observations are written in place row by row (the encoders' cached path); the seats and
    done flags are written with one assignment each; of the rewards only the rows paid at this
    step and at the last one are touched; the masks are updated with two flat index assignments
    (clear the ids set last time, set the new ones: no per-table NumPy call); in ``candidates``
    mode only the feature rows used last time are cleared before the new ones are written.
    """

    def __init__(self, n: int, seed: int, kwargs: dict[str, Any], bufs: dict[str, np.ndarray] | None = None) -> None:
        self.tables = [Table(seed=seed + i, **kwargs) for i in range(n)]
        t0 = self.tables[0]
        self.n_actions = t0.n_actions
        self.obs_size = t0.obs_size
        self.cand = t0.action_mode == "candidates"
        self.abstract = t0.action_mode == "abstract"
        self.feat_shape = (t0.max_candidates, t0.encoder.action_size) if self.cand else (0, 0)
        n = len(self.tables)
        if bufs is None:
            bufs = _alloc(n, self.obs_size, self.n_actions, self.feat_shape)
        self.obs, self.mask, self.seat = bufs["obs"], bufs["mask"], bufs["seat"]
        self.rewards, self.done = bufs["rewards"], bufs["done"]
        self.feats = bufs.get("feats")
        self._used = [0] * n  # candidate rows written per table
        self._rows = [self.obs[i] for i in range(n)]  # row views, made once
        self._base = np.arange(n, dtype=np.int64) * self.n_actions  # flat position of each row's id 0
        self._set = np.zeros(0, np.int64)  # flat mask positions set by the last fill
        self._paid: list[int] = []  # rows with non-zero rewards since the last step

    def _fill(self) -> None:
        tables, rows = self.tables, self._rows
        seats: list[int] = []
        ids: list[int] = []
        counts: list[int] = []
        abstract_mode, cand, A = self.abstract, self.cand, self.n_actions
        for i, t in enumerate(tables):
            s = t.game.to_act()  # never done here: finished tables were reset
            seats.append(s)  # type: ignore[arg-type]
            t.observe(s, rows[i])  # type: ignore[arg-type]
            if abstract_mode:
                got = t.legal_ids()
                ids += got
                counts.append(len(got))
            else:
                n = len(t.candidates() if cand else t.legal())
                if n > A:
                    raise RuntimeError(f"{n} legal actions exceed the cards action space ({A})")
                ids += range(n)
                counts.append(n)
            if cand:
                self._write_features(i, t)
        self.seat[:] = seats
        flat = np.array(ids, dtype=np.int64)
        flat += np.repeat(self._base, counts)
        m = self.mask.reshape(-1)
        m[self._set] = False
        m[flat] = True
        self._set = flat

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
        self.mask[:] = False
        self._set = np.zeros(0, np.int64)
        self._fill()
        return self.obs, self.mask, self.seat

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, ...]:
        rewards = self.rewards
        for i in self._paid:
            rewards[i] = 0.0
        paid: list[int] = []
        done: list[bool] = []
        for i, (t, a) in enumerate(zip(self.tables, actions.tolist())):
            r0 = t.advance(a)
            if r0:
                rewards[i] = (r0, -r0, r0, -r0)  # team-shared, zero-sum (R35)
                paid.append(i)
            d = t.done
            done.append(d)
            if d:
                t.reset()
        self._paid = paid
        self.done[:] = done
        self._fill()
        return self.obs, self.mask, self.seat, rewards, self.done


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


def _split(lo: int, hi: int, parts: int) -> list[tuple[int, int]]:
    """``[lo, hi)`` cut into ``parts`` contiguous near-equal ranges (the first ones one longer)."""
    n = hi - lo
    out = []
    for i in range(parts):
        size = n // parts + (1 if i < n % parts else 0)
        out.append((lo, lo + size))
        lo += size
    return out


def _worker(conn: Any, shm_name: str, dims: tuple[int, int, int, tuple[int, int]], chunks: list[tuple[int, int]],
            seed: int, kwargs: dict[str, Any]) -> None:
    """One worker process: a :class:`_Block` per group (rows ``chunks[g]`` of the shared arrays,
    table ``b`` seeded ``seed + b``). Commands are a few bytes (``s`` + group: step that group
    with the actions already in shared memory, answered with the same bytes; ``r``: reset
    every block; ``t``: CPU seconds used; ``c``: close); the worker blocks in ``recv`` between
    commands (no polling). An exception while stepping is sent back as ``e`` + its traceback
    and ends the worker (its tables are then in an unknown state)."""
    import traceback
    from multiprocessing import shared_memory

    shm = shared_memory.SharedMemory(name=shm_name)
    blocks: list[tuple[_Block, np.ndarray]] = []
    try:
        try:
            for lo, hi in chunks:
                views = _views(shm.buf, *dims, lo=lo, hi=hi)
                blocks.append((_Block(hi - lo, seed + lo, kwargs, views), views["actions"]))
            # our own process: freeze the set-up, rarer young collections (guandan.runtime.gctune); no
            # collection first: a forked worker must never finalize what it inherited from its parent
            # (a crash seen in the full test suite, whose process held Ray/gRPC, torch and browser state)
            tune_gc(collect=False)
            while True:
                cmd = conn.recv_bytes()  # a few bytes per command; the actions are in shared memory
                op = cmd[:1]
                if op == b"s":
                    block, actions = blocks[int.from_bytes(cmd[1:], "little")]
                    block.step(actions)
                    conn.send_bytes(cmd)
                elif op == b"r":
                    for block, _ in blocks:
                        block.reset()
                    conn.send_bytes(b"r")
                elif op == b"t":  # CPU seconds this worker has used
                    # tagged: a bare double starting with the byte b"e" would read as an error
                    conn.send_bytes(b"t" + struct.pack("<d", time.process_time()))
                else:  # b"c": close
                    break
        except (EOFError, KeyboardInterrupt):
            pass
        except Exception:
            try:
                conn.send_bytes(b"e" + traceback.format_exc().encode())
            except OSError:
                pass
    finally:
        # drop the views before closing the mapping
        blocks = block = actions = views = None  # type: ignore[assignment]
        conn.close()
        try:
            shm.close()
        except BufferError:  # a view still referenced somewhere: the process is exiting anyway
            pass


class VecEnv:
    """``n_tables`` Guandan tables with array I/O; see the module docstring.

    Two ways to step:

    * :meth:`step` (lock-step): all rows at once, ``actions [B]`` in, every array out;
    * pipelined (``groups >= 2``): the rows are cut into ``groups`` contiguous groups
      (:meth:`group_rows`); :meth:`step_async` starts stepping one group and returns at once,
      :meth:`step_wait` waits for it and returns that group's rows. With the ``process`` backend
      the workers step the other groups while the caller chooses actions for one, so they are
      not idle while it does, nor while another worker finishes (EnvPool-style)::

          obs, mask, seat = vec.reset()
          for g in range(vec.n_groups):
              vec.step_async(policy(obs[vec.group_rows(g)], mask[vec.group_rows(g)]), g)
          while training:
              for g in range(vec.n_groups):
                  obs_g, mask_g, seat_g, rew_g, done_g = vec.step_wait(g)
                  vec.step_async(policy(obs_g, mask_g), g)

    A table's trajectory depends only on its seed (``seed + b``) and the actions given to it,
    never on ``groups``, the backend or the number of workers: the two ways give the same
    results for the same actions (tested).

    Args:
        n_tables: tables (rows), at least 1.
        backend: ``"sync"`` or ``"process"``.
        n_workers: worker processes for the ``process`` backend (at most ``n_tables // groups``).
        seed: table ``b`` is seeded ``seed + b``.
        groups: row groups for pipelined stepping (1 .. ``n_tables``); ``step`` works with any.
        **table_kwargs: ``preset``, ``action_mode``, ``obs``, ``reward``, ``max_candidates``
            (as :class:`~guandan.rl.table.Table`); in ``candidates`` mode :meth:`features`
            gives the padded per-action features ``[B, K, F]`` next to the mask ``[B, K]``.
    Raises:
        ValueError: bad sizes, groups or backend.
    """

    def __init__(
        self, n_tables: int, backend: str = "sync", n_workers: int = 2, seed: int = 0, groups: int = 1,
        **table_kwargs: Any
    ) -> None:
        if isinstance(n_tables, bool) or not isinstance(n_tables, int) or n_tables < 1:
            raise ValueError(f"n_tables must be a positive int, not {n_tables!r}")
        if backend not in ("sync", "process"):
            raise ValueError(f"backend must be 'sync' or 'process', not {backend!r}")
        if isinstance(groups, bool) or not isinstance(groups, int) or not 1 <= groups <= n_tables:
            raise ValueError(f"groups must be an int from 1 to n_tables ({n_tables}), not {groups!r}")
        self.n_tables = n_tables
        self.backend = backend
        self.n_groups = groups
        self._group_bounds = _split(0, n_tables, groups)
        self._slices = [slice(lo, hi) for lo, hi in self._group_bounds]
        self._rows = np.arange(n_tables)
        self._closed = False
        self._observed = False
        self._busy: list[int] = []  # groups started and not yet waited for, in start order
        self._conns: list[Any] = []
        if backend == "sync":
            self._blocks = [_Block(hi - lo, seed + lo, table_kwargs) for lo, hi in self._group_bounds]
            if groups == 1:
                self._block = self._blocks[0]
            b0 = self._blocks[0]
            self.n_actions, self.obs_size, self.feat_shape = b0.n_actions, b0.obs_size, b0.feat_shape
            self._results: dict[int, tuple[np.ndarray, ...]] = {}
            return
        if isinstance(n_workers, bool) or not isinstance(n_workers, int) or n_workers < 1:
            raise ValueError(f"n_workers must be a positive int, not {n_workers!r}")
        from multiprocessing import shared_memory

        n_workers = min(n_workers, n_tables // groups)
        self.n_workers = n_workers
        # worker w steps, in each group, the w-th contiguous part of that group's rows
        chunks = [[_split(lo, hi, n_workers)[w] for lo, hi in self._group_bounds] for w in range(n_workers)]
        probe = Table(**table_kwargs)
        self.n_actions, self.obs_size = probe.n_actions, probe.obs_size
        self.feat_shape = (probe.max_candidates, probe.encoder.action_size) if probe.action_mode == "candidates" else (0, 0)
        dims = (n_tables, self.obs_size, self.n_actions, self.feat_shape)
        # observations, masks, seats, rewards and done flags live in one shared-memory block that
        # the workers write in place; only the actions and a "done" token cross the pipes
        self._shm = shared_memory.SharedMemory(create=True, size=_nbytes(*dims))
        self._bufs = _views(self._shm.buf, *dims)
        ctx = mp.get_context("fork" if "fork" in mp.get_all_start_methods() else "spawn")
        self._procs = []
        self._pending: list[list[int]] = [[] for _ in range(n_workers)]  # per worker: groups not yet answered
        for w in range(n_workers):
            parent, child = ctx.Pipe()
            p = ctx.Process(target=_worker, args=(child, self._shm.name, dims, chunks[w], seed, table_kwargs),
                            daemon=True)
            p.start()
            child.close()
            self._conns.append(parent)
            self._procs.append(p)

    # -- worker messages ---------------------------------------------------------------------
    def _recv(self, w: int) -> bytes:
        """Worker ``w``'s next answer; a worker error or death closes the VecEnv and raises."""
        try:
            msg = self._conns[w].recv_bytes()
        except (EOFError, OSError):
            self.close()
            code = self._procs[w].exitcode
            raise RuntimeError(f"VecEnv worker {w} died (exit code {code}); the VecEnv is closed") from None
        if msg[:1] == b"e":
            self.close()
            raise RuntimeError(f"VecEnv worker {w} failed; the VecEnv is closed. Worker traceback:\n"
                               + msg[1:].decode(errors="replace"))
        return msg

    def _send(self, w: int, msg: bytes) -> None:
        try:
            self._conns[w].send_bytes(msg)
        except OSError:
            self.close()
            code = self._procs[w].exitcode
            raise RuntimeError(f"VecEnv worker {w} is gone (exit code {code}); the VecEnv is closed") from None

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("the VecEnv is closed")

    def _check_idle(self, what: str) -> None:
        self._check_open()
        if self._busy:
            raise RuntimeError(f"{what} while groups {self._busy} are stepping: call step_wait() for them first")

    # -- stepping ----------------------------------------------------------------------------
    def reset(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Observe every table: ``(obs [B, D], mask [B, A], seat [B])``.

        Raises:
            RuntimeError: the VecEnv is closed, or groups are still stepping.
        """
        self._check_idle("reset()")
        self._observed = True
        if self.backend == "sync":
            out = [b.reset() for b in self._blocks]
            return tuple(np.concatenate([o[k] for o in out]) for k in range(3))  # type: ignore[return-value]
        for w in range(len(self._conns)):
            self._send(w, b"r")
        for w in range(len(self._conns)):
            self._recv(w)
        b = self._bufs
        return b["obs"].copy(), b["mask"].copy(), b["seat"].copy()

    def group_rows(self, group: int) -> slice:
        """The rows of ``group`` (``0 .. n_groups - 1``): a contiguous slice of ``0 .. B - 1``.

        Raises:
            ValueError: no such group.
        """
        if isinstance(group, bool) or not isinstance(group, (int, np.integer)) or not 0 <= group < self.n_groups:
            raise ValueError(f"group must be an int from 0 to {self.n_groups - 1}, not {group!r}")
        return self._slices[int(group)]

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Apply one action per table (``int [B]``, ids of the action mode).

        Returns:
            ``(obs [B, D], mask [B, A], seat [B], rewards [B, 4], done [B])``.
        Raises:
            ValueError: wrong number of actions, non-integer ids, step before reset(), or an id
                out of range or masked in any row (then no table is stepped).
            RuntimeError: the VecEnv is closed or groups are stepping (pipelined use), or a
                worker process failed (the VecEnv is then closed).
        """
        self.step_async(actions)
        return self.step_wait()

    def step_async(self, actions: Any, group: int | None = None) -> None:
        """Start stepping the rows of ``group`` (every row when ``None``) with ``actions``
        (``int [rows]``, one id per row of the group) and return without waiting (``process``
        backend; ``sync`` steps them now). Collect the results with :meth:`step_wait`.

        Raises:
            ValueError: as :meth:`step` for the group's rows (nothing is stepped), or a bad group.
            RuntimeError: the VecEnv is closed, that group (any group, for ``None``) is already
                stepping, or a worker process failed (the VecEnv is then closed).
        """
        self._check_open()
        groups = list(range(self.n_groups)) if group is None else [self._group_index(group)]
        busy = [g for g in groups if g in self._busy]
        if busy:
            raise RuntimeError(f"groups {busy} are already stepping: call step_wait() first")
        rows = slice(0, self.n_tables) if group is None else self._slices[groups[0]]
        n = rows.stop - rows.start
        actions = np.asarray(actions)
        if actions.shape != (n,):
            raise ValueError(f"expected {n} actions, got shape {actions.shape}")
        self._check_actions(actions, rows)
        if self.backend == "sync":
            for g in groups:
                sl = self._slices[g]
                b = self._blocks[g]
                o, m, s, r, d = b.step(actions[sl.start - rows.start:sl.stop - rows.start])
                self._results[g] = (o.copy(), m.copy(), s.copy(), r.copy(), d.copy())
                self._busy.append(g)
            return
        self._bufs["actions"][rows] = actions
        for g in groups:
            msg = b"s" + g.to_bytes(4, "little")
            for w in range(len(self._conns)):
                self._send(w, msg)
                self._pending[w].append(g)
            self._busy.append(g)

    def step_wait(self, group: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Wait for the step of ``group`` started by :meth:`step_async` (``None``: every group,
        all of them started) and return its rows: ``(obs [n, D], mask [n, A], seat [n],
        rewards [n, 4], done [n])`` (copies), ``n`` = the group's rows. Blocks in the pipes'
        ``recv`` (no polling); answers for other groups met on the way are kept.

        Raises:
            ValueError: a bad group. RuntimeError: the group is not stepping, the VecEnv is
                closed, or a worker process failed (the VecEnv is then closed).
        """
        self._check_open()
        groups = list(range(self.n_groups)) if group is None else [self._group_index(group)]
        idle = [g for g in groups if g not in self._busy]
        if idle:
            raise RuntimeError(f"groups {idle} are not stepping: call step_async() first")
        if self.backend == "sync":
            parts = [self._results.pop(g) for g in groups]
            for g in groups:
                self._busy.remove(g)
            if len(parts) == 1:
                return parts[0]  # type: ignore[return-value]
            return tuple(np.concatenate([p[k] for p in parts]) for k in range(5))  # type: ignore[return-value]
        for w in range(len(self._conns)):
            pend = self._pending[w]
            while any(g in pend for g in groups):
                msg = self._recv(w)
                pend.remove(int.from_bytes(msg[1:], "little"))  # answers come in command order
        for g in groups:
            self._busy.remove(g)
        rows = slice(0, self.n_tables) if group is None else self._slices[groups[0]]
        b = self._bufs
        return (b["obs"][rows].copy(), b["mask"][rows].copy(), b["seat"][rows].copy(),
                b["rewards"][rows].copy(), b["done"][rows].copy())

    def _group_index(self, group: Any) -> int:
        self.group_rows(group)  # validates
        return int(group)

    def features(self, group: int | None = None) -> np.ndarray:
        """``candidates`` mode: the per-action features of the current decisions,
        ``float32 [B, K, F]`` (``K = max_candidates``, ``F`` = the encoder's ``action_size``;
        row ``k`` of table ``b`` describes candidate ``k``, zeros where ``mask[b, k]`` is false),
        as of the last :meth:`reset` / :meth:`step` (a copy); with ``group``, that group's rows
        only (``[n, K, F]``, as of its last :meth:`step_wait`).

        Raises:
            ValueError: the action mode is not ``candidates``, before :meth:`reset`, or a bad group.
            RuntimeError: those rows are stepping, or the VecEnv is closed.
        """
        if not self.feat_shape[0]:
            raise ValueError("features() is for action_mode='candidates'")
        if not self._observed:
            raise ValueError("call reset() before features()")
        self._check_open()
        if group is None:
            self._check_idle("features()")
            rows = slice(0, self.n_tables)
        else:
            g = self._group_index(group)
            if g in self._busy:
                raise RuntimeError(f"group {g} is stepping: call step_wait({g}) first")
            rows = self._slices[g]
        if self.backend == "sync":
            if group is not None:
                return self._blocks[int(group)].feats.copy()  # type: ignore[union-attr]
            return np.concatenate([b.feats for b in self._blocks])  # type: ignore[misc]
        return self._bufs["feats"][rows].copy()

    def _mask_rows(self, rows: slice) -> np.ndarray:
        if self.backend == "process":
            return self._bufs["mask"][rows]
        parts = [b.mask for g, b in enumerate(self._blocks)
                 if self._slices[g].start < rows.stop and self._slices[g].stop > rows.start]
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    def _check_actions(self, actions: np.ndarray, rows: slice) -> None:
        """Refuse the whole batch before any table moves: integer ids, in range, legal in the current
        mask (otherwise a bad id in row ``b`` would leave rows before ``b`` stepped and the rest not,
        and a worker process would die on it). The common case (every id legal) is one range test
        and one gather; the row named in an error is looked up only when something is wrong."""
        if actions.dtype.kind not in "iu":
            raise ValueError(f"actions must be integer action ids, not dtype {actions.dtype}")
        if not self._observed:
            raise ValueError("call reset() before step()")
        if int(actions.min()) < 0 or int(actions.max()) >= self.n_actions:
            b = int(np.flatnonzero((actions < 0) | (actions >= self.n_actions))[0])
            raise ValueError(f"action {int(actions[b])} of table {rows.start + b} is out of range "
                             f"(0..{self.n_actions - 1})")
        mask = self._mask_rows(rows)
        ok = mask[self._rows[: len(actions)], actions]
        if not ok.all():
            b = int(np.flatnonzero(~ok)[0])
            raise ValueError(f"action {int(actions[b])} of table {rows.start + b} is masked (not legal now); "
                             "no table was stepped")

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
            RuntimeError: after :meth:`close`, or while groups are stepping.
        """
        self._check_idle("worker_cpu_seconds()")
        if self.backend == "sync":
            return [time.process_time()]
        for w in range(len(self._conns)):
            self._send(w, b"t")
        return [struct.unpack("<d", self._recv(w)[1:])[0] for w in range(len(self._conns))]

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
