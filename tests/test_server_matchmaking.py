"""The matchmaking API (issue 25 item 1) through the real app, the Redis queue shared by two
queues (two processes' worth of clients), and two ``guandan serve --redis`` processes on one Redis.

Expected values follow :mod:`guandan.server.matchmaking`: new accounts rate 0 (``mu - 3*sigma``
with openskill's prior), so four new people are within the 3 points allowed at 0 s and are matched
at the next round of the loop (every 0.25 s); ready checks last 15 s.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from guandan.server import matchmaking as mm
from guandan.server.app import create_app
from guandan.server.matchmaking_store import MatchError, MatchQueue, RedisBackend
from guandan.server.settings import Settings
from guandan.server.table.bots import DIFFICULTIES


pytestmark = pytest.mark.usefixtures("fast_hashing")  # tests/conftest.py


@pytest.fixture
def app(tmp_path: Any) -> Iterator[Any]:
    application = create_app(Settings(db_url=f"sqlite:///{tmp_path / 'gd.db'}", bot_delay_s=0.0))
    with TestClient(application):  # lifespan: the matching loop runs
        yield application


def person(app: Any, name: str) -> TestClient:
    c = TestClient(app)
    r = c.post("/api/register", json={"name": name, "password": "secret-pw-1"})
    assert r.status_code == 200, r.text
    return c


def wait_status(c: TestClient, status: str, timeout_s: float = 10.0) -> dict[str, Any]:
    end = time.monotonic() + timeout_s
    while True:
        body = c.get("/api/match").json()
        if body["status"] == status or time.monotonic() > end:
            assert body["status"] == status, body
            return body
        time.sleep(0.05)


def test_needs_a_session(app: Any) -> None:
    c = TestClient(app)
    assert c.get("/api/match").status_code == 401
    assert c.post("/api/match/join", json={}).status_code == 401


def test_four_people_matched_ready_and_seated(app: Any) -> None:
    people = [person(app, f"mp{i}") for i in range(4)]
    for i, c in enumerate(people):
        r = c.post("/api/match/join", json={})
        assert r.status_code == 201, r.text
        entry = r.json()["entry"]
        assert entry["rating"] == 0.0 and entry["range"] == 3.0
        assert (entry["range_low"], entry["range_high"]) == (-3.0, 3.0)
        assert entry["partner"] is None and entry["bot_fill_in_s"] is None
    checks = [wait_status(c, "ready_check") for c in people]
    ids = {b["ready_check"]["id"] for b in checks}
    assert len(ids) == 1
    check = checks[0]["ready_check"]
    assert sorted(p["name"] for p in check["players"]) == ["mp0", "mp1", "mp2", "mp3"]
    assert check["bot_seats"] == 0 and 0 < check["seconds_left"] <= mm.READY_S
    assert "rating" not in str(check["players"])  # names only
    for c in people:
        r = c.post("/api/match/ready", json={})
        assert r.status_code == 200 and r.json()["ready_check"]["me_ready"] is True
    seated = [wait_status(c, "seated") for c in people]
    room_id = seated[0]["room"]
    assert {b["room"] for b in seated} == {room_id}
    room = people[0].get(f"/api/rooms/{room_id}").json()["room"]
    assert room["status"] == "playing"
    names = sorted(s["user"] for s in room["seats"])
    assert names == ["mp0", "mp1", "mp2", "mp3"]
    assert [s["kind"] for s in room["seats"]] == ["person"] * 4


def test_two_tabs_get_the_same_entry(app: Any) -> None:
    a = person(app, "tabs")
    b = TestClient(app)
    b.cookies.update(a.cookies)  # the second tab: same login session
    first = a.post("/api/match/join", json={})
    second = b.post("/api/match/join", json={"bot_level": DIFFICULTIES[0]})
    assert (first.status_code, second.status_code) == (201, 200)
    assert first.json()["entry"]["id"] == second.json()["entry"]["id"]
    assert second.json()["entry"]["bot_level"] is None  # the existing entry, unchanged
    assert app.state.matchmaking.queue.counts()["people"] == 1
    # leaving is one tap, from either tab
    assert b.post("/api/match/leave", json={}).json() == {"ok": True, "left": True}
    assert a.get("/api/match").json()["status"] == "idle"
    assert a.post("/api/match/leave", json={}).json() == {"ok": True, "left": False}


def test_leave_during_ready_check_puts_others_back_in_front(app: Any) -> None:
    people = [person(app, f"lv{i}") for i in range(4)]
    for c in people:
        assert c.post("/api/match/join", json={}).status_code == 201
    before = {i: wait_status(c, "ready_check")["entry"]["id"] for i, c in enumerate(people)}
    people[0].post("/api/match/ready", json={})
    assert people[2].post("/api/match/leave", json={}).json() == {"ok": True, "left": True}
    assert people[2].get("/api/match").json()["status"] == "idle"
    for i in (0, 1, 3):
        body = people[i].get("/api/match").json()
        assert body["status"] == "queued", body
        assert body["entry"]["id"] == before[i]  # the same entry, its old join time kept
    assert people[1].post("/api/match/decline", json={}).status_code == 409  # no ready check now


def test_decline_answers_and_errors(app: Any) -> None:
    c = person(app, "decliner")
    r = c.post("/api/match/ready", json={})
    assert r.status_code == 409 and r.json()["code"] == "no_ready_check"
    r = c.post("/api/match/bots", json={"bot_level": DIFFICULTIES[0]})
    assert r.status_code == 409 and r.json()["code"] == "not_queued"
    r = c.post("/api/match/join", json={"bot_level": "grandmaster"})
    assert r.status_code == 400 and r.json()["code"] == "bad_bot_level"
    assert app.state.matchmaking.queue.counts()["people"] == 0


def test_partner_must_be_a_friend(app: Any) -> None:
    a, b = person(app, "pal_a"), person(app, "pal_b")
    r = a.post("/api/match/join", json={"partner": "pal_b"})
    assert r.status_code == 409 and r.json()["code"] == "not_friends"
    r = a.post("/api/match/join", json={"partner": "nobody-here"})
    assert r.status_code == 404 and r.json()["code"] == "no_user"
    r = a.post("/api/match/join", json={"partner": "PAL_A"})
    assert r.status_code == 400 and r.json()["code"] == "partner_self"
    assert b.post("/api/friends/requests", json={"name": "pal_a"}).status_code == 200
    assert a.post("/api/friends/accept", json={"name": "pal_b"}).status_code == 200
    r = a.post("/api/match/join", json={"partner": "pal_b"})
    assert r.status_code == 201, r.text
    assert r.json()["entry"]["partner"] == "pal_b"
    mine = b.get("/api/match").json()
    assert mine["status"] == "queued" and mine["entry"]["partner"] == "pal_a"
    c = person(app, "pal_c")
    assert c.post("/api/friends/requests", json={"name": "pal_b"}).status_code == 200
    assert b.post("/api/friends/accept", json={"name": "pal_c"}).status_code == 200
    r = c.post("/api/match/join", json={"partner": "pal_b"})
    assert r.status_code == 409 and r.json()["code"] == "partner_busy"
    g = TestClient(app)
    assert g.post("/api/guest", json={}).status_code == 200
    r = g.post("/api/match/join", json={"partner": "pal_b"})
    assert r.status_code == 403 and r.json()["code"] == "guest_no_partner"


def test_partners_seated_as_one_team(app: Any) -> None:
    a, b, c, d = (person(app, n) for n in ("team_a", "team_b", "team_c", "team_d"))
    assert b.post("/api/friends/requests", json={"name": "team_a"}).status_code == 200
    assert a.post("/api/friends/accept", json={"name": "team_b"}).status_code == 200
    assert a.post("/api/match/join", json={"partner": "team_b"}).status_code == 201
    for x in (c, d):
        assert x.post("/api/match/join", json={}).status_code == 201
    for x in (a, b, c, d):
        wait_status(x, "ready_check")
        x.post("/api/match/ready", json={})
    room_id = wait_status(a, "seated")["room"]
    seats = {s["user"]: s["seat"] for s in a.get(f"/api/rooms/{room_id}").json()["room"]["seats"]}
    assert seats["team_a"] % 2 == seats["team_b"] % 2  # partners: seats 0+2 (R1)
    assert seats["team_c"] % 2 == seats["team_d"] % 2 != seats["team_a"] % 2


def test_bot_fill_seats_one_person_with_bots(app: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mm, "BOT_FILL_AFTER_S", 0.5)
    a = person(app, "solo")
    level = DIFFICULTIES[0]
    body = a.post("/api/match/join", json={}).json()
    assert body["entry"]["bot_fill_in_s"] is None
    body = a.post("/api/match/bots", json={"bot_level": level}).json()
    assert body["entry"]["bot_level"] == level and 0 <= body["entry"]["bot_fill_in_s"] <= 0.5
    check = wait_status(a, "ready_check")["ready_check"]
    assert check["bot_seats"] == 3 and check["bot_level"] == level
    a.post("/api/match/ready", json={})
    room_id = wait_status(a, "seated")["room"]
    room = a.get(f"/api/rooms/{room_id}").json()["room"]
    assert room["status"] == "playing"
    assert sum(1 for s in room["seats"] if s["kind"] == "bot") == 3


def _one_deal_record(winner: int) -> str:
    """A finished one-deal game of the ``anhui`` preset (Anhui points on): team ``winner`` went
    out 1-2, which is worth 4 points to each winner and -4 to each loser (RULES.md section 2.1)."""
    import json

    from guandan.core.rules import RuleSet

    order = [winner, winner + 2, 1 - winner, 3 - winner]
    pts = [4 if s % 2 == winner else -4 for s in range(4)]
    lines = [{"format": "pyguandan-record", "version": 1, "preset": "anhui", "options": RuleSet.preset("anhui").to_dict(),
              "seed": 1, "hands": "shuffled", "first_leader": None, "max_games": 1, "players": ["a", "b", "c", "d"]},
             {"type": "deal_end", "finish_order": order, "result": "1-2", "winner_team": winner, "points": pts},
             {"type": "game_over", "game": 1, "winner_team": winner}]
    return "".join(json.dumps(x) + "\n" for x in lines)


def _finish_in(app: Any, room_id: str, winner: int) -> None:
    """Store a won game of room ``room_id`` as the live table would (``games.record_finished_game``)."""
    from guandan.server import models
    from guandan.server.games import record_finished_game

    with app.state.matchmaking.session_factory() as db:
        room = db.get(models.Room, room_id)
        record_finished_game(db, room, _one_deal_record(winner), None, list(room.seats))
        db.commit()


def test_matched_room_with_bots_is_unrated(app: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 25: "rated games count toward the rating only with no bot seats". A matched room filled
    with bots is flagged unrated: its won game leaves the rating (0.0), games played (0) and Anhui
    points (0) as they were, and the room and the history say so. An unmatched room with bots (a
    quick game) stays rated: the same won game gives +4 Anhui points and one game played."""
    monkeypatch.setattr(mm, "BOT_FILL_AFTER_S", 0.2)
    a = person(app, "botfill")
    assert a.post("/api/match/join", json={"bot_level": DIFFICULTIES[0]}).status_code == 201
    wait_status(a, "ready_check")
    a.post("/api/match/ready", json={})
    room_id = wait_status(a, "seated")["room"]
    room = a.get(f"/api/rooms/{room_id}").json()["room"]
    assert room["unrated"] is True
    seat = next(s["seat"] for s in room["seats"] if s["user"] == "botfill")
    _finish_in(app, room_id, seat % 2)
    me = a.get("/api/me").json()["user"]
    assert (me["rating"], me["games_played"], me["games_won"], me["anhui_points"]) == (0.0, 0, 0, 0)
    games = a.get("/api/history").json()["games"]
    assert [(g["room_id"], g["unrated"], g["result"]) for g in games] == [(room_id, True, "won")]

    b = person(app, "quickie")  # a quick game (three bots, not matched): rated as before
    r = b.post("/api/quick", json={})
    assert r.status_code == 200, r.text
    quick = r.json()["room"]
    assert quick["unrated"] is False
    _finish_in(app, quick["id"], 0)  # the caller sits in seat 0 of a quick game
    me = b.get("/api/me").json()["user"]
    assert (me["games_played"], me["games_won"], me["anhui_points"]) == (1, 1, 4)
    assert me["rating"] > 0.0
    assert [g["unrated"] for g in b.get("/api/history").json()["games"]] == [False]


def test_matched_room_of_four_people_is_rated(app: Any) -> None:
    people = [person(app, f"rt{i}") for i in range(4)]
    for c in people:
        assert c.post("/api/match/join", json={}).status_code == 201
    for c in people:
        wait_status(c, "ready_check")
        c.post("/api/match/ready", json={})
    room_id = wait_status(people[0], "seated")["room"]
    assert people[0].get(f"/api/rooms/{room_id}").json()["room"]["unrated"] is False


def test_join_while_seated_in_a_live_game_answers_the_room(app: Any) -> None:
    """Issue 25: joining while seated in a game under way is refused with 409 ``seated_in_game`` and
    the room (the UI offers to go there); a partner in a game: 409 ``partner_in_game`` with the
    name only. Once that game is over, joining works."""
    a = person(app, "busy_a")
    quick = a.post("/api/quick", json={})
    assert quick.status_code == 200, quick.text
    room_id = quick.json()["room"]["id"]
    r = a.post("/api/match/join", json={})
    assert r.status_code == 409
    assert (r.json()["code"], r.json()["params"]) == ("seated_in_game", {"room": room_id})
    assert app.state.matchmaking.queue.counts()["people"] == 0
    b = person(app, "busy_b")
    assert a.post("/api/friends/requests", json={"name": "busy_b"}).status_code == 200
    assert b.post("/api/friends/accept", json={"name": "busy_a"}).status_code == 200
    r = b.post("/api/match/join", json={"partner": "busy_a"})
    assert r.status_code == 409
    assert (r.json()["code"], r.json()["params"]) == ("partner_in_game", {"name": "busy_a"})
    from guandan.server import models  # the quick game ends: its room is finished

    with app.state.matchmaking.session_factory() as db:
        db.get(models.Room, room_id).status = "finished"
        db.commit()
    assert a.post("/api/match/join", json={}).status_code == 201


def test_lock_not_taken_answers_503_retryable(app: Any) -> None:
    c = person(app, "locked_out")
    queue = app.state.matchmaking.queue
    queue.lock_wait_s = 0.05
    held = queue.b.lock()
    assert held.acquire(1.0)
    try:
        for path in ("/api/match/join", "/api/match/leave", "/api/match/ready"):
            r = c.post(path, json={})
            assert r.status_code == 503, (path, r.text)
            assert (r.json()["code"], r.json()["params"]) == ("temporarily_unavailable", {"retry_s": 2})
            assert r.headers["retry-after"] == "2"
    finally:
        held.release()
    assert c.post("/api/match/join", json={}).status_code == 201


def test_three_declines_answer_429_with_the_wait(app: Any) -> None:
    """The decliner of 3 ready checks (within seconds, so within 10 minutes) waits 2 minutes: the
    join answers 429 ``decline_cooldown`` with ``retry_s`` and ``Retry-After`` (120 s minus the
    second or so the test took since the last decline); the others join at once."""
    people = [person(app, f"dc{i}") for i in range(4)]
    for _ in range(3):
        for c in people:
            assert c.post("/api/match/join", json={}).status_code in (200, 201)
        wait_status(people[0], "ready_check")
        assert people[0].post("/api/match/decline", json={}).status_code == 200
        for c in people[1:]:
            c.post("/api/match/leave", json={})
    r = people[0].post("/api/match/join", json={})
    assert r.status_code == 429, r.text
    assert r.json()["code"] == "decline_cooldown"
    assert 110 <= r.json()["params"]["retry_s"] <= 120
    assert r.headers["retry-after"] == str(r.json()["params"]["retry_s"])
    assert people[1].post("/api/match/join", json={}).status_code == 201


def test_redis_lock_not_taken_is_503() -> None:
    """On Redis (a cluster), the queue's lock held elsewhere past the wait: 503, nothing changed."""
    import secrets

    from cluster_helpers import redis_client

    client = redis_client()
    prefix = f"gdt{secrets.token_hex(4)}:"
    q = MatchQueue(RedisBackend(client, prefix))
    q.lock_wait_s = 0.1
    try:
        other = client.lock(f"{prefix}mm:lock", timeout=5)
        assert other.acquire(blocking=False)
        with pytest.raises(MatchError) as e:
            q.join([7], [0.0], ["u7"], None, 0.0)
        assert (e.value.status, e.value.code) == (503, "temporarily_unavailable")
        assert q.b.all("tickets") == {} and q.b.all("who") == {}  # nothing changed
        other.release()
        assert q.join([7], [0.0], ["u7"], None, 0.0)[1]
        assert q.counts()["people"] == 1
    finally:
        for key in client.scan_iter(f"{prefix}*"):
            client.delete(key)


# -- Redis: one queue for every process ------------------------------------------------------------

def test_redis_queue_shared_and_no_double_match() -> None:
    """Two queues on one Redis prefix (two processes' worth): 8 threads, 4 per queue, join 160
    people and run rounds at once; every person ends in one place only."""
    import secrets

    from cluster_helpers import redis_client

    client = redis_client()
    prefix = f"gdt{secrets.token_hex(4)}:"
    queues = [MatchQueue(RedisBackend(client, prefix)) for _ in range(2)]
    try:
        state, created = queues[0].join([1], [0.0], ["u1"], None, 0.0)
        again, created2 = queues[1].join([1], [0.0], ["u1"], None, 0.0)
        assert created and not created2 and again["ticket"]["id"] == state["ticket"]["id"]
        queues[1].leave(1, 0.0)
        assert queues[0].state(1, 0.0) == {"status": "idle"}
        barrier = threading.Barrier(8)

        def worker(k: int) -> None:
            q = queues[k % 2]
            barrier.wait()
            for uid in range(k, 160, 8):
                q.join([uid], [float(uid % 40)], [f"u{uid}"], None, 0.0)
                q.tick(mm.SETTLE_QUIET_S)  # tickets joined at 0 s: a still queue, tables formed

        threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        queues[0].tick(mm.SETTLE_QUIET_S)
        props = queues[1].b.all("props")
        seated = [u for p in props.values() for u in p["seats"] if u is not None]
        waiting = [u for t in queues[1].b.all("tickets").values() for u in t["members"]]
        assert len(seated) == len(set(seated)) and len(props) >= 30
        assert sorted(seated + waiting) == list(range(160))
    finally:
        for key in client.scan_iter(f"{prefix}*"):
            client.delete(key)


def test_redis_note_join_keeps_the_settling_hint() -> None:
    """RedisBackend.note_join (one Lua call): the latest join's time always; the oldest bound lowered
    only when set and later than the join."""
    import secrets

    from cluster_helpers import redis_client

    from guandan.server.matchmaking_store import META, NEWEST, OLDEST

    client = redis_client()
    prefix = f"gdt{secrets.token_hex(4)}:"
    b = RedisBackend(client, prefix)
    try:
        b.note_join(5.0)
        assert (b.get(META, NEWEST), b.get(META, OLDEST)) == ({"t": 5.0}, None)  # no bound yet: none made
        b.put(META, OLDEST, {"t": 4.0})
        b.note_join(6.5)
        assert (b.get(META, NEWEST), b.get(META, OLDEST)) == ({"t": 6.5}, {"t": 4.0})
        b.note_join(3.25)  # timed before it got the lock: lowers the bound
        assert (b.get(META, NEWEST), b.get(META, OLDEST)) == ({"t": 3.25}, {"t": 3.25})
        assert b.count(META) == 2 and b.count("tickets") == 0
    finally:
        for key in client.scan_iter(f"{prefix}*"):
            client.delete(key)


def test_two_server_processes_share_one_queue() -> None:
    """Two ``guandan serve --redis`` processes: two people join on each; all four are matched in one
    ready check, accept through either process and are seated in one started room."""
    import httpx
    from cluster_helpers import cluster, guest

    with cluster(2) as (_db, nodes):
        people = []
        for i in range(4):
            url = nodes[i % 2].url
            token, name = guest(url)
            people.append((url, token, name))
            r = httpx.post(f"{url}/api/match/join", json={}, cookies={"gd_session": token}, timeout=30)
            assert r.status_code == 201, r.text
        again = httpx.post(f"{nodes[1].url}/api/match/join", json={}, cookies={"gd_session": people[0][1]}, timeout=30)
        assert again.status_code == 200  # joined on node 0: the same entry on node 1

        def state(url: str, token: str) -> dict[str, Any]:
            return httpx.get(f"{url}/api/match", cookies={"gd_session": token}, timeout=30).json()

        end = time.monotonic() + 20
        while any(state(u, t)["status"] != "ready_check" for u, t, _ in people) and time.monotonic() < end:
            time.sleep(0.1)
        checks = {state(u, t)["ready_check"]["id"] for u, t, _ in people}
        assert len(checks) == 1
        for i, (_u, t, _n) in enumerate(people):  # answer through the other process
            r = httpx.post(f"{nodes[(i + 1) % 2].url}/api/match/ready", json={}, cookies={"gd_session": t}, timeout=30)
            assert r.status_code == 200, r.text
        end = time.monotonic() + 30
        while any(state(u, t)["status"] != "seated" for u, t, _ in people) and time.monotonic() < end:
            time.sleep(0.1)
        rooms = {state(u, t).get("room") for u, t, _ in people}
        assert len(rooms) == 1 and None not in rooms
        room = httpx.get(f"{nodes[0].url}/api/rooms/{rooms.pop()}", timeout=30).json()["room"]
        assert room["status"] == "playing"
        assert sorted(s["user"] for s in room["seats"]) == sorted(n for _, _, n in people)


def test_every_error_code_has_words_in_both_languages() -> None:
    """Each code the matchmaking API answers (``MatchError(..., "code")`` and ``error(..., "code")`` in
    its modules) is translated in both languages (the UI shows the code's words, never the server's text)."""
    import re
    from pathlib import Path

    from test_ui_static import i18n_tables

    server = Path(mm.__file__).parent
    codes: set[str] = set()
    for name in ("api_matchmaking.py", "matchmaking_store.py"):
        text = (server / name).read_text(encoding="utf-8")
        codes |= set(re.findall(r'(?:MatchError|error)\(\s*\d+,\s*(?:f?"[^"]*"\s*)+,\s*"([a-z_]+)"', text))
    assert {"partner_busy", "not_queued", "no_ready_check", "bad_bot_level", "not_friends", "no_user",
            "seated_in_game", "partner_in_game", "decline_cooldown", "partner_cooldown",
            "temporarily_unavailable"} <= codes
    tables = i18n_tables()
    for lang in ("en", "zh"):
        assert not sorted(f"err_{c}" for c in codes if f"err_{c}" not in tables[lang]), lang


def test_person_who_started_a_game_while_queued_is_not_seated_twice(app: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Attack (branch attack): joining checks for a game under way, but a game started *after* joining (a quick
    game from another tab) was not looked at when the match was seated: one guest ended up in two live games
    against bots (the quick game and the matched bot-fill room), past the one-game-against-bots limit of
    :mod:`guandan.server.botgames`. Now a person seated in a live game when the match is seated leaves the
    queue (no decline counted); nobody is seated twice."""
    from sqlalchemy import select

    from guandan.server import models

    monkeypatch.setattr(mm, "BOT_FILL_AFTER_S", 0.5)
    a = person(app, "twotabs")
    assert a.post("/api/match/join", json={"bot_level": DIFFICULTIES[0]}).status_code == 201
    quick = a.post("/api/quick", json={})
    assert quick.status_code == 200, quick.text
    wait_status(a, "ready_check")
    a.post("/api/match/ready", json={})
    wait_status(a, "idle")
    time.sleep(0.6)  # a few more rounds of the loop: nothing comes back
    assert a.get("/api/match").json()["status"] == "idle"
    with app.state.matchmaking.session_factory() as db:
        uid = db.scalar(select(models.User.id).where(models.User.name == "twotabs"))
        live = db.scalars(select(models.Room.id).join(models.RoomSeat, models.RoomSeat.room_id == models.Room.id)
                          .where(models.RoomSeat.user_id == uid, models.Room.status == "playing")).all()
    assert list(live) == [quick.json()["room"]["id"]]
    assert app.state.matchmaking.queue.cooldown_left(uid, time.time()) == 0.0


def test_bot_fill_counts_against_the_address_limit(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Attack (branch attack): bot fill started games with bots outside :mod:`guandan.server.botgames`: with 120
    guests an hour per address, one address could run 120 live games against bots through the queue, not 4.
    With ``bot_games_per_address=1`` here: an address whose one game with bots is live is refused bot fill
    (429 ``too_many_quick_games``, ``max`` 1) on joining and on choosing a level; a game with bots started from
    the address after joining keeps the bot-fill match from being seated (its people leave the queue, no decline
    counted); a bot-fill match that is seated counts, so the next quick game from the address is refused."""
    monkeypatch.setattr(mm, "BOT_FILL_AFTER_S", 0.5)
    application = create_app(Settings(db_url=f"sqlite:///{tmp_path / 'gd.db'}", bot_delay_s=0.0,
                                      bot_games_per_address=1))
    with TestClient(application):
        a, b = person(application, "addr_a"), person(application, "addr_b")
        # bot fill seated: the address now has its one game with bots
        assert a.post("/api/match/join", json={"bot_level": DIFFICULTIES[0]}).status_code == 201
        wait_status(a, "ready_check")
        a.post("/api/match/ready", json={})
        wait_status(a, "seated")
        r = b.post("/api/quick", json={})
        assert (r.status_code, r.json()["code"], r.json()["params"]) == (429, "too_many_quick_games", {"max": 1})
        r = b.post("/api/match/join", json={"bot_level": DIFFICULTIES[0]})
        assert (r.status_code, r.json()["code"], r.json()["params"]) == (429, "too_many_quick_games", {"max": 1})
        assert b.post("/api/match/join", json={}).status_code == 201  # without bot fill: allowed
        r = b.post("/api/match/bots", json={"bot_level": DIFFICULTIES[0]})
        assert (r.status_code, r.json()["code"]) == (429, "too_many_quick_games")
        assert b.post("/api/match/leave", json={}).json() == {"ok": True, "left": True}


def test_game_with_bots_started_after_joining_stops_the_bot_fill(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The seat-time half of the address limit (see above): the address's one game with bots began after the
    bot-fill ticket was made, so the match is not seated and its person leaves the queue."""
    monkeypatch.setattr(mm, "BOT_FILL_AFTER_S", 1.0)
    application = create_app(Settings(db_url=f"sqlite:///{tmp_path / 'gd.db'}", bot_delay_s=0.0,
                                      bot_games_per_address=1))
    with TestClient(application):
        a, b = person(application, "late_a"), person(application, "late_b")
        assert a.post("/api/match/join", json={"bot_level": DIFFICULTIES[0]}).status_code == 201
        assert b.post("/api/quick", json={}).status_code == 200
        wait_status(a, "ready_check")
        a.post("/api/match/ready", json={})
        wait_status(a, "idle")
        rooms = [r for r in a.get("/api/rooms").json()["rooms"] if r["status"] == "playing"]
        assert [r["owner"] for r in rooms] == ["late_b"]
