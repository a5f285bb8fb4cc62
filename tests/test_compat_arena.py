"""``guandan compat arena`` (issue 8 item 4): our bot against a protocol bot started from a
command line, in duplicate format through the compat host.

The protocol bot here is our own ``guandan compat join`` client (any program that speaks the
protocol will do), so these tests need no third-party bot; runs against the 2020 bots are in the
README and the closing note of issue 8.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from guandan.cli import app
from guandan.compat.arena import fill_command, percentile
from guandan.evaluation.arena import wilson

GUANDAN = Path(sys.executable).parent / "guandan"
JOIN = f"{GUANDAN} compat join {{url}} --bot random --seed {{seat}}"


def test_fill_command_and_percentile() -> None:
    cmd = fill_command("bot --url {url} --dir '{workdir}' --n {name}", "ws://h:1/game/x", "x", 1, "/tmp/a b")
    assert cmd == ["bot", "--url", "ws://h:1/game/x", "--dir", "/tmp/a b", "--n", "x"]
    with pytest.raises(ValueError, match=r"\{url\}"):
        fill_command("bot --port 1", "u", "n", 0, "w")
    with pytest.raises(ValueError, match="placeholder"):
        fill_command("bot {url} {nope}", "u", "n", 0, "w")
    # nearest rank: p99 of 1..100 is 99, of 1..10 is 10
    assert percentile([float(i) for i in range(1, 101)], 0.99) == 99.0
    assert percentile([float(i) for i in range(10, 0, -1)], 0.99) == 10.0


@pytest.mark.skipif(not GUANDAN.exists(), reason="guandan script not installed")
def test_arena_against_a_protocol_bot_command_in_duplicate(tmp_path: Path) -> None:
    out = tmp_path / "summary.json"
    r = CliRunner().invoke(app, [
        "compat", "arena", "heuristic", "--opponent-cmd", JOIN, "--games", "1", "--max-deals", "2",
        "--seed", "5", "--json", str(out), "--out", str(tmp_path / "run"),
    ], env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    s = json.loads(out.read_text())
    assert s["ours"] == "heuristic" and s["games"] == 2 and s["draws"] == 2 and s["game_wins"] == 1.0
    assert s["deals"] == 4  # 2 deals per run, then each game is scored a draw
    assert s["deal_wins"] == round(s["deal_win_rate"] * s["deals"])
    lo, hi = wilson(s["deal_wins"], s["deals"])
    assert s["deal_ci"] == [pytest.approx(lo), pytest.approx(hi)]
    # the same cards in both runs: our bot held each side's cards once
    assert s["paired_deals"] >= 2 and s["paired_same_hands"] == s["paired_deals"]
    assert s["fallback_ours"] == 0 and s["fallback_theirs"] == 0 and s["mostly_fallback"] == []
    assert s["decisions"] > 20 and 0 < s["decision_ms_mean"] <= s["decision_ms_p99"] <= s["decision_ms_max"]
    assert s["levels_per_deal_ours"] >= 0 and s["levels_per_deal_theirs"] >= 0
    for run in s["runs"]:
        assert run["opponent_exit_status"] == [0, 0]  # the opponents ended normally (gameResult, close)
    assert [run["our_seats"] for run in s["runs"]] == [[0, 2], [1, 3]]
    assert "deal win rate of heuristic (4 deals)" in r.output


def test_arena_reports_an_opponent_that_does_not_start(tmp_path: Path) -> None:
    r = CliRunner().invoke(app, [
        "compat", "arena", "heuristic", "--opponent-cmd", f"{sys.executable} -c 'raise SystemExit(3)' {{url}}",
        "--games", "1", "--out", str(tmp_path),
    ])
    assert r.exit_code == 1 and "the opponent exited with status 3 before connecting" in r.output
    r = CliRunner().invoke(app, ["compat", "arena", "nobot", "--opponent-cmd", JOIN])
    assert r.exit_code == 2 and "unknown agent 'nobot'" in r.output
    r = CliRunner().invoke(app, ["compat", "arena", "heuristic", "--opponent-cmd", "bot --port 1"])
    assert r.exit_code == 2 and "{url}" in r.output


@pytest.mark.skipif(not GUANDAN.exists(), reason="guandan script not installed")
def test_arena_interrupted_stops_the_processes_it_started(tmp_path: Path) -> None:
    pexpect = pytest.importorskip("pexpect")
    pid_file = tmp_path / "pid"
    waiter = f"{sys.executable} -c 'import os,sys,time; open(sys.argv[1],\"w\").write(str(os.getpid())); time.sleep(600)'"
    child = pexpect.spawn(
        str(GUANDAN), ["compat", "arena", "heuristic", "--opponent-cmd", f"{waiter} {pid_file} {{url}}",
                       "--out", str(tmp_path / "run")],
        encoding="utf-8", timeout=60, env={**os.environ, "TERM": "dumb"},
        # a shell's background job ignores SIGINT and children inherit that; give Ctrl-C back
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 60
    while not (pid_file.exists() and pid_file.read_text()):
        assert time.monotonic() < deadline and child.isalive()
        time.sleep(0.1)
    pid = int(pid_file.read_text())
    child.kill(signal.SIGINT)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 130
    assert "interrupted; the opponent processes were stopped" in (child.before or "")
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
