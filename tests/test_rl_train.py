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
