"""R58 scoring with R54 penalties and the R36 cap, knock-out extra deals, the 26-point team scale, and
standings with every tie-break: worked examples computed by hand from the rules."""

from __future__ import annotations

import pytest

from guandan.tournament.director import add_entry, add_penalty, enter_result, pair_next_round
from guandan.tournament.errors import ImpossibleLevel, InvalidResult
from guandan.tournament.model import Match, MatchResult, Options, Penalty, Player, Tournament
from guandan.tournament.scoring import prize_list, score_match, standings, validate_result
from guandan.tournament.teams import scale_points

A, K, Q, J = 14, 13, 12, 11


def _score(r: MatchResult, **kw):
    validate_result(r, knockout=kw.get("knockout", False), team=kw.get("team", False))
    sc = score_match(Match(1, 1, 2, result=r), Options(), **kw)
    return sc["a"], sc["b"]


def _row(s):
    return (s.outcome, s.field_points, s.net, s.cumulative)


def test_levels_decide_field_points_and_small_scores() -> None:
    a, b = _score(MatchResult(10, 8, time_called=True))
    assert _row(a) == ("win", 3, 2, 8) and _row(b) == ("loss", 1, -2, 6)
    a, b = _score(MatchResult(9, 9, time_called=True))
    assert _row(a) == ("draw", 2, 0, 7) and _row(b) == ("draw", 2, 0, 7)


def test_passing_a_wins_and_adds_one_to_cumulative() -> None:
    a, b = _score(MatchResult(A, K, passed_a="a"))
    assert _row(a) == ("win", 3, 1, 13) and _row(b) == ("loss", 1, -1, 11)
    # both at A: the side that passed wins although the levels are equal
    a, b = _score(MatchResult(A, A, passed_a="b"))
    assert _row(a) == ("loss", 1, 0, 12) and _row(b) == ("win", 3, 0, 13)


def test_timeouts_from_the_third_give_the_opponents_a_level_each() -> None:
    # a: 4 timeouts -> b +2: 9:8 becomes 9:10, b wins
    a, b = _score(MatchResult(9, 8, timeouts_a=4))
    assert _row(a) == ("loss", 1, -1, 7) and _row(b) == ("win", 3, 1, 8)
    assert b.gained == 2 and [(p.kind, p.levels) for p in a.penalties] == [("timeouts", 2)]
    # two timeouts cost nothing
    a, b = _score(MatchResult(9, 8, timeouts_a=2))
    assert _row(a) == ("win", 3, 1, 7) and a.penalties == []


@pytest.mark.parametrize("minutes,levels", [(4, 0), (5, 1), (9, 1), (10, 2), (12, 2)])
def test_lateness_one_level_per_full_five_minutes(minutes: int, levels: int) -> None:
    a, b = _score(MatchResult(6, 6, late_b=minutes))
    assert a.level == 6 + levels and a.gained == levels


def test_penalties_are_capped_at_a_and_never_pass_a() -> None:
    # a at K, b at A (not passed) with 5 timeouts: a +3 -> 16 -> capped at A, a draw 14:14 (R36)
    a, b = _score(MatchResult(K, A, timeouts_b=5))
    assert _row(a) == ("draw", 2, 0, 12) and _row(b) == ("draw", 2, 0, 12)
    assert a.level == A and a.gained == 3 and a.capped == 2
    # b passed A: it keeps the win whatever the opponents gain (J + 2 = K)
    a, b = _score(MatchResult(J, A, passed_a="b", timeouts_b=4))
    assert _row(a) == ("loss", 1, -1, 11) and _row(b) == ("win", 3, 1, 13)


def test_manual_penalty_levels_and_loss_of_the_match() -> None:
    a, b = _score(MatchResult(8, 7, penalties=[Penalty("a", 2, "paid a too-small tribute")]))
    assert _row(a) == ("loss", 1, -1, 6) and _row(b) == ("win", 3, 1, 7)
    a, b = _score(MatchResult(Q, 5, penalties=[Penalty("a", 0, "hid cards a 3rd time", loses_match=True)]))
    assert (a.outcome, a.field_points, b.outcome, b.field_points) == ("loss", 1, "win", 3)


def test_absent_scores_zero_and_walkover_scores_a_win() -> None:
    a, b = _score(MatchResult(absent="a"))
    assert _row(a) == ("absent", 0, 0, 0) and _row(b) == ("win", 3, 0, 0)
    a, b = _score(MatchResult(absent="both"))
    assert a.field_points == b.field_points == 0


def test_knockout_draw_is_settled_by_the_extra_deal() -> None:
    a, b = _score(MatchResult(10, 10, time_called=True, extra_deal="b"), knockout=True)
    assert _row(a) == ("loss", 1, 0, 8) and _row(b) == ("win", 3, 0, 8)
    with pytest.raises(InvalidResult) as e:
        validate_result(MatchResult(10, 10), knockout=True)
    assert e.value.params["reason"] == "extra_deal_needed"
    with pytest.raises(InvalidResult) as e:
        validate_result(MatchResult(10, 9, extra_deal="a"), knockout=True)
    assert e.value.params["reason"] == "extra_deal_not_needed"
    with pytest.raises(InvalidResult):
        validate_result(MatchResult(10, 10, extra_deal="a"))  # no extra deal outside a knock-out
    # a penalty can turn a knock-out win into a draw that needs the extra deal
    with pytest.raises(InvalidResult):
        validate_result(MatchResult(10, 9, timeouts_a=3), knockout=True)


def test_impossible_levels() -> None:
    for bad in (MatchResult(15, 2), MatchResult(1, 2), MatchResult(K, 9, passed_a="a")):
        with pytest.raises(ImpossibleLevel) as e:
            validate_result(bad)
        assert e.value.code == "impossible_level"
    with pytest.raises(InvalidResult):
        validate_result(MatchResult(9, 8, timeouts_a=-1))
    with pytest.raises(InvalidResult):
        validate_result(MatchResult(9, 8, absent="a"))


def test_team_match_on_the_26_point_scale() -> None:
    # deal by deal (table 1, table 2) for team a: 0, +3, -3, +4 -> D = 4 -> 17:9
    deals = [[3, -3], [2, 1], [-1, -2], [1, 3]]
    assert scale_points(deals) == 17
    a, b = _score(MatchResult(team_deals=deals), team=True)
    assert _row(a) == ("win", 3, 4, 17) and _row(b) == ("loss", 1, -4, 9)
    # same play at both tables with the seats swapped: every deal cancels, 13:13 draw
    a, b = _score(MatchResult(team_deals=[[3, -3], [-2, 2]]), team=True)
    assert _row(a) == ("draw", 2, 0, 13)
    # the scale is capped: D = 18 gives 26:0
    assert scale_points([[3, 3]] * 3) == 26 and scale_points([[-3, -3]] * 3) == 0
    # a timeout penalty against team b is one point for team a: 13 + 0 + 1
    a, b = _score(MatchResult(team_deals=[[3, -3]], timeouts_b=3), team=True)
    assert _row(a) == ("win", 3, 1, 14)
    with pytest.raises(InvalidResult):
        validate_result(MatchResult(team_deals=[[0, 3]]), team=True)


def _rr4(penalty: bool = False, tiebreaks: list[str] | None = None, seeds=(None,) * 4) -> Tournament:
    """Round robin of 4 (Berger: 1-4 2-3 / 4-3 1-2 / 2-4 3-1) with hand-chosen results."""
    t = Tournament(name="rr", format="round_robin", options=Options(tiebreaks=tiebreaks or
                                                                    ["net", "cumulative", "opponents", "head_to_head", "seed"]))
    for i in range(1, 5):
        add_entry(t, f"E{i}", [Player(f"p{i}"), Player(f"q{i}")], seed=seeds[i - 1])
    if any(seeds):  # keep the same Berger order whatever the seeds
        for e in t.entries:
            e.seed, e.rating = None, None
    results = [
        {(1, 4): MatchResult(10, 6), (2, 3): MatchResult(7, 7)},
        {(4, 3): MatchResult(A, 9, passed_a="a"), (1, 2): MatchResult(8, 9)},
        {(2, 4): MatchResult(5, 5), (3, 1): MatchResult(12, 10)},
    ]
    for want in results:
        rnd = pair_next_round(t)
        for m in rnd.matches:
            enter_result(t, rnd.number, m.table, want[(m.a, m.b)])
    if penalty:
        m = next(m for m in t.played[2].matches if m.a == 3)
        add_penalty(t, 3, m.table, "a", 3, "hiding cards")
    if any(seeds):
        for e, s in zip(t.entries, seeds):
            e.seed = s
    return t


def test_standings_of_a_hand_scored_round_robin() -> None:
    t = _rr4()
    table = standings(t)
    # fp: 1 = 3+1+1, 2 = 2+3+2, 3 = 2+1+3, 4 = 1+3+2; net: 1 = 4-1-2, 2 = 0+1+0, 3 = 0-5+2, 4 = -4+5+0
    got = [(s.place, s.id, s.field_points, s.net, s.cumulative, s.opponents) for s in table]
    assert got == [(1, 2, 7, 1, 15, 17), (2, 4, 6, 1, 20, 18), (3, 3, 6, -3, 22, 18), (4, 1, 5, 1, 22, 19)]
    assert [p["place"] for p in prize_list(table, 3)] == [1, 2, 3]


@pytest.mark.parametrize("order,first", [(["cumulative"], 3), (["head_to_head"], 4), (["opponents"], 3),
                                         (["opponents", "seed"], 4), (["seed"], 4)])
def test_each_tie_break_decides_the_tie_of_3_and_4(order: list[str], first: int) -> None:
    # 3 and 4 both have 6 field points: cumulative 22 v 20; 4 beat 3 in round 2; opponents 18 v 18
    t = _rr4(tiebreaks=order, seeds=(3, 4, 2, 1))
    ids = [s.id for s in standings(t)]
    assert ids[1] == first and set(ids[1:3]) == {3, 4}


def test_penalty_shows_in_the_match_and_the_standings() -> None:
    t = _rr4(penalty=True)
    table = {s.id: s for s in standings(t)}
    # round 3: 3 v 1 12:10, 3 penalised 3 levels -> 1 at 13 wins 13:12
    assert (table[1].field_points, table[1].net, table[1].cumulative) == (7, 4, 25)
    assert (table[3].field_points, table[3].net, table[3].cumulative) == (4, -6, 22)
    assert table[3].penalty_levels == 3 and table[3].penalties[0]["reason"] == "hiding cards"
    assert [s.id for s in standings(t)] == [1, 2, 4, 3]
    assert [x.action for x in t.log].count("penalty") == 1
