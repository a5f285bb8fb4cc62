"""Online tournament rounds in cluster mode (issue 21 item 4, :mod:`guandan.server.tournament_cluster`):
two real ``guandan serve --redis`` processes on one fresh PostgreSQL database, bot pairs in the seats,
no mocks.

* a round of bot pairs paired on one process: its tables are owned by either process, every result is
  entered exactly once (one ``result`` entry in the audit log per table) and equals the stored game's
  final levels;
* ``kill -9`` of the process that owns a table in the middle of a timed match: the other process takes
  the table, its match clock runs out at the deadline stored when the round was paired (R58: the deal
  in progress is finished, no deal follows), the result is entered once and the standings are the
  match's (R58: win 3, draw 2, loss 1);
* an owner killed after storing the game's last line but before storing the game's end: the next
  owner finishes the game and enters the result (a lock on ``games`` holds the end back);
* an owner killed after storing the finished game but before entering its result: another process
  enters it from the stored record (a lock on ``tournament_tables`` holds the entering back).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from cluster_helpers import Node, cluster, lease_holder, record_of

PASSWORD = "tournament-pass-1"
LEVELS = {"T": 10, "J": 11, "Q": 12, "K": 13, "A": 14}


def _level(text: str) -> int:
    return LEVELS.get(text) or int(text)


def _client(base: str, name: str) -> httpx.Client:
    c = httpx.Client(base_url=base, timeout=60)
    r = c.post("/api/register", json={"name": name, "password": PASSWORD})
    if r.status_code != 200:
        r = c.post("/api/login", json={"name": name, "password": PASSWORD})
    assert r.status_code == 200, r.text
    return c


def _get(c: httpx.Client, tid: int) -> dict[str, Any]:
    r = c.get(f"/api/tournaments/{tid}")
    assert r.status_code == 200, r.text
    return r.json()  # type: ignore[no-any-return]


def _bot_event(c: httpx.Client, name: str, pairs: int, **body: Any) -> int:
    """A one-round online Swiss of ``pairs`` bot pairs, round 1 paired; returns its id."""
    r = c.post("/api/tournaments", json={"venue": "online", "name": name, "rounds": 1, **body})
    assert r.status_code == 201, r.text
    tid, v = r.json()["tournament"]["id"], r.json()["tournament"]["version"]
    entries = [{"name": f"{name} {i}", "players": [f"{name}{i}x", f"{name}{i}y"], "bot": "normal", "seed": i}
               for i in range(1, pairs + 1)]
    r = c.post(f"/api/tournaments/{tid}/entries", json={"version": v, "entries": entries})
    assert r.status_code == 200, r.text
    r = c.post(f"/api/tournaments/{tid}/rounds", json={"version": _get(c, tid)["version"]})
    assert r.status_code == 200, r.text
    return tid


def _wait_round(c: httpx.Client, tid: int, timeout: float) -> dict[str, Any]:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        d = _get(c, tid)
        if d["rounds_list"][0]["complete"]:
            return d
        time.sleep(0.5)
    raise AssertionError(f"the round did not finish: {_get(c, tid)['online_tables']}")


def _record(db_url: str, game_id: int) -> list[dict[str, Any]]:
    from sqlalchemy import create_engine, text

    from guandan.server.db import normalize_url

    engine = create_engine(normalize_url(db_url))
    try:
        with engine.connect() as conn:
            rec = conn.execute(text("SELECT record FROM games WHERE id = :i"), {"i": game_id}).scalar_one()
    finally:
        engine.dispose()
    return [json.loads(x) for x in rec.splitlines()[1:] if x.strip()]


def _final_levels(events: list[dict[str, Any]]) -> tuple[int, int]:
    a, b = [e for e in events if e["type"] == "deal_end"][-1]["levels"]
    return _level(a), _level(b)


@pytest.fixture(scope="module")
def two() -> Iterator[tuple[str, list[Node]]]:
    """Two processes, bots that do not wait, 1.5 s leases."""
    with cluster(2, bot_delay_s=0.0) as (db, nodes):
        yield db, nodes


def test_round_of_bot_pairs_on_two_processes(two: tuple[str, list[Node]]) -> None:
    db, nodes = two
    c = _client(nodes[0].url, "orga_cluster")
    tid = _bot_event(c, "Clu", 12, time_limit=0)  # 6 tables, paired on process 0
    d = _wait_round(c, tid, 300)
    tables = d["online_tables"]
    assert len(tables) == 6 and {x["state"] for x in tables} == {"entered"}
    owners = set()
    for x in tables:
        owners |= {n.name for n in nodes if any(f"room {x['room']}: owned by {n.name}" in line for line in n.lines)}
        m = next(m for m in d["rounds_list"][0]["matches"] if m["table"] == x["table"])
        la, lb = _final_levels(_record(db, x["game_id"]))
        # the match result is the stored game's final levels; untimed: a side passed A (R5, R58)
        assert (m["result"]["level_a"], m["result"]["level_b"]) == (la, lb)
        assert m["result"]["passed_a"] in ("a", "b") and not m["result"]["time_called"]
    print("owners", owners, [sum(1 for x in tables for line in n.lines if f"room {x['room']}: owned by {n.name}" in line) for n in nodes])
    # the result entering ran at each table's owner, once: one audit entry per table
    log = c.get(f"/api/tournaments/{tid}/log").json()["log"]
    assert sum(1 for x in log if x["operation"] == "result") == 6
    # R58: 3 field points for the winner, 1 for the loser; 6 matches give 24 points in all
    standings = {s["id"]: s["field_points"] for s in d["standings"]}
    for m in d["rounds_list"][0]["matches"]:
        assert standings[m["a"]] == (3 if m["result"]["passed_a"] == "a" else 1)
        assert standings[m["b"]] == (3 if m["result"]["passed_a"] == "b" else 1)
    assert sum(standings.values()) == 24
    # the tables were offered to the cluster: the process that did not pair the round owns some
    assert owners == {n.name for n in nodes}


def _called_at(db: str, room: str, timeout: float, node: Node) -> float:
    """The wall time (epoch s) at which ``time_called`` first shows in the room's stored record."""
    end = time.monotonic() + timeout
    rec = ""
    while time.monotonic() < end:
        rec = record_of(db, room)
        if '"time_called"' in rec:
            return time.time()
        time.sleep(0.2)
    said = "\n".join(line for line in node.lines if room in line or "Traceback" in line)[-3000:]
    over = '"game_over"' in rec
    raise AssertionError(f"room {room}: time was never called (game over: {over}); {node.name} said:\n{said}")


def test_kill_the_owner_mid_match() -> None:
    """kill -9 of a table's owner 15 s into a timed match (1 minute): the survivor takes the table,
    its match clock runs out at the deadline stored when the round was paired (not 1 minute after
    the takeover, not never), the deal in progress is finished (R58), the result is entered once and
    the standings are the match's (R58: win 3, draw 2, loss 1)."""
    # bots wait 0.3 s a move: about two deals in the minute, so no side passes A before the clock runs out
    with cluster(2, bot_delay_s=0.3) as (db, nodes):
        c = _client(nodes[0].url, "orga_kill")
        tid = _bot_event(c, "Kil", 2, time_limit=1)
        d = _get(c, tid)
        room, deadline_ms = d["online_tables"][0]["room"], d["online_tables"][0]["deadline_ms"]
        end = time.monotonic() + 20
        while time.monotonic() < end and lease_holder(room) is None:
            time.sleep(0.1)
        time.sleep(15.0)  # the match is under way
        owner = next(n for n in nodes if n.name == lease_holder(room))
        survivor = next(n for n in nodes if n is not owner)
        events_before = record_of(db, room).count("\n")
        assert events_before > 10 and '"time_called"' not in record_of(db, room)
        owner.kill()
        c2 = _client(survivor.url, "orga_kill")
        end = time.monotonic() + 15
        while time.monotonic() < end and lease_holder(room) != survivor.name:
            time.sleep(0.1)
        assert lease_holder(room) == survivor.name
        d = _get(c2, tid)
        assert d["online_tables"][0]["state"] == "playing"
        assert d["online_tables"][0]["deadline_ms"] == deadline_ms  # the stored deadline, unchanged
        # the match clock resumed on the survivor from the stored deadline: time is called within a
        # few seconds after it (a clock started again at the takeover would call it 15 s late or more)
        called = _called_at(db, room, 90, survivor)
        assert deadline_ms / 1000 - 0.5 <= called <= deadline_ms / 1000 + 4.0, (called, deadline_ms / 1000)
        assert any(f"room {room}: the match clock ran out" in line for line in survivor.lines)
        d = _wait_round(c2, tid, 120)
        x = d["online_tables"][0]
        assert x["state"] == "entered"
        events = _record(db, x["game_id"])
        # R58: after time_called only the deal in progress is played: no deal is dealt after it
        kinds = [e["type"] for e in events]
        assert "deal" not in kinds[kinds.index("time_called"):]
        m = d["rounds_list"][0]["matches"][0]
        la, lb = _final_levels(events)
        assert (m["result"]["level_a"], m["result"]["level_b"]) == (la, lb) and m["result"]["time_called"]
        log = c2.get(f"/api/tournaments/{tid}/log").json()["log"]
        assert sum(1 for e in log if e["operation"] == "result") == 1  # entered once
        # standings (R58): a timed match is won by the higher level (passing A wins outright), equal
        # levels draw; bots are never late nor time out, so no R54 penalty moves the levels
        win = m["result"]["passed_a"] or ("a" if la > lb else "b" if lb > la else None)
        pts = {s["id"]: s["field_points"] for s in d["standings"]}
        assert pts[m["a"]] == (2 if win is None else 3 if win == "a" else 1)
        assert pts[m["b"]] == (2 if win is None else 3 if win == "b" else 1)


def test_owner_killed_between_the_last_line_and_the_games_end() -> None:
    """Found by scripts/bench_online_cluster.py --kill-after: a table stayed ``playing`` for good. Its
    owner had stored the game's last line (``game_over``) and was killed before storing the game's end
    (the ``games`` row, the room finished); the next owner replayed a game that is over, never
    finished it, and the result never went in. Reproduced here by holding a lock on ``games`` so the
    owner's end-of-game write waits, then ``kill -9``: the survivor must finish the game and enter the
    result once."""
    from sqlalchemy import create_engine, text

    from guandan.server.db import normalize_url

    with cluster(2, bot_delay_s=0.0) as (db, nodes):
        c = _client(nodes[0].url, "orga_end")
        engine = create_engine(normalize_url(db))
        locker = engine.connect()
        try:
            tx = locker.begin()
            locker.execute(text("LOCK TABLE games IN ACCESS EXCLUSIVE MODE"))
            tid = _bot_event(c, "End", 2, time_limit=0)
            room = _get(c, tid)["online_tables"][0]["room"]
            end = time.monotonic() + 240
            while time.monotonic() < end and '"game_over"' not in record_of(db, room):
                time.sleep(0.2)
            assert '"game_over"' in record_of(db, room)  # the last line is stored, the end waits
            time.sleep(0.5)
            owner = next(n for n in nodes if n.name == lease_holder(room))
            survivor = next(n for n in nodes if n is not owner)
            owner.kill()
            tx.rollback()
        finally:
            locker.close()
            engine.dispose()
        c2 = _client(survivor.url, "orga_end")
        d = _wait_round(c2, tid, 60)
        x = d["online_tables"][0]
        assert x["state"] == "entered" and x["game_id"] is not None
        m = d["rounds_list"][0]["matches"][0]
        la, lb = _final_levels(_record(db, x["game_id"]))
        assert (m["result"]["level_a"], m["result"]["level_b"]) == (la, lb)
        assert m["result"]["passed_a"] in ("a", "b")  # untimed: the game ended with a side passing A
        log = c2.get(f"/api/tournaments/{tid}/log").json()["log"]
        assert sum(1 for e in log if e["operation"] == "result") == 1
        pts = {s["id"]: s["field_points"] for s in d["standings"]}
        assert pts[m["a"]] == (3 if m["result"]["passed_a"] == "a" else 1)
        assert pts[m["b"]] == (3 if m["result"]["passed_a"] == "b" else 1)


def test_owner_killed_between_storing_the_game_and_entering_it() -> None:
    """The owner stored the finished game (the room is ``finished``, so no sweep takes it again) and
    was killed before entering the result: another process enters it from the stored record, once.
    A lock on ``tournament_tables`` holds the owner's entering back until the kill."""
    from sqlalchemy import create_engine, text

    from guandan.server.db import normalize_url

    with cluster(2, bot_delay_s=0.0) as (db, nodes):
        c = _client(nodes[0].url, "orga_enter")
        engine = create_engine(normalize_url(db))
        locker = engine.connect()
        try:
            tid = _bot_event(c, "Ent", 2, time_limit=0)
            room = _get(c, tid)["online_tables"][0]["room"]
            tx = locker.begin()  # reads go on; the owner's writes of the table's row wait
            locker.execute(text("LOCK TABLE tournament_tables IN SHARE MODE"))
            end = time.monotonic() + 240
            status = None
            while time.monotonic() < end and status != "finished":
                status = locker.execute(text("SELECT status FROM rooms WHERE id = :r"), {"r": room}).scalar()
                time.sleep(0.2)
            assert status == "finished"  # the game is stored; its result is not entered yet
            time.sleep(0.5)
            owner = next(n for n in nodes if any(f"room {room}: owned by {n.name}" in line for line in n.lines))
            survivor = next(n for n in nodes if n is not owner)
            owner.kill()
            tx.rollback()
        finally:
            locker.close()
            engine.dispose()
        c2 = _client(survivor.url, "orga_enter")
        d = _wait_round(c2, tid, 60)
        x = d["online_tables"][0]
        assert x["state"] == "entered" and x["game_id"] is not None
        assert any(f"room {room}: the finished game's result, not entered by its owner: entered" in line
                   for line in survivor.lines)
        m = d["rounds_list"][0]["matches"][0]
        la, lb = _final_levels(_record(db, x["game_id"]))
        assert (m["result"]["level_a"], m["result"]["level_b"]) == (la, lb)
        log = c2.get(f"/api/tournaments/{tid}/log").json()["log"]
        assert sum(1 for e in log if e["operation"] == "result") == 1
