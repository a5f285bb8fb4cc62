"""The search path of the core: Deal.clone and push_unchecked/pop_unchecked (DESIGN.md section 2).

Undoing every pushed action must give back exactly the state before (hands, counts, trick,
play to beat, passes, finished seats, result, history, legal actions), and a pushed action
must leave the same state as the checked ``apply``. ``apply`` itself keeps checking.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from guandan.core.errors import IllegalAction
from guandan.core.match import Game

_FIELDS = ("hands", "n_cards", "trick", "top", "top_seat", "passes", "leader", "turn", "finished",
           "result", "history", "phase", "jiefeng_seat")


def _state(deal):
    return {k: (list(map(list, v)) if k == "hands" else (list(v) if isinstance(v, list) else v))
            for k, v in ((k, getattr(deal, k)) for k in _FIELDS)}


def _play_position(seed: int, steps: int) -> Game:
    game = Game(seed=seed)
    rng = random.Random(seed)
    for _ in range(steps):
        if game.settlements or game.deal.phase != "play":
            break
        game.apply(rng.choice(game.legal_actions()))
    return game


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**31), steps=st.integers(0, 120), depth=st.integers(1, 60))
def test_push_pop_restores_the_state_exactly(seed, steps, depth):
    game = _play_position(seed, steps)
    deal = game.deal.clone()
    if deal.phase != "play":
        return
    before = _state(deal)
    legal_before = sorted(deal.legal_actions())
    rng = random.Random(seed + 1)
    pushed = []
    checked = deal.clone()
    for _ in range(depth):
        if deal.phase != "play":
            break
        act = rng.choice(deal.legal_actions())
        deal.push_unchecked(act)
        checked.apply(act)  # the checked path reaches the same state
        pushed.append(act)
        assert _state(deal) == _state(checked)
    for act in reversed(pushed):
        assert deal.pop_unchecked() == act
    assert _state(deal) == before
    assert sorted(deal.legal_actions()) == legal_before


def test_pop_without_push_raises():
    deal = Game(seed=1).deal
    with pytest.raises(IndexError):
        deal.pop_unchecked()


def test_clone_is_independent():
    game = _play_position(3, 10)
    deal = game.deal
    copy = deal.clone()
    act = copy.legal_actions()[-1]
    copy.push_unchecked(act)
    assert _state(deal) != _state(copy)
    assert deal.history == game.deal.history and len(copy.history) == len(deal.history) + 1


def test_apply_still_checks():
    game = Game(seed=2)
    deal = game.deal.clone()
    with pytest.raises(IllegalAction):
        deal.apply(("single", 0, (53, 53)))


def test_bench_search_reports_every_figure():
    import json

    from typer.testing import CliRunner

    from guandan.cli import app

    res = CliRunner().invoke(app, ["bench-search", "--positions", "1", "--rollouts", "1", "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout.strip().splitlines()[-1])
    for key in ("clone_us", "push_pop_us", "apply_us", "sample_ms", "rollout_ms", "rollout_heuristic_ms"):
        assert data[key] > 0, key
    assert data["actions_per_rollout"] >= 4  # a deal needs at least 4 plays from 27 cards each
