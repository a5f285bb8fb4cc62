"""``guandan replay`` and ``guandan simulate`` through Typer's CliRunner."""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

from guandan.cli import app
from guandan.cli.simulate_cmd import game_stats
from guandan.records import replay

runner = CliRunner()


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):  # type: ignore[no-untyped-def]
    """Three recorded random-bot games (official preset)."""
    d = tmp_path_factory.mktemp("rec") / "out"
    res = runner.invoke(app, ["simulate", "--games", "3", "--bot", "random", "--seed", "7", "--record", str(d)])
    assert res.exit_code == 0, res.output
    return d, res


def test_simulate_writes_one_replayable_record_per_game(recorded) -> None:  # type: ignore[no-untyped-def]
    d, res = recorded
    files = sorted(p.name for p in d.iterdir())
    assert files == ["game-0001.jsonl", "game-0002.jsonl", "game-0003.jsonl"]
    for i, name in enumerate(files):
        r = replay(d / name)
        assert r.complete
        h = r.header
        assert h["seed"] == 7 + i and h["players"] == ["random"] * 4 and h["preset"] == "official"
        assert h["max_games"] == 1 and h["hands"] == "shuffled"
    out = res.stdout
    assert "simulate: 3 games, preset official, bot random, seed 7" in out
    for label in ("deals", "A failures", "double tributes", "anti-tributes", "jiefeng", "wall time", "deals/s"):
        assert label in out


def test_simulate_is_reproducible_from_its_seed(tmp_path) -> None:  # type: ignore[no-untyped-def]
    a, b = tmp_path / "a", tmp_path / "b"
    for d in (a, b):
        res = runner.invoke(
            app, ["simulate", "-n", "2", "--bot", "random", "--seed", "40", "--preset", "anhui", "--record", str(d)]
        )
        assert res.exit_code == 0, res.output
    for name in ("game-0001.jsonl", "game-0002.jsonl"):
        assert (a / name).read_bytes() == (b / name).read_bytes()
    # --rule overrides reach the records (docs/rules.md section P: records store every option value)
    res = runner.invoke(
        app, ["simulate", "-n", "1", "--bot", "random", "--seed", "40", "--rule", "return_rule=le10",
              "--record", str(tmp_path / "c")]
    )
    assert res.exit_code == 0, res.output
    header = json.loads((tmp_path / "c" / "game-0001.jsonl").read_text(encoding="utf-8").split("\n")[0])
    assert header["options"]["return_rule"] == "le10"
    assert replay(tmp_path / "c" / "game-0001.jsonl").complete


def test_simulate_bad_input_is_one_line() -> None:
    res = runner.invoke(app, ["simulate", "-n", "1", "--bot", "nobody"])
    assert res.exit_code == 2
    assert res.stderr.strip().count("\n") == 0 and "unknown bot 'nobody'" in res.stderr
    res = runner.invoke(app, ["simulate", "-n", "1", "--bot", "random", "--preset", "nowhere"])
    assert res.exit_code == 2 and "unknown preset" in res.stderr


def test_replay_good_file(recorded) -> None:  # type: ignore[no-untyped-def]
    d, _ = recorded
    path = d / "game-0001.jsonl"
    r = replay(path)
    res = runner.invoke(app, ["replay", str(path)])
    assert res.exit_code == 0, res.output
    out = res.stdout
    assert out.count("game 1, deal ") == r.n_deals
    assert out.count("deal over: finish order") == r.n_deals
    # every action line is "seat N: <play text>"; their number equals the actions in the record
    assert sum(1 for line in out.splitlines() if re.match(r"  seat \d: ", line)) == r.n_actions
    assert sum(1 for line in out.splitlines() if re.match(r"  seat \d \(random\): ", line)) == 4 * r.n_deals
    assert "record OK" in out and f"{r.n_actions} actions" in out
    assert "game over" in out
    # first play of the record appears in text notation
    first = next(ev for _, ev in r.events if ev["type"] == "action")
    cards = " ".join(first["action"][2])
    assert f"seat {first['seat']}: " in out and cards in out

    quiet = runner.invoke(app, ["replay", "--quiet", str(path)])
    assert quiet.exit_code == 0 and quiet.stdout.strip().count("\n") == 0 and "record OK" in quiet.stdout

    uni = runner.invoke(app, ["replay", "--unicode", str(path)])
    assert uni.exit_code == 0 and ("♥" in uni.stdout or "♠" in uni.stdout)


def test_replay_bad_files(recorded, tmp_path) -> None:  # type: ignore[no-untyped-def]
    d, _ = recorded
    lines = (d / "game-0002.jsonl").read_text(encoding="utf-8").split("\n")[:-1]
    # corrupt line 5
    bad = list(lines)
    bad[4] = bad[4][:10]
    p = tmp_path / "bad.jsonl"
    p.write_text("\n".join(bad) + "\n", encoding="utf-8")
    res = runner.invoke(app, ["replay", str(p)])
    assert res.exit_code == 1
    assert res.stderr.startswith("error: line 5: not valid JSON") and res.stderr.count("\n") == 1
    assert "Traceback" not in res.output and "record OK" not in res.output
    # illegal action: the leader of deal 1 passes (R27)
    bad = list(lines)
    n = next(i for i, s in enumerate(bad) if '"type":"action"' in s)
    ev = json.loads(bad[n])
    ev["action"] = ["pass", None, []]
    bad[n] = json.dumps(ev)
    p.write_text("\n".join(bad) + "\n", encoding="utf-8")
    res = runner.invoke(app, ["replay", "--quiet", str(p)])
    assert res.exit_code == 1
    assert res.stderr.startswith(f"error: line {n + 1}: illegal action by seat {ev['seat']} (must_lead)")
    assert res.stderr.count("\n") == 1
    # missing file
    res = runner.invoke(app, ["replay", str(tmp_path / "none.jsonl")])
    assert res.exit_code == 1 and res.stderr.startswith("error: cannot read") and res.stderr.count("\n") == 1


def test_game_stats_counts_events() -> None:
    events = [
        {"type": "deal", "game": 1, "deal": 1},
        {"type": "action", "seat": 0, "action": ["single", "3", ["3S"]]},
        {"type": "jiefeng", "leader": 2},
        {"type": "deal_end", "result": "1-2", "levels": ["5", "2"], "failed": [], "demoted": []},
        {"type": "deal", "game": 1, "deal": 2},
        {"type": "tribute_paid", "tributes": [[1, 0, "AS"], [3, 2, "KS"]]},
        {"type": "deal_end", "result": "1-4", "levels": ["A", "3"], "failed": [1], "demoted": [1]},
        {"type": "deal", "game": 1, "deal": 3},
        {"type": "anti_tribute", "seats": [1], "leader": 0},
        {"type": "deal_end", "result": "1-3", "levels": ["A", "2"], "failed": [], "demoted": []},
        {"type": "game_over", "game": 1, "winner_team": 0},
    ]
    s = game_stats(events)
    assert s["deals"] == 3 and s["actions"] == 1 and s["jiefeng"] == 1
    assert s["double_tributes"] == 1 and s["tributes"] == 0 and s["anti_tributes"] == 1
    assert s["a_failures"] == 1 and s["demotions"] == 1
    assert s["winner"] == 0 and s["loser_level"] == "2"
    assert s["results"] == {"1-2": 1, "1-3": 1, "1-4": 1}


def test_simulate_defaults_to_the_heuristic_bot(tmp_path) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("guandan.agents.heuristic")
    res = runner.invoke(app, ["simulate", "-n", "1", "--seed", "3", "--record", str(tmp_path)])
    assert res.exit_code == 0, res.output
    assert "bot heuristic" in res.stdout
    r = replay(tmp_path / "game-0001.jsonl")
    assert r.complete and r.header["players"] == ["heuristic"] * 4


def test_simulate_interrupted_by_ctrl_c_prints_the_partial_summary(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Issue 11: Ctrl-C during ``guandan simulate`` summarises the finished games, says
    "interrupted" and exits with status 130 (128 + SIGINT), without a traceback."""
    import signal
    import sys
    import time
    from pathlib import Path

    pexpect = pytest.importorskip("pexpect")
    guandan = Path(sys.executable).parent / "guandan"
    env = {"TERM": "dumb", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "PATH": "/usr/bin:/bin", "COLUMNS": "120"}
    child = pexpect.spawn(f"{guandan} simulate --games 100000 --seed 3 --record {tmp_path}", encoding="utf-8",
                          env=env, timeout=60, dimensions=(40, 120),
                          # a shell's background job ignores SIGINT and children inherit that
                          preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 120
    while not list(tmp_path.glob("game-*.jsonl")):  # at least one game finished
        assert time.monotonic() < deadline and child.isalive(), "no game finished"
        time.sleep(0.2)
    child.sendintr()
    child.expect(pexpect.EOF)
    child.close()
    out = ANSI_RE.sub("", child.before or "")
    assert child.exitstatus == 130, out
    m = re.search(r"interrupted after (\d+) of 100000 games", out)
    assert m and int(m.group(1)) >= 1, out
    assert re.search(rf"simulate: {m.group(1)} of 100000 games \(interrupted\)", out), out
    assert "wins team 0/2 : team 1/3" in out and "Traceback" not in out


ANSI_RE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
