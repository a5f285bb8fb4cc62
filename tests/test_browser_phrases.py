"""Quick phrases, the seat menu, reports and the admin page in the browser (issue 25 items 3 and 8), against a
live server, in Chinese and English.

Two people (seats 0 and 2) and two bots play; one person's phrase shows as a bubble by her seat on both
pages; the partner mutes her from the seat menu and her next phrase shows on her page only; a phrase at
once after it is refused with the rate-limit message in the player's language; the partner reports her
from the seat menu; an admin (``guandan admin grant``) sees the report with its game link on the admin
page, mutes her phrases with a reason and finds the action in the log. At a table of four people (rated)
the phrase button is replaced by a chip that says why. Screenshots of the table with the phrase panel
and a bubble, and of the admin page, at 1366x768, 1920x1080, 390x844 and 844x390 go to test-artifacts/.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest

pytest.importorskip("uvicorn")
pytest.importorskip("fastapi")

from browser_helpers import ARTIFACTS, WAIT_MS, PageGuard, tid, wait_until

VIEWPORTS = [(1366, 768), (1920, 1080), (390, 844), (844, 390)]
WORDS = {
    "zh": {"nice": "漂亮！", "wait": r"发得太快了：请等 [0-9]+ 秒。", "sent": "举报已提交，管理员会处理。",
           "rated": "排位桌不能发快捷语：同伴之间不得暗示。", "reason": "故意拖延时间", "mute": "禁用快捷语"},
    "en": {"nice": "Nice one!", "wait": r"Too many phrases: wait [0-9]+ s\.", "sent": "Report sent. An admin will look at it.",
           "rated": "Phrases are off at rated tables: partners may not signal to each other.",
           "reason": "Stalling (running down the clock)", "mute": "Mute phrases"},
}
PASSWORD = "secret-pw-1"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, browser: Any) -> Iterator[Any]:
    from browser_helpers import LiveServer

    srv = LiveServer(tmp_path_factory.mktemp("phrases") / "guandan.db", bot_delay_s=0.05)
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture
def open_page(browser: Any, server: Any) -> Iterator[Callable[..., Any]]:
    """``open_page(label, locale, name)``: a new context signed in as a new account ``name`` (registered
    through the API), with one page; fails the test on page errors or console errors."""
    contexts: list[Any] = []
    guards: list[PageGuard] = []

    def make(label: str, locale: str, name: str) -> Any:
        ctx = browser.new_context(base_url=server.base, locale=locale, viewport={"width": 1366, "height": 768})
        ctx.set_default_timeout(WAIT_MS)
        contexts.append(ctx)
        r = ctx.request.post("/api/register", data={"name": name, "password": PASSWORD})
        assert r.status == 200, r.text()
        page = ctx.new_page()
        guards.append(PageGuard(page, label))
        return page

    yield make
    problems = [p for g in guards for p in g.problems()]
    for ctx in contexts:
        ctx.close()
    assert not problems, "\n".join(problems)


def api(page: Any, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
    r = page.request.post(path, data=body or {})
    assert r.ok, r.text()
    return r.json()  # type: ignore[no-any-return]


def toast_text(page: Any) -> str:
    return str(page.evaluate("() => { const t = document.getElementById('toast'); return t && t.classList.contains('show') ? t.textContent : ''; }"))


def bubbles(page: Any) -> list[tuple[str, str, str]]:
    return [tuple(x) for x in tid(page, "phrase-bubble").evaluate_all(
        "els => els.map(e => [e.dataset.seat, e.dataset.id, e.textContent])")]


def bubble_inside(page: Any, w: int, h: int) -> None:
    box = tid(page, "phrase-bubble").first.bounding_box()
    assert box and box["x"] >= 0 and box["y"] >= 0 and box["x"] + box["width"] <= w + 0.5 and box["y"] + box["height"] <= h + 0.5, box
    bar = tid(page, "actions-bar")
    if bar.count() and bar.is_visible():  # a bubble never covers the action bar
        b = bar.bounding_box()
        assert b is not None
        overlap = not (box["y"] + box["height"] <= b["y"] or box["y"] >= b["y"] + b["height"]
                       or box["x"] + box["width"] <= b["x"] or box["x"] >= b["x"] + b["width"])
        assert not overlap, (box, b)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_phrases_mute_report_and_admin(open_page: Callable[..., Any], server: Any, lang: str) -> None:
    words = WORDS[lang]
    locale = "zh-CN" if lang == "zh" else "en-US"
    ann_name, bob_name, root_name = f"ann_{lang}", f"bob_{lang}", f"root_{lang}"
    ann = open_page("ann", locale, ann_name)
    ann_frames: list[str] = []  # what ann's page hears besides the state frames (for the failure messages)
    ann.on("websocket", lambda ws: ws.on("framereceived", lambda f: ann_frames.append(str(f)[:200])
                                         if '"type":"state"' not in str(f) else None))
    bob = open_page("bob", locale, bob_name)
    rid = api(ann, "/api/rooms", {"preset": "official", "name": f"phrases {lang}"})["room"]["id"]
    api(bob, f"/api/rooms/{rid}/seat", {"seat": 2})
    api(ann, f"/api/rooms/{rid}/bots", {"bot": "heuristic"})
    api(ann, f"/api/rooms/{rid}/start")
    for p in (ann, bob):
        p.goto(f"/room/{rid}")
        tid(p, "hand").wait_for()

    # the phrase panel and a bubble at the four viewports (3 s apart: the rate limit)
    for i, (w, h) in enumerate(VIEWPORTS):
        for p in (ann, bob):
            p.set_viewport_size({"width": w, "height": h})
        if i:
            ann.wait_for_timeout(3100)
        tid(ann, "phrase-btn").click()
        tid(ann, "phrase-panel").wait_for()
        assert tid(ann, "phrase-item").count() == 10 and tid(ann, "emote-item").count() == 8
        ann.screenshot(path=str(ARTIFACTS / f"phrases-panel-{lang}-{w}x{h}.png"))
        pid = "nice_play" if i == 0 else "wow"
        ann.locator(f'[data-testid=phrase-item][data-id="{pid}"], [data-testid=emote-item][data-id="{pid}"]').click()
        expected = ("0", pid, words["nice"] if pid == "nice_play" else "😮")
        wait_until(bob, lambda: expected in bubbles(bob), f"ann's bubble on bob's page ({w}x{h})")
        wait_until(ann, lambda: expected in bubbles(ann), f"ann's bubble on her page ({w}x{h})")
        assert tid(ann, "phrase-panel").count() == 0  # sending closes the panel
        bubble_inside(bob, w, h)
        bubble_inside(ann, w, h)
        bob.screenshot(path=str(ARTIFACTS / f"phrases-bubble-{lang}-{w}x{h}.png"))
    for p in (ann, bob):
        p.set_viewport_size({"width": 1366, "height": 768})

    # bob mutes ann from her seat panel: her next phrase shows on her page only
    tid(bob, "seat-panel-0").click()
    tid(bob, "seat-menu").wait_for()
    tid(bob, "seat-mute").check()
    bob.screenshot(path=str(ARTIFACTS / f"phrases-seat-menu-{lang}-1366x768.png"))
    tid(bob, "seat-menu-close").click()
    ann.wait_for_timeout(3100)
    tid(ann, "phrase-btn").click()
    ann.locator('[data-testid=emote-item][data-id="laugh"]').click()
    wait_until(ann, lambda: ("0", "laugh") in [b[:2] for b in bubbles(ann)], "ann's own bubble")
    assert bob.evaluate("() => JSON.parse(localStorage.getItem('guandan.phrases.mute')).names") == [ann_name]

    # too fast (at once after the last one; and the 6th in a minute): refused in the player's language,
    # nothing sent
    tid(ann, "phrase-btn").click()
    ann.locator('[data-testid=phrase-item][data-id="sorry"]').click()
    wait_until(ann, lambda: re.fullmatch(words["wait"], toast_text(ann)), "the rate-limit message",
               detail=lambda: f" toast {toast_text(ann)!r}; frames {ann_frames[-6:]}")
    bob.wait_for_timeout(600)
    assert ("0", "laugh") not in [b[:2] for b in bubbles(bob)]  # muted
    assert ("0", "sorry") not in [b[:2] for b in bubbles(ann)]  # refused
    assert '"id":"sorry"' not in "".join(ann_frames)

    # bob reports ann from the seat menu
    tid(bob, "seat-panel-0").click()
    tid(bob, "seat-report").click()
    tid(bob, "report-reason").select_option("stalling")
    assert tid(bob, "report-reason").evaluate("s => s.options[s.selectedIndex].textContent") == words["reason"]
    bob.screenshot(path=str(ARTIFACTS / f"phrases-report-{lang}-1366x768.png"))
    tid(bob, "report-submit").click()
    wait_until(bob, lambda: toast_text(bob) == words["sent"], "the report's confirmation", detail=lambda: toast_text(bob))

    # an admin (from the command line) sees it with the room's link, mutes ann's phrases, finds it in the log
    from guandan.server import moderation_store
    from guandan.server.models import utcnow

    root = open_page("root", locale, root_name)
    with server.app.state.session_factory() as db:
        moderation_store.set_admin(db, root_name, True, utcnow(), "test admin")
        db.commit()
    root.goto("/admin")
    row = root.locator(f'[data-testid=admin-report][data-target="{ann_name}"]')
    row.wait_for()
    assert row.locator("[data-testid=admin-report-link]").get_attribute("href") == f"/room/{rid}"
    # the header's Admin link fills in once GET /api/moderation/me answers (asked after the page's own GETs)
    tid(root, "nav-admin").wait_for()
    assert tid(root, "nav-admin").count() == 1
    for w, h in VIEWPORTS:
        root.set_viewport_size({"width": w, "height": h})
        root.wait_for_timeout(150)
        assert root.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth + 1"), (w, h)
        root.screenshot(path=str(ARTIFACTS / f"admin-reports-{lang}-{w}x{h}.png"), full_page=True)
    row.locator("[data-testid=admin-action]").select_option("mute_phrases")
    row.locator("[data-testid=admin-hours]").fill("2")
    row.locator("[data-testid=admin-why]").fill("test: phrases")
    row.locator("[data-testid=admin-apply]").click()
    log_row = root.locator('[data-testid=admin-log-row][data-action="mute_phrases"]', has_text=ann_name)
    log_row.wait_for()
    assert words["mute"] in log_row.inner_text() and ann_name in log_row.inner_text()
    assert root.locator(f'[data-testid=admin-report][data-target="{ann_name}"]').count() == 0
    for w, h in VIEWPORTS:
        root.set_viewport_size({"width": w, "height": h})
        root.wait_for_timeout(150)
        assert root.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth + 1"), (w, h)
        root.screenshot(path=str(ARTIFACTS / f"admin-log-{lang}-{w}x{h}.png"), full_page=True)

    # a muted account's phrase is refused with the end of the mute (a table rereads a mute every 5 s)
    ann.wait_for_timeout(5100)
    tid(ann, "phrase-btn").click()
    ann.locator('[data-testid=phrase-item][data-id="hello"]').click()
    muted = "你的快捷语已被禁用，直到 " if lang == "zh" else "Your phrases are muted until "
    wait_until(ann, lambda: toast_text(ann).startswith(muted), "the mute message", detail=lambda: toast_text(ann))


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_phrases_off_at_a_rated_table(open_page: Callable[..., Any], server: Any, lang: str) -> None:
    words = WORDS[lang]
    locale = "zh-CN" if lang == "zh" else "en-US"
    pages = [open_page(f"p{i}", locale, f"rated{i}_{lang}") for i in range(4)]
    rid = api(pages[0], "/api/rooms", {"preset": "official"})["room"]["id"]
    for seat in (1, 2, 3):
        api(pages[seat], f"/api/rooms/{rid}/seat", {"seat": seat})
    api(pages[0], f"/api/rooms/{rid}/start")
    page = pages[1]
    for w, h in VIEWPORTS:
        page.set_viewport_size({"width": w, "height": h})
        if page.url.endswith(rid):
            page.wait_for_timeout(150)
        else:
            page.goto(f"/room/{rid}")
        tid(page, "phrase-off").wait_for()
        assert tid(page, "phrase-btn").count() == 0
        assert tid(page, "phrase-off").get_attribute("title") == words["rated"]
        page.screenshot(path=str(ARTIFACTS / f"phrases-off-rated-{lang}-{w}x{h}.png"))
    tid(page, "phrase-off").click()
    wait_until(page, lambda: toast_text(page) == words["rated"], "the reason", detail=lambda: toast_text(page))


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_report_from_the_game_over_panel(open_page: Callable[..., Any], lang: str) -> None:
    """After the game the game-over panel's players line has "Report": choose the player, the reason,
    send; the request names the stored game (its id from the final frame), the room and the last deal.
    Scripted frames (tests/test_browser_table.py's ScriptedTable; the report request is answered here)."""
    import json

    from test_browser_table import MOCK_ROOM, ScriptedTable, room_summary, state_of, view_of

    locale = "zh-CN" if lang == "zh" else "en-US"
    page = open_page("game-over", locale, f"over_{lang}")
    page.set_viewport_size({"width": 844, "height": 390})
    room = room_summary()
    room["seats"][1] = {"seat": 1, "kind": "person", "user": "bob", "bot": None, "difficulty": None, "connected": True}
    room["seats"][2] = {"seat": 2, "kind": "person", "user": "王小明", "bot": None, "difficulty": None, "connected": True}
    script = ScriptedTable(page, [state_of(view_of(["3S", "4D"], [], [], to_act=1), 40, room=room,
                                           phrases={"on": False, "off_reason": "rated"})], lambda m: [])
    page.route(f"**/api/rooms/{MOCK_ROOM}", lambda route: route.fulfill(json={"room": room}))
    sent: list[dict[str, Any]] = []

    def on_report(route: Any) -> None:
        sent.append(json.loads(route.request.post_data or "{}"))
        route.fulfill(status=201, json={"report": {"id": 1}})

    page.route("**/api/reports", on_report)
    page.goto(f"/room/{MOCK_ROOM}")
    tid(page, "hand").wait_for()
    tid(page, "phrase-off").wait_for()  # a table of people: phrases off, the reason in the title
    line = {"level": "2", "finish_order": [0, 2, 1, 3], "result": "1-2", "result_code": "double_down", "winner_team": 0,
            "upgrade": 3, "levels": ["5", "2"]}
    final = {"winner_team": 0, "game_id": 17, "summary": {"deals": 9, "levels": ["A", "9"],
                                                          "results": [{**line, "deal": d} for d in range(1, 10)]}}
    over_view = view_of([], [], [], to_act=None, deal=9)
    over_view["phase"] = "game_over"
    script.push(state_of(over_view, 90, final=final, room=room, phrases={"on": False, "off_reason": "rated"}))
    script.push({"type": "game_over", **final})
    tid(page, "game-over-panel").wait_for()
    for what in ("game-over-report", "again-btn", "result-close"):  # the added button keeps the panel in view
        box = tid(page, what).first.bounding_box()
        assert box and box["y"] >= 0 and box["y"] + box["height"] <= 390.5 and box["x"] + box["width"] <= 844.5, (what, box)
    page.screenshot(path=str(ARTIFACTS / f"phrases-game-over-{lang}-844x390.png"))
    tid(page, "game-over-report").click()
    assert tid(page, "report-pick").evaluate_all("els => els.map(e => e.dataset.name)") == ["bob", "王小明"]
    page.locator('[data-testid=report-pick][data-name="王小明"]').click()
    tid(page, "report-reason").select_option("abandoning")
    assert tid(page, "report-where").inner_text() == ("对局 #17 · 第 9 局" if lang == "zh" else "Game #17 · Deal 9")
    page.screenshot(path=str(ARTIFACTS / f"phrases-report-game-over-{lang}-844x390.png"))
    tid(page, "report-submit").click()
    wait_until(page, lambda: sent, "the report request")
    assert sent == [{"name": "王小明", "reason": "abandoning", "room_id": MOCK_ROOM, "game_id": 17, "deal": 9}]
    wait_until(page, lambda: toast_text(page) == WORDS[lang]["sent"], "the confirmation", detail=lambda: toast_text(page))
    assert tid(page, "seat-menu").count() == 0


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_mute_all_is_kept_in_the_browser(open_page: Callable[..., Any], lang: str) -> None:
    """"Mute all phrases" hides every other seat's bubble (one's own still shows) and stays after a reload
    (localStorage); a phrase id this page does not know shows nothing. Scripted frames."""
    from test_browser_table import MOCK_ROOM, ScriptedTable, room_summary, state_of, view_of

    locale = "zh-CN" if lang == "zh" else "en-US"
    page = open_page("mute-all", locale, f"muteall_{lang}")
    room = room_summary()
    room["seats"][2] = {"seat": 2, "kind": "person", "user": "bob", "bot": None, "difficulty": None, "connected": True}
    frames = [state_of(view_of(["3S", "4D"], [], [], to_act=1), 40, room=room, phrases={"on": True, "off_reason": None})]
    script = ScriptedTable(page, frames, lambda m: [])
    page.route(f"**/api/rooms/{MOCK_ROOM}", lambda route: route.fulfill(json={"room": room}))
    page.goto(f"/room/{MOCK_ROOM}")
    tid(page, "phrase-btn").wait_for()
    script.push({"type": "phrase", "seat": 2, "id": "hello"})
    wait_until(page, lambda: bubbles(page) == [("2", "hello", "大家好！" if lang == "zh" else "Hello, everyone!")], "bob's bubble")
    script.push({"type": "phrase", "seat": 2, "id": "a card: AS"})  # not in this page's list: nothing shows
    page.wait_for_timeout(300)
    assert [b[:2] for b in bubbles(page)] == [("2", "hello")]
    tid(page, "phrase-btn").click()
    tid(page, "phrase-mute-all").check()
    tid(page, "phrase-close").click()
    page.reload()
    tid(page, "phrase-btn").wait_for()
    assert page.evaluate("() => JSON.parse(localStorage.getItem('guandan.phrases.mute')).all") is True
    script.push({"type": "phrase", "seat": 2, "id": "nice_play"})
    script.push({"type": "phrase", "seat": 0, "id": "thanks"})  # one's own
    wait_until(page, lambda: [b[:2] for b in bubbles(page)] == [("0", "thanks")], "only my own bubble",
               detail=lambda: str(bubbles(page)))
    page.wait_for_timeout(300)
    assert [b[:2] for b in bubbles(page)] == [("0", "thanks")]
    tid(page, "phrase-btn").click()
    assert tid(page, "phrase-mute-all").is_checked()
