"""The duplicate team match page (复式, /teammatch/{id}) in Chromium on a live server (SQLite file, no mocks).

* a finished practice match: two people (one with a long name) and six bots, 4 boards; their seats are
  played by the bot (托管); the page shows the running score the API computed, every board's two results
  and its score, and replay/review links for each table;
* a match in progress: table 2 (bots) has played every board while table 1's person has not started
  board 1: the page shows no result, no link and no score of any board ("hidden until both tables have
  played"), the score 13:13, and the person's link to their own table;
* screenshots at 1366×768, 1920×1080, 390×844 and 844×390 in Chinese and English
  (``test-artifacts/teammatch-*.png``); the page never scrolls sideways.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

pytest.importorskip("uvicorn")

PASSWORD = "teammatch-pass-1"
PEOPLE = ["alexandra_montgomery", "kim", "zhang_wei"]
VIEWPORTS = [(1366, 768), (1920, 1080), (390, 844), (844, 390)]
BOTS = [["bot:easy", "bot:easy"], ["bot:easy", "bot:easy"]]


def _wait(c: httpx.Client, mid: int, done: Any, limit_s: float = 180) -> dict[str, Any]:
    end = time.monotonic() + limit_s
    while time.monotonic() < end:
        d = c.get(f"/api/teammatches/{mid}").json()
        if done(d):
            return d
        time.sleep(0.2)
    raise AssertionError(f"team match {mid} did not get there")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, browser: Any) -> Iterator[Any]:
    from browser_helpers import LiveServer

    srv = LiveServer(tmp_path_factory.mktemp("teammatch-pages") / "guandan.db", bot_delay_s=0,
                     settings={"teammatch_start_grace_s": 0.0})
    try:
        clients = {}
        for name in PEOPLE:
            c = httpx.Client(base_url=srv.base, timeout=60)
            assert c.post("/api/register", json={"name": name, "password": PASSWORD}).status_code == 200
            clients[name] = c
        org = clients["kim"]
        srv.app.state.manager.away_grace_s = 0.05  # the people's seats of the finished match: the bot plays
        r = org.post("/api/teammatches", json={"name": "Club night 俱乐部之夜", "boards": 4,
                                               "team_a": [["alexandra_montgomery", "bot:easy"], ["bot:normal", "bot:easy"]],
                                               "team_b": [["bot:easy", "bot:easy"], ["kim", "bot:easy"]]})
        assert r.status_code == 200, r.text
        srv.finished = r.json()["id"]
        srv.finished_json = _wait(org, srv.finished, lambda d: d["status"] == "finished")
        srv.app.state.manager.away_grace_s = 3600.0  # zhang_wei's seat waits: table 1 never starts board 1
        r = org.post("/api/teammatches", json={"name": "Practice", "boards": 4,
                                               "team_a": [["zhang_wei", "bot:easy"], ["bot:easy", "bot:easy"]],
                                               "team_b": BOTS})
        assert r.status_code == 200, r.text
        srv.playing = r.json()["id"]
        _wait(org, srv.playing, lambda d: d["tables"][1]["played"] == 4)
        for c in clients.values():
            c.close()
        yield srv
    finally:
        srv.stop()


def _no_sideways_scroll(page: Any) -> None:
    widths = page.evaluate("() => [document.documentElement.scrollWidth, document.body.scrollWidth, window.innerWidth]")
    assert max(widths[:2]) <= widths[2], f"horizontal overflow: {widths}"


def test_the_team_match_pages_at_four_viewports(browser: Any, server: Any) -> None:
    from browser_helpers import ARTIFACTS, WAIT_MS, PageGuard, tid

    from guandan.server.auth import COOKIE_NAME

    ARTIFACTS.mkdir(exist_ok=True)
    api = httpx.Client(base_url=server.base, timeout=30)
    assert api.post("/api/login", json={"name": "zhang_wei", "password": PASSWORD}).status_code == 200
    token = api.cookies.get(COOKIE_NAME)
    done = server.finished_json
    problems: list[str] = []
    for locale in ("zh-CN", "en-US"):
        lang = locale[:2]
        for w, h in VIEWPORTS:
            ctx = browser.new_context(base_url=server.base, locale=locale, viewport={"width": w, "height": h})
            ctx.set_default_timeout(WAIT_MS)
            ctx.add_cookies([{"name": COOKIE_NAME, "value": token, "url": server.base}])
            page = ctx.new_page()
            guard = PageGuard(page, f"teammatch {locale} {w}x{h}")
            # the finished match: the API's totals, each board's two results and score, four links per board
            page.goto(f"/teammatch/{server.finished}")
            tid(page, "teammatch-board").first.wait_for()
            assert tid(page, "teammatch-points-a").inner_text() == str(done["points"][0])
            assert tid(page, "teammatch-points-b").inner_text() == str(done["points"][1])
            scores = [s.replace("−", "-").replace("+", "") for s in tid(page, "teammatch-board-score").all_inner_texts()]
            assert scores == [str(b["score"]) for b in done["boards"]]
            assert tid(page, "teammatch-replay-link").count() == 8 and tid(page, "teammatch-review-link").count() == 8
            assert page.locator("[data-testid=teammatch-board][data-open='1']").count() == 4
            _no_sideways_scroll(page)
            page.evaluate("() => window.scrollTo(0, 0)")
            page.screenshot(path=str(ARTIFACTS / f"teammatch-{lang}-{w}x{h}.png"))
            tid(page, "teammatch-boards").screenshot(path=str(ARTIFACTS / f"teammatch-boards-{lang}-{w}x{h}.png"))
            # the match in progress, seen by table 1's player: nothing of any board, the link to their table
            page.goto(f"/teammatch/{server.playing}")
            tid(page, "teammatch-room-link").wait_for()
            assert page.locator("[data-testid=teammatch-board][data-open='0']").count() == 4
            assert tid(page, "teammatch-replay-link").count() == 0
            assert tid(page, "teammatch-points-a").inner_text() == "13" == tid(page, "teammatch-points-b").inner_text()
            hidden = "两张桌都打完后显示" if lang == "zh" else "hidden until both tables have played"
            assert page.get_by_text(hidden).count() == 4
            _no_sideways_scroll(page)
            page.evaluate("() => window.scrollTo(0, 0)")
            page.screenshot(path=str(ARTIFACTS / f"teammatch-playing-{lang}-{w}x{h}.png"))
            if (w, h) == (390, 844):  # the player's own board room (no owner) opens as a table
                tid(page, "teammatch-room-link").click()
                tid(page, "table").wait_for()
                page.screenshot(path=str(ARTIFACTS / f"teammatch-room-{lang}-{w}x{h}.png"))
            problems += guard.problems()
            ctx.close()
    api.close()
    assert not problems, "\n".join(problems)


def test_an_online_team_tournament_links_its_team_matches(browser: Any, server: Any) -> None:
    from browser_helpers import ARTIFACTS, WAIT_MS, PageGuard, tid

    api = httpx.Client(base_url=server.base, timeout=60)
    assert api.post("/api/login", json={"name": "kim", "password": PASSWORD}).status_code == 200
    r = api.post("/api/tournaments", json={"name": "Team cup 团体赛", "venue": "online", "team": True, "rounds": 1})
    assert r.status_code == 201, r.text
    tour = r.json()["tournament"]
    entries = [{"name": f"Team {i}", "players": [f"t{i}a", f"t{i}b", f"t{i}c", f"t{i}d"], "bot": "easy"}
               for i in range(1, 5)]
    assert api.post(f"/api/tournaments/{tour['id']}/entries",
                    json={"version": tour["version"], "entries": entries}).status_code == 200
    v = api.get(f"/api/tournaments/{tour['id']}").json()["version"]
    assert api.post(f"/api/tournaments/{tour['id']}/rounds", json={"version": v}).status_code == 200
    end = time.monotonic() + 240
    while not api.get(f"/api/tournaments/{tour['id']}").json()["rounds_list"][0]["complete"]:
        assert time.monotonic() < end, "the team round did not finish"
        time.sleep(0.3)
    ctx = browser.new_context(base_url=server.base, locale="zh-CN", viewport={"width": 390, "height": 844})
    ctx.set_default_timeout(WAIT_MS)
    page = ctx.new_page()
    guard = PageGuard(page, "team tournament")
    page.goto(f"/tournaments/{tour['id']}")
    tid(page, "teammatch-link").first.wait_for()
    assert tid(page, "teammatch-link").count() == 2
    page.screenshot(path=str(ARTIFACTS / "teammatch-tournament-zh-390x844.png"))
    tid(page, "teammatch-link").first.click()
    tid(page, "teammatch-board").first.wait_for()
    assert page.locator("[data-testid=teammatch-board][data-open='1']").count() == 8
    _no_sideways_scroll(page)
    problems = guard.problems()
    ctx.close()
    api.close()
    assert not problems, "\n".join(problems)
