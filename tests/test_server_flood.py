"""A login flood does not stall a table (issue 11, high): 100 concurrent wrong-password logins
(argon2id at the server's real cost) while a bot table plays on ``guandan serve``: the table's
frames keep flowing (the flood adds less than one second to the longest pause), no login gets a 500, no record write fails
and the stored record holds every action the spectator saw. See ``tests/flood_check.py``."""

from __future__ import annotations

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("websockets")

from flood_check import run


@pytest.mark.slow
def test_login_flood_does_not_stall_a_bot_table():
    """The flood may add at most one second to the longest pause the same table shows with no
    flood on the same machine (measured first: a loaded CI machine has pauses of its own). Before
    the fix the table stood still for over a minute (68 s measured, 50 logins answered 500, two
    record writes lost)."""
    baseline = run(logins=0, warmup_s=1.0)
    out = run(logins=100, warmup_s=2.0)
    assert out["frames_during"] > 10, out
    assert out["spectator_dropped"] is None, out
    assert out["max_gap_s"] < 1.0 + baseline["max_gap_s"], (baseline["max_gap_s"], out)
    assert "500" not in out["statuses"] and "0" not in out["statuses"], out
    assert set(out["statuses"]) <= {"401", "503"}, out
    assert out["lost_saves"] == 0 and out["server_errors_logged"] == 0, out
    assert out["record_behind"] == 0, out
