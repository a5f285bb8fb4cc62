"""guandan.train.dmc: the Deep Monte-Carlo example learns (loss falls), checkpoints round-trip,
and the duplicate-deal evaluation counts wins by 头游's team (R35)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch", reason="the training example needs the [train] extra (PyTorch)")
np = pytest.importorskip("numpy")

from guandan.rl.abstract import N_ABSTRACT  # noqa: E402
from guandan.train.dmc import DMCConfig, DMCTrainer, QNet, evaluate, id_features, load_policy  # noqa: E402


def test_tiny_training_run_loss_falls():
    """Monte-Carlo targets of 1,024 real decisions; 25 passes over them must cut the loss."""
    tr = DMCTrainer(DMCConfig(tables=8, seed=3, hidden=(128, 64)))
    obs, act, ret = tr.collect_samples(1024)
    assert set(ret.tolist()) <= {1.0, -1.0} and obs.shape == (1024, 774)
    assert ((0 <= act) & (act < N_ABSTRACT)).all()
    epochs = []
    for _ in range(25):
        perm = torch.randperm(1024)
        losses = [tr.fit_batch(obs[perm[i:i + 256]], act[perm[i:i + 256]], ret[perm[i:i + 256]])
                  for i in range(0, 1024, 256)]
        epochs.append(sum(losses) / len(losses))
    assert epochs[-1] < 0.6 * epochs[0], epochs


def test_training_loop_checkpoint_round_trip(tmp_path):
    tr = DMCTrainer(DMCConfig(tables=4, seed=1, hidden=(64,), batch_size=64))
    ticks = []
    tr.train(3.0, on_tick=lambda t: ticks.append(t.decisions), tick_s=0.5)
    assert tr.decisions > 0 and ticks
    path = tmp_path / "dmc.pt"
    tr.save(path)
    model = load_policy(path)
    x = torch.rand(3, 774)
    assert torch.allclose(model(x), tr.model(x))
    other = DMCTrainer(DMCConfig(tables=2, seed=9, hidden=(64,)))
    other.load(path)
    assert other.decisions == tr.decisions and torch.allclose(other.model(x), tr.model(x))


def test_q_network_scores_only_legal_ids():
    net = QNet(774, (32,))
    mask = np.zeros((2, N_ABSTRACT), bool)
    mask[0, [1, 5]] = True
    mask[1, [0]] = True
    q = net.legal_q(torch.rand(2, 774), mask)
    assert np.isfinite(q[mask]).all() and np.isneginf(q[~mask]).all()
    full = net(torch.rand(1, 774))
    assert full.shape == (1, N_ABSTRACT)
    f = id_features()
    assert f.shape == (N_ABSTRACT, 60) and (f[:, :13].sum(axis=1) == 1).all()


def test_evaluate_plays_duplicate_deals():
    res = evaluate(QNet(774, (32,)), deals=3, seed=5)
    assert res["games_played"] == 6 and 0 <= res["won"] <= 6
    assert res["win_rate"] == res["won"] / 6
    assert res["both_won"] + res["both_lost"] <= 3


def test_bad_config_is_rejected():
    with pytest.raises(ValueError, match="opponent"):
        DMCConfig(opponent="heuristic")
    with pytest.raises(ValueError, match="epsilon"):
        DMCConfig(epsilon=2.0)


def test_teacher_makes_the_scheduled_share_of_learner_decisions():
    """teacher_p = 1: every learner decision is the teacher's play mapped to its abstract id
    (legal, so the env accepts it); teacher_p = 0: none; train() lowers the share to 0 after
    teacher_minutes."""
    tr = DMCTrainer(DMCConfig(tables=3, seed=2, hidden=(32,), teacher="heuristic", teacher_start=1.0,
                              teacher_minutes=0.001, epsilon=0.0))
    calls = []
    real = tr.teacher.act
    tr.teacher.act = lambda view: calls.append(view.seat) or real(view)
    learner_decisions = 0
    for _ in range(150):
        learner_decisions += sum(t.to_act in tr.learners for t in tr.tables)
        tr.step_tables()
    assert learner_decisions > 0 and len(calls) == learner_decisions
    assert set(calls) <= {0, 2}
    tr.train(0.5)
    assert tr.teacher_p == 0.0 and tr.taught_s > 0
    calls.clear()
    for _ in range(50):
        tr.step_tables()
    assert calls == []
    with pytest.raises(ValueError, match="teacher"):
        DMCConfig(teacher="search")


def test_schedules_fall_linearly_and_stay_at_their_end_values():
    """Teacher 0.5 -> 0 over 20 min; ε 0.1 -> 0.01 and lr 1e-3 -> 1e-4 over 10 min."""
    cfg = DMCConfig(teacher="heuristic", teacher_start=0.5, teacher_minutes=20, epsilon=0.1, epsilon_end=0.01,
                    lr=1e-3, lr_end=1e-4, decay_minutes=10)
    assert cfg.schedule(0.0) == pytest.approx((0.5, 0.1, 1e-3))
    assert cfg.schedule(300.0) == pytest.approx((0.375, 0.055, 5.5e-4))
    assert cfg.schedule(600.0) == pytest.approx((0.25, 0.01, 1e-4))
    assert cfg.schedule(3600.0) == pytest.approx((0.0, 0.01, 1e-4))
    const = DMCConfig(epsilon=0.2, lr=3e-4)  # no end values: constant; no teacher: share 0
    assert const.schedule(3600.0) == pytest.approx((0.0, 0.2, 3e-4))
    for bad in (dict(epsilon_end=1.5), dict(lr_end=0.0), dict(decay_minutes=0), dict(actors=-1)):
        with pytest.raises(ValueError):
            DMCConfig(**bad)


def test_train_applies_the_schedule_and_excludes_time_spent_in_on_tick():
    import time

    tr = DMCTrainer(DMCConfig(tables=2, seed=4, hidden=(32,), batch_size=32, epsilon=0.3, epsilon_end=0.05,
                              lr=1e-3, lr_end=2e-4, decay_minutes=0.001))
    sleeps = []
    t0 = time.monotonic()
    tr.train(0.5, on_tick=lambda t: sleeps.append(time.sleep(0.4)), tick_s=0.1)
    wall = time.monotonic() - t0
    # past decay_minutes (0.06 s): the end values, in the optimiser too
    assert tr.epsilon == pytest.approx(0.05) and tr.opt.param_groups[0]["lr"] == pytest.approx(2e-4)
    assert sleeps and tr.run_s >= 0.5 and tr.taught_s == tr.run_s
    assert tr.run_s <= wall - 0.4 * len(sleeps) + 0.05  # the sleeps in on_tick are not training time


def test_actor_body_sends_labelled_samples_of_its_own_tables():
    """_actor_main run in a thread with in-process queue/events: chunks of legal ids labelled
    with the learning team's deal reward (±1, R35), counted decisions and deals."""
    import queue
    import threading

    from guandan.train.dmc import _actor_main

    cfg = DMCConfig(tables=4, seed=6, hidden=(32,), batch_size=128, teacher="heuristic")
    model = QNet(774, (32,))
    out: queue.Queue = queue.Queue()
    run, stop = threading.Event(), threading.Event()
    run.set()
    shared = [0.5, 0.1]
    th = threading.Thread(target=_actor_main, args=(dataclasses_asdict(cfg), 1, model, out, run, stop, shared))
    th.start()
    obs, act, ret, decisions, deals = out.get(timeout=120)
    stop.set()
    th.join(60)
    out_n = len(act)
    assert out_n >= 64 and obs.shape == (out_n, 774) and obs.dtype == np.float32
    assert set(ret.tolist()) <= {1.0, -1.0}
    assert ((0 <= act) & (act < N_ABSTRACT)).all()
    assert deals >= 1 and decisions > out_n  # the random seats' decisions are counted too


def test_actor_processes_feed_the_learner(tmp_path):
    """actors=1: a spawned process steps its own tables with the shared weights; its samples
    reach the learner (more decisions than the learner's own tables made), and close() ends it."""
    tr = DMCTrainer(DMCConfig(tables=2, seed=8, hidden=(32,), batch_size=64, actors=1))
    own = []
    real_step = tr.step_tables
    tr.step_tables = lambda: own.append(len(tr.tables)) or real_step()
    for _ in range(120):  # the spawned actor imports PyTorch first: wait for its samples, not a fixed time
        tr.train(1.0)
        if tr.decisions > sum(own):
            break
    procs = list(tr._procs)
    assert procs and all(p.is_alive() for p in procs)
    assert tr.decisions > sum(own)  # decisions from the actor's tables were added
    assert tr.model.obs_in.weight.is_shared()
    tr.close()
    assert not any(p.is_alive() for p in procs) and tr._procs == []


def test_a_dead_actor_process_stops_training_with_an_error():
    tr = DMCTrainer(DMCConfig(tables=2, seed=8, hidden=(32,), batch_size=64, actors=1))
    tr.train(0.2)
    (proc,) = tr._procs
    proc.kill()
    proc.join(30)
    with pytest.raises(RuntimeError, match="actor process ended"):
        tr.train(5.0)
    assert tr._procs == []


def dataclasses_asdict(cfg):
    from dataclasses import asdict

    return asdict(cfg)
