"""Helpers for the browser tests (``tests/test_browser.py``): a live server in a thread, the
system Chromium, a recorder of the table websocket frames a page receives, a guard against page
errors, and the clicks that drive the UI (sign in, create a room, fill bots, act).

The browser is the machine's Chromium (Debian package ``chromium``; ``GUANDAN_CHROMIUM`` names
another executable). Playwright's own browser downloads are never used.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

#: Repository root and the folder where screenshots are written.
ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "test-artifacts"

#: Chromium flags: no sandbox (containers), no GPU, and no traffic to the outside world.
LAUNCH_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

#: Default wait for UI conditions (milliseconds). Generous: the machine may be busy.
WAIT_MS = 20_000


def find_chromium() -> str | None:
    """Path of the Chromium executable: ``$GUANDAN_CHROMIUM``, else ``chromium`` /
    ``chromium-browser`` on ``PATH``, else ``/usr/bin/chromium``; ``None`` when none exists."""
    env = os.environ.get("GUANDAN_CHROMIUM")
    if env:
        return env if Path(env).exists() else None
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None


# -- the server ------------------------------------------------------------------------------------


class LiveServer:
    """``guandan.server.app.create_app`` served by uvicorn on ``127.0.0.1:<port chosen by the OS>``
    in a daemon thread, over a fresh SQLite file.

    Args:
        db_path: the SQLite file (created by the migrations).
        db_url: another database instead (a PostgreSQL URL); ``db_path`` is then unused.
        bot_delay_s: seconds a bot waits before acting.
        away_grace_s: seconds the table waits for a disconnected person before the bot plays for
            them. Large by default, so that rooms of finished tests (whose pages are closed) stop
            at the person's turn instead of playing on in the background, and so that a page
            reload never hands the seat to the bot.
        settings: further :class:`~guandan.server.settings.Settings` fields (e.g. ``review_budget``).
    Raises:
        RuntimeError: the server did not start within 30 seconds.
    """

    def __init__(self, db_path: Path | None, bot_delay_s: float = 0.05, away_grace_s: float = 3600.0,
                 settings: dict[str, Any] | None = None, db_url: str | None = None) -> None:
        import uvicorn

        from guandan.server.app import create_app
        from guandan.server.settings import Settings

        self.db_url = db_url or f"sqlite:///{db_path}"
        # every page of the browser tests comes from 127.0.0.1 and a test's account may start
        # several games with bots: no limits on them unless a test sets one (guandan.server.botgames)
        limits = {"bot_games_per_address": 0, "bot_games_per_account": 0}
        self.app = create_app(Settings(db_url=self.db_url, bot_delay_s=bot_delay_s, seeded_deals=True,
                                       **{**limits, **(settings or {})}))
        self.app.state.manager.away_grace_s = away_grace_s
        config = uvicorn.Config(self.app, host="127.0.0.1", port=0, log_level="warning", lifespan="on")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, name="browser-test-server", daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the browser-test server did not start")
            time.sleep(0.02)
        port = self.server.servers[0].sockets[0].getsockname()[1]
        self.base = f"http://127.0.0.1:{port}"

    def set_seed(self, room_id: str, seed: int) -> None:
        """Fix the game seed of a waiting room (the API never lets a player choose it: it decides
        every hand), so the deal a test plays is the same on every run."""
        from guandan.server import models

        with self.app.state.session_factory() as db:
            room = db.get(models.Room, room_id)
            assert room is not None, f"no room {room_id}"
            room.seed = seed
            db.commit()

    def stop(self) -> None:
        """Ask uvicorn to exit and wait for the thread (at most 20 s)."""
        self.server.should_exit = True
        self.thread.join(timeout=20)


# -- what a page receives and reports --------------------------------------------------------------


class TableWatcher:
    """Records the JSON frames a page receives on its table websocket(s) (``/ws/rooms/...``),
    across reloads. Playwright delivers the events while the test calls into it (any wait).

    Attributes:
        states: every ``state`` frame, oldest first; received_at: when each was delivered to the
        test (epoch seconds; within a poll interval of its arrival while the test waits); hints: every ``hint`` frame's action
        and the first action of every ``hints`` frame (``["pass", None, []]`` for an empty list); hint_lists: every
        ``hints`` frame's list;
        deal_results: every ``deal_result`` frame; errors: every ``error`` frame.
    """

    def __init__(self, page: Any) -> None:
        self.page = page
        self.states: list[dict[str, Any]] = []
        self.received_at: list[float] = []
        self.hints: list[Any] = []
        self.hint_lists: list[list[Any]] = []
        self.deal_results: list[dict[str, Any]] = []
        self.game_overs: list[dict[str, Any]] = []
        self.errors: list[dict[str, Any]] = []
        self.sockets = 0
        page.on("websocket", self._on_socket)

    def _on_socket(self, ws: Any) -> None:
        if "/ws/rooms/" not in ws.url:
            return
        self.sockets += 1
        ws.on("framereceived", self._on_frame)

    def _on_frame(self, payload: Any) -> None:
        if isinstance(payload, bytes):
            payload = payload.decode("utf-8", "replace")
        try:
            msg = json.loads(payload)
        except ValueError:
            return
        kind = msg.get("type") if isinstance(msg, dict) else None
        if kind == "state":
            self.states.append(msg)
            self.received_at.append(time.time())
        elif kind == "hint":
            self.hints.append(msg.get("action"))
        elif kind == "hints":
            actions = msg.get("actions") or []
            self.hint_lists.append(actions)
            # the UI selects the first play of the list; an empty list means only pass remains
            self.hints.append(actions[0] if actions else ["pass", None, []])
        elif kind == "deal_result":
            self.deal_results.append(msg)
        elif kind == "game_over":
            self.game_overs.append(msg)
        elif kind == "error":
            self.errors.append(msg)

    @property
    def state(self) -> dict[str, Any] | None:
        """The latest ``state`` frame (``None`` before the first)."""
        return self.states[-1] if self.states else None

    @property
    def view(self) -> dict[str, Any] | None:
        """The latest state's ``view`` (``None`` while the room waits)."""
        s = self.state
        return s.get("view") if s else None

    @property
    def seq(self) -> int:
        """The latest state's ``seq`` (number of game events so far), -1 before any."""
        s = self.state
        return int(s.get("seq", -1)) if s else -1

    def wait(self, cond: Callable[[], Any], what: str, timeout_ms: int = WAIT_MS) -> Any:
        """Poll ``cond()`` (letting Playwright deliver frames) until it is truthy; return its value.

        Raises:
            AssertionError: not true within ``timeout_ms``, naming ``what`` and the latest error frame.
        """
        return wait_until(self.page, cond, what, timeout_ms, lambda: f"; error frames: {self.errors[-3:]}")


def wait_until(page: Any, cond: Callable[[], Any], what: str, timeout_ms: int = WAIT_MS,
               detail: Callable[[], str] | None = None) -> Any:
    """Poll ``cond()`` every 25 ms through ``page.wait_for_timeout`` (which lets Playwright run
    event handlers) until it is truthy; return its value.

    Raises:
        AssertionError: ``cond()`` stayed falsy for ``timeout_ms`` milliseconds.
    """
    deadline = time.monotonic() + timeout_ms / 1000
    while True:
        value = cond()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout_ms} ms waiting for {what}" + (detail() if detail else ""))
        page.wait_for_timeout(25)


class PageGuard:
    """Collects a page's uncaught errors (``pageerror``) and console errors.

    Expected console errors, ignored (Chromium logs every non-2xx fetch as "Failed to load
    resource"): the failed load of ``GET /api/me`` (401) while nobody is signed in, and a
    registration answered 503 (the hash gate busy on a loaded machine), which :func:`register`
    tries again.
    """

    def __init__(self, page: Any, label: str) -> None:
        self.label = label
        self.page_errors: list[str] = []
        self.console_errors: list[str] = []
        self.ignored: list[str] = []
        page.on("pageerror", lambda err: self.page_errors.append(f"{err}"))
        page.on("console", self._on_console)

    def _on_console(self, msg: Any) -> None:
        if msg.type != "error":
            return
        text = msg.text
        url = (msg.location or {}).get("url", "") or ""
        if "Failed to load resource" in text and (
                ("401" in text and re.search(r"/api/me(\?|$)", url))
                or ("503" in text and re.search(r"/api/register$", url))):
            self.ignored.append(text)
            return
        self.console_errors.append(f"{text} ({url})" if url else text)

    def problems(self) -> list[str]:
        """Every collected page error and unexpected console error, labelled."""
        return [f"{self.label}: uncaught page error: {e}" for e in self.page_errors] + [
            f"{self.label}: console error: {e}" for e in self.console_errors
        ]


# -- UI steps --------------------------------------------------------------------------------------


def tid(page: Any, testid: str) -> Any:
    """Locator of ``[data-testid=testid]``."""
    return page.locator(f'[data-testid="{testid}"]')


def register(page: Any, name: str, password: str, tries: int = 3) -> None:
    """Register through the sign-in form shown on the current page; wait for the header's name.

    A registration answered 503 (the server's hash gate is full: ``server_busy``, which a loaded CI
    machine can see) is tried again after a second, as a person would, up to ``tries`` times. Any
    other refusal, or no name within ``WAIT_MS``, fails with the answer's status and body and a
    screenshot ``test-artifacts/register-failed-<name>.png``.
    """
    tid(page, "login-name").fill(name)
    tid(page, "login-password").fill(password)
    answer: Any = None
    try:
        for attempt in range(1, tries + 1):
            with page.expect_response(lambda r: r.url.endswith("/api/register") and r.request.method == "POST",
                                      timeout=WAIT_MS) as got:
                tid(page, "register-btn").click()
            answer = got.value
            if answer.status != 503 or attempt == tries:
                break
            page.wait_for_timeout(1000)
    except Exception as e:  # no request left the page: say what the form held and what the toast said
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"register-failed-{name}.png"), full_page=True)
        toast = tid(page, "toast")
        said = toast.inner_text() if toast.count() else ""
        held = tid(page, "login-name").evaluate_all("els => els.map((e) => e.value)")
        raise AssertionError(f"registering {name!r} sent no request in {WAIT_MS} ms: the name fields hold "
                             f"{held!r}, the toast says {said!r}") from e
    try:
        assert answer.ok, f"registration of {name!r} answered {answer.status}: {answer.text()[:300]}"
        tid(page, "user-name").filter(has_text=name).wait_for(timeout=WAIT_MS)
    except Exception:
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"register-failed-{name}.png"), full_page=True)
        raise


def sign_in_guest(page: Any) -> str:
    """Sign in as a guest through the form on the current page; return the guest name."""
    tid(page, "guest-btn").click()
    el = tid(page, "user-name")
    el.wait_for(timeout=WAIT_MS)
    name = el.evaluate("e => e.firstChild.textContent").strip()
    assert name.startswith("guest-"), name
    return name


def create_room(page: Any, name: str, clock_lead_s: int | None = None, clock_follow_s: int | None = None) -> str:
    """Fill the lobby's create-room form (preset ``official``) and submit; return the room id once
    the room page shows the room title."""
    tid(page, "create-room-preset").locator('option[value="official"]').wait_for(state="attached", timeout=WAIT_MS)
    tid(page, "create-room-preset").select_option("official")
    tid(page, "create-room-name").fill(name)
    if clock_lead_s is not None:
        tid(page, "create-room-clock-lead").fill(str(clock_lead_s))
    if clock_follow_s is not None:
        tid(page, "create-room-clock-follow").fill(str(clock_follow_s))
    tid(page, "create-room-btn").click()
    page.wait_for_url(re.compile(r"/room/[A-Za-z0-9_-]+$"), timeout=WAIT_MS)
    tid(page, "room-title").filter(has_text=name).wait_for(timeout=WAIT_MS)
    return page.url.rstrip("/").rsplit("/", 1)[1]


def fill_bots(page: Any, kind: str = "heuristic") -> None:
    """Choose the bot kind and click "fill with bots"; wait until every seat card is filled."""
    tid(page, "bot-kind").select_option(kind)
    tid(page, "fill-bots-btn").click()
    page.wait_for_function(
        "() => [0,1,2,3].every(s => { const c = document.querySelector(`[data-testid=seat-${s}]`);"
        " return c && !c.classList.contains('empty'); })",
        timeout=WAIT_MS,
    )


def start_game(page: Any, watcher: TableWatcher) -> dict[str, Any]:
    """Click start (owner) and wait for the table and the first state with a view; return that view."""
    btn = tid(page, "start-btn")
    page.wait_for_function("() => { const b = document.querySelector('[data-testid=start-btn]'); return b && !b.disabled; }",
                           timeout=WAIT_MS)
    btn.click()
    tid(page, "table").wait_for(timeout=WAIT_MS)
    return watcher.wait(lambda: watcher.view, "the first table view")


def my_turn_js() -> str:
    """JS predicate: the page's hint button is enabled (the UI's own "my turn")."""
    return "(() => { const b = document.querySelector('[data-testid=hint-btn]'); return !!b && !b.disabled; })()"


def is_my_turn(page: Any) -> bool:
    """Whether the page shows an enabled hint button (the UI's own signal that the seat is to act)."""
    return bool(page.evaluate(my_turn_js()))


def selected_cards(page: Any) -> list[str]:
    """Card texts of the selected hand cards, in hand order."""
    return page.eval_on_selector_all(
        '[data-testid=hand-card].selected', "els => els.map(e => e.dataset.card)"
    )


def hand_cards(page: Any) -> list[str]:
    """Card texts of the hand as shown, in hand order."""
    return page.eval_on_selector_all('[data-testid=hand-card]', "els => els.map(e => e.dataset.card)")


def card_count(page: Any, seat: int) -> int | None:
    """The number shown in ``card-count-{seat}`` (``None`` when hidden or missing)."""
    loc = tid(page, f"card-count-{seat}")
    if loc.count() == 0:
        return None
    m = re.search(r"\d+", loc.inner_text())
    return int(m.group()) if m else None


def click_cards(page: Any, cards: list[str]) -> None:
    """Select exactly ``cards`` (texts; duplicates allowed) by clicking hand cards one by one."""
    used: dict[str, int] = {}
    for c in cards:
        n = used.get(c, 0)
        used[c] = n + 1
        page.locator(f'[data-testid=hand-card][data-card="{c}"]').nth(n).click()
    got = sorted(selected_cards(page))
    assert got == sorted(cards), f"clicking {cards} selected {got}"


def reading_key(action: list[Any]) -> str:
    """The reading chooser's ``data-reading`` of an action: ``"type:rank"`` (``null`` rank as "null")."""
    return f"{action[0]}:{'null' if action[1] is None else action[1]}"


def press_play(page: Any, watcher: TableWatcher, action: list[Any]) -> bool:
    """Click Play with ``action``'s cards selected; when the reading chooser opens, check that it
    offers exactly the legal readings of those cards and click ``action``'s. Returns whether the
    chooser was used."""
    view = watcher.view or {}
    same = [a for a in view.get("legal_actions", []) if a[0] != "pass" and sorted(a[2]) == sorted(action[2])]
    play = tid(page, "play-btn")
    page.wait_for_function(
        "() => { const b = document.querySelector('[data-testid=play-btn]'); return b && !b.disabled; }", timeout=WAIT_MS
    )
    play.click()
    if len(same) <= 1:
        return False
    chooser = tid(page, "reading-chooser")
    chooser.wait_for(timeout=WAIT_MS)
    offered = tid(page, "reading-option").evaluate_all("els => els.map(e => e.dataset.reading)")
    assert sorted(offered) == sorted(reading_key(a) for a in same), (offered, same)
    page.locator(f'[data-testid=reading-option][data-reading="{reading_key(action)}"]').click()
    return True


def act(page: Any, watcher: TableWatcher, mode: str = "hint") -> list[Any]:
    """Make one decision for the page's seat through the UI and wait until the server applied it.

    ``mode``: ``"hint"`` clicks Hint, then Play (or Pass when the hint is to pass);
    ``"click"`` clicks Hint, then Clear, then selects the hinted cards by clicking them in the hand,
    then Play. The reading chooser is answered with the hinted reading when it opens.
    Returns the action taken (JSON form ``[type, rank, cards]``).
    """
    before = watcher.seq
    n_hints = len(watcher.hints)
    tid(page, "hint-btn").click()
    action = watcher.wait(lambda: len(watcher.hints) > n_hints and watcher.hints[-1], "the hint")
    if action[0] == "pass":
        pass_btn = tid(page, "pass-btn")
        assert pass_btn.is_enabled(), "the hint is to pass but the Pass button is disabled"
        pass_btn.click()
    else:
        watcher.wait(lambda: sorted(selected_cards(page)) == sorted(action[2]), f"the hinted cards {action[2]} selected")
        if mode == "click":
            tid(page, "clear-btn").click()
            watcher.wait(lambda: not selected_cards(page), "the selection cleared")
            click_cards(page, list(action[2]))
        press_play(page, watcher, action)
    watcher.wait(lambda: watcher.seq > before, f"the server applying {action}")
    return action
