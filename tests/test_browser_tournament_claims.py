"""Players' results with their pair's code (issue 21) in Chromium on a live server (fresh SQLite file, no
mocks), in zh-CN and en-US at 1366×768, 1920×1080, 390×844 and 844×390:

* the directors' table cards show each table's two pairs, each on its own tear-off half with its own
  code (the codes the API gives the directors), the page never scrolls sideways, and "print table cards" prints the cards alone;
* the organiser removes a co-director with the button beside the name;
* a visitor without an account sees the result form, a wrong code is answered in the page's language,
  the form asks no side (the code tells it), and the codes of both pairs make the result final (the table leaves the form, the pairing
  row shows it).

Screenshots: ``test-artifacts/tournament-cards-*.png``, ``tournament-claim-*.png``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

pytest.importorskip("uvicorn")

PASSWORD = "tournament-pass-1"
ENTRIES = [("张伟", "李娜"), ("Alexandra Montgomery", "Bartholomew Fitzgerald"), ("王芳", "刘洋"), ("Cat", "Dan"),
           ("陈静", "杨磊"), ("Eve", "Fay")]
VIEWPORTS = [(1366, 768), (1920, 1080), (390, 844), (844, 390)]
LOCALES = ["zh-CN", "en-US"]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, browser: Any) -> Iterator[Any]:
    from browser_helpers import LiveServer

    srv = LiveServer(tmp_path_factory.mktemp("tour-claims") / "guandan.db")
    try:
        yield srv
    finally:
        srv.stop()


def _event(server: Any, name: str) -> dict[str, Any]:
    """A Swiss event at real tables, 6 pairs, round 1 paired (3 tables), the codes read by the organiser."""
    c = httpx.Client(base_url=server.base, timeout=30)
    r = c.post("/api/register", json={"name": "orga_cards", "password": PASSWORD})
    if r.status_code != 200:
        assert c.post("/api/login", json={"name": "orga_cards", "password": PASSWORD}).status_code == 200
    tid = c.post("/api/tournaments", json={"name": name, "rounds": 3}).json()["tournament"]["id"]
    r = c.post(f"/api/tournaments/{tid}/entries", json={"version": 1, "entries": [
        {"players": [a, b], "seed": i} for i, (a, b) in enumerate(ENTRIES, 1)]})
    assert r.status_code == 200, r.text
    r = c.post(f"/api/tournaments/{tid}/rounds", json={"version": r.json()["version"]})
    assert r.status_code == 200, r.text
    codes = c.get(f"/api/tournaments/{tid}/rounds/1/codes").json()["tables"]
    c.close()
    return {"id": tid, "codes": {x["table"]: x["codes"] for x in codes}, "tables": codes}


@pytest.fixture(scope="module")
def event(server: Any) -> dict[str, Any]:
    return _event(server, "周末公开赛 Weekend Open")


@pytest.fixture
def open_page(browser: Any, server: Any) -> Iterator[Callable[..., Any]]:
    from browser_helpers import WAIT_MS, PageGuard

    contexts: list[Any] = []
    guards: list[Any] = []

    def make(label: str, locale: str, viewport: tuple[int, int], allow: tuple[str, ...] = ()) -> Any:
        ctx = browser.new_context(base_url=server.base, locale=locale,
                                  viewport={"width": viewport[0], "height": viewport[1]})
        ctx.set_default_timeout(WAIT_MS)
        contexts.append(ctx)
        page = ctx.new_page()
        guards.append((PageGuard(page, label), allow))
        return page

    yield make
    problems = [p for g, allow in guards for p in g.problems() if not any(a in p for a in allow)]
    for ctx in contexts:
        ctx.close()
    assert not problems, "\n".join(problems)


def _sign_in(page: Any) -> None:
    page.goto("/tournaments")
    status = page.evaluate("""async (pw) => (await fetch('/api/login', {method: 'POST', credentials: 'same-origin',
        headers: {'Content-Type': 'application/json'}, body: JSON.stringify({name: 'orga_cards', password: pw})})).status""",
                           PASSWORD)
    assert status == 200


def _no_sideways_scroll(page: Any) -> None:
    widths = page.evaluate("() => [document.documentElement.scrollWidth, document.body.scrollWidth, window.innerWidth]")
    assert max(widths[:2]) <= widths[2], f"horizontal overflow: {widths}"


def _name(v: tuple[int, int]) -> str:
    return f"{v[0]}x{v[1]}"


@pytest.mark.parametrize("locale", LOCALES)
@pytest.mark.parametrize("viewport", VIEWPORTS, ids=_name)
def test_table_cards_show_the_codes(open_page: Callable[..., Any], event: dict[str, Any], locale: str,
                                    viewport: tuple[int, int]) -> None:
    from browser_helpers import ARTIFACTS, tid

    page = open_page(f"cards {locale} {viewport}", locale, viewport)
    _sign_in(page)
    page.goto(f"/tournaments/{event['id']}")
    tid(page, "table-card-code").first.wait_for()
    cards = tid(page, "table-card")
    assert cards.count() == 3
    shown = {}
    for i in range(3):
        codes = cards.nth(i).locator('[data-testid="table-card-code"]')
        assert codes.count() == 2
        shown[int(cards.nth(i).get_attribute("data-table"))] = {
            codes.nth(j).get_attribute("data-side"): codes.nth(j).inner_text() for j in range(2)}
    assert shown == event["codes"]
    # the seeded round 1: seed 1 (张伟 / 李娜) v seed 4 (Cat / Dan) at table 1, each on its own half
    halves = cards.nth(0).locator('[data-testid="table-card-half"]')
    half_a, half_b = halves.nth(0).inner_text(), halves.nth(1).inner_text()
    assert "张伟" in half_a and "Cat" not in half_a and event["codes"][1]["a"] in half_a
    assert "Cat" in half_b and "张伟" not in half_b and event["codes"][1]["b"] in half_b
    assert event["codes"][1]["a"] not in half_b
    for half in (half_a, half_b):
        assert ("第 1 轮 · 第 1 桌" if locale == "zh-CN" else "Round 1 · Table 1") in half
        assert ("本组合录分码" if locale == "zh-CN" else "Result code of this pair") in half
    assert ("沿此线剪开" if locale == "zh-CN" else "cut here") in cards.nth(0).inner_text()
    _no_sideways_scroll(page)
    lang = "zh" if locale == "zh-CN" else "en"
    ARTIFACTS.mkdir(exist_ok=True)
    tid(page, "table-cards-panel").scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / f"tournament-cards-{lang}-{_name(viewport)}.png"), full_page=True)
    tid(page, "table-cards-panel").screenshot(path=str(ARTIFACTS / f"tournament-cards-panel-{lang}-{_name(viewport)}.png"))
    if viewport == (1366, 768):  # "print table cards": the cards alone, without the controls
        page.set_viewport_size({"width": 794, "height": 1123})  # an A4 sheet at 96 dpi
        page.evaluate("() => document.body.classList.add('print-cards')")
        page.emulate_media(media="print")
        assert tid(page, "table-card").nth(2).is_visible()
        for hidden in ("organiser-panel", "standings-table", "print-cards-btn", "claim-form", "round-section"):
            assert not tid(page, hidden).first.is_visible(), hidden
        assert not page.locator("header.topbar").is_visible()
        page.screenshot(path=str(ARTIFACTS / f"tournament-cards-print-{lang}.png"), full_page=True)


@pytest.mark.parametrize("locale", LOCALES)
@pytest.mark.parametrize("viewport", VIEWPORTS, ids=_name)
def test_public_form_refuses_a_wrong_code(open_page: Callable[..., Any], server: Any, event: dict[str, Any],
                                          locale: str, viewport: tuple[int, int]) -> None:
    from browser_helpers import ARTIFACTS, tid

    server.app.state.wrong_table_codes = None  # each page sends one wrong code on purpose
    page = open_page(f"claim {locale} {viewport}", locale, viewport, allow=("403",))
    page.goto(f"/tournaments/{event['id']}")
    tid(page, "claim-form").wait_for()
    assert tid(page, "organiser-panel").count() == 0 and tid(page, "table-cards-panel").count() == 0
    assert tid(page, "table-card-code").count() == 0  # no code reaches a visitor
    text = tid(page, "claim-form").inner_text()
    assert ("录入本桌成绩" if locale == "zh-CN" else "Enter your table's result") in text
    assert tid(page, "claim-table").locator("option").count() == 3
    tid(page, "claim-table").select_option("2")
    assert tid(page, "claim-side").count() == 0  # the side is the code's
    opts = tid(page, "claim-table").locator("option").all_inner_texts()
    assert "Alexandra Montgomery / Bartholomew Fitzgerald" in opts[1] and "陈静 / 杨磊" in opts[1]
    wrong = "ZZZZZZ" if "ZZZZZZ" not in event["codes"][2].values() else "YYYYYY"
    tid(page, "claim-code").fill(wrong)
    tid(page, "claim-level-a").select_option("12")
    tid(page, "claim-level-b").select_option("9")
    tid(page, "claim-btn").click()
    want = "录分码与本桌不符" if locale == "zh-CN" else "That is not a code of this table"
    page.wait_for_function("(s) => document.querySelector('[data-testid=claim-status]').textContent.includes(s)",
                           arg=want)
    _no_sideways_scroll(page)
    lang = "zh" if locale == "zh-CN" else "en"
    page.screenshot(path=str(ARTIFACTS / f"tournament-claim-{lang}-{_name(viewport)}.png"), full_page=False)
    d = httpx.get(f"{server.base}/api/tournaments/{event['id']}", timeout=30).json()
    assert d["rounds_list"][0]["matches"][1]["status"] == "pending"


@pytest.mark.parametrize("locale,viewport", [("zh-CN", (1366, 768)), ("en-US", (390, 844))], ids=["zh-desktop", "en-phone"])
def test_both_pairs_claim_with_the_code(open_page: Callable[..., Any], server: Any, locale: str,
                                        viewport: tuple[int, int]) -> None:
    from browser_helpers import ARTIFACTS, tid

    ev = _event(server, f"Claims {locale}")
    server.app.state.wrong_table_codes = None
    lang = "zh" if locale == "zh-CN" else "en"
    msgs = {"zh": ("成绩已提交，等待对方组合或裁判确认。 提交方：A 方（张伟 / 李娜）。",
                   "双方提交的成绩一致，成绩生效。 提交方：B 方（Cat / Dan）。"),
            "en": ("Result sent. It waits for the other pair or the organiser. Sent for Side A: 张伟 / 李娜.",
                   "Both pairs sent the same result: it stands. Sent for Side B: Cat / Dan.")}
    for side, msg in zip(("a", "b"), msgs[lang], strict=True):
        page = open_page(f"claim {side} {locale}", locale, viewport)
        page.goto(f"/tournaments/{ev['id']}")
        tid(page, "claim-form").wait_for()
        tid(page, "claim-table").select_option("1")
        tid(page, "claim-code").fill(ev["codes"][1][side].lower())  # each pair its own code, in lower case
        tid(page, "claim-level-a").select_option("13")
        tid(page, "claim-level-b").select_option("9")
        tid(page, "claim-btn").click()
        page.wait_for_function("(s) => { const el = document.querySelector('[data-testid=toast]');"
                               " return el && el.textContent === s; }", arg=msg)
        if side == "b":  # the page reloaded (the table left the form); the answer stays in the form
            page.wait_for_function("() => document.querySelectorAll('[data-testid=claim-table] option').length === 2")
        assert tid(page, "claim-status").inner_text() == msg
        page.screenshot(path=str(ARTIFACTS / f"tournament-claim-{side}-{lang}-{_name(viewport)}.png"), full_page=False)
    # the result stands: the pairing row shows K : 9 and 3 : 1 (R58: on time the levels decide)
    row = page.locator('[data-testid="pairing-row"][data-table="1"][data-status="final"]')
    row.wait_for()
    assert "K : 9" in row.inner_text() and "3 : 1" in row.inner_text()
    assert tid(page, "claim-table").locator("option").count() == 2  # the table left the form
    d = httpx.get(f"{server.base}/api/tournaments/{ev['id']}", timeout=30).json()
    res = d["rounds_list"][0]["matches"][0]["result"]
    assert (res["level_a"], res["level_b"], res["time_called"]) == (13, 9, True)


def test_organiser_removes_a_codirector(open_page: Callable[..., Any], server: Any, event: dict[str, Any]) -> None:
    from browser_helpers import ARTIFACTS, tid

    with httpx.Client(base_url=server.base, timeout=30) as c:
        assert c.post("/api/register", json={"name": "co_cards", "password": PASSWORD}).status_code == 200
        assert c.post("/api/login", json={"name": "orga_cards", "password": PASSWORD}).status_code == 200
        v = c.get(f"/api/tournaments/{event['id']}").json()["version"]
        r = c.post(f"/api/tournaments/{event['id']}/codirectors", json={"version": v, "name": "co_cards"})
        assert r.status_code == 200, r.text
    page = open_page("codirector", "en-US", (390, 844))
    _sign_in(page)
    page.goto(f"/tournaments/{event['id']}")
    tid(page, "org-codirectors").wait_for()
    assert "co_cards" in tid(page, "org-codirectors").inner_text()
    tid(page, "org-codirector-remove").scroll_into_view_if_needed()
    tid(page, "org-codirectors").screenshot(path=str(ARTIFACTS / "tournament-codirector-en-390x844.png"))
    tid(page, "org-codirector-remove").click()
    page.wait_for_function("(s) => { const el = document.querySelector('[data-testid=toast]');"
                           " return el && el.textContent === s; }", arg="Co-director removed.")
    tid(page, "org-codirectors").wait_for(state="detached")  # the page reloaded: no co-director left
    d = httpx.get(f"{server.base}/api/tournaments/{event['id']}", timeout=30).json()
    assert d["codirectors"] == []
