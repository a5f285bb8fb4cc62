"""A login flood does not stall a table (issue 11, high): 100 concurrent wrong-password logins
(argon2id at the server's real cost) while a bot table plays on ``guandan serve``: the table's
frames keep flowing (no gap of one second or more), no login gets a 500, no record write fails
and the stored record holds every action the spectator saw. See ``tests/flood_check.py``."""

from __future__ import annotations

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("websockets")

from flood_check import run


@pytest.mark.slow
def test_login_flood_does_not_stall_a_bot_table():
    out = run(logins=100, warmup_s=2.0)
    assert out["frames_during"] > 10, out
    assert out["max_gap_s"] < 1.0, out
    assert "500" not in out["statuses"] and "0" not in out["statuses"], out
    assert set(out["statuses"]) <= {"401", "503"}, out
    assert out["lost_saves"] == 0 and out["server_errors_logged"] == 0, out
    assert out["record_behind"] == 0, out
