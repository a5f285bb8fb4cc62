"""State frames whose parts are encoded once and spliced in (``server/table/frames.py``
``spliced_json``; ``views.view_text``): the texts parse to exactly the frames' values, and the
views that share a position's history equal the views made alone, in every phase (tribute and
return included, where each seat sees a different history: R50)."""

from __future__ import annotations

import json
import random

from guandan.core.match import Game
from guandan.server.table.frames import JsonText, SharedFrame, frame_json, spliced_json
from guandan.server.table.views import view_for, view_text


def test_a_part_is_spliced_only_when_it_is_the_value_itself():
    shared = [1, 2, {"a": "三"}]
    part = JsonText(shared, text='[1,2,{"a":"三"}]')
    value = {"x": 1, "list": shared, "y": None}
    text = spliced_json(value, {"list": part})
    assert json.loads(text) == value
    assert text.endswith('"list":[1,2,{"a":"三"}]}')
    # an equal list that is not the part's value is encoded, never replaced by the part's text
    fake = JsonText([1, 2, {"a": "三"}], text='"wrong"')
    assert json.loads(spliced_json({"list": [1, 2, {"a": "三"}]}, {"list": fake})) == {"list": [1, 2, {"a": "三"}]}
    # a part whose key the value lacks is left out; an empty dict stays an empty object
    assert spliced_json({}, {"list": part}) == "{}"
    assert json.loads(spliced_json({"only": shared}, {"only": part})) == {"only": shared}
    # a key that is not a plain name is quoted as JSON
    odd = JsonText("v", text='"v"')
    assert json.loads(spliced_json({'a"b': odd.value}, {'a"b': odd})) == {'a"b': "v"}


def test_a_shared_frame_with_parts_parses_to_its_dict():
    room = {"id": "r1", "seats": [{"seat": 0, "user": "小明"}]}
    view = {"hand": ["7H"], "history": []}
    f = SharedFrame({"type": "state", "room": room, "view": view, "seq": 3})
    f.parts = {"room": JsonText(room), "view": JsonText(view)}
    assert json.loads(frame_json(f)) == dict(f)
    assert frame_json(f) is frame_json(f)  # made once


def _positions(seed: int, actions: int):
    """Yield every position of a random game (random legal actions: many deals, tributes and returns)."""
    rng = random.Random(seed)
    game = Game(seed=seed)
    for _ in range(actions):
        yield game
        if game.over:
            return
        legal = game.legal_actions()
        game.apply(legal[rng.randrange(len(legal))], game.to_act())


def test_views_sharing_a_history_equal_the_views_made_alone_in_every_phase():
    names = ["甲", "b", "", "bot:normal"]
    phases: set[str] = set()
    spliced = 0
    for seed in (1, 2):
        for game in _positions(seed, 1500):
            shared: dict = {}
            phases.add(game.phase)
            for seat in (0, 2, 1, None, 3):
                view = view_for(game, seat, names, shared)
                alone = view_for(game, seat, names)
                assert view == alone
                text = view_text(view, game.rules, shared).text()
                assert json.loads(text) == json.loads(json.dumps(alone, ensure_ascii=False))
                if game.phase == "play":  # one history for all four seats and the spectators
                    assert view["history"] is shared["history"][1].value
                    spliced += 1
    assert {"play", "tribute", "return"} <= phases
    assert spliced > 1000


def test_every_frame_a_table_sends_parses_to_its_dict_and_shows_each_seat_only_its_own_history():
    """A table with four people and a spectator, played at random through several deals (tribute,
    return and the pause between deals included): every queued frame's text parses to the frame,
    each seat's history is the one made for that seat alone, and while tributes or returns are
    pending nobody sees another seat's card (R50)."""
    import asyncio

    from test_server_security import _table

    from guandan.server.connections import Conn

    names = ["p0", "p1", "p2", "p3"]
    seen = {"frames": 0, "hidden": 0, "between": 0}

    def check(conns, spectator, game) -> None:
        for c in [*conns, spectator]:
            while not c.queue.empty():
                f = c.queue.get_nowait()
                if not isinstance(f, dict) or f.get("type") != "state":
                    continue
                parsed = json.loads(frame_json(f))
                assert parsed == json.loads(json.dumps(dict(f), ensure_ascii=False))
                seat = parsed["seat"]
                alone = view_for(game, seat, names)
                assert parsed["view"]["history"] == json.loads(json.dumps(alone["history"]))
                assert parsed["room"]["id"] == "unit0001"
                seen["frames"] += 1
                seen["between"] += parsed["between"] is not None
                if game.phase in ("tribute", "return"):
                    private = [h for h in parsed["view"]["history"] if h[1][0] in ("tribute", "return")]
                    assert all(s == seat for s, _ in private)  # only one's own card, before the reveal
                    mine = [h for h in json.loads(json.dumps(view_for(game, 0, names)["history"]))
                            if h[1][0] in ("tribute", "return")]
                    if seat != 0 and mine:
                        seen["hidden"] += 1
                        assert not any(h in parsed["view"]["history"] for h in mine)

    async def main() -> None:
        table, conns = _table(None)  # type: ignore[arg-type]
        table.game = Game(seed=7)
        spectator = Conn(None, None)
        table.conns.add(spectator)
        rng = random.Random(7)
        for _ in range(900):
            game = table.game
            if game.over:
                break
            if table.between is not None:
                for c in conns:
                    await table.ready(c)
                for _ in range(200):  # everyone ready: the table starts the next deal in a task of its own
                    if table.between is None:
                        break
                    await asyncio.sleep(0.01)
                assert table.between is None
                check(conns, spectator, table.game)
                continue
            seat = game.to_act()
            legal = game.legal_actions()
            table._apply(seat, legal[rng.randrange(len(legal))])
            check(conns, spectator, table.game)

    asyncio.run(main())
    assert seen["frames"] > 3000 and seen["between"] > 0
    assert seen["hidden"] > 0  # some frame went out while seat 0's own tribute or return card was hidden
