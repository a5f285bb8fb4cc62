"""CLI of the research environment: `guandan bench rl`, `guandan rl arena/selfplay`, `guandan train-rl`."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("numpy", reason="guandan.rl needs the [rl] extra")
pytest.importorskip("pettingzoo", reason="guandan.rl needs the [rl] extra")

from typer.testing import CliRunner  # noqa: E402

from guandan.cli import app  # noqa: E402

runner = CliRunner()


@pytest.mark.slow
def test_bench_rl_json_has_every_figure():
    res = runner.invoke(app, ["bench", "rl", "--json", "--deals-seconds", "0.1"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    modes = {(r["action_mode"], r["obs"]) for r in data["env"]}
    assert {("abstract", "none"), ("abstract", "default"), ("abstract", "danzero"), ("candidates", "default"),
            ("cards", "none"), ("cards", "default")} <= modes
    assert all(r["steps_per_s"] > 0 for r in data["env"]) and data["engine_steps_per_s"] > 0
    assert data["vec"]["sync_decisions_per_s"] > 0 and data["vec"]["process_decisions_per_s"] > 0
    v = data["vec"]
    for run in (v["process_1_worker"], v["process_workers_lockstep"], v["process_workers_pipelined"]):
        assert run["wall_s"] >= 0.1 and run["cpu_s"] > 0 and run["parent_cpu_s"] > 0  # CPU seconds were read back
        n = run["decisions_per_s"] * run["wall_s"]  # both rates count the same decisions
        assert n >= 64 and run["decisions_per_cpu_s"] * run["cpu_s"] == pytest.approx(n)
    assert v["process_workers_lockstep"]["groups"] == 1 and v["process_workers_pipelined"]["groups"] == 2
    # the headline is the faster of the two paths, and says which
    faster = max(v["process_workers_lockstep"], v["process_workers_pipelined"], key=lambda r: r["decisions_per_s"])
    assert v["process_workers"] == faster and v["process_decisions_per_s"] == faster["decisions_per_s"]
    assert v["groups"] == faster["groups"] and ("step_async" in v["path"]) == (faster["groups"] == 2)
    assert data["targets"] == {"single_core_steps_per_s": 20000, "vec_ratio": 2.0, "vec_decisions_per_s": 40000}
    assert data["checks"]["vec_target"] == (data["vec"]["process_decisions_per_s"] >= 40000)
    # the PettingZoo AEC figure is measured in the same run, next to the Table's and RLCard's
    pz, pair = data["pettingzoo_steps_per_s"], data["pettingzoo"]
    assert pz > 0 and pz == pair["pettingzoo_steps_per_s"] and data["checks"]["pettingzoo_target"] == (pz >= 20000)
    assert pair["rounds"] == 4 and pair["table_steps_per_s"] > 0 and pair["table_steps_per_cpu_s"] > 0
    assert data["checks"]["pettingzoo_vs_table"] == pytest.approx(pz / pair["table_steps_per_s"]) == pair["ratio"]
    assert data["checks"]["pettingzoo_vs_table_cpu"] == pytest.approx(
        pair["pettingzoo_steps_per_cpu_s"] / pair["table_steps_per_cpu_s"])
    rlc = data["references"]["rlcard_doudizhu_steps_per_s"]
    assert data["checks"]["pettingzoo_vs_rlcard_doudizhu"] == (None if rlc is None else pytest.approx(pz / rlc))
    from rich.console import Console

    from guandan.cli.bench_rl import render

    con = Console(width=200, record=True)
    con.print(render(data))
    text = con.export_text()
    # one table of the run holds the PettingZoo figure and RLCard's row (a dash when not installed)
    refs = text[text.index("references, same run"):]
    assert f"{pz:,.0f}" in refs and "ours through PettingZoo's AEC API" in refs and "RLCard doudizhu" in refs
    assert "PettingZoo AEC target" in text
    assert set(data["load_average"]) == {"start", "end"}
    ref = data["references"]
    for key, note in (("rlcard_doudizhu_steps_per_s", "rlcard_note"), ("douzero_gameenv_steps_per_s", "douzero_note")):
        assert (ref[key] is None) == (ref[note] is not None)  # measured, or skipped with a message


def test_bench_unknown_suite_is_a_one_line_error():
    res = runner.invoke(app, ["bench", "chess"])
    assert res.exit_code == 2 and "unknown benchmark" in res.output
    for bad in ("nan", "-1"):  # nan used to pass the check and end in a ValueError traceback
        res = runner.invoke(app, ["bench", "rl", "--deals-seconds", bad])
        assert res.exit_code == 2 and "--deals-seconds" in res.output, res.output


def test_rl_arena_and_selfplay_commands(tmp_path):
    res = runner.invoke(app, ["rl", "arena", "--policy", "heuristic", "--deals", "2", "--tables", "2", "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output.strip().splitlines()[-1])
    assert data["games_played"] == 4
    out = tmp_path / "sp.npz"
    res = runner.invoke(app, ["rl", "selfplay", "--steps", "40", "--tables", "2", "--workers", "1", "--out", str(out)])
    assert res.exit_code == 0, res.output
    import numpy as np

    with np.load(out) as z:
        assert z["obs"].shape[1] == 774 and len(z["action"]) == len(z["ret"])
    bad = runner.invoke(app, ["rl", "arena", "--policy", "nonexistent.pt"])
    assert bad.exit_code == 2 and "checkpoint" in bad.output


def test_train_rl_rejects_bad_options():
    res = runner.invoke(app, ["train-rl", "--minutes", "0"])
    assert res.exit_code == 2 and "--minutes" in res.output
    res = runner.invoke(app, ["train-rl", "--minutes", "1", "--opponent", "heuristic"])
    assert res.exit_code == 2


def test_train_rl_resume_from_a_corrupt_checkpoint_is_a_one_line_error(tmp_path):
    """``--resume`` of a truncated or foreign file: exit code 2 and one line naming it (was a
    traceback from torch.load, exit code 1)."""
    pytest.importorskip("torch", reason="guandan train-rl needs PyTorch (make setup-train)")
    bad = tmp_path / "dmc.pt"
    bad.write_bytes(b"garbage\n")
    res = runner.invoke(app, ["train-rl", "--minutes", "0.01", "--tables", "1", "--out", str(tmp_path / "o"),
                              "--resume", str(bad)])
    assert res.exit_code == 2 and "not a readable checkpoint" in res.output, res.output
    assert res.exception is None or isinstance(res.exception, SystemExit)


def test_train_rl_short_run_writes_checkpoint_and_evaluations(tmp_path):
    """A one-second run in one process: the JSON summary, the checkpoint, and two evaluation
    records (before / after) with their Wilson intervals and the load average."""
    pytest.importorskip("torch", reason="guandan train-rl needs PyTorch (make setup-train)")
    out = tmp_path / "o"
    res = runner.invoke(app, ["train-rl", "--minutes", "0.02", "--tables", "2", "--actors", "0", "--eval-deals", "2",
                              "--out", str(out), "--json"])
    assert res.exit_code == 0, res.output
    summary = json.loads(res.stdout.strip().splitlines()[-1])
    assert summary["after"]["games_played"] == 4 and summary["decisions"] > 0
    assert (out / "dmc.pt").is_file()
    records = [json.loads(line) for line in (out / "eval.jsonl").read_text().splitlines()]
    assert [r["label"] for r in records] == ["before training", "after 0.02 min"]
    for r in records:
        lo, hi = r["ci95"]
        assert 0.0 <= lo <= r["win_rate"] <= hi <= 1.0 and len(r["loadavg"]) == 3


def test_train_rl_rejects_bad_schedule_and_actor_options():
    pytest.importorskip("torch", reason="guandan train-rl needs PyTorch (make setup-train)")
    for args in (["--actors", "-1"], ["--epsilon-end", "2"], ["--lr-end", "0"], ["--decay-minutes", "0"]):
        res = runner.invoke(app, ["train-rl", "--minutes", "1", *args])
        assert res.exit_code == 2 and "error" in res.output, (args, res.output)
