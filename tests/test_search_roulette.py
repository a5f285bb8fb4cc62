"""The belief roulette of the search (``belief_slack``, spec option ``slack``).

Worlds that explain far fewer of the other seats' recent decisions than the best early world
carry almost no weight; the roulette rolls them out only with the probability of their weight
(and then counts them at the slack's weight), which keeps each world's expected weight
proportional to ``belief_weight ** agreements`` while the rollouts go where the weight is.
"""

from __future__ import annotations

import pytest

from guandan.agents.heuristic import HeuristicAgent
from guandan.agents.levels import HARD_DEFAULTS, parse_spec
from guandan.agents.search import SearchAgent, _belief_weight, _Task, is_late
from guandan.core.match import Game
from guandan.core.views import seat_view


def _late_view(seed: int):
    """The first late play-phase view (a hand of 10 cards or fewer, R31) with 3+ legal actions
    and no seat out yet, from heuristic self-play of game ``seed``."""
    game = Game(seed=seed)
    h = HeuristicAgent()
    while not game.settlements:
        seat = game.to_act()
        v = seat_view(game, seat)
        if v.phase == "play" and len(v.legal_actions) >= 3 and not v.finished and is_late(v, 10):
            return v
        game.apply(h.act(v), seat)
    raise AssertionError("no late view")


def _task(slack):
    v = _late_view(11)
    return _Task(v, (), "k", 0, 1, None, None, 50, HeuristicAgent(), None, None,
                 4, HeuristicAgent(), 4, slack)


def test_weights_within_the_slack_are_powers_and_the_rest_survive_with_their_probability():
    task = _task(1)
    # reference agreement 5, slack 1: agreement 6 weighs 4**2, 5 weighs 4, 4 weighs 1
    assert _belief_weight(task, 6, 5, 0) == 16
    assert _belief_weight(task, 5, 5, 0) == 4
    assert _belief_weight(task, 4, 5, 0) == 1
    # agreement 3: 4**-1 of the weight of agreement 4, so a quarter survive (weighing 1);
    # agreement 2: a sixteenth. Each draw is seeded by the world index: the same every run.
    n = 4000
    kept3 = [_belief_weight(task, 3, 5, i) for i in range(n)]
    kept2 = [_belief_weight(task, 2, 5, i) for i in range(n)]
    assert set(kept3) == {1, -1} and set(kept2) == {1, -1}
    assert 0.22 < kept3.count(1) / n < 0.28
    assert 0.045 < kept2.count(1) / n < 0.08
    assert kept3 == [_belief_weight(task, 3, 5, i) for i in range(n)]
    # without the roulette: belief_weight ** agreements
    assert _belief_weight(_task(None), 3, 5, 0) == 64


def test_a_wide_slack_keeps_every_world_and_gives_the_plain_weighted_means():
    """With a slack no world can fall below, every weight is the plain weight times one
    constant, so the weighted means (exact integer sums) are the same."""
    v = _late_view(12)
    plain = SearchAgent(seed=4, worlds=6, **HARD_DEFAULTS)
    wide = SearchAgent(seed=4, worlds=6, belief_slack=50, **HARD_DEFAULTS)
    assert plain.act(v) == wide.act(v)
    assert plain.last.means and plain.last.means == wide.last.means
    assert plain.failures == wide.failures == 0


def test_roulette_search_is_deterministic_and_the_same_over_worker_counts():
    v = _late_view(13)
    a = SearchAgent(seed=2, worlds=12, belief_slack=0, **HARD_DEFAULTS, workers=1)
    b = SearchAgent(seed=2, worlds=12, belief_slack=0, **HARD_DEFAULTS, workers=1)
    c = SearchAgent(seed=2, worlds=12, belief_slack=0, **HARD_DEFAULTS, workers=2)
    assert a.act(v) == b.act(v) == c.act(v)
    assert a.last.means == b.last.means == c.last.means
    assert a.failures == c.failures == 0 and c.pool_failures == 0, c.last_error
    assert a.last.worlds == 12  # rejected worlds count as sampled


def test_slack_option_and_bad_values():
    assert parse_spec("hard:slack=1")[1] == {"belief_slack": 1}
    with pytest.raises(ValueError, match="slack"):
        parse_spec("hard:slack=x")
    for bad in (-1, 1.5, True):
        with pytest.raises(ValueError, match="belief_slack"):
            SearchAgent(belief_slack=bad)
