"""Players enter their own result with their pair's code (issue 21 item 5) on a real server (uvicorn on
127.0.0.1, a fresh SQLite file; no mocks): the directors read the codes (one per pair), a player without
an account claims with the code, the side is the code's (one pair cannot finalise alone), equal claims
stand, different ones wait for the organiser, a single claim is confirmed by the organiser, a wrong code
is 403 and too many of them 429, and a pair's sixth claim in 10 minutes is 429 ``too_many_claims``.

Expected numbers from docs/rules.md R58 (win 3, draw 2, loss 1; on time the levels decide) and the
seeded first round of docs/tournaments.md (6 pairs by seed: 1 v 4, 2 v 5, 3 v 6).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

PASSWORD = "tournament-pass-1"


def _client(base: str, name: str | None) -> httpx.Client:
    c = httpx.Client(base_url=base, timeout=30)
    if name is not None:
        r = c.post("/api/register", json={"name": name, "password": PASSWORD})
        assert r.status_code == 200, r.text
    return c


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from browser_helpers import LiveServer

    s = LiveServer(tmp_path_factory.mktemp("tclaim") / "g.db")
    try:
        yield s
    finally:
        s.stop()
        s.app.state.engine.dispose()


@pytest.fixture(scope="module")
def event(srv: Any) -> dict[str, Any]:
    orga = _client(srv.base, "orga_claims")
    tid = orga.post("/api/tournaments", json={"name": "Club night", "rounds": 3}).json()["tournament"]["id"]
    v = orga.get(f"/api/tournaments/{tid}").json()["version"]
    entries = [{"name": f"P{i}", "players": [f"p{i}a", f"p{i}b"], "seed": i} for i in range(1, 7)]
    r = orga.post(f"/api/tournaments/{tid}/entries", json={"version": v, "entries": entries})
    assert r.status_code == 200, r.text
    r = orga.post(f"/api/tournaments/{tid}/rounds", json={"version": r.json()["version"]})
    assert r.status_code == 200, r.text
    return {"id": tid, "orga": orga, "matches": r.json()["round"]["matches"]}


def _codes(c: httpx.Client, tid: int, n: int = 1) -> dict[int, dict[str, str]]:
    r = c.get(f"/api/tournaments/{tid}/rounds/{n}/codes")
    assert r.status_code == 200, r.text
    return {x["table"]: x["codes"] for x in r.json()["tables"]}


def _claim(base: str, tid: int, **body: Any) -> httpx.Response:
    with httpx.Client(base_url=base, timeout=30) as anon:  # no account, no cookie
        return anon.post(f"/api/tournaments/{tid}/claims", json=body)


def test_directors_read_the_codes(srv: Any, event: dict[str, Any]) -> None:
    from guandan.server.tournament_claims import CODE_ALPHABET

    tid = event["id"]
    codes = _codes(event["orga"], tid)
    assert sorted(codes) == [1, 2, 3]  # 6 pairs: three tables, no bye
    assert all(sorted(x) == ["a", "b"] for x in codes.values())  # one code per pair
    flat = [c for x in codes.values() for c in x.values()]
    assert all(len(c) == 6 and set(c) <= set(CODE_ALPHABET) for c in flat)
    assert len(set(flat)) == 6
    assert _codes(event["orga"], tid) == codes  # made once, then read back
    # the seeded round 1 (docs/tournaments.md): seed 1 v seed 4, 2 v 5, 3 v 6
    assert [(m["a"], m["b"]) for m in event["matches"]] == [(1, 4), (2, 5), (3, 6)]
    # nobody else reads them, and they are nowhere in the public page or the exports
    assert _client(srv.base, None).get(f"/api/tournaments/{tid}/rounds/1/codes").status_code == 401
    r = _client(srv.base, "nosy_player").get(f"/api/tournaments/{tid}/rounds/1/codes")
    assert (r.status_code, r.json()["code"]) == (403, "not_director")
    anon = _client(srv.base, None)
    public = anon.get(f"/api/tournaments/{tid}").text + anon.get(f"/api/tournaments/{tid}/export.json").text
    assert not any(c in public for c in flat)
    r = event["orga"].get(f"/api/tournaments/{tid}/rounds/9/codes")
    assert (r.status_code, r.json()["code"]) == (404, "unknown_round")


def test_wrong_code_is_403(srv: Any, event: dict[str, Any]) -> None:
    tid = event["id"]
    codes = _codes(event["orga"], tid)
    body = {"round": 1, "side": "a", "level_a": "K", "level_b": 9, "time_called": True}
    r = _claim(srv.base, tid, table=1, code=codes[2]["a"], **body)  # another table's code
    assert (r.status_code, r.json()["code"]) == (403, "bad_table_code")
    for bad in ("", None, "AAAAAA", 123456):
        r = _claim(srv.base, tid, table=1, code=bad, **body)
        assert (r.status_code, r.json()["code"]) == (403, "bad_table_code"), bad
    r = _claim(srv.base, tid, table=7, code=codes[1]["a"], **body)  # no such table
    assert (r.status_code, r.json()["code"]) == (403, "bad_table_code")
    assert event["orga"].get(f"/api/tournaments/{tid}").json()["rounds_list"][0]["matches"][0]["status"] == "pending"


def test_both_pairs_agree_and_the_result_stands(srv: Any, event: dict[str, Any]) -> None:
    tid = event["id"]
    codes = _codes(event["orga"], tid)[1]
    body = {"round": 1, "table": 1, "level_a": "K", "level_b": 9, "time_called": True}
    # typed with spaces and in lower case, as read off the card
    code = codes["a"]
    r = _claim(srv.base, tid, code=f" {code[:3].lower()} {code[3:]}", **body)
    assert r.status_code == 200, r.text
    assert r.json() == {"status": "claimed", "round": 1, "table": 1, "side": "a"}
    d = event["orga"].get(f"/api/tournaments/{tid}").json()
    assert d["rounds_list"][0]["matches"][0]["result"] is None  # one claim is not a result
    r = _claim(srv.base, tid, code=codes["b"], **body)
    assert r.status_code == 200 and r.json()["status"] == "final", r.text
    d = event["orga"].get(f"/api/tournaments/{tid}").json()
    m = d["rounds_list"][0]["matches"][0]
    assert (m["result"]["level_a"], m["result"]["level_b"], m["result"]["time_called"]) == (13, 9, True)
    # K v 9 on time: seed 1 wins 3 field points, seed 4 has 1 (R58)
    fp = {s["id"]: s["field_points"] for s in d["standings"]}
    assert (fp[1], fp[4]) == (3, 1)
    # final: a further claim is refused
    r = _claim(srv.base, tid, code=codes["a"], **body)
    assert (r.status_code, r.json()["code"]) == (409, "result_already_entered")
    log = event["orga"].get(f"/api/tournaments/{tid}/log").json()["log"]
    claims = [a for a in log if a["operation"] == "claim"]
    assert len(claims) == 2 and all(a["by"] is None for a in claims)
    assert [x["action"] for x in claims[1]["after"]] == ["claim", "agreed"]


def test_claims_that_differ_wait_for_the_organiser(srv: Any, event: dict[str, Any]) -> None:
    tid, orga = event["id"], event["orga"]
    codes = _codes(orga, tid)[2]
    r = _claim(srv.base, tid, round=1, table=2, code=codes["a"], level_a=10, level_b=8, time_called=True)
    assert r.json()["status"] == "claimed", r.text
    r = _claim(srv.base, tid, round=1, table=2, code=codes["b"], level_a=8, level_b=10, time_called=True)
    assert r.json()["status"] == "disputed", r.text
    # the organiser sees both claims beside the code, and decides
    x = next(x for x in orga.get(f"/api/tournaments/{tid}/rounds/1/codes").json()["tables"] if x["table"] == 2)
    assert x["status"] == "disputed"
    assert (x["claims"]["a"]["level_a"], x["claims"]["b"]["level_a"]) == (10, 8)
    v = orga.get(f"/api/tournaments/{tid}").json()["version"]
    r = orga.post(f"/api/tournaments/{tid}/results", json={"version": v, "round": 1, "table": 2, "level_a": 10,
                                                          "level_b": 8, "time_called": True})
    assert r.status_code == 200, r.text
    assert r.json()["round"]["matches"][1]["status"] == "final"
    log = orga.get(f"/api/tournaments/{tid}/log").json()["log"]
    assert log[-1]["operation"] == "result" and log[-1]["before"]["a"]["level_a"] == 10
    assert log[-1]["before"]["b"]["level_a"] == 8  # both claims kept as the value before


def test_one_pair_cannot_finalise_alone(srv: Any, event: dict[str, Any]) -> None:
    """The attack of issue 21 item 5: one pair sends side a, then side b, with its own code. The side is
    the code's, so both claims are pair b's: the second replaces the first and the table stays claimed."""
    tid, orga = event["id"], event["orga"]
    code_b = _codes(orga, tid)[3]["b"]
    claim = {"round": 1, "table": 3, "level_a": 5, "level_b": "A", "passed_a": "b"}
    for said in ("a", "b"):
        r = _claim(srv.base, tid, code=code_b, side=said, **claim)
        assert r.status_code == 200, r.text
        assert r.json() == {"status": "claimed", "round": 1, "table": 3, "side": "b"}
    x = next(x for x in orga.get(f"/api/tournaments/{tid}/rounds/1/codes").json()["tables"] if x["table"] == 3)
    assert x["status"] == "claimed" and x["claims"]["a"] is None and x["claims"]["b"]["level_b"] == 14
    m = orga.get(f"/api/tournaments/{tid}").json()["rounds_list"][0]["matches"][2]
    assert (m["status"], m["result"]) == ("claimed", None)


def test_organiser_confirms_a_single_claim(srv: Any, event: dict[str, Any]) -> None:
    tid, orga = event["id"], event["orga"]
    code = _codes(orga, tid)[3]["b"]
    claim = {"round": 1, "table": 3, "level_a": 5, "level_b": "A", "passed_a": "b"}
    r = _claim(srv.base, tid, code=code, **claim)
    assert r.json()["status"] == "claimed", r.text
    x = next(x for x in orga.get(f"/api/tournaments/{tid}/rounds/1/codes").json()["tables"] if x["table"] == 3)
    assert x["claims"]["a"] is None and x["claims"]["b"]["passed_a"] == "b"
    v = orga.get(f"/api/tournaments/{tid}").json()["version"]
    r = orga.post(f"/api/tournaments/{tid}/results", json={"version": v, **claim})
    assert r.status_code == 200, r.text
    d = orga.get(f"/api/tournaments/{tid}").json()
    assert d["rounds_list"][0]["complete"]
    fp = {s["id"]: s["field_points"] for s in d["standings"]}
    # seed 6 passed A: 3, seed 3: 1; table 2: seed 2 10 v 8 on time: 3 and 1
    assert fp == {1: 3, 4: 1, 2: 3, 5: 1, 6: 3, 3: 1}


def test_online_event_has_no_codes(srv: Any) -> None:
    c = _client(srv.base, "orga_claims_online")
    tid = c.post("/api/tournaments", json={"name": "Online", "venue": "online"}).json()["tournament"]["id"]
    r = c.get(f"/api/tournaments/{tid}/rounds/1/codes")
    assert (r.status_code, r.json()["code"]) == (409, "online_venue")


def test_a_pair_sends_at_most_five_claims(srv: Any) -> None:
    """CLAIMS_MAX (5) claims of one pair in 10 minutes, then 429 ``too_many_claims``; the other pair of
    the table is counted apart and can still send its own."""
    from guandan.server.tournament_claims import CLAIMS_MAX

    assert CLAIMS_MAX == 5
    orga = _client(srv.base, "orga_claims_limit")
    tid = orga.post("/api/tournaments", json={"name": "Limit", "rounds": 2}).json()["tournament"]["id"]
    v = orga.get(f"/api/tournaments/{tid}").json()["version"]
    entries = [{"name": f"L{i}", "players": [f"l{i}a", f"l{i}b"], "seed": i} for i in range(1, 3)]
    v = orga.post(f"/api/tournaments/{tid}/entries", json={"version": v, "entries": entries}).json()["version"]
    assert orga.post(f"/api/tournaments/{tid}/rounds", json={"version": v}).status_code == 200
    codes = _codes(orga, tid)[1]
    body = {"round": 1, "table": 1, "level_b": 9, "time_called": True}
    for level in range(3, 8):  # five changes of pair a: 3, 4, 5, 6, 7
        r = _claim(srv.base, tid, code=codes["a"], level_a=level, **body)
        assert (r.status_code, r.json()["status"]) == (200, "claimed"), r.text
    r = _claim(srv.base, tid, code=codes["a"], level_a=8, **body)
    assert (r.status_code, r.json()["code"]) == (429, "too_many_claims")
    assert 0 < r.json()["params"]["wait_s"] <= 601
    x = orga.get(f"/api/tournaments/{tid}/rounds/1/codes").json()["tables"][0]
    assert x["claims"]["a"]["level_a"] == 7  # the refused sixth claim changed nothing
    r = _claim(srv.base, tid, code=codes["b"], level_a=7, **body)  # pair b agrees: the result stands
    assert (r.status_code, r.json()["status"]) == (200, "final"), r.text
    log = orga.get(f"/api/tournaments/{tid}/log").json()["log"]
    assert len([a for a in log if a["operation"] == "claim"]) == 6


def test_claim_limit_window() -> None:
    from fastapi import HTTPException

    from guandan.server.tournament_claims import ClaimLimit

    now = [50.0]
    g = ClaimLimit(clock=lambda: now[0])
    for _ in range(5):
        g.check("1/1/1/a")
        g.failed("1/1/1/a")
        now[0] += 100
    # claims at 50, 150, 250, 350, 450; now 550: the first leaves the window at 650, 100 s on (+1)
    with pytest.raises(HTTPException) as e:
        g.check("1/1/1/a")
    assert e.value.status_code == 429 and e.value.detail["code"] == "too_many_claims"
    assert e.value.detail["params"] == {"wait_s": 101}
    g.check("1/1/1/b")  # the other pair is counted apart
    now[0] = 650.0
    g.check("1/1/1/a")


def test_too_many_wrong_codes_is_429(srv: Any, event: dict[str, Any]) -> None:
    """Last in the module: the test's address stays blocked for 10 minutes."""
    from guandan.server.tournament_claims import WRONG_CODES_MAX

    tid, orga = event["id"], event["orga"]
    v = orga.get(f"/api/tournaments/{tid}").json()["version"]
    r = orga.post(f"/api/tournaments/{tid}/rounds", json={"version": v})
    assert r.status_code == 200, r.text
    good = _codes(orga, tid, 2)[1]["a"]
    srv.app.state.wrong_table_codes = None  # a fresh count (earlier tests sent wrong codes on purpose)
    body = {"round": 2, "table": 1, "level_a": 9, "level_b": 9, "time_called": True}
    for _ in range(WRONG_CODES_MAX):
        r = _claim(srv.base, tid, code="ZZZZZZ" if good != "ZZZZZZ" else "YYYYYY", **body)
        assert (r.status_code, r.json()["code"]) == (403, "bad_table_code")
    r = _claim(srv.base, tid, code=good, **body)  # even the right code: the address is blocked
    assert (r.status_code, r.json()["code"]) == (429, "too_many_codes")
    assert 0 < r.json()["params"]["wait_s"] <= 601
    assert orga.get(f"/api/tournaments/{tid}").json()["rounds_list"][1]["matches"][0]["status"] == "pending"


def test_wrong_codes_window() -> None:
    from fastapi import HTTPException

    from guandan.server.tournament_claims import WrongCodes

    now = [1000.0]
    g = WrongCodes(limit=3, window_s=60, clock=lambda: now[0])
    for _ in range(3):
        g.check("1.2.3.4")
        g.failed("1.2.3.4")
        now[0] += 10
    with pytest.raises(HTTPException) as e:
        g.check("1.2.3.4")
    # the first wrong code was at 1000: one more try at 1060, 30 s after now (1030)
    assert e.value.status_code == 429 and e.value.detail["params"] == {"wait_s": 31}
    g.check("5.6.7.8")  # another address is not blocked
    now[0] = 1060.5
    g.check("1.2.3.4")  # the first one left the window


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_migration_0021_replaces_table_codes_by_pair_codes(backend: str, tmp_path: Any) -> None:
    """Upgrading from 0020 deletes the table-wide codes of 0016 (made again per pair when read) and adds
    ``side``, unique per (tournament, round, table, side)."""
    from contextlib import ExitStack

    from sqlalchemy import inspect, text
    from sqlalchemy.exc import IntegrityError

    from guandan.server import db as gdb

    with ExitStack() as stack:
        if backend == "sqlite":
            url = f"sqlite:///{tmp_path / 'old.db'}"
        else:
            from test_server_storage import fresh_pg_database

            url = stack.enter_context(fresh_pg_database())
        gdb.migrate(url, "0020")
        eng = gdb.make_engine(url)
        stack.callback(eng.dispose)
        now = "2026-12-05 08:00:00+00:00"
        with eng.begin() as conn:
            conn.execute(text("INSERT INTO tournaments (id, name, format, status, rounds_played, rounds_total, state,"
                              " version, created_at, updated_at) VALUES (1, 'Old', 'swiss', 'running', 1, 3, '{}', 1,"
                              " :now, :now)"), {"now": now})
            conn.execute(text("INSERT INTO tournament_table_codes (tournament_id, round, table_no, code, pairing,"
                              " created_at) VALUES (1, 1, 1, 'ABCDEF', 'x|1-4', :now)"), {"now": now})
        gdb.migrate(url)
        assert "side" in {c["name"] for c in inspect(eng).get_columns("tournament_table_codes")}
        with eng.begin() as conn:
            assert conn.execute(text("SELECT count(*) FROM tournament_table_codes")).scalar() == 0
            row = "INSERT INTO tournament_table_codes (tournament_id, round, table_no, side, code, pairing, created_at)"
            for side in ("a", "b"):
                conn.execute(text(row + " VALUES (1, 1, 1, :s, :c, 'x|1-4', :now)"), {"s": side, "c": f"CODE{side.upper()}",
                                                                                   "now": now})
        with pytest.raises(IntegrityError), eng.begin() as conn:
            conn.execute(text(row + " VALUES (1, 1, 1, 'a', 'OTHER', 'x|1-4', :now)"), {"now": now})
