"""Regenerate the README's screenshots of the table: a real server, a real deal, real clicks.

Starts the web server in this process (``guandan.server.app.create_app`` under uvicorn, a temporary
SQLite file, bots acting after a short delay), then for every language and viewport: signs in a
new player, creates a room with the fixed deal seed, fills the three other seats with bots of the
normal difficulty, starts the game, plays a few of the player's turns with the hint (Hint, then
Play or Pass) so the table shows plays, and saves the page when it is the player's turn again.

Output: ``OUT/table-{lang}-{width}x{height}.png`` for ``lang`` in zh, en and the four viewports
1366x768 (laptop), 1920x1080 (desktop), 390x844 (phone, portrait) and 844x390 (phone, landscape).

Needs the test extra (``pip install -e '.[test]'``: Playwright) and a Chromium executable (Debian's
``chromium`` at ``/usr/bin/chromium`` by default; Playwright's own browser downloads are never
used). The Chinese screenshots need a CJK font on the machine (Debian: ``fonts-wqy-microhei`` or
``fonts-noto-cjk``). Usage::

    .venv/bin/python scripts/screenshots.py               # writes docs/screenshots/*.png
    .venv/bin/python scripts/screenshots.py --out /tmp/shots --langs en --turns 2
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

#: (width, height) of the four viewports of issue 7.
VIEWPORTS = [(1366, 768), (1920, 1080), (390, 844), (844, 390)]

#: Chromium flags: no sandbox (containers), no GPU, no traffic to the outside world.
LAUNCH_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

#: Longest wait for one UI condition (milliseconds).
WAIT_MS = 30_000


class Server:
    """The app under uvicorn on 127.0.0.1 (port chosen by the OS) in a daemon thread.

    Args:
        db_path: the SQLite file (created by the migrations).
        bot_delay_s: seconds a bot waits before acting.
    Raises:
        RuntimeError: the server did not start within 30 seconds.
    """

    def __init__(self, db_path: Path, bot_delay_s: float) -> None:
        import uvicorn

        from guandan.server.app import create_app
        from guandan.server.settings import Settings

        # one address makes all eight tables: no cap on live games against bots (the server's
        # default, 4 per address, refused the fifth; guandan loadtest lifts it the same way)
        self.app = create_app(Settings(db_url=f"sqlite:///{db_path}", bot_delay_s=bot_delay_s,
                                       bot_games_per_address=0))
        self.server = uvicorn.Server(uvicorn.Config(self.app, host="127.0.0.1", port=0, log_level="warning", lifespan="on"))
        self.thread = threading.Thread(target=self.server.run, name="screenshots-server", daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the server did not start")
            time.sleep(0.05)
        port = self.server.servers[0].sockets[0].getsockname()[1]
        self.base = f"http://127.0.0.1:{port}"

    def set_seed(self, room_id: str, seed: int) -> None:
        """Fix the deal seed of a waiting room, so every screenshot shows the same hands."""
        from guandan.server import models

        with self.app.state.session_factory() as db:
            room = db.get(models.Room, room_id)
            if room is None:
                raise RuntimeError(f"no room {room_id}")
            room.seed = seed
            db.commit()

    def stop(self) -> None:
        """Ask uvicorn to exit and wait for its thread (at most 20 s)."""
        self.server.should_exit = True
        self.thread.join(timeout=20)


def api(page: Any, method: str, path: str, body: Any = None) -> dict[str, Any]:
    """Call the JSON API with the page's cookies; raises RuntimeError with the server's answer on an error."""
    res = page.evaluate(
        """async ([method, path, body]) => {
          const r = await fetch(path, {method, headers: {'Content-Type': 'application/json'},
                                      body: method === 'GET' ? undefined : JSON.stringify(body || {})});
          return {status: r.status, data: await r.json().catch(() => ({}))};
        }""",
        [method, path, body],
    )
    if res["status"] >= 400:
        raise RuntimeError(f"{method} {path}: HTTP {res['status']} {res['data']}")
    return res["data"]


MY_TURN_JS = "() => { const b = document.querySelector('[data-testid=hint-btn]'); return !!b && !b.disabled; }"


def enabled(page: Any, testid: str) -> bool:
    """Whether the button ``testid`` is on the page and enabled."""
    loc = page.locator(f"[data-testid={testid}]")
    return bool(loc.count()) and loc.first.is_enabled()


def play_turns(page: Any, turns: int) -> None:
    """Play ``turns`` of the player's turns: Hint then Play; Pass when nothing is selectable; when
    leading without a hint, the lowest single card. Gives up after ``3 * turns`` tries."""
    done = 0
    for _ in range(3 * turns):
        if done >= turns:
            return
        page.wait_for_function(MY_TURN_JS, timeout=WAIT_MS)
        page.locator("[data-testid=hint-btn]").click()
        page.wait_for_timeout(500)
        if not enabled(page, "play-btn") and not enabled(page, "pass-btn"):
            page.locator("[data-testid=hand-card]").first.click()  # leading: the lowest single
            page.wait_for_timeout(200)
        if enabled(page, "play-btn"):
            page.locator("[data-testid=play-btn]").click()
            page.wait_for_timeout(300)
            option = page.locator("[data-testid=reading-option]")
            if option.count():
                option.first.click()
        elif enabled(page, "pass-btn"):
            page.locator("[data-testid=pass-btn]").click()
        try:
            page.wait_for_function(f"() => !({MY_TURN_JS})()", timeout=5_000)
            done += 1
        except Exception:  # noqa: BLE001 - the move was not taken; try again
            continue


def shoot(browser: Any, server: Server, lang: str, size: tuple[int, int], out: Path, seed: int, turns: int, n: int) -> Path:
    """One screenshot of the table at ``size`` in ``lang``; returns the file written."""
    width, height = size
    phone = width < 900
    ctx = browser.new_context(
        base_url=server.base,
        locale="zh-CN" if lang == "zh" else "en-US",
        viewport={"width": width, "height": height},
        device_scale_factor=1,
        has_touch=phone,
        is_mobile=phone,
    )
    ctx.set_default_timeout(WAIT_MS)
    try:
        page = ctx.new_page()
        page.goto("/")
        page.evaluate("(l) => localStorage.setItem('guandan.lang', l)", lang)
        name = f"{'玩家' if lang == 'zh' else 'Player'}{n}"
        api(page, "POST", "/api/register", {"name": name, "password": "screenshots-1"})
        room = api(page, "POST", "/api/rooms", {"name": "掼蛋" if lang == "zh" else "Guandan", "preset": "official", "clocks": "off"})["room"]
        server.set_seed(room["id"], seed)
        api(page, "POST", f"/api/rooms/{room['id']}/bots", {"bot": "normal"})
        api(page, "POST", f"/api/rooms/{room['id']}/start", {})
        page.goto(f"/room/{room['id']}")
        page.locator("[data-testid=table]").wait_for()
        play_turns(page, turns)
        # the picture: the player to follow, with other seats' plays on the table
        for _ in range(6):
            page.wait_for_function(MY_TURN_JS, timeout=WAIT_MS)
            if page.locator(".trick-cell .card").count():
                break
            play_turns(page, 1)
        page.wait_for_timeout(800)  # let the last play's animation settle
        page.wait_for_function("() => !document.querySelector('.toast.show')", timeout=WAIT_MS)
        page.wait_for_timeout(600)  # and the toast's fade-out
        path = out / f"table-{lang}-{width}x{height}.png"
        page.screenshot(path=str(path))
        return path
    finally:
        ctx.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots", help="folder for the PNG files (created if needed)")
    parser.add_argument("--langs", default="zh,en", help="comma-separated languages: zh, en (default: both)")
    parser.add_argument("--seed", type=int, default=21, help="deal seed of every room (default 21)")
    parser.add_argument("--turns", type=int, default=3, help="turns the player plays before the screenshot (default 3)")
    parser.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium", help="Chromium executable")
    args = parser.parse_args(argv)
    langs = [x.strip() for x in args.langs.split(",") if x.strip()]
    bad = [x for x in langs if x not in ("zh", "en")]
    if bad or not langs:
        parser.error(f"--langs takes zh and/or en, not {args.langs!r}")
    if not Path(args.chromium).exists():
        parser.error(f"no Chromium at {args.chromium} (install Debian's chromium or give --chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        parser.error("Playwright is missing: pip install -e '.[test]'")
    args.out.mkdir(parents=True, exist_ok=True)
    jobs = [(lang, size) for lang in langs for size in VIEWPORTS]
    with tempfile.TemporaryDirectory() as tmp:
        server = Server(Path(tmp) / "screenshots.db", bot_delay_s=0.15)
        try:
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=args.chromium, args=LAUNCH_ARGS, headless=True)
                try:
                    for i, (lang, size) in enumerate(jobs, 1):
                        path = shoot(browser, server, lang, size, args.out, args.seed, args.turns, i)
                        rel = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
                        print(f"[{i}/{len(jobs)}] {rel}", flush=True)
                finally:
                    browser.close()
        finally:
            server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
