"""The game-over panel of an online tournament table in Chromium (live server, fresh SQLite file, bots in
the seats, no mocks): it names the winner the tournament decided (R58 after R54 penalties, what the
standings say) and its field points, in zh-CN and en-US, on a desktop and a phone.

Screenshots: ``test-artifacts/tournament-table-over-*.png``.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

pytest.importorskip("uvicorn")

PASSWORD = "tournament-pass-1"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, browser: Any) -> Iterator[Any]:
    from browser_helpers import LiveServer

    srv = LiveServer(tmp_path_factory.mktemp("tour-table") / "guandan.db", bot_delay_s=0.0)
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture(scope="module")
def finished(server: Any) -> dict[str, Any]:
    """One online match of two bot pairs to target level 8 (untimed), played to its end."""
    c = httpx.Client(base_url=server.base, timeout=30)
    assert c.post("/api/register", json={"name": "orga_table", "password": PASSWORD}).status_code == 200
    tid = c.post("/api/tournaments", json={"name": "Eight", "venue": "online", "rounds": 1, "time_limit": 0,
                                           "overrides": {"target_level": "8"}}).json()["tournament"]["id"]
    entries = [{"name": f"Bots {i}", "players": [f"tb{i}x", f"tb{i}y"], "bot": "normal", "seed": i} for i in (1, 2)]
    assert c.post(f"/api/tournaments/{tid}/entries", json={"version": 1, "entries": entries}).status_code == 200
    assert c.post(f"/api/tournaments/{tid}/rounds", json={"version": 2}).status_code == 200
    end = time.monotonic() + 180
    while time.monotonic() < end:
        d = c.get(f"/api/tournaments/{tid}").json()
        room = d["online_tables"][0]["room"]
        comp = server.app.state.manager.competitions.get(room)
        if d["rounds_list"][0]["complete"] and comp is not None and comp.decision is not None:
            break
        time.sleep(0.3)
    else:
        raise AssertionError("the match did not finish")
    m = d["rounds_list"][0]["matches"][0]
    return {"room": room, "winner": m["result"]["passed_a"], "score": m["score"]}


@pytest.mark.parametrize("locale,viewport", [("zh-CN", (1366, 768)), ("en-US", (390, 844))], ids=["zh-desktop", "en-phone"])
def test_game_over_shows_the_tournament_decision(browser: Any, server: Any, finished: dict[str, Any], locale: str,
                                                 viewport: tuple[int, int]) -> None:
    from browser_helpers import ARTIFACTS, WAIT_MS, PageGuard, sign_in_guest, tid

    ctx = browser.new_context(base_url=server.base, locale=locale, viewport={"width": viewport[0], "height": viewport[1]})
    ctx.set_default_timeout(WAIT_MS)
    page = ctx.new_page()
    guard = PageGuard(page, f"table over {locale}")
    try:
        page.goto("/")
        sign_in_guest(page)
        page.goto(f"/room/{finished['room']}")
        tid(page, "game-over-panel").wait_for()
        heading = tid(page, "game-over-heading").inner_text()
        win = finished["winner"]
        fa, fb = finished["score"]["a"]["field_points"], finished["score"]["b"]["field_points"]
        assert (fa, fb) == ((3, 1) if win == "a" else (1, 3))  # R58: passing the target wins
        if locale == "zh-CN":
            team = "甲队" if win == "a" else "乙队"
            assert "胜本场（比赛成绩）" in heading
            assert f"场分 {fa} : {fb}" in tid(page, "match-decision").inner_text()
        else:
            team = "Team A" if win == "a" else "Team B"
            assert "wins the match (tournament result)" in heading
            assert f"Field points {fa} : {fb}" in tid(page, "match-decision").inner_text()
        assert team in heading, heading
        lang = "zh" if locale == "zh-CN" else "en"
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"tournament-table-over-{lang}-{viewport[0]}.png"))
        assert not guard.problems(), guard.problems()
    finally:
        ctx.close()
