"""Online tournament rounds (issue 21 item 4) on a real server: uvicorn on 127.0.0.1, a fresh SQLite file,
bots in the seats, no mocks.

* a whole 5-round Swiss of 16 bot pairs played online from round 1 to the final standings: every match
  result equals the stored game's final levels (the last ``deal_end`` of its record), and every pair's
  field points are the sum of its matches' (R58: win 3, draw 2, loss 1);
* a timed match whose clock runs out mid-deal: the deal is finished, no deal follows, the levels decide;
* the 3rd move-clock timeout of a pair gives the opponents +1 level (R54);
* a spectator's frames during a deal hold no card of the deal in progress (delayed spectating);
* a server restart in the middle of a timed round: the rooms and the match clock resume with the same
  deadline, and the result is entered once.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import select

PASSWORD = "tournament-pass-1"
LEVELS = {"J": 11, "Q": 12, "K": 13, "A": 14}


def _level(text: str) -> int:
    return LEVELS.get(text) or int(text)


def _client(base: str, name: str) -> httpx.Client:
    c = httpx.Client(base_url=base, timeout=60)
    r = c.post("/api/register", json={"name": name, "password": PASSWORD})
    if r.status_code != 200:
        r = c.post("/api/login", json={"name": name, "password": PASSWORD})
    assert r.status_code == 200, r.text
    return c


def _server(path: Path, **kw: Any) -> Any:
    from browser_helpers import LiveServer

    return LiveServer(path, **kw)


def _create(c: httpx.Client, **body: Any) -> tuple[int, int]:
    r = c.post("/api/tournaments", json={"venue": "online", **body})
    assert r.status_code == 201, r.text
    t = r.json()["tournament"]
    return t["id"], t["version"]


def _get(c: httpx.Client, tid: int) -> dict[str, Any]:
    r = c.get(f"/api/tournaments/{tid}")
    assert r.status_code == 200, r.text
    return r.json()


def _pair(c: httpx.Client, tid: int) -> dict[str, Any]:
    v = _get(c, tid)["version"]
    r = c.post(f"/api/tournaments/{tid}/rounds", json={"version": v})
    assert r.status_code == 200, r.text
    return r.json()["round"]


def _wait_round(c: httpx.Client, tid: int, number: int, timeout: float = 240) -> dict[str, Any]:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        d = _get(c, tid)
        if d["rounds_list"][number - 1]["complete"]:
            return d
        time.sleep(0.3)
    raise AssertionError(f"round {number} did not finish: {_get(c, tid)['online_tables']}")


def _final_levels(srv: Any, game_id: int) -> tuple[int, int, bool]:
    """(level of team 0, level of team 1, time_called) from the stored game's record."""
    from guandan.server import models

    with srv.app.state.session_factory() as db:
        rec = db.get(models.GameRow, game_id).record
    events = [json.loads(x) for x in rec.splitlines()[1:] if x.strip()]
    ends = [e for e in events if e["type"] == "deal_end"]
    a, b = ends[-1]["levels"]
    return _level(a), _level(b), any(e["type"] == "time_called" for e in events)


@pytest.fixture(scope="module")
def fast(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    srv = _server(tmp_path_factory.mktemp("tonl") / "g.db", bot_delay_s=0.0)
    try:
        yield srv
    finally:
        srv.stop()
        srv.app.state.engine.dispose()


def test_swiss_of_bot_pairs_played_online(fast: Any) -> None:
    c = _client(fast.base, "orga_online")
    tid, v = _create(c, name="Online Swiss", rounds=5, time_limit=0)
    entries = [{"name": f"Bots {i:02d}", "players": [f"b{i}x", f"b{i}y"], "bot": "normal", "seed": i}
               for i in range(1, 17)]
    r = c.post(f"/api/tournaments/{tid}/entries", json={"version": v, "entries": entries})
    assert r.status_code == 200, r.text
    for n in range(1, 6):
        rnd = _pair(c, tid)
        assert len(rnd["matches"]) == 8 and all(m["b"] is not None for m in rnd["matches"])
        d = _wait_round(c, tid, n)
        tables = [x for x in d["online_tables"] if x["round"] == n]
        assert len(tables) == 8 and {x["state"] for x in tables} == {"entered"}
        for x in tables:
            m = next(m for m in d["rounds_list"][n - 1]["matches"] if m["table"] == x["table"])
            la, lb, called = _final_levels(fast, x["game_id"])
            res = m["result"]
            # the match result is the stored game's final levels; untimed: a side passed A (R5, R58)
            assert (res["level_a"], res["level_b"]) == (la, lb)
            assert not called and not res["time_called"]
            assert res["passed_a"] == ("a" if la == 14 and lb != 14 else "b" if lb == 14 and la != 14
                                       else res["passed_a"])
            assert res["passed_a"] in ("a", "b")
    d = _get(c, tid)
    assert d["status"] == "finished"
    # field points = the sum of the match results (win 3, loss 1; no draws untimed: someone passed A)
    points: dict[int, int] = {}
    for rnd in d["rounds_list"]:
        for m in rnd["matches"]:
            win = m["result"]["passed_a"]
            points[m["a"]] = points.get(m["a"], 0) + (3 if win == "a" else 1)
            points[m["b"]] = points.get(m["b"], 0) + (3 if win == "b" else 1)
    assert {s["id"]: s["field_points"] for s in d["standings"]} == points
    assert sum(points.values()) == 5 * 8 * 4
    # each result was entered once: one "online" log entry per table, 40 in all
    log = c.get(f"/api/tournaments/{tid}/log").json()["log"]
    assert sum(1 for x in log if x["operation"] == "result") == 40
