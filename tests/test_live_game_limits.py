"""Live games with bots are limited however they start (issue 26, item 7; guandan.server.botgames).

Quick games were limited to one live game per account and 4 per address; a room started with bot
seats, "play again" (再来一局) and a board of the daily challenge went around those limits (one
guest could run any number of games with bots through them). Every one of those paths now gives
the same answers as the quick game: 409 ``quick_game_running`` with the running room (a game
against bots alone), 429 ``too_many_quick_games`` with ``max`` (every game with bots). A game of
four people is not limited.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("fastapi")

from fastapi.testclient import TestClient  # noqa: E402

from guandan.server.app import create_app  # noqa: E402
from guandan.server.settings import Settings  # noqa: E402


@pytest.fixture
def make_client(tmp_path: Any) -> Iterator[Any]:
    """``make_client(**settings)``: a TestClient (address ``testclient``) of a fresh server; bots
    wait 5 s before they act, so no game ends during a test."""
    clients: list[TestClient] = []

    def make(**kw: Any) -> TestClient:
        settings = {"challenge_boards": 2, "challenge_start_grace_s": 0.0, **kw}
        c = TestClient(create_app(Settings(db_url=f"sqlite:///{tmp_path / 'limits.db'}", bot_delay_s=5.0, **settings)))
        c.__enter__()
        clients.append(c)
        return c

    yield make
    for c in clients:
        c.__exit__(None, None, None)


def _guest(c: TestClient) -> str:
    """A new guest session in ``c`` (its cookie replaces the previous one); the session token."""
    c.cookies.clear()
    r = c.post("/api/guest", json={})
    assert r.status_code == 200, r.text
    return str(c.cookies.get("gd_session"))


def _as(c: TestClient, token: str) -> None:
    c.cookies.clear()
    c.cookies.set("gd_session", token)


def _bots_room(c: TestClient) -> str:
    """A waiting room of the current account (seat 0) with three ``normal`` bots."""
    r = c.post("/api/rooms", json={"preset": "official"})
    assert r.status_code == 200, r.text
    room = r.json()["room"]["id"]
    assert c.post(f"/api/rooms/{room}/bots", json={"bot": "normal"}).status_code == 200
    return str(room)


def _status(c: TestClient, room: str) -> str:
    return str(c.get(f"/api/rooms/{room}").json()["room"]["status"])


def test_starting_a_room_with_bots_is_refused_while_a_game_against_bots_runs(make_client):
    """Before: the second game started (200). Now 409 ``quick_game_running`` naming the quick game,
    and the room stays waiting; once the quick game is abandoned the same room starts."""
    c = make_client()
    _guest(c)
    quick = c.post("/api/quick", json={"difficulty": "easy"}).json()["room"]["id"]
    room = _bots_room(c)
    r = c.post(f"/api/rooms/{room}/start", json={})
    assert r.status_code == 409, r.text
    assert r.json()["code"] == "quick_game_running" and r.json()["params"] == {"room": quick}
    assert _status(c, room) == "waiting"
    assert c.post(f"/api/rooms/{quick}/abandon", json={}).status_code == 200
    r = c.post(f"/api/rooms/{room}/start", json={})
    assert r.status_code == 200, r.text
    assert r.json()["room"]["status"] == "playing"
    # and now the quick game is the one refused, naming the started room
    r = c.post("/api/quick", json={})
    assert r.status_code == 409 and r.json()["params"] == {"room": room}


def test_rooms_started_with_bots_count_toward_the_address_limit(make_client):
    """``bot_games_per_address`` 2: two guests behind one address start a room with bots and a
    quick game; a third guest's room start is 429 with ``max`` 2, and so is its quick game."""
    c = make_client(bot_games_per_address=2)
    _guest(c)
    assert c.post(f"/api/rooms/{_bots_room(c)}/start", json={}).status_code == 200
    _guest(c)
    assert c.post("/api/quick", json={}).status_code == 200
    _guest(c)
    room = _bots_room(c)
    r = c.post(f"/api/rooms/{room}/start", json={})
    assert r.status_code == 429, r.text
    assert r.json()["code"] == "too_many_quick_games" and r.json()["params"] == {"max": 2}
    assert _status(c, room) == "waiting"
    r = c.post("/api/quick", json={})
    assert r.status_code == 429 and r.json()["params"] == {"max": 2}


def test_play_again_is_limited_like_a_quick_game(make_client):
    """A finished (abandoned) game with bots, then a quick game running: "play again" on the
    finished one is 409 naming the quick game (before: a second live game, 200). With the quick
    game abandoned, play again makes and starts the new room."""
    c = make_client()
    _guest(c)
    first = c.post("/api/quick", json={}).json()["room"]["id"]
    assert c.post(f"/api/rooms/{first}/abandon", json={}).json()["room"]["status"] == "finished"
    second = c.post("/api/quick", json={}).json()["room"]["id"]
    r = c.post(f"/api/rooms/{first}/again", json={})
    assert r.status_code == 409, r.text
    assert r.json()["code"] == "quick_game_running" and r.json()["params"] == {"room": second}
    assert c.post(f"/api/rooms/{second}/abandon", json={}).status_code == 200
    r = c.post(f"/api/rooms/{first}/again", json={})
    assert r.status_code == 200, r.text
    new = r.json()["room"]
    assert new["id"] not in (first, second) and new["status"] == "playing"


def test_play_again_counts_toward_the_address_limit(make_client):
    """``bot_games_per_address`` 1: guest A's game is over; guest B (same address) runs a quick
    game; A's play again is 429 ``max`` 1."""
    c = make_client(bot_games_per_address=1)
    a = _guest(c)
    first = c.post("/api/quick", json={}).json()["room"]["id"]
    assert c.post(f"/api/rooms/{first}/abandon", json={}).status_code == 200
    _guest(c)
    assert c.post("/api/quick", json={}).status_code == 200
    _as(c, a)
    r = c.post(f"/api/rooms/{first}/again", json={})
    assert r.status_code == 429 and r.json()["code"] == "too_many_quick_games" and r.json()["params"] == {"max": 1}


def test_a_challenge_board_is_limited_like_a_quick_game(make_client):
    """With a quick game running, starting board 1 is 409 naming the quick game and the board's
    room does not start; after abandoning the quick game the board starts (its room playing),
    and asking for it again goes back to it (no limit on going back to one's own board)."""
    c = make_client()
    _guest(c)
    quick = c.post("/api/quick", json={}).json()["room"]["id"]
    r = c.post("/api/challenge/boards/1/play", json={})
    assert r.status_code == 409, r.text
    assert r.json()["code"] == "quick_game_running" and r.json()["params"] == {"room": quick}
    assert c.post(f"/api/rooms/{quick}/abandon", json={}).status_code == 200
    r = c.post("/api/challenge/boards/1/play", json={})
    assert r.status_code == 200, r.text
    board_room = r.json()["room"]
    assert _status(c, board_room) == "playing"
    back = c.post("/api/challenge/boards/1/play", json={})
    assert back.status_code == 200 and back.json()["room"] == board_room and back.json()["created"] is False
    # a second board while the first runs: one game against bots at a time
    r = c.post("/api/challenge/boards/2/play", json={})
    assert r.status_code == 409 and r.json()["params"] == {"room": board_room}


def test_a_challenge_board_counts_toward_the_address_limit(make_client):
    """``bot_games_per_address`` 1: guest B's quick game runs; guest A's board is 429."""
    c = make_client(bot_games_per_address=1)
    _guest(c)
    assert c.post("/api/quick", json={}).status_code == 200
    _guest(c)
    r = c.post("/api/challenge/boards/1/play", json={})
    assert r.status_code == 429 and r.json()["code"] == "too_many_quick_games" and r.json()["params"] == {"max": 1}


def test_a_game_of_people_only_is_not_limited(make_client):
    """Four guests behind one address fill a room and start it while the owner's quick game runs
    and the address is at its limit (1): 200, no bots, no limit."""
    c = make_client(bot_games_per_address=1)
    owner = _guest(c)
    assert c.post("/api/quick", json={}).status_code == 200
    room = c.post("/api/rooms", json={"preset": "official"}).json()["room"]["id"]
    for seat in (1, 2, 3):
        _guest(c)
        assert c.post(f"/api/rooms/{room}/seat", json={"seat": seat}).status_code == 200
    _as(c, owner)
    r = c.post(f"/api/rooms/{room}/start", json={})
    assert r.status_code == 200, r.text
    assert r.json()["room"]["status"] == "playing"


def test_a_room_with_a_friend_and_bots_counts_per_address_only(make_client):
    """Ann's game against bots runs; her room with Ben and two bots starts (the per-account limit
    is for games against bots alone) and counts toward the address: with ``bot_games_per_address``
    2 both run, and a third guest's quick game is 429 ``max`` 2."""
    c = make_client(bot_games_per_address=2)
    ann = _guest(c)
    assert c.post("/api/quick", json={}).status_code == 200
    room = c.post("/api/rooms", json={"preset": "official"}).json()["room"]["id"]
    _guest(c)
    assert c.post(f"/api/rooms/{room}/seat", json={"seat": 1}).status_code == 200
    _as(c, ann)
    assert c.post(f"/api/rooms/{room}/bots", json={"bot": "normal"}).status_code == 200
    r = c.post(f"/api/rooms/{room}/start", json={})
    assert r.status_code == 200, r.text
    _guest(c)
    r = c.post("/api/quick", json={})
    assert r.status_code == 429 and r.json()["params"] == {"max": 2}


def test_no_limit_with_zero(make_client):
    """``bot_games_per_address`` 0 (``guandan serve --bot-games-per-address 0``, load tests): six
    guests behind one address run six games with bots."""
    c = make_client(bot_games_per_address=0)
    for _ in range(6):
        _guest(c)
        assert c.post(f"/api/rooms/{_bots_room(c)}/start", json={}).status_code == 200


def test_serve_option_bot_games_per_address():
    """``guandan serve --bot-games-per-address`` is offered and refuses a negative value (exit 2)."""
    from typer.testing import CliRunner

    from guandan.cli import app

    runner = CliRunner()
    res = runner.invoke(app, ["serve", "--help"])
    assert res.exit_code == 0 and "--bot-games-per-address" in res.output
    res = runner.invoke(app, ["serve", "--bot-games-per-address", "-1", "--port", "0"])
    assert res.exit_code == 2 and "--bot-games-per-address" in res.output


def test_a_room_of_bots_only_counts_for_its_owner(make_client):
    """Attack (branch attack): the owner leaves their own seat and fills the four seats with bots: the game
    had no person in it, so the per-account check (rooms *seated* by the account) never saw it and one
    guest started any number of bot-only games (three in a row, 200 each, with the address limit off). A
    game with no person is now the owner's game against bots: the second start is 409
    ``quick_game_running`` naming the first, and so is a quick game."""
    c = make_client(bot_games_per_address=0)
    _guest(c)
    rooms = []
    for _ in range(2):
        r = c.post("/api/rooms", json={"preset": "official"})
        room = r.json()["room"]["id"]
        assert c.post(f"/api/rooms/{room}/leave", json={}).json()["left"] == "seat"
        assert c.post(f"/api/rooms/{room}/bots", json={"bot": "easy"}).status_code == 200
        rooms.append(room)
    assert c.post(f"/api/rooms/{rooms[0]}/start", json={}).status_code == 200
    r = c.post(f"/api/rooms/{rooms[1]}/start", json={})
    assert (r.status_code, r.json()["code"], r.json()["params"]) == (409, "quick_game_running", {"room": rooms[0]})
    assert _status(c, rooms[1]) == "waiting"
    r = c.post("/api/quick", json={})
    assert (r.status_code, r.json()["params"]) == (409, {"room": rooms[0]})


def test_a_room_started_for_another_lone_person_counts_for_that_person(make_client):
    """Attack (branch attack): B runs a quick game; A makes a room, leaves the seat, B sits, A adds bots
    and starts: the check looked at A (who has no game) and B got a second game against bots. The one
    person seated is now the one checked: 409 ``quick_game_running`` naming B's quick game."""
    c = make_client(bot_games_per_address=0)
    b = _guest(c)
    quick = c.post("/api/quick", json={}).json()["room"]["id"]
    a = _guest(c)
    room = c.post("/api/rooms", json={"preset": "official"}).json()["room"]["id"]
    assert c.post(f"/api/rooms/{room}/leave", json={}).status_code == 200
    _as(c, b)
    assert c.post(f"/api/rooms/{room}/seat", json={"seat": 1}).status_code == 200
    _as(c, a)
    assert c.post(f"/api/rooms/{room}/bots", json={"bot": "easy"}).status_code == 200
    r = c.post(f"/api/rooms/{room}/start", json={})
    assert (r.status_code, r.json()["code"], r.json()["params"]) == (409, "quick_game_running", {"room": quick})
    assert _status(c, room) == "waiting"
