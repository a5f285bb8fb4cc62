"""``view.owed_to`` (docs/table-contract.md section 3): to whom the seat to act pays its tribute or
returns its card, so the table can name the receiver instead of a fixed "对方" (docs/rules.md
R44: the 末游 pays 头游, in a 1-4 its own partner; R46: a double tribute is shared out by the
cards, the higher to 头游; R47: a card goes back to the seat whose card was received)."""

from __future__ import annotations

import random

from guandan.core.match import Game
from guandan.core.rules import RuleSet
from guandan.server.table.views import owed_to, view_for

NAMES = ["a", "b", "c", "d"]


def _second_deals(rules: RuleSet, want: set[str]) -> dict[str, Game]:
    """Second deals in their tribute phase, one per previous result in ``want`` (1-2, 1-3, 1-4)."""
    found: dict[str, Game] = {}
    for seed in range(400):
        game = Game(rules, seed=seed)
        rng = random.Random(seed)
        while game.deal_number == 1 and not game.over:
            game.apply(rng.choice(game.legal_actions()))
        plan = game.deal.plan
        if game.over or plan is None or plan.anti_tribute or game.phase != "tribute":
            continue
        result = game.deal._prev.result
        if result in want and result not in found:
            found[result] = game
        if set(found) == want:
            break
    assert set(found) == want, sorted(found)
    return found


def test_owed_to_names_the_receiver_of_each_tribute_and_return() -> None:
    for result, game in _second_deals(RuleSet.official(), {"1-2", "1-3", "1-4"}).items():
        d = game.deal
        head = d.plan.head
        payer = game.to_act()
        expect = [head, (head + 2) % 4] if result == "1-2" else [head]
        assert owed_to(game) == expect, result
        assert view_for(game, payer, NAMES)["owed_to"] == expect
        assert view_for(game, None, NAMES)["owed_to"] == expect  # public (R50)
        if result == "1-4":
            assert head == (payer + 2) % 4, "a 1-4 tribute goes to the payer's own partner (R44)"
        else:
            assert head % 2 != payer % 2
        while game.phase == "tribute":
            game.apply(game.legal_actions()[0])
        assert game.phase == "return"
        paid = [ev for ev in game.events if ev["type"] == "tribute_paid"][-1]["tributes"]
        while game.phase == "return":
            receiver = game.to_act()
            whose = [p for p, r, _card in paid if r == receiver]
            assert owed_to(game) == whose and len(whose) == 1, (result, receiver, paid)
            game.apply(game.legal_actions()[0])
        assert owed_to(game) == [] and view_for(game, 0, NAMES)["owed_to"] == []


def test_owed_to_under_remaining_cards_and_next_seat_returns() -> None:
    """``double_tribute_by = remaining_cards`` fixes each payer's receiver before the cards are
    seen (AMB-05), so owed_to names one seat, the one the card then goes to; ``return_to =
    next_seat`` (AMB-07) sends each return to the receiver's 下家."""
    rules = RuleSet.from_dict({"double_tribute_by": "remaining_cards", "return_to": "next_seat"}, RuleSet.official())
    game = _second_deals(rules, {"1-2"})["1-2"]
    expected: dict[int, list[int]] = {}
    while game.phase == "tribute":
        expected[game.to_act()] = owed_to(game)
        assert len(expected[game.to_act()]) == 1
        game.apply(game.legal_actions()[0])
    paid = [ev for ev in game.events if ev["type"] == "tribute_paid"][-1]["tributes"]
    assert {p: [r] for p, r, _card in paid} == expected
    while game.phase == "return":
        assert owed_to(game) == [(game.to_act() + 1) % 4]
        game.apply(game.legal_actions()[0])
