"""``guandan bench`` and :mod:`guandan.evaluation.bench`: the JSON shape and the pinned move counts.

Timings are not asserted (the speed targets live in the benchmark itself, not in tests).

The move counts of the ten scenarios (level 7, wilds = the two 7H) are the numbers of plays
``legal_plays`` returns, PASS not counted. The four no-wild answers are derived by hand from
docs/rules.md below; all ten are also pinned, with a fingerprint of the enumeration, in
``tests/test_perft.py``, which checks them against the independent brute-force reference
(``tests/reference.py``).
"""

from __future__ import annotations

import json
import pathlib

import pytest
from typer.testing import CliRunner

from guandan.cli import app
from guandan.evaluation import bench

#: the project's copy of the shared benchmark scenarios
PERF = pathlib.Path(__file__).resolve().parent / "cases" / "perf-hands.json"

# Hand (no wild): 2S 3S 4C 4H 5C 5H 5S 6S 6S 7C 7D 7S 8S TC TD TH TH JC JC JD JH JS QD QS AD BJ BJ.
# Level order at level 7 (R9): 2 3 4 5 6 8 9 T J Q K A 7 SJ BJ. Bombs in the hand (R19, R24):
# J has five cards {JC JC JD JH JS}: 4-card bombs {JC JD JH JS} and {JC JC + two of D H S} (1 + 3),
# the 5-card bomb (1); T has {TC TD TH TH}: one 4-card bomb; no straight flush (spades 2 3 5 6 7 8 Q
# have no five in a row); one joker pair only, no four-joker bomb. So 6 bombs, and every bomb beats
# any non-bomb (R25).
# * single_nowild (beat 8C): singles of distinct faces above 8: T 3, J 4, Q 2, A 1, 7 (level) 3,
#   BJ 1 = 14; + 6 bombs = 20.
# * pair_nowild (beat 6S 6D): pairs above 6: 7 C(3,2) = 3, T {TC TD, TC TH, TD TH, TH TH} = 4,
#   J {JC JC, and the 6 pairs of distinct faces from C D H S} = 7, Q 1, BJ BJ 1 = 16; + 6 = 22.
# * straight_nowild (beat 4-5-6-7-8, top 8): every higher window (tops 9..A) needs a 9 or a K;
#   the hand has neither, so 0 straights; + 6 bombs = 6.
# * bomb4_nowild (beat 5555): the five J bombs and the T bomb are all above a 4-card 5 bomb: 6.
PINNED_MOVES = {
    "lead_nowild": 356,
    "single_nowild": 20,
    "pair_nowild": 22,
    "straight_nowild": 6,
    "bomb4_nowild": 6,
    "lead_wild": 2367,
    "single_wild": 93,
    "pair_wild": 106,
    "straight_wild": 228,
    "bomb4_wild": 74,
}

runner = CliRunner()


def test_json_shape_and_move_counts():
    res = runner.invoke(app, ["bench", "--json", "--repeat", "3", "--deals-seconds", "0.05"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert {"scenarios", "random_deals_per_s", "peak_mb"} <= set(data)
    assert [row["id"] for row in data["scenarios"]] == list(PINNED_MOVES)
    for row in data["scenarios"]:
        assert {"id", "us_per_call", "moves"} <= set(row)
        assert isinstance(row["us_per_call"], float) and row["us_per_call"] > 0
        assert row["moves"] == PINNED_MOVES[row["id"]], row["id"]
    assert isinstance(data["random_deals_per_s"], float) and data["random_deals_per_s"] > 0
    assert data["random_deals_per_s_views"] > 0
    assert data["deals_played"] >= 2  # at least one deal per self-play figure
    assert data["peak_mb"] > 0 and data["peak_mb_source"] == "ru_maxrss"
    assert data["targets"]["random_deals_per_s"] == 150
    assert data["targets"]["us_per_call"]["lead_wild"] == 1000


def test_json_without_self_play():
    res = runner.invoke(app, ["bench", "--json", "--repeat", "1", "--deals-seconds", "0"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["random_deals_per_s"] is None and data["deals_played"] == 0
    assert {row["id"]: row["moves"] for row in data["scenarios"]} == PINNED_MOVES


def test_human_table_marks_targets():
    res = runner.invoke(app, ["bench", "--repeat", "2", "--deals-seconds", "0.05"])
    assert res.exit_code == 0, res.output
    out = res.stdout
    for sid in PINNED_MOVES:
        assert sid in out
    assert "PASS" in out or "OVER TARGET" in out
    assert "deals/s" in out and "ru_maxrss" in out and "PASS not counted" in out


def test_render_marks_over_target():
    from rich.console import Console

    from guandan.cli.bench_cmd import render

    result = {
        "scenarios": [
            {"id": "lead_nowild", "us_per_call": 151.0, "moves": 356, "target_us": 150.0},
            {"id": "single_nowild", "us_per_call": 50.0, "moves": 20, "target_us": 50.0},
        ],
        "random_deals_per_s": 149.9,
        "random_deals_per_s_views": 100.0,
        "peak_mb": 30.0,
        "repeat": 5,
        "targets": {"random_deals_per_s": 150.0},
    }
    console = Console(width=200, record=True)
    console.print(render(result))
    text = console.export_text()
    lead = next(line for line in text.splitlines() if "lead_nowild" in line)
    single = next(line for line in text.splitlines() if "single_nowild" in line)
    deals = next(line for line in text.splitlines() if "legal_actions" in line)
    assert "OVER TARGET" in lead
    assert "PASS" in single  # equal to the target passes
    assert "OVER TARGET" in deals


@pytest.mark.parametrize(
    "args, message",
    [
        (["--repeat", "0"], "--repeat must be at least 1"),
        (["--deals-seconds", "-1"], "--deals-seconds must be 0 to 3600"),
        (["--hands", "/nonexistent/perf.json"], "cannot read"),
    ],
)
def test_bad_options_are_one_line_errors(args, message):
    res = runner.invoke(app, ["bench", *args])
    assert res.exit_code == 2
    assert message in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1
    assert "Traceback" not in res.output


def test_bad_hands_file(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"scenarios": []}')
    res = runner.invoke(app, ["bench", "--hands", str(bad)])
    assert res.exit_code == 2 and "missing key 'level_rank'" in res.stderr
    bad.write_text("not json")
    res = runner.invoke(app, ["bench", "--hands", str(bad)])
    assert res.exit_code == 2 and "not JSON" in res.stderr


def test_default_scenarios_tables():
    scs = {sc.id: sc for sc in bench.default_scenarios()}
    assert list(scs) == list(PINNED_MOVES)
    assert all(sc.level == 5 for sc in scs.values())  # rank index of 7
    assert scs["lead_wild"].table is None
    assert scs["single_wild"].table == ("single", 6, (26,))  # 8C
    assert scs["pair_nowild"].table == ("pair", 4, (16, 19))  # 6S 6D
    assert scs["straight_nowild"].table == ("straight", 6, (10, 15, 16, 22, 25))  # 4C 5D 6S 7C 8H, top 8
    assert scs["bomb4_wild"].table == ("bomb", 3, (12, 13, 14, 15))  # 5S 5H 5C 5D
    assert scs["lead_wild"].hand.count(21) == 2  # two 7H wilds
    assert 21 not in scs["lead_nowild"].hand


def test_embedded_scenarios_match_shared_file():
    assert bench.load_scenarios(PERF) == bench.default_scenarios()


def test_library_calls():
    sc = bench.default_scenarios()[1]
    us, n = bench.time_scenario(sc, repeat=2)
    assert us > 0 and n == PINNED_MOVES[sc.id]
    rate, played = bench.random_deals(10.0, seed=3, max_deals=1)
    assert played == 1 and rate > 0
    rate, played = bench.random_deals(10.0, seed=3, views=True, max_deals=1)
    assert played == 1 and rate > 0
    with pytest.raises(ValueError):
        bench.time_scenario(sc, repeat=0)
    with pytest.raises(ValueError):
        bench.random_deals(0)
    with pytest.raises(ValueError):
        bench.run_bench(repeat=1, deals_seconds=-1)
