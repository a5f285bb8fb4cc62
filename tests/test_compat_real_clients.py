"""The compat host against the real 2020 competition clients (issue 8 item 5).

``../shared/opponents/seat.py`` runs the four shared 2020 bots exactly as published (ws4py as it
is, no ``--ws4py-fix``). ws4py parses the bytes that arrive with the handshake response on two
threads, so a host that sends its first frame right behind the fourth handshake kills that
connection in about one run in four (opponents/README.md, "The ws4py race"). These runs check
that no connection dies: every seat is played by its own client to ``gameResult`` (no fallback
decision) and every socket is closed with code 1000.

Needs the opponents' virtual environment: ``python3 -m venv .venv-opp && .venv-opp/bin/pip install
-r ../shared/opponents/requirements.txt`` (skipped with a message without it; fails under CI=true).
``GUANDAN_REAL_CLIENT_RUNS`` sets the number of runs (default 6).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest

from guandan.compat.host import CompatHost, serve

ROOT = Path(__file__).resolve().parents[1]
OPPONENTS = ROOT.parent / "shared" / "opponents"
OPP_PYTHON = ROOT / ".venv-opp" / "bin" / "python"
BOTS = ("njupt", "no-ai", "egg-pancake", "chick-squad")


def _need_opponents() -> None:
    missing = [str(p) for p in (OPPONENTS / "seat.py", OPP_PYTHON) if not p.exists()]
    if missing:
        msg = (f"real 2020 clients unavailable ({', '.join(missing)} missing): the evaluation-only 2020 bots live "
               "outside the repository, in ../shared/opponents; see tests/test_compat_real_clients.py")
        if os.environ.get("CI") == "true":
            pytest.fail(msg)
        pytest.skip(msg)


async def real_client_run(workdir: Path, bots: list[str], seed: int | None, start_delay: float = 0.3,
                          max_deals: int = 2, games: int = 1) -> tuple[object, list[dict]]:
    """One hosted run with four seat.py clients (connected in order); returns the host's summary and
    each seat's stats.json (seat.py's own tally: frames, deals, ``got_game_result``, ``closed``)."""
    host = CompatHost(games=games, timeout=10, seed=seed, max_deals=max_deals, start_delay=start_delay)
    ready = asyncio.Event()
    box: dict[str, int] = {}

    def on_ready(p: int) -> None:
        box["port"] = p
        ready.set()

    server = asyncio.create_task(serve(host, port=0, ready=on_ready))
    await asyncio.wait_for(ready.wait(), 20)
    procs = []
    try:
        for seat, bot in enumerate(bots):
            work = workdir / f"seat{seat}"
            url = f"ws://127.0.0.1:{box['port']}/game/{bot}{seat}"
            log = open(workdir / f"seat{seat}.log", "w")
            procs.append(await asyncio.create_subprocess_exec(
                str(OPP_PYTHON), str(OPPONENTS / "seat.py"), bot, url, "--workdir", str(work), "--seed", str(seat),
                stdout=asyncio.subprocess.DEVNULL, stderr=log, start_new_session=True,
            ))
            log.close()
            for _ in range(600):  # connection order decides the seats
                if len(host.links) > seat or procs[-1].returncode is not None:
                    break
                await asyncio.sleep(0.05)
            assert len(host.links) == seat + 1, f"{bot} did not connect: {(workdir / f'seat{seat}.log').read_text()}"
        summary = await asyncio.wait_for(server, 600)
        for p in procs:
            await asyncio.wait_for(p.wait(), 30)
    finally:
        for p in procs:
            if p.returncode is None:
                p.kill()
                await p.wait()
        if not server.done():
            server.cancel()
    stats = [json.loads((workdir / f"seat{s}" / "stats.json").read_text()) for s in range(4)]
    return summary, stats


def dead_seats(summary: object, stats: list[dict]) -> list[int]:
    """Seats whose connection died: the client did not get ``gameResult``, its socket was not
    closed with 1000, or the host lost it (a fallback decision for a reason other than a slow
    answer: a decision past the host's timeout on a loaded machine is not a dead connection)."""
    return [s for s in range(4)
            if not stats[s]["got_game_result"] or stats[s]["closed"] is None or stats[s]["closed"][0] != 1000
            or set(summary.fallback_reasons[s]) - {"timeout"}]  # type: ignore[attr-defined]


@pytest.mark.slow
def test_published_ws4py_clients_never_lose_a_connection(tmp_path: Path) -> None:
    """Runs of four real clients (ws4py as published): every connection lives to gameResult, is
    closed with 1000, sees 'beginning' first with the levels, and the fallback bot never plays."""
    _need_opponents()
    runs = int(os.environ.get("GUANDAN_REAL_CLIENT_RUNS", "6"))
    failures = []
    for r in range(runs):
        bots = [BOTS[(r + k) % 4] for k in range(4)]  # every bot takes the racy 4th connection in turn
        work = tmp_path / f"run{r}"
        work.mkdir()
        summary, stats = asyncio.run(real_client_run(work, bots, seed=None))
        assert summary.games == 1  # type: ignore[attr-defined]
        dead = dead_seats(summary, stats)
        if dead:
            failures.append((r, bots, dead, [stats[s]["closed"] for s in dead]))
        for s in range(4):
            assert stats[s]["proto_complaints"] == 0, (work / f"seat{s}.log").read_text()[-2000:]
    print(f"{runs} runs, {len(failures)} with a dead connection", file=sys.stderr)
    assert not failures, failures


@pytest.mark.slow
@pytest.mark.parametrize("level", ["easy", "normal", "hard:budget=0.3,workers=1", "expert:budget=0.3,workers=1"])
def test_each_level_plays_a_smoke_match_against_a_2020_bot(tmp_path: Path, level: str) -> None:
    """Issue 8 (tests): every difficulty level plays a duplicate smoke match against njupt (the
    2020 client run as published) through ``guandan compat arena``: one deal per seating, no seat
    played by the host's fallback bot, the opponent's processes end normally. (Strength figures are
    the arena's, in the README, not this test's.)"""
    _need_opponents()
    pytest.importorskip("numpy")  # expert's networks
    from typer.testing import CliRunner

    from guandan.cli import app

    out = tmp_path / "summary.json"
    opp = f"{OPP_PYTHON} {OPPONENTS / 'seat.py'} njupt {{url}} --workdir {{workdir}}"
    r = CliRunner().invoke(app, [
        "compat", "arena", level, "--opponent-cmd", opp, "--games", "1", "--max-deals", "1",
        "--seed", "11", "--timeout", "30", "--json", str(out), "--out", str(tmp_path / "run"),
    ], env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    s = json.loads(out.read_text())
    assert s["ours"] == level and s["deals"] == 2 and s["games"] == 2
    assert 0 <= s["deal_wins"] <= 2 and s["deal_wins"] == round(s["deal_win_rate"] * 2)
    assert s["paired_deals"] >= 1 and s["paired_same_hands"] == s["paired_deals"]  # duplicate: same cards
    assert s["fallback_ours"] == 0 and s["fallback_theirs"] == 0 and s["mostly_fallback"] == []
    assert s["decisions"] > 10
    for run in s["runs"]:
        assert run["opponent_exit_status"] == [0, 0]
