"""State frames built by the server's fast paths equal the generic ones (DESIGN.md section 2).

The server builds every seat's ``view`` without ``SeatView.to_json`` (cached action texts, one
rule-options dict per rule set): for every position of whole seeded games (tribute, return and
play; official and anhui rules with hidden card counts, docs/rules.md R32, AMB-24) the result must be
exactly ``seat_view(game, seat).to_json()``.
"""

from __future__ import annotations

import json

import pytest

from guandan.agents.registry import make_agent
from guandan.core.match import Game
from guandan.core.rules import RuleSet
from guandan.core.views import seat_view
from guandan.server.table.views import _seat_json


@pytest.mark.parametrize("preset", ["official", "anhui"])
def test_seat_json_equals_the_views_to_json_in_every_phase(preset: str) -> None:
    rules = RuleSet.preset(preset)
    if preset == "anhui":
        rules = rules.replace(card_counts="le10")
    game = Game(rules, seed=5, max_games=1)
    agents = [make_agent("heuristic", 20 + s) for s in range(4)]
    phases = set()
    for _ in range(600):
        if game.over:
            break
        phases.add(game.phase)
        for s in range(4):
            fast = _seat_json(game, s)
            assert fast == seat_view(game, s).to_json()
            assert list(fast) == list(seat_view(game, s).to_json())  # same key order
        seat = game.to_act()
        game.apply(agents[seat].act(seat_view(game, seat)), seat)
    assert {"play", "tribute"} <= phases
    # the shared rule-options dict serialises like a fresh one
    assert json.loads(json.dumps(_seat_json(game, 0)["rules"])) == rules.to_dict()
