"""The AI-competition protocol host and client over real websockets on loopback.

The scripted client below is written only against docs/protocol.md (the project's copy of
docs/protocol.md): it checks every message kind and field it receives and answers with a
random valid ``actIndex``.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
from pathlib import Path
from typing import Any

import websockets

from guandan.agents import make_agent
from guandan.compat.client import join
from guandan.compat.host import CompatHost, serve
from guandan.compat.notation import action_from_platform, card_from_platform

RANKS = set("23456789TJQKA")
SUITS = set("SHCD")
TYPES = {"Single", "Pair", "Trips", "ThreePair", "ThreeWithTwo", "TwoTrips", "Straight", "StraightFlush", "Bomb", "PASS", "tribute", "back"}


def is_card(c: Any) -> bool:
    return c in ("SB", "HR") or (isinstance(c, str) and len(c) == 2 and c[0] in SUITS and c[1] in RANKS)


def is_action(a: Any) -> bool:
    if a == ["PASS", "PASS", "PASS"]:
        return True
    return isinstance(a, list) and len(a) == 3 and a[0] in TYPES and isinstance(a[2], list) and all(is_card(c) for c in a[2])


def is_empty_action(a: Any) -> bool:
    return a is None or a == [None, None, None]


def check_message(msg: dict[str, Any], seen: list[str]) -> None:
    """Field-by-field checks from PROTOCOL.md §2-§4."""
    assert msg["type"] in ("notify", "act"), msg
    stage = msg["stage"]
    if not seen:
        assert stage == "beginning", "the first message must be beginning (§9)"
    seen.append(stage)
    if msg["type"] == "notify":
        if stage == "beginning":
            assert len(msg["handCards"]) == 27 and all(is_card(c) for c in msg["handCards"])
            assert msg["myPos"] in range(4)
        elif stage == "play":
            assert msg["curPos"] in range(4) and is_action(msg["curAction"])
            assert msg["greaterPos"] in range(-1, 4)
            assert is_action(msg["greaterAction"]) or is_empty_action(msg["greaterAction"])
        elif stage in ("tribute", "back"):
            assert 1 <= len(msg["result"]) <= 2
            for frm, to, card in msg["result"]:
                assert frm in range(4) and to in range(4) and frm != to and is_card(card)
        elif stage == "anti-tribute":
            assert msg["antiNums"] == len(msg["antiPos"]) and all(p in range(4) for p in msg["antiPos"])
        elif stage == "episodeOver":
            assert sorted(msg["order"]) == [0, 1, 2, 3]
            assert msg["curRank"] in RANKS
            for pos, cards in msg["restCards"]:
                assert pos in range(4) and cards and all(is_card(c) for c in cards)
        elif stage == "gameOver":
            assert 1 <= msg["curTimes"] <= msg["settingTimes"]
        elif stage == "gameResult":
            assert len(msg["victoryNum"]) == 4 and len(msg["draws"]) == 4
        else:
            raise AssertionError(f"unknown notify stage {stage}")
        return
    assert stage in ("play", "tribute", "back"), stage
    for key in ("handCards", "publicInfo", "selfRank", "oppoRank", "curRank", "curPos", "curAction",
                "greaterPos", "greaterAction", "actionList", "indexRange"):
        assert key in msg, key
    assert all(is_card(c) for c in msg["handCards"])
    assert len(msg["publicInfo"]) == 4
    for p in msg["publicInfo"]:
        assert isinstance(p["rest"], int) and (p["playArea"] is None or is_action(p["playArea"]))
    assert {msg["selfRank"], msg["oppoRank"], msg["curRank"]} <= RANKS
    acts = msg["actionList"]
    assert msg["indexRange"] == len(acts) - 1 and acts and all(is_action(a) for a in acts)
    if stage == "tribute":
        assert all(a[:2] == ["tribute", "tribute"] and len(a[2]) == 1 for a in acts)
        assert msg["curPos"] == -1 and msg["greaterPos"] == -1
    elif stage == "back":
        assert all(a[:2] == ["back", "back"] and len(a[2]) == 1 for a in acts)
    else:
        leading = msg["greaterPos"] == -1
        if leading:
            assert is_empty_action(msg["greaterAction"])
            assert all(a[0] != "PASS" for a in acts), "no PASS when leading (§2)"
        else:
            assert acts[0] == ["PASS", "PASS", "PASS"], "PASS is index 0 when following (§9)"
            assert all(a[0] != "PASS" for a in acts[1:])
    for a in acts:  # every offered card is in the hand
        for c in a[2] if a[0] != "PASS" else []:
            assert c in msg["handCards"]


async def scripted_client(url: str, seed: int, log: list[str], behaviour: str = "good") -> dict[str, Any] | None:
    rng = random.Random(seed)
    decisions = 0
    async with websockets.connect(url, max_size=None, ping_interval=None) as ws:
        async for text in ws:
            msg = json.loads(text)
            check_message(msg, log)
            if msg["type"] == "act":
                decisions += 1
                if behaviour == "out_of_range" and "notice" not in msg:
                    await ws.send(json.dumps({"actIndex": msg["indexRange"] + 5}))
                    continue
                if behaviour == "garbage" and "notice" not in msg:
                    await ws.send("this is not json")
                    continue
                if behaviour == "sleeper" and decisions in (2, 6, 11):
                    await asyncio.sleep(0.6)  # past the host's timeout: the fallback bot plays
                if behaviour == "disconnect" and decisions == 25:
                    return None
                await ws.send(json.dumps({"actIndex": rng.randint(0, msg["indexRange"])}))
            elif msg["stage"] == "gameResult":
                return msg
    return None


async def run_table(clients: list[Any], host: CompatHost) -> tuple[Any, list[Any]]:
    ready = asyncio.Event()
    box: dict[str, int] = {}

    def on_ready(p: int) -> None:
        box["port"] = p
        ready.set()

    server = asyncio.create_task(serve(host, port=0, ready=on_ready))
    await asyncio.wait_for(ready.wait(), 10)
    tasks = []
    for i, make in enumerate(clients):
        tasks.append(asyncio.create_task(make(f"ws://127.0.0.1:{box['port']}/game/client{i + 1}")))
        await asyncio.sleep(0.05)  # connection order decides the seats
    results = await asyncio.wait_for(asyncio.gather(*tasks), 240)
    summary = await asyncio.wait_for(server, 30)
    return summary, results


def test_scripted_clients_see_every_message_kind(tmp_path: Path) -> None:
    logs: list[list[str]] = [[], [], [], []]
    host = CompatHost(games=2, timeout=10, seed=3, record_dir=str(tmp_path))
    clients = [lambda url, i=i: scripted_client(url, i, logs[i]) for i in range(4)]
    summary, results = asyncio.run(run_table(clients, host))
    assert summary.games == 2 and sum(summary.fallback_decisions) == 0 and sum(summary.bad_replies) == 0
    for r in results:
        assert r is not None and r["victoryNum"] == summary.victories
    # each game is won by one team: both its seats get the victory
    assert summary.victories[0] == summary.victories[2] and summary.victories[1] == summary.victories[3]
    assert summary.victories[0] + summary.victories[1] + summary.draws[0] == 2
    stages = set(logs[0])
    assert {"beginning", "play", "tribute", "back", "episodeOver", "gameOver", "gameResult"} <= stages
    # records replay through the engine's checks
    from guandan.records import replay

    assert len(summary.records) == 2
    for path in summary.records:
        replay(path)


def test_four_join_clients_play_complete_games() -> None:
    host = CompatHost(games=1, timeout=10, seed=8)
    clients = [lambda url, i=i: join(url, make_agent("heuristic", seed=i)) for i in range(4)]
    summary, results = asyncio.run(run_table(clients, host))
    assert summary.games == 1 and sum(summary.fallback_decisions) == 0 and sum(summary.bad_replies) == 0
    assert sorted(r.seat for r in results) == [0, 1, 2, 3]
    assert all(r.games == 1 and r.result is not None for r in results)
    assert sum(r.decisions for r in results) > 50


def test_bad_clients_cannot_stall_or_crash_the_game() -> None:
    logs: list[list[str]] = [[], [], [], []]
    host = CompatHost(games=1, timeout=0.25, seed=5)
    clients = [
        lambda url: scripted_client(url, 0, logs[0], "out_of_range"),
        lambda url: scripted_client(url, 1, logs[1], "sleeper"),
        lambda url: scripted_client(url, 2, logs[2], "disconnect"),
        lambda url: scripted_client(url, 3, logs[3], "garbage"),
    ]
    summary, results = asyncio.run(run_table(clients, host))
    assert summary.games == 1
    assert summary.victories[0] + summary.victories[1] == 1  # the game finished with a winner
    assert summary.bad_replies[0] > 0 and summary.bad_replies[3] > 0
    assert summary.fallback_decisions[1] > 0  # the sleeper's late decisions
    assert summary.fallback_decisions[2] > 0  # the disconnected seat is played by the fallback bot
    assert results[2] is None and results[0] is not None and results[1] is not None


def test_table_full_and_cli_errors() -> None:
    from typer.testing import CliRunner

    from guandan.cli import app

    runner = CliRunner()
    res = runner.invoke(app, ["compat", "join", "http://nope", "--bot", "heuristic"])
    assert res.exit_code == 2 and "websocket address" in res.output
    res = runner.invoke(app, ["compat", "join", "ws://127.0.0.1:9/game/x", "--bot", "nobody"])
    assert res.exit_code == 2 and "unknown agent" in res.output
    host = CompatHost(games=1)
    for i in range(4):
        assert host.join(f"c{i}", lambda s: None) is not None
    assert host.join("fifth", lambda s: None) is None


def test_client_tolerates_null_and_list_empty_actions() -> None:
    from guandan.compat.client import ProtocolState, choose_index

    state = ProtocolState()
    state.on_notify({"type": "notify", "stage": "beginning", "handCards": ["S2"] * 1, "myPos": 1})
    for empty in (None, [None, None, None]):
        msg = {
            "type": "act", "stage": "play", "handCards": ["S2", "H3"],
            "publicInfo": [{"rest": 27, "playArea": None}] * 4, "selfRank": "2", "oppoRank": "2", "curRank": "2",
            "curPos": -1, "curAction": empty, "greaterPos": -1, "greaterAction": empty,
            "actionList": [["Single", "2", ["S2"]], ["Single", "3", ["H3"]]], "indexRange": 1,
        }
        idx = choose_index(make_agent("random", seed=1), state, msg)
        assert idx in (0, 1)
    assert action_from_platform(["Single", "3", ["H3"]], 0)[2] == (card_from_platform("H3"),)


def test_reply_parsing_never_raises() -> None:
    from guandan.compat.host import _reply_index

    acts = [["PASS", "PASS", "PASS"], ["Single", "3", ["S3"]]]
    assert _reply_index({"actIndex": 1}, acts) == 1
    assert _reply_index({"actIndex": "1"}, acts) == 1
    for bad in ("²", "--1", "-1", "1.0", "9" * 5000, True, None, 1.5, [1], -1, 2):
        assert _reply_index({"actIndex": bad}, acts) is None
    assert _reply_index(["Single", "3", ["S3"]], acts) == 1  # the older reply form (PROTOCOL.md §5)
    for frame in (b"\x00\x01", "[" * 100000, "9" * 5000, "x" * 70000, "null"):
        parsed = CompatHost.parse_reply(frame)
        assert _reply_index(parsed, acts) is None


def test_client_leaving_before_the_start_frees_its_seat() -> None:
    host = CompatHost(games=1)
    a = host.join("early", lambda s: None)
    assert a is not None
    host.leave(a)
    links = [host.join(f"c{i}", lambda s: None) for i in range(4)]
    assert all(link is not None for link in links)
    assert [link.seat for link in links if link] == [0, 1, 2, 3] and host.started.is_set()
    assert host.summary.names == ["c0", "c1", "c2", "c3"]
    host.leave(links[0])  # after the start the seat stays (the fallback bot plays it)
    assert len(host.links) == 4


def test_serve_reports_a_busy_port_cleanly(tmp_path: Path) -> None:
    import socket

    from typer.testing import CliRunner

    from guandan.cli import app

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    port = sock.getsockname()[1]
    try:
        res = CliRunner().invoke(app, ["compat", "serve", "--port", str(port)])
        assert res.exit_code == 1 and "cannot listen" in res.output and "Traceback" not in res.output
    finally:
        sock.close()
    afile = tmp_path / "afile"
    afile.write_text("x")
    res = CliRunner().invoke(app, ["compat", "serve", "--port", "0", "--record", str(afile)])
    assert res.exit_code == 2 and "--record" in res.output
    res = CliRunner().invoke(app, ["compat", "serve", "--port", "70000"])
    assert res.exit_code == 2


def test_clients_leaving_after_game_result_are_not_reported_lost() -> None:
    """Four `guandan compat join` processes leave as soon as gameResult arrives. The host logged
    each of them as "disconnected; the fallback bot plays this seat" at that normal finish: the
    first client's close raced the broadcast of gameResult to the others."""
    import socket
    import subprocess
    import sys
    import time

    exe = str(Path(sys.executable).with_name("guandan"))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen([exe, "compat", "serve", "--port", str(port), "--games", "1", "--seed", "4"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 20
        while True:  # wait until it listens
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline and server.poll() is None, "compat serve did not start"
                time.sleep(0.1)
        clients = []
        for i in range(4):
            clients.append(subprocess.Popen([exe, "compat", "join", f"ws://127.0.0.1:{port}/game/c{i}",
                                             "--bot", "heuristic", "--seed", str(i)],
                                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            time.sleep(0.1)  # connection order decides the seats
        assert [c.wait(120) for c in clients] == [0, 0, 0, 0]
        _out, err = server.communicate(timeout=30)
    finally:
        server.kill()
    assert server.returncode == 0, err
    # each client left once (seats follow connection order, which a loaded machine may swap)
    assert sorted(re.findall(r"seat \d: (c\d) disconnected", err)) == ["c0", "c1", "c2", "c3"], err
    assert "fallback" not in err, err
