"""Defects found by a newcomer's walk through the web UI (branch ``walk``), each pinned by a browser test
against a live server, in Chinese and English:

* the admin log showed the command line's default reason in English inside the Chinese page
  ("set from the command line"): ``guandan admin grant`` without ``--why`` now logs no reason and the page
  says it in the reader's language;
* the bomb animation (``.fx-host``, above the table) was drawn over the leave-game confirmation: it is
  hidden while a confirmation dialog is open;
* a matched room's stored name "匹配 Match" showed both languages (lobby, room, friends panel);
* the header's Admin link sat 6 px above the other links;
* at 844x390 the admin page's report table ran past its card (reason field and Apply out of sight);
* the turned card's Chinese sentence (R51) ran the leader's name into the words around it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

pytest.importorskip("uvicorn")
pytest.importorskip("fastapi")

from browser_helpers import WAIT_MS, PageGuard, tid

PASSWORD = "walk-secret-1"
CLI_WHY = {"zh": "在命令行设置", "en": "set from the command line"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, browser: Any) -> Iterator[Any]:
    from browser_helpers import LiveServer

    # every account of this file registers from 127.0.0.1: more than the default 20 an hour
    srv = LiveServer(tmp_path_factory.mktemp("walk") / "guandan.db", bot_delay_s=0.05,
                     settings={"registrations_per_hour": 0})
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture
def open_page(browser: Any, server: Any) -> Iterator[Callable[..., Any]]:
    """``open_page(locale, name)``: a new context signed in as a new account ``name`` (registered through
    the API), with one page; fails the test on page errors or console errors."""
    contexts: list[Any] = []
    guards: list[PageGuard] = []

    def make(locale: str, name: str) -> Any:
        ctx = browser.new_context(base_url=server.base, locale=locale, viewport={"width": 1366, "height": 768})
        ctx.set_default_timeout(WAIT_MS)
        contexts.append(ctx)
        r = ctx.request.post("/api/register", data={"name": name, "password": PASSWORD})
        assert r.status == 200, r.text()
        page = ctx.new_page()
        guards.append(PageGuard(page, name))
        return page

    yield make
    problems = [p for g in guards for p in g.problems()]
    for ctx in contexts:
        ctx.close()
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_admin_log_cli_grant_reason_in_page_language(open_page: Callable[..., Any], server: Any, lang: str) -> None:
    from guandan.server import moderation_store
    from guandan.server.models import utcnow

    name = f"walkadm_{lang}"
    page = open_page("zh-CN" if lang == "zh" else "en-US", name)
    with server.app.state.session_factory() as db:
        moderation_store.set_admin(db, name, True, utcnow())  # as `guandan admin grant NAME` without --why
        db.commit()
    page.goto("/admin")
    row = page.locator('[data-testid=admin-log-row][data-action="grant_admin"]', has_text=name)
    row.wait_for()
    why = row.locator("td").last.inner_text().strip()
    assert why == CLI_WHY[lang]


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_bomb_animation_not_over_the_leave_confirmation(open_page: Callable[..., Any], server: Any, lang: str) -> None:
    page = open_page("zh-CN" if lang == "zh" else "en-US", f"walkleave_{lang}")
    r = page.request.post("/api/rooms", data={"preset": "official", "name": f"walk leave {lang}"})
    assert r.ok, r.text()
    rid = r.json()["room"]["id"]
    assert page.request.post(f"/api/rooms/{rid}/bots", data={"bot": "heuristic"}).ok
    assert page.request.post(f"/api/rooms/{rid}/start", data={}).ok
    page.goto(f"/room/{rid}")
    tid(page, "hand").wait_for()
    fx_display = "() => getComputedStyle(document.querySelector('.fx-host')).display"
    assert page.evaluate(fx_display) == "block"  # shown while no dialog is open
    tid(page, "menu-btn").click()
    tid(page, "leave-game-btn").click()
    tid(page, "leave-confirm").wait_for()
    assert page.evaluate(fx_display) == "none"
    tid(page, "leave-confirm-no").click()
    tid(page, "leave-confirm").wait_for(state="detached")
    tid(page, "room-drawer").wait_for()  # the drawer stays open: a drawer is not a dialog over the table
    assert page.evaluate(fx_display) == "block"


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_matched_room_name_in_page_language(open_page: Callable[..., Any], server: Any, lang: str) -> None:
    from guandan.server.api_matchmaking import MATCH_ROOM_NAME

    page = open_page("zh-CN" if lang == "zh" else "en-US", f"walkmm_{lang}")
    r = page.request.post("/api/rooms", data={"preset": "official", "name": MATCH_ROOM_NAME})  # the name a match gets
    assert r.ok, r.text()
    rid = r.json()["room"]["id"]
    expected = "匹配对局" if lang == "zh" else "Matched game"
    page.goto("/")
    item = page.locator(".room-name", has_text=expected)
    item.first.wait_for()
    assert MATCH_ROOM_NAME not in page.locator("body").inner_text()
    page.goto(f"/room/{rid}")
    tid(page, "room-title").filter(has_text=expected).wait_for()


@pytest.mark.parametrize("size", [(1366, 768), (390, 844), (844, 390)])
def test_admin_nav_link_lines_up_with_the_others(open_page: Callable[..., Any], server: Any, size: tuple[int, int]) -> None:
    from guandan.server import moderation_store
    from guandan.server.models import utcnow

    name = f"walknav_{size[0]}"
    page = open_page("en-US", name)
    with server.app.state.session_factory() as db:
        moderation_store.set_admin(db, name, True, utcnow())
        db.commit()
    page.set_viewport_size({"width": size[0], "height": size[1]})
    page.goto("/admin")
    tid(page, "nav-admin").wait_for()
    boxes = page.locator(".nav .nav-link").evaluate_all(
        "els => els.map(e => { const r = e.getBoundingClientRect(); return [e.textContent, Math.round(r.top), Math.round(r.height)]; })")
    first = boxes[0]
    admin = [b for b in boxes if b[0] == "Admin"]
    assert len(admin) == 1, boxes
    # the same box as the other links, on their rows' grid (it was 6 px higher than its row: an inline
    # link's padding inside a span); a narrow header wraps the links onto rows of one pitch
    tops = sorted({b[1] for b in boxes if b[0] != "Admin"})
    pitch = tops[1] - tops[0] if len(tops) > 1 else first[2] + 4
    assert admin[0][2] == first[2], boxes
    assert admin[0][1] in tops or admin[0][1] == tops[-1] + pitch, boxes


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_friend_at_a_matched_table_named_in_page_language(open_page: Callable[..., Any], server: Any, lang: str) -> None:
    from guandan.server.api_matchmaking import MATCH_ROOM_NAME

    locale = "zh-CN" if lang == "zh" else "en-US"
    a_name, b_name = f"walkfa_{lang}", f"walkfb_{lang}"
    a, b = open_page(locale, a_name), open_page(locale, b_name)
    for me, other in ((a, b_name), (b, a_name)):  # both ask: friends at once
        r = me.request.post("/api/friends/requests", data={"name": other})
        assert r.ok, r.text()
    r = a.request.post("/api/rooms", data={"preset": "official", "name": MATCH_ROOM_NAME})
    assert r.ok, r.text()
    a.goto(f"/room/{r.json()['room']['id']}")  # a is online, waiting at the table
    tid(a, "room-title").wait_for()
    b.goto("/")
    at = b.locator(f'[data-testid=friend-item][data-name="{a_name}"] [data-testid=friend-table]')
    at.wait_for()
    assert at.inner_text() == ("在 匹配对局 等人" if lang == "zh" else "Waiting at Matched game")


@pytest.mark.parametrize("size", [(844, 390), (390, 844), (1366, 768)])
def test_admin_report_row_fits_without_sideways_scroll(open_page: Callable[..., Any], server: Any,
                                                         size: tuple[int, int]) -> None:
    from guandan.server import moderation_store
    from guandan.server.models import utcnow

    a_name, b_name, adm_name = (f"walk_{k}_{size[0]}" for k in ("player", "reporter", "admin"))
    a, b = open_page("en-US", a_name), open_page("en-US", b_name)
    r = a.request.post("/api/rooms", data={"preset": "official", "name": f"walk report {size[0]}"})
    assert r.ok, r.text()
    rid = r.json()["room"]["id"]
    assert b.request.post(f"/api/rooms/{rid}/seat", data={"seat": 2}).ok
    r = b.request.post("/api/reports", data={"name": a_name, "reason": "stalling", "room_id": rid})
    assert r.ok, r.text()
    adm = open_page("en-US", adm_name)
    with server.app.state.session_factory() as db:
        moderation_store.set_admin(db, adm_name, True, utcnow())
        db.commit()
    adm.set_viewport_size({"width": size[0], "height": size[1]})
    adm.goto("/admin")
    row = adm.locator(f'[data-testid=admin-report][data-target="{a_name}"]')
    row.wait_for()
    # every report table fits its box: nothing of the row (the reason field, Apply) is out of sight
    widths = adm.locator(".admin-scroll").evaluate_all("els => els.map(e => [e.scrollWidth, e.clientWidth])")
    assert widths and all(sw <= cw for sw, cw in widths), widths
    why = row.locator("[data-testid=admin-why]").bounding_box()
    apply_btn = row.locator("[data-testid=admin-apply]").bounding_box()
    assert why is not None and apply_btn is not None
    assert why["x"] + why["width"] <= size[0] and apply_btn["x"] + apply_btn["width"] <= size[0]


def test_turned_card_text_spaces_the_leader_name(open_page: Callable[..., Any], server: Any) -> None:
    """R51's turned card at a game's first deal, in Chinese: a player's name is set off by spaces as in
    every other sentence of the table ("{name} 先出。"); it ran into the Chinese words ("在机器人3手里")."""
    import re

    page = open_page("zh-CN", "walkturn_zh")
    r = page.request.post("/api/rooms", data={"preset": "official", "name": "walk turned"})
    assert r.ok, r.text()
    rid = r.json()["room"]["id"]
    server.set_seed(rid, 7)
    assert page.request.post(f"/api/rooms/{rid}/bots", data={"bot": "heuristic"}).ok
    assert page.request.post(f"/api/rooms/{rid}/start", data={}).ok
    page.goto(f"/room/{rid}")
    card = tid(page, "turned-card")
    card.wait_for()
    seat = int(card.get_attribute("data-seat") or "-1")
    assert seat in (1, 2, 3), seat  # a bot's seat with this seed: the sentence names it
    text = card.locator(".reveal-text").inner_text()
    m = re.fullmatch(r"翻出 \S+ \S+，在 (\S+) 手里，由 (\S+) 先出。", text)
    assert m is not None and m.group(1) == m.group(2) and m.group(1).startswith("机器人"), text
