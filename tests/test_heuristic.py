"""The ``heuristic`` agent: always legal, deterministic, and sensible in concrete situations.

Situations are built as the first deal of a game (level 2, so the 2s are level cards and the
two 2H are the wilds, R7-R8) with short explicit hands and a fixed first leader; the expected
decisions follow docs/rules.md (what beats what, R23-R26) and ordinary Guandan judgement.
"""

from __future__ import annotations

import statistics
import time

import pytest

from guandan.agents.base import RandomAgent

from guandan.agents.heuristic import HeuristicAgent, decompose
from guandan.agents.registry import make_agent
from guandan.core import Game, RuleSet, parse_card, parse_cards, seat_view
from guandan.core.cards import counts_of
from guandan.core.plays import PASS


def situation(hands: list[str], leader: int, actions: tuple[str, ...] = ()):  # type: ignore[no-untyped-def]
    """A game whose first deal has ``hands`` (text), ``leader`` first, after ``actions``
    (card text, or ``"pass"``) have been applied; returns ``(game, view of the seat to act)``."""
    game = Game(RuleSet.official(), seed=1, hands=[parse_cards(h) for h in hands], first_leader=leader)
    for a in actions:
        game.apply(PASS if a == "pass" else parse_cards(a))
    seat = game.to_act()
    assert seat is not None
    return game, seat_view(game, seat)


def decide(hands: list[str], leader: int, actions: tuple[str, ...] = ()):  # type: ignore[no-untyped-def]
    game, view = situation(hands, leader, actions)
    act = HeuristicAgent(0).act(view)
    assert act in view.legal_actions
    game.check(act)
    return act


FILL = "3C 4C 5C 6C 8C 9C TC JC QC KC AC 3D 4D"  # 13 cards for seats that only need to be there


# --- concrete decisions ----------------------------------------------------------------------
def test_follows_single_with_smallest_answer_not_bomb() -> None:
    # seat 0 leads the 8; seat 1 holds 9, K and four 5s: the 9 beats the 8 (R23), so no bomb
    act = decide(["8S 3H 4H 6H", "9S KH 5S 5H 5C 5D", FILL, FILL], 0, ("8S",))
    assert act == ("single", 7, (parse_card("9S"),))


def test_follows_pair_with_smallest_pair() -> None:
    act = decide(["8S 8D 3H 4H", "9S 9D QH QD KS", FILL, FILL], 0, ("8S 8D",))
    assert act == ("pair", 7, parse_cards("9S 9D"))


def test_does_not_overtake_partner_with_bomb_or_joker() -> None:
    # seat 0 leads the A; seat 1 passes; seat 2 (seat 0's partner) has a bomb and a small joker
    act = decide(["AS 3H 4H 5H 6H 7H 8H 9H", FILL, "7S 7H 7C 7D SJ 3S 4S 9D", FILL], 0, ("AS", "pass"))
    assert act == PASS


def test_bombs_an_opponent_about_to_go_out() -> None:
    # seat 1 leads an A keeping one card: without an answer it leads its last card and goes out
    act = decide([FILL, "AS 9S", "7S 7H 7C 7D 3S 4S 9D", FILL], 1, ("AS",))
    assert act == ("bomb", 5, parse_cards("7S 7H 7C 7D"))


def test_keeps_bomb_against_opponent_with_many_cards() -> None:
    # the same single A from an opponent holding 13 cards: no cheap answer, keep the bomb
    act = decide([FILL, "AS " + FILL, "7S 7H 7C 7D 3S 4S 9D", FILL], 1, ("AS",))
    assert act == PASS


@pytest.mark.parametrize(
    "hand, expected",
    [
        ("3S 4H 5C 6D 7S", ("straight", 5, parse_cards("3S 4H 5C 6D 7S"))),
        ("9S 9H 9C KD KC", ("full_house", 7, parse_cards("9S 9H 9C KD KC"))),
        ("QS QD", ("pair", 10, parse_cards("QS QD"))),
    ],
)
def test_leads_whole_hand_when_it_is_one_play(hand: str, expected: tuple[object, ...]) -> None:
    assert decide([hand, FILL, FILL, FILL], 0) == expected


def test_goes_out_when_following() -> None:
    # opponent leads a pair of 8s; the pair of 9s is the whole hand
    assert decide([FILL, "8S 8D 3H", "9S 9H", FILL], 1, ("8S 8D",)) == ("pair", 7, parse_cards("9S 9H"))
    # a bomb that empties the hand is played even against an opponent with many cards
    act = decide([FILL, "KS " + FILL, "3S 3H 3C 3D", FILL], 1, ("KS",))
    assert act == ("bomb", 1, parse_cards("3S 3H 3C 3D"))


def test_passes_partners_last_card_for_jiefeng() -> None:
    # seat 0 goes out with a 5 and seat 1 passes: if seat 2 also passes (and seat 3), seat 2
    # leads the next trick by 接风 (R30) without spending a card
    assert decide(["5S", FILL, "9S 3H 4H", FILL], 0, ("5S", "pass")) == PASS


def test_goes_out_over_partner() -> None:
    # the partner holds the trick with a 5, but the single 9 is the bot's last card
    assert decide(["5S 3H 4H", FILL, "9S", FILL], 0, ("5S", "pass")) == ("single", 7, (parse_card("9S"),))


def test_leads_weak_multi_card_combination() -> None:
    # the low straight sheds five weak cards; K, A and the small joker are kept
    act = decide(["3S 4H 5C 6D 7S KH AH SJ", FILL, FILL, FILL], 0)
    assert act == ("straight", 5, parse_cards("3S 4H 5C 6D 7S"))


def test_lead_avoids_single_when_opponent_has_one_card() -> None:
    # normally the lone 3 is the weakest lead ...
    assert decide(["3S QH QD", FILL, FILL, FILL], 0) == ("single", 1, (parse_card("3S"),))
    # ... but with the next opponent on one card a single could let them out: lead the pair
    assert decide(["3S QH QD", "KS", FILL, FILL], 0) == ("pair", 10, parse_cards("QH QD"))


def test_endgame_leads_unbeatable_single_first() -> None:
    # BJ cannot be beaten by any single (the other BJ is only equal, R26): lead it first to keep
    # the lead, then the 3 goes out
    assert decide(["BJ 3S", FILL, FILL, FILL], 0) == ("single", 14, (parse_card("BJ"),))
    # a small joker can still be beaten by an unseen BJ: two weak combinations, the 3 goes first
    assert decide(["SJ 3S", FILL, FILL, FILL], 0) == ("single", 1, (parse_card("3S"),))


# --- tribute and return ------------------------------------------------------------------------
def _tribute_hands(level: int) -> list[list[int]]:
    """Deal-2 hands for the tribute test: seat ``s`` holds the 10-J-Q-K-A straight flush of
    suit ``s``, a lone A of suit ``s+1`` and a 7 and an 8; no card of ranks 2-5 (the deal's
    level after deal 1 is 3, 4 or 5), no jokers."""
    assert level in (1, 2, 3)
    hands = []
    for s in range(4):
        h = [r * 4 + s for r in (8, 9, 10, 11, 12)]
        h.append(12 * 4 + (s + 1) % 4)
        h += [5 * 4 + s, 6 * 4 + s]
        hands.append(h)
    return hands


def test_tribute_keeps_straight_flush_and_return_is_least_useful() -> None:
    game_ref: list[Game] = []

    def source(g: int, d: int):  # type: ignore[no-untyped-def]
        if d == 1:
            return [parse_cards("3S 4S"), parse_cards("6D 7D"), parse_cards("9H TH"), parse_cards("JD QD")]
        if d == 2:
            return _tribute_hands(game_ref[0].level)
        return None

    game = Game(RuleSet.official(), seed=3, hands=source, first_leader=0)
    game_ref.append(game)
    agents = [HeuristicAgent(s) for s in range(4)]
    while game.deal_number == 1:
        s = game.to_act()
        game.apply(agents[s].act(seat_view(game, s)), s)
    assert game.phase == "tribute"
    checked_tribute = checked_return = 0
    while game.phase in ("tribute", "return"):
        s = game.to_act()
        view = seat_view(game, s)
        act = agents[s].act(view)
        assert act in view.legal_actions
        if view.phase == "tribute":
            # R45: an A must be paid (no jokers, no level card above A); keep the straight flush
            assert act == ("tribute", 12, (12 * 4 + (s + 1) % 4,))
            checked_tribute += 1
        else:
            plan = game.deal.plan
            target = dict(plan.returns_due)[s]
            face = act[2][0]
            # R47 (le10): 7, 8 or the 10 may go back; the 10 would break the straight flush
            assert face in (5 * 4 + s, 6 * 4 + s)
            if target % 2 != s % 2:  # to an opponent: the lowest useless card
                assert face == 5 * 4 + s
            checked_return += 1
        game.apply(act, s)
    assert checked_tribute >= 1 and checked_return >= 1


# --- decomposition -----------------------------------------------------------------------------
def _combos(text: str, level: int = 0) -> set[tuple[object, ...]]:
    d = decompose(counts_of(parse_cards(text)), level)
    return {(c[0], c[1]) for c in d.combos}


def test_decomposition_finds_straight_and_bomb() -> None:
    assert _combos("3S 4H 5C 6D 7S 9S 9H 9C 9D") == {("straight", 5), ("bomb", 7)}


def test_decomposition_uses_wild_to_complete_bomb() -> None:
    # level 2: 2H is wild; three 3s + the wild make a 4-card bomb (R14)
    assert _combos("2H 3S 3D 3C") == {("bomb", 1)}


def test_decomposition_full_house_carries_weakest_pair() -> None:
    # triple 9 + pair 4 as a full house; the pair of As stays on its own
    assert _combos("9S 9H 9C 4S 4D AS AD") == {("full_house", 7), ("pair", 12)}


# --- legality over whole games, determinism, speed ----------------------------------------------
def _play_checked(preset: str, seed: int, names: tuple[str, str]) -> tuple[Game, list[float]]:
    game = Game(RuleSet.preset(preset), seed=seed)
    agents = [
        HeuristicAgent(seed * 4 + s) if names[s % 2] == "heuristic" else RandomAgent(seed * 4 + s)
        for s in range(4)
    ]
    times: list[float] = []
    for _ in range(200_000):
        if game.over:
            break
        s = game.to_act()
        view = seat_view(game, s)
        t0 = time.perf_counter()
        act = agents[s].act(view)
        if isinstance(agents[s], HeuristicAgent):
            times.append(time.perf_counter() - t0)
        assert act in view.legal_actions
        game.check(act, s)
        game.apply(act, s)
    assert game.over
    return game, times


@pytest.mark.parametrize("preset, seed", [("official", 1), ("anhui", 2)])
def test_heuristic_games_are_legal(preset: str, seed: int) -> None:
    _play_checked(preset, seed, ("heuristic", "heuristic"))


def test_heuristic_legal_without_joker_pair_full_house_and_hidden_counts() -> None:
    # the bot plans with joker-pair full houses (R21 default); with the option off it must
    # still only play legal actions; with card_counts=le10 some counts are hidden (AMB-24)
    rules = RuleSet.official().replace(full_house_joker_pair=False, card_counts="le10")
    game = Game(rules, seed=12)
    agents = [HeuristicAgent(s) for s in range(4)]
    while not game.over:
        s = game.to_act()
        view = seat_view(game, s)
        act = agents[s].act(view)
        assert act in view.legal_actions
        game.apply(act, s)


@pytest.mark.parametrize("preset", ["classic", "yangzhou", "maanshan", "aicomp", "huaian"])
def test_heuristic_games_are_legal_all_presets(preset: str) -> None:
    _play_checked(preset, 7, ("heuristic", "heuristic"))
    _play_checked(preset, 8, ("heuristic", "random"))


@pytest.mark.slow
@pytest.mark.parametrize("preset", ["official", "anhui", "classic", "yangzhou", "maanshan", "aicomp"])
def test_heuristic_many_games_are_legal(preset: str) -> None:
    for seed in range(100, 110):
        _play_checked(preset, seed, ("heuristic", "heuristic"))
        _play_checked(preset, seed, ("random", "heuristic"))


def test_heuristic_is_deterministic_and_fast() -> None:
    g1, times = _play_checked("official", 5, ("heuristic", "random"))
    g2, _ = _play_checked("official", 5, ("heuristic", "random"))
    assert g1.events == g2.events
    # typical decision well under 10 ms (generous bound for a shared test machine)
    assert statistics.median(times) < 0.010


def test_make_agent_builds_heuristic() -> None:
    agent = make_agent("heuristic", 3)
    assert isinstance(agent, HeuristicAgent) and agent.name == "heuristic"


def test_no_legal_action_raises() -> None:
    game, _ = situation(["3S 4S", FILL, FILL, FILL], 0)
    view = seat_view(game, 1)  # not seat 1's turn: no legal actions in its view
    with pytest.raises(ValueError):
        HeuristicAgent().act(view)


def test_planned_joker_pair_full_house_falls_back_when_rule_is_off() -> None:
    # 333 + SJ SJ is a full house only with full_house_joker_pair (R21, EC-18); with the option
    # off the bot, which plans with it, must lead something legal instead
    rules = RuleSet.official().replace(full_house_joker_pair=False)
    game = Game(rules, seed=1, hands=[parse_cards("3S 3H 3D SJ SJ"), parse_cards(FILL),
                                      parse_cards(FILL), parse_cards(FILL)], first_leader=0)
    view = seat_view(game, 0)
    assert all(a[0] != "full_house" for a in view.legal_actions)
    act = HeuristicAgent(0).act(view)
    assert act in view.legal_actions
    assert act[0] in ("triple", "pair")
