"""What a new player found at the table (issue 25, item 9), the parts checked without a browser:

* tables with nobody connected are closed (guandan.server.idle_close, ``--idle-close``): the decision
  over hand-made timelines, and a live quick game left with no tab that ends abandoned (history
  ``unfinished``, shown 已中止 / Abandoned) while one with its player connected plays on;
* ``HEAD /sw.js`` and ``HEAD /manifest.webmanifest`` answer 200 (were 405);
* a tournament name of only zero-width or blank characters is refused (400 ``bad_tournament_name``).

The browser parts (leave with confirmation, straights order, phone layout) are tests/test_browser_ux.py.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("fastapi")

from fastapi.testclient import TestClient

from guandan.server.app import create_app
from guandan.server.idle_close import CHECK_MAX_S, IdleClock
from guandan.server.settings import Settings

# -- idle close: the decision --------------------------------------------------------------------------


def test_idle_clock_closes_after_the_time_with_nobody_connected() -> None:
    clock = IdleClock(600)
    assert clock.due({"r1": False, "r2": True}, 1000.0) == []  # r1: nobody since 1000
    assert clock.due({"r1": False, "r2": True}, 1599.0) == []  # 599 s: not yet
    assert clock.due({"r1": False, "r2": True}, 1600.0) == ["r1"]  # 600 s: closed
    assert clock.due({"r2": True}, 5000.0) == []  # r2 always had someone


def test_idle_clock_restarts_when_someone_comes_back() -> None:
    clock = IdleClock(600)
    assert clock.due({"r": False}, 0.0) == []
    assert clock.due({"r": True}, 500.0) == []  # back after 500 s: the count is reset
    assert clock.due({"r": False}, 550.0) == []  # gone again at 550
    assert clock.due({"r": False}, 1149.0) == []  # 599 s later
    assert clock.due({"r": False}, 1150.0) == ["r"]


def test_idle_clock_forgets_rooms_no_longer_watched_and_zero_means_never() -> None:
    clock = IdleClock(10)
    assert clock.due({"r": False}, 0.0) == []
    assert clock.due({}, 5.0) == []  # the game ended meanwhile: forgotten
    assert clock.due({"r": False}, 12.0) == []  # watched again: counted from 12, not 0
    assert clock.due({"r": False}, 22.0) == ["r"]
    never = IdleClock(0)
    assert never.due({"r": False}, 0.0) == [] and never.due({"r": False}, 10**9) == []
    with pytest.raises(ValueError):
        IdleClock(-1)


def test_idle_clock_checks_four_times_per_limit_at_most_every_30_s() -> None:
    assert IdleClock(600).interval_s == CHECK_MAX_S == 30.0
    assert IdleClock(60).interval_s == 15.0
    assert IdleClock(2).interval_s == 0.5


# -- idle close: a live server -------------------------------------------------------------------------


@pytest.fixture
def make_client(tmp_path: Any) -> Iterator[Any]:
    def make(**kw: Any) -> TestClient:
        return TestClient(create_app(Settings(db_url=f"sqlite:///{tmp_path / 'ux.db'}", **kw)))

    yield make


def _guest(c: TestClient) -> dict[str, str]:
    c.cookies.clear()
    r = c.post("/api/guest", json={})
    assert r.status_code == 200, r.text
    c.cookies.clear()
    return {"cookie": f"gd_session={r.cookies['gd_session']}"}


def _status(c: TestClient, room: str) -> str:
    c.cookies.clear()
    return str(c.get(f"/api/rooms/{room}").json()["room"]["status"])


def test_a_quick_game_nobody_is_connected_to_is_closed_and_shown_abandoned(make_client: Any) -> None:
    with make_client(idle_close_s=0.8, bot_delay_s=5.0) as c:
        ann = _guest(c)
        room = c.post("/api/quick", json={"difficulty": "easy"}, headers=ann).json()["room"]["id"]
        assert _status(c, room) == "playing"
        end = time.monotonic() + 10
        while _status(c, room) != "finished":
            assert time.monotonic() < end, "the idle game was not closed in 10 s"
            time.sleep(0.1)
        games = c.get("/api/history", headers=ann).json()["games"]
        assert [(g["room_id"], g["winner_team"], g["result"]) for g in games] == [(room, None, "unfinished")]


def test_a_game_with_its_player_connected_is_not_closed(make_client: Any) -> None:
    with make_client(idle_close_s=0.4, bot_delay_s=5.0) as c:
        ann = _guest(c)
        room = c.post("/api/quick", json={"difficulty": "easy"}, headers=ann).json()["room"]["id"]
        with c.websocket_connect(f"/ws/rooms/{room}", headers=ann) as ws:
            assert ws.receive_json()["type"] == "state"
            time.sleep(1.5)  # more than three times the limit
            assert _status(c, room) == "playing"


def test_idle_close_zero_never_closes(make_client: Any) -> None:
    with make_client(idle_close_s=0, bot_delay_s=5.0) as c:
        ann = _guest(c)
        room = c.post("/api/quick", json={"difficulty": "easy"}, headers=ann).json()["room"]["id"]
        time.sleep(1.0)
        assert _status(c, room) == "playing"


# -- small HTTP findings -----------------------------------------------------------------------------


def test_head_of_the_service_worker_and_manifest_answers_200(make_client: Any) -> None:
    with make_client() as c:
        for path, kind in (("/sw.js", "text/javascript"), ("/manifest.webmanifest", "application/manifest+json")):
            r = c.head(path)
            assert r.status_code == 200, (path, r.status_code)
            assert r.headers["content-type"].startswith(kind) and r.content == b""


@pytest.mark.parametrize("name", ["\u200b", "\u200b\u200c\u200d", "\ufeff\u2060", " \u200b \u3164 "])
def test_a_tournament_name_of_invisible_characters_is_refused(make_client: Any, name: str) -> None:
    with make_client() as c:
        c.cookies.clear()
        r = c.post("/api/register", json={"name": "td_ann", "password": "correct horse 1"})
        assert r.status_code in (200, 201), r.text
        r = c.post("/api/tournaments", json={"name": name, "format": "swiss"})
        assert r.status_code == 400 and r.json()["code"] == "bad_tournament_name", r.text
        ok = c.post("/api/tournaments", json={"name": "春季\u200b赛", "format": "swiss"})
        assert ok.status_code == 201, ok.text


# -- 理牌: bombs in columns (static/js/hand.js, run in Node) ----------------------------------------


def test_bombs_stand_in_columns_and_groups_keep_their_gap() -> None:
    import json

    from test_table_modules import JS_DIR, run_node

    hand = (JS_DIR / "hand.js").as_uri()
    out = run_node(f"""
      const {{ layoutFan, stackRanges, arrangeHand }} = await import({json.dumps(hand)});
      // 4 single cards (groups 0-3 | the rest), then a 4-card bomb as one column; laptop card size 78x108
      const fan = layoutFan(8, [3], 1350, 78, 108, {{ stacks: [[4, 8]] }});
      const flat = layoutFan(8, [3], 1350, 78, 108);
      const groups = arrangeHand(["9S", "9H", "9C", "9D", "3S", "KD", "SJ", "SJ", "BJ", "BJ"], "2", {{ mode: "combos", custom: [] }});
      console.log(JSON.stringify({{ fan, flat, stacks: stackRanges(groups), kinds: groups.map((g) => g.kind) }}));
    """)
    fan, flat = out["fan"], out["flat"]
    pos = fan["positions"]
    # the bomb: one column, one left for its four cards, each 1/4 card (27 px) below the one before
    assert len({p["left"] for p in pos[4:]}) == 1
    assert [p["top"] for p in pos] == [17, 17, 17, 17, 17, 44, 71, 98]  # rise = round(108 * 0.16) = 17
    assert all(p["width"] == 78 for p in pos[4:])  # the last place of the row shows whole
    assert fan["height"] == 17 + 108 + 3 * 27  # the column is 3/4 card taller than a card
    # the gap after the group ending at card 3: round(78 * 0.18) = 14 px more than a strip
    strip = pos[1]["left"] - pos[0]["left"]
    assert round(pos[4]["left"] - pos[3]["left"] - strip, 1) == 14
    # without columns: eight places in a row, every card at the same height
    assert len({p["left"] for p in flat["positions"]}) == 8 and flat["height"] == 17 + 108
    # combos mode: the 9s bomb and the joker bomb are the columns (display ranges), in bomb-ladder order
    assert out["kinds"] == ["rank", "rank", "bomb", "joker_bomb"]
    assert out["stacks"] == [[2, 6], [6, 10]]


# -- idle close in a cluster ----------------------------------------------------------------------------


def test_idle_close_in_a_cluster_counts_sockets_on_every_process() -> None:
    """Two processes, ``--idle-close 2``: a quick game whose player holds a socket on the process
    that does not own the table stays open; once that socket closes, the owner closes the game."""
    import httpx
    from cluster_helpers import Client, api, cluster, guest

    def status(url: str, room: str) -> str:
        return str(httpx.get(f"{url}/api/rooms/{room}", timeout=30).json()["room"]["status"])

    with cluster(2, extra=("--idle-close", "2")) as (_db, nodes):
        a, b = (n.url for n in nodes)
        token, _ = guest(a)
        room = api(a, "/api/quick", token, {"difficulty": "easy", "clocks": "off"})["room"]["id"]
        me = Client(b, room, token, "player on B")
        me.wait(lambda f: f.get("type") == "state" and f["view"] is not None)
        time.sleep(5)  # more than twice the limit: the socket on B keeps the table open
        assert status(a, room) == "playing"
        me.close()
        end = time.monotonic() + 30
        while status(b, room) != "finished":
            assert time.monotonic() < end, "the idle table was not closed"
            time.sleep(0.2)
        games = httpx.get(f"{b}/api/history", headers={"cookie": f"gd_session={token}"}, timeout=30).json()["games"]
        assert [(g["room_id"], g["winner_team"]) for g in games] == [(room, None)]
