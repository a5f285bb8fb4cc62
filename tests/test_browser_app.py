"""The installable app in a real browser (issue 25, item 5): the service worker registers with scope
"/", precaches the static files into the cache of the static files' version, and a page asked for
while the network is gone shows the offline page in the player's language (Chinese from the
browser's locale, English from the app's saved language choice), with no scrolling and a "try
again" button of a tappable size at the four viewports of the issue; Chromium's own check finds
the app installable; an in-place server upgrade replaces the worker and its cache. Screenshots go
to ``test-artifacts/app-*.png``."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
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
             const w = reg.active;
             if (w.state !== 'activated') {
               await new Promise((ok) => w.addEventListener('statechange', () => { if (w.state === 'activated') ok(); }));
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


def test_chromium_finds_the_app_installable(browser: Any, server: LiveServer) -> None:
    """Chromium's own installability check (DevTools ``Page.getInstallabilityErrors``) at a phone
    viewport: the manifest parses without errors and nothing stands in the way of installing but the
    test's private (incognito) profile, which Playwright's contexts always are."""
    ctx = browser.new_context(base_url=server.base, locale="zh-CN", viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    ctx.set_default_timeout(WAIT_MS)
    page = ctx.new_page()
    try:
        page.goto("/")
        _ready_worker(page)
        page.reload()
        cdp = ctx.new_cdp_session(page)
        manifest = cdp.send("Page.getAppManifest")
        assert manifest["url"].endswith("/manifest.webmanifest") and manifest["errors"] == [], manifest["errors"]
        errors = [e["errorId"] for e in cdp.send("Page.getInstallabilityErrors")["installabilityErrors"]]
        assert set(errors) <= {"in-incognito"}, errors
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "app-phone-390x844.png"))
    finally:
        ctx.close()


class _ServerOnPort:
    """The app on a fixed loopback port (a server "upgraded" in place keeps its origin, so the
    browser's service worker sees the new version), over a given static directory."""

    def __init__(self, db_path: Path, static_dir: Path, port: int) -> None:
        import threading
        import time

        import uvicorn

        from guandan.server.app import create_app
        from guandan.server.settings import Settings

        self.app = create_app(Settings(db_url=f"sqlite:///{db_path}", static_dir=static_dir))
        self.server = uvicorn.Server(uvicorn.Config(self.app, host="127.0.0.1", port=port, log_level="warning", lifespan="on"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            assert time.monotonic() < deadline and self.thread.is_alive(), "the server did not start"
            time.sleep(0.02)
        self.base = f"http://127.0.0.1:{port}"

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=20)


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_an_upgraded_server_replaces_the_worker_and_its_cache(browser: Any, tmp_path: Path) -> None:
    """Bad input of issue 25: a service worker serving a stale page after an upgrade. The server is
    restarted on the same origin with one static file changed: the first page load after the
    upgrade already gets the new file (the old worker sees the page's newer X-Static-Version and
    stops answering from its cache), the new worker takes over and the old cache is deleted."""
    static1, static2 = tmp_path / "static1", tmp_path / "static2"
    shutil.copytree(STATIC_DIR, static1)
    shutil.copytree(STATIC_DIR, static2)
    css = static2 / "css" / "offline.css"
    css.write_text(css.read_text(encoding="utf-8") + "/* upgraded */\n", encoding="utf-8")
    v1, v2 = static_version(static1), static_version(static2)
    assert v1 != v2
    port = _free_port()
    srv = _ServerOnPort(tmp_path / "g.db", static1, port)
    ctx = browser.new_context(base_url=srv.base, locale="zh-CN")
    ctx.set_default_timeout(WAIT_MS)
    page = ctx.new_page()
    try:
        page.goto("/")
        info = _ready_worker(page)
        assert info["keys"] == [f"guandan-static-{v1}"], info
        assert "upgraded" not in page.evaluate("async () => (await fetch('/static/css/offline.css')).text()")
        srv.stop()
        srv = _ServerOnPort(tmp_path / "g.db", static2, port)
        page.goto("/")
        # at once: the upgraded page gets the upgraded file, not the old worker's cached copy
        assert "upgraded" in page.evaluate("async () => (await fetch('/static/css/offline.css')).text()")
        # soon: the new worker runs and only its cache is left, holding the new file
        page.wait_for_function(
            """async (v2) => {
                 const keys = await caches.keys();
                 if (keys.length !== 1 || keys[0] !== `guandan-static-${v2}`) return false;
                 const hit = await (await caches.open(keys[0])).match('/static/css/offline.css');
                 return !!hit && (await hit.text()).includes('upgraded');
               }""",
            arg=v2,
        )
    finally:
        ctx.close()
        srv.stop()


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_the_app_installs_and_opens_from_its_start_url_at_a_phone_viewport(
        browser: Any, server: LiveServer, tmp_path: Path, lang: str) -> None:
    """Installed as a phone user would (issue 25 item 5), through Chromium itself: in a normal (not
    private) profile the DevTools ``PWA.install`` of the manifest's app id succeeds, the app is known
    to the browser afterwards (``PWA.getOsAppState``), and ``PWA.launch`` opens the manifest's
    ``start_url`` (``/?source=app``), which shows the lobby in the player's language at 390x844 with
    no sideways scrolling. Screenshot: ``test-artifacts/app-installed-{lang}-390x844.png``."""
    from browser_helpers import LAUNCH_ARGS, find_chromium

    ctx = browser.browser_type.launch_persistent_context(
        str(tmp_path / "profile"), executable_path=find_chromium(), args=LAUNCH_ARGS, headless=True,
        locale="zh-CN", viewport={"width": 390, "height": 844}, has_touch=True)
    ctx.set_default_timeout(WAIT_MS)
    try:
        page = ctx.new_page()
        page.goto(server.base + "/")
        if lang == "en":
            page.evaluate("() => localStorage.setItem('guandan.lang', 'en')")
        _ready_worker(page)
        page.reload()
        cdp = ctx.new_cdp_session(page)
        assert cdp.send("Page.getInstallabilityErrors")["installabilityErrors"] == []
        app_id = cdp.send("Page.getAppId")["appId"]
        assert app_id == server.base + "/"  # the manifest's "id": "/"
        assert cdp.send("PWA.install", {"manifestId": app_id}) == {}
        assert "badgeCount" in cdp.send("PWA.getOsAppState", {"manifestId": app_id})
        before = set(ctx.pages)
        cdp.send("PWA.launch", {"manifestId": app_id})
        deadline = 50
        while not (set(ctx.pages) - before) and deadline:
            page.wait_for_timeout(100)
            deadline -= 1
        (app,) = set(ctx.pages) - before
        assert app.url == server.base + "/?source=app"
        app.get_by_test_id("lang-switch").wait_for()
        assert app.evaluate("() => document.documentElement.lang") == ("zh-CN" if lang == "zh" else "en")
        assert app.evaluate("() => document.documentElement.scrollWidth") <= 390
        app.wait_for_timeout(300)
        ARTIFACTS.mkdir(exist_ok=True)
        app.screenshot(path=str(ARTIFACTS / f"app-installed-{lang}-390x844.png"))
    finally:
        ctx.close()
