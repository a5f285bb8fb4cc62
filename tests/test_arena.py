"""Duplicate arena (``guandan.evaluation.arena``) and the ``guandan arena`` command."""

from __future__ import annotations

import json
import math

import pytest
from typer.testing import CliRunner

from guandan.evaluation.arena import (
    ArenaResult,
    duplicate_match,
    normal_ci,
    play_board_deal,
    play_game,
    wilson,
)
from guandan.cli import app
from guandan.core import RuleSet


def test_wilson_known_values() -> None:
    # 0 of 10: upper bound z^2 / (n + z^2) = 3.8415 / 13.8415
    lo, hi = wilson(0, 10)
    assert lo == 0.0 and math.isclose(hi, 0.27753, abs_tol=1e-4)
    # 5 of 10: the textbook 0.2366 .. 0.7634
    lo, hi = wilson(5, 10)
    assert math.isclose(lo, 0.23659, abs_tol=1e-4) and math.isclose(hi, 0.76341, abs_tol=1e-4)
    assert wilson(10, 10)[1] == 1.0
    assert wilson(0, 0) == (0.0, 1.0)


def test_normal_ci() -> None:
    # no spread: the Wilson interval of 3 wins in 3 (worked by hand: centre 0.7193, half 0.2808)
    lo, hi = normal_ci([1.0, 1.0, 1.0])
    assert abs(lo - 0.4385) < 1e-3 and hi == 1.0
    lo, hi = normal_ci([0.5])  # one board, a tie: wide, around 0.5
    assert lo < 0.1 and hi > 0.9 and abs((lo + hi) / 2 - 0.5) < 1e-9
    lo, hi = normal_ci([0.0, 1.0, 0.5, 0.5])
    # mean 0.5, sample sd sqrt(1/6), n = 4
    half = 1.959963984540054 * math.sqrt((1 / 6) / 4)
    assert math.isclose(lo, 0.5 - half) and math.isclose(hi, 0.5 + half)


def _consistent(r: ArenaResult) -> None:
    assert r.deals == 2 * r.boards
    assert 0 <= r.deal_wins_a <= r.deals
    for rate, (lo, hi) in ((r.deal_win_rate, r.deal_ci), (r.game_win_rate, r.game_ci)):
        assert 0.0 <= lo <= rate <= hi <= 1.0
    assert 0.0 <= r.board_ci[0] <= r.deal_win_rate <= r.board_ci[1] <= 1.0
    assert sum(r.results_a.values()) == r.deal_wins_a
    assert r.mean_upgrade_a >= 0 and r.mean_upgrade_b >= 0


def test_small_duplicate_match_heuristic_vs_random() -> None:
    seen: list[tuple[int, int]] = []
    r = duplicate_match("heuristic", "random", 3, RuleSet.official(), seed=11, games=1,
                        keep_records=True, progress=lambda d, t: seen.append((d, t)))
    _consistent(r)
    assert r.boards == 3 and r.deals == 6 and r.games == 2
    assert seen[-1] == (8, 8) and [d for d, _ in seen] == list(range(1, 9))
    # each upgrade is one of the official 3/2/1 (R35), so A's mean is at most 3
    assert r.mean_upgrade_a <= 3.0
    assert len(r.records) == 6
    # the two plays of a board: same cards per seat, same first leader, teams swapped
    for a, b in zip(r.records[::2], r.records[1::2]):
        assert a.board == b.board
        assert a.hands == b.hands and a.first_leader == b.first_leader
        assert a.a_seats == (0, 2) and b.a_seats == (1, 3)
        assert all(len(h) == 27 for h in a.hands)
    # different boards deal different cards
    assert r.records[0].hands != r.records[2].hands
    json.dumps(r.to_json())


def test_identical_deterministic_agents_split_exactly() -> None:
    # the heuristic is deterministic: with the same cards in the same seats each board's two
    # plays are the same game, won by the same seat, i.e. once by A and once by B
    r = duplicate_match("heuristic", "heuristic", 4, seed=5, games=1)
    _consistent(r)
    assert r.deal_win_rate == 0.5 and r.game_win_rate == 0.5
    assert r.mean_upgrade_a == r.mean_upgrade_b


def test_board_deal_is_reproducible() -> None:
    rules = RuleSet.official()
    a, _ = play_board_deal("random", "random", rules, 0, 1234, (0, 2))
    b, _ = play_board_deal("random", "random", rules, 0, 1234, (0, 2))
    assert a == b
    c, _ = play_board_deal("random", "random", rules, 0, 1234, (1, 3))
    assert c.hands == a.hands and c.first_leader == a.first_leader


def test_duplicate_games_deal_the_same_cards() -> None:
    rules = RuleSet.official()
    g1, _ = play_game("heuristic", "random", rules, 77, (0, 2))
    g2, _ = play_game("heuristic", "random", rules, 77, (1, 3))
    assert g1.over and g2.over
    d1 = [e["hands"] for e in g1.events if e["type"] == "deal"]
    d2 = [e["hands"] for e in g2.events if e["type"] == "deal"]
    k = min(len(d1), len(d2))
    assert k >= 1 and d1[:k] == d2[:k]
    first1 = next(e for e in g1.events if e["type"] == "deal")
    first2 = next(e for e in g2.events if e["type"] == "deal")
    assert first1["first_leader"] == first2["first_leader"]
    # the heuristic team wins both seatings against random
    assert g1.winner == 0 and g2.winner == 1


def test_unknown_agent_raises() -> None:
    with pytest.raises(ValueError, match="unknown agent"):
        duplicate_match("heuristic", "nobody", 1)


# --- CLI -----------------------------------------------------------------------------------
runner = CliRunner()


def test_cli_json() -> None:
    res = runner.invoke(app, ["arena", "heuristic", "random", "--deals", "2", "--games", "0", "--json", "--seed", "3"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout.strip().splitlines()[-1])
    assert data["deals"] == 4 and data["boards"] == 2 and data["games"] == 0
    assert 0.0 <= data["deal_ci"][0] <= data["deal_win_rate"] <= data["deal_ci"][1] <= 1.0


def test_cli_table() -> None:
    res = runner.invoke(app, ["arena", "random", "random", "--deals", "1", "--games", "1", "--preset", "anhui"])
    assert res.exit_code == 0, res.output
    assert "deal win rate" in res.stdout and "game win rate" in res.stdout and "95% CI" in res.stdout


@pytest.mark.parametrize(
    "args",
    [
        ["arena", "heuristic", "nobody", "--deals", "1"],
        ["arena", "heuristic", "random", "--deals", "0", "--games", "0"],
        ["arena", "heuristic", "random", "--deals", "1", "--preset", "nope"],
        ["arena", "heuristic", "random", "--deals", "1", "--rule", "upgrade=x"],
    ],
)
def test_cli_bad_input_is_one_line_exit_2(args: list[str]) -> None:
    res = runner.invoke(app, args)
    assert res.exit_code == 2
    assert "Traceback" not in res.output
    assert res.output.strip().startswith("error:")
