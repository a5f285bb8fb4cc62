"""The installable app in a real browser (issue 25, item 5): the service worker registers with scope
"/", precaches the static files into the cache of the static files' version, and a page asked for
while the network is gone shows the offline page in the player's language (Chinese from the
browser's locale, English from the app's saved language choice), with no scrolling and a "try
again" button of a tappable size at the four viewports of the issue. Screenshots go to
``test-artifacts/app-offline-*.png``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("uvicorn")
pytest.importorskip("fastapi")

from browser_helpers import ARTIFACTS, WAIT_MS, LiveServer, PageGuard

from guandan.server.settings import STATIC_DIR
from guandan.server.webapp import static_version

VIEWPORTS = [(1366, 768), (1920, 1080), (390, 844), (844, 390)]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, browser: Any) -> Iterator[LiveServer]:
    srv = LiveServer(tmp_path_factory.mktemp("app") / "guandan.db")
    try:
        yield srv
    finally:
        srv.stop()


def _ready_worker(page: Any) -> dict[str, Any]:
    """Wait until the service worker is active and controls the page; its scope and cache names."""
    return page.evaluate(
        """async () => {
             const reg = await navigator.serviceWorker.ready;
             if (!navigator.serviceWorker.controller) {
               await new Promise((ok) => navigator.serviceWorker.addEventListener('controllerchange', ok, {once: true}));
             }
             const keys = await caches.keys();
             const cached = [];
             for (const k of keys) for (const r of await (await caches.open(k)).keys()) cached.push(new URL(r.url).pathname);
             return {scope: new URL(reg.scope).pathname, state: reg.active && reg.active.state, keys, cached};
           }"""
    )


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_worker_registers_and_offline_shows_the_offline_page(browser: Any, server: LiveServer, lang: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    ctx = browser.new_context(base_url=server.base, locale="zh-CN", viewport={"width": 390, "height": 844})
    ctx.set_default_timeout(WAIT_MS)
    page = ctx.new_page()
    guard = PageGuard(page, f"app-{lang}")
    try:
        page.goto("/")
        if lang == "en":
            page.evaluate("() => localStorage.setItem('guandan.lang', 'en')")
        info = _ready_worker(page)
        assert info["scope"] == "/" and info["state"] == "activated", info
        version = static_version(STATIC_DIR)
        assert info["keys"] == [f"guandan-static-{version}"], info
        for url in ("/static/offline.html", "/static/offline.js", "/static/js/app.js", "/static/css/app.css", "/static/icons/icon.svg"):
            assert url in info["cached"], url
        assert not [u for u in info["cached"] if not u.startswith("/static/")], info["cached"]
        ctx.set_offline(True)
        page.goto("/leaderboard")
        title = page.get_by_test_id("offline-title")
        expected = {"zh": ("没有网络连接", "重试"), "en": ("You are offline", "Try again")}[lang]
        page.wait_for_function("t => document.querySelector('[data-testid=offline-title]').textContent === t", arg=expected[0])
        assert title.inner_text() == expected[0]
        assert page.get_by_test_id("offline-retry").inner_text() == expected[1]
        assert page.evaluate("() => document.documentElement.lang") == ("zh-CN" if lang == "zh" else "en")
        for w, hgt in VIEWPORTS:
            page.set_viewport_size({"width": w, "height": hgt})
            page.wait_for_timeout(100)
            page.screenshot(path=str(ARTIFACTS / f"app-offline-{lang}-{w}x{hgt}.png"))
            size = page.evaluate("() => [document.documentElement.scrollWidth, document.documentElement.scrollHeight]")
            assert size[0] <= w and size[1] <= hgt, (w, hgt, size)
            box = page.get_by_test_id("offline-retry").bounding_box()
            assert box and box["height"] >= 44 and box["y"] + box["height"] <= hgt, (w, hgt, box)
        # back online: the offline page reloads the page asked for by itself (the app, not the offline page)
        ctx.set_offline(False)
        page.get_by_test_id("lang-switch").wait_for()
        assert page.get_by_test_id("offline-page").count() == 0 and page.url.endswith("/leaderboard")
    finally:
        problems = [p for p in guard.problems() if "ERR_INTERNET_DISCONNECTED" not in p]
        ctx.close()
    assert not problems, problems
