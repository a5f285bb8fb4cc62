"""The deviation audit (:mod:`guandan.evaluation.search_audit`, ``guandan bench-search --audit``).

The audit walks heuristic self-play and, where a spec deviates from the heuristic, plays both
moves out on the real hands (R29-R33) and scores the deal for the deciding seat's team (R35).
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from guandan.cli import app
from guandan.evaluation.search_audit import run_search_audit

runner = CliRunner()


def test_heuristic_never_deviates_from_itself_and_random_does():
    got = run_search_audit(["heuristic", "random"], games=1, seed=3)
    h, r = got["heuristic"], got["random"]
    # the same late positions are put to every spec
    assert h["positions"] == r["positions"] > 0
    assert h["deviations"] == h["gained"] == h["lost"] == h["even"] == 0
    # a uniformly random legal move (several legal moves at every audited position) differs from
    # the heuristic's somewhere in a deal's late positions
    assert r["deviations"] > 0
    assert r["gained"] + r["lost"] + r["even"] == r["deviations"] <= r["positions"]


def test_late_all_audits_more_positions_than_late_positions():
    late = run_search_audit(["heuristic"], games=1, seed=3, late_cards=10)["heuristic"]["positions"]
    every = run_search_audit(["heuristic"], games=1, seed=3, late_cards=None)["heuristic"]["positions"]
    # a deal starts with 27 cards per seat (R13): its first decisions are not late
    assert every > late


def test_audit_is_deterministic_for_a_seed():
    spec = "hard:worlds=2,workers=1,late=27"
    a = run_search_audit([spec], games=1, seed=4)[spec]
    b = run_search_audit([spec], games=1, seed=4)[spec]
    a.pop("seconds"), b.pop("seconds")
    assert a == b


@pytest.mark.parametrize("kwargs", [{"games": 0}, {"specs": []}, {"specs": ["nosuchbot"]}])
def test_bad_arguments_are_value_errors(kwargs):
    args = {"specs": ["heuristic"], "games": 1, **kwargs}
    with pytest.raises(ValueError):
        run_search_audit(**args)


def test_cli_audit_json_and_errors():
    res = runner.invoke(app, ["bench-search", "--audit", "1", "--spec", "heuristic", "--seed", "3", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout.strip().splitlines()[-1])
    assert out["games"] == 1 and out["specs"]["heuristic"]["deviations"] == 0
    bad = runner.invoke(app, ["bench-search", "--audit", "1", "--late", "soon"])
    assert bad.exit_code == 2 and "--late" in bad.output
    bad = runner.invoke(app, ["bench-search", "--audit", "1", "--spec", "hard:nope=1"])
    assert bad.exit_code == 2 and "--spec" in bad.output
