"""``guandan bench rl``: environment speed, ours and the references, measured in one run.

Figures (each a loop of uniformly random legal actions for ``seconds`` of wall time):

* ``engine``: the bare rules engine (legal actions + apply, no env), the ceiling of the rest;
* ``env``: one :class:`~guandan.rl.table.Table` on one core, per action mode, without and with
  observation encoding (``none``, ``default``, ``danzero``); the ``abstract`` rows are also
  measured with ``Table(reference=True)`` (the enumerate-and-group mask and from-scratch
  encoding the env used before the fast paths: the "before" figure of the same run). A step = one decision: the action
  mask (or legal list) is built, a random legal action is drawn and applied; "with encoding"
  also encodes the acting seat's observation. Episodes reset (next deal) when they end.
* ``pettingzoo``: the PettingZoo AEC env (:func:`guandan.rl.env`, abstract + default, wrapped
  as users get it) driven the way PettingZoo documents: ``for agent in env.agent_iter()``,
  ``env.last()``, a random legal id from ``obs["action_mask"]`` (the same choice as the ``env``
  loop), ``env.step``; ``env.reset()`` (next deal) when the iterator ends. Steps counted are
  decisions (the ``step(None)`` of the four finished agents at a deal's end are not counted,
  their time is). Measured in four slices alternating with the one-core ``Table`` loop
  (:func:`pettingzoo_vs_table`, ``2 × seconds`` each in all), so the ratio of the two, what the
  PettingZoo layer costs, is taken under the same load (by wall clock and by CPU time); printed
  beside RLCard's Doudizhu env too.
* ``vec``: :class:`~guandan.rl.vec.VecEnv` decisions/s (rows × steps / s) with the default
  encoding and abstract mode, random legal actions chosen by the caller from the masks
  (:meth:`VecEnv.random_actions`): sync (one process, lock-step ``step()``) and ``process``
  backend (64 tables by default: each of 2 workers steps 32 tables per lock-step round trip, 16
  per group when pipelined, so the pipe wake-ups cost little next to the work; with 16 tables in
  all, lock-step, a worker slept between steps so often
  that a shared machine gave the two workers less than one core together; a 5 s run still covers
  about a dozen deals per table), and the process backend in ``candidates`` mode (64
  candidates) reading the ``[B, K, F]`` features each step. The process backend is measured with
  one worker (lock-step) and with ``workers`` both lock-step (:meth:`VecEnv.step` on all rows:
  the workers wait while the caller chooses actions and while the slower worker finishes) and
  pipelined (``VecEnv(groups=2)``, each group waited for with :meth:`VecEnv.step_wait` and
  restarted with :meth:`VecEnv.step_async` while the workers step the other group; the same
  decisions for the same actions, see :class:`VecEnv`); the faster of the two in the run is the
  headline figure checked against the target, and the output names it (on a machine whose other
  jobs leave no core idle, pipelining has no idle time to recover, and its smaller blocks per
  message cost more per decision). The ``candidates`` figure is lock-step. For each process run the CPU seconds the workers used
  (:meth:`VecEnv.worker_cpu_seconds`) give the share of the cores the run actually got
  (``cpu_s / wall_s``) and the per-decision cost (decisions per worker-CPU-second), and this
  process's CPU seconds give the caller's share (``parent_cpu_s / wall_s``); on a machine shared
  with other jobs these say more than the wall-clock figure.
* The command (``guandan bench rl``) calls :func:`guandan.runtime.gctune.tune_gc` first, as every
  process the project starts for stepping tables does; calling these functions from another
  process measures them under that process's collector settings.
* references, measured only when their packages are installed (benchmark-only, never a
  dependency): RLCard's Doudizhu env (``rlcard.make("doudizhu")``: ``reset``/``step`` with a
  random legal action id; its step includes its own state encoding) and DouZero's ``GameEnv``
  (``douzero.env.game``: random agents choosing from ``infoset.legal_actions``; no encoding).
  To measure them without adding them to the environment: ``pip install --no-deps --target DIR
  rlcard==1.2.0 termcolor douzero==1.1.0`` then ``PYTHONPATH=DIR guandan bench rl``.

Targets (issue 9; the PettingZoo figure: issue 26 item 18): ≥ 20,000 steps/s for ``abstract`` +
``default`` on one core, through the ``Table`` and through PettingZoo's AEC API; the process
VecEnv over two workers ≥ 2× that (40,000 decisions/s; its ratio to the single-core figure of the
same run is printed too); per step faster than RLCard's Doudizhu env.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from .table import Table
from .vec import VecEnv

TARGET_STEPS_PER_S = 20_000
TARGET_VEC_RATIO = 2.0  # the process VecEnv: >= 2x the single-core target (40,000 decisions/s)
#: Row groups of the pipelined process ``VecEnv`` figure (``step_async`` / ``step_wait``, see
#: :func:`vec_run`); the headline figure is the faster of it and lock-step ``step()`` in the run.
VEC_GROUPS = 2
VEC_PATH = f"VecEnv(groups={VEC_GROUPS}), step_async/step_wait per group"


def env_steps_per_s(action_mode: str, obs: str | None, seconds: float, seed: int = 0, reference: bool = False) -> float:
    """Decisions per second of one table with random legal actions (see the module docstring).

    Args:
        action_mode: ``abstract``, ``candidates`` or ``cards``.
        obs: ``None`` (no encoding) or an encoder name.
        seconds: wall time to run (s).
        reference: measure the reference paths (``Table(reference=True)``: enumerate-and-group
            mask, from-scratch encoding), i.e. the env before the fast paths.
    """
    n, wall, _ = _table_loop(action_mode, obs, seconds, seed, reference)
    return n / wall


def _table_loop(action_mode: str, obs: str | None, seconds: float, seed: int = 0,
                reference: bool = False) -> tuple[int, float, float]:
    """:func:`env_steps_per_s`'s loop: ``(decisions, wall seconds, this process's CPU seconds)``."""
    t = Table(seed=seed, action_mode=action_mode, obs=obs or "default", reference=reference)
    rng = random.Random(seed)
    mask = np.zeros(t.n_actions, bool)
    buf = np.zeros(t.obs_size, np.float32)
    feats = np.zeros((t.max_candidates, t.encoder.action_size), np.float32) if action_mode == "candidates" else None
    n = 0
    cpu0 = time.process_time()
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        for _ in range(64):
            if t.done:
                t.reset()
            seat = t.to_act
            if obs is not None:
                t.observe(seat, buf)  # type: ignore[arg-type]
                if feats is not None:
                    t.candidate_features(feats)
            t.mask(mask)
            ids = np.flatnonzero(mask)
            t.apply(int(ids[rng.randrange(len(ids))]))
            n += 1
        now = time.perf_counter()
        if now >= deadline:
            return n, now - start, time.process_time() - cpu0


def pettingzoo_steps_per_s(seconds: float, seed: int = 0, action_mode: str = "abstract", obs: str = "default") -> float:
    """Decisions per second through PettingZoo's AEC API (see the module docstring): the
    wrapped :func:`guandan.rl.env`, ``agent_iter`` / ``last`` / ``step`` with random legal actions.

    Args:
        seconds: wall time to run (s); seed: the game seed and the random choices' seed.
        action_mode, obs: as :func:`guandan.rl.env`.
    """
    n, wall, _ = _pettingzoo_loop(seconds, seed, action_mode, obs)
    return n / wall


def _pettingzoo_loop(seconds: float, seed: int = 0, action_mode: str = "abstract",
                     obs: str = "default") -> tuple[int, float, float]:
    """:func:`pettingzoo_steps_per_s`'s loop: ``(decisions, wall seconds, CPU seconds)``."""
    from . import env as make_env

    e = make_env(action_mode=action_mode, obs=obs)
    e.reset(seed=seed)
    rng = random.Random(seed)
    flatnonzero = np.flatnonzero
    n = 0
    cpu0 = time.process_time()
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        for _agent in e.agent_iter():
            ob, _, term, trunc, _ = e.last()
            if term or trunc:
                e.step(None)
                continue
            ids = flatnonzero(ob["action_mask"])
            e.step(int(ids[rng.randrange(len(ids))]))
            n += 1
            if not n & 63:
                now = time.perf_counter()
                if now >= deadline:
                    return n, now - start, time.process_time() - cpu0
        e.reset()


def pettingzoo_vs_table(seconds: float, rounds: int = 4) -> dict[str, float]:
    """The PettingZoo AEC loop and the one-core ``Table`` loop (abstract + default), measured in
    ``rounds`` alternating slices of ``seconds / rounds`` each, so both see the same load: the
    ratio is what the PettingZoo layer costs. Returns ``pettingzoo_steps_per_s`` and
    ``table_steps_per_s`` (wall clock), ``pettingzoo_steps_per_cpu_s`` and
    ``table_steps_per_cpu_s`` (this process's CPU time: what a shared machine's other jobs
    change least), ``ratio`` and ``ratio_cpu`` (PettingZoo / Table), ``rounds``."""
    part = seconds / rounds
    tot = {"pz": [0, 0.0, 0.0], "table": [0, 0.0, 0.0]}
    for r in range(rounds):
        for key, got in (("table", _table_loop("abstract", "default", part, seed=r)),
                         ("pz", _pettingzoo_loop(part, seed=r))):
            for i in range(3):
                tot[key][i] += got[i]
    pz, tb = tot["pz"], tot["table"]
    out = {"pettingzoo_steps_per_s": pz[0] / pz[1], "table_steps_per_s": tb[0] / tb[1],
           "pettingzoo_steps_per_cpu_s": pz[0] / pz[2] if pz[2] > 0 else float("nan"),
           "table_steps_per_cpu_s": tb[0] / tb[2] if tb[2] > 0 else float("nan"), "rounds": rounds}
    out["ratio"] = out["pettingzoo_steps_per_s"] / out["table_steps_per_s"]
    out["ratio_cpu"] = out["pettingzoo_steps_per_cpu_s"] / out["table_steps_per_cpu_s"]
    return out


def engine_steps_per_s(seconds: float, seed: int = 0) -> float:
    """The ceiling under every env figure: the bare engine (``Game.legal_actions()`` + a random
    choice + ``apply_unchecked``; new game when one ends), decisions per second."""
    from guandan.core.match import Game
    from guandan.core.rules import RuleSet

    rules = RuleSet.preset("aicomp")
    rng = random.Random(seed)
    game = Game(rules, seed=seed, max_games=1)
    n = 0
    start = time.perf_counter()
    deadline = start + seconds
    while True:
        for _ in range(64):
            if game.over:
                game = Game(rules, seed=rng.getrandbits(32), max_games=1)
            legal = game.legal_actions()
            game.apply_unchecked(legal[rng.randrange(len(legal))])
            n += 1
        now = time.perf_counter()
        if now >= deadline:
            return n / (now - start)


def vec_decisions_per_s(n_tables: int, backend: str, workers: int, seconds: float, groups: int = 1,
                        **table_kwargs: Any) -> float:
    """Decisions per second of a :class:`VecEnv` (abstract mode and default encoding unless
    ``table_kwargs`` say otherwise; in ``candidates`` mode the features ``[B, K, F]`` are read
    every step)."""
    return vec_run(n_tables, backend, workers, seconds, groups, **table_kwargs)["decisions_per_s"]


def vec_run(n_tables: int, backend: str, workers: int, seconds: float, groups: int = 1,
            **table_kwargs: Any) -> dict[str, Any]:
    """:func:`vec_decisions_per_s` with the CPU the stepping got: ``decisions_per_s`` (wall),
    ``cpu_s`` (CPU seconds used by the workers, or by this process for ``sync``, during the
    loop), ``wall_s``, ``decisions_per_cpu_s`` (the per-decision cost, independent of the share
    of the cores the machine's other load left to the run) and ``parent_cpu_s`` (CPU seconds this
    process used in the loop: choosing actions, checking them, copying results, waiting).

    ``groups=1``: lock-step :meth:`VecEnv.step` on every row. ``groups >= 2``: the pipelined
    path (:meth:`VecEnv.step_async` / :meth:`VecEnv.step_wait` per group: every group is started,
    then in turn each is waited for and restarted with actions chosen from its new masks, so the
    workers step the other groups meanwhile); decisions are counted as groups finish, and the
    groups in flight when time is up are waited for and counted.
    """
    with VecEnv(n_tables, backend=backend, n_workers=workers, seed=1, groups=groups, **table_kwargs) as vec:
        _, mask, _ = vec.reset()
        cand = table_kwargs.get("action_mode") == "candidates"
        rng = np.random.default_rng(0)
        n = 0
        cpu0 = sum(vec.worker_cpu_seconds())
        pcpu0 = time.process_time()
        start = time.perf_counter()
        if groups == 1:
            while time.perf_counter() - start < seconds:
                if cand:
                    vec.features()
                _, mask, _, _, _ = vec.step(vec.random_actions(mask, rng))
                n += n_tables
        else:
            sizes = []
            for g in range(groups):
                rows = vec.group_rows(g)
                sizes.append(rows.stop - rows.start)
                vec.step_async(vec.random_actions(mask[rows], rng), g)
            while time.perf_counter() - start < seconds:
                for g in range(groups):
                    _, m, _, _, _ = vec.step_wait(g)
                    if cand:
                        vec.features(g)
                    vec.step_async(vec.random_actions(m, rng), g)
                    n += sizes[g]
            for g in range(groups):
                vec.step_wait(g)
                n += sizes[g]
        wall = time.perf_counter() - start
        pcpu = time.process_time() - pcpu0
        cpu = sum(vec.worker_cpu_seconds()) - cpu0
    return {"decisions_per_s": n / wall, "wall_s": wall, "cpu_s": cpu,
            "decisions_per_cpu_s": n / cpu if cpu > 0 else None, "parent_cpu_s": pcpu, "groups": groups}


def rlcard_doudizhu_steps_per_s(seconds: float) -> float | None:
    """RLCard Doudizhu env steps/s with random legal actions, or ``None`` when not installed."""
    try:
        import rlcard
    except ImportError:
        return None
    env = rlcard.make("doudizhu", config={"seed": 0})
    rng = random.Random(0)
    n = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        state, _ = env.reset()
        while not env.is_over():
            state, _ = env.step(rng.choice(list(state["legal_actions"].keys())))
            n += 1
    return n / (time.perf_counter() - start)


def douzero_steps_per_s(seconds: float) -> float | None:
    """DouZero ``GameEnv`` steps/s with random agents, or ``None`` when not installed."""
    try:
        from douzero.env.game import GameEnv
    except ImportError:
        return None
    rng = random.Random(0)

    class _Random:
        def act(self, infoset: Any) -> Any:
            return rng.choice(infoset.legal_actions)

    players = {p: _Random() for p in ("landlord", "landlord_up", "landlord_down")}
    game = GameEnv(players)
    deck = [c for c in range(3, 15) for _ in range(4)] + [17] * 4 + [20, 30]
    n = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        rng.shuffle(deck)
        game.card_play_init({
            "landlord": sorted(deck[:20]), "landlord_up": sorted(deck[20:37]),
            "landlord_down": sorted(deck[37:54]), "three_landlord_cards": sorted(deck[17:20]),
        })
        while not game.game_over:
            game.step()
            n += 1
        game.reset()
    return n / (time.perf_counter() - start)


def _load_average() -> float | None:
    """The 1-minute load average (``os.getloadavg``), ``None`` where the system has none."""
    import os

    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return None


def run_rl_bench(
    seconds: float = 3.0,
    tables: int = 64,
    workers: int = 2,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Measure everything above; returns a JSON-ready dict (``env``, ``pettingzoo_steps_per_s``, ``vec``, ``references``,
    ``targets``, ``checks``, ``load_average``: the 1-minute load average at the start and the end,
    to report next to the figures).

    Raises:
        ValueError: ``seconds`` not > 0 or ``tables``/``workers`` < 1.
    """
    if not seconds > 0:
        raise ValueError(f"seconds must be > 0, not {seconds}")
    if tables < 1 or workers < 1:
        raise ValueError("tables and workers must be at least 1")
    say = progress or (lambda _label: None)
    load_start = _load_average()
    say("bare engine")
    engine = engine_steps_per_s(seconds)
    env_rows = []
    for obs in (None, "default"):
        say(f"env abstract / {obs or 'no encoding'} (reference paths)")
        env_rows.append({"action_mode": "abstract", "obs": obs or "none", "reference": True,
                         "steps_per_s": env_steps_per_s("abstract", obs, seconds, reference=True)})
    for mode in ("abstract", "candidates", "cards"):
        for obs in (None, "default", "danzero"):
            if mode != "abstract" and obs == "danzero":
                continue
            say(f"env {mode} / {obs or 'no encoding'}")
            env_rows.append({"action_mode": mode, "obs": obs or "none", "reference": False,
                             "steps_per_s": env_steps_per_s(mode, obs, seconds)})
    say("PettingZoo AEC (agent_iter / last / step), alternating with the Table loop")
    pair = pettingzoo_vs_table(2 * seconds)
    pz = pair["pettingzoo_steps_per_s"]
    say("VecEnv sync")
    vec_sync = vec_decisions_per_s(tables, "sync", 1, seconds)
    say("VecEnv 1 process")
    one = vec_run(tables, "process", 1, seconds)
    say(f"VecEnv {workers} processes, lock-step step()")
    lockstep = vec_run(tables, "process", workers, seconds)
    say(f"VecEnv {workers} processes, pipelined ({VEC_GROUPS} groups)")
    pipelined = vec_run(tables, "process", workers, seconds, groups=VEC_GROUPS)
    # the headline (checked against the target) is the faster of the two documented paths in this run
    many = pipelined if pipelined["decisions_per_s"] > lockstep["decisions_per_s"] else lockstep
    vec_proc = many["decisions_per_s"]
    path = VEC_PATH if many is pipelined else "step() (lock-step)"
    say(f"VecEnv {workers} processes, candidates + features")
    vec_cand = vec_decisions_per_s(tables, "process", workers, seconds, action_mode="candidates", max_candidates=64)
    say("RLCard Doudizhu")
    rlc = rlcard_doudizhu_steps_per_s(seconds)
    say("DouZero GameEnv")
    dz = douzero_steps_per_s(seconds)
    main = next(r["steps_per_s"] for r in env_rows
                if r["action_mode"] == "abstract" and r["obs"] == "default" and not r["reference"])
    before = next(r["steps_per_s"] for r in env_rows
                  if r["action_mode"] == "abstract" and r["obs"] == "default" and r["reference"])
    checks = {
        "single_core_target": main >= TARGET_STEPS_PER_S,
        "pettingzoo_target": pz >= TARGET_STEPS_PER_S,
        "pettingzoo_vs_table": pair["ratio"],
        "pettingzoo_vs_table_cpu": pair["ratio_cpu"],
        "pettingzoo_vs_rlcard_doudizhu": None if rlc is None else pz / rlc,
        "speedup_vs_reference": main / before,
        "vec_ratio": vec_proc / main,
        "vec_target": vec_proc >= TARGET_VEC_RATIO * TARGET_STEPS_PER_S,
        "vs_rlcard_doudizhu": None if rlc is None else main / rlc,
        "faster_than_rlcard": None if rlc is None else main > rlc,
        "vs_douzero": None if dz is None else main / dz,
    }
    return {
        "seconds": seconds,
        "load_average": {"start": load_start, "end": _load_average()},
        "engine_steps_per_s": engine,
        "env": env_rows,
        "pettingzoo_steps_per_s": pz,
        "pettingzoo": pair,
        "vec": {"tables": tables, "workers": workers, "groups": many["groups"], "path": path,
                "sync_decisions_per_s": vec_sync, "process_decisions_per_s": vec_proc,
                "process_candidates_decisions_per_s": vec_cand,
                "process_1_worker": one, "process_workers": many, "process_workers_lockstep": lockstep,
                "process_workers_pipelined": pipelined},
        "references": {
            "rlcard_doudizhu_steps_per_s": rlc,
            "rlcard_note": None if rlc is not None else "rlcard not installed (pip install rlcard)",
            "douzero_gameenv_steps_per_s": dz,
            "douzero_note": None if dz is not None else "douzero not installed (pip install douzero)",
        },
        "targets": {"single_core_steps_per_s": TARGET_STEPS_PER_S, "vec_ratio": TARGET_VEC_RATIO,
                    "vec_decisions_per_s": TARGET_VEC_RATIO * TARGET_STEPS_PER_S},
        "checks": checks,
    }
