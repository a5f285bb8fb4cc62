"""Engine behaviour on the rules and edge cases of docs/rules.md (ids cited per test).

Expected values are derived from the rule text, not from the engine's output.
"""

from __future__ import annotations

import random

import pytest

from guandan.core import (
    PASS,
    Deal,
    DealResult,
    Game,
    IllegalAction,
    MatchScore,
    NotationError,
    RuleConfigError,
    RuleSet,
    anhui_points,
    anhui_title,
    card_unicode,
    classify,
    parse_card,
    parse_cards,
    parse_rank,
    settle,
)
from guandan.core.deal import OVER, PLAY, RETURN, TRIBUTE, deal_outcome
from guandan.core.rules import PRESETS, apply_overrides

C = parse_cards
R = parse_rank


def play_of(cards: str, level: str, ptype: str | None = None):
    rs = classify(C(cards), R(level))
    if ptype:
        rs = [p for p in rs if p.type == ptype]
    assert len(rs) == 1, rs
    return rs[0]


# --- notation (issue item 2) ----------------------------------------------------------------
def test_notation_round_trip_and_errors() -> None:
    assert parse_card("TH") == 8 * 4 + 1
    assert parse_card("10h") == parse_card("TH")
    assert parse_card("sj") == 52 and parse_card("BJ") == 53
    assert card_unicode(parse_card("TH")) == "10♥"
    assert card_unicode(parse_card("AS")) == "A♠"
    with pytest.raises(NotationError) as e:
        parse_cards("TH 1X 9S")
    assert e.value.token == "1X" and "1X" in str(e.value)
    with pytest.raises(NotationError):
        parse_rank("Z")


# --- rule options (section P) ---------------------------------------------------------------
SECTION_P = {
    # option: (official, anhui, classic, huaian, yangzhou, maanshan, aicomp)  -- docs/rules.md section P
    "upgrade": ((3, 2, 1), (6, 4, 2), (3, 2, 1), (3, 2, 1), (3, 2, 1), (3, 2, 1), (3, 2, 1)),
    "target_level": ("A",) * 7,
    "pass_target": ("strict",) * 6 + ("double_up_only",),
    "target_no_upgrade_with_last": (False, False, False, False, True, False, False),
    "a_fail_limit": (3, 3, 3, 3, 3, 3, 2),
    "after_target": ("game_over", "game_over", "restart", "game_over", "game_over", "game_over", "game_over"),
    "streaks": (False, False, False, False, True, False, False),
    "return_rule": ("le10", "any", "any", "le10", "any", "any", "le10"),
    "double_tribute_by": ("card", "card", "remaining_cards", "card", "card", "card", "card"),
    "double_tribute_tie": ("seat", "random", "seat", "seat", "seat", "seat", "seat"),
    "return_to": ("payer", "payer", "payer", "payer", "next_seat", "next_seat", "payer"),
    "anti_tribute_single": ("payer", "payer", "team_if_opponents", "payer", "payer", "payer", "payer"),
    "full_house_joker_pair": (True,) * 7,
    "first_leader": ("turned_card", "random_seat", "turned_card", "turned_card", "turned_card", "turned_card", "random_seat"),
    "card_counts": ("always",) * 7,
    "points": (False, True, False, False, False, False, False),
    "clock_lead_s": (None,) * 7,
    "clock_follow_s": (None,) * 7,
    "no_shuffle": (False,) * 7,
    "single_deal": (False,) * 7,
}


def test_presets_match_section_p() -> None:
    names = ("official", "anhui", "classic", "huaian", "yangzhou", "maanshan", "aicomp")
    assert tuple(PRESETS) == names
    for option, values in SECTION_P.items():
        for name, value in zip(names, values):
            assert getattr(RuleSet.preset(name), option) == value, (name, option)
    assert set(SECTION_P) == set(RuleSet().to_dict())


def test_rule_errors_list_valid_values() -> None:
    with pytest.raises(RuleConfigError, match="valid options: upgrade"):
        apply_overrides(RuleSet.official(), ["nope=1"])
    with pytest.raises(RuleConfigError, match="strict, lenient, double_up_only"):
        RuleSet.official().replace(pass_target="sometimes")
    with pytest.raises(RuleConfigError, match="valid presets"):
        RuleSet.preset("tokyo")
    with pytest.raises(RuleConfigError):
        apply_overrides(RuleSet.official(), ["upgrade=3/2"])
    rs = apply_overrides(RuleSet.official(), ["upgrade=6/4/2", "a_fail_limit=null", "streaks=yes", "clock_lead_s=60"])
    assert rs.upgrade == (6, 4, 2) and rs.a_fail_limit is None and rs.streaks and rs.clock_lead_s == 60.0
    assert RuleSet.from_dict(rs.to_dict()) == rs
    assert rs.diff(RuleSet.official()) == {"upgrade": [6, 4, 2], "a_fail_limit": None, "streaks": True, "clock_lead_s": 60.0}


# --- comparison edge cases (R23-R26) -------------------------------------------------------
def test_bomb_ladder_ec09_ec12_ec15() -> None:
    from guandan.core import beats

    lv = R("9")
    five = play_of("AS AD AC AH AS", "9")
    sf_low = play_of("AH 2H 3H 4H 5H", "9", "straight_flush")
    six = play_of("3S 3D 3C 3H 3S 3D", "9")
    ten = play_of("8S 8S 8D 8D 8C 8C 8H 8H 9H 9H", "9")
    jokers = play_of("SJ SJ BJ BJ", "9")
    big = play_of("BJ", "9")
    four2 = play_of("2S 2D 2C 2H", "9")
    assert beats(sf_low, five, lv) and not beats(five, sf_low, lv)  # EC-09
    assert beats(six, sf_low, lv)
    assert ten.type == "bomb" and len(ten.cards) == 10  # EC-10
    assert beats(jokers, ten, lv) and not beats(ten, jokers, lv)  # EC-12
    assert beats(four2, big, lv)  # EC-15
    # EC-13: equal straight flushes in different suits never beat each other
    a = play_of("5S 6S 7S 8S 9S", "2")
    b = play_of("5H 6H 7H 8H 9H", "2")
    assert not beats(a, b, R("2")) and not beats(b, a, R("2"))


def test_level_bomb_at_most_eight_ec11() -> None:
    # the eight 7s at level 7 (two of them the wilds) are the largest 7-bomb
    eight = play_of("7S 7S 7H 7H 7C 7C 7D 7D", "7")
    assert eight.type == "bomb" and eight.rank == R("7")
    aces = play_of("AS AS AH AH AC AC AD AD", "7")
    from guandan.core import beats

    assert beats(eight, aces, R("7"))


# --- the play phase (R27-R33) -----------------------------------------------------------------
def _deal(hands: list[str], level: str = "5", leader: int = 0, rules: RuleSet | None = None) -> Deal:
    return Deal(rules or RuleSet.official(), R(level), [C(h) if h else () for h in hands], random.Random(0), first_leader=leader)


def test_leader_cannot_pass_ec23() -> None:
    d = _deal(["3S 4S", "6S 7S", "8S 9S", "TS JS"])
    with pytest.raises(IllegalAction) as e:
        d.apply(PASS)
    assert e.value.reason == "must_lead"


def test_passed_player_may_play_again_ec24() -> None:
    d = _deal(["3S 3D 8C", "4S AS", "6S 7S", "TS JS QS"])
    d.apply(play_of("3S", "5"))
    d.apply(PASS)  # seat 1 passes
    d.apply(play_of("6S", "5"))  # seat 2
    d.apply(play_of("TS", "5"))  # seat 3
    d.apply(PASS)  # seat 0
    assert d.turn == 1
    with pytest.raises(IllegalAction) as e:
        d.apply(play_of("4S", "5"))
    assert e.value.reason == "does_not_beat"
    d.apply(play_of("AS", "5"))  # the seat that passed earlier plays now (R28)
    assert d.top_seat == 1


def test_trick_end_skips_finished_seats_ec25_and_jiefeng_ec26() -> None:
    # seat 0 goes out with its last card; nobody beats it -> partner (seat 2) leads (R30)
    d = _deal(["AS", "3S 4S", "3D 4D", "3C 4C"])
    d.apply(play_of("AS", "5"))
    assert d.finished == [0]
    for _ in range(3):
        d.apply(PASS)
    assert d.phase == PLAY and d.top is None and d.turn == 2 and d.jiefeng_seat == 2


def test_no_jiefeng_when_final_play_is_beaten_ec27() -> None:
    d = _deal(["9S", "3S 4S", "TD 4D", "3C 4C"])
    d.apply(play_of("9S", "5"))
    d.apply(PASS)
    d.apply(play_of("TD", "5"))  # the partner beats it
    d.apply(PASS)  # seat 3
    d.apply(PASS)  # seat 1; seat 0 is out and skipped
    assert d.top is None and d.turn == 2 and d.jiefeng_seat is None


def test_double_down_ends_deal_mid_trick_ec29() -> None:
    d = _deal(["AS", "3S 4S", "KD", "3C 4C"])
    d.apply(play_of("AS", "5"))
    for _ in range(3):
        d.apply(PASS)
    d.apply(play_of("KD", "5"))  # partner goes out second: 1-2
    assert d.phase == OVER and d.result is not None
    assert d.result.finish_order == (0, 2) and d.result.result == "1-2" and d.result.last == (1, 3)
    assert d.result.rest == (0, 2, 0, 2)


def test_third_out_ends_deal_ec30() -> None:
    assert deal_outcome([0, 1]) is None
    res = deal_outcome([0, 1, 3])
    assert res is not None and res.finish_order == (0, 1, 3, 2) and res.result == "1-4" and res.last == (2,)


def test_check_reasons() -> None:
    d = _deal(["5S 5H 7S 7D 7C", "3S 4S", "8S 9S", "TS JS"], level="5")
    with pytest.raises(IllegalAction) as e:
        d.check(play_of("3S", "5"), seat=1)
    assert e.value.reason == "not_your_turn"
    with pytest.raises(IllegalAction) as e:
        d.check(play_of("AS", "5"))
    assert e.value.reason == "not_in_hand"
    with pytest.raises(IllegalAction) as e:
        d.check(("pair", R("7"), C("5S 7S")))
    assert e.value.reason == "not_a_reading"
    # 777 + 5H 5S at level 5: full house or... only a full house (5S is natural): 7 7 7 5S 5H(wild)
    with pytest.raises(IllegalAction) as e:
        d.check(("tribute", R("7"), C("7S")))
    assert e.value.reason == "wrong_phase"
    with pytest.raises(IllegalAction) as e:
        d.check("garbage")
    assert e.value.reason == "malformed"


def test_ambiguous_selection_needs_declaration_ec47() -> None:
    # EC-20: level 5, 7 7 7 + W W: full house or 5-bomb; a bare card list is ambiguous
    d = _deal(["7S 7D 7C 5H 5H 3S", "3D 4S", "8S 9S", "TS JS"], level="5")
    with pytest.raises(IllegalAction) as e:
        d.check(list(C("7S 7D 7C 5H 5H")))
    assert e.value.reason == "ambiguous"
    act = d.apply(("full_house", R("7"), C("7S 7D 7C 5H 5H")))
    assert act[0] == "full_house"
    # the declared reading is what others must beat: a 4-bomb beats it, a lower full house does not
    assert d.top == act


# --- tribute (R43-R50) ------------------------------------------------------------------------
def _tribute_deal(prev: tuple[int, ...], hands: dict[int, str], level: str, rules: RuleSet | None = None,
                  rest: tuple[int, ...] = (0, 0, 0, 0), seed: int = 0) -> Deal:
    hs = [C(hands.get(s, "")) if hands.get(s) else () for s in range(4)]
    return Deal(rules or RuleSet.official(), R(level), hs, random.Random(seed), prev=DealResult(prev, rest))


def test_tribute_skips_wild_ec31() -> None:
    d = _tribute_deal((0, 1, 2, 3), {3: "7H 7S 4C", 0: "3C 9S"}, "7")
    assert d.phase == TRIBUTE and d.turn == 3
    assert d.tribute_options(3) == [parse_card("7S")]
    with pytest.raises(IllegalAction) as e:
        d.apply(("tribute", R("7"), C("7H")))
    assert e.value.reason == "tribute_not_highest"


def test_payer_chooses_among_copies_r45() -> None:
    d = _tribute_deal((0, 1, 2, 3), {3: "AS AD 4C", 0: "3C 9S"}, "7")
    assert sorted(d.tribute_options(3)) == sorted(C("AS AD"))
    d.apply(("tribute", R("A"), C("AD")))
    assert d.phase == RETURN and d.turn == 0
    assert d.hands[0][parse_card("AD")] == 1 and d.hands[3][parse_card("AD")] == 0


def test_partner_big_joker_does_not_resist_ec32_and_joint_double_ec33() -> None:
    d = _tribute_deal((0, 1, 2, 3), {3: "BJ 4C", 1: "BJ 5C", 0: "3C"}, "7")
    assert d.plan is not None and not d.plan.anti_tribute and d.tribute_options(3) == [parse_card("BJ")]
    d2 = _tribute_deal((0, 2), {1: "BJ 4C", 3: "BJ 5C", 0: "3C", 2: "3D"}, "7")
    assert d2.plan is not None and d2.plan.anti_tribute and d2.plan.anti_seats == (1, 3)
    assert d2.phase == PLAY and d2.turn == 0  # EC-40: 头游 leads


def test_double_tribute_big_joker_goes_to_head_ec34() -> None:
    d = _tribute_deal((2, 0), {3: "BJ 4C", 1: "AS 5C", 2: "3C", 0: "3D"}, "7")
    # head is seat 2; payers 3 (head's 下家) and 1
    d.apply(("tribute", 14, C("BJ")))
    d.apply(("tribute", R("A"), C("AS")))
    assert d.plan is not None and d.plan.to == {3: 2, 1: 0}
    assert d.phase == RETURN and d.turn == 2  # the head returns first
    d.apply(("return", R("3"), C("3C")))
    d.apply(("return", R("3"), C("3D")))
    assert d.phase == PLAY and d.turn == 3  # the BJ payer leads (R49)


def test_double_tribute_tie_random_uses_rng_amb04() -> None:
    seen = set()
    for seed in range(12):
        d = _tribute_deal((0, 2), {1: "AS 5C", 3: "AD 6C", 0: "3C", 2: "3D"}, "8",
                          rules=RuleSet.preset("anhui"), seed=seed)
        d.apply(("tribute", R("A"), C("AS")))
        d.apply(("tribute", R("A"), C("AD")))
        assert d.plan is not None
        seen.add(d.plan.to[1])
    assert seen == {0, 2}


def test_double_tribute_by_remaining_cards_amb05() -> None:
    rules = RuleSet.official().replace(double_tribute_by="remaining_cards")
    # seat 3 had more cards left than seat 1 -> seat 3 pays 头游 although its card is lower
    d = _tribute_deal((0, 2), {1: "AS 5C", 3: "KD 6C", 0: "3C", 2: "3D"}, "8", rules=rules, rest=(0, 4, 0, 9))
    d.apply(("tribute", R("A"), C("AS")))
    d.apply(("tribute", R("K"), C("KD")))
    assert d.plan is not None and d.plan.to == {3: 0, 1: 2} and d.plan.first_leader == 3


def test_return_to_next_seat_amb07() -> None:
    rules = RuleSet.preset("yangzhou")
    # head 0; seat 3 (head's 上家) pays the higher card to 0, seat 1 pays 2; returns go to each receiver's 下家
    d = _tribute_deal((0, 2), {1: "KS 5C", 3: "AD 6C", 0: "3C 4C", 2: "3D 4D"}, "8", rules=rules)
    d.apply(("tribute", R("K"), C("KS")))
    d.apply(("tribute", R("A"), C("AD")))
    assert d.plan is not None and d.plan.to == {3: 0, 1: 2}
    assert d.plan.returns_due == [(0, 1), (2, 3)]


def test_return_limits_ec38_ec39_and_partner_only() -> None:
    d = _tribute_deal((0, 1, 2, 3), {3: "AS 4C", 0: "TS JS 9D"}, "T")
    d.apply(("tribute", R("A"), C("AS")))
    assert sorted(d.return_options(0, 3)) == [parse_card("9D")]  # 10 is the level: limit 9 (EC-38)
    d2 = _tribute_deal((0, 1, 2, 3), {3: "AS 4C", 0: "JS QD KH"}, "5")
    d2.apply(("tribute", R("A"), C("AS")))
    assert d2.return_options(0, 3) == [parse_card("JS")]  # only J and above: the smallest (EC-39)
    with pytest.raises(IllegalAction) as e:
        d2.apply(("return", R("A"), C("AS")))
    assert e.value.reason == "return_too_high"
    rules = RuleSet.official().replace(return_rule="le10_partner_only")
    d3 = _tribute_deal((0, 1, 2, 3), {3: "AS 4C", 0: "JS QD 3H"}, "5", rules=rules)  # 1-3: payer is an opponent
    d3.apply(("tribute", R("A"), C("AS")))
    assert d3.return_limit(0, 3) is None and parse_card("AS") in d3.return_options(0, 3)
    d4 = _tribute_deal((0, 1, 3, 2), {2: "AS 4C", 0: "JS QD 3H"}, "5", rules=rules)  # 1-4: payer is the partner
    d4.apply(("tribute", R("A"), C("AS")))
    assert d4.return_options(0, 2) == [parse_card("3H")]


def test_tribute_at_new_level_ec37() -> None:
    d = _tribute_deal((0, 1, 2, 3), {3: "8S 8H AS", 0: "3C"}, "8")
    assert d.tribute_options(3) == [parse_card("8S")]


def test_single_tribute_team_pooling_option_amb08() -> None:
    hands = {3: "BJ KD 4C", 1: "BJ 6D", 0: "3C"}
    d = _tribute_deal((0, 1, 2, 3), hands, "7", rules=RuleSet.preset("classic"))
    assert d.plan is not None and d.plan.anti_tribute and d.turn == 0
    # 1-4: the payer (seat 2) is 头游's partner: pooling never applies
    d2 = _tribute_deal((0, 1, 3, 2), {2: "BJ 4C", 3: "BJ 5C", 0: "3C"}, "7", rules=RuleSet.preset("classic"))
    assert d2.plan is not None and not d2.plan.anti_tribute


# --- settling (R35-R42) -----------------------------------------------------------------------
def _settle(level: str, levels: tuple[str, str], fo: list[int], rules: RuleSet | None = None,
            a_fails: tuple[int, int] = (0, 0)):
    score = MatchScore(levels=[R(levels[0]), R(levels[1])], a_fails=list(a_fails))
    res = deal_outcome(fo)
    assert res is not None
    return settle(rules or RuleSet.official(), R(level), res, score), score


def test_upgrades_and_cap_r35_ec45() -> None:
    st, _ = _settle("K", ("K", "3"), [0, 2])
    assert st.levels_after == (R("A"), R("3")) and not st.passed and st.next_level == R("A")
    st, _ = _settle("5", ("5", "3"), [1, 0, 3])
    assert st.upgrade == 2 and st.levels_after == (R("5"), R("5")) and st.next_level == R("5")
    st, _ = _settle("5", ("5", "3"), [0, 1, 3], rules=RuleSet.preset("anhui"))
    assert st.upgrade == 2 and st.levels_after == (R("7"), R("3"))


def test_a_level_rules_ec41_to_ec44() -> None:
    st, score = _settle("A", ("A", "9"), [0, 1, 3])  # 1-4 at own A (EC-41)
    assert not st.passed and st.failed == (0,) and score.a_fails == [1, 0] and st.next_level == R("A")
    st, _ = _settle("9", ("A", "9"), [0, 2])  # 1-2 at the opponents' level (EC-42, strict)
    assert not st.passed and st.levels_after == (R("A"), R("9")) and st.next_level == R("A")
    st, score = _settle("A", ("A", "9"), [1, 0, 3])  # losing the A deal (EC-43)
    assert st.failed == (0,) and st.levels_after == (R("A"), R("J")) and st.next_level == R("J")
    st, score = _settle("A", ("A", "9"), [1, 3], a_fails=(2, 0))  # third failure (EC-44)
    assert st.demoted == (0,) and st.levels_after == (R("2"), R("Q")) and score.a_fails == [0, 0]
    st, score = _settle("A", ("A", "9"), [0, 1, 2], a_fails=(2, 0))  # pass with 1-3 (R37)
    assert st.passed and st.next_level is None


def test_pass_target_variants() -> None:
    aicomp = RuleSet.preset("aicomp")
    st, score = _settle("A", ("A", "9"), [0, 1, 2], rules=aicomp)  # 1-3 does not pass (double_up_only)
    assert not st.passed and score.a_fails == [1, 0]
    st, score = _settle("A", ("A", "9"), [0, 1, 2], rules=aicomp, a_fails=(1, 0))  # 2nd failure: back to 2
    assert st.demoted == (0,) and st.levels_after[0] == R("2")
    lenient = RuleSet.official().replace(pass_target="lenient")
    st, _ = _settle("9", ("A", "9"), [0, 1, 2], rules=lenient)
    assert st.passed
    unlimited = RuleSet.official().replace(a_fail_limit=None)
    st, score = _settle("A", ("A", "9"), [1, 3], rules=unlimited, a_fails=(10, 0))
    assert not st.demoted and score.a_fails == [11, 0]


def test_target_eight_and_yangzhou_rules() -> None:
    yz8 = RuleSet.preset("yangzhou").replace(target_level="8")
    st, _ = _settle("6", ("6", "2"), [0, 2], rules=yz8)
    assert st.levels_after[0] == R("8") and not st.passed  # capped at the target
    st, _ = _settle("8", ("8", "2"), [0, 1, 2], rules=yz8)
    assert st.passed
    st, _ = _settle("8", ("8", "2"), [1, 0, 2], rules=yz8)  # opponents win the target deal 1-4: no upgrade
    assert st.upgrade == 0 and st.levels_after == (R("8"), R("2"))


def test_yangzhou_streaks() -> None:
    rules = RuleSet.preset("yangzhou")
    score = MatchScore(levels=[R("3"), R("3")], first_runs=[2, 0, 0, 0], last_runs=[0, 0, 0, 3])
    res = deal_outcome([0, 1, 2])  # seat 0 first a third time; seat 3 last a fourth time
    assert res is not None
    st = settle(rules, R("3"), res, score)
    assert st.streak_bonus == 1 and st.upgrade == 3 and st.streak_penalty == (0, 2)
    assert st.levels_after == (R("6"), R("2"))  # 3 - 2 would be below 2: stays at 2


def test_anhui_points_and_titles() -> None:
    assert anhui_points(DealResult((0, 2), (0, 0, 0, 0))) == (4, -4, 4, -4)
    assert anhui_points(DealResult((1, 0, 3, 2), (0, 0, 0, 0))) == (-2, 2, -2, 2)
    assert anhui_points(DealResult((2, 1, 3, 0), (0, 0, 0, 0))) == (1, -1, 1, -1)
    assert anhui_title(-1) == "平民" and anhui_title(0) == "秀才" and anhui_title(99) == "秀才"
    assert anhui_title(100) == "舉人" and anhui_title(79999) == "一品大學士" and anhui_title(100000) == "皇帝"


# --- whole games ------------------------------------------------------------------------------
def test_first_deal_no_tribute_and_determinism_ec46() -> None:
    g1, g2 = Game(seed=11), Game(seed=11)
    assert g1.deal.plan is None and g1.level == 0
    assert g1.events[0]["first_leader"] == g1.deal.turn
    rng = random.Random(3)
    for _ in range(300):
        acts = g1.legal_actions()
        a = acts[rng.randrange(len(acts))]
        g1.apply(a)
        g2.apply(a)
    assert g1.events == g2.events


def test_restart_after_target_r42() -> None:
    rules = RuleSet.preset("classic")
    g = Game(rules, seed=5, max_games=2)
    rng = random.Random(0)
    while not g.over and g.game_number == 1:
        acts = g.legal_actions()
        g.apply(acts[rng.randrange(len(acts))])
    assert g.game_number == 2 and not g.over
    assert g.deal_number == 1 and g.level == 0 and g.deal.plan is None and g.score.levels == [0, 0]
    assert [e["type"] for e in g.events].count("game_over") == 1


def test_explicit_hands_any_size() -> None:
    g = Game(hands=[C("AS"), C("3S"), C("4S"), C("5S")], first_leader=0)
    assert g.pending().seat == 0 and g.pending().actions == [("single", R("A"), C("AS"))]
    g.apply(g.pending().actions[0])
    assert g.deal.finished == [0]
