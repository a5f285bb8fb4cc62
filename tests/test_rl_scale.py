"""guandan.rl.scale: self-play generation and duplicate-deal arenas on batches of tables, in this
process and over Ray actors (Ray tests skip with a message where Ray is not installed).

R35: a deal is won by 头游's team; samples carry the seat's final team reward (+1/-1).
"""

from __future__ import annotations

import pytest

np = pytest.importorskip("numpy", reason="guandan.rl needs the [rl] extra")

from guandan.rl import scale  # noqa: E402
from guandan.rl.abstract import N_ABSTRACT  # noqa: E402


def test_selfplay_local_returns_labelled_decisions():
    data = scale.generate_selfplay(steps=260, workers=2, tables=3, seed=4)
    n = len(data["action"])
    assert data["deals"] >= 2 and data["decisions"] == 2 * 3 * 260
    assert data["obs"].shape == (n, 774) and data["seat"].shape == (n,) and n > 100
    assert set(np.unique(data["ret"]).tolist()) == {-1.0, 1.0}
    assert ((0 <= data["action"]) & (data["action"] < N_ABSTRACT)).all()
    # partners share the reward sign within a deal; over the data both teams win somewhere
    assert set(np.unique(data["seat"]).tolist()) == {0, 1, 2, 3}


def test_arena_local_heuristic_beats_random():
    res = scale.arena(6, "heuristic", "random", workers=2, tables=4, seed=50)
    assert res["deals"] == 6 and res["games_played"] == 12
    assert res["win_rate"] >= 0.75, res


def test_arena_batches_callable_policies():
    """A callable policy is asked once per step for all of a worker's rows (never per move)."""
    sizes = []

    def lowest_id(obs, mask):
        sizes.append(len(obs))
        assert obs.shape[1] == 774 and mask.shape[1] == N_ABSTRACT and mask.any(axis=1).all()
        return mask.argmax(axis=1)

    res = scale.arena(4, lowest_id, "random", workers=1, tables=8, seed=7)
    assert res["games_played"] == 8
    assert max(sizes) > 1


def test_bad_counts_raise():
    with pytest.raises(ValueError):
        scale.arena(0, "random")
    with pytest.raises(ValueError):
        scale.generate_selfplay(0)


@pytest.mark.slow
def test_ray_actors_match_the_local_run():
    if not scale.ray_available():
        pytest.skip("Ray is not installed (pip install ray): the Ray scale-out test needs a local Ray instance")
    import ray

    try:
        local = scale.arena(4, "random", "random", workers=2, tables=4, seed=90)
        remote = scale.arena(4, "random", "random", workers=2, tables=4, seed=90, use_ray=True)
        assert remote == local
        a = scale.generate_selfplay(40, workers=2, tables=2, seed=1)
        b = scale.generate_selfplay(40, workers=2, tables=2, seed=1, use_ray=True)
        assert a["deals"] == b["deals"] and np.array_equal(a["action"], b["action"])
    finally:
        ray.shutdown()
