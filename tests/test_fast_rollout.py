"""The rollout policy that reads the deal itself (guandan.agents.fast_rollout).

It only ever plays legal actions (checked by the engine's own ``apply`` over complete deals), it
plays every deal to its end (R29-R33), its decisions do not depend on its seed, its cheap "no
answer" test never hides a legal answer, and it makes the plain moves a player must make: going
out when one play empties the hand (R31), not beating the partner's trick for nothing (R28).
"""

from __future__ import annotations

import random

import pytest

from guandan.agents.fast_rollout import FastRolloutPolicy, _surely_no_answer
from guandan.agents.heuristic import HeuristicAgent
from guandan.agents.levels import parse_spec
from guandan.agents.search import SearchAgent, rollout
from guandan.core.cards import parse_cards, parse_rank
from guandan.core.deal import OVER, Deal
from guandan.core.match import Game
from guandan.core.movegen import legal_plays
from guandan.core.plays import PAIR, PASS, SINGLE, STRAIGHT, TRIPLE
from guandan.core.rules import RuleSet
from guandan.core.views import seat_view


def _deal(hands: list[str], level: str = "2", leader: int = 0) -> Deal:
    return Deal(RuleSet.official(), parse_rank(level), [parse_cards(h) for h in hands], random.Random(0),
                first_leader=leader)


def _play(deal: Deal, cards: str) -> None:
    """Apply the legal play made of exactly ``cards`` (checked by the engine)."""
    want = parse_cards(cards)
    acts = [a for a in deal.legal_actions() if a[0] != "pass" and tuple(sorted(a[2])) == want]
    assert acts, cards
    deal.apply(acts[0])


@pytest.mark.parametrize("seed", range(8))
def test_plays_only_legal_actions_to_the_end_of_the_deal(seed):
    deal = Game(seed=seed).deal.clone()
    policy = FastRolloutPolicy()
    n = 0
    while deal.phase != OVER:
        act = policy.act_deal(deal)
        assert act in deal.legal_actions()
        deal.apply(act)  # the engine's checked path: R23-R33
        n += 1
        assert n < 1000
    assert deal.result is not None
    assert len(deal.finished) >= 2  # R32/R35: a deal ends once a team's result is settled


def test_rollout_with_the_policy_scores_a_finished_deal():
    deal = Game(seed=11).deal.clone()
    win, levels = rollout(deal, FastRolloutPolicy(), team=0)
    assert deal.phase == OVER
    assert win in (1, -1)
    assert abs(levels) in (1, 2, 3)  # R35: 1-4, 1-3, 1-2 finishes
    assert (levels > 0) == (win > 0)


def test_deterministic_whatever_the_seed():
    def actions(seed: int) -> list:
        deal = Game(seed=5).deal.clone()
        rollout(deal, FastRolloutPolicy(seed), team=0)
        return deal.history

    assert actions(1) == actions(2) == actions(1)


def test_act_from_a_view_answers_a_legal_action():
    game = Game(seed=3)
    policy = FastRolloutPolicy()
    h = HeuristicAgent()
    k = 0
    while not game.settlements and k < 400:
        seat = game.to_act()
        view = seat_view(game, seat)
        if view.phase == "play":
            assert policy.act(view) in view.legal_actions
        game.apply(h.act(view), seat)
        k += 1


def test_goes_out_when_an_answer_empties_the_hand():
    # R31: a pair of 9s is the seat's last play and beats the pair of 5s (R23)
    deal = _deal(["5S 5D 3C 4C KS", "9S 9D", "7S 8S JC QD", "6H 6D TC"])
    _play(deal, "5S 5D")
    assert deal.turn == 1
    act = FastRolloutPolicy().act_deal(deal)
    assert act[0] == PAIR and tuple(sorted(act[2])) == parse_cards("9S 9D")


def test_leads_the_whole_hand_when_it_is_one_play():
    # 3-4-5-6-7 of mixed suits is a straight (R18); at level 2 the wild is 2H (not held)
    deal = _deal(["3S 4D 5C 6H 7S", "9S 9D", "7D 8S JC QD", "6D TC"])
    act = FastRolloutPolicy().act_deal(deal)
    assert act[0] == STRAIGHT and len(act[2]) == 5


def test_does_not_beat_the_partners_trick_for_nothing():
    # seat 0 leads a single 3; seat 1 cannot answer; seat 2 (partner, ten cards, not going out)
    # passes rather than beat its partner (R28 allows it; the heuristic keeps the partner's lead)
    deal = _deal(["3S 4C 8C 9H", "3D", "4S 8D 9C JC QH KD AS 7C 6D 5H", "6S 7H TD JS"])
    _play(deal, "3S")
    assert deal.turn == 1
    assert FastRolloutPolicy().act_deal(deal) == PASS  # an equal single never beats (R26)
    deal.apply(PASS)
    assert deal.turn == 2
    assert FastRolloutPolicy().act_deal(deal) == PASS


def test_no_answer_test_never_hides_a_legal_answer():
    rng = random.Random(7)
    deck = [f for f in range(54) for _ in range(2)]
    said_no = 0
    for _ in range(4000):
        level = rng.randrange(13)
        n = rng.randint(1, 14)
        counts = [0] * 54
        for f in rng.sample(deck, n):
            counts[f] += 1
        k = rng.choice((1, 2, 3))
        r = rng.randrange(15 if k < 3 else 13)
        faces = (52 + r - 13,) * k if r >= 13 else (4 * r,) * k
        top = ({1: SINGLE, 2: PAIR, 3: TRIPLE}[k], r, faces)
        if _surely_no_answer(counts, level, top, n):
            said_no += 1
            assert legal_plays(counts, level, top) == []
    assert said_no > 1000  # the test is worth having: it settles most hopeless follows


def test_search_with_fast_rollouts_is_deterministic_for_a_seed():
    game = Game(seed=2)
    h = HeuristicAgent()
    views = []
    while not game.settlements and len(views) < 2:
        seat = game.to_act()
        v = seat_view(game, seat)
        if v.phase == "play" and len(v.legal_actions) >= 3 and len(v.history) > 60:
            views.append(v)
        game.apply(h.act(v), seat)
    assert views
    for v in views:
        a = SearchAgent(3, worlds=3, late_rollout_policy=FastRolloutPolicy(), late_cards=None, belief_weight=2,
                        belief_model=FastRolloutPolicy())
        b = SearchAgent(3, worlds=3, late_rollout_policy=FastRolloutPolicy(), late_cards=None, belief_weight=2,
                        belief_model=FastRolloutPolicy())
        assert a.act(v) == b.act(v)
        assert a.last.means == b.last.means
        assert a.failures == b.failures == 0


def test_spec_options():
    _, kw = parse_spec("hard:rollout=fast,belief_model=fast")
    assert isinstance(kw["late_rollout_policy"], FastRolloutPolicy)
    assert isinstance(kw["belief_model"], FastRolloutPolicy)
    _, kw = parse_spec("hard:rollout=heuristic")
    assert type(kw["late_rollout_policy"]) is HeuristicAgent
    with pytest.raises(ValueError, match="rollout"):
        parse_spec("hard:rollout=bogus")


def _late_views(seed: int, n: int):
    from guandan.agents.search import is_late

    game = Game(seed=seed)
    h = HeuristicAgent()
    out = []
    while not game.settlements and len(out) < n:
        seat = game.to_act()
        v = seat_view(game, seat)
        if v.phase == "play" and len(v.legal_actions) > 1 and not v.finished and is_late(v, 10):
            out.append((v, [tuple(f for f in range(54) for _ in range(game.deal.hands[s][f])) for s in range(4)]))
        game.apply(h.act(v), seat)
    return out


def test_seat_by_seat_agreement_equals_the_replayed_agreement():
    from guandan.agents.search import SeatAgreement, past_decisions, world_agreement
    from guandan.core.worlds import WorldConstraints

    model = FastRolloutPolicy(dec_budget=400, max_eval=6, incremental=False)
    rng = random.Random(4)
    for v, truth in _late_views(1001, 6):
        dec = past_decisions(v, 8)
        cons = WorldConstraints(v)
        split = SeatAgreement(v, dec, model, cons.sample(rng))
        for _ in range(3):
            w = cons.sample(rng)
            assert split.world(w) == world_agreement(v, w, dec, model)
        # the real hands explain the decisions of heuristic players (the model is the
        # heuristic's rules read from the deal)
        assert split.world(truth) == world_agreement(v, truth, dec, model) >= len(dec) - 1


def test_belief_chain_keeps_worlds_consistent_and_is_deterministic():
    from guandan.agents.search import belief_chain, past_decisions, world_agreement
    from guandan.core.worlds import WorldConstraints

    model = FastRolloutPolicy(dec_budget=400, max_eval=6, incremental=False)
    for v, _truth in _late_views(1002, 3):
        dec = past_decisions(v, 4)
        cons = WorldConstraints(v)
        w0 = cons.sample(random.Random(1))
        w1, a1 = belief_chain(cons, w0, v, dec, model, 4, 15, random.Random(2))
        w2, a2 = belief_chain(cons, w0, v, dec, model, 4, 15, random.Random(2))
        assert (w1, a1) == (w2, a2)
        assert cons.consistent(w1)  # counts, seen cards, tribute facts (module worlds)
        assert a1 == world_agreement(v, w1, dec, model)


def test_chain_spec_searches_legally():
    from guandan.agents import make_agent

    agent = make_agent("hard:worlds=2,workers=1,chain=3,late=all", 5)
    for v, _truth in _late_views(1003, 2):
        assert agent.act(v) in v.legal_actions
    assert agent.failures == 0
