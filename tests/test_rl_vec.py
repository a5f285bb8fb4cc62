"""guandan.rl: VecEnv (sync and worker processes) and the Gymnasium single-seat wrapper.

Rewards are team-shared and zero-sum (R35): each finished episode pays +v to one team and -v
to the other.
"""

from __future__ import annotations

import pytest

np = pytest.importorskip("numpy", reason="guandan.rl needs the [rl] extra (numpy, pettingzoo, gymnasium)")
pytest.importorskip("gymnasium", reason="guandan.rl needs the [rl] extra")

from guandan.rl.gym_env import SingleSeatEnv  # noqa: E402
from guandan.rl.vec import VecEnv  # noqa: E402


def _run(vec, steps, seed=0):
    obs, mask, seat = vec.reset()
    assert obs.shape == (vec.n_tables, vec.obs_size) and mask.shape == (vec.n_tables, vec.n_actions)
    rng = np.random.default_rng(seed)
    dones = 0
    trace = []
    for _ in range(steps):
        assert mask.any(axis=1).all()
        a = vec.random_actions(mask, rng)
        assert mask[np.arange(vec.n_tables), a].all()
        obs, mask, seat, rew, done = vec.step(a)
        dones += int(done.sum())
        for b in np.flatnonzero(done):
            r = rew[b]
            assert r[0] == r[2] == -r[1] == -r[3] != 0  # team-shared, zero-sum
        assert not rew[~done].any()
        trace.append((obs.sum(), seat.tolist(), rew.sum(axis=0).tolist()))
    return dones, trace


def test_vecenv_sync_auto_resets_and_pays_team_rewards():
    with VecEnv(6, seed=1) as vec:
        dones, _ = _run(vec, 700)
    assert dones >= 6


def test_vecenv_process_backend_matches_sync():
    with VecEnv(4, seed=3) as a:
        _, ta = _run(a, 120)
    with VecEnv(4, backend="process", n_workers=2, seed=3) as b:
        _, tb = _run(b, 120)
    assert ta == tb


def test_vecenv_rejects_bad_input():
    with pytest.raises(ValueError, match="n_tables"):
        VecEnv(0)
    with pytest.raises(ValueError, match="backend"):
        VecEnv(2, backend="threads")
    with VecEnv(2) as vec:
        vec.reset()
        with pytest.raises(ValueError, match="expected 2 actions"):
            vec.step(np.zeros(3, int))


def test_single_seat_env_with_random_heuristic_and_callable_opponents():
    calls = []

    def first_legal(view):
        calls.append(view.seat)
        return view.legal_actions[0]

    env = SingleSeatEnv(seat=1, opponents=["random", "heuristic", first_legal], seed=5)
    obs, info = env.reset(seed=5)
    rng = np.random.default_rng(0)
    total, episodes = 0.0, 0
    for _ in range(3000):
        legal = np.flatnonzero(obs["action_mask"])
        assert len(legal) > 0
        obs, r, term, trunc, info = env.step(int(rng.choice(legal)))
        if term:
            assert r in (1.0, -1.0)
            total += r
            episodes += 1
            if episodes == 3:
                break
            obs, info = env.reset()
        else:
            assert r == 0.0
    assert episodes == 3 and set(calls) == {3}


def test_single_seat_env_rejects_bad_specs():
    with pytest.raises(ValueError, match="seat"):
        SingleSeatEnv(seat=4)
    with pytest.raises(ValueError, match="opponent"):
        SingleSeatEnv(opponents=42)


@pytest.mark.parametrize("backend", ["sync", "process"])
def test_vecenv_refuses_a_bad_batch_before_stepping_any_table(backend):
    """A masked, out-of-range or non-integer id in one row is a ValueError and no row moves (the
    process backend used to lose its worker on it: EOFError, and the VecEnv was dead)."""
    with VecEnv(3, backend=backend, n_workers=3, seed=7) as vec:
        with pytest.raises(ValueError, match="reset"):
            vec.step(np.zeros(3, np.int64))
        obs, mask, seat = vec.reset()
        good = vec.random_actions(mask, np.random.default_rng(0))
        masked = int(np.flatnonzero(~mask[2])[0])
        for bad, what in [(masked, "masked"), (vec.n_actions, "out of range"), (-1, "out of range")]:
            a = good.copy()
            a[2] = bad
            with pytest.raises(ValueError, match=what):
                vec.step(a)
        with pytest.raises(ValueError, match="integer"):
            vec.step(good.astype(np.float64) + 0.5)
        obs2, mask2, seat2, _, _ = vec.step(good)  # still alive, and nothing moved before
        ref = VecEnv(3, seed=7)
        ref.reset()
        robs, rmask, rseat, _, _ = ref.step(good)
        ref.close()
        assert (obs2 == robs).all() and (seat2 == rseat).all() and (mask2 == rmask).all()


def test_random_actions_uniform_over_each_rows_legal_ids():
    """Each row draws among its own legal ids only, every one of them, about equally often;
    a row with nothing legal gets 0."""
    with VecEnv(1, seed=0) as vec:
        mask = np.zeros((4, 9), bool)
        mask[0, [1, 4, 8]] = True
        mask[1, 0] = True
        mask[3, [2, 3]] = True  # row 2: nothing legal
        rng = np.random.default_rng(3)
        counts = np.zeros((4, 9), int)
        for _ in range(3000):
            a = vec.random_actions(mask, rng)
            counts[np.arange(4), a] += 1
        assert (counts[[0, 1, 3]][~mask[[0, 1, 3]]] == 0).all()
        assert counts[2, 0] == 3000
        assert counts[1, 0] == 3000
        assert all(850 < counts[0, k] < 1150 for k in (1, 4, 8))  # 1000 expected each, ~5 sigma
        assert all(1300 < counts[3, k] < 1700 for k in (2, 3))


def test_worker_cpu_seconds_counts_each_workers_stepping():
    with VecEnv(4, backend="process", n_workers=2, seed=0) as vec:
        _, mask, _ = vec.reset()
        before = vec.worker_cpu_seconds()
        assert len(before) == 2 and all(t >= 0 for t in before)
        rng = np.random.default_rng(0)
        for _ in range(300):
            _, mask, _, _, _ = vec.step(vec.random_actions(mask, rng))
        after = vec.worker_cpu_seconds()
        assert all(a > b for a, b in zip(after, before))  # both workers stepped their tables
    with pytest.raises(RuntimeError):
        vec.worker_cpu_seconds()


def test_tune_gc_freezes_and_raises_the_young_threshold():
    import gc

    from guandan.runtime.gctune import tune_gc

    old = gc.get_threshold()
    try:
        prev = tune_gc(12_345)
        assert prev == old
        assert gc.get_threshold() == (12_345, 50, 50)
        assert gc.get_freeze_count() > 0
        with pytest.raises(ValueError):
            tune_gc(0)
        with pytest.raises(ValueError):
            tune_gc(700, 10, 0)
        tune_gc(20_000, 50, 100)  # the server's thresholds (guandan.server.app.GC_THRESHOLDS)
        assert gc.get_threshold() == (20_000, 50, 100)
        # collect=False (forked workers): nothing is collected, what is alive is frozen as it is
        import weakref

        class Node:
            pass

        node = Node()
        node.self = node  # type: ignore[attr-defined]  # an unreachable cycle once ``node`` is gone
        ref = weakref.ref(node)
        del node
        tune_gc(700, 10, 10, collect=False)
        gc.collect()
        assert ref() is not None  # frozen as it was, never finalized
        gc.unfreeze()
        gc.collect()
        assert ref() is None  # an ordinary collection does find it
    finally:
        gc.unfreeze()
        gc.set_threshold(*old)


# -- pipelined stepping: step_async / step_wait per group ------------------------------------------

def _row_policy(seed, n):
    """Per-row random choice: row b's action depends only on its own generator and mask, so a
    row's trajectory is the same whichever way the rows are batched."""
    rngs = [np.random.default_rng(seed + b) for b in range(n)]

    def choose(mask, rows):
        return np.array([int(rngs[b].choice(np.flatnonzero(mask[k]))) for k, b in enumerate(range(rows.start, rows.stop))],
                        np.int64)

    return choose


def _lockstep_trace(n, steps, **kw):
    with VecEnv(n, **kw) as vec:
        obs, mask, seat = vec.reset()
        choose = _row_policy(11, n)
        rows = slice(0, n)
        out = [(obs, mask, seat)]
        for _ in range(steps):
            obs, mask, seat, rew, done = vec.step(choose(mask, rows))
            out.append((obs, mask, seat, rew, done))
    return out


def _pipelined_trace(n, steps, **kw):
    """The same decisions taken group by group: every group started, then each in turn waited
    for and restarted (the EnvPool-style loop of the VecEnv docstring); the rows are put back
    together per step number."""
    with VecEnv(n, **kw) as vec:
        obs, mask, seat = vec.reset()
        choose = _row_policy(11, n)
        G = vec.n_groups
        got = [[None] * G for _ in range(steps)]
        for g in range(G):
            rows = vec.group_rows(g)
            vec.step_async(choose(mask[rows], rows), g)
        for k in range(steps):
            for g in range(G):
                res = vec.step_wait(g)
                got[k][g] = res
                if k + 1 < steps:
                    vec.step_async(choose(res[1], vec.group_rows(g)), g)
    out = [(obs, mask, seat)]
    for parts in got:
        out.append(tuple(np.concatenate([p[i] for p in parts]) for i in range(5)))
    return out


@pytest.mark.parametrize("backend,groups,workers", [("sync", 2, 1), ("process", 2, 2), ("process", 3, 1),
                                                    ("process", 2, 3)])
def test_pipelined_groups_give_the_lockstep_trajectories(backend, groups, workers):
    """Each table's trajectory depends only on its seed and its actions: stepping groups with
    step_async/step_wait (overlapping with other groups in the process backend) gives, array for
    array, what step() gives on all rows; deals end and auto-reset on the way (R35: the finishing
    team +1, the other -1)."""
    n, steps = 7, 260
    ref = _lockstep_trace(n, steps, seed=5)
    got = _pipelined_trace(n, steps, seed=5, backend=backend, groups=groups, n_workers=workers)
    dones = 0
    for a, b in zip(ref, got):
        assert len(a) == len(b)
        for u, v in zip(a, b):
            assert u.dtype == v.dtype and np.array_equal(u, v)
        if len(a) == 5:
            rew, done = a[3], a[4]
            dones += int(done.sum())
            for r in rew[done]:
                assert r[0] == r[2] == -r[1] == -r[3] and abs(r[0]) == 1.0
            assert not rew[~done].any()
    assert dones >= 3  # auto-reset was exercised


def test_pipelined_runs_are_deterministic_for_a_seed():
    a = _pipelined_trace(6, 120, seed=9, backend="process", groups=2, n_workers=2)
    b = _pipelined_trace(6, 120, seed=9, backend="process", groups=2, n_workers=2)
    c = _pipelined_trace(6, 120, seed=10, backend="process", groups=2, n_workers=2)
    assert all(np.array_equal(u, v) for x, y in zip(a, b) for u, v in zip(x, y))
    assert not all(np.array_equal(u, v) for x, y in zip(a, c) for u, v in zip(x, y))


@pytest.mark.parametrize("backend", ["sync", "process"])
def test_step_async_and_step_wait_refuse_misuse(backend):
    with VecEnv(4, backend=backend, n_workers=2, groups=2, seed=2) as vec:
        assert [vec.group_rows(g) for g in range(2)] == [slice(0, 2), slice(2, 4)]
        with pytest.raises(ValueError, match="group"):
            vec.group_rows(2)
        with pytest.raises(ValueError, match="reset"):
            vec.step_async(np.zeros(2, np.int64), 0)
        obs, mask, seat = vec.reset()
        rng = np.random.default_rng(0)
        a1 = vec.random_actions(mask[2:], rng)
        with pytest.raises(RuntimeError, match="not stepping"):
            vec.step_wait(1)
        with pytest.raises(ValueError, match="expected 2 actions"):
            vec.step_async(np.zeros(4, np.int64), 1)
        bad = a1.copy()
        bad[1] = int(np.flatnonzero(~mask[3])[0])
        with pytest.raises(ValueError, match="table 3 is masked"):
            vec.step_async(bad, 1)
        vec.step_async(a1, 1)
        with pytest.raises(RuntimeError, match="already stepping"):
            vec.step_async(a1, 1)
        with pytest.raises(RuntimeError, match="step_wait"):
            vec.step(vec.random_actions(mask, rng))
        with pytest.raises(RuntimeError, match="step_wait"):
            vec.reset()
        with pytest.raises(RuntimeError, match="step_wait"):
            vec.worker_cpu_seconds()
        with pytest.raises(RuntimeError, match="not stepping"):
            vec.step_wait()  # None = every group, and group 0 was not started
        o1, m1, s1, r1, d1 = vec.step_wait(1)
        assert o1.shape == (2, vec.obs_size) and m1.shape == (2, vec.n_actions) and s1.shape == (2,)
        assert r1.shape == (2, 4) and d1.shape == (2,)
        # the lock-step call works again once nothing is in flight
        obs, mask, seat, _, _ = vec.step(vec.random_actions(np.concatenate([mask[:2], m1]), rng))
    with pytest.raises(ValueError, match="groups"):
        VecEnv(3, groups=4)
    with pytest.raises(ValueError, match="groups"):
        VecEnv(3, groups=0)


def test_candidates_features_per_group_match_the_whole_batch():
    with VecEnv(4, backend="process", n_workers=2, groups=2, seed=3, action_mode="candidates",
                max_candidates=48) as vec:
        obs, mask, seat = vec.reset()
        whole = vec.features()
        assert np.array_equal(np.concatenate([vec.features(0), vec.features(1)]), whole)
        vec.step_async(vec.random_actions(mask[2:], np.random.default_rng(1)), 1)
        with pytest.raises(RuntimeError, match="stepping"):
            vec.features(1)
        assert np.array_equal(vec.features(0), whole[:2])  # rows not in flight stay readable
        _, m1, _, _, _ = vec.step_wait(1)
        f1 = vec.features(1)
        assert f1.shape == (2, 48, vec.feat_shape[1]) and not f1[~m1].any()


class _FailingEncoder:
    """Wraps the default encoder and raises on its ``limit``-th observation: a bug inside a
    worker's stepping."""

    def __new__(cls, limit):
        from guandan.rl.encoders import DefaultEncoder

        class Failing(DefaultEncoder):
            calls = 0

            def encode(self, pub, seat, hand, out):
                type(self).calls += 1
                if type(self).calls >= limit:
                    raise ArithmeticError("injected encoder failure")
                super().encode(pub, seat, hand, out)

        return Failing()


@pytest.mark.skipif("fork" not in __import__("multiprocessing").get_all_start_methods(),
                    reason="the failing encoder is a local class: it reaches the workers by fork only")
def test_a_worker_error_closes_the_vecenv_and_reports_the_traceback():
    vec = VecEnv(4, backend="process", n_workers=2, groups=2, seed=1, obs=_FailingEncoder(40))
    procs = list(vec._procs)
    _, mask, _ = vec.reset()
    rng = np.random.default_rng(0)
    with pytest.raises(RuntimeError, match="(?s)worker . failed.*injected encoder failure"):
        for _ in range(100):
            _, mask, _, _, _ = vec.step(vec.random_actions(mask, rng))
    assert vec._closed
    for p in procs:
        p.join(timeout=10)
        assert not p.is_alive()
    with pytest.raises(RuntimeError, match="closed"):
        vec.step(vec.random_actions(mask, rng))
    vec.close()  # idempotent


def test_a_dead_worker_closes_the_vecenv():
    import os
    import signal

    vec = VecEnv(4, backend="process", n_workers=2, groups=2, seed=1)
    _, mask, _ = vec.reset()
    os.kill(vec._procs[1].pid, signal.SIGKILL)
    vec._procs[1].join(timeout=10)
    with pytest.raises(RuntimeError, match="worker 1 (died|is gone)"):
        vec.step_async(vec.random_actions(mask[:2], np.random.default_rng(0)), 0)
        vec.step_wait(0)
    assert vec._closed
    assert not any(p.is_alive() for p in vec._procs)


@pytest.mark.parametrize("reward", ["deal", "levels"])
def test_table_advance_is_apply_without_the_array(reward):
    """Table.advance (VecEnv's stepping call) returns seat 0's reward; apply() gives the four seats
    [r, -r, r, -r] (team-shared, zero-sum, R35), on twin tables stepped with the same actions."""
    import random

    from guandan.rl.table import Table

    a, b = Table(seed=21, reward=reward), Table(seed=21, reward=reward)
    rng = random.Random(4)
    ends = []
    while len(ends) < 4:
        ids = a.legal_ids()
        assert ids == b.legal_ids()
        act = ids[rng.randrange(len(ids))]
        r = a.advance(act)
        arr = b.apply(act)
        assert arr.dtype == np.float32 and arr.tolist() == [r, -r, r, -r]
        assert a.done == b.done
        if a.done:
            ends.append(r)
            a.reset()
            b.reset()
        else:
            assert r == 0.0
    assert all(r != 0 for r in ends)
    if reward == "deal":
        assert all(abs(r) == 1.0 for r in ends)
    else:
        assert all(abs(r) in (1.0, 2.0, 3.0) for r in ends)  # aicomp upgrade 3/2/1 for 1-2/1-3/1-4 (R35, AMB-16)


def test_worker_cpu_seconds_replies_are_never_read_as_errors():
    """The CPU-time answer is tagged: a bare packed double starting with the byte of b"e" was read
    as a worker error (about 1 call in 256; 1,200 readings here)."""
    with VecEnv(2, backend="process", n_workers=2, seed=0) as vec:
        _, mask, _ = vec.reset()
        rng = np.random.default_rng(0)
        last = [0.0, 0.0]
        for k in range(600):
            if k % 10 == 0:
                _, mask, _, _, _ = vec.step(vec.random_actions(mask, rng))
            now = vec.worker_cpu_seconds()
            assert all(b >= a >= 0 for a, b in zip(last, now))
            last = now
