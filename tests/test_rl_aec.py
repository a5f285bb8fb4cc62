"""The PettingZoo AEC path returns what the fast path (Table / VecEnv) returns, and its per-seat
observation cache is never stale (issue 26, item 18)."""

from __future__ import annotations

import random

import pytest

np = pytest.importorskip("numpy", reason="guandan.rl needs the [rl] extra (numpy, pettingzoo, gymnasium)")
pytest.importorskip("pettingzoo", reason="guandan.rl needs the [rl] extra")

import guandan.rl as rl  # noqa: E402
from guandan.rl.aec import AGENTS, GuandanAEC  # noqa: E402
from guandan.rl.table import Table  # noqa: E402
from guandan.rl.vec import VecEnv  # noqa: E402


def _fresh(table: Table, seat: int) -> tuple[np.ndarray, np.ndarray]:
    """The observation and mask of ``seat`` built from scratch: the reference encoder on the
    table's state, the mask from a new bool array (zeros unless ``seat`` is to act)."""
    obs = np.empty(table.obs_size, np.float32)
    table.encoder.encode_reference(table.pub, seat, table.game.deal.hands[seat], obs)
    mask = np.zeros(table.n_actions, bool)
    if table.to_act == seat:
        table.mask(mask)
    return obs, mask


@pytest.mark.parametrize("preset", ["aicomp", "official"])
def test_pettingzoo_and_fast_path_give_identical_observations_and_masks(preset):
    seed = 11
    e = rl.env(preset=preset)
    e.reset(seed=seed)
    raw = e.unwrapped
    vec = VecEnv(1, backend="sync", seed=seed, preset=preset)
    vobs, vmask, vseat = vec.reset()
    rng = random.Random(5)
    phases: set[str] = set()
    decisions = deals = 0
    while decisions < 1500:
        agent = e.agent_selection
        ob, _, term, trunc, info = e.last()
        if term or trunc:
            e.step(None)
            if not e.agents:
                e.reset()  # next deal of the same game, with its tribute (as VecEnv's auto-reset)
                deals += 1
            continue
        phases.add(raw.table.game.phase)
        seat = AGENTS.index(agent)
        assert seat == int(vseat[0]) and info["seat"] == seat
        assert ob["observation"].dtype == np.float32 and ob["action_mask"].dtype == np.int8
        np.testing.assert_array_equal(ob["observation"], vobs[0])
        np.testing.assert_array_equal(ob["action_mask"].astype(bool), vmask[0])
        for other in range(4):  # the seats not to act: fresh-built observations, all-false masks
            o = e.observe(AGENTS[other])
            want_obs, want_mask = _fresh(raw.table, other)
            np.testing.assert_array_equal(o["observation"], want_obs)
            np.testing.assert_array_equal(o["action_mask"].astype(bool), want_mask)
            assert o["action_mask"].any() == (other == seat)
        ids = np.flatnonzero(ob["action_mask"])
        a = int(ids[rng.randrange(len(ids))])
        e.step(a)
        vobs, vmask, vseat, vrew, vdone = vec.step(np.array([a]))
        decisions += 1
        if vdone[0]:
            assert all(e.terminations.values())
            assert [e.rewards[x] for x in AGENTS] == vrew[0].tolist() != [0.0] * 4
        else:
            assert not any(e.terminations.values()) and not vrew[0].any()
    vec.close()
    assert deals >= 3 and {"tribute", "play"} <= phases  # tribute deals were compared too


def test_cached_observation_is_never_stale():
    e = rl.env()
    e.reset(seed=3)
    raw = e.unwrapped
    rng = random.Random(1)
    checked = 0
    for _ in range(400):
        if not e.agents:
            e.reset()
        ob, _, term, trunc, _ = e.last()
        if term or trunc:
            e.step(None)
            continue
        acting = AGENTS.index(e.agent_selection)
        watcher = (acting + 1) % 4
        before = e.observe(AGENTS[watcher])  # cached now
        again = e.observe(AGENTS[watcher])  # a cache hit: equal values, new arrays
        for k in before:
            np.testing.assert_array_equal(before[k], again[k])
            assert before[k] is not again[k]
        before["observation"][:] = -7.0  # what a caller does to a returned array never reaches the cache
        before["action_mask"][:] = 1
        ids = np.flatnonzero(ob["action_mask"])
        e.step(int(ids[rng.randrange(len(ids))]))  # another agent's step
        after = e.observe(AGENTS[watcher])
        want_obs, want_mask = _fresh(raw.table, watcher)
        np.testing.assert_array_equal(after["observation"], want_obs)
        np.testing.assert_array_equal(after["action_mask"].astype(bool), want_mask)
        checked += 1
    assert checked > 300


def test_cache_after_reset_and_clone_and_candidates_hits():
    e = raw = GuandanAEC(action_mode="candidates", max_candidates=64)
    raw.reset(seed=2)
    agent = raw.agent_selection
    seat = AGENTS.index(agent)
    first = raw.observe(agent)
    hit = raw.observe(agent)
    for k in ("observation", "action_mask", "candidates"):
        np.testing.assert_array_equal(first[k], hit[k])
    want = np.zeros_like(first["candidates"])
    raw.table.candidate_features(want)
    np.testing.assert_array_equal(hit["candidates"], want)
    assert hit["action_mask"].sum() == len(raw.table.candidates()) > 0
    c = e.clone()  # the clone has its own cache and table: it observes its own state
    raw.step(0)
    np.testing.assert_array_equal(c.observe(agent)["observation"], first["observation"])
    np.testing.assert_array_equal(raw.observe(agent)["observation"], _fresh(raw.table, seat)[0])
    raw.reset(seed=9)  # a new game: nothing from before is returned
    for a in AGENTS:
        np.testing.assert_array_equal(raw.observe(a)["observation"], _fresh(raw.table, AGENTS.index(a))[0])


def test_wrappers_keep_pettingzoo_checks():
    from pettingzoo.utils.wrappers import AssertOutOfBoundsWrapper, OrderEnforcingWrapper

    e = rl.env()
    assert isinstance(e, OrderEnforcingWrapper) and isinstance(e.env, AssertOutOfBoundsWrapper)
    with pytest.raises(Exception, match="reset"):
        e.agent_iter()
    assert str(e) == "guandan_v1"
    with pytest.raises(AttributeError, match="cannot be accessed before reset"):
        _ = e.agent_selection
    with pytest.raises(AttributeError, match="cannot be accessed before reset"):
        _ = e.infos
    e.reset(seed=1)
    assert e.agents == list(AGENTS) and e.agent_selection in AGENTS
    ob, *_ = e.last()
    masked = int(np.flatnonzero(ob["action_mask"] == 0)[0])
    for bad in (-1, e.unwrapped.table.n_actions, 1.5, "3"):
        with pytest.raises(AssertionError, match="action is not in action space"):
            e.step(bad)
    with pytest.raises(ValueError, match="masked"):
        e.step(masked)
    e.step(np.int64(int(np.flatnonzero(ob["action_mask"])[0])))  # NumPy integers still pass the check
    assert e.unwrapped.table.game.deal.history
    it = iter(e.agent_iter(max_iter=3))
    assert next(it) == e.agent_selection
    with pytest.raises(AssertionError, match="need to call step"):
        next(it)  # no step() since the last agent was handed out
