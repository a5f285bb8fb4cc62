"""The tournaments HTTP API on a real server (uvicorn on 127.0.0.1, a fresh SQLite file and, when one
runs, a fresh PostgreSQL database; no mocks).

One event is run from start to finish in order (the tests of this module share it and run top to
bottom): create, five entries from a CSV (an odd field: a bye), pair, results, standings, re-pairing
refused after a result, other users refused, a stale version refused, two organisers pairing at once,
penalties, corrections in the audit log, a withdrawal, the CSV and JSON exports read back.

Every expected number is worked out by hand in the comments from docs/rules.md R58 (win 3, draw 2,
loss 1, absent 0; 净积小分 = own level − opponents' level; 累积小分 = own level − 2, + 1 for passing A;
a bye or walkover 3 points with small scores 0 and 0) and docs/tournaments.md (seeding, Swiss tiers).
"""

from __future__ import annotations

import csv
import io
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

PASSWORD = "tournament-pass-1"


def _postgres_url() -> str | None:
    """A fresh database is made next to this one (tests/cluster_helpers.py); None when unreachable."""
    from cluster_helpers import PG_URL
    from sqlalchemy import create_engine, text

    from guandan.server.db import normalize_url

    try:
        engine = create_engine(normalize_url(PG_URL))
        with engine.connect() as c:
            c.execute(text("SELECT 1"))
        engine.dispose()
    except Exception:  # noqa: BLE001 - any failure: PostgreSQL is not there
        return None
    return PG_URL


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """The server on a fresh SQLite file, then on a fresh PostgreSQL database (skipped without one)."""
    from contextlib import ExitStack

    from browser_helpers import LiveServer

    with ExitStack() as stack:
        url = None
        if request.param == "postgresql":
            if _postgres_url() is None:
                pytest.skip("PostgreSQL is not reachable (GUANDAN_TEST_POSTGRES_URL)")
            from cluster_helpers import fresh_database

            url = stack.enter_context(fresh_database())
        srv = LiveServer(tmp_path_factory.mktemp("tweb") / "guandan.db", db_url=url)
        try:
            yield srv
        finally:
            srv.stop()
            srv.app.state.engine.dispose()


def _client(server: Any, name: str | None) -> httpx.Client:
    c = httpx.Client(base_url=server.base, timeout=30)
    if name is not None:
        r = c.post("/api/register", json={"name": name, "password": PASSWORD})
        assert r.status_code == 200, r.text
    return c


@pytest.fixture(scope="module")
def orga(server: Any) -> Iterator[httpx.Client]:
    c = _client(server, "orga_1")
    try:
        yield c
    finally:
        c.close()


@pytest.fixture(scope="module")
def other(server: Any) -> Iterator[httpx.Client]:
    c = _client(server, "stranger")
    try:
        yield c
    finally:
        c.close()


@pytest.fixture(scope="module")
def codir(server: Any) -> Iterator[httpx.Client]:
    c = _client(server, "codir_2")
    try:
        yield c
    finally:
        c.close()


@pytest.fixture(scope="module")
def anon(server: Any) -> Iterator[httpx.Client]:
    c = _client(server, None)
    try:
        yield c
    finally:
        c.close()


STATE: dict[str, Any] = {}


def _get(c: httpx.Client) -> dict[str, Any]:
    r = c.get(f"/api/tournaments/{STATE['id']}")
    assert r.status_code == 200, r.text
    return r.json()


def _post(c: httpx.Client, path: str, body: dict[str, Any], status: int = 200, version: bool = True) -> dict[str, Any]:
    if version and "version" not in body:
        body = {**body, "version": _get(c)["version"]}
    r = c.post(f"/api/tournaments/{STATE['id']}{path}", json=body)
    assert r.status_code == status, r.text
    return r.json()


def _table(d: dict[str, Any], rnd: int, x: int, y: int) -> dict[str, Any]:
    for m in d["rounds_list"][rnd - 1]["matches"]:
        if {m["a"], m["b"]} == {x, y}:
            return m
    raise AssertionError(f"no table {x} v {y} in round {rnd}")


def _result(m: dict[str, Any], levels: dict[int, int | str], **kw: Any) -> dict[str, Any]:
    """A result body for table m with the levels given per entry id (a/b worked out here)."""
    return {"round": kw.pop("round"), "table": m["table"], "level_a": levels[m["a"]], "level_b": levels[m["b"]], **kw}


def _rows(d: dict[str, Any]) -> list[tuple[int, int, int, int]]:
    return [(s["id"], s["field_points"], s["net"], s["cumulative"]) for s in d["standings"]]


def test_create_needs_a_login_and_checks_input(anon: httpx.Client, orga: httpx.Client) -> None:
    assert anon.get("/api/tournaments").json() == {"tournaments": []}
    r = anon.post("/api/tournaments", json={"name": "x"})
    assert r.status_code == 401 and r.json()["code"] == "login_required"
    for body, code in (({"name": ""}, "bad_tournament_name"), ({"name": "x", "format": "ladder"}, "bad_format"),
                       ({"name": "x", "rounds": 0}, "bad_number"), ({"name": "x", "preset": "nope"}, "bad_preset")):
        r = orga.post("/api/tournaments", json=body)
        assert r.status_code == 400 and r.json()["code"] == code, r.text
    r = orga.post("/api/tournaments", json={"name": "周五俱乐部赛", "preset": "official", "format": "swiss",
                                            "rounds": 3, "time_limit": 70})
    assert r.status_code == 201, r.text
    t = r.json()["tournament"]
    assert (t["name"], t["format"], t["status"], t["rounds_played"], t["rounds_total"], t["version"]) == \
        ("周五俱乐部赛", "swiss", "registering", 0, 3, 1)
    STATE["id"] = t["id"]
    assert anon.get("/api/tournaments/999").json()["code"] == "tournament_not_found"


def test_entries_from_csv_odd_field(orga: httpx.Client, codir: httpx.Client) -> None:
    text = "name,partner,club,rating\n" + "\n".join(
        f"{a},{b},{club},{rating}" for a, b, club, rating in
        (("张伟", "李娜", "东城", 1900), ("Ann", "Bob", "West", 1800), ("Cat", "Dan", "", 1700),
         ("Eve", "Fay", "West", 1600), ("王芳", "刘洋", "南湖", 1500)))
    r = _post(orga, "/entries", {"csv": text})
    assert r["added"] == [1, 2, 3, 4, 5]
    bad = _post(orga, "/entries", {"csv": "name,club\nx,y"}, status=400)
    assert bad["code"] == "bad_csv"
    version = _get(orga)["version"]
    raw = '{"csv": "name,partner\\n\\ud800,x", "version": ' + str(version) + "}"  # a lone surrogate
    r = orga.post(f"/api/tournaments/{STATE['id']}/entries", content=raw, headers={"Content-Type": "application/json"})
    assert r.status_code == 400 and r.json()["code"] == "bad_csv"
    dup = _post(orga, "/entries", {"entries": [{"players": ["Ann", "Bob"]}]}, status=409)
    assert dup["code"] == "duplicate_entry"
    _post(orga, "/codirectors", {"name": "codir_2"})
    d = _get(codir)
    assert d["codirectors"] == ["codir_2"] and d["can_direct"] is True and d["organiser"] == "orga_1"
    assert d["entries"][0]["players"] == ["张伟", "李娜"]


def test_pair_round_one_by_seeding_with_a_bye(orga: httpx.Client) -> None:
    r = _post(orga, "/rounds", {})
    # ratings give seeds 1..5 = entries 1..5; the odd one out (seed 5) sits out, then the top half
    # meets the bottom half: 1 v 3, 2 v 4 (docs/tournaments.md "Formats")
    pairs = {frozenset((m["a"], m["b"])) for m in r["round"]["matches"] if m["b"] is not None}
    byes = [m["a"] for m in r["round"]["matches"] if m["b"] is None]
    assert pairs == {frozenset((1, 3)), frozenset((2, 4))} and byes == [5]


def test_repair_allowed_before_the_first_result(orga: httpx.Client) -> None:
    v = _get(orga)["version"]
    r = orga.request("DELETE", f"/api/tournaments/{STATE['id']}/rounds/1", params={"version": v}, json={})
    assert r.status_code == 200, r.text
    assert r.json()["version"] == v + 1
    assert len(_get(orga)["rounds_list"]) == 1


def test_results_and_field_points_round_one(orga: httpx.Client, codir: httpx.Client) -> None:
    d = _get(orga)
    # table 1 v 3: entry 1 passes A, entry 3 at K -> win 3 / loss 1, net +1/-1, cumulative 12+1=13 / 11
    _post(orga, "/results", _result(_table(d, 1, 1, 3), {1: "A", 3: "K"}, round=1,
                                    passed_a="a" if _table(d, 1, 1, 3)["a"] == 1 else "b"))
    # table 2 v 4 (entered by the co-director): time called at 8 and 8 -> draw 2 / 2, net 0, cumulative 6 / 6
    _post(codir, "/results", _result(_table(d, 1, 2, 4), {2: 8, 4: 8}, round=1, time_called=True))
    d = _get(orga)
    # field points: 1: 3, 5 (bye): 3, 2: 2, 4: 2, 3: 1; 1 before 5 on net (+1 v 0); 2 before 4: equal on
    # net, cumulative, opponents' points (2 each) and head-to-head (a draw), no seeds: entry id
    assert _rows(d) == [(1, 3, 1, 13), (5, 3, 0, 0), (2, 2, 0, 6), (4, 2, 0, 6), (3, 1, -1, 11)]
    assert [s["place"] for s in d["standings"]] == [1, 2, 3, 4, 5]
    assert d["prizes"] == [{"place": 1, "id": 1, "name": "张伟 / 李娜", "field_points": 3},
                           {"place": 2, "id": 5, "name": "王芳 / 刘洋", "field_points": 3},
                           {"place": 3, "id": 2, "name": "Ann / Bob", "field_points": 2}]
    assert d["status"] == "running" and d["rounds_played"] == 1


def test_bad_results_are_refused(orga: httpx.Client) -> None:
    d = _get(orga)
    m = _table(d, 1, 1, 3)
    for body, status, code in (
        ({"round": 1, "table": m["table"], "level_a": 15, "level_b": 2}, 400, "impossible_level"),
        ({"round": 1, "table": m["table"], "level_a": "1", "level_b": 2}, 400, "impossible_level"),
        ({"round": 1, "table": 9, "level_a": 5, "level_b": 2}, 400, "unknown_table"),
        ({"round": 4, "table": 1, "level_a": 5, "level_b": 2}, 400, "unknown_round"),
        # entered twice with other values: refused, the first stays
        ({"round": 1, "table": m["table"], "level_a": 10, "level_b": 9, "time_called": True}, 409,
         "result_already_entered"),
    ):
        assert _post(orga, "/results", body, status=status)["code"] == code
    # the same result again is harmless
    again = _post(orga, "/results", {"round": 1, "table": m["table"], "level_a": m["result"]["level_a"],
                                     "level_b": m["result"]["level_b"], "passed_a": m["result"]["passed_a"]})
    assert again["unchanged"] is True and again["version"] == d["version"]
    # a bye table has no result
    bye = next(x for x in d["rounds_list"][0]["matches"] if x["b"] is None)
    r = _post(orga, "/results", {"round": 1, "table": bye["table"], "level_a": 5, "level_b": 2}, status=400)
    assert r["code"] == "invalid_result" and r["params"]["reason"] == "bye_table"


def test_only_directors_change_anything(other: httpx.Client, anon: httpx.Client) -> None:
    d = _get(anon)
    assert d["can_direct"] is False
    r = other.post(f"/api/tournaments/{STATE['id']}/rounds", json={"version": d["version"]})
    assert r.status_code == 403 and r.json()["code"] == "not_director"
    r = anon.post(f"/api/tournaments/{STATE['id']}/rounds", json={"version": d["version"]})
    assert r.status_code == 401
    assert other.get(f"/api/tournaments/{STATE['id']}/log").status_code == 403
    assert anon.get(f"/api/tournaments/{STATE['id']}/log").status_code == 401
    r = other.post(f"/api/tournaments/{STATE['id']}/codirectors", json={"name": "stranger", "version": d["version"]})
    assert r.status_code == 403
    assert _get(anon)["version"] == d["version"]


def test_stale_version_and_two_organisers_pairing_at_once(server: Any, orga: httpx.Client,
                                                          codir: httpx.Client) -> None:
    v = _get(orga)["version"]
    r = orga.post(f"/api/tournaments/{STATE['id']}/rounds", json={"version": v - 1})
    assert r.status_code == 409 and r.json()["code"] == "stale_version"
    assert orga.post(f"/api/tournaments/{STATE['id']}/rounds", json={}).json()["code"] == "version_required"
    answers: list[httpx.Response] = []
    go = threading.Barrier(2)

    def pair(c: httpx.Client) -> None:
        go.wait()
        answers.append(c.post(f"/api/tournaments/{STATE['id']}/rounds", json={"version": v}))

    threads = [threading.Thread(target=pair, args=(c,)) for c in (orga, codir)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(60)
    codes = sorted(a.status_code for a in answers)
    assert codes == [200, 409], [a.text for a in answers]
    assert [a.json()["code"] for a in answers if a.status_code == 409] == ["stale_version"]
    d = _get(orga)
    assert d["rounds_played"] == 2 and d["version"] == v + 1
    pairs = sum(1 for a in _audit(orga) if a["operation"] == "pair")
    assert pairs == 2  # round 1 and round 2, the refused one not at all


def _audit(c: httpx.Client) -> list[dict[str, Any]]:
    r = c.get(f"/api/tournaments/{STATE['id']}/log")
    assert r.status_code == 200, r.text
    return r.json()["log"]


def test_round_two_results_correction_penalty(orga: httpx.Client) -> None:
    d = _get(orga)
    # standings 1, 5, 2, 4, 3: the bye goes to 3 (the lowest without a bye); 2 v 4 would repeat, and of
    # 1-2/5-4 and 1-4/5-2 (equal on field points) the first is closer in places (docs, tier 4)
    r2 = d["rounds_list"][1]
    assert {frozenset((m["a"], m["b"])) for m in r2["matches"] if m["b"]} == {frozenset((1, 2)), frozenset((4, 5))}
    assert [m["a"] for m in r2["matches"] if m["b"] is None] == [3]
    m12, m45 = _table(d, 2, 1, 2), _table(d, 2, 4, 5)
    # 2 absent: a walkover, 1 scores 3 with 0 and 0; 2 scores 0
    _post(orga, "/results", {"round": 2, "table": m12["table"], "absent": "a" if m12["a"] == 2 else "b"})
    # a wrong result first (10 : 10), then corrected to 5 at 10, 4 at J with time called
    _post(orga, "/results", _result(m45, {4: 10, 5: 10}, round=2, time_called=True))
    r = orga.request("DELETE", f"/api/tournaments/{STATE['id']}/rounds/2", params={"version": _get(orga)["version"]}, json={})
    assert r.status_code == 409 and r.json()["code"] == "round_has_results"
    assert "already has results" in r.json()["error"]
    _post(orga, "/results", {**_result(m45, {4: "J", 5: 10}, round=2, time_called=True), "correct": True,
                             "reason": "score sheet misread"})
    # penalty: 5's side gives away 2 levels -> 4 at J + 2 = K: 4 net +3, cumulative 11; 5 net -3, cumulative 8
    side5 = "a" if m45["a"] == 5 else "b"
    _post(orga, "/penalties", {"round": 2, "table": m45["table"], "side": side5, "levels": 2,
                               "reason": "too-small tribute"})
    assert _post(orga, "/penalties", {"round": 2, "table": m45["table"], "side": side5, "levels": 1},
                 status=400)["code"] == "reason_required"
    d = _get(orga)
    # totals: 1: 3+3=6, net 1, cum 13; 4: 2+3=5, net 0+3, cum 6+11; 3: 1+3 (bye)=4, net -1, cum 11;
    # 5: 3+1=4, net 0-3, cum 0+8; 2: 2+0=2, net 0, cum 6. 3 before 5 on net (-1 v -3).
    assert _rows(d) == [(1, 6, 1, 13), (4, 5, 3, 17), (3, 4, -1, 11), (5, 4, -3, 8), (2, 2, 0, 6)]
    five = next(s for s in d["standings"] if s["id"] == 5)
    assert five["penalty_levels"] == 2 and five["penalties"][0]["reason"] == "too-small tribute"
    log = _audit(orga)
    corr = [a for a in log if a["operation"] == "correct"]
    assert len(corr) == 1 and corr[0]["by"] == "orga_1"
    assert (corr[0]["before"]["level_a"], corr[0]["before"]["level_b"]) == (10, 10)
    assert {corr[0]["after"]["value"]["level_a"], corr[0]["after"]["value"]["level_b"]} == {10, 11}
    assert corr[0]["after"]["reason"] == "score sheet misread"
    assert [a["operation"] for a in log].count("penalty") == 1
    assert [a["version"] for a in log] == sorted(a["version"] for a in log)


def test_withdrawal_then_round_three_without_a_bye(orga: httpx.Client) -> None:
    _post(orga, "/entries/2/withdraw", {"reason": "went home"})
    assert _post(orga, "/entries/2/withdraw", {}, status=409)["code"] == "entry_withdrawn"
    r = _post(orga, "/rounds", {})
    ids = {x for m in r["round"]["matches"] for x in (m["a"], m["b"])}
    assert ids == {1, 3, 4, 5}  # four active entries: no bye, 2 not paired
    d = _get(orga)
    assert d["rounds_played"] == 3 and d["rounds_total"] == 3 and d["status"] == "running"
    assert [e["withdrawn"] for e in d["entries"]] == [False, True, False, False, False]


def test_exports_read_back(orga: httpx.Client, anon: httpx.Client) -> None:
    from guandan.tournament import from_json, standings

    d = _get(anon)
    r = anon.get(f"/api/tournaments/{STATE['id']}/export.csv")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(r.text)))
    assert [(int(x["entry"]), int(x["field_points"]), int(x["net"]), int(x["cumulative"])) for x in rows] == _rows(d)
    assert rows[0]["name"] == "张伟 / 李娜" and rows[0]["club"] == "东城"
    assert [x["withdrawn"] for x in rows].count("yes") == 1
    public = anon.get(f"/api/tournaments/{STATE['id']}/export.json")
    assert public.status_code == 200 and json.loads(public.text)["log"] == []
    full = orga.get(f"/api/tournaments/{STATE['id']}/export.json").text
    t = from_json(full)
    assert len(t.log) > 5 and t.name == "周五俱乐部赛"
    assert [(s.id, s.field_points, s.net, s.cumulative) for s in standings(t)] == _rows(d)
    assert from_json(public.text).played == t.played  # the public file loads too, with the same rounds


def test_the_cli_reads_the_export(orga: httpx.Client, tmp_path: Path) -> None:
    """The JSON export is the CLI's state file: ``guandan tournament standings`` reads it."""
    from typer.testing import CliRunner

    from guandan.cli import app

    path = tmp_path / "t.json"
    path.write_text(orga.get(f"/api/tournaments/{STATE['id']}/export.json").text, encoding="utf-8")
    out = CliRunner().invoke(app, ["tournament", "standings", str(path)])
    assert out.exit_code == 0, out.output
    assert "张伟" in out.output


def test_list_and_nothing_private(anon: httpx.Client, orga: httpx.Client) -> None:
    lst = anon.get("/api/tournaments").json()["tournaments"]
    assert [(x["id"], x["rounds_played"], x["rounds_total"], x["status"]) for x in lst] == [(STATE["id"], 3, 3, "running")]
    texts = [anon.get(f"/api/tournaments/{STATE['id']}").text, orga.get(f"/api/tournaments/{STATE['id']}/log").text,
             anon.get("/api/tournaments").text, anon.post(f"/api/tournaments/{STATE['id']}/rounds", json={}).text]
    token = orga.cookies.get("gd_session")
    assert token
    for text in texts:
        assert token not in text and "password" not in text.lower() and "gd_session" not in text


def test_round_robin_runs_to_the_end(orga: httpx.Client) -> None:
    """A round robin of 3 pairs: 3 rounds (Berger with a dummy: each pair sits out once), every pair
    meets every other once; after the last result the event is finished and no round is left."""
    r = orga.post("/api/tournaments", json={"name": "RR", "format": "round_robin"})
    assert r.status_code == 201, r.text
    rr = r.json()["tournament"]["id"]
    v = 1

    def post(path: str, body: dict[str, Any], status: int = 200) -> dict[str, Any]:
        nonlocal v
        r = orga.post(f"/api/tournaments/{rr}{path}", json={**body, "version": v})
        assert r.status_code == status, r.text
        v = r.json().get("version", v)
        return r.json()

    post("/entries", {"entries": [{"players": [f"r{i}", f"s{i}"]} for i in range(3)]})
    met: set[frozenset[int]] = set()
    for n in (1, 2, 3):
        rnd = post("/rounds", {})["round"]
        games = [m for m in rnd["matches"] if m["b"] is not None]
        assert len(games) == 1 and len(rnd["matches"]) == 2
        met.add(frozenset((games[0]["a"], games[0]["b"])))
        post("/results", {"round": n, "table": games[0]["table"], "level_a": 10, "level_b": 7, "time_called": True})
    assert met == {frozenset((1, 2)), frozenset((1, 3)), frozenset((2, 3))}
    d = orga.get(f"/api/tournaments/{rr}").json()
    assert (d["status"], d["rounds_played"], d["rounds_total"]) == ("finished", 3, 3)
    # every pair: one bye (3), one match as side a (win 3) or b (loss 1) each way -> 7, 5 or 3 in total
    assert sorted(s["field_points"] for s in d["standings"]) == sorted(
        3 + sum(3 if m["a"] == e else 1 for r in d["rounds_list"] for m in r["matches"] if m["b"] and e in (m["a"], m["b"]))
        for e in (1, 2, 3))
    assert post("/rounds", {}, status=409)["code"] == "no_more_rounds"


def test_groups_then_knockout_final_needs_the_extra_deal(orga: httpx.Client) -> None:
    """Two groups of two, then a final of the two group winners (2 rounds). A drawn final needs the
    extra deal (R58): without it 400 invalid_result/extra_deal_needed; with it the event is finished."""
    r = orga.post("/api/tournaments", json={"name": "GK", "format": "groups_knockout", "groups": 2,
                                            "knockout_size": 2})
    assert r.status_code == 201, r.text
    gk = r.json()["tournament"]["id"]
    v = 1

    def post(path: str, body: dict[str, Any], status: int = 200) -> dict[str, Any]:
        nonlocal v
        r = orga.post(f"/api/tournaments/{gk}{path}", json={**body, "version": v})
        assert r.status_code == status, r.text
        v = r.json().get("version", v)
        return r.json()

    post("/entries", {"entries": [{"players": [f"g{i}", f"h{i}"], "seed": i} for i in range(1, 5)]})
    groups = post("/rounds", {})["round"]["matches"]
    # snake by seed: group 1 = seeds 1 and 4, group 2 = seeds 2 and 3
    assert {frozenset((m["a"], m["b"])) for m in groups} == {frozenset((1, 4)), frozenset((2, 3))}
    for m in groups:  # the lower seed wins each group match: levels 9 to 6
        post("/results", {"round": 1, "table": m["table"], "time_called": True,
                          "level_a": 9 if m["a"] < m["b"] else 6, "level_b": 6 if m["a"] < m["b"] else 9})
    final = post("/rounds", {})["round"]["matches"]
    assert len(final) == 1 and {final[0]["a"], final[0]["b"]} == {1, 2} and final[0]["stage"] == "final"
    body = {"round": 2, "table": 1, "level_a": 10, "level_b": 10, "time_called": True}
    err = post("/results", body, status=400)
    assert (err["code"], err["params"]["reason"]) == ("invalid_result", "extra_deal_needed")
    post("/results", {**body, "extra_deal": "b"})
    d = orga.get(f"/api/tournaments/{gk}").json()
    assert (d["status"], d["rounds_played"], d["rounds_total"]) == ("finished", 2, 2)
    assert d["standings"][0]["id"] == final[0]["b"]  # the extra deal's winner is the champion
