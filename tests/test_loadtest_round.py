"""``guandan loadtest --round``: N tables played as one round of an online tournament (issue 21,
"Speed and scale": an online round's move latency beside a plain load test's)."""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

from test_server_hardening import AppServer, fast_hashing, serve  # noqa: F401 (fixtures)
from typer.testing import CliRunner

from guandan.cli import app
from guandan.server.loadtest import LoadTestError, _SecondSeat, _Shared
from guandan.server.loadtest_round import run_round_load


def test_a_round_of_three_tables_is_played_by_two_people_against_a_bot_pair_at_each(serve, fast_hashing):  # noqa: F811
    s: AppServer = serve(registrations_per_hour=0, max_ws_per_address=0)
    report = asyncio.run(run_round_load(s.base, tables=3, deals=1, timeout_s=180))
    assert report.errors == [] and report.n_errors == 0, report.errors
    assert report.tables == 3 and report.tables_done == 3 and not report.timed_out
    # every person acts at least once in a deal (27 cards cannot go out in one play), and a deal has
    # at least 27 actions; actions are counted once per table, not once per person
    assert report.person_actions >= 6 and report.actions >= 3 * 27
    assert 0 < report.p50_ms <= report.p99_ms <= report.max_ms
    assert report.p99_ms <= report.p99_parsed_ms  # each sample's arrival comes before its parse
    assert report.records_checked == 0  # the round's games go on after one deal

    # the server holds one online event: 3 tables, each one pair of people (the registered accounts)
    # against one bot pair, every game still being played
    events = s.http.get("/api/tournaments").json()["tournaments"]
    assert len(events) == 1 and events[0]["name"].startswith("Load test ")
    d = s.http.get(f"/api/tournaments/{events[0]['id']}").json()
    people = {e["id"] for e in d["entries"] if e["name"].startswith("P")}
    assert len(d["entries"]) == 6 and len(people) == 3
    matches = d["rounds_list"][0]["matches"]
    assert sorted(m["table"] for m in matches) == [1, 2, 3]
    assert all(len({m["a"], m["b"]} & people) == 1 for m in matches)
    assert [x["state"] for x in d["online_tables"]] == ["playing"] * 3


def test_a_server_that_limits_registrations_is_named_with_the_option_to_lift_it(serve, fast_hashing):  # noqa: F811
    s: AppServer = serve(registrations_per_hour=3, max_ws_per_address=0)
    with pytest.raises(LoadTestError, match=r"\(429\) \(start the server with --registrations-per-hour 0\)"):
        asyncio.run(run_round_load(s.base, tables=2, deals=1, timeout_s=60))


def test_the_second_person_of_a_table_counts_no_actions_but_shares_the_rest() -> None:
    shared = _Shared(deadline=0.0, all_done=asyncio.Event())
    second = _SecondSeat(shared)
    second.actions += 5
    second.start_actions += 2
    second.person_actions += 1
    second.latencies.append(3.0)
    assert (shared.actions, shared.start_actions) == (0, 0) and (second.actions, second.start_actions) == (5, 2)
    assert shared.person_actions == 1 and shared.latencies == [3.0]


def test_round_mode_refuses_spectators() -> None:
    r = CliRunner().invoke(app, ["loadtest", "--round", "-n", "2", "--spectators", "1"])
    assert r.exit_code == 2 and "--round plays without spectators" in r.output
