"""Round robin (Berger tables), groups by snake seeding, and the knock-out with its bracket and
extra deal (R58)."""

from __future__ import annotations

import itertools

import pytest

from guandan.tournament.brackets import berger_rounds, bracket_order, first_knockout_round, snake_groups
from guandan.tournament.director import add_entry, enter_result, groups_of, pair_next_round
from guandan.tournament.errors import (
    ConfigError,
    InvalidResult,
    NoMoreRounds,
    NotEnoughEntries,
    TournamentError,
)
from guandan.tournament.model import Match, MatchResult, Options, Penalty, Player, Tournament
from guandan.tournament.scoring import standings


@pytest.mark.parametrize("n", range(2, 13))
def test_berger_every_pair_meets_exactly_once(n: int) -> None:
    ids = list(range(1, n + 1))
    rounds = berger_rounds(ids)
    assert len(rounds) == (n if n % 2 else n - 1)
    meetings = [frozenset((a, b)) for r in rounds for a, b in r if b is not None]
    assert sorted(map(sorted, meetings)) == sorted(map(sorted, map(frozenset, itertools.combinations(ids, 2))))
    for r in rounds:
        seen = [x for a, b in r for x in (a, b) if x is not None]
        assert sorted(seen) == ids  # everyone once per round
    byes = [a for r in rounds for a, b in r if b is None]
    assert sorted(byes) == (ids if n % 2 else [])  # odd: everyone sits out exactly once


def test_snake_groups_and_bracket_order() -> None:
    assert snake_groups([1, 2, 3, 4, 5, 6, 7, 8], 2) == [[1, 4, 5, 8], [2, 3, 6, 7]]
    assert snake_groups([1, 2, 3, 4, 5, 6], 3) == [[1, 6], [2, 5], [3, 4]]
    assert bracket_order(4) == [1, 4, 2, 3]
    assert bracket_order(8) == [1, 8, 4, 5, 2, 7, 3, 6]
    # 6 qualifiers in a bracket of 8: seeds 1 and 2 get byes
    assert first_knockout_round([11, 12, 13, 14, 15, 16], 8) == [(11, None), (14, 15), (12, None), (13, 16)]


def _lower_id_wins(t: Tournament, rnd) -> None:
    for m in rnd.matches:
        if m.b is not None:
            r = MatchResult(10, 5) if m.a < m.b else MatchResult(5, 10)
            enter_result(t, rnd.number, m.table, r)


def test_groups_then_knockout_with_an_extra_deal() -> None:
    t = Tournament(name="gk", format="groups_knockout", options=Options(groups=2, knockout_size=4))
    for i in range(1, 9):
        add_entry(t, f"E{i}", [Player(f"p{i}"), Player(f"q{i}")], seed=i)
    for _ in range(3):  # groups of 4: three rounds
        rnd = pair_next_round(t)
        assert rnd.kind == "group"
        _lower_id_wins(t, rnd)
    assert groups_of(t) == [[1, 4, 5, 8], [2, 3, 6, 7]]
    # group winners 1 and 2 (9 points, net +15 each), runners-up 3 and 4 (7, net +5): seeds 1 2 3 4
    semi = pair_next_round(t)
    assert semi.kind == "knockout" and [(m.a, m.b, m.stage) for m in semi.matches] == [(1, 4, "semi"), (2, 3, "semi")]
    with pytest.raises(InvalidResult):  # a drawn knock-out match needs its extra deal
        enter_result(t, semi.number, 1, MatchResult(10, 10, time_called=True))
    enter_result(t, semi.number, 1, MatchResult(10, 10, time_called=True, extra_deal="b"))
    enter_result(t, semi.number, 2, MatchResult(12, 6))
    final = pair_next_round(t)
    assert [(m.a, m.b, m.stage) for m in final.matches] == [(4, 2, "final")]
    enter_result(t, final.number, 1, MatchResult(14, 11, passed_a="a"))
    table = standings(t)
    # champion 4, finalist 2, then the semi-final losers by field points: 1 (9 + 1) before 3 (7 + 1)
    assert [s.id for s in table[:4]] == [4, 2, 1, 3]
    assert table[0].knockout_out == final.number + 1
    with pytest.raises(NoMoreRounds):
        pair_next_round(t)


def test_round_robin_runs_out_of_rounds_and_bad_configs() -> None:
    t = Tournament(name="rr", format="round_robin")
    for i in range(1, 4):
        add_entry(t, f"E{i}", [Player(f"p{i}"), Player(f"q{i}")])
    for _ in range(3):
        rnd = pair_next_round(t)
        assert sum(m.b is None for m in rnd.matches) == 1
        _lower_id_wins(t, rnd)
    with pytest.raises(NoMoreRounds):
        pair_next_round(t)
    with pytest.raises(ConfigError):
        pair_next_round(Tournament(name="x", format="ladder"))
    with pytest.raises(ConfigError):
        pair_next_round(Tournament(name="x", format="groups_knockout", options=Options(knockout_size=6)))
    with pytest.raises(ConfigError):
        pair_next_round(Tournament(name="x", options=Options(tiebreaks=["net", "luck"])))
    with pytest.raises(NotEnoughEntries):
        pair_next_round(Tournament(name="x"))


def test_knockout_correction_cannot_change_an_advanced_winner() -> None:
    from guandan.tournament.director import correct_result

    t = Tournament(name="ko", format="groups_knockout", options=Options(groups=1, knockout_size=4))
    for i in range(1, 5):
        add_entry(t, f"E{i}", [Player(f"p{i}"), Player(f"q{i}")], seed=i)
    for _ in range(3):
        _lower_id_wins(t, pair_next_round(t))
    semi = pair_next_round(t)  # 1 v 4, 2 v 3
    _lower_id_wins(t, semi)
    pair_next_round(t)  # final 1 v 2
    with pytest.raises(InvalidResult) as e:
        correct_result(t, semi.number, 1, MatchResult(5, 10))
    assert e.value.params["reason"] == "knockout_advanced"
    correct_result(t, semi.number, 1, MatchResult(11, 10), reason="level misread")  # same winner: fine
    assert t.log[-1].before["level_a"] == 10 and t.log[-1].after["level_a"] == 11


def test_round_robin_withdrawal_gives_the_opponent_a_bye_and_random_needs_a_seed() -> None:
    from guandan.tournament.director import withdraw

    t = Tournament(name="rr", format="round_robin")
    for i in range(1, 5):
        add_entry(t, f"E{i}", [Player(f"p{i}"), Player(f"q{i}")])
    _lower_id_wins(t, pair_next_round(t))  # 1-4, 2-3
    withdraw(t, 3)
    rnd = pair_next_round(t)  # Berger round 2: 4-3, 1-2 -> 4 has a bye
    assert [(m.a, m.b) for m in rnd.matches] == [(1, 2), (4, None)]
    with pytest.raises(ConfigError) as e:
        pair_next_round(Tournament(name="x", options=Options(first_round="random")))
    assert e.value.params["field"] == "random_seed"


def test_bracket_order_is_the_standard_seeding() -> None:
    # written out by hand: the standard 16-draw (1 v 16, 8 v 9, 4 v 13, 5 v 12 in the top half, 2 v 15 ... below)
    assert bracket_order(16) == [1, 16, 8, 9, 4, 13, 5, 12, 2, 15, 7, 10, 3, 14, 6, 11]
    for size in (2, 4, 8, 16, 32):
        order = bracket_order(size)
        assert sorted(order) == list(range(1, size + 1))
        assert all(order[i] + order[i + 1] == size + 1 for i in range(0, size, 2))  # 1 v N, 2 v N-1, ...
        assert order[0] == 1 and (size == 2 or order[size // 2] == 2)  # 1 and 2 in opposite halves


def test_knockout_byes_keep_the_bracket_order() -> None:
    """6 entries in 2 groups of 3 and a knock-out of 8: seeds 1 and 2 get the byes of the missing 8 and 7
    and must stay in opposite halves: 1 v W(4-5) and 2 v W(3-6) in the semis, 1 v 2 only in the final."""
    t = Tournament(name="gk", format="groups_knockout", options=Options(groups=2, knockout_size=8))
    for i in range(1, 7):
        add_entry(t, f"E{i}", [Player(f"p{i}"), Player(f"q{i}")], seed=i)
    for _ in range(3):  # groups [1, 4, 5] and [2, 3, 6]: three Berger rounds each, one bye per round
        rnd = pair_next_round(t)
        assert rnd.kind == "group"
        _lower_id_wins(t, rnd)
    # group winners 1 and 2 (9 points, net +10 each, 1 first by id), runners-up 3 and 4 (7 points, net 0,
    # cumulative 11 each, 3 first by id), then 5 and 6: the knock-out seeds equal the entry ids
    quarter = pair_next_round(t)
    games = {frozenset((m.a, m.b)) for m in quarter.matches if m.b is not None}
    assert games == {frozenset((4, 5)), frozenset((3, 6))}
    assert sorted(m.a for m in quarter.matches if m.b is None) == [1, 2]
    _lower_id_wins(t, quarter)  # 4 and 3 go through
    semi = pair_next_round(t)
    assert {frozenset((m.a, m.b)) for m in semi.matches} == {frozenset((1, 4)), frozenset((2, 3))}
    assert all(m.stage == "semi" for m in semi.matches)
    _lower_id_wins(t, semi)
    final = pair_next_round(t)
    assert [(m.a, m.b, m.stage) for m in final.matches] == [(1, 2, "final")]


def _to_semis() -> tuple[Tournament, int]:
    """One group of 4 (lower id wins: 1 9 points, 2 7, 3 5, 4 3), then the semis 1 v 4 (table 1) and 2 v 3
    (table 2). Returns the tournament and the semis' round number."""
    t = Tournament(name="ko", format="groups_knockout", options=Options(groups=1, knockout_size=4))
    for i in range(1, 5):
        add_entry(t, f"E{i}", [Player(f"p{i}"), Player(f"q{i}")], seed=i)
    for _ in range(3):
        _lower_id_wins(t, pair_next_round(t))
    semi = pair_next_round(t)
    assert [(m.table, m.a, m.b) for m in semi.matches] == [(1, 1, 4), (2, 2, 3)]
    return t, semi.number


def test_knockout_penalty_changes_who_advances() -> None:
    from guandan.tournament.director import add_penalty

    # 10:9 for 1, then 1 is penalised 2 levels (R54 too-small tribute): 4 reaches 11 and goes through
    t, s = _to_semis()
    enter_result(t, s, 1, MatchResult(10, 9, time_called=True))
    enter_result(t, s, 2, MatchResult(12, 6))
    add_penalty(t, s, 1, "a", 2, "too small tribute")
    assert [(m.a, m.b) for m in pair_next_round(t).matches] == [(4, 2)]

    # a draw settled by the extra deal for 1, then 1 is penalised one level: 4 wins 11:10 on levels, the
    # extra deal no longer decides (the log keeps it in "before")
    t, s = _to_semis()
    enter_result(t, s, 1, MatchResult(10, 10, time_called=True, extra_deal="a"))
    enter_result(t, s, 2, MatchResult(12, 6))
    m = add_penalty(t, s, 1, "a", 1, "hiding cards")
    assert m.result is not None and m.result.extra_deal is None
    assert t.log[-1].before["extra_deal"] == "a"
    assert [(m.a, m.b) for m in pair_next_round(t).matches] == [(4, 2)]

    # 10:9 for 1 and one level against 1: a draw, which needs the extra deal's winner (R58)
    t, s = _to_semis()
    enter_result(t, s, 1, MatchResult(10, 9, time_called=True))
    enter_result(t, s, 2, MatchResult(12, 6))
    with pytest.raises(InvalidResult) as e:
        add_penalty(t, s, 1, "a", 1, "timeout")
    assert e.value.params["reason"] == "extra_deal_needed"
    assert t.played[-1].matches[0].result.penalties == []  # refused: nothing changed
    add_penalty(t, s, 1, "a", 1, "timeout", extra_deal="b")
    assert [(m.a, m.b) for m in pair_next_round(t).matches] == [(4, 2)]

    # once the final is paired, a penalty that would change a semi's winner is refused; one that
    # does not change it is fine
    t, s = _to_semis()
    enter_result(t, s, 1, MatchResult(10, 9, time_called=True))
    enter_result(t, s, 2, MatchResult(12, 6))
    pair_next_round(t)
    with pytest.raises(InvalidResult) as e:
        add_penalty(t, s, 1, "a", 3, "hiding cards")
    assert e.value.params["reason"] == "knockout_advanced"
    add_penalty(t, s, 2, "a", 2, "too small tribute")  # 12:8, 2 still goes through


def test_knockout_absent_entry_loses_and_ranks_with_its_round() -> None:
    t, s = _to_semis()
    enter_result(t, s, 1, MatchResult(absent="a"))  # 1 does not turn up: 4 goes through
    enter_result(t, s, 2, MatchResult(12, 6))
    final = pair_next_round(t)
    assert [(m.a, m.b) for m in final.matches] == [(4, 2)]
    enter_result(t, final.number, 1, MatchResult(9, 11, time_called=True))  # 2 champion
    table = standings(t)
    # champion 2, finalist 4, then the semi losers by field points: 1 (9 + 0 for the absence, R58) and
    # 3 (5 + 1 for the loss)
    assert [(s_.id, s_.field_points) for s_ in table] == [(2, 7 + 3 + 3), (4, 3 + 3 + 1), (1, 9), (3, 6)]
    assert table[2].knockout_out == s and table[2].absences == 1


def test_knockout_with_both_sides_absent_has_no_winner() -> None:
    from guandan.tournament.director import correct_result
    from guandan.tournament.errors import NoWinner

    t, s = _to_semis()
    enter_result(t, s, 1, MatchResult(absent="both"))  # recorded: it is what happened
    enter_result(t, s, 2, MatchResult(12, 6))
    with pytest.raises(NoWinner) as e:
        pair_next_round(t)
    assert e.value.code == "no_winner" and issubclass(NoWinner, TournamentError)
    assert e.value.params == {"round": s, "table": 1, "entries": [1, 4], "reason": "both_absent"}
    assert "nobody" in str(e.value) and "absent" in str(e.value)
    assert len(t.played) == s  # nothing was paired
    rows = {x.id: x for x in standings(t)}
    assert rows[1].knockout_out == rows[4].knockout_out == s  # both are out in the semis
    correct_result(t, s, 1, MatchResult(absent="a"), reason="1 arrived after the deadline, 4 was there")
    assert [(m.a, m.b) for m in pair_next_round(t).matches] == [(4, 2)]


def test_both_sides_losing_by_penalty_lose_and_nobody_advances() -> None:
    from guandan.tournament.director import add_penalty
    from guandan.tournament.errors import NoWinner
    from guandan.tournament.scoring import score_match

    # outside a knock-out: both lose (R54 "loses the game"), 1 field point each, whatever the levels
    sc = score_match(Match(1, 1, 2, result=MatchResult(10, 6, penalties=[
        Penalty("a", 0, "3rd hiding", loses_match=True), Penalty("b", 0, "3rd signal", loses_match=True)])), Options())
    assert (sc["a"].outcome, sc["a"].field_points, sc["b"].outcome, sc["b"].field_points) == ("loss", 1, "loss", 1)
    t, s = _to_semis()
    enter_result(t, s, 1, MatchResult(10, 9, time_called=True))
    enter_result(t, s, 2, MatchResult(12, 6))
    add_penalty(t, s, 1, "a", 0, "signalling a 3rd time", loses_match=True)
    add_penalty(t, s, 1, "b", 0, "hiding cards a 3rd time", loses_match=True)
    with pytest.raises(NoWinner) as e:
        pair_next_round(t)
    assert e.value.params["reason"] == "both_lose"
    # a walkover whose side present is penalised with the loss of the match: nobody goes through either
    t, s = _to_semis()
    enter_result(t, s, 1, MatchResult(absent="b", penalties=[Penalty("a", 0, "abuse", loses_match=True)]))
    enter_result(t, s, 2, MatchResult(12, 6))
    rows = {x.id: x for x in standings(t)}
    assert (rows[1].field_points, rows[4].field_points) == (9 + 1, 3 + 0)  # a loss (1) and an absence (0)
    with pytest.raises(NoWinner) as e:
        pair_next_round(t)
    assert e.value.params["reason"] == "both_lose" and "side b was absent" in str(e.value)


def test_a_final_without_a_winner_names_no_champion() -> None:
    from guandan.tournament.errors import NoWinner

    t, _ = _to_semis()
    _lower_id_wins(t, t.played[-1])
    final = pair_next_round(t)
    enter_result(t, final.number, 1, MatchResult(absent="both"))
    with pytest.raises(NoWinner) as e:
        pair_next_round(t)
    assert "final" in str(e.value) and e.value.params["round"] == final.number
    table = standings(t)
    assert all(x.knockout_out != final.number + 1 for x in table)  # no champion
