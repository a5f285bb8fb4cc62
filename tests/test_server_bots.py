"""Searching bots (``hard``, ``expert``) in the web server: decided off the event loop.

The table takes the bot's view under its lock, the search runs in the bot process pool
(:func:`guandan.server.table.bots.think_off_loop`) without the lock, and the answer is applied only if
the table is still in that position. These tests assert ordering facts (what happened while a bot
was thinking), never wall-clock durations.
"""

from __future__ import annotations

import asyncio
import random
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

pytest.importorskip("fastapi")

from test_server_table_play import _act_json, _NoStore, drain, send, unit_table  # noqa: E402

from guandan.agents.heuristic import HeuristicAgent
from guandan.core.match import Game
from guandan.core.views import seat_view
from guandan.server.table import bots as tables
from guandan.server.settings import Settings
from guandan.server.manager import TableManager
from guandan.server.table.flow import Table
from guandan.server.table.info import RoomInfo, SeatInfo


def bot_table(bots: dict[int, str], room: str = "bots0001", seed: int = 3) -> Table:
    """A table whose seats in ``bots`` are bots of those names and the others people (no clocks),
    seat 0 leading the first deal; no bot delay."""
    s = Settings(db_url="sqlite://", bot_delay_s=0.0)
    manager = TableManager(lambda: None, s, store=_NoStore())  # type: ignore[arg-type]
    seats = [SeatInfo(i, bot=bots[i]) if i in bots else SeatInfo(i, i + 1, f"p{i}") for i in range(4)]
    info = RoomInfo(id=room, name="t", preset="official", options={}, status="playing", owner="p0",
                    owner_id=1, seed=seed, seats=seats)
    table = Table(manager, info)
    table.game = Game(seed=seed, first_leader=0)
    return table


def test_the_server_offers_the_searching_levels():
    assert {"hard", "expert"} <= set(tables.DIFFICULTIES)
    assert tables.bot_agent("hard") in tables.SEARCH_DIFFICULTIES
    assert tables.bot_difficulty(tables.bot_agent("expert")) == "expert"
    # the server plays them within about a second and in one process per decision
    for name in ("hard", "expert"):
        spec = tables.SERVER_BOT_SPECS[name]
        assert "workers=1" in spec and "budget=0.8" in spec


def test_a_table_of_hard_bots_completes_a_deal_through_the_bot_processes(monkeypatch):
    """Four ``hard`` bots (a small rollout count so that the test is quick) play a whole deal
    through the real process pool; every move is legal (the engine checks each one) and the deal
    ends with a result (R35)."""
    monkeypatch.setitem(tables.SERVER_BOT_SPECS, "hard", "hard:worlds=2,workers=1,candidates=2")
    tables.shutdown_bot_pool()

    async def main() -> None:
        table = bot_table({s: "hard" for s in range(4)})
        table._schedule()
        for _ in range(600):  # ends at the deal's result (the table then pauses)
            if table.game is not None and table.game.settlements:
                break
            await asyncio.sleep(0.05)
        game = table.game
        assert game is not None and game.settlements, "the deal did not end"
        assert game.settlements[0].result in ("1-2", "1-3", "1-4")
        table.shutdown()

    try:
        asyncio.run(main())
    finally:
        tables.shutdown_bot_pool()


class _Gate:
    """Replaces the bot process pool by a thread whose decisions wait for ``release``."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()
        self.views: list[Any] = []
        self.pool = ThreadPoolExecutor(1)

    def decide(self, agent: Any, view: Any) -> Any:
        self.views.append(view)
        self.entered.set()
        assert self.release.wait(30), "the test never released the bot"
        return HeuristicAgent().act(view)


async def _wait_for(event: threading.Event) -> None:
    for _ in range(600):
        if event.is_set():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the bot never started thinking")


def test_other_tables_play_while_a_hard_bot_thinks(monkeypatch):
    """While table A's hard bot is thinking (held in the pool), table B's players act and get
    their frames, and table A itself answers a connection; A's bot move lands only after the
    thinking ends."""
    gate = _Gate()
    monkeypatch.setattr(tables, "_bot_pool", lambda: gate.pool)
    monkeypatch.setattr(tables, "_decide", gate.decide)

    async def main() -> None:
        a = bot_table({0: "hard"}, room="botsA001")
        b, conns = unit_table()
        a._schedule()
        await _wait_for(gate.entered)
        seq_a = a.seq
        # table B: ten moves by its people while A's bot thinks
        rng = random.Random(5)
        game_b = b.game
        assert game_b is not None
        for _ in range(10):
            seat = game_b.to_act()
            out = await send(b, conns[seat], {"type": "act", "action": _act_json(rng.choice(game_b.legal_actions()))})
            assert out is None, out
        assert b.seq >= 10 and drain(conns[0])
        # table A is not locked while its bot thinks: its state frame is served at once
        assert not a.lock.locked() and a.state_frame(1)["view"]["to_act"] == 0
        assert not gate.release.is_set() and a.seq == seq_a  # A's bot has not moved yet
        gate.release.set()
        for _ in range(500):
            if a.seq > seq_a:
                break
            await asyncio.sleep(0.01)
        assert a.seq == seq_a + 1
        ga = a.game
        assert ga is not None and ga.to_act() == 1
        assert ga.deal.history[-1] == (0, HeuristicAgent().act(gate.views[0]))
        a.shutdown()
        b.shutdown()

    asyncio.run(main())
    gate.pool.shutdown()


def test_a_stale_answer_is_discarded(monkeypatch):
    """The table moves on while the bot thinks (here its move is made by another path): the
    bot's late answer is not applied on top."""
    gate = _Gate()
    monkeypatch.setattr(tables, "_bot_pool", lambda: gate.pool)
    monkeypatch.setattr(tables, "_decide", gate.decide)

    async def main() -> None:
        a = bot_table({0: "hard"}, room="botsS001")
        a._schedule()
        await _wait_for(gate.entered)
        game = a.game
        assert game is not None
        view = seat_view(game, 0)
        other = next(x for x in view.legal_actions if x != HeuristicAgent().act(view))
        async with a.lock:
            a._apply(0, other)
        gate.release.set()
        await asyncio.sleep(0.3)
        assert list(game.deal.history) == [(0, other)]
        assert game.to_act() == 1 and a.seq == 1
        a.shutdown()

    asyncio.run(main())
    gate.pool.shutdown()


def test_a_failed_search_lets_the_heuristic_move(monkeypatch):
    def broken(agent: Any, view: Any) -> Any:
        raise RuntimeError("search exploded")

    pool = ThreadPoolExecutor(1)
    monkeypatch.setattr(tables, "_bot_pool", lambda: pool)
    monkeypatch.setattr(tables, "_decide", broken)

    async def main() -> None:
        a = bot_table({0: "hard"}, room="botsF001")
        game = a.game
        assert game is not None
        expected = HeuristicAgent().act(seat_view(game, 0))
        a._schedule()
        for _ in range(500):
            if a.seq:
                break
            await asyncio.sleep(0.01)
        assert list(game.deal.history) == [(0, expected)]
        a.shutdown()

    asyncio.run(main())
    pool.shutdown()


def _children(pid: int) -> list[int]:
    """Process ids whose parent is ``pid`` (Linux /proc)."""
    import os

    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    stat = f.read()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(entry))
    return out


@pytest.mark.skipif(not __import__("os").path.isdir("/proc"), reason="needs Linux /proc")
def test_sigterm_leaves_no_bot_process_behind(tmp_path):
    """`guandan serve` stopped with SIGTERM (systemctl stop, a rolling restart) after a `hard` bot
    has thought: the bot pool's worker, its forkserver and the resource tracker exit with the
    server. uvicorn re-raises SIGTERM after its shutdown, so atexit hooks never ran and the three
    processes were orphaned."""
    import os
    import signal
    import socket
    import subprocess
    import sys
    import time

    import httpx

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen(
        [sys.executable, "-c", "from guandan.cli import main; main()", "serve", "--port", str(port),
         "--db", str(tmp_path / "t.db"), "--bot-delay", "0", "--friends-processes", "0"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(f"{base}/healthz", timeout=2)
                break
            except httpx.HTTPError:
                assert time.monotonic() < deadline, "server did not start"
                time.sleep(0.3)
        with httpx.Client(base_url=base, timeout=30) as http:
            assert http.post("/api/guest", json={}).status_code == 200
            assert http.post("/api/quick", json={"difficulty": "hard"}).status_code == 200
        descendants: set[int] = set()
        deadline = time.monotonic() + 60
        while not any("forkserver" in open(f"/proc/{c}/cmdline").read() for c in _children(server.pid) if os.path.exists(f"/proc/{c}")):
            assert time.monotonic() < deadline, "the hard bots never used their process pool"
            time.sleep(0.3)
        time.sleep(1)
        for child in _children(server.pid):
            descendants.add(child)
            descendants.update(_children(child))
        assert len(descendants) >= 2  # forkserver (+ tracker) and at least one worker
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
        deadline = time.monotonic() + 10
        while any(os.path.exists(f"/proc/{p}") and open(f"/proc/{p}/stat").read().split()[2] != "Z" for p in descendants):
            assert time.monotonic() < deadline, f"orphaned bot processes: {sorted(descendants)}"
            time.sleep(0.2)
    finally:
        if server.poll() is None:
            server.kill()
