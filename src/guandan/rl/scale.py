"""Scale-out: self-play data generation and arena evaluation on batches of tables, in this process
or over Ray actors (``use_ray=True`` / ``ray_address=...``).

Each worker (:class:`TableWorker`) holds a batch of tables and answers one call per *batch of
work* (a number of steps, or a list of deals), never one remote call per move. Without Ray the
same workers run in this process, one after another, so every command works where Ray is not
installed.

Policies
--------
A policy is either a name — ``"random"`` (uniform over the exact legal actions, like
:class:`guandan.agents.RandomAgent`) or ``"heuristic"`` (:class:`guandan.agents.heuristic.HeuristicAgent`
through seat views) — or a picklable callable ``policy(obs, mask) -> ids`` taking ``float32 [B, D]``
default-layout observations and ``bool [B, 471]`` abstract masks and returning ``int [B]`` ids
(a trained network wrapped by the training package, for example).

Self-play samples are labelled like Deep Monte-Carlo targets: each decision ``(obs, id)`` of a
seat gets that seat's final team reward of the deal (R35). Arena results count duplicate deals
(each deal dealt twice, the two policies swapping seats, R2/R3) won by policy A's team.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .abstract import N_ABSTRACT
from guandan.runtime.gctune import tune_gc
from .table import Table

Policy = Any  # "random" | "heuristic" | Callable[[np.ndarray, np.ndarray], np.ndarray]


def ray_available() -> bool:
    """Whether the ``ray`` package can be imported."""
    try:
        import ray  # noqa: F401
    except ImportError:
        return False
    return True


class TableWorker:
    """A batch of tables stepped together (a Ray actor when scaled out).

    Args:
        n_tables: tables in the batch.
        seed: table ``i`` is seeded ``seed + i``; the named policies' randomness too.
        preset: rule preset.
        own_process: the worker has a process of its own (a Ray actor): after set-up it applies
            :func:`guandan.runtime.gctune.tune_gc` there (never in the caller's process).
    """

    def __init__(self, n_tables: int, seed: int = 0, preset: str = "aicomp", own_process: bool = False) -> None:
        if n_tables < 1:
            raise ValueError(f"n_tables must be at least 1, not {n_tables}")
        self.preset = preset
        self.tables = [Table(preset, "abstract", "default", "deal", seed=seed + i) for i in range(n_tables)]
        self.rng = random.Random(seed)
        self._agents: dict[tuple[str, int], Any] = {}
        if own_process:
            tune_gc()

    # -- policies ----------------------------------------------------------------------------
    def _named(self, name: str, t: Table, seat: int) -> Any:
        if name == "random":
            return self.rng.choice(t.legal())
        if name == "heuristic":
            from guandan.agents import make_agent
            from guandan.core.views import seat_view

            key = (name, seat)
            if key not in self._agents:
                self._agents[key] = make_agent(name, self.rng.randrange(1 << 30))
            return tuple(self._agents[key].act(seat_view(t.game, seat)))
        raise ValueError(f"unknown policy {name!r}; use random, heuristic or a callable(obs, mask)")

    def _act(self, tables: Sequence[Table], policies: Sequence[Policy],
             record: list[list[list[tuple[np.ndarray, int]]]] | None = None) -> list[np.ndarray]:
        """One decision on every unfinished table; ``policies[k]`` plays table ``k``'s seat to act
        (a callable is asked once for all its rows). Returns the per-table rewards."""
        rows: dict[int, list[int]] = {}
        for k, t in enumerate(tables):
            if not t.done and not isinstance(policies[k], str):
                rows.setdefault(id(policies[k]), []).append(k)
        chosen: dict[int, Any] = {}
        obs_rows: dict[int, np.ndarray] = {}
        for key, ks in rows.items():
            pol = policies[ks[0]]
            obs = np.zeros((len(ks), tables[ks[0]].obs_size), np.float32)
            mask = np.zeros((len(ks), N_ABSTRACT), bool)
            for j, k in enumerate(ks):
                t = tables[k]
                t.observe(t.to_act, obs[j])  # type: ignore[arg-type]
                t.mask(mask[j])
            ids = np.asarray(pol(obs, mask))
            for j, k in enumerate(ks):
                chosen[k] = int(ids[j])
                obs_rows[k] = obs[j]
        out = []
        for k, t in enumerate(tables):
            if t.done:
                out.append(np.zeros(4, np.float32))
                continue
            seat = t.to_act
            assert seat is not None
            if k in chosen:
                if record is not None:
                    record[k][seat].append((obs_rows[k].copy(), chosen[k]))
                out.append(t.apply(chosen[k]))
            else:
                if record is not None:
                    o = np.zeros(t.obs_size, np.float32)
                    m = np.zeros(N_ABSTRACT, bool)
                    t.observe(seat, o)
                    t.mask(m)
                    act = self._named(policies[k], t, seat)
                    from .abstract import action_id

                    record[k][seat].append((o, action_id(act, t.game.deal.level)))
                    out.append(t.apply(act))
                else:
                    out.append(t.apply(self._named(policies[k], t, seat)))
        return out

    # -- work --------------------------------------------------------------------------------
    def selfplay(self, steps: int, policy: Policy = "random") -> dict[str, np.ndarray]:
        """Step every table ``steps`` times with ``policy`` on all four seats; return the labelled
        decisions of the deals that finished: ``obs float32 [N, 774]``, ``action int64 [N]``
        (abstract ids), ``ret float32 [N]`` (the seat's final team reward), ``seat int8 [N]``,
        plus ``deals`` (deals finished) and ``decisions`` (steps taken)."""
        n = len(self.tables)
        record: list[list[list[tuple[np.ndarray, int]]]] = [[[] for _ in range(4)] for _ in range(n)]
        obs: list[np.ndarray] = []
        act: list[int] = []
        ret: list[float] = []
        seats: list[int] = []
        deals = decisions = 0
        for _ in range(steps):
            rewards = self._act(self.tables, [policy] * n, record)
            decisions += n
            for k, t in enumerate(self.tables):
                if t.done:
                    deals += 1
                    for s in range(4):
                        for o, a in record[k][s]:
                            obs.append(o)
                            act.append(a)
                            ret.append(float(rewards[k][s]))
                            seats.append(s)
                        record[k][s] = []
                    t.reset()
        d = self.tables[0].obs_size
        return {
            "obs": np.stack(obs) if obs else np.zeros((0, d), np.float32),
            "action": np.asarray(act, np.int64), "ret": np.asarray(ret, np.float32),
            "seat": np.asarray(seats, np.int8), "deals": np.int64(deals), "decisions": np.int64(decisions),
        }

    def duplicate(self, deal_seeds: Sequence[int], policy_a: Policy, policy_b: Policy) -> list[tuple[int, bool, bool]]:
        """Play each deal twice (policy A on seats 0/2, then on seats 1/3; the first deal of a game
        seeded with the deal's seed); returns ``(seed, A won seating 1, A won seating 2)``."""
        results: dict[int, list[bool]] = {s: [False, False] for s in deal_seeds}
        jobs = [(s, team) for s in deal_seeds for team in (0, 1)]
        width = len(self.tables)
        for i in range(0, len(jobs), width):
            chunk = jobs[i : i + width]
            tables = []
            pols_by_seat = []
            for s, team in chunk:
                t = Table(self.preset, "abstract", "default", "deal")
                t.new_game(s)
                tables.append(t)
                pols_by_seat.append({seat: (policy_a if (seat & 1) == team else policy_b) for seat in range(4)})
            last = [np.zeros(4, np.float32) for _ in chunk]
            while not all(t.done for t in tables):
                pols = [pols_by_seat[k][t.to_act] if not t.done else "random" for k, t in enumerate(tables)]
                rew = self._act(tables, pols)
                for k, t in enumerate(tables):
                    if rew[k].any():
                        last[k] = rew[k]
            for k, (s, team) in enumerate(chunk):
                results[s][team] = bool(last[k][team] > 0)
        return [(s, r[0], r[1]) for s, r in results.items()]


def _workers(n_workers: int, tables: int, seed: int, preset: str, use_ray: bool,
             ray_address: str | None) -> tuple[list[Any], Callable[[list[Any]], list[Any]]]:
    """Build the workers (Ray actors or local objects) and a ``gather`` for their results."""
    if use_ray or ray_address:
        import os

        import ray

        # a loaded machine can take minutes to start Ray's agent; the raylet's default wait is short
        os.environ.setdefault("RAY_agent_register_timeout_ms", "600000")
        os.environ.setdefault("RAY_raylet_start_wait_time_s", "600")
        if not ray.is_initialized():
            local = {} if ray_address else {"num_cpus": max(n_workers, 1), "_node_ip_address": "127.0.0.1"}
            ray.init(address=ray_address, include_dashboard=False, log_to_driver=False, **local)
        remote = ray.remote(TableWorker)
        actors = [remote.remote(tables, seed + 1000 * i, preset, True) for i in range(n_workers)]
        return actors, lambda refs: list(ray.get(refs))
    local = [TableWorker(tables, seed + 1000 * i, preset) for i in range(n_workers)]
    return local, lambda results: results


def generate_selfplay(steps: int, workers: int = 2, tables: int = 16, policy: Policy = "random", seed: int = 0,
                      preset: str = "aicomp", use_ray: bool = False, ray_address: str | None = None) -> dict[str, Any]:
    """Self-play data from ``workers`` × ``tables`` tables, ``steps`` decisions each (one call per
    worker). Returns the concatenated arrays of :meth:`TableWorker.selfplay` and the totals.

    Raises:
        ImportError: ``use_ray``/``ray_address`` without Ray installed.
        ValueError: bad counts.
    """
    if steps < 1 or workers < 1 or tables < 1:
        raise ValueError("steps, workers and tables must be at least 1")
    ws, gather = _workers(workers, tables, seed, preset, use_ray, ray_address)
    if use_ray or ray_address:
        parts = gather([w.selfplay.remote(steps, policy) for w in ws])
    else:
        parts = [w.selfplay(steps, policy) for w in ws]
    out = {k: np.concatenate([p[k] for p in parts]) for k in ("obs", "action", "ret", "seat")}
    out["deals"] = int(sum(int(p["deals"]) for p in parts))
    out["decisions"] = int(sum(int(p["decisions"]) for p in parts))
    return out


def arena(deals: int, policy_a: Policy, policy_b: Policy = "random", workers: int = 2, tables: int = 16,
          seed: int = 10_000, preset: str = "aicomp", use_ray: bool = False,
          ray_address: str | None = None) -> dict[str, Any]:
    """Duplicate-deal match of ``policy_a`` against ``policy_b``: deals ``seed .. seed+deals-1``
    split over the workers (one call each).

    Returns:
        ``{"deals", "games_played", "won", "win_rate", "both_won", "both_lost"}`` for policy A.
    """
    if deals < 1 or workers < 1 or tables < 1:
        raise ValueError("deals, workers and tables must be at least 1")
    seeds = list(range(seed, seed + deals))
    slices = [seeds[i::workers] for i in range(workers)]
    slices = [s for s in slices if s]
    ws, gather = _workers(len(slices), tables, seed, preset, use_ray, ray_address)
    if use_ray or ray_address:
        parts = gather([w.duplicate.remote(sl, policy_a, policy_b) for w, sl in zip(ws, slices)])
    else:
        parts = [w.duplicate(sl, policy_a, policy_b) for w, sl in zip(ws, slices)]
    rows = [r for p in parts for r in p]
    won = sum(int(a) + int(b) for _, a, b in rows)
    return {"deals": len(rows), "games_played": 2 * len(rows), "won": won, "win_rate": won / (2 * len(rows)),
            "both_won": sum(1 for _, a, b in rows if a and b), "both_lost": sum(1 for _, a, b in rows if not a and not b)}
