"""House modes at the web table (issue 25 item 7) and what the seeds' platforms show there (item 6):
rooms with ``single_deal`` (one deal at a random level) and ``no_shuffle`` (不洗牌, core/gather.py)
played through the real server and websockets, the R51 turned card in the state frames, and the
Yangzhou streaks in the ``deal_result`` frame (docs/table-contract.md v2.3). Expected values come
from the rules and the stored records, not from the code under test."""

from __future__ import annotations

import asyncio
import json
import random
from collections import Counter
from typing import Any

import pytest

pytest.importorskip("fastapi")

from test_server_tables import (  # noqa: E402 - the live-server fixture and helpers
    WS,
    _fill_and_start,
    _play_until_over,
    live,  # noqa: F401 - fixture
    ws_client,
)

from guandan.core.match import Game
from guandan.core.rules import RuleSet
from guandan.records import replay_lines
from guandan.server.table.views import turned_card, view_for


def _events(record: str) -> list[dict[str, Any]]:
    return [json.loads(ln) for ln in record.split("\n")[1:] if ln]


def _play_room(s: Any, body: dict[str, Any], seed: int) -> tuple[WS, dict[str, Any], str]:
    alice = s.user("alice")
    rid = s.make_room(alice, body, seed=seed)

    async def main() -> tuple[WS, dict[str, Any]]:
        async with ws_client(s, rid, alice) as c:
            await c.recv()
            await asyncio.to_thread(_fill_and_start, s, alice, rid)
            over = await _play_until_over(c, random.Random(seed))
            return c, over

    c, over = asyncio.run(main())
    status, record = s.room_row(rid)
    assert status == "finished"
    return c, over, record


def test_create_room_checks_the_house_mode_options(live):  # noqa: F811
    s = live()
    alice = s.user("alice")
    st, data = s.call("POST", "/api/rooms", alice, {"preset": "official", "options": {"no_shuffle": "maybe"}})
    assert st == 400 and "no_shuffle" in data["error"]
    st, data = s.call("POST", "/api/rooms", alice,
                      {"preset": "yangzhou", "options": {"no_shuffle": True, "single_deal": "true"}})
    assert st == 200, data
    room = data["room"]
    assert room["options"]["no_shuffle"] is True and room["options"]["single_deal"] is True
    assert room["overrides"] == {"no_shuffle": True, "single_deal": True}  # what the room header spells out


def test_single_deal_room_is_one_deal_and_shows_the_turned_card(live):  # noqa: F811
    s = live()
    c, over, record = _play_room(s, {"preset": "official", "options": {"single_deal": True}}, seed=3)
    events = _events(record)
    deals = [e for e in events if e["type"] == "deal"]
    assert len(deals) == 1  # one deal, then the game is over
    end = next(e for e in events if e["type"] == "deal_end")
    assert over["winner_team"] == end["winner_team"]
    assert deals[0]["levels"] == [deals[0]["level"]] * 2  # both teams at the deal's level
    assert replay_lines(record.split("\n")[:-1]).complete
    # R51: during the deal every state names the card turned face up and its holder, the first leader
    states = [f for f in c.frames if f["type"] == "state" and f["view"] and f["view"]["phase"] == "play"]
    assert states
    want = {"seat": deals[0]["first_leader"], "card": deals[0]["turned_card"]}
    assert all(f["view"]["turned_card"] == want for f in states)
    assert want["card"] in deals[0]["hands"][want["seat"]]


def test_no_shuffle_room_deals_gathered_hands(live):  # noqa: F811
    s = live()
    opts = {"no_shuffle": True, "target_level": "8", "upgrade": [3, 3, 3]}  # a short game, several deals
    c, over, record = _play_room(s, {"preset": "official", "options": opts}, seed=4)
    header = json.loads(record.split("\n")[0])
    assert header["options"]["no_shuffle"] is True and header["hands"] == "explicit"
    deals = [e for e in _events(record) if e["type"] == "deal"]
    assert len(deals) >= 2
    for d in deals:  # 108 cards, two of each of the 54 faces, 27 per seat (R1, R4)
        assert [len(h) for h in d["hands"]] == [27] * 4
        assert sorted(Counter(c for h in d["hands"] for c in h).values()) == [2] * 54
    assert replay_lines(record.split("\n")[:-1]).complete
    # a seat's state frames never hold another seat's cards
    for f in c.frames:
        if f["type"] == "state" and f["view"]:
            assert "hands" not in f["view"]


def test_turned_card_only_in_the_first_deal() -> None:
    g = Game(RuleSet.official(), seed=12)
    names = ["a", "b", "c", "d"]
    tc = view_for(g, 1, names)["turned_card"]
    first = g.events[0]
    assert tc == {"seat": first["first_leader"], "card": first["turned_card"]}
    rng = random.Random(2)
    while g.deal_number == 1:  # play the first deal out
        g.apply(rng.choice(g.legal_actions()))
    assert turned_card(g) is None and view_for(g, None, names)["turned_card"] is None
    anhui = Game(RuleSet.preset("anhui"), seed=12)  # random_seat: no card is turned
    assert view_for(anhui, 0, names)["turned_card"] is None


def test_yangzhou_deal_result_frame_keeps_the_streaks(live):  # noqa: F811
    s = live()
    opts = {"target_level": "8", "upgrade": [3, 3, 3]}
    c, over, record = _play_room(s, {"preset": "yangzhou", "options": opts}, seed=6)
    ends = [e for e in _events(record) if e["type"] == "deal_end"]
    results = [f for f in c.frames if f["type"] == "deal_result"]
    assert ends and len(results) == len(ends)
    for f, e in zip(results, ends):
        assert f["streaks"] == e["streaks"]
        seat, run = e["streaks"]["first_run"]
        assert seat == e["finish_order"][0] and run >= 1
        assert e["streaks"]["bonus"] == max(0, run - 2)  # AMB-17: a run of n >= 3 gives n - 2
