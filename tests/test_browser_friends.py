"""Browser test of friends (issue 25 item 2), in Chinese and in English: two browser contexts are two
accounts. A adds B by name, B accepts, A creates a room and invites B from the waiting room's
"Invite a friend" list, B sees the invitation in the lobby and follows it into the room; B blocks a
third account's request, whose next request is refused with a message in the player's language. Screenshots of the lobby's friends panel at 1366×768, 1920×1080, 390×844 and 844×390 go to
``test-artifacts/friends-*.png``; at each size the panel must fit its column (nothing cut off
sideways) and every button must be tappable (the element at its centre is the button itself).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

pytest.importorskip("uvicorn")
pytest.importorskip("fastapi")

from browser_helpers import ARTIFACTS, WAIT_MS, PageGuard, create_room, register, tid

VIEWPORTS = [(1366, 768), (1920, 1080), (390, 844), (844, 390)]
PASSWORD = "friends-secret-1"

#: The words the panel shows (i18n_friends.js), by language.
WORDS = {
    "zh": {"title": "好友", "invited": "已邀请 ✓", "invites_you": "{a} 邀请你加入 {room}", "waiting": "在 {room} 等人",
           "sent": "已向 {b} 发送好友请求。", "refused": "{b} 不接受你的好友请求。"},
    "en": {"title": "Friends", "invited": "Invited ✓", "invites_you": "{a} invites you to {room}",
           "waiting": "Waiting at {room}", "sent": "Friend request sent to {b}.",
           "refused": "{b} does not accept friend requests from you."},
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, browser: Any) -> Iterator[Any]:
    from browser_helpers import LiveServer

    srv = LiveServer(tmp_path_factory.mktemp("friends") / "guandan.db", bot_delay_s=0.05)
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture
def open_page(browser: Any, server: Any) -> Iterator[Callable[..., Any]]:
    """``open_page(label, locale)``: a new context (its own cookies: its own account) with one page,
    failing the test on uncaught page errors or console errors."""
    contexts: list[Any] = []
    guards: list[PageGuard] = []

    def make(label: str, locale: str) -> Any:
        ctx = browser.new_context(base_url=server.base, locale=locale, viewport={"width": 1366, "height": 768})
        ctx.set_default_timeout(WAIT_MS)
        contexts.append(ctx)
        page = ctx.new_page()
        guards.append(PageGuard(page, label))
        return page

    yield make
    # the refused request of the blocking step answers 403 on purpose; Chromium logs it
    problems = [p for g in guards for p in g.problems()
                if not ("Failed to load resource" in p and "status of 403" in p and p.endswith("/api/friends/requests)"))]
    for ctx in contexts:
        ctx.close()
    assert not problems, "\n".join(problems)


def check_panel_fits(page: Any, where: str) -> None:
    """The friends panel is not wider than its box, and each button of the panel and of the
    invitations bar lies inside its box and is the element found at its own centre (nothing covers it)."""
    problems = page.evaluate(
        """() => {
          const out = [];
          const panel = document.querySelector('[data-testid=friends-panel]');
          if (panel.scrollWidth > panel.clientWidth + 1) out.push(`panel scrolls sideways ${panel.scrollWidth}>${panel.clientWidth}`);
          const bar = document.querySelector('[data-testid=friend-invites]');
          for (const root of [panel, bar].filter(Boolean))
          for (const b of root.querySelectorAll('button, input, a')) {
            b.scrollIntoView({block: 'center'});
            const r = b.getBoundingClientRect();
            if (r.width < 24 || r.height < 24) { if (b.tagName !== 'A') out.push(`small ${b.outerHTML.slice(0, 60)}`); continue; }
            const pb = root.getBoundingClientRect();
            if (r.left < pb.left - 1 || r.right > pb.right + 1) out.push(`outside the panel: ${b.outerHTML.slice(0, 80)}`);
            const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
            if (!hit || !(hit === b || b.contains(hit))) out.push(`covered: ${b.outerHTML.slice(0, 80)} by ${hit && hit.outerHTML.slice(0, 60)}`);
          }
          return out;
        }"""
    )
    assert not problems, f"{where}: {problems}"


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_add_accept_invite_follow(open_page: Callable[..., Any], server: Any, lang: str) -> None:
    locale = "zh-CN" if lang == "zh" else "en-US"
    words = WORDS[lang]
    a_name, b_name, c_name = f"amy_{lang}", f"ben_{lang}", f"cat_{lang}"
    a, b, c = open_page("A", locale), open_page("B", locale), open_page("C", locale)
    for page, name in ((a, a_name), (b, b_name), (c, c_name)):
        page.goto("/")
        register(page, name, PASSWORD)
        tid(page, "friends-panel").filter(has_text=words["title"]).wait_for()
    # A adds B by name (case does not matter); C asks B too (B's panel then shows a request)
    tid(a, "friend-add-name").fill(b_name.upper())
    tid(a, "friend-add-btn").click()
    tid(a, "toast").filter(has_text=words["sent"].format(b=b_name)).wait_for()
    tid(a, "friend-sent").and_(a.locator(f'[data-name="{b_name}"]')).wait_for()
    tid(c, "friend-add-name").fill(b_name)
    tid(c, "friend-add-btn").click()
    tid(c, "friend-sent").wait_for()
    # B sees both requests and accepts A's
    b.reload()
    tid(b, "friend-request").nth(1).wait_for()
    assert sorted(tid(b, "friend-request").evaluate_all("els => els.map(e => e.dataset.name)")) == [a_name, c_name]
    b.locator(f'[data-testid=friend-request][data-name="{a_name}"] [data-testid=friend-accept]').click()
    b.locator(f'[data-testid=friend-item][data-name="{a_name}"][data-online="1"]').wait_for()
    # A creates a room, and from the waiting room invites B, who is online
    a.reload()
    a.locator(f'[data-testid=friend-item][data-name="{b_name}"][data-online="1"]').wait_for()
    room_name = f"{lang} friends table"
    room = create_room(a, room_name)
    tid(a, "invite-friend-btn").click()
    invite = a.locator(f'[data-testid=invite-friend][data-name="{b_name}"]')
    invite.click()
    a.wait_for_function("(s) => { const b = document.querySelector('[data-testid=invite-friend]'); return b && b.textContent === s && b.disabled; }",
                        arg=words["invited"])
    for w, hgt in VIEWPORTS:  # the waiting room's invite list, as a user sees it
        a.set_viewport_size({"width": w, "height": hgt})
        tid(a, "invite-friend-list").scroll_into_view_if_needed()
        a.screenshot(path=str(ARTIFACTS / f"friends-invite-{lang}-{w}x{hgt}.png"))
    a.set_viewport_size({"width": 1366, "height": 768})
    # B's lobby: the invitation and A shown "at table"; screenshots at the four sizes
    b.reload()
    inv = b.locator(f'[data-testid=friend-invite][data-room="{room}"]')
    inv.wait_for()
    assert inv.locator(".friend-invite-text").inner_text() == words["invites_you"].format(a=a_name, room=room_name)
    at = b.locator(f'[data-testid=friend-item][data-name="{a_name}"] [data-testid=friend-table]')
    assert at.inner_text() == words["waiting"].format(room=room_name)
    assert at.get_attribute("href") == f"/room/{room}"
    assert [r.strip() for r in tid(b, "friend-board-row").all_inner_texts()]  # the friends leaderboard shows
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for w, hgt in VIEWPORTS:
        b.set_viewport_size({"width": w, "height": hgt})
        b.evaluate("window.scrollTo(0, 0)")  # the invitations bar tops the lobby
        b.screenshot(path=str(ARTIFACTS / f"friends-lobby-top-{lang}-{w}x{hgt}.png"))
        tid(b, "friends-panel").scroll_into_view_if_needed()
        b.screenshot(path=str(ARTIFACTS / f"friends-lobby-{lang}-{w}x{hgt}.png"))
        tid(b, "friends-panel").screenshot(path=str(ARTIFACTS / f"friends-panel-{lang}-{w}x{hgt}.png"))
        check_panel_fits(b, f"{lang} {w}x{hgt}")
    b.set_viewport_size({"width": 1366, "height": 768})
    # B follows the invitation into the room and takes a seat; the invitation is gone afterwards
    inv.locator("[data-testid=friend-invite-join]").click()
    b.wait_for_url(re.compile(rf"/room/{room}$"))
    tid(b, "room-title").filter(has_text=room_name).wait_for()
    tid(b, "seat-btn-1").click()
    tid(b, "seat-1").filter(has_text=b_name).wait_for()
    b.goto("/")
    tid(b, "friend-list").wait_for()
    assert tid(b, "friend-invite").count() == 0
    # B blocks C's request (after a confirmation); C's new request is refused in C's language
    b.once("dialog", lambda d: d.accept())
    b.locator(f'[data-testid=friend-request][data-name="{c_name}"] [data-testid=friend-block]').click()
    b.locator(f'[data-testid=friend-blocked-item][data-name="{c_name}"]').wait_for(state="attached")
    assert tid(b, "friend-request").count() == 0
    c.reload()
    tid(c, "friend-add-name").fill(b_name)
    tid(c, "friend-add-btn").click()
    tid(c, "toast").filter(has_text=words["refused"].format(b=b_name)).wait_for()


def test_add_friend_from_a_profile(open_page: Callable[..., Any], server: Any) -> None:
    """A finished game's players link to their profiles; there, "Add friend" sends the request, and
    the other side's profile of the asker offers to accept it."""
    a, b = open_page("A", "en-US"), open_page("B", "en-US")
    for page, name in ((a, "pia"), (b, "pete")):
        page.goto("/")
        register(page, name, PASSWORD)
    a.goto("/profile/pete")
    # the button says "add" before GET /api/friends answers (and redraws when it does): let this page's
    # answer arrive first, so that it cannot overwrite the state the click below sets
    a.wait_for_function("() => performance.getEntriesByType('resource')"
                        ".some(e => new URL(e.name).pathname === '/api/friends')")
    btn = tid(a, "profile-add-friend")
    a.wait_for_function("() => (document.querySelector('[data-testid=profile-add-friend]') || {dataset: {}}).dataset.state === 'add'")
    assert btn.inner_text() == "Add friend"
    btn.click()
    a.wait_for_function("() => (document.querySelector('[data-testid=profile-add-friend]') || {dataset: {}}).dataset.state === 'sent'")
    assert btn.inner_text() == "Request sent" and btn.is_disabled()
    b.goto("/profile/pia")
    b.wait_for_function("() => (document.querySelector('[data-testid=profile-add-friend]') || {dataset: {}}).dataset.state === 'accept'")
    tid(b, "profile-add-friend").click()
    b.wait_for_function("() => (document.querySelector('[data-testid=profile-add-friend]') || {dataset: {}}).dataset.state === 'friends'")
    assert tid(b, "profile-add-friend").inner_text() == "Friends ✓"
    b.goto("/profile/pete")  # one's own profile: no button
    tid(b, "profile").wait_for()
    assert tid(b, "profile-add-friend").count() == 0


def test_game_over_players_link_to_profiles(open_page: Callable[..., Any], server: Any) -> None:
    """The game-over panel lists the other people of the game as links to their profiles (where
    "Add friend" is); bots and oneself are left out, and a game with nobody else shows nothing."""
    page = open_page("over", "en-US")
    page.goto("/")
    out = page.evaluate(
        """async () => {
          const F = await import('/static/js/friends.js');
          const seats = [{seat: 0, user: 'me'}, {seat: 1, bot: 'normal'}, {seat: 2, user: 'zoe'}, {seat: 3, user: 'li lei'}];
          const el = F.gamePlayersLinks(seats, 'me');
          const alone = F.gamePlayersLinks([{seat: 0, user: 'me'}, {seat: 1, bot: 'easy'}], 'me');
          return {links: [...el.querySelectorAll('a')].map(a => [a.textContent, a.getAttribute('href')]),
                  text: el.textContent, alone};
        }"""
    )
    assert out["links"] == [["zoe", "/profile/zoe"], ["li lei", "/profile/li%20lei"]]
    assert out["text"] == "Players: zoe, li lei" and out["alone"] is None


def test_lobby_listens_to_the_friends_stream_and_closes_it_when_hidden(open_page: Callable[..., Any],
                                                                       server: Any) -> None:
    """The lobby takes its friends panel from ``GET /api/friends/stream`` (server-sent events): a
    friend request sent by another account shows without any ``GET /api/friends`` and without
    waiting for a poll period; while the stream delivers, the 20 s timer asks nothing (the page's
    clock is Playwright's fake clock); a hidden tab closes the stream and a shown one opens it again.
    A pushed redraw keeps a name half typed in the add form, and its focus."""
    page = open_page("stream", "en-US")
    page.clock.install()
    streams: list[str] = []
    polls: list[str] = []
    page.on("request", lambda r: streams.append(r.url) if r.url.endswith("/api/friends/stream")
            else polls.append(r.url) if r.url.endswith("/api/friends") else None)
    page.goto("/")
    register(page, "streamy", PASSWORD)
    tid(page, "friend-list").wait_for()
    assert len(streams) == 1, streams
    other = open_page("sender", "en-US")
    other.goto("/")
    register(other, "pusher", PASSWORD)
    tid(page, "friend-add-name").fill("half-typ")
    polls.clear()
    answer = other.request.post(f"{server.base}/api/friends/requests", data={"name": "streamy"})
    assert answer.status == 200 and answer.json() == {"outcome": "requested", "name": "streamy"}
    page.locator('[data-testid=friend-request][data-name="pusher"]').wait_for()  # pushed: no poll, no period
    assert polls == [], polls
    assert tid(page, "friend-add-name").input_value() == "half-typ"
    assert page.evaluate("document.activeElement && document.activeElement.dataset.testid") == "friend-add-name"
    page.clock.run_for(20_500)
    page.wait_for_timeout(300)
    assert polls == [], polls  # the stream delivers: the timer asks nothing
    open_before = server_streams(server)  # this page's and the sender's lobby (and no other test's)
    assert open_before >= 2, open_before
    page.evaluate("""() => { Object.defineProperty(document, 'hidden', {configurable: true, get: () => true});
                             document.dispatchEvent(new Event('visibilitychange')); }""")
    end = time.monotonic() + 10
    while server_streams(server) != open_before - 1:  # the server forgets the closed stream
        assert time.monotonic() < end, "the hidden tab's stream stayed open"
        page.wait_for_timeout(100)
    page.clock.run_for(60_000)
    page.wait_for_timeout(300)
    assert polls == [] and len(streams) == 1, (polls, streams)  # hidden: nothing asked
    page.evaluate("""() => { Object.defineProperty(document, 'hidden', {configurable: true, get: () => false});
                             document.dispatchEvent(new Event('visibilitychange')); }""")
    end = time.monotonic() + 10
    while len(streams) < 2:
        assert time.monotonic() < end, "the stream was not opened again"
        page.wait_for_timeout(50)
    page.locator('[data-testid=friend-request][data-name="pusher"]').wait_for()


def server_streams(server: Any) -> int:
    """Open friends streams of the live server (its ``/healthz``'s ``friends_streams``)."""
    import json
    import urllib.request

    with urllib.request.urlopen(f"{server.base}/healthz", timeout=10) as r:
        return int(json.loads(r.read())["friends_streams"])


def test_lobby_without_event_source_polls_every_20_s_and_pauses_when_hidden(open_page: Callable[..., Any],
                                                                           server: Any) -> None:
    """A browser without ``EventSource`` (taken out of the page here) polls ``GET /api/friends`` every
    20 s while the tab is visible, not while it is hidden, and at once when it shows again. A poll's
    redraw keeps a name half typed in the add form, and its focus (it used to rebuild the form: under
    load the first answer wiped the name typed before the click)."""
    page = open_page("poll", "en-US")
    page.add_init_script("delete window.EventSource;")
    page.clock.install()
    page.goto("/")
    register(page, "polly", PASSWORD)
    tid(page, "friend-list").wait_for()
    calls: list[str] = []
    page.on("request", lambda r: calls.append(r.url) if "/api/friends" in r.url else None)
    tid(page, "friend-add-name").fill("half-typ")  # a redraw by the poll keeps the text and the focus
    page.clock.run_for(20_500)
    page.wait_for_timeout(300)
    assert len(calls) == 1 and calls[0].endswith("/api/friends"), calls
    assert tid(page, "friend-add-name").input_value() == "half-typ"
    assert page.evaluate("document.activeElement && document.activeElement.dataset.testid") == "friend-add-name"
    page.evaluate("""() => { Object.defineProperty(document, 'hidden', {configurable: true, get: () => true});
                             document.dispatchEvent(new Event('visibilitychange')); }""")
    page.clock.run_for(60_000)
    page.wait_for_timeout(300)
    assert len(calls) == 1, calls  # hidden: three periods, no request
    page.evaluate("""() => { Object.defineProperty(document, 'hidden', {configurable: true, get: () => false});
                             document.dispatchEvent(new Event('visibilitychange')); }""")
    page.wait_for_timeout(500)
    assert len(calls) == 2, calls  # shown again: read at once


@contextmanager
def _signed_in_lobby(browser: Any, server: Any, name: str, locale: str,
                     viewport: tuple[int, int]) -> Iterator[tuple[Any, Any, PageGuard]]:
    """A new context whose page has registered ``name`` and shows the lobby's friends list, on
    Playwright's fake clock; yields ``(context, page, its PageGuard)``, closes the context after."""
    ctx = browser.new_context(base_url=server.base, locale=locale, viewport={"width": viewport[0], "height": viewport[1]})
    ctx.set_default_timeout(WAIT_MS)
    try:
        page = ctx.new_page()
        guard = PageGuard(page, name)
        page.clock.install()
        page.goto("/")
        register(page, name, PASSWORD)
        tid(page, "friend-list").wait_for()
        yield ctx, page, guard
    finally:
        ctx.close()


@pytest.mark.parametrize("locale, viewport, words", [
    ("en-US", (1366, 768), "You have been signed out. Sign in again to go on."),
    ("zh-CN", (390, 844), "你已退出登录，请重新登录。"),
])
def test_the_lobby_shows_itself_signed_out_once_the_session_has_ended(browser: Any, server: Any, locale: str,
                                                                      viewport: tuple[int, int], words: str) -> None:
    """When the session ends under the lobby (signed out in another tab, or expired), the next poll is
    answered 401 ``login_required``: the page says so, shows the sign-in form, and polls no more (it
    used to ask GET /api/friends and GET /api/match every 20 s / 10 s for as long as the tab stayed
    open, each answered 401)."""
    with _signed_in_lobby(browser, server, f"ending-{locale[:2]}", locale, viewport) as (ctx, page, guard):
        polls: list[tuple[str, int]] = []
        page.on("response", lambda r: polls.append((r.url.rsplit("/", 1)[1], r.status))
                if re.search(r"/api/(friends|match)$", r.url) else None)
        ctx.clear_cookies()  # the session is gone; the page still believes it is signed in
        page.clock.run_for(20_500)
        tid(page, "login-form").wait_for()
        assert tid(page, "toast").inner_text() == words
        page.screenshot(path=str(ARTIFACTS / f"session-ended-{locale[:2]}-{viewport[0]}x{viewport[1]}.png"))
        assert tid(page, "user-name").count() == 0
        assert polls and all(status == 401 for _, status in polls), polls
        seen = len(polls)
        page.clock.run_for(60_000)
        page.wait_for_timeout(500)
        assert len(polls) == seen, polls  # no poll after the page went signed out
        assert guard.page_errors == [], guard.page_errors
        assert len(guard.console_errors) == seen, guard.console_errors  # Chromium's line for each 401
        assert all("401" in e for e in guard.console_errors), guard.console_errors


def test_logging_out_says_nothing_of_a_session_ended(browser: Any, server: Any) -> None:
    """One's own "Log out": a friends poll answered 401 while the logout request is on its way (the
    server has already deleted the session) is not reported as "you have been signed out"; the page
    ends signed out with the sign-in link."""
    with _signed_in_lobby(browser, server, "leaver", "en-US", (1366, 768)) as (_ctx, page, guard):
        held: list[Any] = []
        page.route("**/api/logout", lambda route: held.append(route))
        polls: list[int] = []
        page.on("response", lambda r: polls.append(r.status) if r.url.endswith("/api/friends") else None)
        tid(page, "logout-btn").click()
        end = time.monotonic() + 10
        while not held:
            assert time.monotonic() < end, "the logout request never left"
            page.wait_for_timeout(20)
        answer = held[0].fetch()  # the server deletes the session now; the page has no answer yet
        assert answer.status == 200
        page.clock.run_for(20_500)  # the friends poll, with the session gone
        end = time.monotonic() + 10
        while not polls:
            assert time.monotonic() < end, "no friends poll"
            page.wait_for_timeout(20)
        assert polls == [401]
        held[0].fulfill(response=answer)
        tid(page, "nav-login").wait_for()
        assert tid(page, "user-name").count() == 0
        toast = tid(page, "toast")
        assert toast.count() == 0 or "signed out" not in toast.inner_text()
        # Chromium's lines for the polls answered 401 meanwhile (friends, and matchmaking every 10 s)
        assert guard.page_errors == [] and guard.console_errors
        assert all("401" in e and re.search(r"/api/(friends|match)\)$", e) for e in guard.console_errors), \
            guard.console_errors
