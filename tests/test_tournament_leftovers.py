"""Issue 21 leftovers on a real server (uvicorn on 127.0.0.1, a fresh SQLite file, bots in the seats, no
mocks): ``null`` settings, removing a co-director, a typed result over a table still playing, an
online event played to target level 8, and the tournament's decision at the table's game over.

Expected values are worked out from docs/rules.md: R58 (win 3, draw 2, loss 1; passing the target wins),
R54 (timeouts from the 3rd on: +1 level each for the opponents), AMB-17 (target level 8).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

PASSWORD = "tournament-pass-1"


def _client(base: str, name: str) -> httpx.Client:
    c = httpx.Client(base_url=base, timeout=60)
    r = c.post("/api/register", json={"name": name, "password": PASSWORD})
    if r.status_code != 200:
        r = c.post("/api/login", json={"name": name, "password": PASSWORD})
    assert r.status_code == 200, r.text
    return c


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from browser_helpers import LiveServer

    s = LiveServer(tmp_path_factory.mktemp("tleft") / "g.db", bot_delay_s=0.0)
    try:
        yield s
    finally:
        s.stop()
        s.app.state.engine.dispose()


def _get(c: httpx.Client, tid: int) -> dict[str, Any]:
    r = c.get(f"/api/tournaments/{tid}")
    assert r.status_code == 200, r.text
    return r.json()


def _wait(cond: Any, timeout: float = 120) -> Any:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        got = cond()
        if got:
            return got
        time.sleep(0.2)
    raise AssertionError("timed out")


# --- 1. null means the default; a wrong type is 400 bad_number -------------------------------------


def test_null_numbers_take_the_defaults(srv: Any) -> None:
    c = _client(srv.base, "orga_nulls")
    body = {"name": "Nulls", "venue": "online", "clock_lead_s": None, "clock_follow_s": None, "rounds": None,
            "time_limit": None, "knockout_time_limit": None, "late_minutes": None, "groups": None,
            "knockout_size": None, "prizes": None}
    r = c.post("/api/tournaments", json=body)
    assert r.status_code == 201, r.text  # was 500: None reached the engine
    tid = r.json()["tournament"]["id"]
    d = _get(c, tid)
    # the documented defaults (docs/tournaments.md): 5 rounds, 70-minute matches, 120 in knock-outs, 3 prizes
    assert (d["rounds"], d["match_minutes"], d["knockout_minutes"], d["prizes_count"]) == (5, 70, 120, 3)
    state = c.get(f"/api/tournaments/{tid}/export.json").json()
    assert (state["clock_lead_s"], state["clock_follow_s"], state["late_minutes"]) == (60, 30, None)


@pytest.mark.parametrize("value", ["60", 1.5, True, [60], {"s": 60}, 0, 601])
def test_a_wrong_number_is_bad_number(srv: Any, value: Any) -> None:
    c = _client(srv.base, "orga_numbers")
    r = c.post("/api/tournaments", json={"name": "Bad clock", "clock_lead_s": value})
    assert r.status_code == 400, r.text
    err = r.json()
    assert err["code"] == "bad_number" and err["params"] == {"field": "clock_lead_s", "min": 1, "max": 600}
    assert "clock_lead_s must be a whole number from 1 to 600" in err["error"]


def test_null_counts_in_a_result_are_zero(srv: Any) -> None:
    c = _client(srv.base, "orga_nullres")
    tid = c.post("/api/tournaments", json={"name": "Null result", "rounds": 1}).json()["tournament"]["id"]
    v = _get(c, tid)["version"]
    r = c.post(f"/api/tournaments/{tid}/entries", json={"version": v, "entries": [
        {"players": ["n1", "n2"]}, {"players": ["n3", "n4"]}]})
    assert r.status_code == 200, r.text
    r = c.post(f"/api/tournaments/{tid}/rounds", json={"version": r.json()["version"]})
    assert r.status_code == 200, r.text
    r = c.post(f"/api/tournaments/{tid}/results", json={
        "version": r.json()["version"], "round": 1, "table": 1, "level_a": 9, "level_b": 7, "time_called": True,
        "timeouts_a": None, "late_b": None})
    assert r.status_code == 200, r.text
    res = r.json()["round"]["matches"][0]["result"]
    assert (res["timeouts_a"], res["late_b"]) == (0, 0)


# --- 3. removing a co-director ---------------------------------------------------------------------


def test_remove_codirector(srv: Any) -> None:
    owner = _client(srv.base, "orga_co")
    co = _client(srv.base, "co_dir_1")
    _client(srv.base, "co_dir_2")
    tid = owner.post("/api/tournaments", json={"name": "Co"}).json()["tournament"]["id"]
    for n in ("co_dir_1", "co_dir_2"):
        r = owner.post(f"/api/tournaments/{tid}/codirectors", json={"version": _get(owner, tid)["version"], "name": n})
        assert r.status_code == 200, r.text
    v = _get(owner, tid)["version"]
    # a co-director cannot remove one: only the organiser
    r = _delete(co, f"/api/tournaments/{tid}/codirectors/co_dir_2", v)
    assert (r.status_code, r.json()["code"]) == (403, "organiser_only")
    # not a co-director: 404 (a stranger, the organiser, an account that does not exist)
    _client(srv.base, "co_stranger")
    for name in ("co_stranger", "orga_co", "nobody_here"):
        r = _delete(owner, f"/api/tournaments/{tid}/codirectors/{name}", v)
        assert (r.status_code, r.json()["code"]) == (404, "not_codirector"), name
    r = _delete(owner, f"/api/tournaments/{tid}/codirectors/co_dir_1", v)
    assert r.status_code == 200, r.text
    assert r.json()["codirectors"] == ["co_dir_2"] and r.json()["version"] == v + 1
    # co_dir_1 directs no more: the tournament refuses a change from them, the page says so
    d = co.get(f"/api/tournaments/{tid}").json()
    assert d["codirectors"] == ["co_dir_2"] and d["can_direct"] is False
    r = co.post(f"/api/tournaments/{tid}/entries", json={"version": v + 1, "entries": [{"players": ["x1", "x2"]}]})
    assert (r.status_code, r.json()["code"]) == (403, "not_director")
    # the engine's state forgot them as well, and the audit log keeps who was removed
    assert c_state(owner, tid)["directors"] == ["orga_co", "co_dir_2"]
    log = owner.get(f"/api/tournaments/{tid}/log").json()["log"]
    assert log[-1]["operation"] == "remove_codirector" and log[-1]["by"] == "orga_co"
    assert log[-1]["before"] == ["orga_co", "co_dir_1", "co_dir_2"] and log[-1]["after"] == ["orga_co", "co_dir_2"]
    # a stale version is refused as everywhere
    r = _delete(owner, f"/api/tournaments/{tid}/codirectors/co_dir_2", v)
    assert (r.status_code, r.json()["code"]) == (409, "stale_version")


def _delete(c: httpx.Client, url: str, version: int) -> httpx.Response:
    # a change is sent as JSON (the app's guard answers 415 otherwise), the version in the query
    return c.request("DELETE", url, params={"version": version}, json={})


def c_state(c: httpx.Client, tid: int) -> dict[str, Any]:
    return c.get(f"/api/tournaments/{tid}/export.json").json()


# --- 5. an online event to target level 8 ------------------------------------------------------------


def _bot_event(c: httpx.Client, name: str, **body: Any) -> int:
    r = c.post("/api/tournaments", json={"name": name, "venue": "online", "rounds": 1, "time_limit": 0, **body})
    assert r.status_code == 201, r.text
    tid = r.json()["tournament"]["id"]
    entries = [{"name": f"{name} {i}", "players": [f"{name}{i}x", f"{name}{i}y"], "bot": "normal", "seed": i}
               for i in (1, 2)]
    r = c.post(f"/api/tournaments/{tid}/entries", json={"version": _get(c, tid)["version"], "entries": entries})
    assert r.status_code == 200, r.text
    return tid


def test_online_event_to_target_level_8_finishes(srv: Any) -> None:
    c = _client(srv.base, "orga_eight")
    tid = _bot_event(c, "Eight", overrides={"target_level": "8"})
    r = c.post(f"/api/tournaments/{tid}/rounds", json={"version": _get(c, tid)["version"]})
    assert r.status_code == 200, r.text
    d = _wait(lambda: (x := _get(c, tid))["rounds_list"][0]["complete"] and x, 180)
    x = d["online_tables"][0]
    assert x["state"] == "entered"  # was "held": "only a side at A can pass A"
    m = d["rounds_list"][0]["matches"][0]
    res = m["result"]
    # untimed: the side that passed 8 stands at 8 and wins (R58: 3 field points, the other 1)
    win = res["passed_a"]
    assert win in ("a", "b") and res[f"level_{win}"] == 8 and not res["time_called"]
    fp = {s["id"]: s["field_points"] for s in d["standings"]}
    assert (fp[m["a"]], fp[m["b"]]) == ((3, 1) if win == "a" else (1, 3))
    assert d["status"] == "finished"
    # the table's state frames carry the tournament's decision once the result is in (item 6)
    comp = srv.app.state.manager.competitions[x["room"]]
    got = _wait(lambda: comp.frame(None)["decision"], 30)
    lose = "b" if win == "a" else "a"
    assert got["winner"] == win and got["passed"] == win
    assert got["field_points"] == ([3, 1] if win == "a" else [1, 3])
    assert got["levels"][0 if win == "a" else 1] == 8 and got["levels"][0 if lose == "a" else 1] == res[f"level_{lose}"]
    # the organiser's later penalty "loses the match" (R54) on the winner: the table shows the new decision
    r = c.post(f"/api/tournaments/{tid}/penalties", json={"version": d["version"], "round": 1, "table": 1,
                                                         "side": win, "levels": 0, "reason": "signalling x3",
                                                         "loses_match": True})
    assert r.status_code == 200, r.text
    now = comp.frame(None)["decision"]
    assert now["winner"] == lose and now["field_points"] == ([1, 3] if win == "a" else [3, 1])


def test_bad_overrides(srv: Any) -> None:
    c = _client(srv.base, "orga_badov")
    r = c.post("/api/tournaments", json={"name": "Bad", "overrides": ["target_level=8"]})
    assert (r.status_code, r.json()["code"]) == (400, "bad_overrides")
    r = c.post("/api/tournaments", json={"name": "Bad", "overrides": {"target_level": "9"}})
    assert (r.status_code, r.json()["code"]) == (400, "bad_config")


def test_the_engine_takes_a_pass_of_target_8() -> None:
    """AMB-17: with ``target_level`` 8 the winner of an untimed match stands at 8 when it passes; the
    engine took only a pass from A (R37) and the online table was ``held``."""
    from guandan.tournament.director import add_entry, pair_next_round
    from guandan.tournament.errors import ImpossibleLevel
    from guandan.tournament.model import MatchResult, Player, Tournament
    from guandan.tournament.online import enter_online_result, result_of_game
    from guandan.tournament.scoring import standings

    t = Tournament(name="eight", rounds=1, match_minutes=None, overrides={"target_level": "8"}, venue="online")
    for i in (1, 2):
        add_entry(t, f"E{i}", [Player(f"p{i}"), Player(f"q{i}")], seed=i, at="t0")
    pair_next_round(t, at="t1")
    with pytest.raises(ImpossibleLevel):  # a pass of 8 by the side at 7 is not possible
        enter_online_result(t, 1, 1, result_of_game((7, 5), 0, False), at="t2", game_id=None)
    assert enter_online_result(t, 1, 1, result_of_game((6, 8), 1, False), at="t2", game_id=7)
    assert t.played[0].matches[0].result == MatchResult(6, 8, passed_a="b")
    s = {x.id: x for x in standings(t)}
    m = t.played[0].matches[0]
    # R58: the winner 3 field points, the loser 1; 累积小分 = level − 2 (+1 for passing): 8 − 2 + 1 = 7, 6 − 2 = 4
    assert (s[m.b].field_points, s[m.a].field_points) == (3, 1)
    assert (s[m.b].cumulative, s[m.a].cumulative) == (7, 4)
    # with target A the same result is impossible (R37: A is passed from A)
    t.overrides = {}
    t.played[0].matches[0].result = None
    with pytest.raises(ImpossibleLevel):
        enter_online_result(t, 1, 1, result_of_game((6, 8), 1, False), at="t3", game_id=7)


# --- 4. a typed result over a table still playing ----------------------------------------------------


def _on_loop(srv: Any, coro: Any) -> Any:
    import asyncio

    return asyncio.run_coroutine_threadsafe(coro, srv.server.servers[0].get_loop()).result(30)


def test_typed_result_over_a_playing_table_needs_override(srv: Any) -> None:
    c = _client(srv.base, "orga_live")
    names = [f"live_p{i}" for i in range(4)]
    for n in names:
        _client(srv.base, n)
    r = c.post("/api/tournaments", json={"name": "Live", "venue": "online", "rounds": 1, "time_limit": 70})
    tid = r.json()["tournament"]["id"]
    entries = [{"name": "L1", "players": names[:2], "seed": 1}, {"name": "L2", "players": names[2:], "seed": 2}]
    assert c.post(f"/api/tournaments/{tid}/entries",
                  json={"version": _get(c, tid)["version"], "entries": entries}).status_code == 200
    r = c.post(f"/api/tournaments/{tid}/rounds", json={"version": _get(c, tid)["version"]})
    assert r.status_code == 200, r.text
    d = _get(c, tid)
    x = d["online_tables"][0]
    assert x["state"] == "playing"  # nobody connected: the game waits at the first person's turn
    body = {"version": d["version"], "round": 1, "table": 1, "level_a": "K", "level_b": 9, "time_called": True}
    r = c.post(f"/api/tournaments/{tid}/results", json=body)
    assert r.status_code == 409, r.text
    assert r.json()["code"] == "table_playing" and r.json()["params"] == {"round": 1, "table": 1, "room": x["room"]}
    assert _get(c, tid)["version"] == d["version"]  # nothing was written
    r = c.post(f"/api/tournaments/{tid}/results", json={**body, "override": True})
    assert r.status_code == 200, r.text
    d = _get(c, tid)
    assert d["online_tables"][0]["state"] == "entered" and d["rounds_list"][0]["complete"]
    res = d["rounds_list"][0]["matches"][0]["result"]
    assert (res["level_a"], res["level_b"], res["time_called"]) == (13, 9, True)
    # the live game ends later with another result: it is not entered a second time, nothing is held
    from guandan.tournament.online import result_of_game

    online = srv.app.state.online_rounds
    got = _on_loop(srv, srv.app.state.manager.run_db(online._enter, x["room"], result_of_game((14, 5), 0, False), None))
    assert got == "already"
    after = _get(c, tid)
    assert after["version"] == d["version"] and after["rounds_list"][0]["matches"][0]["result"] == res
    assert after["online_tables"][0]["state"] == "entered"
    # K v 9 on time: A's pair wins (R58: 3 and 1 field points); the log has one result, the organiser's
    fp = {s["id"]: s["field_points"] for s in after["standings"]}
    m = after["rounds_list"][0]["matches"][0]
    assert (fp[m["a"]], fp[m["b"]]) == (3, 1)
    log = c.get(f"/api/tournaments/{tid}/log").json()["log"]
    assert [a["by"] for a in log if a["operation"] == "result"] == ["orga_live"]
    assert x["room"] not in online.live  # its clock and lateness watch stopped


# --- 6. the table's game over shows the tournament's decision -------------------------------------------


def test_decision_after_timeout_penalties_differs_from_raw_levels() -> None:
    """K v Q on time, side a with 4 move-clock timeouts: R54 gives b +1 level for the 3rd and the 4th, so
    b stands at Q + 2 = A against K and wins the match (R58: 1 and 3 field points), though a reached the
    higher level at the table."""
    from guandan.tournament.director import add_entry, pair_next_round
    from guandan.tournament.model import Player, Tournament
    from guandan.tournament.online import decision_of, enter_online_result, result_of_game

    t = Tournament(name="pens", rounds=1, venue="online")
    for i in (1, 2):
        add_entry(t, f"E{i}", [Player(f"p{i}"), Player(f"q{i}")], seed=i, at="t0")
    pair_next_round(t, at="t1")
    assert decision_of(t, 1, 1) is None  # no result yet
    enter_online_result(t, 1, 1, result_of_game((13, 12), None, True, timeouts=(4, 0)), at="t2", game_id=1)
    assert decision_of(t, 1, 1) == {
        "winner": "b", "outcome": ["loss", "win"], "field_points": [1, 3], "levels": [13, 14], "reached": [13, 12],
        "penalty_levels": [0, 2], "passed": None, "time_called": True, "extra_deal": None}
