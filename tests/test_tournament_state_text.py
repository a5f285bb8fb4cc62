"""The tournament state's JSON written fast (issue 21, "Speed and scale": a 200-table online round
rewrote its 0.4 MB state at every finished game, 113 ms of the interpreter lock each, and the last
minute of a round stalled the tables' event loop for 100-460 ms at a time).

``to_dict`` is checked against the standard library's ``dataclasses.asdict`` (the definition it
replaced); the compact text against the indented one."""

from __future__ import annotations

import dataclasses
import json

import pytest

from guandan.tournament.director import add_penalty, claim_result, pair_next_round, withdraw
from guandan.tournament.errors import StateError
from guandan.tournament.model import STATE_VERSION, MatchResult, Tournament, from_json, to_dict, to_json
from guandan.tournament.simulate import build


def _event(index: int) -> Tournament:
    """0: a Swiss event with byes, a penalty, a claim in a round in progress and a withdrawal;
    1: a round robin; 2: groups and a knock-out; 3: 400 pairs with one round played."""
    if index == 0:
        t = build(9, 3, "swiss", seed=3)  # an odd field: byes
        add_penalty(t, 2, 1, "a", 2, "late 10 minutes")
        t.rounds = 4
        rnd = pair_next_round(t)  # a round in progress: one claim, no result
        m = next(x for x in rnd.matches if x.b is not None)
        claim_result(t, rnd.number, m.table, m.a, MatchResult(level_a=9, level_b=7, time_called=True), by="P1a")
        withdraw(t, 9)
        assert t.played[1].matches[0].result.penalties and rnd.matches[m.table - 1].claims
        return t
    if index == 1:
        return build(6, 1, "round_robin", seed=1)
    if index == 2:
        return build(8, 1, "groups_knockout", seed=2)
    return build(400, 1, "swiss", seed=0)


@pytest.mark.parametrize("index", range(4))
def test_to_dict_is_asdict_with_the_version(index: int) -> None:
    t = _event(index)
    expected = dataclasses.asdict(t)
    expected["version"] = STATE_VERSION
    got = to_dict(t)
    assert got == expected
    # nothing mutable is shared with the tournament: changing the dict leaves the state alone
    got["entries"][0]["players"][0]["name"] = "changed"
    got["played"][0]["matches"][0]["claims"]["x"] = None
    assert t.entries[0].players[0].name != "changed" and "x" not in t.played[0].matches[0].claims


@pytest.mark.parametrize("index", range(4))
def test_the_compact_text_is_one_line_and_reads_back_as_the_indented_one(index: int) -> None:
    t = _event(index)
    compact, indented = to_json(t, compact=True), to_json(t)
    assert "\n" not in compact and "\n" in indented
    assert json.loads(compact) == json.loads(indented)
    assert to_dict(from_json(compact)) == to_dict(from_json(indented)) == to_dict(t)


def test_the_compact_text_refuses_infinite_numbers_as_the_indented_one_does() -> None:
    t = build(4, 1, "swiss", seed=0)
    t.entries[0].rating = float("inf")
    for compact in (False, True):
        with pytest.raises(StateError) as e:
            to_json(t, compact=compact)
        assert e.value.params["reason"] == "not_finite"


def test_reading_still_names_the_first_bad_field() -> None:
    d = to_dict(build(4, 1, "swiss", seed=0))
    d["entries"][1]["rating"] = "high"
    with pytest.raises(StateError) as e:
        from_json(json.dumps(d))
    assert e.value.params["field"] == "entries[1].rating" and "'high' is not a finite number or null" in str(e.value)
    d = to_dict(build(4, 1, "swiss", seed=0))
    d["played"][0]["matches"][0]["colour"] = "red"
    with pytest.raises(StateError) as e:
        from_json(json.dumps(d))
    assert e.value.params["field"] == "played[0].matches[0]" and "unknown field 'colour'" in str(e.value)
