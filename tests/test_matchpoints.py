"""Matchpoint scoring (issue 22): worked examples computed by hand, a field of one, once per
board, and the incremental tables against a full recompute (Hypothesis)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from guandan.duplicate.matchpoints import (
    SINGLE_RESULT_PCT,
    BoardTable,
    DayScores,
    matchpoints,
    percentages,
    week_leaderboard,
)


def test_worked_example_with_ties():
    # results 3, 1, 1, -2 on one board (4 results, top = 3 matchpoints):
    # 3 beats three results: 3 MP = 100 %; each 1 beats -2 and ties the other 1: 1.5 MP = 50 %;
    # -2 beats nothing: 0 %
    assert matchpoints([3, 1, 1, -2]) == [3.0, 1.5, 1.5, 0.0]
    assert percentages([3, 1, 1, -2]) == [100.0, 50.0, 50.0, 0.0]
    t = BoardTable([3, 1, 1, -2])
    assert (t.percentage(3), t.percentage(1), t.percentage(-2)) == (100.0, 50.0, 0.0)
    assert t.matchpoints(1) == 1.5
    assert t.frequencies() == [(3, 1), (1, 2), (-2, 1)]


def test_five_results_by_hand():
    # 2, 2, 2, -1, 3: top = 4. 3 -> 4 MP = 100 %; each 2 beats -1 (1) + ties two 2s (1) = 2 MP = 50 %;
    # -1 -> 0 %
    t = BoardTable()
    for r in (2, 2, 2, -1, 3):
        t.add(r)
    assert t.n == 5
    assert t.table() == {-1: 0.0, 2: 50.0, 3: 100.0}


def test_a_field_of_one_scores_average():
    assert SINGLE_RESULT_PCT == 50.0
    assert percentages([-3]) == [50.0]
    t = BoardTable([2])
    assert t.percentage(2) == 50.0
    t.add(1)  # a second result: 2 beats 1 -> 100 %, 1 -> 0 %
    assert (t.percentage(2), t.percentage(1)) == (100.0, 0.0)
    with pytest.raises(KeyError):
        t.percentage(3)


def test_two_equal_results_share_the_board():
    assert percentages([1, 1]) == [50.0, 50.0]


def test_day_leaderboard_by_hand():
    day = DayScores([1, 2])
    # board 1: A 3, B 1, C 1 -> A beats 2 of 2: 100 %; B and C beat none and tie each other: 0.5/2 = 25 %
    # board 2: A -1, B 2 -> B 100 %, A 0 %
    for board, player, result in ((1, "A", 3), (1, "B", 1), (1, "C", 1), (2, "A", -1), (2, "B", 2)):
        day.add(board, player, result)
    lb = day.leaderboard()
    assert [(s.player, s.pct, s.boards, s.rank) for s in lb] == [
        ("B", 62.5, 2, 1),  # (25 + 100) / 2
        ("A", 50.0, 2, 2),  # (100 + 0) / 2
        ("C", 25.0, 1, 3),
    ]
    assert day.standing("C").rank == 3 and day.standing("nobody") is None
    assert [s.player for s in day.leaderboard(offset=1, limit=1)] == ["A"]
    assert [s.player for s in day.leaderboard(min_boards=2)] == ["B", "A"]
    assert day.player_boards("A") == [(1, 3, 100.0), (2, -1, 0.0)]
    assert len(day) == 3
    # a new result changes every score of its board: C plays board 2 with 2, tying B:
    # B and C beat A's -1 (1) and tie each other (0.5): 1.5/2 = 75 %; A 0 %
    day.add(2, "C", 2)
    assert day.percentage(2, "B") == 75.0 and day.percentage(2, "A") == 0.0
    # now everyone averages 50 %: A (100 + 0) / 2, B (25 + 75) / 2, C (25 + 75) / 2: one shared rank
    assert [(s.player, s.pct, s.rank) for s in day.leaderboard()] == [("A", 50.0, 1), ("B", 50.0, 1), ("C", 50.0, 1)]


def test_equal_averages_list_more_boards_first():
    day = DayScores([1, 2])
    day.add(1, "solo", 1)  # a field of one: 50 %
    day.add(2, "X", 1)
    day.add(2, "Y", 1)  # X and Y tie: 50 % each
    day.add(1, "Z", 1)  # ties solo on board 1: both 50 %
    lb = day.leaderboard()
    assert {s.pct for s in lb} == {50.0} and {s.rank for s in lb} == {1}
    assert [s.boards for s in lb] == [1, 1, 1, 1]
    day.add(2, "Z", 1)  # Z: 50 % on both boards, X and Y now 50 % too (three-way tie on board 2)
    assert day.leaderboard()[0].player == "Z" and day.leaderboard()[0].boards == 2


def test_each_board_once_per_player_and_the_score_is_unchanged():
    day = DayScores([1])
    day.add(1, "A", 3)
    day.add(1, "B", -1)
    before = day.leaderboard()
    with pytest.raises(ValueError):
        day.add(1, "A", -3)
    assert day.leaderboard() == before
    assert day.tables[1].n == 2
    with pytest.raises(KeyError):
        day.add(9, "A", 1)


def test_week_view_averages_over_every_board():
    d1, d2 = DayScores([1]), DayScores([1])
    d1.add(1, "A", 2)
    d1.add(1, "B", 1)  # A 100, B 0
    d2.add(1, "A", -1)
    d2.add(1, "B", 1)
    d2.add(1, "C", 1)  # A 0, B 75, C 75
    week = week_leaderboard([d1, d2])
    assert [(s.player, s.pct, s.boards) for s in week] == [("C", 75.0, 1), ("A", 50.0, 2), ("B", 37.5, 2)]
    assert [s.player for s in week_leaderboard([d1, d2], min_boards=2)] == ["A", "B"]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(-3, 3), min_size=1, max_size=40))
def test_incremental_table_equals_full_recompute(results):
    t = BoardTable()
    for i, r in enumerate(results, 1):
        t.add(r)
        full = percentages(results[:i])
        assert [t.percentage(x) for x in results[:i]] == pytest.approx(full)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 3), st.integers(0, 6), st.integers(-3, 3)), max_size=60))
def test_day_leaderboard_equals_a_naive_recompute(rows):
    day = DayScores([1, 2, 3])
    seen: dict[tuple[int, int], int] = {}
    for board, player, result in rows:
        if (board, player) in seen:
            continue
        seen[(board, player)] = result
        day.add(board, player, result)
        day.leaderboard()  # asked in between: the cache must not go stale
    naive: dict[int, list[float]] = {}
    for b in (1, 2, 3):
        players = [p for (bb, p) in seen if bb == b]
        pcts = percentages([seen[(b, p)] for p in players]) if players else []
        for p, pct in zip(players, pcts):
            naive.setdefault(p, []).append(pct)
    got = {s.player: (s.pct, s.boards) for s in day.leaderboard()}
    assert set(got) == set(naive)
    for p, pcts in naive.items():
        assert got[p][0] == pytest.approx(sum(pcts) / len(pcts)) and got[p][1] == len(pcts)
    order = [s.pct for s in day.leaderboard()]
    assert order == sorted(order, reverse=True)


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), float("-inf")])
def test_nan_and_infinite_results_are_refused_where_results_enter(bad):
    # a NaN is neither above, below nor equal to any result: in a sorted table it would give
    # every result on the board a wrong percentage; an infinity is no deal's result
    t = BoardTable([1, -1])
    with pytest.raises(ValueError):
        t.add(bad)
    assert t.n == 2 and t.frequencies() == [(1, 1), (-1, 1)]
    with pytest.raises(ValueError):
        BoardTable([2, bad])
    with pytest.raises(ValueError):
        matchpoints([1, bad])
    with pytest.raises(ValueError):
        percentages([bad, 1])
    day = DayScores([1])
    day.add(1, "A", 2)
    day.add(1, "B", -1)  # A beats B: 100 % and 0 %
    with pytest.raises(ValueError):
        day.add(1, "C", bad)
    assert day.standing("C") is None and "C" not in day.results[1] and day.tables[1].n == 2
    assert [(s.player, s.pct, s.rank) for s in day.leaderboard()] == [("A", 100.0, 1), ("B", 0.0, 2)]
    day.add(1, "C", 0.5)  # C may still enter with a real result: it beats B and loses to A, 50 %
    assert day.percentage(1, "C") == 50.0
    assert [(s.player, s.pct) for s in week_leaderboard([day])] == [("A", 100.0), ("C", 50.0), ("B", 0.0)]
