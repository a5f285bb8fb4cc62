"""Compat host fixes of issue 11 (hidden cards, a client that never reads) and issue 8 item 5
(wait before the first frame, close code 1000, levels in ``beginning``, fallback accounting)."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import random
import socket
import time
from pathlib import Path
from typing import Any

import pytest
import websockets

from guandan.agents import make_agent
from guandan.compat import messages as M
from guandan.compat.client import ProtocolState, choose_index, join
from guandan.compat.host import CompatHost, serve
from guandan.core.cards import parse_rank
from guandan.core.deal import Deal
from guandan.core.match import Game, shuffle_deal
from guandan.core.rules import RuleSet
from guandan.records import replay


async def start(host: CompatHost, **kw: Any) -> tuple[asyncio.Task[Any], int]:
    ready = asyncio.Event()
    box: dict[str, int] = {}

    def on_ready(p: int) -> None:
        box["port"] = p
        ready.set()

    task = asyncio.create_task(serve(host, port=0, ready=on_ready, **kw))
    await asyncio.wait_for(ready.wait(), 10)
    return task, box["port"]


async def connect_in_order(host: CompatHost, makers: list[Any], port: int) -> list[asyncio.Task[Any]]:
    tasks = []
    first = len(host.links)
    for i, make in enumerate(makers, first):
        tasks.append(asyncio.create_task(make(f"ws://127.0.0.1:{port}/game/c{i}")))
        for _ in range(200):  # connection order decides the seats
            if len(host.links) > i:
                break
            await asyncio.sleep(0.02)
    return tasks


# -- beginning: levels (issue 8 item 5) ------------------------------------------------------------


def test_beginning_message_carries_the_deal_level_and_both_team_levels() -> None:
    rules = RuleSet.preset("aicomp")
    hands = shuffle_deal(random.Random(1))
    deal = Deal(rules, parse_rank("7"), hands, random.Random(1), first_leader=0)
    # team 0 (seats 0/2) at 7, team 1 (seats 1/3) at Q: the deal is played at 7 (R7)
    levels = [parse_rank("7"), parse_rank("Q")]
    for seat, (self_rank, oppo_rank) in enumerate([("7", "Q"), ("Q", "7"), ("7", "Q"), ("Q", "7")]):
        msg = M.beginning(deal, seat, levels)
        assert msg["stage"] == "beginning" and msg["type"] == "notify" and msg["myPos"] == seat
        assert msg["curRank"] == "7" and msg["selfRank"] == self_rank and msg["oppoRank"] == oppo_rank
        assert len(msg["handCards"]) == 27
    # ten is written 'T' in platform notation (PROTOCOL.md §2)
    deal10 = Deal(rules, parse_rank("10"), hands, random.Random(1), first_leader=0)
    assert M.beginning(deal10, 0, [parse_rank("10"), 0])["curRank"] == "T"


async def _levels_client(url: str, seen: list[tuple[str, dict[str, Any]]]) -> None:
    rng = random.Random(len(url))
    async with websockets.connect(url, max_size=None, ping_interval=None) as ws:
        async for text in ws:
            msg = json.loads(text)
            seen.append((msg["stage"], msg))
            if msg["type"] == "act":
                await ws.send(json.dumps({"actIndex": rng.randint(0, msg["indexRange"])}))


def test_hosted_beginning_levels_match_the_act_messages_of_the_deal() -> None:
    """Every ``beginning`` carries curRank/selfRank/oppoRank equal to those of the deal's first
    ``act`` message to that seat (the fields clients already get there)."""
    seen: list[list[tuple[str, dict[str, Any]]]] = [[], [], [], []]

    async def main() -> Any:
        host = CompatHost(games=1, timeout=10, seed=11, max_deals=6, start_delay=0.05)
        task, port = await start(host)
        clients = await connect_in_order(host, [lambda u, i=i: _levels_client(u, seen[i]) for i in range(4)], port)
        await asyncio.wait_for(asyncio.gather(*clients), 120)
        return await asyncio.wait_for(task, 30)

    asyncio.run(main())
    checked = 0
    for log in seen:
        begin = None
        for stage, msg in log:
            if stage == "beginning":
                begin = msg
            elif msg["type"] == "act" and begin is not None:
                assert (begin["curRank"], begin["selfRank"], begin["oppoRank"]) == (
                    msg["curRank"], msg["selfRank"], msg["oppoRank"])
                assert begin["curRank"] in (begin["selfRank"], begin["oppoRank"])  # R7: a team's level
                begin = None
                checked += 1
    assert checked >= 8  # at least two deals for each seat
    assert seen[0][0][1]["curRank"] == "2"  # every game starts at 2 (R5)


# -- the first frame waits; sockets closed with 1000 (issue 8 item 5) ------------------------------------


async def _timed_client(url: str, out: dict[str, Any]) -> None:
    rng = random.Random(7)
    async with websockets.connect(url, max_size=None, ping_interval=None) as ws:
        out["open"] = time.monotonic()
        async for text in ws:
            msg = json.loads(text)
            out.setdefault("first", time.monotonic())
            if msg["type"] == "act":
                await ws.send(json.dumps({"actIndex": rng.randint(0, msg["indexRange"])}))
            elif msg["stage"] == "gameResult":
                out["result"] = msg
        out["close_code"] = ws.close_code
        out["close_reason"] = ws.close_reason


def test_first_frame_waits_after_the_fourth_handshake_and_sockets_close_with_1000() -> None:
    outs: list[dict[str, Any]] = [{}, {}, {}, {}]

    async def main() -> Any:
        host = CompatHost(games=1, timeout=10, seed=3, max_deals=1, start_delay=0.4)
        task, port = await start(host)
        clients = await connect_in_order(host, [lambda u, i=i: _timed_client(u, outs[i]) for i in range(4)], port)
        await asyncio.wait_for(asyncio.gather(*clients), 120)
        return await asyncio.wait_for(task, 30)

    summary = asyncio.run(main())
    assert summary.games == 1 and summary.draws == [1, 1, 1, 1]  # one deal, then scored a draw
    # nothing reaches the 4th connection until start_delay after its handshake (the ws4py race)
    assert outs[3]["first"] - outs[3]["open"] >= 0.35
    for out in outs:
        assert out["result"]["stage"] == "gameResult"
        assert out["close_code"] == 1000  # normal closure after gameResult, not a server shutdown code


# -- fallback accounting (issue 8 item 5) ------------------------------------------------------------------


async def _quitter(url: str) -> None:
    async with websockets.connect(url, max_size=None, ping_interval=None) as ws:
        async for text in ws:
            if json.loads(text)["type"] == "act":
                return  # leaves at its first decision


def test_every_fallback_decision_is_logged_and_a_seat_played_by_the_fallback_is_flagged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def main() -> Any:
        host = CompatHost(games=1, timeout=10, seed=5, max_deals=2, start_delay=0.05)
        task, port = await start(host)
        makers = [lambda u, i=i: join(u, make_agent("heuristic", seed=i)) for i in range(4)]
        makers[2] = _quitter
        clients = await connect_in_order(host, makers, port)
        await asyncio.wait_for(asyncio.gather(*clients), 120)
        return await asyncio.wait_for(task, 30)

    with caplog.at_level("INFO", logger="guandan.compat"):
        summary = asyncio.run(main())
    assert summary.mostly_fallback() == [2]
    assert summary.fallback_decisions[2] == summary.decisions[2] > 10
    assert summary.fallback_reasons[2] == {"disconnected": summary.decisions[2]}
    assert summary.fallback_decisions[0] == summary.fallback_decisions[1] == summary.fallback_decisions[3] == 0
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("fallback: seat 2")]
    assert len(lines) == summary.fallback_decisions[2] and all("disconnected" in ln for ln in lines)
    assert any("seat 2 (c2)" in r.getMessage() and "fallback bot" in r.getMessage() for r in caplog.records
               if r.levelname == "WARNING")


def test_serve_summary_flags_a_seat_played_mostly_by_the_fallback() -> None:
    from guandan.compat.host import RunSummary

    s = RunSummary(decisions=[100, 100, 100, 0], fallback_decisions=[0, 51, 50, 0])
    assert s.mostly_fallback() == [1]  # more than half; a seat never asked is not flagged
    assert s.fallback_share(1) == pytest.approx(0.51)


# -- hidden cards: the CSPRNG (issue 11) ------------------------------------------------------------------


def _first_deal_hands(record: str) -> list[list[str]]:
    with open(record, encoding="utf-8") as f:
        for line in f:
            ev = json.loads(line)
            if ev.get("type") == "deal":
                return ev["hands"]
    raise AssertionError("no deal")


def _run_records(tmp: Path, seed: int | None, games: int = 1) -> list[str]:
    async def main() -> Any:
        host = CompatHost(games=games, timeout=10, seed=seed, max_deals=2, record_dir=str(tmp), start_delay=0.05)
        task, port = await start(host)
        makers = [lambda u, i=i: join(u, make_agent("heuristic", seed=i)) for i in range(4)]
        clients = await connect_in_order(host, makers, port)
        await asyncio.wait_for(asyncio.gather(*clients), 120)
        return await asyncio.wait_for(task, 30)

    return asyncio.run(main()).records


def test_unseeded_runs_deal_different_cards_from_the_system_csprng_and_records_replay(tmp_path: Path) -> None:
    host = CompatHost(games=1)
    game = host.new_game(1)
    assert isinstance(game.rng, random.SystemRandom)  # every later shuffle and tie comes from it too
    assert game.clone().rng is game.rng  # Game.clone works with a generator that has no state
    a = _run_records(tmp_path / "a", None)
    b = _run_records(tmp_path / "b", None)
    assert _first_deal_hands(a[0]) != _first_deal_hands(b[0])
    for path in a + b:
        header = json.loads(open(path, encoding="utf-8").readline())
        assert header["seed"] is None and header["hands"] == "explicit"  # nothing depends on a seed
        res = replay(path)  # re-checks every action; the deals come from the recorded hands
        assert res.n_deals >= 2 and res.n_actions > 20
    from typer.testing import CliRunner

    from guandan.cli import app

    r = CliRunner().invoke(app, ["replay", a[0]])
    assert r.exit_code == 0, r.output


def test_seeded_runs_repeat_their_cards_and_games_of_a_run_differ(tmp_path: Path) -> None:
    a = _run_records(tmp_path / "a", 42, games=2)
    b = _run_records(tmp_path / "b", 42, games=2)
    assert [_first_deal_hands(p) for p in a] == [_first_deal_hands(p) for p in b]
    assert _first_deal_hands(a[0]) != _first_deal_hands(a[1])
    seeds = [json.loads(open(p, encoding="utf-8").readline())["seed"] for p in a]
    # game seeds are 128-bit hashes, not seed + g: one game's seed does not give the next
    assert seeds[1] != seeds[0] + 1 and all(s.bit_length() > 64 for s in seeds)
    for path in a:
        replay(path)


def test_game_clone_with_a_seeded_generator_still_copies_its_state() -> None:
    game = Game(RuleSet.preset("aicomp"), seed=9)
    copy = game.clone()
    assert copy.rng is not game.rng and copy.rng.random() == game.rng.random()


# -- a client that never reads (issue 11) -------------------------------------------------------------------


def _bot_link(host: CompatHost, seat_name: str, seed: int) -> None:
    """An in-process client: answers each act message with the heuristic through ProtocolState."""
    agent = make_agent("heuristic", seed=seed)
    state = ProtocolState()
    holder: dict[str, Any] = {}

    async def send(text: str) -> None:
        msg = json.loads(text)
        if msg.get("type") == "act":
            await holder["link"].inbox.put({"actIndex": choose_index(agent, state, msg)})
        else:
            state.on_notify(msg)

    holder["link"] = host.join(seat_name, send)


def test_a_client_whose_sends_never_complete_is_dropped_and_the_others_go_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A send that never completes (the socket buffers of a client that stopped reading are
    full) times out; the seat is then played by the fallback bot and the run finishes."""
    hung: list[float] = []

    async def never(text: str) -> None:
        hung.append(time.monotonic())
        await asyncio.Event().wait()

    dropped: list[int] = []

    async def main() -> Any:
        host = CompatHost(games=1, timeout=5, seed=2, max_deals=2, send_timeout=0.2, start_delay=0)
        link = host.join("silent", never, on_drop=lambda: dropped.append(1))
        for s in (1, 2, 3):
            _bot_link(host, f"bot{s}", s)
        assert link is not None and host.started.is_set()
        return await asyncio.wait_for(host.run(), 60)

    with caplog.at_level("INFO", logger="guandan.compat"):
        summary = asyncio.run(main())
    assert summary.games == 1 and dropped == [1]
    assert len(hung) == 1  # after the first timed-out send nothing more is sent to it
    assert summary.fallback_reasons[0] == {"send timed out": summary.decisions[0]}
    assert summary.fallback_decisions[1:] == [0, 0, 0]
    assert any("send timed out" in r.getMessage() for r in caplog.records)


def _raw_silent_client(port: int) -> socket.socket:
    """Completes the websocket handshake, then never reads (tiny receive buffer)."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", port))
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall(
        f"GET /game/silent HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n".encode()
    )
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = sock.recv(1)
        assert chunk, "the host closed the connection during the handshake"
        head += chunk
    assert head.startswith(b"HTTP/1.1 101"), head
    return sock


def _silent_client_run(games: int, ping: float) -> Any:
    async def main() -> Any:
        host = CompatHost(games=games, timeout=5, seed=4, send_timeout=1.0, start_delay=0.05)
        task, port = await start(host, ping_interval=ping, ping_timeout=ping)
        sock = await asyncio.to_thread(_raw_silent_client, port)
        for _ in range(200):
            if host.links:
                break
            await asyncio.sleep(0.02)
        makers = [lambda u, i=i: join(u, make_agent("heuristic", seed=i)) for i in range(1, 4)]
        clients = await connect_in_order(host, makers, port)
        try:
            await asyncio.wait_for(asyncio.gather(*clients), 900)
            return await asyncio.wait_for(task, 60)
        finally:
            sock.close()

    return asyncio.run(main())


def test_a_raw_client_that_never_reads_cannot_stall_a_short_run() -> None:
    summary = _silent_client_run(games=1, ping=1.0)
    assert summary.games == 1 and summary.names[0] == "silent"
    assert summary.mostly_fallback() == [0]
    assert summary.fallback_decisions[1:] == [0, 0, 0]


@pytest.mark.slow
@pytest.mark.soak
def test_a_raw_client_that_never_reads_cannot_stall_a_15_game_run() -> None:
    """Issue 11: with one silent socket the old host stopped sending to every seat after 55 s."""
    summary = _silent_client_run(games=15, ping=20.0)
    assert summary.games == 15
    assert summary.victories[1] + summary.victories[0] + summary.draws[0] == 15
    assert summary.fallback_decisions[1:] == [0, 0, 0]
