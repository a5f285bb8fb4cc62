"""The daily challenge in Chromium on a live server (fresh SQLite file, no mocks; issue 22).

* a field first: three registered players (one with a long name) start
  boards 1 and 2 through the API and never open them, so the bot plays their seats (托管) to
  the end; their results are the field;
* on a phone (390×844), in Chinese and in English, a newcomer opens ``/challenge`` from the lobby's
  link, signs up through the page, starts board 1 (confirming that it is played once), plays
  every decision of seat 0 through the table's Hint and Play/Pass buttons to the deal's end, and
  goes back to the challenge from the game-over panel: the board shows the result and the
  percentage the API computed, its results panel lists the four results, the leaderboard names
  the player, and starting board 1 again is impossible (no Play button; the API answers 409);
* screenshots of the challenge page and of its leaderboard at 1366×768, 1920×1080, 390×844 and
  844×390 in Chinese and English (``test-artifacts/challenge-*.png``); the page never scrolls
  sideways.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

pytest.importorskip("uvicorn")

PASSWORD = "challenge-pass-1"
FIELD = ["zhang_wei", "alexandra_montgomery", "kim"]
VIEWPORTS = [(1366, 768), (1920, 1080), (390, 844), (844, 390)]


def _wait_played(c: httpx.Client, board: int, limit_s: float = 120) -> dict[str, Any]:
    end = time.monotonic() + limit_s
    while time.monotonic() < end:
        row = c.get("/api/challenge/today").json()["boards"][board - 1]
        if row["status"] == "played":
            return row
        time.sleep(0.1)
    raise AssertionError(f"board {board} did not finish")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, browser: Any) -> Iterator[Any]:
    from browser_helpers import LiveServer

    srv = LiveServer(tmp_path_factory.mktemp("challenge-pages") / "guandan.db", bot_delay_s=0,
                     settings={"challenge_boards": 6, "challenge_start_grace_s": 0.0})
    try:
        srv.app.state.manager.away_grace_s = 0.05  # the field's seats: the bot plays at once
        for name in FIELD:
            c = httpx.Client(base_url=srv.base, timeout=60)
            assert c.post("/api/register", json={"name": name, "password": PASSWORD}).status_code == 200
            for board in (1, 2):
                assert c.post(f"/api/challenge/boards/{board}/play", json={}).status_code == 200
                _wait_played(c, board)
            c.close()
        srv.app.state.manager.away_grace_s = 3600.0  # the browser's player is never replaced
        yield srv
    finally:
        srv.stop()


def _no_sideways_scroll(page: Any) -> None:
    widths = page.evaluate("() => [document.documentElement.scrollWidth, document.body.scrollWidth, window.innerWidth]")
    assert max(widths[:2]) <= widths[2], f"horizontal overflow: {widths}"


@pytest.mark.parametrize("locale", ["zh-CN", "en-US"])
def test_a_newcomer_plays_a_board_to_the_end_on_a_phone(browser: Any, server: Any, locale: str) -> None:
    from browser_helpers import ARTIFACTS, WAIT_MS, PageGuard, TableWatcher, act, is_my_turn, register, tid

    ARTIFACTS.mkdir(exist_ok=True)
    lang = locale[:2]
    name = f"new_{lang}"
    ctx = browser.new_context(base_url=server.base, locale=locale, viewport={"width": 390, "height": 844})
    ctx.set_default_timeout(WAIT_MS)
    page = ctx.new_page()
    guard = PageGuard(page, f"challenge {locale}")
    try:
        watcher = TableWatcher(page)
        page.on("dialog", lambda d: d.accept())  # "each board is played once": yes
        page.goto("/")
        tid(page, "lobby-challenge-link").click()
        page.wait_for_url("**/challenge")
        tid(page, "challenge-sign-in").locator("a").click()
        register(page, name, PASSWORD)
        page.wait_for_url("**/challenge")
        tile = page.locator("[data-testid=challenge-board][data-board='1']")
        tile.locator("[data-testid=challenge-play-btn]").click()
        page.wait_for_url("**/room/**")
        room = page.url.rsplit("/", 1)[-1]
        end = time.monotonic() + 240
        decisions = 0
        while not page.locator("[data-testid=challenge-back]").count():
            assert time.monotonic() < end, "the board did not end"
            if is_my_turn(page):
                act(page, watcher)
                decisions += 1
            else:
                page.wait_for_timeout(50)
        assert decisions >= 1
        assert not page.locator("[data-testid=again-btn]").count()  # a board is not played again
        page.screenshot(path=str(ARTIFACTS / f"challenge-board-over-{lang}.png"))
        api = httpx.Client(base_url=server.base, timeout=30)
        assert api.post("/api/login", json={"name": name, "password": PASSWORD}).status_code == 200
        mine = api.get("/api/challenge/today").json()["boards"][0]
        assert mine["status"] == "played" and mine["room"] is None
        tid(page, "challenge-back").click()
        page.wait_for_url("**/challenge")
        tile = page.locator("[data-testid=challenge-board][data-board='1']")
        tile.locator("[data-testid=challenge-board-result]").wait_for()
        shown = tile.locator("[data-testid=challenge-board-result]").inner_text().replace("−", "-")
        assert shown == (f"+{mine['result']}" if mine["result"] > 0 else str(mine["result"]))
        assert mine["pct"] is not None and tile.locator("[data-testid=challenge-board-pct]").inner_text().startswith(
            f"{mine['pct']:.1f}".rstrip("0").rstrip("."))
        assert not tile.locator("[data-testid=challenge-play-btn]").count()
        again = api.post("/api/challenge/boards/1/play", json={})
        assert again.status_code == 409 and again.json()["code"] == "board_played"
        tile.locator("[data-testid=challenge-results-btn]").click()
        rows = page.locator("[data-testid=challenge-result-row]")
        rows.first.wait_for()
        # the three of the field, the other language's newcomer if it ran first, and this player
        assert rows.count() == len(api.get(f"/api/challenge/days/{api.get('/api/challenge/today').json()['day']}"
                                           "/boards/1").json()["results"]) >= 4
        assert tid(page, "challenge-leaderboard").inner_text().count(name) == 1
        _no_sideways_scroll(page)
        page.evaluate("() => window.scrollTo(0, 0)")
        page.screenshot(path=str(ARTIFACTS / f"challenge-played-{lang}-390x844.png"))
        assert room
        api.close()
    finally:
        problems = guard.problems()
        ctx.close()
    assert not problems, "\n".join(problems)


def test_screenshots_of_the_challenge_and_its_leaderboard(browser: Any, server: Any) -> None:
    from browser_helpers import ARTIFACTS, WAIT_MS, PageGuard, tid

    from guandan.server.auth import COOKIE_NAME

    ARTIFACTS.mkdir(exist_ok=True)
    api = httpx.Client(base_url=server.base, timeout=30)
    assert api.post("/api/login", json={"name": FIELD[1], "password": PASSWORD}).status_code == 200
    token = api.cookies.get(COOKIE_NAME)
    problems: list[str] = []
    for locale in ("zh-CN", "en-US"):
        for w, h in VIEWPORTS:
            ctx = browser.new_context(base_url=server.base, locale=locale, viewport={"width": w, "height": h})
            ctx.set_default_timeout(WAIT_MS)
            ctx.add_cookies([{"name": COOKIE_NAME, "value": token, "url": server.base}])
            page = ctx.new_page()
            guard = PageGuard(page, f"screens {locale} {w}x{h}")
            page.goto("/challenge")
            tid(page, "challenge-leaderboard-row").first.wait_for()
            tid(page, "challenge-history-row").first.wait_for()
            page.locator("[data-testid=challenge-board][data-board='1'] [data-testid=challenge-results-btn]").click()
            tid(page, "challenge-board-panel").wait_for()
            _no_sideways_scroll(page)
            lang = locale[:2]
            # the viewport as the player sees it (the header is sticky: a full-page shot misplaces it)
            page.evaluate("() => window.scrollTo(0, 0)")
            page.screenshot(path=str(ARTIFACTS / f"challenge-{lang}-{w}x{h}.png"))
            tid(page, "challenge-board-panel").screenshot(path=str(ARTIFACTS / f"challenge-board-{lang}-{w}x{h}.png"))
            tid(page, "challenge-lb-week").click()
            tid(page, "challenge-lb-week").and_(page.locator("[aria-pressed=true]")).wait_for()
            tid(page, "challenge-leaderboard").screenshot(path=str(ARTIFACTS / f"challenge-leaderboard-{lang}-{w}x{h}.png"))
            problems += guard.problems()
            ctx.close()
    api.close()
    assert not problems, "\n".join(problems)
