"""What a new player found at the table (issue 25, item 9), in a real browser (Chromium):

* leaving a game: the drawer's Leave button asks first (zh/en; "Stay" keeps the game), then the
  game of a person alone with bots ends and the page goes back to the lobby; the history says
  已中止 / Abandoned; a seat whose person left shows 已离开 / left and the leaver's banner offers
  to take the seat back;
* tables with nobody connected are closed (``idle_close_s``): a quick game whose tab is closed ends;
* straights drawn in sequence order with the wild where it stands (A-2-3-4-5 at level 2 shows
  A 2 3 4 5; a straight flush with the wild 2♥ standing for A♣);
* the room header names the changed rules (打到 8), the drawer counts failed attempts at 8 (not A);
* phones: the Play button keeps the play type, 取消托管 stays on one line.

Screenshots (test-artifacts/ux-*.png) at 1366x768, 1920x1080, 390x844 and 844x390 in zh and en.
A fresh guest per test (the quick-game limits: one per account, four per address).
"""

from __future__ import annotations

import time

import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest

pytest.importorskip("uvicorn")
pytest.importorskip("fastapi")

from browser_helpers import (  # noqa: E402
    ARTIFACTS,
    WAIT_MS,
    LiveServer,
    PageGuard,
    TableWatcher,
    sign_in_guest,
    tid,
    wait_until,
)
from test_browser_table import MOCK_ROOM, ScriptedTable, room_summary, state_of, view_of  # noqa: E402

VIEWPORTS = [(1366, 768), (1920, 1080), (390, 844), (844, 390)]
LOCALES = {"zh": "zh-CN", "en": "en-US"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, browser: Any) -> Iterator[LiveServer]:
    # bots wait 2 s (nobody needs them to move here); idle tables close after 1.5 s
    srv = LiveServer(tmp_path_factory.mktemp("ux") / "guandan.db", bot_delay_s=2.0,
                     settings={"idle_close_s": 1.5})
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture
def open_page(browser: Any, server: LiveServer) -> Iterator[Callable[..., tuple[Any, TableWatcher]]]:
    ARTIFACTS.mkdir(exist_ok=True)
    contexts: list[Any] = []
    guards: list[PageGuard] = []

    def make(label: str, viewport: tuple[int, int] = (1366, 768), lang: str = "zh") -> tuple[Any, TableWatcher]:
        ctx = browser.new_context(base_url=server.base, locale=LOCALES[lang],
                                  viewport={"width": viewport[0], "height": viewport[1]})
        ctx.set_default_timeout(WAIT_MS)
        contexts.append(ctx)
        page = ctx.new_page()
        guards.append(PageGuard(page, label))
        return page, TableWatcher(page)

    yield make
    problems = [p for g in guards for p in g.problems()]
    for ctx in contexts:
        ctx.close()
    assert not problems, problems


def _quick_game(page: Any, watcher: TableWatcher) -> str:
    """A guest's quick game against bots, opened at its table; returns the room id."""
    page.goto("/")
    sign_in_guest(page)
    r = page.request.post("/api/quick", data={"difficulty": "easy", "clocks": "off"})
    assert r.ok, r.text()
    room = r.json()["room"]["id"]
    page.goto(f"/room/{room}")
    tid(page, "table").wait_for()
    watcher.wait(lambda: watcher.view, "the first view")
    return str(room)


def _room_status(page: Any, room: str) -> str:
    return str(page.request.get(f"/api/rooms/{room}").json()["room"]["status"])


WORDS = {
    "zh": {"alone": "立即结束", "yes": "确认离开", "no": "继续打", "abandoned": "已中止", "left": "已离开", "rejoin": "回到座位"},
    "en": {"alone": "the game ends now", "yes": "Leave", "no": "Stay", "abandoned": "Abandoned", "left": "left",
           "rejoin": "Take my seat back"},
}


def _box(page: Any, testid: str) -> Any:
    """The element's bounding box. The dialog is drawn again with the table at every frame and clock
    tick (``room/leave.js`` ``leaveDialog``), so the element found may be replaced before it is
    measured (``bounding_box`` then gives ``None``): look again, up to 5 s."""
    deadline = time.monotonic() + 5
    while True:
        b = tid(page, testid).bounding_box()
        if b is not None or time.monotonic() > deadline:
            return b
        page.wait_for_timeout(20)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_leave_asks_first_then_ends_a_game_alone_with_bots(open_page: Any, lang: str) -> None:
    page, watcher = open_page(f"leave-{lang}", lang=lang)
    room = _quick_game(page, watcher)
    w = WORDS[lang]
    tid(page, "menu-btn").click()
    tid(page, "leave-game-btn").click()
    dialog = tid(page, "leave-confirm")
    dialog.wait_for()
    assert w["alone"] in tid(page, "leave-confirm-text").inner_text()
    assert tid(page, "leave-confirm-yes").inner_text() == w["yes"]
    assert tid(page, "leave-confirm-no").inner_text() == w["no"]
    for vw, vh in VIEWPORTS:  # the dialog fits every viewport, both buttons inside it
        page.set_viewport_size({"width": vw, "height": vh})
        page.wait_for_timeout(150)
        page.screenshot(path=str(ARTIFACTS / f"ux-leave-confirm-{lang}-{vw}x{vh}.png"))
        for part in ("leave-confirm-yes", "leave-confirm-no"):
            b = _box(page, part)
            assert b and b["x"] >= 0 and b["y"] >= 0 and b["x"] + b["width"] <= vw and b["y"] + b["height"] <= vh, (part, vw, vh, b)
            assert b["height"] >= 40, (part, b)
    page.set_viewport_size({"width": 1366, "height": 768})
    # "Stay": nothing happens
    tid(page, "leave-confirm-no").click()
    assert dialog.count() == 0
    assert _room_status(page, room) == "playing"
    # leave for real: the game ends and the page goes back to the lobby
    tid(page, "leave-game-btn").click()
    tid(page, "leave-confirm-yes").click()
    page.wait_for_url(re.compile(r"/$"))
    assert _room_status(page, room) == "finished"
    page.goto("/history")
    row = tid(page, "game-row").first
    row.wait_for()
    assert w["abandoned"] in row.inner_text()
    page.screenshot(path=str(ARTIFACTS / f"ux-history-abandoned-{lang}.png"))


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_seat_left_shows_left_and_the_leaver_may_take_it_back(open_page: Any, lang: str) -> None:
    """Scripted table: seat 2 (carol) left (auto_reason "left"): her panel says so; then this
    page's own seat is the one left: the banner offers "take my seat back" (the auto-off message)."""
    page, _ = open_page(f"left-{lang}", lang=lang)
    w = WORDS[lang]
    view = view_of(["3S", "4H", "9C"], [], [], to_act=1)
    room = room_summary()
    room["seats"][2] = {"seat": 2, "kind": "person", "user": "carol", "bot": None, "difficulty": None, "connected": False}
    view["seat_names"][2] = "carol"
    frame = state_of(view, 1, room=room, auto=[False, False, True, False], auto_reason=[None, None, "left", None])
    table = ScriptedTable(page, [frame], lambda m: [])
    page.route(f"**/api/rooms/{MOCK_ROOM}", lambda route: route.fulfill(json={"room": room}))
    page.goto(f"/room/{MOCK_ROOM}")
    tid(page, "left-badge-2").wait_for()
    assert tid(page, "left-badge-2").inner_text() == w["left"]
    assert tid(page, "auto-badge-2").count() == 0
    mine = state_of(view, 2, room=room, auto=[True, False, True, False], auto_reason=["left", None, "left", None])
    table.push(mine)
    btn = tid(page, "auto-cancel-btn")
    wait_until(page, lambda: btn.count() == 1 and btn.inner_text() == w["rejoin"], "the take-back button")
    for vw, vh in VIEWPORTS:
        page.set_viewport_size({"width": vw, "height": vh})
        page.wait_for_timeout(150)
        page.screenshot(path=str(ARTIFACTS / f"ux-seat-left-{lang}-{vw}x{vh}.png"))
    page.set_viewport_size({"width": 1366, "height": 768})
    btn.click()
    wait_until(page, lambda: {"type": "auto", "on": False} in table.sent, "the auto-off message")


def test_a_quick_game_whose_tab_closed_is_closed_after_the_idle_time(open_page: Any, browser: Any) -> None:
    page, watcher = open_page("idle")
    room = _quick_game(page, watcher)
    other = page.context.new_page()  # same account, another tab: it does not hold the table's socket
    other.goto("/")
    page.close()
    wait_until(other, lambda: _room_status(other, room) == "finished", "the idle table closed", timeout_ms=15_000)
    other.goto("/history")
    tid(other, "game-row").first.wait_for()
    assert "已中止" in tid(other, "game-row").first.inner_text()


def _trick_frame(play: list[Any]) -> dict[str, Any]:
    view = view_of(["9C", "TD"], [[1, play]], [["pass", None, []]], to_act=0, top=play, top_seat=1, trick=[[1, play]])
    return state_of(view, 1)


@pytest.mark.parametrize("play,order", [
    (["straight", "5", ["3S", "4D", "5C", "AH", "2S"]], ["AH", "2S", "3S", "4D", "5C"]),
    # straight flush of clubs A-5 at level 2: the wild 2♥ stands for A♣, 2♣ is itself
    (["straight_flush", "5", ["3C", "4C", "5C", "2C", "2H"]], ["2H", "2C", "3C", "4C", "5C"]),
    (["straight", "7", ["7S", "2H", "3D", "4C", "6H"]], ["3D", "4C", "2H", "6H", "7S"]),  # the wild as 5
])
def test_straights_are_drawn_in_sequence_order(open_page: Any, play: list[Any], order: list[str]) -> None:
    page, _ = open_page("straights")
    ScriptedTable(page, [_trick_frame(play)], lambda m: [])
    page.goto(f"/room/{MOCK_ROOM}")
    cell = tid(page, "trick-seat-1")
    cell.locator("[data-card]").first.wait_for()
    drawn = cell.locator("[data-card]").evaluate_all("els => els.map(e => e.dataset.card)")
    assert drawn == order


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_room_header_names_changed_rules_and_drawer_counts_attempts_at_8(open_page: Any, lang: str) -> None:
    page, _ = open_page(f"rules-{lang}", lang=lang)
    page.goto("/")
    sign_in_guest(page)
    r = page.request.post("/api/rooms", data={"preset": "official", "options": {"target_level": "8"}})
    room = r.json()["room"]["id"]
    page.goto(f"/room/{room}")  # the invite link's page
    line = tid(page, "room-rules-line")
    line.wait_for()
    text = line.inner_text()
    assert ("官方规则" in text and "打到 8" in text) if lang == "zh" else ("Official" in text and "Play to 8" in text), text
    for vw, vh in VIEWPORTS:
        page.set_viewport_size({"width": vw, "height": vh})
        page.wait_for_timeout(150)
        page.screenshot(path=str(ARTIFACTS / f"ux-room-rules-{lang}-{vw}x{vh}.png"))
    # the drawer of a play-to-8 game: failed attempts at 8
    page2, _ = open_page(f"afails-{lang}", lang=lang)
    view = view_of(["3S"], [], [], to_act=1)
    view["rules"] = {"target_level": "8"}
    view["a_fails"] = [1, 0]
    ScriptedTable(page2, [state_of(view, 1)], lambda m: [])
    page2.goto(f"/room/{MOCK_ROOM}")
    tid(page2, "menu-btn").click()
    fails = tid(page2, "a-fails").inner_text()
    assert ("打8失败次数" in fails) if lang == "zh" else ("Failed attempts at 8" in fails), fails
    assert "A" not in fails.split(":")[0].replace("At", "at"), fails


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize("viewport", [(390, 844), (844, 390)])
def test_phone_play_button_keeps_the_play_type_and_auto_cancel_stays_on_one_line(open_page: Any, lang: str,
                                                                                   viewport: tuple[int, int]) -> None:
    page, _ = open_page(f"phone-{lang}", viewport=viewport, lang=lang)
    pair = ["pair", "7", ["7S", "7H"]]
    view = view_of(["3S", "7S", "7H", "9C", "TD", "KS"], [], [pair, ["single", "3", ["3S"]]], to_act=0)
    table = ScriptedTable(page, [state_of(view, 1)], lambda m: [])
    page.goto(f"/room/{MOCK_ROOM}")
    tid(page, "hand").wait_for()
    for card in ("7S", "7H"):
        page.locator(f'[data-testid=hand-card][data-card="{card}"]').click()
    preview = tid(page, "play-btn").locator(".preview")
    wait_until(page, lambda: preview.count() == 1 and preview.is_visible(), "the play type on the Play button")
    assert ("对子" in preview.inner_text()) if lang == "zh" else ("pair" in preview.inner_text().lower()), preview.inner_text()
    b = tid(page, "play-btn").bounding_box()
    bar = tid(page, "actions-bar").bounding_box()
    assert b and bar and b["y"] + b["height"] <= bar["y"] + bar["height"] + 0.5
    page.screenshot(path=str(ARTIFACTS / f"ux-phone-play-{lang}-{viewport[0]}x{viewport[1]}.png"))
    # 托管 on: 取消托管 / Cancel auto on one line (its height is one line's)
    table.push(state_of(view, 2, auto=[True, False, False, False], auto_reason=["player", None, None, None]))
    auto = tid(page, "auto-btn")
    wait_until(page, lambda: auto.get_attribute("aria-pressed") == "true", "托管 on")
    lines = auto.evaluate("e => { const s = getComputedStyle(e); const r = document.createRange(); r.selectNodeContents(e);"
                          " return r.getClientRects().length; }")
    assert lines == 1, lines
    page.screenshot(path=str(ARTIFACTS / f"ux-phone-auto-{lang}-{viewport[0]}x{viewport[1]}.png"))


HAND_27 = ["3S", "3H", "4C", "5D", "6S", "7H", "7C", "8D", "9S", "9H", "9C", "9D", "9S", "TD", "JS", "QH",
           "KC", "KD", "KS", "KH", "AS", "AD", "2H", "2C", "SJ", "SJ", "BJ"]


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_sorted_hand_groups_have_gaps_and_bombs_stand_in_columns(open_page: Any, lang: str) -> None:
    page, _ = open_page(f"columns-{lang}", lang=lang)
    view = view_of(HAND_27, [], [["single", "3", ["3S"]]], to_act=1)
    ScriptedTable(page, [state_of(view, 1)], lambda m: [])
    page.goto(f"/room/{MOCK_ROOM}")
    tid(page, "hand").wait_for()
    while tid(page, "sort-btn").get_attribute("data-mode") != "combos":
        tid(page, "sort-btn").click()
    for vw, vh in VIEWPORTS:
        page.set_viewport_size({"width": vw, "height": vh})
        page.wait_for_timeout(200)
        page.screenshot(path=str(ARTIFACTS / f"ux-columns-{lang}-{vw}x{vh}.png"))
        cards = page.evaluate(
            """() => [...document.querySelectorAll('[data-testid=hand-card]')].map(e => {
                 const r = e.getBoundingClientRect();
                 return {card: e.dataset.card, index: Number(e.dataset.index), x: r.left, y: r.top, w: r.width, h: r.height};
               })""")
        # the two bombs (K, 9) each stand in one column: one left, tops going down
        for rank, size in (("K", 4), ("9", 5)):
            col = [c for c in cards if c["card"][0] == rank]
            assert len(col) == size and len({round(c["x"]) for c in col}) == 1, (vw, vh, col)
            assert [c["y"] for c in col] == sorted(c["y"] for c in col) and col[0]["y"] < col[-1]["y"], col
            # a tap on the visible corner of each card of the column selects that card
            for c in col:
                page.mouse.click(c["x"] + 8, c["y"] + 5)
                got = page.eval_on_selector_all("[data-testid=hand-card].selected", "els => els.map(e => Number(e.dataset.index))")
                assert got == [c["index"]], (vw, vh, c, got)
                tid(page, "clear-btn").click()  # 重选
        # nothing overlaps the action bar, everything inside the viewport
        bar = tid(page, "actions-bar").bounding_box()
        hand = tid(page, "hand").bounding_box()
        assert bar and hand and hand["y"] >= bar["y"] + bar["height"] - 0.5, (vw, vh, bar, hand)
        assert hand["y"] + hand["height"] <= vh + 0.5, (vw, vh, hand)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_leave_confirmation_says_the_bot_plays_on_when_another_person_plays(open_page: Any, lang: str) -> None:
    """Scripted table with carol (a person) at seat 2: the dialog says the bot plays the seat on and
    one may come back; "Leave" sends POST /api/rooms/{id}/leave and the page goes to the lobby."""
    page, _ = open_page(f"leave-others-{lang}", lang=lang)
    view = view_of(["3S", "4H", "9C"], [], [], to_act=1)
    room = room_summary()
    room["seats"][2] = {"seat": 2, "kind": "person", "user": "carol", "bot": None, "difficulty": None, "connected": True}
    view["seat_names"][2] = "carol"
    ScriptedTable(page, [state_of(view, 1, room=room)], lambda m: [])
    page.route(f"**/api/rooms/{MOCK_ROOM}", lambda route: route.fulfill(json={"room": room}))
    posted: list[str] = []

    def leave(route: Any) -> None:
        posted.append(route.request.url)
        route.fulfill(json={"room": {**room, "status": "playing"}, "left": "bot"})

    page.route(f"**/api/rooms/{MOCK_ROOM}/leave", leave)
    page.goto(f"/room/{MOCK_ROOM}")
    tid(page, "menu-btn").click()
    tid(page, "leave-game-btn").click()
    text = tid(page, "leave-confirm-text").inner_text()
    assert ("机器人替你打完本局" in text) if lang == "zh" else ("The bot plays your seat for the rest of the game" in text), text
    page.screenshot(path=str(ARTIFACTS / f"ux-leave-confirm-others-{lang}.png"))
    tid(page, "leave-confirm-yes").click()
    page.wait_for_url(re.compile(r"/$"))
    assert len(posted) == 1
