"""``guandan loadtest --people 2``: a plain load test whose tables have two scripted people (seats 0
and 2, partners), the load of an online round's table (issue 21, "Speed and scale": the round's move
latency set beside a plain load test with as many people per table)."""

from __future__ import annotations

import asyncio

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

from test_server_hardening import AppServer, fast_hashing, serve  # noqa: F401 (fixtures)
from typer.testing import CliRunner

from guandan.cli import app
from guandan.server.loadtest import LoadTestError, run_load


def test_two_people_sit_opposite_each_other_and_both_are_timed(serve):  # noqa: F811
    s: AppServer = serve(max_ws_per_address=0)
    report = asyncio.run(run_load(s.base, tables=2, deals=1, timeout_s=120, people=2))
    assert report.errors == [] and report.n_errors == 0, report.errors
    assert report.people == 2 and report.tables_done == 2 and not report.timed_out
    # actions are counted once per table (a deal has at least 27), every person's acts are timed
    assert report.actions >= 2 * 27 and report.person_actions == len(report.samples) >= 4
    assert 0 < report.p50_ms <= report.p99_ms <= report.max_ms
    assert report.records_checked == 0  # a game two people play is not abandoned, so none is complete
    rooms = [r for r in s.http.get("/api/rooms").json()["rooms"] if r["name"].startswith("loadtest ")]
    assert sorted(r["name"] for r in rooms) == ["loadtest 0", "loadtest 1"]
    for r in rooms:
        kinds = [x["kind"] for x in sorted(r["seats"], key=lambda x: x["seat"])]
        assert kinds == ["person", "bot", "person", "bot"] and r["status"] == "playing"
        # two guest accounts, not one account in two seats
        people = [x for x in r["seats"] if x["kind"] == "person"]
        assert people[0]["user"] != people[1]["user"]


def test_people_per_table_is_one_or_two() -> None:
    with pytest.raises(LoadTestError, match="--people must be 1 or 2"):
        asyncio.run(run_load("http://127.0.0.1:9", tables=1, people=3))
    runner = CliRunner()
    r = runner.invoke(app, ["loadtest", "-n", "1", "--people", "3"])
    assert r.exit_code == 2 and "--people" in r.output
    r = runner.invoke(app, ["loadtest", "--round", "-n", "1", "--people", "1"])
    assert r.exit_code == 2 and "--round plays both people of a pair" in r.output


def test_every_message_of_a_scripted_person_keeps_within_the_server_s_limit() -> None:
    """``ready`` between deals counts like an act: with CLIENT_RATE messages in the last second
    the next one waits until the oldest is a second old (the server refuses the 21st, and a refused
    act came back as a 1 s latency sample)."""
    import time
    from collections import deque

    from guandan.server.loadtest import CLIENT_RATE, _pace

    assert CLIENT_RATE == 18
    now = time.monotonic()
    sent = deque([now - 2.0] + [now - 0.9] * CLIENT_RATE)
    asyncio.run(_pace(sent))
    waited = time.monotonic() - now
    assert 0.09 <= waited < 0.6 and len(sent) == 0  # every old time dropped once a second old
    sent = deque([time.monotonic() - 0.5] * (CLIENT_RATE - 1))
    t = time.monotonic()
    asyncio.run(_pace(sent))
    assert time.monotonic() - t < 0.05 and len(sent) == CLIENT_RATE - 1  # room for one more: no wait
