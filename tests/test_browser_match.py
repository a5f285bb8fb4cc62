"""Browser test of matchmaking (issue 25 item 1), in Chinese and in English: four browser contexts
are four new accounts (all rated 0, so within the 3 points allowed at once). The first joins alone
and waits (the queued panel: waiting time, range, bot-fill choice, leave); the other three join;
all four get the "ready?" dialog, accept it and land in one started room with the four of them
seated. The first also leaves and joins again (one tap each). Screenshots of the panel idle and queued, and of the ready dialog at 1366×768, 1920×1080, 390×844 and
844×390 go to ``test-artifacts/match-*.png``; at each size every control of the panel and of the
dialog lies inside its box and is the element at its own centre (nothing covers it).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest

pytest.importorskip("uvicorn")
pytest.importorskip("fastapi")

from browser_helpers import ARTIFACTS, WAIT_MS, PageGuard, register, tid

VIEWPORTS = [(1366, 768), (1920, 1080), (390, 844), (844, 390)]
PASSWORD = "match-secret-1"

#: The words shown (i18n_match.js), by language.
WORDS = {
    "zh": {"title": "匹配", "range": "等级分范围 -3.0 – 3.0（你的等级分 0.0）", "found": "匹配成功！准备好了吗？",
           "leave": "取消匹配", "ready": "准备"},
    "en": {"title": "Find players", "range": "Rating range -3.0 – 3.0 (yours 0.0)", "found": "Match found! Ready?",
           "leave": "Leave queue", "ready": "Ready"},
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, browser: Any) -> Iterator[Any]:
    from browser_helpers import LiveServer

    srv = LiveServer(tmp_path_factory.mktemp("match") / "guandan.db", bot_delay_s=0.05)
    try:
        yield srv
    finally:
        srv.stop()


@pytest.fixture
def open_page(browser: Any, server: Any) -> Iterator[Callable[..., Any]]:
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
    problems = [p for g in guards for p in g.problems()]
    for ctx in contexts:
        ctx.close()
    assert not problems, "\n".join(problems)


def check_fits(page: Any, root_testid: str, where: str) -> None:
    """Each control inside ``root_testid`` lies inside it and is the element at its own centre."""
    problems = page.evaluate(
        """(sel) => {
          const out = [];
          const root = document.querySelector(`[data-testid=${sel}]`);
          if (!root) return ['missing ' + sel];
          if (root.scrollWidth > root.clientWidth + 1) out.push(`scrolls sideways ${root.scrollWidth}>${root.clientWidth}`);
          for (const b of root.querySelectorAll('button, input, select')) {
            b.scrollIntoView({block: 'center'});
            const r = b.getBoundingClientRect();
            if (r.width < 24 || r.height < 24) out.push(`small ${b.outerHTML.slice(0, 60)}`);
            const pb = root.getBoundingClientRect();
            if (r.left < pb.left - 1 || r.right > pb.right + 1) out.push(`outside: ${b.outerHTML.slice(0, 80)}`);
            const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
            if (!hit || !(hit === b || b.contains(hit))) out.push(`covered: ${b.outerHTML.slice(0, 80)} by ${hit && hit.outerHTML.slice(0, 60)}`);
          }
          return out;
        }""",
        root_testid,
    )
    assert not problems, f"{where}: {problems}"


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_four_people_matched_and_seated(open_page: Callable[..., Any], server: Any, lang: str,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from guandan.server import matchmaking as mm

    monkeypatch.setattr(mm, "READY_S", 90.0)  # screenshots take time on a loaded machine
    locale = "zh-CN" if lang == "zh" else "en-US"
    words = WORDS[lang]
    names = [f"mm{lang}_{k}" for k in ("amy", "ben", "cat", "dan")]
    pages = [open_page(n, locale) for n in names]
    for page, name in zip(pages, names, strict=True):
        page.goto("/")
        register(page, name, PASSWORD)
        tid(page, "match-panel").filter(has_text=words["title"]).wait_for()
    first = pages[0]
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for w, hgt in VIEWPORTS:  # idle: partner, bot-fill choice, join
        first.set_viewport_size({"width": w, "height": hgt})
        tid(first, "match-panel").scroll_into_view_if_needed()
        first.screenshot(path=str(ARTIFACTS / f"match-idle-{lang}-{w}x{hgt}.png"))
        check_fits(first, "match-panel", f"idle {lang} {w}x{hgt}")
    first.set_viewport_size({"width": 1366, "height": 768})
    tid(first, "match-join").click()
    tid(first, "match-leave").click()  # leaving is one tap
    tid(first, "match-join").wait_for()
    tid(first, "match-join").click()
    tid(first, "match-leave").wait_for()
    assert tid(first, "match-leave").inner_text() == words["leave"]
    assert tid(first, "match-range").inner_text() == words["range"]
    for w, hgt in VIEWPORTS:
        first.set_viewport_size({"width": w, "height": hgt})
        tid(first, "match-panel").scroll_into_view_if_needed()
        first.screenshot(path=str(ARTIFACTS / f"match-queued-{lang}-{w}x{hgt}.png"))
        check_fits(first, "match-panel", f"queued {lang} {w}x{hgt}")
    first.set_viewport_size({"width": 1366, "height": 768})
    for page in pages[1:]:
        tid(page, "match-join").click()
    for page in pages:
        tid(page, "match-ready-check").filter(has_text=words["found"]).wait_for()
    listed = sorted(tid(first, "match-players").locator("li").evaluate_all("els => els.map(e => e.dataset.name)"))
    assert listed == sorted(names)
    for w, hgt in VIEWPORTS:
        first.set_viewport_size({"width": w, "height": hgt})
        first.screenshot(path=str(ARTIFACTS / f"match-ready-{lang}-{w}x{hgt}.png"))
        check_fits(first, "match-ready-check", f"ready {lang} {w}x{hgt}")
    first.set_viewport_size({"width": 1366, "height": 768})
    for page in pages:
        assert tid(page, "match-ready").inner_text() == words["ready"]
        tid(page, "match-ready").click()
    rooms = set()
    for page in pages:
        page.wait_for_url(re.compile(r"/room/[A-Za-z0-9_-]+$"), timeout=WAIT_MS)
        rooms.add(page.url.rsplit("/", 1)[1])
    assert len(rooms) == 1
    room = rooms.pop()
    for page in pages:
        tid(page, "table").wait_for()
    seated = server.app.state.manager.tables[room]
    assert seated is not None
    r = pages[0].request.get(f"/api/rooms/{room}").json()["room"]
    assert r["status"] == "playing"
    assert sorted(s["user"] for s in r["seats"]) == sorted(names)
