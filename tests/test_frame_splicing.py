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
                    assert view["history"] is shared["history"].value
                    spliced += 1
    assert {"play", "tribute", "return"} <= phases
    assert spliced > 1000
