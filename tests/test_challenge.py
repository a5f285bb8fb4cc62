"""The daily duplicate challenge (issue 22): the deciding code, the store and the HTTP API.

* scoring from hand-worked fields: results +3, +1, +1, -2 on one board score 100 %, 50 %, 50 %,
  0 % (3 beaten of 3; 1 beaten and 1 tie of 3 = 1.5 / 3; none), a lone result 50 %, and a
  player's day average over the boards they finished;
* the days: a challenge closes at the next UTC midnight, a week is Monday to Sunday;
* a board room's game: a board with tribute starts at play with the cards already exchanged
  (each hand = dealt - paid + received, R45-R47) and the first leader to act; the game is over at
  the deal's end with ``deal_end`` as its last event (no next deal, no game_over, nobody rated);
* publishing once per day under concurrent requests: 8 threads on SQLite and on PostgreSQL
  store one challenge and all answer its boards; two server processes on one PostgreSQL database
  publish one day and start a board once for an account starting it on both at once;
* on a live server (SQLite file, uvicorn): a board is played once per account (two concurrent
  starts answer one room; a finished board is refused 409 ``board_played``); a board left alone
  is played to its end by the bot (托管) and that result counts; a guest plays unranked;
* secrecy: a second account that has not played board k fetches every challenge endpoint, the
  finished game's replay, record and review, the first player's profile, the rooms list, and
  opens the board room's websocket: no card of board k, no first leader and no result of it
  appears (404 / refused); after the day closes everything is public;
* the review of one's own board (a board record) starts at once for its player from their own seat
  (another seat: 403 ``review_own_seat`` until the day closes), not at all for others.
"""

from __future__ import annotations

import json
import re
import threading
import time
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from guandan.agents.heuristic import HeuristicAgent
from guandan.core.deal import PLAY
from guandan.core.views import seat_view
from guandan.duplicate import deal_board_set
from guandan.server.board_rooms import board_game
from guandan.server.challenge import (
    ChallengeConfig,
    Play,
    board_visible,
    closes_at,
    day_scores,
    is_closed,
    parse_day,
    week_days,
    week_standings,
)

# -- the deciding code ---------------------------------------------------------------------------


def _plays(board: int, results: list[int], start: int = 1) -> list[Play]:
    return [Play(board, start + i, f"p{start + i}", True, r) for i, r in enumerate(results)]


def test_matchpoints_from_a_hand_worked_field() -> None:
    scores = day_scores(2, _plays(1, [3, 1, 1, -2]))
    # +3 beats 3 of 3; each +1 beats -2 and ties the other +1: 1.5 of 3; -2 beats none
    assert [scores.percentage(1, p) for p in (1, 2, 3, 4)] == [100.0, 50.0, 50.0, 0.0]
    # board 2 played by player 1 alone: a field of one scores 50 %
    scores = day_scores(2, _plays(1, [3, 1, 1, -2]) + [Play(2, 1, "p1", True, -1)])
    assert scores.percentage(2, 1) == 50.0
    # player 1: (100 + 50) / 2 = 75 %, first; players 2 and 3 tie at 50 %; player 4 last
    lines = [(s.player, s.pct, s.boards, s.rank) for s in scores.leaderboard()]
    assert lines == [(1, 75.0, 2, 1), (2, 50.0, 1, 2), (3, 50.0, 1, 2), (4, 0.0, 1, 4)]


def test_unranked_and_unfinished_plays_are_not_in_the_field() -> None:
    plays = _plays(1, [2, -1]) + [Play(1, 9, "guest", False, 3), Play(1, 10, "busy", True, None)]
    scores = day_scores(1, plays)
    assert scores.tables[1].n == 2
    assert scores.percentage(1, 1) == 100.0 and scores.percentage(1, 2) == 0.0


def test_week_averages_every_board_played() -> None:
    monday = day_scores(1, _plays(1, [2, -1]))          # p1 100 %, p2 0 %
    tuesday = day_scores(2, _plays(1, [1, 1]) + _plays(2, [-3], start=1))  # p1 50 % and 50 %; p2 50 %
    lines = {s.player: (s.pct, s.boards) for s in week_standings([monday, tuesday])}
    assert lines == {1: (pytest.approx(200 / 3), 3), 2: (25.0, 2)}


def test_days_close_at_utc_midnight_and_weeks_start_on_monday() -> None:
    day = date(2026, 12, 4)  # a Friday
    assert closes_at(day) == datetime(2026, 12, 5, 0, 0, tzinfo=UTC)
    assert not is_closed(day, datetime(2026, 12, 4, 23, 59, 59, tzinfo=UTC))
    assert is_closed(day, datetime(2026, 12, 5, 0, 0, tzinfo=UTC))
    assert week_days(day)[0] == date(2026, 11, 30) and week_days(day)[-1] == date(2026, 12, 6)
    assert parse_day("2026-12-04") == day
    for bad in ("2026-12-4", "yesterday", "2026-13-01", 20261204):
        with pytest.raises(ValueError):
            parse_day(bad)


def test_board_visibility() -> None:
    plays = [Play(1, 7, "a", True, 2), Play(2, 7, "a", True, None)]
    assert board_visible(1, 7, plays, closed=False)      # played and finished
    assert not board_visible(2, 7, plays, closed=False)  # started, not finished
    assert not board_visible(1, 8, plays, closed=False)  # another account
    assert not board_visible(1, None, plays, closed=False)
    assert board_visible(2, 8, plays, closed=True) and board_visible(3, None, plays, closed=True)
    # a guest's finished play shows nothing before the close (a free guest account could learn a
    # board, then play it ranked); after the close, everything
    plays += [Play(1, 9, "guest", False, 3), Play(1, 10, "busy", True, None)]
    assert not board_visible(1, 9, plays, closed=False) and board_visible(1, 9, plays, closed=True)
    # a play still going on at the close keeps the board hidden from its player until it ends
    assert not board_visible(1, 10, plays, closed=True) and board_visible(1, 8, plays, closed=True)


def test_config_is_checked() -> None:
    assert ChallengeConfig().boards == 12 and ChallengeConfig().preset == "official"
    for bad in ({"boards": 0}, {"boards": True}, {"preset": "nonsense"}, {"tribute_share": 2.0}):
        with pytest.raises(ValueError):
            ChallengeConfig(**bad)  # type: ignore[arg-type]


# -- a board room's game -------------------------------------------------------------------------


def _counts(faces: tuple[int, ...]) -> dict[int, int]:
    out: dict[int, int] = {}
    for f in faces:
        out[f] = out.get(f, 0) + 1
    return out


def test_a_board_with_tribute_starts_at_play_with_the_cards_exchanged() -> None:
    boards = [b for b in deal_board_set(8, seed=5, tribute_share=1.0) if b.tribute and b.tribute.tributes]
    assert boards
    board = boards[0]
    game = board_game(board.to_json())
    assert game.phase == PLAY and game.to_act() == board.first_leader
    want = [_counts(h) for h in board.hands]
    for payer, receiver, face in board.tribute.tributes:
        want[payer][face] -= 1
        want[receiver][face] = want[receiver].get(face, 0) + 1
    for giver, target, face in board.tribute.returns:
        want[giver][face] -= 1
        want[target][face] = want[target].get(face, 0) + 1
    for seat in range(4):
        have = {f: n for f, n in enumerate(game.deal.hands[seat]) if n}
        assert have == {f: n for f, n in want[seat].items() if n}, seat
        assert sum(have.values()) == 27
    # the exchange is in the record before the first play (R50)
    assert [ev["type"] for ev in game.events].count("tribute_paid") == 1


def test_a_board_game_is_over_at_the_end_of_its_deal() -> None:
    board = deal_board_set(1, seed=11, tribute_share=0.0)[0]
    game = board_game(board.to_json())
    bots = [HeuristicAgent(s) for s in range(4)]
    while not game.over:
        seat = game.to_act()
        assert seat is not None
        game.apply(bots[seat].act(seat_view(game, seat)), seat)
    assert game.events[-1]["type"] == "deal_end"
    assert sum(1 for ev in game.events if ev["type"] == "deal") == 1
    assert game.winner is None and game.deal.result is not None


# -- publishing once per day ---------------------------------------------------------------------


def _concurrent_publish(url: str) -> None:
    from guandan.server import models
    from guandan.server.challenge_store import ChallengeStore
    from guandan.server.db import make_engine, make_session_factory, migrate

    engine = make_engine(url)
    migrate(engine)
    store = ChallengeStore(make_session_factory(engine))
    day = date(2026, 12, 4)
    config = ChallengeConfig(boards=3)
    barrier = threading.Barrier(8)
    got: list[Any] = []
    errors: list[BaseException] = []

    def publish() -> None:
        try:
            barrier.wait()
            got.append(store.get_or_create(day, config))
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=publish) for _ in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(60)
    assert not errors, errors
    assert len(got) == 8 and len({c.id for c in got}) == 1
    assert all(c.boards == got[0].boards for c in got) and len(got[0].boards) == 3
    with store.session_factory() as db:
        from sqlalchemy import func, select

        assert db.scalar(select(func.count()).select_from(models.ChallengeRow)) == 1
    engine.dispose()


def test_published_once_per_day_under_concurrent_requests_sqlite(tmp_path: Path) -> None:
    _concurrent_publish(f"sqlite:///{tmp_path / 'c.db'}")


def test_published_once_per_day_under_concurrent_requests_postgres() -> None:
    from cluster_helpers import PG_URL, fresh_database
    from sqlalchemy import create_engine, text

    from guandan.server.db import normalize_url

    try:
        with create_engine(normalize_url(PG_URL)).connect() as c:
            c.execute(text("SELECT 1"))
    except Exception as e:  # noqa: BLE001
        pytest.skip(f"PostgreSQL is not reachable at {PG_URL}: {e}")
    with fresh_database() as url:
        _concurrent_publish(url)


# -- the live server ----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from browser_helpers import LiveServer

    db = tmp_path_factory.mktemp("challenge") / "challenge.db"
    srv = LiveServer(db, away_grace_s=0.05, settings={"challenge_boards": 4, "challenge_start_grace_s": 0.0,
                                                      "review_budget": "worlds=4,candidates=2,belief=1,solver=0"})
    yield srv
    srv.stop()


def _account(srv: Any, name: str) -> httpx.Client:
    c = httpx.Client(base_url=srv.base, timeout=60)
    r = c.post("/api/register", json={"name": name, "password": f"pw-{name}-123"})
    assert r.status_code == 200, r.text
    return c


def _wait_played(c: httpx.Client, board: int, limit_s: float = 120) -> dict[str, Any]:
    end = time.monotonic() + limit_s
    while time.monotonic() < end:
        d = c.get("/api/challenge/today").json()
        row = d["boards"][board - 1]
        if row["status"] == "played":
            return row
        time.sleep(0.1)
    raise AssertionError(f"board {board} did not finish")


def _board_json(srv: Any, board: int) -> dict[str, Any]:
    from guandan.server import models

    with srv.app.state.session_factory() as db:
        from sqlalchemy import select

        row = db.scalars(select(models.ChallengeRow)).first()
        return json.loads(row.boards)[board - 1]


def test_a_board_is_played_once_per_account_and_a_left_board_is_played_out(served: Any) -> None:
    ann = _account(served, "ann")
    answers: list[Any] = []
    barrier = threading.Barrier(2)

    def start() -> None:
        barrier.wait()
        answers.append(ann.post("/api/challenge/boards/1/play", json={}))

    threads = [threading.Thread(target=start) for _ in range(2)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(60)
    assert [r.status_code for r in answers] == [200, 200], [r.text for r in answers]
    rooms = {r.json()["room"] for r in answers}
    assert len(rooms) == 1 and sorted(r.json()["created"] for r in answers) == [False, True]
    # nobody opens the room: the bot plays the seat (托管) to the end, and that result counts
    row = _wait_played(ann, 1)
    assert row["result"] in (-3, -2, -1, 1, 2, 3) and row["pct"] == 50.0 and row["game"]
    again = ann.post("/api/challenge/boards/1/play", json={})
    assert again.status_code == 409 and again.json()["code"] == "board_played"
    from sqlalchemy import func, select

    from guandan.server import models

    with served.app.state.session_factory() as db:
        assert db.scalar(select(func.count()).select_from(models.ChallengePlayRow)
                         .where(models.ChallengePlayRow.board == 1)) == 1
        # the stored record is the board's: header with the board, ends with deal_end, unrated
        game = db.get(models.GameRow, row["game"])
        lines = [json.loads(ln) for ln in game.record.splitlines() if ln.strip()]
        assert lines[0]["board"] == _board_json(served, 1) and lines[-1]["type"] == "deal_end"
        assert game.winner_team is None
        assert db.get(models.User, db.scalar(select(models.User.id).where(models.User.name == "ann"))).games_played == 0


def test_a_guest_plays_unranked(served: Any) -> None:
    guest = httpx.Client(base_url=served.base, timeout=60)
    assert guest.post("/api/guest", json={}).status_code == 200
    assert guest.post("/api/challenge/boards/1/play", json={}).status_code == 200
    row = _wait_played(guest, 1)
    # the guest's own result, and nothing that shows the board before the close: no percentage,
    # no game, no review, no field count; the board, its game and its record answer 404
    assert row["result"] is not None and not {"pct", "game", "review_url", "results"} & set(row), row
    day = guest.get("/api/challenge/today").json()["day"]
    assert guest.get(f"/api/challenge/days/{day}/boards/1").status_code == 404
    with served.app.state.session_factory() as db:
        from sqlalchemy import select

        from guandan.server import models

        gid = db.scalar(select(models.ChallengePlayRow.game_id).join(models.User).where(models.User.is_guest.is_(True)))
    assert gid is not None
    assert guest.get(f"/api/games/{gid}").status_code == 404
    assert guest.get(f"/api/games/{gid}/record").status_code == 404
    today = guest.get("/api/challenge/today").json()
    assert today["me"]["ranked"] is False and today["field"] == 1  # ann only
    names = [s["name"] for s in guest.get("/api/challenge/leaderboard").json()["standings"]]
    assert names == ["ann"]


def _cards_of(board: dict[str, Any]) -> list[str]:
    return [json.dumps(hand) for hand in board["hands"]]


def test_nothing_of_a_board_shows_before_it_is_played(served: Any) -> None:
    ann = _account(served, "ann2")
    bob = _account(served, "bob2")
    r = ann.post("/api/challenge/boards/2/play", json={})
    assert r.status_code == 200
    room = r.json()["room"]
    row = _wait_played(ann, 2)
    game_id = row["game"]
    board = _board_json(served, 2)
    day = ann.get("/api/challenge/today").json()["day"]
    texts: dict[str, str] = {}
    for path in ("/api/challenge/today", f"/api/challenge/days/{day}", "/api/challenge/leaderboard",
                 "/api/challenge/leaderboard?period=week", "/api/challenge/me", "/api/rooms",
                 f"/api/rooms/{room}", "/api/users/ann2", f"/api/games/{game_id}", f"/api/games/{game_id}/record",
                 *(f"/api/challenge/days/{day}/boards/{n}" for n in range(1, 6))):
        resp = bob.get(path)
        texts[path] = resp.text
        assert resp.status_code in (200, 404), (path, resp.status_code)
    review = bob.post(f"/api/games/{game_id}/deals/1/review?seat=0", json={})
    texts["review"] = review.text
    assert review.status_code == 404
    assert bob.get(f"/api/games/{game_id}").status_code == 404
    assert bob.get(f"/api/challenge/days/{day}/boards/2").json()["code"] == "board_hidden"
    for path, text in texts.items():
        for hand in _cards_of(board):
            assert hand not in text, path
        assert "pyguandan-board" not in text and '"deal_end"' not in text, path
        assert not re.search(r'"first_leader":\s*\d', text), path  # the board's leader (a rule option is a word)
        assert not re.search(r'"(result|pct)":\s*-?\d', text) or path.startswith("/api/challenge/leaderboard") \
            or path == "/api/challenge/me", path
    bob_today = json.loads(texts["/api/challenge/today"])
    assert bob_today["boards"][1] == {"number": 2, "status": "open", "room": None}
    assert room not in texts["/api/rooms"] and game_id not in [g["id"] for g in
                                                                json.loads(texts["/api/users/ann2"])["recent_games"]]
    # the board room's websocket refuses anyone but its player
    from websockets.exceptions import ConnectionClosed
    from websockets.sync.client import connect

    cookie = "; ".join(f"{k}={v}" for k, v in bob.cookies.items())
    ws_url = served.base.replace("http://", "ws://") + f"/ws/rooms/{room}"
    with connect(ws_url, additional_headers={"Cookie": cookie, "Origin": served.base}) as ws:
        first = json.loads(ws.recv(timeout=10))
        assert first["type"] == "error" and first["reason"] == "board_private"
        with pytest.raises(ConnectionClosed) as closed:
            ws.recv(timeout=10)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 4404
    # the player sees the board and every result on it, and the replay of their game
    mine = ann.get(f"/api/challenge/days/{day}/boards/2")
    assert mine.status_code == 200 and mine.json()["board"] == board
    assert [r["name"] for r in mine.json()["results"]] == ["ann2"]
    assert ann.get(f"/api/games/{game_id}").status_code == 200
    # the day closes: everything is public
    from sqlalchemy import update

    from guandan.server import models

    with served.app.state.session_factory() as db:
        db.execute(update(models.Room).where(models.Room.board.is_not(None))
                   .values(secret_until=datetime(2020, 1, 1, tzinfo=UTC)))
        db.execute(update(models.ChallengeRow).values(day="2020-01-01"))
        db.commit()
    try:
        opened = bob.get("/api/challenge/days/2020-01-01/boards/2")
        assert opened.status_code == 200 and opened.json()["board"] == board
        assert opened.json()["results"][0]["replay_url"] == f"/replay/{game_id}"
        assert bob.get(f"/api/games/{game_id}").status_code == 200
        assert bob.get("/api/challenge/days/2020-01-01").json()["closed"] is True
        assert bob.get("/api/challenge/days/2020-01-02").json()["code"] == "no_challenge"
    finally:
        with served.app.state.session_factory() as db:
            db.execute(update(models.ChallengeRow).values(day=datetime.now(UTC).date().isoformat()))
            db.commit()


def test_own_board_review_starts_for_its_player_only(served: Any) -> None:
    cat = _account(served, "cat3")
    dan = _account(served, "dan3")
    assert cat.post("/api/challenge/boards/3/play", json={}).status_code == 200
    row = _wait_played(cat, 3)
    assert row["review_url"] == f"/review/{row['game']}?deal=1&seat=0"
    assert dan.post(f"/api/games/{row['game']}/deals/1/review?seat=0", json={}).status_code == 404
    other = cat.post(f"/api/games/{row['game']}/deals/1/review?seat=1", json={})
    assert other.status_code == 403 and other.json()["code"] == "review_own_seat"
    r = cat.post(f"/api/games/{row['game']}/deals/1/review?seat=0", json={})
    assert r.status_code in (200, 202), r.text
    job = r.json()["job"]
    end = time.monotonic() + 240
    body = r.json()
    while body["status"] not in ("done", "failed") and time.monotonic() < end:
        time.sleep(0.3)
        body = cat.get(f"/api/reviews/{job}").json()
    assert body["status"] == "done", body
    # the reviewed decisions are the player's own plays of the board (seat 0)
    assert body["result"]["decisions"], body["result"].keys()


def test_a_board_in_progress_survives_a_restart_and_its_player_comes_back(tmp_path: Path) -> None:
    """The server stops while the player is to act; the next server restores the board room from
    its stored board record (the deal, the exchange, the plays so far), and the player, back on
    the table's websocket, hands the seat to 托管: the deal ends and its result is stored. A board
    abandoned through the rooms API scores the worst result."""
    from browser_helpers import LiveServer
    from websockets.sync.client import connect

    from guandan.duplicate import OneDealGame
    from guandan.duplicate.board_records import replay_board_lines
    from guandan.server import models

    db = tmp_path / "restart.db"
    settings = {"challenge_boards": 2, "challenge_start_grace_s": 0.0}
    first = LiveServer(db, settings=settings)  # the bot never covers the absent player
    try:
        eve = _account(first, "eve")
        room = eve.post("/api/challenge/boards/1/play", json={}).json()["room"]
        end = time.monotonic() + 60
        while True:
            table = first.app.state.manager.tables.get(room)
            if table is not None and table.game is not None and table.game.to_act() == 0 and table.seq >= 0:
                break
            assert time.monotonic() < end
            time.sleep(0.05)
        time.sleep(0.3)  # nothing moves while seat 0 is to act
        events_before = [dict(ev) for ev in first.app.state.manager.tables[room].game.events]
        cookies = dict(eve.cookies)
    finally:
        first.stop()
    second = LiveServer(db, settings=settings)
    try:
        table = second.app.state.manager.tables[room]
        assert isinstance(table.game, OneDealGame) and not table.game.over
        assert table.game.events == events_before and table.game.to_act() == 0
        eve = httpx.Client(base_url=second.base, timeout=60, cookies=cookies)
        assert eve.get("/api/challenge/today").json()["boards"][0] == {"number": 1, "status": "playing", "room": room}
        ws_url = second.base.replace("http://", "ws://") + f"/ws/rooms/{room}"
        cookie = "; ".join(f"{k}={v}" for k, v in cookies.items())
        with connect(ws_url, additional_headers={"Cookie": cookie, "Origin": second.base}) as ws:
            state = json.loads(ws.recv(timeout=10))
            assert state["type"] == "state" and state["seat"] == 0 and state["room"]["board_room"] is True
            ws.send(json.dumps({"type": "auto", "on": True}))
            row = _wait_played(eve, 1)
        with second.app.state.session_factory() as s:
            record = s.get(models.GameRow, row["game"]).record
        replay = replay_board_lines([ln for ln in record.splitlines() if ln.strip()], one_deal=True)
        assert replay.complete and [dict(ev) for _, ev in replay.events][: len(events_before)] == events_before
        assert row["result"] == {True: 1, False: -1}[replay.game.deal.result.winner_team == 0] * \
            abs(row["result"])  # the side's sign follows the deal's winner (R35)
        # a board its player abandons (the rooms API's abandon, alone with bots) scores the worst
        # result of the official table: the opponents' 1-2, -3 (R35)
        room2 = eve.post("/api/challenge/boards/2/play", json={}).json()["room"]
        assert eve.post(f"/api/rooms/{room2}/abandon", json={}).status_code == 200
        assert _wait_played(eve, 2)["result"] == -3
        assert eve.post("/api/challenge/boards/2/play", json={}).json()["code"] == "board_played"
    finally:
        second.stop()


def test_the_score_tables_follow_the_stored_results_incrementally(tmp_path: Path) -> None:
    """``ChallengeStore.scores`` keeps the day's tables in memory: a result stored later (even one
    committed late with an older time) is in the next answer, and the percentages are those of
    the hand-worked field +3, +1, +1, -2 (100, 50, 50, 0 %)."""
    from datetime import timedelta

    from guandan.server import models
    from guandan.server.challenge_store import ChallengeStore
    from guandan.server.db import make_engine, make_session_factory, migrate

    engine = make_engine(f"sqlite:///{tmp_path / 's.db'}")
    migrate(engine)
    store = ChallengeStore(make_session_factory(engine))
    ch = store.get_or_create(date(2026, 12, 4), ChallengeConfig(boards=2))
    now = models.utcnow()
    with store.session_factory() as db:
        users = [models.User(name=f"p{i}", is_guest=False) for i in range(4)]
        db.add_all(users)
        db.flush()
        ids = [u.id for u in users]

        def play(i: int, result: int, at: datetime) -> None:
            db.add(models.ChallengePlayRow(challenge_id=ch.id, board=1, user_id=ids[i], seat=0, ranked=True,
                                           result=result, started_at=at, finished_at=at))

        play(0, 3, now)
        play(1, 1, now + timedelta(seconds=1))
        db.commit()
        with store.scores(ch) as (scores, names):
            assert [scores.percentage(1, ids[i]) for i in (0, 1)] == [100.0, 0.0] and names[ids[1]] == "p1"
        play(2, 1, now + timedelta(seconds=2))
        play(3, -2, now - timedelta(hours=1))  # committed late, with a time long before the newest
        db.commit()
    with store.scores(ch) as (scores, _names):
        assert [scores.percentage(1, i) for i in ids] == [100.0, 50.0, 50.0, 0.0]
        assert scores.tables[1].n == 4 and len(scores) == 4
    engine.dispose()


def test_two_processes_on_one_database_start_a_board_once() -> None:
    """Two server processes on one PostgreSQL database: the day is published once, and the same
    account starting the same board on both at once gets one room (the unique play row); the
    finished board is refused on either."""
    from browser_helpers import LiveServer
    from cluster_helpers import PG_URL, fresh_database
    from sqlalchemy import create_engine, func, select, text

    from guandan.server import models
    from guandan.server.db import normalize_url

    try:
        with create_engine(normalize_url(PG_URL)).connect() as c:
            c.execute(text("SELECT 1"))
    except Exception as e:  # noqa: BLE001
        pytest.skip(f"PostgreSQL is not reachable at {PG_URL}: {e}")
    settings = {"challenge_boards": 2, "challenge_start_grace_s": 0.0}
    with fresh_database() as url:
        one = LiveServer(None, db_url=url, away_grace_s=0.05, settings=settings)
        two = LiveServer(None, db_url=url, away_grace_s=0.05, settings=settings)
        try:
            reg = httpx.Client(base_url=one.base, timeout=60)
            assert reg.post("/api/register", json={"name": "twin", "password": "pw-twin-123"}).status_code == 200
            clients = [httpx.Client(base_url=srv.base, timeout=60, cookies=dict(reg.cookies)) for srv in (one, two)]
            days = [c.get("/api/challenge/today").json() for c in clients]
            assert days[0]["day"] == days[1]["day"]
            barrier = threading.Barrier(2)
            answers: list[Any] = [None, None]

            def start(i: int) -> None:
                barrier.wait()
                answers[i] = clients[i].post("/api/challenge/boards/1/play", json={})

            threads = [threading.Thread(target=start, args=(i,)) for i in (0, 1)]
            for th in threads:
                th.start()
            for th in threads:
                th.join(60)
            assert [a.status_code for a in answers] == [200, 200], [a.text for a in answers]
            assert answers[0].json()["room"] == answers[1].json()["room"]
            assert sorted(a.json()["created"] for a in answers) == [False, True]
            _wait_played(clients[0], 1)
            for c in clients:
                assert c.post("/api/challenge/boards/1/play", json={}).json()["code"] == "board_played"
            with one.app.state.session_factory() as db:
                assert db.scalar(select(func.count()).select_from(models.ChallengeRow)) == 1
                assert db.scalar(select(func.count()).select_from(models.ChallengePlayRow)) == 1
        finally:
            one.stop()
            two.stop()


def test_a_board_under_a_points_preset_moves_no_account_points(tmp_path: Path) -> None:
    """Under the Anhui preset a board's result is the side's per-deal points (section 2.1), kept in
    the challenge only: the account's Anhui points (public on the ladder and the profile) and
    rating do not move, so they cannot show the result before the day closes. Before the fix the
    points of the deal were added to the account."""
    from browser_helpers import LiveServer
    from sqlalchemy import select

    from guandan.server import models

    srv = LiveServer(tmp_path / "anhui.db", away_grace_s=0.05,
                     settings={"challenge_boards": 1, "challenge_preset": "anhui", "challenge_start_grace_s": 0.0})
    try:
        fay = _account(srv, "fay")
        assert fay.get("/api/challenge/today").json()["preset"] == "anhui"
        assert fay.post("/api/challenge/boards/1/play", json={}).status_code == 200
        row = _wait_played(fay, 1)
        assert row["result"] in (-4, -2, -1, 1, 2, 4)  # Anhui per-deal points of seat 0 (section 2.1)
        with srv.app.state.session_factory() as db:
            user = db.scalars(select(models.User).where(models.User.name == "fay")).one()
            assert user.anhui_points == 0 and user.games_played == 0
            assert user.rating_mu == models.DEFAULT_MU
    finally:
        srv.stop()
