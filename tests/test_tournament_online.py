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


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def fast(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """Bots that do not wait, on a fresh SQLite file, then on a fresh PostgreSQL database (skipped
    without one, like tests/test_tournament_web_api.py)."""
    from contextlib import ExitStack

    with ExitStack() as stack:
        url = None
        if request.param == "postgresql":
            from test_tournament_web_api import _postgres_url

            if _postgres_url() is None:
                pytest.skip("PostgreSQL is not reachable (GUANDAN_TEST_POSTGRES_URL)")
            from cluster_helpers import fresh_database

            url = stack.enter_context(fresh_database())
        srv = _server(tmp_path_factory.mktemp("tonl") / "g.db", bot_delay_s=0.0, db_url=url)
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
    parsed = fast.app.state.online_rounds.parsed
    hits, misses = parsed.hits, parsed.misses
    calls, entered = fast.app.state.online_rounds.results.calls, fast.app.state.online_rounds.results.entered
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
    # the results that end within half a second are written together (tournament_entries): one write,
    # one version, per batch; the state was parsed once per round (the organiser's pairing wrote a new
    # version) and each later batch of the round reused the state the one before it wrote
    queue = fast.app.state.online_rounds.results
    writes = len({x["version"] for x in log if x["operation"] == "result"})
    assert parsed.misses - misses == 5 and parsed.hits - hits == writes - 5
    assert queue.entered - entered == 40 and 5 <= queue.calls - calls == writes <= 40


def _on_loop(srv: Any, coro: Any) -> Any:
    """Run ``coro`` on the server's event loop (the test runs in another thread)."""
    loop = srv.server.servers[0].get_loop()
    return asyncio.run_coroutine_threadsafe(coro, loop).result(30)


@pytest.fixture(scope="module")
def paced(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """Bots that wait 30 ms, people's clock timeouts never turning 托管 on, a short pause between deals,
    and the bot covering a person with no open connection after 0.2 s."""
    srv = _server(tmp_path_factory.mktemp("tonl2") / "g.db", bot_delay_s=0.03, away_grace_s=0.2,
                  settings={"timeouts_to_auto": 99, "ready_timeout_s": 0.5})
    try:
        yield srv
    finally:
        srv.stop()
        srv.app.state.engine.dispose()


def _bot_match(c: httpx.Client, name: str, **body: Any) -> tuple[int, str]:
    tid, v = _create(c, name=name, rounds=1, **body)
    entries = [{"name": f"{name} {i}", "players": [f"{name}{i}x", f"{name}{i}y"], "bot": "normal", "seed": i}
               for i in (1, 2)]
    assert c.post(f"/api/tournaments/{tid}/entries", json={"version": v, "entries": entries}).status_code == 200
    _pair(c, tid)
    return tid, _get(c, tid)["online_tables"][0]["room"]


def _game(srv: Any, room: str) -> Any:
    return srv.app.state.manager.tables[room].game


def test_match_clock_runs_out_mid_deal(paced: Any) -> None:
    c = _client(paced.base, "orga_clock")
    tid, room = _bot_match(c, "Clock", time_limit=70)
    d = _get(c, tid)
    t0 = d["online_tables"][0]
    # R58 default: 70 minutes from the round's start
    assert t0["deadline_ms"] is not None and abs(t0["deadline_ms"] / 1000 - time.time() - 70 * 60) < 30
    # wait until the second deal is in play (some of its cards are down), then the clock runs out
    end = time.monotonic() + 60
    while time.monotonic() < end:
        g = _game(paced, room)
        if g.deal_number >= 2 and sum(e["type"] == "action" for e in g.events[g.deal_event_index:]) >= 6:
            break
        time.sleep(0.01)
    online = paced.app.state.online_rounds
    reads: list[str] = []  # the tournament read again for the game-over panel (it used to be)
    read_decision = online._decision
    online._decision = lambda room_id: reads.append(room_id) or read_decision(room_id)
    try:
        _on_loop(paced, online.set_deadline(room, time.time()))
        d = _wait_round(c, tid, 1, 60)
        end = time.monotonic() + 10
        while (comp := paced.app.state.manager.competitions.get(room)) is None or comp.decision is None:
            assert time.monotonic() < end, "the table never showed the decision"
            time.sleep(0.02)
    finally:
        del online._decision
    x = d["online_tables"][0]
    la, lb, called = _final_levels(paced, x["game_id"])
    from guandan.server import models

    with paced.app.state.session_factory() as db:
        rec = db.get(models.GameRow, x["game_id"]).record
    ev = [json.loads(s) for s in rec.splitlines()[1:] if s.strip()]
    i = next(k for k, e in enumerate(ev) if e["type"] == "time_called")
    deal_at_call = ev[i]["deal"]
    start = max(k for k in range(i) if ev[k]["type"] == "deal")
    # the deal was in progress: actions before the call and after it, then its end, then the game's end
    assert any(e["type"] == "action" for e in ev[start:i]) and any(e["type"] == "action" for e in ev[i:])
    tail = ev[i + 1:]
    assert [e["type"] for e in tail if e["type"] not in ("action", "tribute_paid", "returns_revealed", "jiefeng")] \
        == ["deal_end", "game_over"]
    assert not any(e["type"] == "deal" for e in tail)  # no further deal was dealt
    assert deal_at_call >= 2 and called
    res = d["rounds_list"][0]["matches"][0]["result"]
    assert res["time_called"] and (res["level_a"], res["level_b"]) == (la, lb)
    # the levels decide (R58): higher level 3 points, lower 1, equal 2 each
    fp = {s["id"]: s["field_points"] for s in d["standings"]}
    m = d["rounds_list"][0]["matches"][0]
    want = (3, 1) if la > lb else (1, 3) if lb > la else (2, 2)
    if res["passed_a"] is None:
        assert (fp[m["a"]], fp[m["b"]]) == want
    assert ev[-1] == {"type": "game_over", "game": 1, "winner_team": (0 if la > lb else 1 if lb > la else None)} \
        or ev[-2]["passed"]
    # the table shows the decision read with the entry (no second read of the tournament): the same
    # as the stored tournament's, with the field points of the standings
    assert reads == []
    assert comp.decision == online._decision(room)
    assert comp.decision["field_points"] == [fp[m["a"]], fp[m["b"]]]
    # the same end heard twice enters nothing more
    table = paced.app.state.manager.tables.get(room) or _on_loop(paced, paced.app.state.manager.open(room))
    table.game_id = x["game_id"]
    _on_loop(paced, paced.app.state.online_rounds.game_stored(table))
    assert _get(c, tid)["version"] == d["version"]


def test_spectator_sees_no_deal_in_progress(paced: Any) -> None:
    from cluster_helpers import Client

    c = _client(paced.base, "orga_spec")
    tid, room = _bot_match(c, "Spec", time_limit=0)
    spec = Client(paced.base, room, None, "spectator")
    try:
        end = time.monotonic() + 8
        while time.monotonic() < end and not any(f.get("type") == "deal_result" for f in spec.frames):
            time.sleep(0.05)
        time.sleep(0.5)
        frames = list(spec.frames)
    finally:
        spec.close()
    g = _game(paced, room)
    states = [f for f in frames if f["type"] == "state" and f["view"] is not None]
    assert states, "the spectator got no state"
    for f in states:
        v = f["view"]
        if v.get("over"):
            continue
        # the public view is replaced: levels and counts only, no hand, no trick, no action of the deal
        assert v["delayed"] is True
        assert set(v) == {"delayed", "seat_names", "levels", "level", "deal_number", "deals_done", "over"}
        assert f["competition"]["tournament"] == tid
    # not even whose turn it is: the order of turns would show who went out (no clock seat, no
    # timeouts, no notice during the game)
    assert all(f["clock"]["seat"] is None and f["timeouts"] == [0, 0, 0, 0] for f in states if not f["view"].get("over"))
    assert not [f for f in frames if f["type"] == "notice"]
    # deal results come only for finished deals; nothing else carries cards
    for f in frames:
        if f["type"] not in ("state", "deal_result", "game_over"):
            assert "hand" not in json.dumps(f) and "cards" not in json.dumps(f), f
    dealt = {card for e in g.events if e["type"] == "deal" for h in e["hands"] for card in h}
    assert dealt  # sanity: the game dealt cards
    live = [f for f in states if not f["view"].get("over")]
    assert all(not any(str(x) in dealt for x in json.dumps(f["view"]).split('"')) for f in live)


def test_third_timeout_gives_opponents_a_level(paced: Any) -> None:
    from cluster_helpers import Client

    c = _client(paced.base, "orga_to")
    people = [_client(paced.base, n) for n in ("to_p1", "to_p2")]
    tid, v = _create(c, name="Timeouts", rounds=1, time_limit=70, clock_lead_s=1, clock_follow_s=1)
    entries = [{"name": "People", "players": ["to_p1", "to_p2"], "seed": 1},
               {"name": "Bots", "players": ["tob1", "tob2"], "bot": "normal", "seed": 2}]
    assert c.post(f"/api/tournaments/{tid}/entries", json={"version": v, "entries": entries}).status_code == 200
    _pair(c, tid)
    d = _get(c, tid)
    room = d["online_tables"][0]["room"]
    m = d["rounds_list"][0]["matches"][0]
    people_side = "a" if m["a"] == 1 else "b"
    socks = [Client(paced.base, room, p.cookies.get("gd_session"), n) for p, n in zip(people, ("p1", "p2"))]
    try:
        end = time.monotonic() + 40
        while time.monotonic() < end:
            tos = _get(c, tid)["online_tables"][0]["timeouts"]
            if tos["ab".index(people_side)] >= 3:
                break
            time.sleep(0.2)
        time.sleep(0.3)
        _on_loop(paced, paced.app.state.online_rounds.set_deadline(room, time.time()))
        d = _wait_round(c, tid, 1, 90)  # the sockets stay open: every timeout's notice is seen
    finally:
        for s in socks:
            s.close()
    res = d["rounds_list"][0]["matches"][0]["result"]
    k = res[f"timeouts_{people_side}"]
    # the moves the clock made for the people: one timeout_move notice each, counted per pair
    seen: dict[int, int] = {}
    for s in socks:
        for f in s.frames:
            if f.get("type") == "notice" and f["code"] == "timeout_move":
                seen[f["params"]["seat"]] = max(seen.get(f["params"]["seat"], 0), f["params"]["timeouts"])
    assert k >= 3 and k == sum(seen.values())
    assert d["online_tables"][0]["timeouts"]["ab".index(people_side)] == k
    opp = "b" if people_side == "a" else "a"
    score = d["rounds_list"][0]["matches"][0]["score"][opp]
    # R54: the first two are free, each later one +1 level for the opponents (capped at A, R36)
    assert score["gained"] == k - 2
    assert score["level"] == min(14, res[f"level_{opp}"] + k - 2)
    pens = [p for s in d["standings"] for p in s["penalties"]]
    assert any(p["kind"] == "timeouts" and p["levels"] == k - 2 for p in pens)


def test_an_absent_pair_gets_timeouts_not_a_bot_and_no_auto_play(paced: Any) -> None:
    """R54 could be dodged: an absent person's seat was played by the bot after 2 s ("away") with no
    timeout counted, and after two timeouts 托管 played every later move uncounted; the clock's
    move was the bot's, not R53's. At a tournament table with a move clock the clock now runs for
    an absent person, each expiry is a timeout of the pair, the move is R53's (pass when
    following), and 托管 is refused."""
    from cluster_helpers import Client

    c = _client(paced.base, "orga_away")
    people = [_client(paced.base, n) for n in ("aw_p1", "aw_p2")]
    tid, v = _create(c, name="Away", rounds=1, time_limit=70, clock_lead_s=1, clock_follow_s=1)
    entries = [{"name": "People", "players": ["aw_p1", "aw_p2"], "seed": 1},
               {"name": "Bots", "players": ["awb1", "awb2"], "bot": "normal", "seed": 2}]
    assert c.post(f"/api/tournaments/{tid}/entries", json={"version": v, "entries": entries}).status_code == 200
    _pair(c, tid)
    d = _get(c, tid)
    room = d["online_tables"][0]["room"]
    m = d["rounds_list"][0]["matches"][0]
    side = "ab".index("a" if m["a"] == 1 else "b")
    seats = (0, 2) if side == 0 else (1, 3)
    # nobody of the people's pair connects: 5 timeouts within ~5 clock expiries, none made by 托管
    end = time.monotonic() + 40
    while time.monotonic() < end and _get(c, tid)["online_tables"][0]["timeouts"][side] < 5:
        time.sleep(0.2)
    table = paced.app.state.manager.tables[room]
    assert _get(c, tid)["online_tables"][0]["timeouts"][side] >= 5
    assert not any(table.auto[s] for s in seats) and table.bot_moves[seats[0]] == table.bot_moves[seats[1]] == 0
    # R53: each move made for them is a pass (following) or a single (leading), never a bot's play
    g = _game(paced, room)
    theirs = [e["action"][0] for e in g.events if e["type"] == "action" and e["seat"] in seats]
    assert theirs and set(theirs) <= {"pass", "single", "tribute", "return"}, theirs
    # a person who comes back cannot hand the seat to the bot
    sock = Client(paced.base, room, people[0].cookies.get("gd_session"), "p1")
    try:
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and not any(f["type"] == "state" for f in sock.frames):
            time.sleep(0.05)
        sock.send({"type": "auto", "on": True})
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and not any(f["type"] == "error" for f in sock.frames):
            time.sleep(0.05)
        errors = [f for f in sock.frames if f["type"] == "error"]
        assert errors and errors[0]["reason"] == "no_auto_in_competition", sock.frames[-3:]
    finally:
        sock.close()
    _on_loop(paced, paced.app.state.online_rounds.set_deadline(room, time.time()))
    _wait_round(c, tid, 1, 90)
    # a tournament match moves no rating: an organiser cannot lower two absent accounts' ratings
    # by entering them (their result is the tournament's)
    for name in ("aw_p1", "aw_p2"):
        u = c.get(f"/api/users/{name}").json()["user"]
        assert (u["games_played"], u["rating"]) == (0, 0.0), u


def test_a_tournament_table_cannot_be_abandoned_or_played_again(paced: Any) -> None:
    """The organiser owns the rooms of an all-bot match: abandoning one left the tournament table
    "playing" for good, and "play again" made a stray copy of the match. Both answer 409."""
    c = _client(paced.base, "orga_ab")
    tid, room = _bot_match(c, "Ab", time_limit=70)
    r = c.post(f"/api/rooms/{room}/abandon", json={})
    assert r.status_code == 409 and r.json()["code"] == "tournament_table", r.text
    _on_loop(paced, paced.app.state.online_rounds.set_deadline(room, time.time()))
    d = _wait_round(c, tid, 1, 90)
    assert d["rounds_list"][0]["matches"][0]["result"] is not None
    r = c.post(f"/api/rooms/{room}/again", json={})
    assert r.status_code == 409 and r.json()["code"] == "tournament_table", r.text


def test_bot_pairs_from_a_csv_import(paced: Any) -> None:
    """The organiser's CSV import dropped the ``bot`` column: bot pairs came in as people without
    accounts and an online round could not be paired. Now ``bot`` makes a bot pair of that level."""
    c = _client(paced.base, "orga_csv")
    tid, v = _create(c, name="CSV bots", rounds=1, time_limit=70)
    text = "name,partner,club,rating,bot\n" + "".join(f"B{i}a,B{i}b,Bots,{1500 - i},{lvl}\n"
                                                       for i, lvl in enumerate(("easy", "normal", "easy", "normal")))
    r = c.post(f"/api/tournaments/{tid}/entries", json={"version": v, "csv": text})
    assert r.status_code == 200, r.text
    _pair(c, tid)
    d = _get(c, tid)
    assert len(d["online_tables"]) == 2
    for t in d["online_tables"]:
        _on_loop(paced, paced.app.state.online_rounds.set_deadline(t["room"], time.time()))
    d = _wait_round(c, tid, 1, 90)
    assert all(m["result"] is not None for m in d["rounds_list"][0]["matches"])


def test_restart_in_a_timed_round(tmp_path: Path) -> None:
    from guandan.server import models

    path = tmp_path / "g.db"
    srv = _server(path, bot_delay_s=0.05)
    try:
        c = _client(srv.base, "orga_restart")
        tid, room = _bot_match(c, "Restart", time_limit=70)
        end = time.monotonic() + 30
        while time.monotonic() < end and len(_game(srv, room).events) < 40:
            time.sleep(0.05)
        with srv.app.state.session_factory() as db:
            deadline = db.scalars(select(models.TournamentTableRow.deadline)).one()
    finally:
        srv.stop()
        srv.app.state.engine.dispose()
    srv = _server(path, bot_delay_s=0.05)
    try:
        c = _client(srv.base, "orga_restart")
        comp = srv.app.state.manager.competitions[room]
        assert comp.deadline == deadline  # the match clock resumes with the same deadline
        table = srv.app.state.manager.tables[room]
        n = len(table.game.events)
        assert n >= 40
        end = time.monotonic() + 20
        while time.monotonic() < end and len(table.game.events) == n:
            time.sleep(0.05)
        assert len(table.game.events) > n  # the room plays on after the restart
        d = _get(c, tid)
        assert d["online_tables"][0]["deadline_ms"] == int(deadline * 1000)
        _on_loop(srv, srv.app.state.online_rounds.set_deadline(room, time.time()))
        d = _wait_round(c, tid, 1, 60)
        version = d["version"]
        assert d["online_tables"][0]["state"] == "entered"
    finally:
        srv.stop()
        srv.app.state.engine.dispose()
    srv = _server(path, bot_delay_s=0.05)  # and once more: nothing is entered twice
    try:
        c = _client(srv.base, "orga_restart")
        time.sleep(1.0)
        d = _get(c, tid)
        assert d["version"] == version
        log = c.get(f"/api/tournaments/{tid}/log").json()["log"]
        assert [x["operation"] for x in log].count("result") == 1
        res = d["rounds_list"][0]["matches"][0]["result"]
        la, lb, called = _final_levels(srv, d["online_tables"][0]["game_id"])
        assert called and res["time_called"] and (res["level_a"], res["level_b"]) == (la, lb)
    finally:
        srv.stop()
        srv.app.state.engine.dispose()


def test_late_pair_forfeits(paced: Any) -> None:
    c = _client(paced.base, "orga_late")
    _client(paced.base, "late_p1"), _client(paced.base, "late_p2")
    tid, v = _create(c, name="Late", rounds=1, time_limit=70, late_minutes=10)
    entries = [{"name": "Latecomers", "players": ["late_p1", "late_p2"], "seed": 1},
               {"name": "Punctual", "players": ["lb1", "lb2"], "bot": "normal", "seed": 2}]
    assert c.post(f"/api/tournaments/{tid}/entries", json={"version": v, "entries": entries}).status_code == 200
    online = paced.app.state.online_rounds
    _pair(c, tid)
    d = _get(c, tid)
    m = d["rounds_list"][0]["matches"][0]
    late_side = "a" if m["a"] == 1 else "b"
    time.sleep(1.5)
    assert _get(c, tid)["online_tables"][0]["state"] == "playing"  # 10 minutes have not passed
    online.clock = lambda: time.time() + 10 * 60 + 1  # ten minutes later, nobody of the pair connected
    try:
        d = _wait_round(c, tid, 1, 30)
    finally:
        online.clock = time.time
    x = d["online_tables"][0]
    assert x["state"] == "forfeit"
    res = d["rounds_list"][0]["matches"][0]["result"]
    assert res["absent"] == late_side
    fp = {s["id"]: s["field_points"] for s in d["standings"]}
    assert fp == {1: 0, 2: 3}  # R58: absent 0, the side present wins 3


def test_late_minutes_and_result_of_game() -> None:
    from guandan.tournament.online import late_minutes, result_of_game

    assert late_minutes(1000.0, 1000.0 + 4 * 60 + 59, 0) == 4
    assert late_minutes(1000.0, None, 1000.0 + 12 * 60) == 12
    r = result_of_game((14, 9), 0, False, (3, 0), (0, 7))
    assert (r.level_a, r.level_b, r.passed_a, r.timeouts_a, r.late_b) == (14, 9, "a", 3, 7)


def test_call_time_in_the_core() -> None:
    """Game.call_time (R58) mid-deal, between deals and for the extra deal, and its record replayed."""
    from guandan.agents.registry import make_agent
    from guandan.core.match import Game
    from guandan.core.views import seat_view
    from guandan.records import dumps, record_header, replay_lines

    bot = make_agent("heuristic", 7)

    def play(g: Any) -> None:
        while not g.over:
            g.apply(bot.act(seat_view(g, g.to_act())), g.to_act())

    def replayed(g: Any) -> Any:
        lines = [dumps(record_header(g, "official", ["a", "b", "c", "d"]))] + [dumps(e) for e in g.events]
        return replay_lines(lines).game

    # mid-deal: 5 actions into deal 2, the deal is finished and nothing follows
    g = Game(seed=11)
    while not (g.deal_number == 2 and sum(e["type"] == "action" for e in g.events[g.deal_event_index:]) == 5):
        g.apply(bot.act(seat_view(g, g.to_act())), g.to_act())
    g.call_time()
    assert not g.over
    play(g)
    types = [e["type"] for e in g.events]
    i = types.index("time_called")
    assert types[i + 1:].count("deal_end") == 1 and "deal" not in types[i + 1:] and types[-1] == "game_over"
    assert g.deal_number == 2 and len(g.settlements) == 2  # deal 2 ended, no deal 3
    a, b = g.score.levels
    assert g.winner == (None if a == b else 0 if a > b else 1)
    assert replayed(g).events == g.events
    # between deals (no action of the new deal yet): the game ends at once, 2:2 is a draw
    g = Game(seed=12)
    g.call_time()
    assert g.over and g.winner is None and g.events[-1] == {"type": "game_over", "game": 1, "winner_team": None}
    assert replayed(g).over
    # the extra deal: one deal at level 2, the team that took 头游 is ahead on levels and wins
    g = Game(seed=13)
    g.call_time(play_deal=True)
    play(g)
    end = [e for e in g.events if e["type"] == "deal_end"]
    assert len(end) == 1 and g.winner == end[0]["finish_order"][0] % 2
    assert replayed(g).events == g.events


def test_knockout_draw_played_off_by_an_extra_deal(fast: Any) -> None:
    c = _client(fast.base, "orga_ko")
    names = [f"ko_p{i}" for i in range(8)]
    for n in names:
        _client(fast.base, n)
    tid, v = _create(c, name="Knock-out", format="groups_knockout", groups=2, knockout_size=2, time_limit=0,
                     knockout_time_limit=120)
    entries = [{"name": f"KO {i}", "players": names[2 * i:2 * i + 2], "seed": i + 1} for i in range(4)]
    assert c.post(f"/api/tournaments/{tid}/entries", json={"version": v, "entries": entries}).status_code == 200
    rnd = _pair(c, tid)  # the groups: nobody connected, so the people's tables wait; the organiser types
    for m in rnd["matches"]:  # over the tables still playing: override (else 409 table_playing)
        r = c.post(f"/api/tournaments/{tid}/results", json={"version": _get(c, tid)["version"], "round": 1,
                                                            "table": m["table"], "level_a": "A", "level_b": 5,
                                                            "passed_a": "a", "override": True})
        assert r.status_code == 200, r.text
    final = _pair(c, tid)
    assert final["kind"] == "knockout" and len(final["matches"]) == 1
    x = next(o for o in _get(c, tid)["online_tables"] if o["round"] == 2)
    fast.app.state.manager.away_grace_s = 0.05  # from now on the bot covers the absent people
    # the final ends drawn on time (2 : 2; its first, absent, player never moved): the service is told
    # so as game_stored would, with the result the engine refuses without an extra deal
    from guandan.tournament.online import result_of_game

    online = fast.app.state.online_rounds
    drawn = result_of_game((2, 2), None, True)
    got = _on_loop(fast, fast.app.state.manager.run_db(online._enter, x["room"], drawn, None))
    assert got == "extra"
    _on_loop(fast, online._extra_deal(x["room"]))
    d = _wait_round(c, tid, 2, 60)
    y = next(o for o in d["online_tables"] if o["round"] == 2)
    assert y["room"] != x["room"] and y["state"] == "entered"  # the extra deal had its own room
    from guandan.server import models

    with fast.app.state.session_factory() as db:
        rec = db.get(models.GameRow, y["game_id"]).record
    ev = [json.loads(s) for s in rec.splitlines()[1:] if s.strip()]
    assert ev[1] == {"type": "time_called", "game": 1, "deal": 1, "play_deal": True}
    ends = [e for e in ev if e["type"] == "deal_end"]
    assert len(ends) == 1 and [e["level"] for e in ev if e["type"] == "deal"] == ["2"]
    head = "ab"[ends[0]["finish_order"][0] % 2]
    m = d["rounds_list"][1]["matches"][0]
    res = m["result"]
    assert (res["level_a"], res["level_b"], res["time_called"], res["extra_deal"]) == (2, 2, True, head)
    winner = m["a"] if head == "a" else m["b"]
    assert d["standings"][0]["id"] == winner and d["status"] == "finished"


@pytest.mark.parametrize(("action", "limit"), [("levels", 5), ("forfeit", 15)])
def test_late_pair_gives_levels(paced: Any, action: str, limit: int) -> None:
    """The pair that connects 12 minutes after the start plays on, and its 12 minutes late give the
    opponents 12 // 5 = 2 levels (R54): with ``late_action: "levels"``, and with ``"forfeit"`` when it
    comes before the forfeit limit (15 minutes; it paid nothing there before)."""
    from cluster_helpers import Client

    c = _client(paced.base, f"orga_lv_{action}")
    p1 = _client(paced.base, f"lv_{action}_p1")
    _client(paced.base, f"lv_{action}_p2")
    tid, v = _create(c, name=f"Late {action}", rounds=1, time_limit=70, late_minutes=limit, late_action=action,
                       clock_lead_s=1, clock_follow_s=1)
    entries = [{"name": "Slow", "players": [f"lv_{action}_p1", f"lv_{action}_p2"], "seed": 1},
               {"name": "Quick", "players": [f"lvb1{action}", f"lvb2{action}"], "bot": "normal", "seed": 2}]
    assert c.post(f"/api/tournaments/{tid}/entries", json={"version": v, "entries": entries}).status_code == 200
    online = paced.app.state.online_rounds
    _pair(c, tid)
    d = _get(c, tid)
    room = d["online_tables"][0]["room"]
    side = "a" if d["rounds_list"][0]["matches"][0]["a"] == 1 else "b"
    time.sleep(1.5)  # the bots' pair is seen at once
    online.clock = lambda: time.time() + 12 * 60 + 10
    sock = Client(paced.base, room, p1.cookies.get("gd_session"), "late")
    try:
        end = time.monotonic() + 10
        while time.monotonic() < end and online.live[room].arrived["ab".index(side)] is None:
            time.sleep(0.1)
        # both arrivals are stored (one transaction per look at the connections), as a restart reads them
        from guandan.server import models

        stored: tuple[Any, Any] = (None, None)
        while time.monotonic() < end:
            with paced.app.state.session_factory() as db:
                row = db.query(models.TournamentTableRow).filter_by(room_id=room).one()
                stored = (row.arrived_a, row.arrived_b)
            if None not in stored:
                break
            time.sleep(0.1)
        assert stored == tuple(online.live[room].arrived), stored
    finally:
        sock.close()
        online.clock = time.time
    _on_loop(paced, online.set_deadline(room, time.time()))
    d = _wait_round(c, tid, 1, 60)
    assert d["online_tables"][0]["state"] == "entered"  # not a forfeit: the pair came
    res = d["rounds_list"][0]["matches"][0]["result"]
    assert res[f"late_{side}"] == 12 and res[f"late_{'b' if side == 'a' else 'a'}"] == 0
    opp = "b" if side == "a" else "a"
    k = res[f"timeouts_{side}"]
    gained = d["rounds_list"][0]["matches"][0]["score"][opp]["gained"]
    assert gained == 2 + max(0, k - 2)


def test_restart_opens_the_tables_a_crash_left_unmade(tmp_path: Path) -> None:
    """The round was paired but the server stopped before its room existed: the next start makes it."""
    from sqlalchemy import delete

    from guandan.server import models

    path = tmp_path / "g.db"
    srv = _server(path, bot_delay_s=0.5)
    try:
        c = _client(srv.base, "orga_crash")
        tid, room = _bot_match(c, "Crash", time_limit=0)
    finally:
        srv.stop()
        srv.app.state.engine.dispose()
    from sqlalchemy import create_engine
    from sqlalchemy.orm import Session

    engine = create_engine(f"sqlite:///{path}")
    with Session(engine) as db:  # as if the server had stopped between pairing and making the room
        db.execute(delete(models.TournamentTableRow))
        db.execute(delete(models.GameEvent))
        db.execute(delete(models.RoomSeat))
        db.execute(delete(models.Room).where(models.Room.id == room))
        db.commit()
    engine.dispose()
    srv = _server(path, bot_delay_s=0.0)
    try:
        c = _client(srv.base, "orga_crash")
        d = _wait_round(c, tid, 1, 120)
        x = d["online_tables"][0]
        assert x["room"] != room and x["state"] == "entered"
        la, lb, _ = _final_levels(srv, x["game_id"])
        res = d["rounds_list"][0]["matches"][0]["result"]
        assert (res["level_a"], res["level_b"]) == (la, lb)
    finally:
        srv.stop()
        srv.app.state.engine.dispose()


def test_time_called_before_the_tribute_finishes_the_deal() -> None:
    """R58 with R44: the clock runs out when a deal with a tribute is dealt (no card given yet, the
    players see it): the tribute, the return and the whole deal are played, then the game ends."""
    from guandan.agents.registry import make_agent
    from guandan.core.match import Game
    from guandan.core.views import seat_view
    from guandan.records import dumps, record_header, replay_lines

    bot = make_agent("heuristic", 5)
    for seed in range(40):
        g = Game(seed=seed)
        while not g.over and not (g.deal_number >= 2 and g.phase == "tribute"):
            g.apply(bot.act(seat_view(g, g.to_act())), g.to_act())
        if not g.over:
            break
    assert g.phase == "tribute"
    deal = g.deal_number
    g.call_time(play_deal=True)
    assert not g.over
    while not g.over:
        g.apply(bot.act(seat_view(g, g.to_act())), g.to_act())
    types = [e["type"] for e in g.events]
    i = types.index("time_called")
    assert "tribute_paid" in types[i:] and types[i:].count("deal_end") == 1 and "deal" not in types[i:]
    assert g.deal_number == deal and types[-1] == "game_over"
    lines = [dumps(record_header(g, "official", ["a", "b", "c", "d"]))] + [dumps(e) for e in g.events]
    assert replay_lines(lines).game.events == g.events


def test_online_bad_input(paced: Any) -> None:
    """A player without an account, a re-pairing of a started online round, a bad venue or bot level:
    clear codes (translated by the UI), nothing paired or created."""
    c = _client(paced.base, "orga_bad")
    r = c.post("/api/tournaments", json={"name": "Bad venue", "venue": "moon"})
    assert r.status_code == 400 and r.json()["code"] == "bad_venue"
    r = c.post("/api/tournaments", json={"name": "Bad late", "venue": "online", "late_action": "shrug"})
    assert r.status_code == 400 and r.json()["code"] == "bad_late_action"
    tid, v = _create(c, name="No accounts", rounds=1, time_limit=70)
    r = c.post(f"/api/tournaments/{tid}/entries", json={"version": v, "entries": [
        {"name": "Typed", "players": ["nobody_here", "nor_here"]}, {"name": "X", "players": ["x1", "x2"], "bot": "god"}]})
    assert r.status_code == 400 and r.json()["code"] == "bad_entry"
    r = c.post(f"/api/tournaments/{tid}/entries", json={"version": v, "entries": [
        {"name": "Typed", "players": ["nobody_here", "nor_here"]}, {"name": "Bots", "players": ["x1", "x2"], "bot": "easy"}]})
    assert r.status_code == 200, r.text
    r = c.post(f"/api/tournaments/{tid}/rounds", json={"version": _get(c, tid)["version"]})
    assert r.status_code == 409 and r.json()["code"] == "not_an_account"
    assert r.json()["params"] == {"name": "nobody_here"}
    d = _get(c, tid)
    assert d["rounds_list"] == [] and d["online_tables"] == []
    tid, _room = _bot_match(c, "Started", time_limit=70)
    r = c.request("DELETE", f"/api/tournaments/{tid}/rounds/1", params={"version": _get(c, tid)["version"]}, json={})
    assert r.status_code == 409 and r.json()["code"] == "online_round_started"


def test_time_called_in_the_deal_that_passes_the_target_ends_the_match_even_with_restart() -> None:
    """R58 over R42: under ``after_target="restart"`` (classic) a pass of the target used to start
    a new game although time had been called, whose first deal was played and whose levels then
    decided the winner. Time called in the deal that passes the target: that team wins, game 1,
    nothing dealt after it. (Target 8 so that the target is reached within a few deals.)"""
    from guandan.agents.registry import make_agent
    from guandan.core.match import Game
    from guandan.core.rules import RuleSet
    from guandan.core.cards import parse_rank
    from guandan.core.views import seat_view

    rules = RuleSet.preset("classic").replace(target_level="8")
    target = parse_rank("8")
    passed_seen = 0
    for seed in range(1, 40):
        bot = make_agent("heuristic", seed)
        g = Game(rules, seed=seed, max_games=None)
        # play until a deal at the target level has its first action, then call time
        while not g.over:
            at_target = g.deal.level == target and target in g.score.levels
            started = any(e["type"] == "action" for e in g.events[g.deal_event_index:])
            if at_target and started and not g.time_called:
                g.call_time()
            g.apply(bot.act(seat_view(g, g.to_act())), g.to_act())
        types = [e["type"] for e in g.events]
        if not g.time_called:
            continue
        i = types.index("time_called")
        assert types[i + 1:].count("deal_end") == 1 and "deal" not in types[i + 1:] and types[-1] == "game_over"
        assert g.game_number == 1
        end = [e for e in g.events if e["type"] == "deal_end"][-1]
        if end["passed"]:
            passed_seen += 1
            assert g.winner == end["winner_team"] and g.games_won[end["winner_team"]] == 1
        if passed_seen >= 2:
            break
    assert passed_seen >= 2


def test_replay_command_shows_a_drawn_timed_game(tmp_path: Path) -> None:
    """`guandan replay` crashed (TypeError) on a time-called draw (winner_team null) and called the
    finished game "not over"; it now names the time call and the draw."""
    from typer.testing import CliRunner

    from guandan.cli import app
    from guandan.core.match import Game
    from guandan.records import dumps, record_header

    g = Game(seed=12)
    g.call_time()  # between deals at 2:2: the game ends at once, a draw (R58)
    assert g.over and g.winner is None
    rec = tmp_path / "draw.jsonl"
    rec.write_text("".join(dumps(x) + "\n" for x in [record_header(g, "official", ["a", "b", "c", "d"]), *g.events]),
                   encoding="utf-8")
    r = CliRunner().invoke(app, ["replay", str(rec)], env={"COLUMNS": "120"})
    assert r.exit_code == 0, r.output
    assert "time called (R58) in game 1, deal 1" in r.output
    assert "game 1 over: a draw (time called, equal levels)" in r.output
    assert "game over, a draw" in r.output and "not over" not in r.output
