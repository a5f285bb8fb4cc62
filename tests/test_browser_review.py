"""The review page (复盘, issue 22) in the browser: live server, real SQLite, the machine's Chromium.

* ``test_review_from_the_replay_zh_phone``: zh-CN at 390×844, signed in as a guest: the replay's
  复盘 button opens the review of the deal shown; a progress bar while it computes, then the seat's
  decisions; the known mistake (the seat could go out at once and passed or led a single) is marked
  大错/失误 with the move that goes out as the best alternative; the real-hands toggle shows the best
  compared move on the real hands; the four hands before the chosen decision hold the cards the engine's replay
  says each seat held then; no horizontal scroll. Screenshots ``test-artifacts/review-zh-*.png``.
* ``test_review_en_desktop``: en-US at 1366×768, the same review answered from the cache at once,
  in English. Screenshot ``test-artifacts/review-en-desktop.png``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import pytest
from browser_helpers import ARTIFACTS, WAIT_MS, LiveServer, PageGuard, sign_in_guest, tid, wait_until
from review_helpers import TEST_BUDGET, finished_mistake_game, store_game

from guandan.core.cards import card_text
from guandan.review import deal_decisions


@pytest.fixture(scope="module")
def game() -> tuple[list[str], int, int]:
    return finished_mistake_game()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, browser: Any, game: Any) -> Iterator[tuple[LiveServer, int]]:
    srv = LiveServer(tmp_path_factory.mktemp("review-ui") / "guandan.db",
                     settings={"review_budget": TEST_BUDGET, "review_jobs_per_account": 3})
    try:
        yield srv, store_game(srv.app.state.session_factory, game[0])
    finally:
        srv.stop()


def _page(browser: Any, srv: LiveServer, locale: str, size: tuple[int, int]) -> tuple[Any, Any, PageGuard]:
    ctx = browser.new_context(base_url=srv.base, locale=locale, viewport={"width": size[0], "height": size[1]})
    ctx.set_default_timeout(WAIT_MS)
    page = ctx.new_page()
    return ctx, page, PageGuard(page, locale)


def _no_horizontal_scroll(page: Any) -> None:
    wide = page.evaluate("() => [document.documentElement.scrollWidth, window.innerWidth]")
    assert wide[0] <= wide[1], f"horizontal scroll: content {wide[0]} px in a {wide[1]} px window"


def _wait_review(page: Any) -> None:
    tid(page, "review-list").wait_for(timeout=240_000)


def test_review_from_the_replay_zh_phone(browser: Any, served: Any, game: Any) -> None:
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    srv, gid = served
    lines, seat, idx = game
    ARTIFACTS.mkdir(exist_ok=True)
    ctx, page, guard = _page(browser, srv, "zh-CN", (390, 844))
    try:
        page.goto("/")
        sign_in_guest(page)
        page.goto(f"/replay/{gid}")
        tid(page, "replay-review").wait_for()
        assert tid(page, "replay-review").inner_text() == "复盘"
        _no_horizontal_scroll(page)
        page.screenshot(path=str(ARTIFACTS / "review-zh-replay-button.png"))
        tid(page, "replay-review").click()
        wait_until(page, lambda: "/review/" in page.url, "the review page")
        assert "deal=1" in page.url and "seat=0" in page.url
        tid(page, "review-title").wait_for()
        if seat != 0:
            _wait_review(page)  # seat 0's review first, then the seat of the mistake
            tid(page, f"review-seat-{seat}").click()
        # the progress bar, caught part-way when the machine is slow enough
        moved = "() => { const b = document.querySelector('[data-testid=review-progress-bar]');"
        moved += " return !b || (b.style.width !== '0%' && b.style.width !== '') }"
        with contextlib.suppress(PlaywrightTimeout):  # the review may be done already, or still queued
            page.wait_for_function(moved, timeout=8000)
            if tid(page, "review-progress").count():
                page.screenshot(path=str(ARTIFACTS / "review-zh-progress.png"))
        _wait_review(page)
        assert tid(page, f"review-seat-{seat}").get_attribute("aria-pressed") == "true"
        row = page.locator(f'[data-testid="review-row"][data-index="{idx}"]')
        assert "costly" in (row.get_attribute("class") or "")
        assert row.locator('[data-testid="review-mark"]').inner_text() in ("大错", "失误")
        assert row.locator('[data-testid="review-best"]').count() == 1
        assert "胜率 100%" in row.locator('[data-testid="review-est-best"]').inner_text()
        assert "复盘" in tid(page, "review-title").inner_text()
        # the position before the marked decision (selected first): each hand as the engine replays it
        real = deal_decisions(lines, seat, 1).decisions[idx].real
        counts = [tid(page, f"review-hand-{x}").locator("[data-card]").count() for x in range(4)]
        assert counts == list(real.n_cards)
        hand = sorted(tid(page, f"review-hand-{seat}").locator("[data-card]").evaluate_all("els => els.map(e => e.dataset.card)"))
        want = sorted(card_text(f) for f, n in enumerate(real.hands[seat]) for _ in range(n))
        assert hand == want
        _no_horizontal_scroll(page)
        page.screenshot(path=str(ARTIFACTS / "review-zh-phone.png"), full_page=True)
        page.evaluate("() => window.scrollTo(0, 0)")
        page.screenshot(path=str(ARTIFACTS / "review-zh-phone-top.png"))
        tid(page, "review-view-real").click()
        assert tid(page, "review-view-real").get_attribute("aria-pressed") == "true"
        assert row.locator('[data-testid="review-real-best"]').count() == 1
        _no_horizontal_scroll(page)
        row.scroll_into_view_if_needed()
        page.screenshot(path=str(ARTIFACTS / "review-zh-phone-real.png"))
    finally:
        ctx.close()
    assert not guard.problems(), guard.problems()


def test_review_en_desktop(browser: Any, served: Any, game: Any) -> None:
    srv, gid = served
    _lines, seat, idx = game
    ctx, page, guard = _page(browser, srv, "en-US", (1366, 768))
    try:
        page.goto(f"/review/{gid}?deal=1&seat={seat}")  # cached: no account needed
        tid(page, "review-list").wait_for(timeout=20_000)
        assert tid(page, "review-progress").count() == 0
        assert "Review of game" in tid(page, "review-title").inner_text()
        row = page.locator(f'[data-testid="review-row"][data-index="{idx}"]')
        assert row.locator('[data-testid="review-mark"]').inner_text() in ("Blunder", "Mistake")
        assert "win 100%" in row.locator('[data-testid="review-est-best"]').inner_text()
        assert tid(page, "review-board").is_visible()
        _no_horizontal_scroll(page)
        page.screenshot(path=str(ARTIFACTS / "review-en-desktop.png"), full_page=True)
        # the next deal's review, for an account-less visitor, asks to sign in
        tid(page, "review-deal-next").click()
        tid(page, "review-error").wait_for()
        assert "sign in" in tid(page, "review-error").inner_text().lower()
        assert "deal=2" in page.url
    finally:
        ctx.close()
    problems = [p for p in guard.problems() if "401" not in p]
    assert not problems, problems
