"""Hostile and careless input to the table websocket and the rooms API.

Contract: every websocket message is validated (at most 4 KB, a JSON object, a known type, at most
20 messages per second per connection); bad input is answered with
``{"type": "error", "message": one line, "reason": code}`` and the connection stays usable.
Illegal actions carry the core's reason (``not_your_turn``, ``not_in_hand``, ``must_lead`` R27,
...). ``act_cards`` resolves the readings of the chosen cards (R17): several legal readings and no
choice give ``ambiguous`` with the readings listed.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("websockets")

from test_server_table_play import _NoStore
from test_server_tables import WS, LiveServer, _fill_and_start, ws_client
from websockets.exceptions import ConnectionClosed

from guandan.core.cards import parse_card, parse_cards
from guandan.core.match import Game, shuffle_deal
from guandan.server.connections import Conn
from guandan.server.manager import TableManager
from guandan.server.table.flow import Table
from guandan.server.table.info import RoomInfo, SeatInfo
from guandan.server.table.views import view_for
from guandan.server.ws import handle_message

PING = {"type": "ping"}


@pytest.fixture
def live(tmp_path):
    """Start live servers (see ``test_server_tables.LiveServer``) on fresh SQLite files; stop them after."""
    servers: list[LiveServer] = []

    def start(bot_delay_s: float = 0.0, away_grace_s: float = 2.0, rate_limit: int = 1000) -> LiveServer:
        s = LiveServer(f"sqlite:///{tmp_path / f'db{len(servers)}.db'}", bot_delay_s, away_grace_s, rate_limit)
        servers.append(s)
        return s

    yield start
    for s in servers:
        s.stop()


async def expect_error(c: WS, msg: Any, reason: str) -> dict[str, Any]:
    """Send ``msg``; the next non-state frame must be an error with ``reason``; then the
    connection still answers a ping."""
    await c.send(msg)
    f = await c.until(lambda f: f["type"] != "state")
    assert f["type"] == "error", f
    assert f["reason"] == reason, f
    assert isinstance(f["message"], str) and f["message"] and "\n" not in f["message"]
    assert "Traceback" not in f["message"]
    await c.send(PING)
    assert (await c.until(lambda f: f["type"] != "state")) == {"type": "pong"}
    return f


def test_bad_websocket_input_gets_error_frames_and_the_connection_lives(live):
    s = live(away_grace_s=30)
    ann, ben = s.user("ann"), s.user("ben")
    rid = s.make_room(ann, {"preset": "official"})
    assert s.call("POST", f"/api/rooms/{rid}/seat", ben, {"seat": 1})[0] == 200

    async def main() -> None:
        async with ws_client(s, rid, ann) as a, ws_client(s, rid, ben) as b, ws_client(s, rid, "forged-token") as spy:
            first = await spy.recv()
            assert first["role"] == "spectator" and first["seat"] is None  # a bad cookie is a spectator
            # before the start
            await expect_error(a, {"type": "act", "action": ["pass", None, []]}, "not_started")
            # transport-level garbage
            await expect_error(a, "x" * 5000, "too_large")
            await expect_error(a, json.dumps({"type": "ping", "pad": "y" * 4100}), "too_large")
            await expect_error(a, "{not json", "bad_json")
            await expect_error(a, "[" * 2000 + "]" * 2000, "bad_json")
            await expect_error(a, b"\xff\xfe\x00", "bad_json")
            await expect_error(a, "[1, 2]", "not_object")
            await expect_error(a, "17", "not_object")
            await expect_error(a, {"type": "shutdown"}, "unknown_type")
            await expect_error(a, {"kind": "act"}, "unknown_type")
            await expect_error(a, {"type": ["act"]}, "unknown_type")
            await expect_error(a, {"type": "act", "action": "play everything"}, "malformed")
            await expect_error(a, {"type": "act", "action": ["single", "Z", ["ZZ"]]}, "malformed")
            await expect_error(a, {"type": "act_cards", "cards": "TH"}, "malformed")
            await expect_error(a, {"type": "act_cards", "cards": ["TH"] * 40}, "malformed")
            await expect_error(a, {"type": "act_cards", "cards": [1, 2]}, "malformed")
            await expect_error(a, {"type": "auto", "on": "yes"}, "malformed")

            await asyncio.to_thread(_fill_and_start, s, ann, rid)
            clients = [a, b]

            async def settled() -> list[dict[str, Any]]:
                # bots (seats 2, 3) act at once; the table rests when ann or ben is to act
                fa = await a.until(lambda f: f["type"] == "state" and f["view"] is not None and f["view"]["to_act"] in (0, 1))
                fb = await b.until(lambda f: f["type"] == "state" and f["seq"] == fa["seq"])
                return [fa, fb]

            frames = await settled()
            to_act = frames[0]["view"]["to_act"]
            other = clients[1 - to_act]
            # the seat not to act: not_your_turn, for act, act_cards and hint
            await expect_error(other, {"type": "act", "action": ["pass", None, []]}, "not_your_turn")
            await expect_error(other, {"type": "act_cards", "cards": []}, "not_your_turn")
            await expect_error(other, {"type": "hint"}, "not_your_turn")
            # spectators cannot act
            await expect_error(spy, {"type": "act", "action": ["pass", None, []]}, "not_seated")
            await expect_error(spy, {"type": "auto", "on": True}, "not_seated")
            # play on (ann plays her biggest plays, ben passes when he may) until ann must lead
            while True:
                v = frames[0]["view"]
                if v["to_act"] == 0 and v["phase"] == "play" and v["top"] is None:
                    break
                seat = v["to_act"]
                legal = frames[seat]["view"]["legal_actions"]
                choice = max(legal, key=lambda x: len(x[2])) if seat == 0 else legal[0]
                await clients[seat].send({"type": "act", "action": choice})
                frames = await settled()
            v = frames[0]["view"]
            hand = [parse_card(x) for x in v["hand"]]
            missing = next(x for x in ("BJ", "SJ", "AS", "AH", "KS", "KD", "QC", "QS") if parse_card(x) not in hand)
            rank = {"BJ": None, "SJ": None}.get(missing, missing[0])
            await expect_error(a, {"type": "act", "action": ["single", rank, [missing]]}, "not_in_hand")
            await expect_error(a, {"type": "act", "action": ["pass", None, []]}, "must_lead")
            await expect_error(a, {"type": "act_cards", "cards": []}, "must_lead")
            # two natural cards of different ranks (no wild) are no combination (R9-R22)
            naturals = [x for x in v["hand"] if x != v["wilds"][0]]
            pair = [naturals[0], next(x for x in naturals if x[0] != naturals[0][0])]
            await expect_error(a, {"type": "act_cards", "cards": pair}, "not_a_reading")
            # after all that, a legal action still goes through on the same socket
            await a.send({"type": "hint"})
            h = await a.until(lambda f: f["type"] == "hint")
            assert h["action"] in v["legal_actions"]
            await a.send({"type": "act", "action": h["action"]})
            g = await a.until(lambda f: f["type"] == "state" and f["seq"] > frames[0]["seq"])
            assert g["view"]["history"][-1] == [0, h["action"]]

    asyncio.run(main())


def test_rate_limit_20_per_second_then_usable_again(live):
    s = live(rate_limit=20)
    ann = s.user("ann")
    rid = s.make_room(ann, {"preset": "official"})

    async def main() -> None:
        async with ws_client(s, rid, ann) as a:
            await a.recv()
            for _ in range(30):
                await a.send(PING)
            got = []
            while len(got) < 30:
                f = await a.recv()
                if f["type"] != "state":
                    got.append(f)
            pongs = sum(1 for f in got if f == {"type": "pong"})
            limited = [f for f in got if f["type"] == "error"]
            assert pongs == 20 and len(limited) == 10
            assert all(f["reason"] == "rate_limited" for f in limited)
            await asyncio.sleep(1.1)
            await a.send(PING)
            assert (await a.until(lambda f: f["type"] != "state")) == {"type": "pong"}

    asyncio.run(main())


def test_unknown_room_gets_an_error_and_a_close(live):
    s = live()

    async def main() -> None:
        async with ws_client(s, "nosuch12") as c:
            f = await c.recv()
            assert f["type"] == "error" and f["reason"] == "no_room"
            with pytest.raises(ConnectionClosed):
                await c.recv(5)
            assert c.ws.close_code == 4404

    asyncio.run(main())


def test_http_bad_bodies_and_auth(live):
    s = live()
    ann, ben = s.user("ann"), s.user("ben")
    rid = s.make_room(ann)
    headers = {"cookie": f"gd_session={ann}", "content-type": "application/json"}
    for body in (b"{nope", b"[1,2]", b'"x"', b"[" * 3000 + b"]" * 3000, b"{" + b" " * 20000 + b"}"):
        r = s.http.post("/api/rooms", content=body, headers=headers)
        assert r.status_code == 400 and "error" in r.json(), body[:20]
        r = s.http.post(f"/api/rooms/{rid}/seat", content=body, headers=headers)
        assert r.status_code == 400, body[:20]
    st, data = s.call("POST", "/api/rooms", ann, {"preset": "official", "name": "n" * 65})
    assert st == 400 and "64" in data["error"]
    st, data = s.call("POST", "/api/rooms", ann, {"preset": "official", "options": [1]})
    assert st == 400
    st, data = s.call("POST", "/api/rooms", ann, {"preset": 7})
    assert st == 400
    # every state-changing route needs a session; a forged one is no session
    for path, body in (("seat", {"seat": 1}), ("leave", None), ("bots", {"bot": "random"}), ("start", None)):
        for token in (None, "forged"):
            st, data = s.call("POST", f"/api/rooms/{rid}/{path}", token, body)
            assert st == 401 and data["error"] == "log in first" and data["code"] == "login_required", (path, token)
    # the owner's powers are the owner's
    assert s.call("POST", f"/api/rooms/{rid}/seat", ben, {"seat": 1})[0] == 200
    assert s.call("POST", f"/api/rooms/{rid}/bots", ben, {"bot": "random"})[0] == 403
    assert s.call("POST", f"/api/rooms/{rid}/start", ben)[0] == 403
    st, data = s.call("GET", "/api/rooms/" + "x" * 300)
    assert st == 404


# -- act_cards readings, at the message-handler level ----------------------------------------------

def _hands_with(seat0: str, seed: int = 1) -> list[list[int]]:
    """A shuffled deal (R4) moved around so that seat 0 holds the cards ``seat0``."""
    hands = [list(h) for h in shuffle_deal(random.Random(seed))]
    for face in parse_cards(seat0):
        need = list(parse_cards(seat0)).count(face)
        while hands[0].count(face) < need:
            src = next(s for s in (1, 2, 3) if face in hands[s])
            give = next(f for f in hands[0] if f not in parse_cards(seat0))
            hands[src].remove(face)
            hands[src].append(give)
            hands[0].remove(give)
            hands[0].append(face)
    return [sorted(h) for h in hands]


def _table(hands: list[list[int]]) -> tuple[Table, list[Conn]]:
    manager = TableManager(lambda: None, None, store=_NoStore())  # type: ignore[arg-type]
    info = RoomInfo(
        id="unit0001", name="t", preset="official", options={}, status="playing", owner="p0", owner_id=1,
        seed=1, seats=[SeatInfo(s, s + 1, f"p{s}") for s in range(4)],
    )
    table = Table(manager, info)
    table.game = Game(hands=hands, first_leader=0)
    conns = [Conn(s + 1, f"p{s}") for s in range(4)]
    table.conns.update(conns)
    return table, conns


def test_act_cards_resolves_readings_and_reports_ambiguity():
    """R17: 3S 3C 3D + two wild 2H at level 2 read as a five-card bomb of 3s or a full house of 3s."""

    async def main() -> None:
        table, conns = _table(_hands_with("3S 3C 3D 2H 2H"))
        game = table.game
        assert game is not None and game.to_act() == 0 and game.level == 0
        send = lambda c, m: handle_message(table, c, json.dumps(m))
        err = await send(conns[0], {"type": "act_cards", "cards": ["3S", "3C", "3D", "2H", "2H"]})
        assert err["type"] == "error" and err["reason"] == "ambiguous"
        assert sorted(map(tuple, err["readings"])) == [("bomb", "3"), ("full_house", "3")]
        assert len(game.events) == 1  # nothing applied
        err = await send(conns[0], {"type": "act_cards", "cards": ["3S", "3C", "3D", "2H", "2H"], "reading": {"type": "straight", "rank": "7"}})
        assert err["reason"] == "not_a_reading"
        err = await send(conns[1], {"type": "act_cards", "cards": ["3S"]})
        assert err["reason"] == "not_your_turn"
        out = await send(conns[0], {"type": "act_cards", "cards": ["3S", "3C", "3D", "2H", "2H"], "reading": {"type": "full_house", "rank": "3"}})
        assert out is None
        ev = game.events[-1]
        assert ev == {"type": "action", "seat": 0, "action": ["full_house", "3", ["3S", "3C", "3D", "2H", "2H"]]}
        # every connection got the new state; seat 1 must now beat a full house of 3s
        frames = [c.queue.get_nowait() for c in conns]
        assert all(f["type"] == "state" for f in frames)
        assert frames[1]["view"]["to_act"] == 1 and frames[1]["view"]["top"] == ["full_house", "3", ["3S", "3C", "3D", "2H", "2H"]]
        assert frames[0]["view"]["legal_actions"] == [] and frames[1]["view"]["legal_actions"]
        # a pass through act_cards (no cards) while following
        assert await send(conns[1], {"type": "act_cards", "cards": []}) is None
        assert game.events[-1] == {"type": "action", "seat": 1, "action": ["pass", None, []]}

    asyncio.run(main())


def test_state_view_is_the_seat_view_plus_public_extras():
    """The view of a state frame is ``seat_view(game, seat).to_json()`` plus wilds, seat names, last
    actions, the public ``owed_to`` (who receives the tribute or return due) and the R51 ``turned_card``
    (None here: the first leader is fixed, no card is turned); the spectator view has the same keys and no private data."""
    from guandan.core.views import seat_view

    async def main() -> None:
        table, _conns = _table(_hands_with("3S 3C 3D 2H 2H", seed=4))
        g = table.game
        assert g is not None
        rng = random.Random(9)
        for _ in range(12):
            g.apply(rng.choice(g.legal_actions()))
        names = ["a", "b", "c", "d"]
        for seat in range(4):
            v = view_for(g, seat, names)
            base = seat_view(g, seat).to_json()
            extras = {k: v.pop(k) for k in ("wilds", "seat_names", "last_actions", "owed_to", "turned_card")}
            assert v == base
            assert extras["turned_card"] is None  # Game(first_leader=0): nobody turned a card (R51)
            assert extras["owed_to"] == []  # the play phase: nothing owed (R43-R47)
            assert extras["wilds"] == ["2H"] and extras["seat_names"] == names
            trick = {s: a for s, a in base["trick"]}
            assert extras["last_actions"] == [trick.get(s) for s in range(4)]
        spec = view_for(g, None, names)
        assert set(spec) == set(view_for(g, 0, names))
        assert spec["hand"] == [] and spec["legal_actions"] == [] and spec["seat"] is None
        assert spec["history"] == seat_view(g, 0).to_json()["history"]  # the play phase: all public

    asyncio.run(main())


def test_rate_window_unit():
    c = Conn()
    t = time.monotonic()
    assert all(c.rate_ok(20, t + i * 0.01) for i in range(20))
    assert not c.rate_ok(20, t + 0.5)
    assert c.rate_ok(20, t + 1.01)
