"""Leaving a game under way (issue 25, item 9; guandan.server.table.leaving, POST /api/rooms/{id}/leave).

* alone with bots: the game ends unfinished (``left: "ended"``), is stored with no winner and rates
  nobody (rating and games played unchanged), and the history shows it abandoned;
* with another person: the bot plays the leaver's seat (``auto_reason`` ``left``, notice
  ``auto_on`` with reason ``left``), the game goes on; a reconnect does not end it, 取消托管 does
  (the leaver may rejoin); when the last person still playing leaves too, the game ends;
* the decision itself (:func:`leave_outcome`) over hand-made seatings;
* cluster mode: a leave sent to a process that does not own the table is done by the owner.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("fastapi")

from fastapi.testclient import TestClient

from guandan.server.app import create_app
from guandan.server.settings import Settings
from guandan.server.table.leaving import BOT, END, LEFT, leave_outcome

# -- the decision --------------------------------------------------------------------------------


def test_leave_outcome_ends_the_game_when_nobody_else_plays() -> None:
    # seat 0 a person, three bots: nobody else -> the game ends
    assert leave_outcome([7, None, None, None], [None] * 4, 0) == END
    # an opponent person still there -> the bot takes the seat
    assert leave_outcome([7, 8, None, None], [None] * 4, 0) == BOT
    # the partner (seat 2) is a person -> the bot takes the seat
    assert leave_outcome([7, None, 8, None], [None] * 4, 0) == BOT
    # the other person left before: nobody still plays -> the game ends
    assert leave_outcome([7, 8, None, None], [None, LEFT, None, None], 0) == END
    # the other person is away (tab closed) or in 托管: still a player at the table
    assert leave_outcome([7, 8, None, None], [None, "away", None, None], 0) == BOT
    assert leave_outcome([7, 8, None, None], [None, "player", None, None], 0) == BOT


def test_leave_outcome_rejects_bad_seats() -> None:
    with pytest.raises(ValueError):
        leave_outcome([7, None, None, None], [None] * 4, 4)
    with pytest.raises(ValueError):
        leave_outcome([7, None, None], [None] * 4, 0)


# -- through the API -------------------------------------------------------------------------------


@pytest.fixture
def client(tmp_path: Any) -> Iterator[TestClient]:
    # bots wait 5 s: no bot move interferes with what is checked (nobody needs to act here)
    app = create_app(Settings(db_url=f"sqlite:///{tmp_path / 'leave.db'}", bot_delay_s=5.0, idle_close_s=0))
    with TestClient(app) as c:
        yield c


def _guest(c: TestClient) -> dict[str, str]:
    c.cookies.clear()  # a guest made with a session cookie would end that session
    r = c.post("/api/guest", json={})
    assert r.status_code == 200, r.text
    return {"cookie": f"gd_session={r.cookies['gd_session']}"}


def _post(c: TestClient, path: str, who: dict[str, str], body: dict[str, Any] | None = None) -> Any:
    c.cookies.clear()
    return c.post(path, json=body or {}, headers=who)


def _me(c: TestClient, who: dict[str, str]) -> dict[str, Any]:
    c.cookies.clear()
    return c.get("/api/me", headers=who).json()["user"]


def test_leaving_a_quick_game_ends_it_unrated(client: TestClient) -> None:
    ann = _guest(client)
    before = _me(client, ann)
    room = _post(client, "/api/quick", ann, {"difficulty": "easy"}).json()["room"]["id"]
    r = _post(client, f"/api/rooms/{room}/leave", ann)
    assert r.status_code == 200, r.text
    assert r.json()["left"] == "ended" and r.json()["room"]["status"] == "finished"
    after = _me(client, ann)
    assert (after["rating"], after["games_played"], after["games_won"]) == (
        before["rating"], before["games_played"], before["games_won"])
    client.cookies.clear()
    games = client.get("/api/history", headers=ann).json()["games"]
    assert len(games) == 1 and games[0]["room_id"] == room
    assert games[0]["winner_team"] is None and games[0]["result"] == "unfinished"  # shown "已中止 / Abandoned"
    # leaving again: no game runs
    again = _post(client, f"/api/rooms/{room}/leave", ann)
    assert again.status_code == 409 and again.json()["code"] == "not_playing"
    # and a new quick game may start (the limit of one live quick game is free again)
    assert _post(client, "/api/quick", ann, {"difficulty": "easy"}).status_code == 200


def _two_people_game(c: TestClient) -> tuple[str, dict[str, str], dict[str, str]]:
    ann, ben = _guest(c), _guest(c)
    made = _post(c, "/api/rooms", ann, {"preset": "official", "clocks": "off"})
    assert made.status_code == 200, made.text
    room = made.json()["room"]["id"]
    assert _post(c, f"/api/rooms/{room}/seat", ben, {"seat": 1}).status_code == 200
    assert _post(c, f"/api/rooms/{room}/bots", ann, {"bot": "easy"}).status_code == 200
    assert _post(c, f"/api/rooms/{room}/start", ann).json()["room"]["status"] == "playing"
    return room, ann, ben


def _state(ws: Any) -> dict[str, Any]:
    while True:
        f = ws.receive_json()
        if f.get("type") == "state":
            return f


def test_leaving_with_another_person_hands_the_seat_to_the_bot_and_the_leaver_may_return(client: TestClient) -> None:
    room, ann, ben = _two_people_game(client)
    client.cookies.clear()
    with client.websocket_connect(f"/ws/rooms/{room}", headers=ann) as wa:
        assert _state(wa)["auto"] == [False] * 4
        r = _post(client, f"/api/rooms/{room}/leave", ben)
        assert r.status_code == 200, r.text
        assert r.json()["left"] == "bot" and r.json()["room"]["status"] == "playing"
        # ann hears it: notice auto_on (reason left), then a state with seat 1 left to the bot
        seen = []
        while True:
            f = wa.receive_json()
            seen.append(f)
            if f.get("type") == "state" and f["auto"][1]:
                break
        notice = [f for f in seen if f.get("type") == "notice" and f["code"] == "auto_on"]
        assert notice and notice[0]["params"] == {"seat": 1, "reason": "left"}
        assert f["auto_reason"] == [None, "left", None, None] and f["auto"] == [False, True, False, False]
        # ben comes back: the seat stays the bot's on reconnect (unlike an absence) ...
        client.cookies.clear()
        with client.websocket_connect(f"/ws/rooms/{room}", headers=ben) as wb:
            first = _state(wb)
            assert first["seat"] == 1 and first["auto_reason"][1] == "left"
            # ... until ben takes it back with 取消托管
            wb.send_json({"type": "auto", "on": False})
            while True:
                s = _state(wb)
                if not s["auto"][1]:
                    break
            assert s["auto_reason"] == [None] * 4
    # the game still runs
    client.cookies.clear()
    assert client.get(f"/api/rooms/{room}").json()["room"]["status"] == "playing"


def test_the_last_person_leaving_after_the_other_left_ends_the_game(client: TestClient) -> None:
    room, ann, ben = _two_people_game(client)
    assert _post(client, f"/api/rooms/{room}/leave", ben).json()["left"] == "bot"
    r = _post(client, f"/api/rooms/{room}/leave", ann)
    assert r.json()["left"] == "ended" and r.json()["room"]["status"] == "finished"
    client.cookies.clear()
    games = client.get("/api/history", headers=ben).json()["games"]
    assert [g["winner_team"] for g in games] == [None]


def test_leave_needs_a_seat(client: TestClient) -> None:
    room, _ann, _ben = _two_people_game(client)
    cat = _guest(client)
    r = _post(client, f"/api/rooms/{room}/leave", cat)
    assert r.status_code == 409 and r.json()["code"] == "no_seat"


def test_leaving_a_waiting_room_gives_the_seat_up(client: TestClient) -> None:
    ann, ben = _guest(client), _guest(client)
    room = _post(client, "/api/rooms", ann, {"preset": "official"}).json()["room"]["id"]
    assert _post(client, f"/api/rooms/{room}/seat", ben, {"seat": 2}).status_code == 200
    r = _post(client, f"/api/rooms/{room}/leave", ben).json()
    assert r["left"] == "seat" and r["room"]["seats"][2]["kind"] == "empty" and r["room"]["status"] == "waiting"


# -- cluster mode ------------------------------------------------------------------------------------


def test_leave_through_a_process_that_does_not_own_the_table() -> None:
    from cluster_helpers import Client, api, cluster, guest

    with cluster(2) as (_db, nodes):
        a, b = (n.url for n in nodes)
        ann, _ = guest(a)
        ben, _ = guest(b)
        room = api(a, "/api/rooms", ann, {"preset": "official", "clocks": "off"})["room"]["id"]
        api(b, f"/api/rooms/{room}/seat", ben, {"seat": 1})
        api(a, f"/api/rooms/{room}/bots", ann, {"bot": "easy"})
        api(a, f"/api/rooms/{room}/start", ann)
        watcher = Client(a, room, ann, "ann on A")
        watcher.wait(lambda f: f.get("type") == "state" and f["view"] is not None)
        # ben leaves through B: the owner (whichever process) hands seat 1 to the bot
        assert api(b, f"/api/rooms/{room}/leave", ben)["left"] == "bot"
        state = watcher.wait(lambda f: f.get("type") == "state" and f["auto_reason"][1] == "left")
        assert state["auto"][1] is True
        # ann leaves through B too: nobody else plays, the game ends
        out = api(b, f"/api/rooms/{room}/leave", ann)
        assert out["left"] == "ended" and out["room"]["status"] == "finished"
        over = watcher.wait(lambda f: f.get("type") == "game_over", timeout_s=30)
        assert over["winner_team"] is None
        watcher.close()
