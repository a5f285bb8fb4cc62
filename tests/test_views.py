"""Seat-view redaction (DESIGN.md section 2; docs/rules.md R32, R50, AMB-24).

The property: a seat's view depends only on its own cards and public information. So if the
*other* seats' hidden (never played) cards are permuted among them — each keeping its number
of cards and the cards it will act with — and the same actions are applied, the viewer's
``seat_view(...).to_json()`` never changes: in the play phase, and in the tribute and return
phases of a later deal. A return in a double tribute stays hidden until both returns are
revealed together (R47, R50). With ``card_counts = le10`` other seats' counts above 10 are
hidden (R32, AMB-24).
"""

from __future__ import annotations

import random
from collections import Counter

import pytest

from guandan.core.cards import FACE_RANK, faces_of, wild_face
from guandan.core.match import Game, shuffle_deal
from guandan.core.rules import RuleSet
from guandan.core.views import seat_view

TEN = 8  # rank index of T


def _permute_hidden(hands, viewer, keep, rng, movable=lambda f: True):
    """Permute the cards of the seats other than ``viewer`` among them.

    Each seat keeps its size and the cards in ``keep[seat]`` (a Counter); only cards for which
    ``movable(face)`` is true change hands.
    """
    new = [list(h) for h in hands]
    pool: list[int] = []
    fixed: dict[int, list[int]] = {}
    others = [s for s in range(4) if s != viewer]
    for s in others:
        rest = Counter(hands[s]) - keep[s]
        stay = list((Counter(hands[s]) - rest).elements())
        for f in sorted(rest.elements()):
            (pool if movable(f) else stay).append(f)
        fixed[s] = stay
    rng.shuffle(pool)
    for s in others:
        need = len(hands[s]) - len(fixed[s])
        new[s] = sorted(fixed[s] + pool[:need])
        pool = pool[need:]
    assert not pool
    for s in range(4):
        # no seat can hold a face more than twice (R1): redraw if it happens
        if any(n > 2 for n in Counter(new[s]).values()):
            return _permute_hidden(hands, viewer, keep, rng, movable)
    assert Counter(f for h in new for f in h) == Counter(f for h in hands for f in h)
    return new


def _views(game, seat):
    return seat_view(game, seat).to_json()


def _acted_cards(actions, seats=range(4)):
    keep = [Counter() for _ in range(4)]
    for s, a in actions:
        if a[0] != "pass" and s in seats:
            keep[s].update(a[2])
    return keep


@pytest.mark.parametrize("seed", range(8))
def test_permuting_hidden_cards_play_phase(seed):
    """R4 deal, random play: every seat's view is unchanged by permuting the others' hidden
    cards (the cards they will play stay with them)."""
    hands = shuffle_deal(random.Random(seed))
    leader = seed % 4
    g1 = Game(seed=seed, hands=hands, first_leader=leader)
    rng = random.Random(1000 + seed)
    actions = []
    while len(actions) < 40 and g1.deal_number == 1 and not g1.over:
        a = rng.choice(g1.legal_actions())
        actions.append((g1.to_act(), a))
        g1.apply(a)
    assert len(actions) >= 20
    for viewer in range(4):
        keep = _acted_cards(actions)
        hands2 = _permute_hidden(hands, viewer, keep, random.Random(seed * 10 + viewer))
        assert hands2[viewer] == sorted(hands[viewer])
        a_game = Game(seed=seed, hands=hands, first_leader=leader)
        b_game = Game(seed=seed, hands=hands2, first_leader=leader)
        differs = False
        for s, a in actions:
            assert _views(a_game, viewer) == _views(b_game, viewer)
            differs = differs or any(
                _views(a_game, o)["hand"] != _views(b_game, o)["hand"] for o in range(4) if o != viewer
            )
            a_game.apply(a, s)
            b_game.apply(a, s)
        assert _views(a_game, viewer) == _views(b_game, viewer)
        assert differs, "the permutation changed nothing: the test would be vacuous"


def _source(h1, h2):
    """Hand source: ``h1`` for deal 1, ``h2`` for deal 2, shuffled afterwards."""

    def src(game_number, deal_number):
        return h1 if deal_number == 1 else (h2 if deal_number == 2 else None)

    return src


def _play_first_deal(rules, seed, hand_source):
    game = Game(rules, seed=seed, hands=hand_source, first_leader=0)
    rng = random.Random(seed)
    actions = []
    while game.deal_number == 1:
        a = rng.choice(game.legal_actions())
        actions.append((game.to_act(), a))
        game.apply(a)
    return game, actions, rng


def _deal2_games(preset, want_double, n):
    """Seeds whose second deal has a (double if ``want_double``) tribute, not an anti-tribute."""
    rules = RuleSet.preset(preset)
    found = []
    seed = 0
    while len(found) < n:
        seed += 1
        h1 = shuffle_deal(random.Random(seed))
        h2 = shuffle_deal(random.Random(seed + 10_000))
        game, a1, rng = _play_first_deal(rules, seed, _source(h1, h2))
        plan = game.deal.plan
        if game.over or plan is None or plan.anti_tribute or plan.double != want_double:
            continue
        found.append((rules, seed, h1, h2, a1, game, rng))
    return found


@pytest.mark.parametrize("preset, double", [("official", False), ("official", True), ("anhui", True),
                                            ("yangzhou", True)])
def test_permuting_hidden_cards_tribute_and_return(preset, double):
    """Deal 2 with a tribute: through the tribute, return and first plays, every seat's view
    is unchanged when the others' hidden low cards (2..T, not level cards) are permuted; the
    payers' top cards, the returned cards and the played cards stay put."""
    for rules, seed, h1, h2, a1, game, rng in _deal2_games(preset, double, 2):
        level = game.deal.level
        a2 = []
        # tribute and return, then a few plays
        while game.deal_number == 2 and (game.phase in ("tribute", "return") or len(a2) < 40):
            a = rng.choice(game.legal_actions())
            a2.append((game.to_act(), a))
            game.apply(a)
        assert any(a[0] == "tribute" for _, a in a2) and any(a[0] == "return" for _, a in a2)
        w = wild_face(level)

        def movable(f, level=level, w=w):
            return f < 52 and f != w and FACE_RANK[f] <= TEN and FACE_RANK[f] != level

        for viewer in range(4):
            keep = [Counter(h2[s]) & k for s, k in enumerate(_acted_cards(a2))]
            h2b = _permute_hidden(h2, viewer, keep, random.Random(seed * 7 + viewer), movable)
            ga = Game(rules, seed=seed, hands=_source(h1, h2), first_leader=0)
            gb = Game(rules, seed=seed, hands=_source(h1, h2b), first_leader=0)
            for s, a in a1:
                ga.apply(a, s)
                gb.apply(a, s)
            phases = set()
            for s, a in a2:
                phases.add(ga.phase)
                assert ga.phase == gb.phase
                assert _views(ga, viewer) == _views(gb, viewer), (preset, seed, viewer, ga.phase)
                ga.apply(a, s)
                gb.apply(a, s)
            assert _views(ga, viewer) == _views(gb, viewer)
            assert {"tribute", "return", "play"} <= phases


def test_pending_double_tribute_return_is_hidden():
    """R47/R50: the two returns of a double tribute are revealed together. While the second
    receiver has not returned, nobody else can tell which card the first one returned."""
    checked = 0
    for rules, seed, h1, h2, a1, game, rng in _deal2_games("official", True, 6):
        while game.phase == "tribute":
            game.apply(rng.choice(game.legal_actions()))
        assert game.phase == "return"
        first = game.to_act()
        options = game.legal_actions()
        if len(options) < 2:
            continue
        ga, gb = game.clone(), game.clone()
        ga.apply(options[0])
        gb.apply(options[1])
        assert ga.phase == gb.phase == "return"
        second = ga.to_act()
        assert second != first
        for s in range(4):
            if s != first:
                assert _views(ga, s) == _views(gb, s), f"seat {s} sees seat {first}'s pending return"
        assert _views(ga, first) != _views(gb, first)  # the returner knows its own hand
        # the second return reveals both (R50): now the difference is public
        ret = ga.legal_actions()[0]
        assert ret in gb.legal_actions()
        ga.apply(ret)
        gb.apply(ret)
        assert ga.phase == gb.phase == "play"
        for s in range(4):
            if s != first:
                va, vb = _views(ga, s), _views(gb, s)
                assert va["tribute_events"] != vb["tribute_events"]
        checked += 1
    assert checked >= 2


def test_view_holds_only_own_hand():
    """A view's hand is the seat's own cards; other seats appear only as counts."""
    game = Game(seed=5)
    rng = random.Random(5)
    for _ in range(300):
        if game.over:
            break
        for s in range(4):
            v = seat_view(game, s)
            assert v.hand == faces_of(game.deal.hands[s])
            assert v.legal_actions == (tuple(game.legal_actions()) if game.to_act() == s else ())
            j = v.to_json()
            assert "hands" not in j
        game.apply(rng.choice(game.legal_actions()))


@pytest.mark.parametrize("mode", ["le10", "always"])
def test_card_counts_visibility(mode):
    """R32/AMB-24: with ``le10`` another seat's count is shown only at 10 cards or fewer; with
    ``always`` every count is shown. A seat always sees its own count."""
    rules = RuleSet.official().replace(card_counts=mode)
    game = Game(rules, seed=11)
    rng = random.Random(11)
    seen_hidden = seen_small = False
    for _ in range(400):
        if game.over or game.deal_number > 1:
            break
        n = game.deal.n_cards
        for viewer in range(4):
            counts = seat_view(game, viewer).card_counts
            for s in range(4):
                if mode == "always" or s == viewer or n[s] <= 10:
                    assert counts[s] == n[s]
                else:
                    assert counts[s] is None
                    seen_hidden = True
                if s != viewer and 0 < n[s] <= 10:
                    seen_small = True
        game.apply(rng.choice(game.legal_actions()))
    assert seen_small
    assert seen_hidden == (mode == "le10")
