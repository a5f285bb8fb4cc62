"""Learned evaluation: encoders (documented layout, known values), NumPy inference, shipped
weights without PyTorch, NumPy-vs-PyTorch agreement and a tiny training run that learns.

Known values come from the layouts in :mod:`guandan.agents.nets` and the level order of
docs/rules.md R9 (level 2: 3 is the lowest rank, A is below the level rank 2, then SJ, BJ) and R8
(the wild is the heart of the level rank).
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

np = pytest.importorskip("numpy", reason="the learned bots need NumPy (pip install -e '.[bots]')")

from guandan.agents.nets import (  # noqa: E402
    ACTION_DIM,
    MLP,
    STATE_DIM,
    VIEW_DIM,
    WEIGHTS_DIR,
    PolicyAgent,
    PolicyNet,
    ValueNet,
    encode_actions,
    encode_state,
    encode_view,
)
from guandan.core.cards import parse_cards  # noqa: E402
from guandan.core.deal import Deal  # noqa: E402
from guandan.core.match import Game  # noqa: E402
from guandan.core.rules import RuleSet  # noqa: E402
from guandan.core.views import seat_view  # noqa: E402


def _ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def _torch():  # type: ignore[no-untyped-def]
    """PyTorch, or a skip (a failure under CI=true: CI installs the CPU build, .ci/run)."""
    try:
        import torch
    except ImportError:
        if _ci():
            pytest.fail("PyTorch missing under CI (.ci/run installs torch==2.13.0)", pytrace=False)
        pytest.skip("PyTorch not installed: pip install torch==2.13.0 (the [train] extra)")
    return torch


# Level 2 (rank index 0): wild = 2H (face 1). Seat 0: 3S 3S 2H BJ; seat 1: AS; seat 2: 5D;
# seat 3: SJ 2S. Seat 0 leads.
HANDS = [parse_cards("3S 3S 2H BJ"), parse_cards("AS"), parse_cards("5D"), parse_cards("SJ 2S")]


def _deal() -> Deal:
    return Deal(RuleSet.official(), 0, HANDS, random.Random(0), first_leader=0)


def test_dimensions_match_the_documented_layout() -> None:
    assert (STATE_DIM, VIEW_DIM, ACTION_DIM) == (340, 124, 48)


def test_state_encoding_known_position_leading() -> None:
    d = _deal()
    x = encode_state(d, pov=1, levels=(3, 5))
    assert x.shape == (340,) and x.dtype == np.float32
    expected = np.zeros(340, np.float32)
    # pov 1: seat 1 is relative 0, seat 2 relative 1, seat 3 relative 2, seat 0 relative 3
    expected[0 + 48] = 0.5  # AS is face 48
    expected[0 + 54 + 11] = 0.25  # A at level 2 has strength position 11 (R9)
    expected[0 + 70] = 1 / 27
    expected[72 + 15] = 0.5  # 5D is face 15
    expected[72 + 54 + 2] = 0.25  # 5 -> position 2 (3 is 0, 4 is 1)
    expected[72 + 70] = 1 / 27
    expected[144 + 52] = 0.5  # SJ
    expected[144 + 0] = 0.5  # 2S: the level rank, not wild
    expected[144 + 54 + 13] = 0.25  # SJ position 13
    expected[144 + 54 + 12] = 0.25  # the level rank is position 12
    expected[144 + 70] = 2 / 27
    expected[216 + 4] = 1.0  # two 3S
    expected[216 + 1] = 0.5  # 2H, the wild (R8)
    expected[216 + 53] = 0.5  # BJ
    expected[216 + 54 + 0] = 0.5  # two 3s at position 0
    expected[216 + 54 + 14] = 0.25  # BJ position 14
    expected[216 + 69] = 0.5  # one wild
    expected[216 + 70] = 4 / 27
    expected[288 + 0] = 1.0  # level 2
    expected[301 + 10] = 1.0  # no play to beat: leading
    expected[318 + 3] = 1.0  # seat 0 (relative 3) to act
    expected[338] = 5 / 12  # own team (seats 1/3) at level 7 (index 5)
    expected[339] = 3 / 12
    np.testing.assert_allclose(x, expected, atol=1e-6)


def test_state_encoding_after_a_play() -> None:
    d = _deal()
    d.apply(("single", 14, (53,)))  # seat 0 leads BJ
    x = encode_state(d, pov=2)
    # play to beat: a single, key = position 14 / 14, one card, by seat 0 = relative 2 of pov 2
    assert x[301 + 0] == 1.0 and x[301 + 10] == 0.0
    assert x[312] == pytest.approx(1.0)
    assert x[313] == pytest.approx(0.1)
    assert x[314 + 2] == 1.0
    assert x[318 + 3] == 1.0  # seat 1 acts: relative 3 of pov 2
    assert x[322 + 14] == pytest.approx(0.125)  # one BJ played
    assert x[337] == 0.0
    assert x[2 * 72 + 70] == pytest.approx(3 / 27)  # seat 0 holds 3 cards now
    assert x[338] == 0.0 and x[339] == 0.0  # levels default to the deal's level (2 = index 0)
    d.apply(("pass", None, ()))
    assert encode_state(d, pov=2)[337] == pytest.approx(1 / 3)


def test_state_encoding_rejects_bad_pov() -> None:
    with pytest.raises(ValueError, match="pov"):
        encode_state(_deal(), pov=4)


def test_view_and_action_encodings_known_position() -> None:
    game = Game(RuleSet.official(), seed=1, hands=HANDS, first_leader=0)
    game.apply(("single", 1, (4,)))  # seat 0 leads 3S
    view = seat_view(game, 1)
    assert [a[0] for a in view.legal_actions] == ["pass", "single"]
    v = encode_view(view)
    assert v.shape == (124,) and v.dtype == np.float32
    assert v[48] == 0.5 and v[54 + 11] == 0.25 and v[69] == 0.0
    # unseen: 2 per face, minus the own AS, minus the played 3S: position 0 (rank 3) holds 7 of 8
    assert v[70 + 0] == pytest.approx(7 / 8)
    assert v[70 + 11] == pytest.approx(7 / 8)  # 8 aces, one in hand
    assert v[70 + 12] == pytest.approx(8 / 8)  # level rank: all 8 twos unseen, wilds included
    assert v[70 + 13] == pytest.approx(2 / 8)
    assert v[85] == pytest.approx(1 / 27) and v[86] == pytest.approx(2 / 27) and v[87] == pytest.approx(3 / 27)
    assert v[92 + 0] == 1.0
    assert v[105 + 0] == 1.0 and v[116] == 0.0 and v[117] == pytest.approx(0.1)
    assert v[118 + 3] == 1.0  # seat 0 is relative 3 of seat 1
    a = encode_actions(view, view.legal_actions)
    assert a.shape == (2, 48) and a.dtype == np.float32
    pass_row, ace_row = a
    assert pass_row[10] == 1.0 and pass_row[29] == pytest.approx(1 / 27) and pass_row[32 + 11] == 0.25
    assert pass_row[:10].sum() == 0.0 and pass_row[30] == 0.0
    assert ace_row[0] == 1.0 and ace_row[11] == pytest.approx(11 / 14) and ace_row[12] == pytest.approx(0.1)
    assert ace_row[14 + 11] == 0.25 and ace_row[29] == 0.0 and ace_row[30] == 1.0 and ace_row[31] == 0.0
    assert ace_row[32:47].sum() == 0.0 and ace_row[47] == 0.0


def test_action_encoding_bomb_and_partner_flags() -> None:
    hands = [parse_cards("4S"), parse_cards("9S 9H 9C 9D 3S"), parse_cards("KS"), parse_cards("QS")]
    game = Game(RuleSet.official(), seed=1, hands=hands, first_leader=3)
    game.apply(("single", 10, (40,)))  # seat 3 leads QS
    game.apply(("pass", None, ()))  # seat 0
    view = seat_view(game, 1)
    bomb = next(a for a in view.legal_actions if a[0] == "bomb")
    row = encode_actions(view, [bomb])[0]
    assert row[7] == 1.0 and row[31] == 1.0
    assert row[11] == pytest.approx(6 / 1000)  # 4-card bomb of 9s at level 2: power = position 6 (R9, R24)
    assert row[47] == 1.0  # seat 3 is seat 1's partner (R2): the bomb plays over the partner
    game2 = Game(RuleSet.official(), seed=1, hands=hands, first_leader=0)
    game2.apply(("single", 2, (8,)))  # seat 0, an opponent of seat 1, leads 4S
    view2 = seat_view(game2, 1)
    bomb2 = next(a for a in view2.legal_actions if a[0] == "bomb")
    assert encode_actions(view2, [bomb2])[0][47] == 0.0


def test_tribute_actions_are_not_encoded() -> None:
    view = seat_view(Game(RuleSet.official(), seed=3), 0)
    with pytest.raises(ValueError, match="play-phase"):
        encode_actions(view, [("tribute", 12, (48,))])


def _random_mlp(sizes: list[int], seed: int, kind: str) -> MLP:
    g = np.random.default_rng(seed)
    ws = [g.normal(0, 0.3, (a, b)).astype(np.float32) for a, b in zip(sizes[:-1], sizes[1:])]
    bs = [g.normal(0, 0.1, b).astype(np.float32) for b in sizes[1:]]
    return MLP(ws, bs, {"kind": kind})


def test_mlp_forward_save_load_and_policy_split(tmp_path: Path) -> None:
    m = _random_mlp([VIEW_DIM + ACTION_DIM, 16, 8, 1], 1, "policy")
    x = np.random.default_rng(2).random((5, VIEW_DIM + ACTION_DIM), dtype=np.float32)
    h = np.maximum(x @ m.weights[0] + m.biases[0], 0)
    h = np.maximum(h @ m.weights[1] + m.biases[1], 0)
    ref = h @ m.weights[2] + m.biases[2]
    np.testing.assert_allclose(m.forward(x), ref, rtol=1e-5, atol=1e-6)
    m.save(tmp_path / "p.npz")
    m2 = MLP.load(tmp_path / "p.npz", kind="policy")
    np.testing.assert_array_equal(m2.weights[1], m.weights[1])
    with pytest.raises(ValueError, match="expected 'value'"):
        MLP.load(tmp_path / "p.npz", kind="value")
    net = PolicyNet(m2)
    # the split first layer (view part once, action part per candidate) equals the full forward
    v = x[0, :VIEW_DIM]
    acts = x[:, VIEW_DIM:]
    full = m2.forward(np.concatenate([np.tile(v, (5, 1)), acts], axis=1))[:, 0]
    np.testing.assert_allclose(net.logits_from_features(v, acts), full, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="policy network"):
        PolicyNet(_random_mlp([10, 4, 1], 0, "policy"))
    with pytest.raises(ValueError, match="value network"):
        ValueNet(_random_mlp([STATE_DIM, 4, 1], 0, "value"))


def test_value_net_finished_deal_is_exact() -> None:
    net = ValueNet(_random_mlp([STATE_DIM, 8, 2], 3, "value"))
    d = _deal()
    assert 0.0 < net.win_probability(d, 0) < 1.0
    # seat 0 plays out: BJ, (passes), then 3S 3S 2H cannot be one play; use a one-card deal
    one = Deal(RuleSet.official(), 0, [parse_cards("AS"), parse_cards("3S"), parse_cards("AH"), parse_cards("4S")],
               random.Random(0), first_leader=0)
    one.apply(("single", 12, (48,)))  # seat 0 out
    for _ in range(3):
        one.apply(("pass", None, ()))
    one.apply(("single", 12, (49,)))  # partner (接风, R30) out: 1-2 for team 0
    assert one.result is not None and one.result.result == "1-2"
    assert net.win_probability(one, 0) == 1.0 and net.win_probability(one, 1) == 0.0
    assert net.evaluate(one, 2) == pytest.approx(1.0) and net.evaluate(one, 3) == pytest.approx(-1.0)


def test_shipped_weights_load_with_documented_shapes() -> None:
    v = ValueNet.load()
    p = PolicyNet.load()
    assert v.mlp.weights[0].shape[0] == STATE_DIM and v.mlp.weights[-1].shape[1] == 2
    assert p.mlp.weights[0].shape[0] == VIEW_DIM + ACTION_DIM
    for name in ("value.npz", "policy.npz"):
        assert (WEIGHTS_DIR / name).stat().st_size < 3_000_000  # "a few MB at most"
    assert (WEIGHTS_DIR / "MODEL_CARD.md").exists()
    for meta in (v.mlp.meta, p.mlp.meta):
        assert meta["command"].startswith("guandan train") and "seed" in meta and meta["games"] > 0


def test_shipped_weights_play_a_game_without_pytorch() -> None:
    """A subprocess where importing torch fails plays a complete deal with the policy bot and
    the value net, and never imports torch."""
    code = textwrap.dedent(
        """
        import sys
        class Block:
            def find_spec(self, name, path=None, target=None):
                if name == "torch" or name.startswith("torch."):
                    raise ImportError("torch is blocked in this test")
                return None
        sys.meta_path.insert(0, Block())
        from guandan.agents.nets import shipped_value_net
        from guandan.agents.registry import make_agent
        from guandan.core.match import Game
        from guandan.core.views import seat_view
        game = Game(seed=5)
        agents = [make_agent("policy", s) for s in range(4)]
        vn = shipped_value_net()
        n = 0
        while not game.settlements:
            s = game.to_act()
            p = vn.win_probability(game.deal, s, game.score.levels)
            assert 0.0 <= p <= 1.0
            game.apply(agents[s].act(seat_view(game, s)), s)
            n += 1
        assert "torch" not in sys.modules
        print("OK", n, game.settlements[0].result)
        """
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("OK")


def test_policy_agent_without_numpy_reports_how_to_install() -> None:
    code = textwrap.dedent(
        """
        import sys
        class Block:
            def find_spec(self, name, path=None, target=None):
                if name == "numpy" or name.startswith("numpy."):
                    raise ImportError("numpy is blocked in this test")
                return None
        sys.meta_path.insert(0, Block())
        from guandan.agents.registry import make_agent
        make_agent("heuristic", 0)
        try:
            make_agent("policy", 0)
        except ValueError as e:
            print("ERR", e)
        """
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "ERR agent 'policy'" in r.stdout and "pip install -e '.[bots]'" in r.stdout


def test_numpy_inference_matches_pytorch() -> None:
    torch = _torch()
    from guandan.train.trainer import build_model, load_mlp_into, to_mlp

    torch.manual_seed(0)
    for n_in, hidden, n_out in ((STATE_DIM, (32, 16), 2), (VIEW_DIM + ACTION_DIM, (24,), 1)):
        model = build_model(n_in, hidden, n_out)
        mlp = to_mlp(model, {"kind": "x"})
        x = torch.rand(7, n_in)
        with torch.no_grad():
            ref = model(x).numpy()
        np.testing.assert_allclose(mlp.forward(x.numpy()), ref, rtol=1e-5, atol=1e-5)
        other = build_model(n_in, hidden, n_out)
        load_mlp_into(other, mlp)
        with torch.no_grad():
            np.testing.assert_allclose(other(x).numpy(), ref, rtol=1e-6, atol=1e-6)
    # the shipped weights, through the view/action split, agree with PyTorch too
    p = PolicyNet.load()
    model = build_model(VIEW_DIM + ACTION_DIM, tuple(w.shape[1] for w in p.mlp.weights[:-1]), 1)
    load_mlp_into(model, p.mlp)
    game = Game(seed=11)
    while game.phase != "play":
        game.apply(game.legal_actions()[0])
    view = seat_view(game, game.to_act())
    v, a = encode_view(view), encode_actions(view, view.legal_actions)
    with torch.no_grad():
        ref = model(torch.from_numpy(np.concatenate([np.tile(v, (len(a), 1)), a], axis=1))).numpy()[:, 0]
    np.testing.assert_allclose(p.logits_from_features(v, a), ref, rtol=1e-4, atol=1e-4)


def _duplicate_vs_random(agent_factory, boards: int, seed: int) -> tuple[int, int]:  # type: ignore[no-untyped-def]
    """Deals won by ``agent_factory()`` against random in duplicate (first deals at level 2)."""
    from guandan.agents.base import RandomAgent

    wins = total = 0
    master = random.Random(seed)
    for _ in range(boards):
        bs = master.getrandbits(32)
        for a_seats in ((0, 2), (1, 3)):
            game = Game(seed=bs)
            agents = [agent_factory() if s in a_seats else RandomAgent(bs + s) for s in range(4)]
            while not game.settlements:
                s = game.to_act()
                game.apply(agents[s].act(seat_view(game, s)), s)
            wins += game.settlements[0].winner == (a_seats[0] & 1)
            total += 1
    return wins, total


@pytest.mark.slow
def test_tiny_training_run_learns_and_beats_random(tmp_path: Path) -> None:
    _torch()
    from guandan.train.selfplay import generate, load_shards, named_agents
    from guandan.train.trainer import TrainConfig, train_policy, train_value

    paths, stats = generate(tmp_path / "data", named_agents("heuristic"), games=6, seed=3, games_per_shard=2)
    assert stats.games == 6 and stats.deals >= 6 and stats.policy_samples > 500
    data = load_shards(paths)
    assert data["v_state"].shape[1] == STATE_DIM and data["p_actions"].shape[1] == ACTION_DIM
    cfg = TrainConfig(epochs=6, batch=128, lr=2e-3, seed=1, hidden=(64, 32), val_fraction=0.34)
    rv = train_value(data, tmp_path, cfg)
    assert rv.history[-1]["train_loss"] < rv.history[0]["train_loss"]
    rp = train_policy(data, tmp_path, cfg)
    assert rp.history[-1]["train_loss"] < rp.history[0]["train_loss"]
    assert rp.history[-1]["val_loss"] < rp.history[0]["val_loss"]
    # resuming a finished run trains no further epoch and exports the same weights
    again = train_policy(data, tmp_path, cfg)
    assert len(again.history) == len(rp.history)
    net = PolicyNet.load(tmp_path / "policy.npz")
    wins, total = _duplicate_vs_random(lambda: PolicyAgent(net=net), boards=6, seed=7)
    assert wins >= 9, f"tiny policy net won only {wins}/{total} deals against random"


def test_suit_permutations_rename_non_heart_suits_only() -> None:
    _torch()
    from guandan.train.trainer import suit_permutations

    perms = suit_permutations(STATE_DIM, [72 * r for r in range(4)])
    assert perms.shape == (6, STATE_DIM)
    assert (perms[0] == np.arange(STATE_DIM)).all()
    d = _deal()
    x = encode_state(d, pov=0)
    seen = set()
    for p in perms:
        assert sorted(p.tolist()) == list(range(STATE_DIM))  # a permutation
        y = x[p]
        # strength counts, wilds, jokers, counts and everything past the face blocks unchanged
        for r in range(4):
            b = 72 * r
            np.testing.assert_array_equal(y[b + 52 : b + 72], x[b + 52 : b + 72])
            # hearts (suit 1) stay: 2H is the wild at level 2 (R8)
            assert y[b + 1] == x[b + 1]
        np.testing.assert_array_equal(y[288:], x[288:])
        seen.add(tuple(np.nonzero(y[:54])[0].tolist()))
    # seat 0's two 3S (face 4) move to 3C (6) and 3D (7) under some renamings
    assert {(1, 4, 53), (1, 6, 53), (1, 7, 53)} <= seen


@pytest.mark.slow
def test_train_cli_runs_resumes_and_refuses_mixed_data(tmp_path: Path) -> None:
    _torch()
    from typer.testing import CliRunner

    from guandan.cli import app

    runner = CliRunner()
    out = tmp_path / "run"
    args = ["train", "value", "--out", str(out), "--games", "2", "--games-per-shard", "1", "--epochs", "1", "--seed", "4"]
    r = runner.invoke(app, args)
    assert r.exit_code == 0, r.output
    assert (out / "value.npz").exists() and (out / "value.ckpt").exists()
    assert sorted(p.name for p in (out / "data").glob("*.npz")) == ["shard-0000.npz", "shard-0001.npz"]
    meta = ValueNet.load(out / "value.npz").mlp.meta
    assert meta["seed"] == 4 and meta["games"] == 2 and meta["teacher"] == "heuristic"
    mtime = (out / "data" / "shard-0000.npz").stat().st_mtime_ns
    r = runner.invoke(app, ["train", "policy", "--out", str(out), "--games", "2", "--games-per-shard", "1",
                            "--epochs", "1", "--seed", "4"])
    assert r.exit_code == 0, r.output
    assert (out / "data" / "shard-0000.npz").stat().st_mtime_ns == mtime  # the data were reused
    PolicyNet.load(out / "policy.npz")
    r = runner.invoke(app, args + ["--max-candidates", "5"])
    assert r.exit_code == 2 and "other settings" in r.output
    r = runner.invoke(app, ["train", "value", "--out", str(out), "--hidden", "abc"])
    assert r.exit_code == 2 and "--hidden" in r.output
    # a truncated or foreign checkpoint: one line naming it and the ways out, not a traceback
    (out / "value.ckpt").write_bytes(b"PK\x03\x04 truncated")
    r = runner.invoke(app, args)
    assert r.exit_code == 2 and "not a readable checkpoint" in r.output and "--no-resume" in r.output, r.output
    assert r.exception is None or isinstance(r.exception, SystemExit)
    r = runner.invoke(app, args + ["--no-resume"])
    assert r.exit_code == 0, r.output
