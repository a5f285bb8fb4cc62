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

    from guandan.gctune import tune_gc

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
