"""Server accounts API (server contract, "HTTP API"): register, login, guests, sessions, profiles,
the leaderboard, history, stored games and presets, on SQLite and on PostgreSQL.

Uses the database fixtures of ``test_server_storage.py`` (PostgreSQL set-up and
``GUANDAN_SKIP_POSTGRES`` are described there).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import select
from test_server_storage import (
    db_url,  # noqa: F401 (fixture)
    expected_anhui_points,
    pg_session_url,  # noqa: F401 (fixture)
    played_record,
    synthetic_record,
)

from guandan.core.rules import PRESET_NAMES
from guandan.core.scoring import anhui_title
from guandan.server import api_accounts, auth
from guandan.server import db as gdb
from guandan.server.models import Room, RoomSeat, User, UserSession
from guandan.server.settings import Settings

USER_KEYS = {"id", "name", "is_guest", "rating", "games_played", "games_won", "anhui_points", "anhui_title"}


pytestmark = pytest.mark.usefixtures("fast_hashing")  # tests/conftest.py


@pytest.fixture
def app(db_url: str) -> Iterator[FastAPI]:  # noqa: F811
    application = FastAPI()
    api_accounts.setup_storage(application, Settings(db_url=db_url))
    yield application
    application.state.engine.dispose()


@pytest.fixture
def client(app: FastAPI) -> Iterator[TestClient]:
    with TestClient(app) as c:
        yield c


def new_client(app: FastAPI) -> TestClient:
    return TestClient(app)


def register(client: TestClient, name: str, password: str = "secret-pw") -> dict[str, Any]:
    r = client.post("/api/register", json={"name": name, "password": password})
    assert r.status_code == 200, r.text
    return r.json()["user"]


def assert_error(r: Any, status: int, contains: str = "") -> str:
    assert r.status_code == status, r.text
    body = r.json()
    assert set(body) == {"error", "code", "params"} and isinstance(body["error"], str)
    assert "\n" not in body["error"] and body["error"]
    assert contains.lower() in body["error"].lower(), body["error"]
    # every error carries a stable code for the UI to translate (docs/table-contract.md section 14)
    assert isinstance(body["code"], str) and body["code"], body
    assert isinstance(body["params"], dict)
    return body["error"]


def set_cookies(r: Any) -> list[str]:
    return r.headers.get_list("set-cookie")


# -- register, login, logout, me -------------------------------------------------------------------


def test_register_me_logout_login(client: TestClient, app: FastAPI) -> None:
    r = client.post("/api/register", json={"name": "Alice_1", "password": "correct horse"})
    assert r.status_code == 200, r.text
    user = r.json()["user"]
    assert set(user) == USER_KEYS
    assert user["name"] == "Alice_1" and user["is_guest"] is False
    # A new player: display rating mu - 3*sigma = 25 - 3*25/3 = 0; 0 points is 秀才 (docs/rules.md 2.1).
    assert (user["rating"], user["games_played"], user["games_won"], user["anhui_points"]) == (0.0, 0, 0, 0)
    assert user["anhui_title"] == "秀才"

    (cookie,) = set_cookies(r)
    flags = [p.strip().lower() for p in cookie.split(";")]
    assert flags[0].startswith("gd_session=") and len(flags[0]) > len("gd_session=") + 40
    assert "httponly" in flags and "samesite=lax" in flags and "path=/" in flags
    assert "secure" not in flags  # plain http in the test
    assert any(f.startswith("max-age=") and int(f.split("=")[1]) == 30 * 86400 for f in flags)

    assert client.get("/api/me").json() == {"user": user}

    # The password is stored hashed with argon2id, never in plain text.
    with gdb.session_scope(app.state.session_factory) as db:
        stored = db.scalars(select(User).where(User.name == "Alice_1")).one()
        assert stored.password_hash.startswith("$argon2id$")
        assert "correct horse" not in stored.password_hash
        assert db.scalars(select(UserSession)).one().user_id == stored.id

    r = client.post("/api/logout", json={})
    assert r.status_code == 200 and r.json() == {"ok": True}
    assert any(c.startswith("gd_session=") for c in set_cookies(r))
    assert_error(client.get("/api/me"), 401, "log in")
    with gdb.session_scope(app.state.session_factory) as db:
        assert db.scalars(select(UserSession)).all() == []

    # Login with the name in another case.
    r = client.post("/api/login", json={"name": "alice_1", "password": "correct horse"})
    assert r.status_code == 200 and r.json()["user"]["id"] == user["id"]
    assert client.get("/api/me").json()["user"]["name"] == "Alice_1"


def test_a_stolen_cookie_dies_with_logout_and_expiry(client: TestClient, app: FastAPI) -> None:
    register(client, "bob")
    token = client.cookies.get("gd_session")
    other = new_client(app)
    other.cookies.set("gd_session", token)
    assert other.get("/api/me").json()["user"]["name"] == "bob"
    with gdb.session_scope(app.state.session_factory) as db:
        db.get(UserSession, auth.token_key(token)).expires_at = datetime.now(UTC) - timedelta(seconds=1)
    assert_error(other.get("/api/me"), 401)
    with gdb.session_scope(app.state.session_factory) as db:
        assert db.get(UserSession, auth.token_key(token)) is None  # the expired session was removed
        assert auth.user_from_token(db, token) is None
        assert auth.user_from_token(db, None) is None
        assert auth.user_from_token(db, "x" * 500) is None
    other.cookies.set("gd_session", "forged-token")
    assert_error(other.get("/api/me"), 401)


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("ab", "3 to 24 characters"),
        ("x" * 25, "3 to 24 characters"),
        ("名字", "3 to 24 characters"),
        ("a b", "letters, digits"),
        ("<script>", "letters, digits"),
        ("bob!", "letters, digits"),
        ("guest-abc", "reserved"),
        ("GUEST-xyz", "reserved"),
        (42, "must be a string"),
        (None, "must be a string"),
        ("y" * 5000, "3 to 24 characters"),
    ],
)
def test_bad_names_are_refused(client: TestClient, name: Any, message: str) -> None:
    r = client.post("/api/register", json={"name": name, "password": "long enough"})
    assert_error(r, 400, message)
    assert "gd_session" not in client.cookies


def test_good_names(client: TestClient) -> None:
    assert register(client, "掼蛋高手")["name"] == "掼蛋高手"
    assert register(client, "a-b_c")["name"] == "a-b_c"
    # Full-width letters are read as their ASCII forms (NFKC).
    assert register(client, "ＺＥＤ")["name"] == "ZED"
    assert register(client, "x" * 24)["name"] == "x" * 24


@pytest.mark.parametrize(
    ("password", "message"),
    [("", "at least 6"), ("12345", "at least 6"), ("p" * 129, "at most 128"), (123456, "must be a string")],
)
def test_bad_passwords_are_refused(client: TestClient, password: Any, message: str) -> None:
    assert_error(client.post("/api/register", json={"name": "carol", "password": password}), 400, message)


def test_duplicate_names_and_wrong_passwords(client: TestClient) -> None:
    register(client, "Dave")
    assert_error(client.post("/api/register", json={"name": "Dave", "password": "another1"}), 409, "taken")
    assert_error(client.post("/api/register", json={"name": "dAVE", "password": "another1"}), 409, "taken")
    wrong = assert_error(client.post("/api/login", json={"name": "Dave", "password": "not-it"}), 401)
    unknown = assert_error(client.post("/api/login", json={"name": "nobody", "password": "not-it"}), 401)
    assert wrong == unknown == "wrong name or password"
    assert_error(client.post("/api/login", json={"name": "Dave"}), 400, "name and a password")
    assert_error(client.post("/api/login", json={"name": ["Dave"], "password": "x"}), 400)


def test_malformed_bodies(client: TestClient) -> None:
    r = client.post("/api/register", content=b"{not json", headers={"content-type": "application/json"})
    assert_error(r, 422, "not valid JSON")
    assert_error(client.post("/api/register", json=[1, 2]), 422)
    assert_error(client.get("/api/leaderboard?limit=0"), 422, "limit")
    assert_error(client.get("/api/leaderboard?limit=x"), 422, "limit")
    assert_error(client.get("/api/games/abc"), 422)
    assert_error(client.get("/api/no-such-endpoint"), 404)
    huge = {"name": "hugo", "password": "p" * (17 * 1024)}
    assert_error(client.post("/api/register", json=huge), 413, "too large")


def test_login_rate_limit(client: TestClient) -> None:
    register(client, "erin", "right-password")
    for _ in range(10):
        assert_error(client.post("/api/login", json={"name": "erin", "password": "wrong-guess"}), 401)
    assert_error(client.post("/api/login", json={"name": "erin", "password": "right-password"}), 429, "too many")
    # Another name from the same client is not blocked yet.
    assert_error(client.post("/api/login", json={"name": "frank", "password": "whatever"}), 401)


def test_login_limiter_window() -> None:
    lim = auth.LoginLimiter(max_failures=2, window_s=60)
    lim.failed("ip", "N", now=0)
    lim.failed("ip", "n", now=1)
    with pytest.raises(auth.AuthError) as exc:
        lim.check("ip", "n", now=2)
    assert exc.value.status == 429 and "59 s" in exc.value.message
    lim.check("ip", "n", now=61)  # the first failure left the window
    lim.check("other-ip", "n", now=2)
    lim.succeeded("ip", "n")
    lim.check("ip", "n", now=2)


def test_guest(client: TestClient, app: FastAPI) -> None:
    r = client.post("/api/guest", json={})
    assert r.status_code == 200, r.text
    g = r.json()["user"]
    assert g["is_guest"] is True and g["name"].startswith("guest-") and 3 <= len(g["name"]) <= 24
    assert any("httponly" in c.lower() for c in set_cookies(r))
    assert client.get("/api/me").json()["user"] == g
    # Asking again with the cookie gives the same guest, not a new account.
    assert client.post("/api/guest", json={}).json()["user"]["id"] == g["id"]
    # Another browser gets another guest.
    other = new_client(app).post("/api/guest", json={}).json()["user"]
    assert other["id"] != g["id"] and other["name"] != g["name"]
    # A guest has no password: nobody can log in as one.
    with gdb.session_scope(app.state.session_factory) as db:
        assert db.get(User, g["id"]).password_hash is None
    assert_error(new_client(app).post("/api/login", json={"name": g["name"], "password": "anything"}), 401)


# -- profiles, leaderboard, history, games ---------------------------------------------------------


def store_game(app: FastAPI, record: str, winner: int | None, players: list[Any], room: bool = False) -> int:
    with gdb.session_scope(app.state.session_factory) as db:
        room_row = None
        if room:
            room_row = Room(id="room0001", name="r", preset="anhui", options={}, status="finished")
            room_row.seats = [RoomSeat(seat=s) for s in range(4)]
            db.add(room_row)
            db.flush()
        game = api_accounts.record_finished_game(db, room_row, record, winner, players)
        return game.id


def user_id(app: FastAPI, name: str) -> int:
    with gdb.session_scope(app.state.session_factory) as db:
        return db.scalars(select(User).where(User.name == name)).one().id


def test_profile_leaderboard_history_and_game(client: TestClient, app: FastAPI) -> None:
    names = ["ann", "ben", "cat", "dan"]
    for n in names:
        register(new_client(app), n)
    guest = new_client(app).post("/api/guest", json={}).json()["user"]
    register(new_client(app), "idle")  # no games: not on the leaderboard
    ids = {n: user_id(app, n) for n in names}

    record, winner, parsed = played_record("anhui", 11)
    players = [(ids["ann"], None), (ids["ben"], None), (ids["cat"], None), {"user_id": guest["id"], "bot": None}]
    gid = store_game(app, record, None, players, room=True)  # winner taken from the record's game_over
    points = expected_anhui_points(parsed)

    # Winners up, losers down (from the prior's display rating 0).
    win_seats = [0, 2] if winner == 0 else [1, 3]
    for seat, name in enumerate(["ann", "ben", "cat"]):
        prof = client.get(f"/api/users/{name}").json()
        u = prof["user"]
        assert (u["rating"] > 0) == (seat in win_seats) and u["rating"] != 0
        assert u["games_played"] == 1 and u["games_won"] == (1 if seat in win_seats else 0)
        assert prof["win_rate"] == (1.0 if seat in win_seats else 0.0)
        assert u["anhui_points"] == points[seat] and u["anhui_title"] == anhui_title(points[seat])
        (recent,) = prof["recent_games"]
        assert recent["id"] == gid and recent["seat"] == seat and recent["won"] == (seat in win_seats)
        assert recent["preset"] == "anhui" and recent["finished_at"].endswith("Z")
        assert set(recent) == {"id", "preset", "finished_at", "won", "seat", "levels", "deals", "damaged"}
    assert client.get("/api/users/DAN").json()["user"]["games_played"] == 0
    assert_error(client.get("/api/users/nobody"), 404, "nobody")

    board = client.get("/api/leaderboard").json()["players"]
    assert [p["name"] for p in board] == sorted(["ann", "ben", "cat"], key=lambda n: -next(
        p["rating"] for p in board if p["name"] == n))
    assert {p["name"] for p in board} == {"ann", "ben", "cat"}  # no guest, nobody without games
    assert [p["name"] for p in board][:2 if 0 in win_seats else 1] == (["ann", "cat"] if 0 in win_seats else ["ben"])
    assert all(set(p) == USER_KEYS for p in board)

    # History: mine only, newest first, with the players; 401 when logged out.
    ann = new_client(app)
    ann.post("/api/login", json={"name": "ann", "password": "secret-pw"})
    second = synthetic_record(False, [([1, 3], "1-2")], winner=1)
    gid2 = store_game(app, second, 1, [(ids["ann"], None), (None, "heuristic"), (None, "random"), (ids["dan"], None)])
    games = ann.get("/api/history").json()["games"]
    assert [g["id"] for g in games] == [gid2, gid]
    assert games[0]["players"] == [
        {"seat": 0, "name": "ann", "bot": None, "difficulty": None},
        {"seat": 1, "name": None, "bot": "heuristic", "difficulty": "normal"},
        {"seat": 2, "name": None, "bot": "random", "difficulty": "random"},
        {"seat": 3, "name": "dan", "bot": None, "difficulty": None}]
    assert games[0]["won"] is False and games[0]["winner_team"] == 1 and games[1]["room_id"] == "room0001"
    # what a history row shows (docs/table-contract.md section 12): partner, opponents, final levels
    # (the last deal_end of the record), result; seat 0's partner is seat 2, opponents 1 and 3
    row = games[0]
    assert row["partner"] == {"seat": 2, "name": None, "bot": "random", "difficulty": "random"}
    assert [o["seat"] for o in row["opponents"]] == [1, 3] and row["opponents"][1]["name"] == "dan"
    # (this synthetic record's deal_end has no levels: shown as unknown)
    assert row["levels"] is None and row["my_level"] is None and row["deals"] == 1
    assert row["result"] == "lost" and row["record_url"] == f"/api/games/{gid2}/record"
    assert row["replay_url"] == f"/replay/{gid2}"
    ends = [ev for ev in parsed if ev.get("type") == "deal_end"]
    assert games[1]["deals"] == len(ends) >= 1 and games[1]["levels"] == ends[-1]["levels"]
    assert games[1]["my_level"] == ends[-1]["levels"][0] and games[1]["their_level"] == ends[-1]["levels"][1]
    assert games[1]["result"] == ("won" if 0 in win_seats else "lost")
    # the record download is the stored JSON Lines, which guandan replay verifies
    r = client.get(f"/api/games/{gid}/record")
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/x-ndjson")
    assert r.headers["content-disposition"] == f'attachment; filename="game-{gid}.jsonl"'
    assert [json.loads(ln) for ln in r.text.splitlines()] == parsed
    from guandan.records import replay_lines

    assert replay_lines(r.text.splitlines()).complete
    assert_error(client.get("/api/games/999999/record"), 404)
    assert [g["id"] for g in ann.get(f"/api/history?before={gid2}").json()["games"]] == [gid]
    assert [g["id"] for g in ann.get("/api/history?limit=1").json()["games"]] == [gid2]
    assert_error(new_client(app).get("/api/history"), 401)

    # The stored game: the parsed record and the players.
    g = client.get(f"/api/games/{gid}").json()
    assert g["id"] == gid and g["preset"] == "anhui" and g["winner_team"] == winner
    assert g["record"] == parsed and g["record"][0]["format"] == "pyguandan-record"
    assert g["record"][-1] == {"type": "game_over", "game": 1, "winner_team": winner}
    assert [p["name"] for p in g["players"]] == ["ann", "ben", "cat", guest["name"]]
    assert g["room_id"] == "room0001" and g["finished_at"].endswith("Z")
    assert_error(client.get("/api/games/999999"), 404)
    assert_error(client.get("/api/games/0"), 404)


def test_anhui_points_and_titles_accumulate(client: TestClient, app: FastAPI) -> None:
    register(client, "pat")
    pid = user_id(app, "pat")
    bots = [(None, "random")] * 3
    # 30 deals won 1-2 by seat 0's team: 30 * 4 = 120 points (docs/rules.md 2.1: 1-2 gives +4), title 舉人 (100-399).
    store_game(app, synthetic_record(True, [([0, 2], "1-2")] * 30, 0), 0, [(pid, None), *bots])
    u = client.get("/api/me").json()["user"]
    assert (u["anhui_points"], u["anhui_title"]) == (120, "舉人")
    # Then 61 deals lost 1-4 (seat 1 first, seat 0's team -1 each): 120 - 61 = 59, back to 秀才 (0-99).
    store_game(app, synthetic_record(True, [([1, 0, 2], "1-4")] * 61, 1), 1, [(pid, None), *bots])
    u = client.get("/api/me").json()["user"]
    assert (u["anhui_points"], u["anhui_title"], u["games_played"], u["games_won"]) == (59, "秀才", 2, 1)
    # A game whose rules award no points adds none; 60 more lost points go below 0: 平民.
    store_game(app, synthetic_record(False, [([1, 3], "1-2")] * 20, 1), 1, [(pid, None), *bots])
    assert client.get("/api/me").json()["user"]["anhui_points"] == 59
    store_game(app, synthetic_record(True, [([3, 1], "1-2")] * 15, 1), 1, [(pid, None), *bots])
    u = client.get("/api/me").json()["user"]
    assert (u["anhui_points"], u["anhui_title"]) == (59 - 60, "平民")
    # An abandoned game (no game_over, no winner) rates nobody and counts no game, but its 5 finished
    # deals won 1-3 by seat 0's team count: 5 * 2 = 10 points (issue 21 item 7), and the partner at
    # seat 2 (a second account) gets the same.
    register(client, "kim")
    kid = user_id(app, "kim")
    text = synthetic_record(True, [([2, 1, 0], "1-3")] * 5, 0)
    text = "".join(line + "\n" for line in text.splitlines() if json.loads(line).get("type") != "game_over")
    store_game(app, text, None, [(pid, None), (None, "random"), (kid, None), (None, "random")])
    assert client.get("/api/users/kim").json()["user"]["anhui_points"] == 10
    u = client.get("/api/users/pat").json()["user"]
    assert (u["anhui_points"], u["games_played"], u["games_won"]) == (-1 + 10, 4, 1)


def test_record_finished_game_checks_its_input(app: FastAPI) -> None:
    record = synthetic_record(False, [([0, 2], "1-2")], 0)
    factory = app.state.session_factory
    bad: list[tuple[Any, Any, str]] = [
        ([(None, "random")] * 3, 0, "four players"),
        ([(1, "random")] + [(None, "random")] * 3, 0, "exactly one"),
        ([(None, None)] + [(None, "random")] * 3, 0, "exactly one"),
        ([object()] * 4, 0, "seat 0"),
        ([(None, "random")] * 4, 2, "winner_team"),
    ]
    for players, winner, message in bad:
        with pytest.raises(ValueError, match=message), gdb.session_scope(factory) as db:
            api_accounts.record_finished_game(db, None, record, winner, players)
    with pytest.raises(ValueError, match="not JSON"), gdb.session_scope(factory) as db:
        api_accounts.record_finished_game(db, None, "{bad", 0, [(None, "random")] * 4)
    with gdb.session_scope(factory) as db:
        game = api_accounts.record_finished_game(db, None, record, None, [(None, "random")] * 4)
        assert game.winner_team == 0 and game.preset == "official" and game.room_id is None


def test_presets(client: TestClient) -> None:
    body = client.get("/api/presets").json()
    assert set(body["presets"]) == set(PRESET_NAMES)
    # docs/rules.md section P: Anhui upgrades 6/4/2 and awards points; official 3/2/1 without points.
    assert body["presets"]["anhui"]["upgrade"] == [6, 4, 2] and body["presets"]["anhui"]["points"] is True
    assert body["presets"]["official"]["upgrade"] == [3, 2, 1] and body["presets"]["official"]["points"] is False
    assert set(body["options"]) == set(body["presets"]["official"])
    assert "le10" in body["options"]["return_rule"]
    json.dumps(body)


def test_points_ladder(client: TestClient, app: FastAPI) -> None:
    """GET /api/ladder (issue 21 item 7): most Anhui points first, equal points share a place,
    nobody with 0 points; the rating leaderboard is unchanged."""
    from guandan.server import api_ladder

    app.include_router(api_ladder.router)  # create_app includes it; this test's app has accounts only
    ids = {}
    for name in ("ann", "bob", "cat", "dan"):
        register(client, name)
        ids[name] = user_id(app, name)
    bots = [(None, "random")] * 2
    # ann and bob partners (seats 0 and 2): 30 deals won 1-2 -> +120 each (舉人)
    store_game(app, synthetic_record(True, [([0, 2], "1-2")] * 30, 0), 0,
               [(ids["ann"], None), bots[0], (ids["bob"], None), bots[1]])
    # cat at seat 1: 3 deals won 1-3 -> +6 (秀才); dan plays only an official game: 0 points, not listed
    store_game(app, synthetic_record(True, [([1, 0, 3], "1-3")] * 3, 1), 1,
               [bots[0], (ids["cat"], None), bots[1], (None, "random")])
    store_game(app, synthetic_record(False, [([0, 2], "1-2")] * 4, 0), 0,
               [(ids["dan"], None), *bots, (None, "random")])
    body = client.get("/api/ladder").json()
    rows = [(p["name"], p["anhui_points"], p["anhui_title"], p["place"]) for p in body["players"]]
    assert rows == [("ann", 120, "舉人", 1), ("bob", 120, "舉人", 1), ("cat", 6, "秀才", 3)]
    assert [p["name"] for p in client.get("/api/ladder?limit=1").json()["players"]] == ["ann"]
    assert client.get("/api/ladder?limit=0").status_code == 422
    assert "dan" in [p["name"] for p in client.get("/api/leaderboard").json()["players"]]


def test_a_timed_match_drawn_on_levels_is_drawn_in_the_history(client: TestClient, app: FastAPI) -> None:
    """R58: a match whose time was called with equal levels ends in a draw (game_over with no
    winner after time_called). The history called it "unfinished", like an abandoned game."""
    register(client, "tim")
    tid = user_id(app, "tim")
    bots = [(None, "random")] * 3
    text = synthetic_record(False, [([0, 2], "1-2"), ([1, 3], "1-2")], 0)
    lines = [json.loads(x) for x in text.splitlines()]
    lines[-1] = {"type": "time_called", "game": 1, "deal": 2}
    lines.append({"type": "game_over", "game": 1, "winner_team": None})
    store_game(app, "".join(json.dumps(x) + "\n" for x in lines), None, [(tid, None), *bots])
    abandoned = "".join(json.dumps(x) + "\n" for x in lines[:-2])  # no time call, no game_over
    store_game(app, abandoned, None, [(tid, None), *bots])
    rows = client.get("/api/history").json()["games"]
    assert [r["result"] for r in rows] == ["unfinished", "drawn"]  # newest first
