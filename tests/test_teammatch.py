"""Duplicate team matches for people (复式, issue 22 item 3): the deciding code, the store and the API.

* seating: table 1 has team A's pair 1 at seats 0/2 against team B's pair 1; table 2 team B's pair 2
  at 0/2 against team A's pair 2 (the teams' seats swapped);
* board results worked out by hand from finish orders (R33, R35) at both tables, under the official
  3/2/1 and the Anhui 6/4/2 upgrade, and the match total on the 26-point scale (13 + D capped to 0..26);
  a board played at one table only counts for nothing yet;
* on a live server: a practice match of eight bots plays every board at both tables to the end (the
  tables advance on their own) and its page's totals are the sums of its boards; a board is started
  once per table (409 ``board_in_progress``; the unique key refuses a second row);
* secrecy: while table 1 has not played board 1, a player of table 1 and an outsider get nothing of
  table 2's play of it (match page, replay, record, review, rooms, profile, the room's websocket);
  once both tables played it, its results and replays open to everyone.
"""

from __future__ import annotations

import json
import re
import time
from typing import Any

import httpx
import pytest

from guandan.core.deal import DealResult
from guandan.core.rules import RuleSet
from guandan.server.teammatch import (BoardPlay, abandoned_result, board_open, board_results, next_board, parse_setup,
                                      result_code, result_for_a, seating, totals)

SEATS = {"a": [["a1", "a2"], ["a3", "a4"]], "b": [["b1", "b2"], ["b3", "b4"]]}
OFFICIAL = RuleSet.preset("official")


def _res(*order: int) -> DealResult:
    rest = tuple(0 if s in order[:3] else 5 for s in range(4))
    return DealResult(tuple(order), rest)


def test_seating_swaps_the_teams_between_tables() -> None:
    assert seating(SEATS, 1) == ["a1", "b1", "a2", "b2"]
    assert seating(SEATS, 2) == ["b3", "a3", "b4", "a4"]
    with pytest.raises(ValueError):
        seating(SEATS, 3)


def test_board_results_worked_by_hand() -> None:
    # seats 0 and 2 go out 1st and 2nd (a double-down, 1-2): at table 1 that is team A (+3), at table 2
    # the same cards are team B's (-3); the same play at both tables scores 0
    assert result_code(_res(0, 2), 1) == "a1-2" and result_for_a(OFFICIAL, _res(0, 2), 1) == 3
    assert result_code(_res(0, 2), 2) == "b1-2" and result_for_a(OFFICIAL, _res(0, 2), 2) == -3
    # seat 1 first, its partner seat 3 third: 1-3 for seats 1/3 (R35: 2 levels): team B at table 1 (-2);
    # seat 1 first, partner last at table 2: 1-4 for team A there (+1); board: -2 + 1 = -1
    assert result_for_a(OFFICIAL, _res(1, 0, 3, 2), 1) == -2
    assert result_code(_res(1, 2, 0, 3), 2) == "a1-4" and result_for_a(OFFICIAL, _res(1, 2, 0, 3), 2) == 1
    # the Anhui preset's upgrade is 6/4/2: a 1-3 by seats 0/2 at table 1 is +4 for team A
    anhui = RuleSet.preset("anhui")
    assert tuple(anhui.upgrade) == (6, 4, 2) and result_for_a(anhui, _res(0, 1, 2, 3), 1) == 4


def test_a_board_left_unfinished_counts_the_worst_for_the_team_whose_people_sat_there() -> None:
    # table 1: a1 (team A, seat 0) alone with bots: -3 for team A (a 1-2 against, R35)
    assert abandoned_result(OFFICIAL, ["a1", "bot:easy", "bot:easy", "bot:easy"], 1) == -3
    # table 2: b3 (team B) at seat 0 alone: the worst for team B is +3 for team A; under Anhui 6/4/2, +6
    assert abandoned_result(OFFICIAL, ["b3", "bot:easy", "bot:easy", "bot:easy"], 2) == 3
    assert abandoned_result(RuleSet.preset("anhui"), ["b3", "bot:easy", "bot:easy", "bot:easy"], 2) == 6
    # people of both teams, or bots only: nobody to blame, 0
    assert abandoned_result(OFFICIAL, ["a1", "b1", "bot:easy", "bot:easy"], 1) == 0
    assert abandoned_result(OFFICIAL, ["bot:easy"] * 4, 1) == 0


def _plays(rows: list[tuple[int, int, int | None]]) -> list[BoardPlay]:
    return [BoardPlay(b, t, r) for b, t, r in rows]


def test_match_total_on_the_26_point_scale() -> None:
    # boards: (+3, -3) = 0, (-2, +1) = -1, (+3, -1) = +2, (+2, +2) = +4: D = 5, A 13 + 5 = 18, B 8
    plays = _plays([(1, 1, 3), (1, 2, -3), (2, 1, -2), (2, 2, 1), (3, 1, 3), (3, 2, -1), (4, 1, 2), (4, 2, 2)])
    assert board_results(plays, 4) == [[3, -3], [-2, 1], [3, -1], [2, 2]]
    assert totals(plays, 4) == (5, 18, 8)
    # board 5 played at table 1 only: not counted, not open (it would tell table 2 table 1's result)
    more = plays + _plays([(5, 1, 3), (5, 2, None)])
    assert totals(more, 5) == (5, 18, 8) and not board_open(5, more) and board_open(4, more)
    # 16 boards of +3 at both tables: D = 96, capped: 26 to 0; all -1 at both: D = -32, 0 to 26
    assert totals(_plays([(k, t, 3) for k in range(1, 17) for t in (1, 2)]), 16) == (96, 26, 0)
    assert totals(_plays([(k, t, -1) for k in range(1, 17) for t in (1, 2)]), 16) == (-32, 0, 26)
    assert totals([], 8) == (0, 13, 13)  # nothing played yet: a draw, 13:13


def test_each_table_advances_on_its_own() -> None:
    plays = _plays([(1, 1, 2), (2, 1, None), (1, 2, -1)])
    assert next_board(plays, 1, 8) is None  # board 2 in progress at table 1
    assert next_board(plays, 2, 8) == 2
    assert next_board(_plays([(k, 2, 1) for k in range(1, 5)]), 2, 4) is None  # all played


def test_setup_is_checked() -> None:
    ok = {"name": "Club night", "team_a": SEATS["a"], "team_b": [["bot:easy", "b2"], ["b3", "bot:hard"]]}
    setup = parse_setup(ok)
    assert setup.boards == 8 and not setup.ranked and setup.players[4] == "bot:easy"
    assert parse_setup({**ok, "team_b": SEATS["b"]}).ranked
    for bad, field in (({**ok, "boards": 3}, "boards"), ({**ok, "boards": 17}, "boards"),
                       ({**ok, "boards": True}, "boards"), ({**ok, "team_a": [["a1"]]}, "team_a"),
                       ({**ok, "preset": "nope"}, "preset"), ({**ok, "team_b": [["a1", "x"], ["y", "z"]]}, "team_a")):
        with pytest.raises(ValueError) as e:
            parse_setup(bad)
        assert e.value.args[0] == field


# -- the live server ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from browser_helpers import LiveServer

    db = tmp_path_factory.mktemp("teammatch") / "teammatch.db"
    srv = LiveServer(db, bot_delay_s=0.0, settings={"teammatch_start_grace_s": 0.0})
    yield srv
    srv.stop()


def _account(srv: Any, name: str) -> httpx.Client:
    c = httpx.Client(base_url=srv.base, timeout=60)
    r = c.post("/api/register", json={"name": name, "password": f"pw-{name}-123"})
    assert r.status_code == 200, r.text
    return c


def _wait(c: httpx.Client, mid: int, done: Any, limit_s: float = 240) -> dict[str, Any]:
    end = time.monotonic() + limit_s
    while time.monotonic() < end:
        d = c.get(f"/api/teammatches/{mid}").json()
        if done(d):
            return d
        time.sleep(0.2)
    raise AssertionError(f"match {mid}: {d}")


BOTS = [["bot:easy", "bot:easy"], ["bot:easy", "bot:easy"]]


def test_a_practice_match_of_bots_is_played_to_the_end(served: Any) -> None:
    org = _account(served, "org")
    r = org.post("/api/teammatches", json={"name": "Practice", "team_a": BOTS, "team_b": BOTS, "boards": 4})
    assert r.status_code == 200, r.text
    mid = r.json()["id"]
    d = _wait(org, mid, lambda d: d["status"] == "finished")
    assert d["ranked"] is False and d["boards_scored"] == 4
    total = 0
    for b in d["boards"]:
        assert b["open"] and b["status"] == ["played", "played"]
        t1, t2 = b["results"]
        assert t1 in (-3, -2, -1, 1, 2, 3) and t2 in (-3, -2, -1, 1, 2, 3)
        assert b["score"] == t1 + t2
        total += t1 + t2
        assert [g["table"] for g in b["games"]] == [1, 2] and all(g["replay_url"] for g in b["games"])
    assert d["difference"] == total
    assert d["points"] == [max(0, min(26, 13 + total)), 26 - max(0, min(26, 13 + total))]
    # each table's room holds the board's own cards: the stored records of board 1 start from the same hands
    from guandan.server import models

    with served.app.state.session_factory() as db:
        heads = [json.loads(db.get(models.GameRow, g["game"]).record.split("\n")[0])["board"]
                 for g in d["boards"][0]["games"]]
    assert heads[0] == heads[1] and heads[0]["number"] == 1
    # the same cards at both tables, the seats swapped: the record's seats differ
    again = org.post(f"/api/teammatches/{mid}/tables/1/next", json={})
    assert again.status_code == 409 and again.json()["code"] == "team_match_over"
    # anyone (a second account) may open the finished boards' replays
    eve = _account(served, "eve")
    assert eve.get(f"/api/games/{d['boards'][0]['games'][1]['game']}").status_code == 200


def test_a_board_is_started_once_per_table(served: Any) -> None:
    from sqlalchemy.exc import IntegrityError

    from guandan.server import models

    org = _account(served, "org2")
    for n in ("pp1", "pp2", "pp3", "pp4"):
        _account(served, n)
    # people at table 1 (their seats wait: nobody connects), bots at table 2
    r = org.post("/api/teammatches", json={"team_a": [["pp1", "pp2"], ["bot:easy", "bot:easy"]],
                                           "team_b": [["pp3", "pp4"], ["bot:easy", "bot:easy"]], "boards": 4})
    assert r.status_code == 200, r.text
    mid = r.json()["id"]
    d = org.get(f"/api/teammatches/{mid}").json()
    assert d["tables"][0]["board"] == 1 and d["ranked"] is False
    for _ in range(2):
        again = org.post(f"/api/teammatches/{mid}/tables/1/next", json={})
        assert again.status_code == 409 and again.json()["code"] == "board_in_progress"
    with served.app.state.session_factory() as db:
        db.add(models.TeamMatchPlayRow(match_id=mid, board=1, table_no=1))
        with pytest.raises(IntegrityError):
            db.commit()
    with served.app.state.session_factory() as db:
        from sqlalchemy import func, select

        assert db.scalar(select(func.count()).select_from(models.TeamMatchPlayRow).where(
            models.TeamMatchPlayRow.match_id == mid, models.TeamMatchPlayRow.board == 1,
            models.TeamMatchPlayRow.table_no == 1)) == 1
    # odd ids: clean 404s, never a 500 (a superscript digit passes str.isdigit; 20 digits overflow SQLite)
    for bad_id in ("%C2%B9", "99999999999999999999", "-1", "x"):
        assert org.get(f"/api/teammatches/{bad_id}").json()["code"] == "no_team_match", bad_id
    assert org.post(f"/api/teammatches/{mid}/tables/3/next", json={}).json()["code"] == "no_table"
    # not a player of the table, not the organiser: refused; bad input
    stranger = _account(served, "stranger")
    assert stranger.post(f"/api/teammatches/{mid}/tables/1/next", json={}).json()["code"] == "not_your_table"
    assert org.post("/api/teammatches", json={"team_a": [["nobody", "pp2"], ["pp3", "pp4"]],
                                              "team_b": BOTS}).json()["code"] == "not_an_account"
    bad = org.post("/api/teammatches", json={"team_a": BOTS, "team_b": BOTS, "boards": 20})
    assert bad.status_code == 400 and bad.json()["params"]["field"] == "boards"
    assert org.post("/api/teammatches", json={"team_a": BOTS, "team_b": BOTS}).status_code == 200
    third = org.post("/api/teammatches", json={"team_a": BOTS, "team_b": BOTS})
    assert third.status_code == 429 and third.json()["code"] == "too_many_team_matches"


def _cards(board: dict[str, Any]) -> list[str]:
    return [json.dumps(hand) for hand in board["hands"]]


def test_a_board_shows_nothing_until_both_tables_played_it(served: Any) -> None:
    from websockets.sync.client import connect

    from guandan.server import models

    org = _account(served, "org3")
    ann = _account(served, "ann")
    out = _account(served, "outsider")
    # table 1: ann (team A) with a bot partner against two bots; table 2 all bots, played at once
    r = org.post("/api/teammatches", json={"team_a": [["ann", "bot:easy"], ["bot:easy", "bot:easy"]],
                                           "team_b": [["bot:easy", "bot:easy"], ["bot:easy", "bot:easy"]],
                                           "boards": 4})
    assert r.status_code == 200, r.text
    mid = r.json()["id"]
    d = _wait(ann, mid, lambda d: d["tables"][1]["played"] >= 2)
    assert d["my_table"] == 1 and d["tables"][0]["room"] and d["tables"][1]["room"] is None
    assert d["boards"][0]["status"] == ["playing", "played"] and d["boards"][0]["results"] is None
    assert d["points"] == [13, 13] and d["boards_scored"] == 0
    with served.app.state.session_factory() as db:
        from sqlalchemy import select

        t = models.TeamMatchPlayRow
        gid = db.scalar(select(t.game_id).where(t.match_id == mid, t.board == 1, t.table_no == 2))
        room2 = db.scalar(select(t.room_id).where(t.match_id == mid, t.board == 1, t.table_no == 2))
        room1 = db.scalar(select(t.room_id).where(t.match_id == mid, t.board == 1, t.table_no == 1))
        board = json.loads(db.get(models.TeamMatchRow, mid).boards)[0]
    assert gid is not None
    for who in (ann, out):
        texts = {}
        for path in (f"/api/teammatches/{mid}", "/api/teammatches", "/api/rooms", f"/api/rooms/{room2}",
                     f"/api/games/{gid}", f"/api/games/{gid}/record", "/api/users/ann", "/api/history"):
            resp = who.get(path)
            assert resp.status_code in (200, 404), (path, resp.status_code)
            texts[path] = resp.text
        review = who.post(f"/api/games/{gid}/deals/1/review?seat=0", json={})
        assert review.status_code == 404
        texts["review"] = review.text
        assert who.get(f"/api/games/{gid}").status_code == 404
        for path, text in texts.items():
            for hand in _cards(board):
                assert hand not in text, path
            assert '"deal_end"' not in text and not re.search(r'"first_leader":\s*\d', text), path
        assert json.loads(texts[f"/api/teammatches/{mid}"])["boards"][0]["games"] == []
        cookie = "; ".join(f"{k}={v}" for k, v in who.cookies.items())
        with connect(served.base.replace("http://", "ws://") + f"/ws/rooms/{room2}",
                     additional_headers={"Cookie": cookie, "Origin": served.base}) as ws:
            first = json.loads(ws.recv(timeout=10))
            assert first["type"] == "error" and first["reason"] == "board_private"
    # ann hands her seat to 托管 on her table's websocket: board 1 ends at table 1 too
    cookie = "; ".join(f"{k}={v}" for k, v in ann.cookies.items())
    with connect(served.base.replace("http://", "ws://") + f"/ws/rooms/{room1}",
                 additional_headers={"Cookie": cookie, "Origin": served.base}) as ws:
        ws.recv(timeout=10)
        ws.send(json.dumps({"type": "auto", "on": True}))
        d = _wait(ann, mid, lambda d: d["boards"][0]["open"], limit_s=120)
    b1 = d["boards"][0]
    assert b1["status"] == ["played", "played"] and b1["score"] == sum(b1["results"])
    assert d["boards_scored"] == 1 and d["points"][0] == max(0, min(26, 13 + b1["score"]))
    assert b1["games"][1]["game"] == gid
    assert out.get(f"/api/games/{gid}").status_code == 200 and ann.get(f"/api/games/{gid}").status_code == 200
    # board 2 is still hidden (table 1 has not played it)
    assert d["boards"][1]["results"] is None and d["boards"][1]["games"] == []


# -- online team rounds of a tournament (issue 21 item 2) ----------------------------------------


def test_an_online_team_round_of_four_bot_teams_flows_into_the_standings(served: Any) -> None:
    org = _account(served, "director")
    # the tournament's rule overrides reach its team matches' boards (a 1-2 upgrades 4 levels here, R35)
    r = org.post("/api/tournaments", json={"name": "Team cup", "venue": "online", "team": True, "rounds": 1,
                                           "time_limit": 0, "overrides": {"upgrade": "4,2,1"}})
    assert r.status_code == 201, r.text
    tid, v = r.json()["tournament"]["id"], r.json()["tournament"]["version"]
    entries = [{"name": f"Team {i}", "players": [f"t{i}a", f"t{i}b", f"t{i}c", f"t{i}d"], "bot": "easy"}
               for i in range(1, 5)]
    r = org.post(f"/api/tournaments/{tid}/entries", json={"version": v, "entries": entries})
    assert r.status_code == 200, r.text
    v = org.get(f"/api/tournaments/{tid}").json()["version"]
    r = org.post(f"/api/tournaments/{tid}/rounds", json={"version": v})
    assert r.status_code == 200, r.text  # not 409 team_online
    end = time.monotonic() + 300
    while time.monotonic() < end:
        d = org.get(f"/api/tournaments/{tid}").json()
        if d["rounds_list"][0]["complete"]:
            break
        time.sleep(0.3)
    else:
        raise AssertionError(f"round 1 did not complete: {d['team_matches']}")
    assert len(d["team_matches"]) == 2 and all(m["status"] == "finished" for m in d["team_matches"])
    from guandan.server import models

    field = {}
    for tm in d["team_matches"]:
        page = org.get(f"/api/teammatches/{tm['id']}").json()
        assert page["n_boards"] == 8 and page["ranked"] is False and page["tournament"]["table"] == tm["table"]
        deals = [b["results"] for b in page["boards"]]
        # every table's result is an upgrade of 4/2/1 (never the official 3): the boards use the override
        assert {abs(x) for pair in deals for x in pair} <= {1, 2, 4}, deals
        with served.app.state.session_factory() as db:
            boards = json.loads(db.get(models.TeamMatchRow, tm["id"]).boards)
        assert all(b["options"]["upgrade"] == [4, 2, 1] for b in boards)
        with served.app.state.session_factory() as db:
            from guandan.tournament.model import from_json

            t = from_json(db.get(models.TournamentRow, tid).state)
        m = next(x for x in t.played[0].matches if x.table == tm["table"])
        # the engine holds exactly the boards' [t1, t2] results: nobody typed them
        assert m.result is not None and m.result.team_deals == deals
        pa = max(0, min(26, 13 + sum(t1 + t2 for t1, t2 in deals)))
        assert page["points"] == [pa, 26 - pa]
        # R58 from the 26-point scale: more than 13 wins (3), 13 draws (2), less loses (1)
        fa = 3 if pa > 13 else 2 if pa == 13 else 1
        field[m.a], field[m.b] = fa, 4 - fa
    assert {s["id"]: s["field_points"] for s in d["standings"]} == field


def test_a_players_own_board_stays_hidden_from_them_until_the_other_table_played_it(served: Any) -> None:
    """The rooms of a team match are secret to their own players too (challenge_store.secret_room): a
    player who finished board 1 must not read its four hands in the replay and tell the teammates who
    play it next at the other table."""
    from websockets.sync.client import connect

    from guandan.server import models

    org = _account(served, "org4")
    ann = _account(served, "ann4")
    _account(served, "blocker4")  # table 2: never comes, so table 2 never finishes board 1
    r = org.post("/api/teammatches", json={"team_a": [["ann4", "bot:easy"], ["bot:easy", "bot:easy"]],
                                           "team_b": [["bot:easy", "bot:easy"], ["blocker4", "bot:easy"]],
                                           "boards": 4})
    assert r.status_code == 200, r.text
    mid = r.json()["id"]
    room1 = ann.get(f"/api/teammatches/{mid}").json()["tables"][0]["room"]
    cookie = "; ".join(f"{k}={v}" for k, v in ann.cookies.items())
    with connect(served.base.replace("http://", "ws://") + f"/ws/rooms/{room1}",
                 additional_headers={"Cookie": cookie, "Origin": served.base}) as ws:
        ws.recv(timeout=10)
        ws.send(json.dumps({"type": "auto", "on": True}))
        d = _wait(ann, mid, lambda d: d["boards"][0]["status"][0] == "played", limit_s=120)
    assert d["boards"][0]["status"] == ["played", "playing"] and d["boards"][0]["results"] is None
    with served.app.state.session_factory() as db:
        from sqlalchemy import select

        t = models.TeamMatchPlayRow
        gid = db.scalar(select(t.game_id).where(t.match_id == mid, t.board == 1, t.table_no == 1))
    assert gid is not None
    for path in (f"/api/games/{gid}", f"/api/games/{gid}/record"):
        assert ann.get(path).status_code == 404, path
    assert ann.post(f"/api/games/{gid}/deals/1/review?seat=0", json={}).status_code == 404
    assert gid not in [g["id"] for g in ann.get("/api/users/ann4").json()["recent_games"]]


def test_a_match_goes_on_after_a_restart(tmp_path: Any) -> None:
    """The server stops while both tables wait for their people at board 1; the next server restores
    the rooms; a person hands the seat to 托管 and, once the board ends, the table's next board starts
    (the finish hook works again: the match is found from the room in the database)."""
    from browser_helpers import LiveServer
    from websockets.sync.client import connect

    db = tmp_path / "restart.db"
    srv = LiveServer(db, bot_delay_s=0.0, settings={"teammatch_start_grace_s": 0.0})
    try:
        org = _account(srv, "org5")
        _account(srv, "ann5")
        _account(srv, "bob5")
        r = org.post("/api/teammatches", json={"team_a": [["ann5", "bot:easy"], ["bot:easy", "bot:easy"]],
                                               "team_b": [["bot:easy", "bot:easy"], ["bob5", "bot:easy"]],
                                               "boards": 4})
        assert r.status_code == 200, r.text
        mid = r.json()["id"]
    finally:
        srv.stop()
    srv = LiveServer(db, bot_delay_s=0.0, settings={"teammatch_start_grace_s": 0.0})
    try:
        ann = httpx.Client(base_url=srv.base, timeout=60)
        assert ann.post("/api/login", json={"name": "ann5", "password": "pw-ann5-123"}).status_code == 200
        d = ann.get(f"/api/teammatches/{mid}").json()
        assert [tb["board"] for tb in d["tables"]] == [1, 1] and d["tables"][0]["room"]
        cookie = "; ".join(f"{k}={v}" for k, v in ann.cookies.items())
        with connect(srv.base.replace("http://", "ws://") + f"/ws/rooms/{d['tables'][0]['room']}",
                     additional_headers={"Cookie": cookie, "Origin": srv.base}) as ws:
            ws.recv(timeout=10)
            ws.send(json.dumps({"type": "auto", "on": True}))
            d = _wait(ann, mid, lambda d: d["tables"][0]["played"] >= 1 and d["tables"][0]["board"] == 2, limit_s=120)
        assert d["boards"][0]["status"] == ["played", "playing"] and d["boards"][0]["results"] is None
    finally:
        srv.stop()


def test_leaving_a_board_alone_with_bots_counts_the_worst_result(served: Any) -> None:
    """A person alone with bots who leaves mid-board ends the game unfinished (leaving.py); the board
    counts -3 for their team (not 0: leaving a bad board never pays), and the table goes on."""
    org = _account(served, "org6")
    cat = _account(served, "cat6")
    r = org.post("/api/teammatches", json={"team_a": [["cat6", "bot:easy"], ["bot:easy", "bot:easy"]],
                                           "team_b": BOTS, "boards": 4})
    assert r.status_code == 200, r.text
    mid = r.json()["id"]
    room = cat.get(f"/api/teammatches/{mid}").json()["tables"][0]["room"]
    left = cat.post(f"/api/rooms/{room}/leave", json={})
    assert left.status_code == 200, left.text
    # the organiser owns no board room: nothing to abandon
    d = _wait(cat, mid, lambda d: d["boards"][0]["open"])
    assert d["boards"][0]["results"][0] == -3
    _wait(cat, mid, lambda d: d["tables"][0]["board"] == 2)  # table 1 goes on with board 2
