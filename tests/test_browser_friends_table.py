"""The game-over panel names the game's other people as links to their profiles (issue 25 item 2:
"add from a finished game's players"), and on a phone held sideways (844×390) play again, the replay
link, the way back to the lobby and Close stay in view and tappable with that line added. Driven by
hand-made frames through the scripted websocket of ``tests/test_browser_table.py`` (no game is played).
"""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("uvicorn")
pytest.importorskip("fastapi")

import test_browser_table as _table
from browser_helpers import ARTIFACTS, tid
from test_browser_table import MOCK_ROOM, ScriptedTable, room_summary, state_of, view_of

server = _table.server
open_page = _table.open_page


def _room_with_people() -> dict[str, Any]:
    room = room_summary()
    room["seats"][1] = {"seat": 1, "kind": "person", "user": "bob", "bot": None, "difficulty": None, "connected": True}
    room["seats"][2] = {"seat": 2, "kind": "person", "user": "王小明", "bot": None, "difficulty": None, "connected": True}
    return room


@pytest.mark.parametrize("locale", ["zh-CN", "en-US"])
def test_game_over_lists_the_people_as_profile_links(open_page: Any, locale: str) -> None:
    page, _ = open_page("friends-game-over", viewport=(844, 390), locale=locale, touch=True)
    room = _room_with_people()
    script = ScriptedTable(page, [state_of(view_of(["3S", "4D"], [], [], to_act=1), 40, room=room)], lambda m: [])
    page.route(f"**/api/rooms/{MOCK_ROOM}", lambda route: route.fulfill(json={"room": room}))
    page.goto(f"/room/{MOCK_ROOM}")
    tid(page, "hand").wait_for()
    line = {"level": "2", "finish_order": [0, 2, 1, 3], "result": "1-2", "result_code": "double_down", "winner_team": 0,
            "upgrade": 3, "levels": ["5", "2"]}
    final = {"winner_team": 0, "game_id": 17, "summary": {"deals": 9, "levels": ["A", "9"],
                                                          "results": [{**line, "deal": d} for d in range(1, 10)]}}
    over_view = view_of([], [], [], to_act=None, deal=9)
    over_view["phase"] = "game_over"
    script.push(state_of(over_view, 90, final=final, room=room))
    script.push({"type": "game_over", **final})
    tid(page, "game-over-panel").wait_for()
    links = tid(page, "game-over-player").evaluate_all("els => els.map(e => [e.textContent, e.getAttribute('href')])")
    assert links == [["bob", "/profile/bob"], ["王小明", "/profile/%E7%8E%8B%E5%B0%8F%E6%98%8E"]]  # not alice: that is me
    assert tid(page, "game-over-players").inner_text().startswith("玩家：" if locale == "zh-CN" else "Players:")
    page.wait_for_timeout(250)
    page.screenshot(path=str(ARTIFACTS / f"friends-game-over-{locale}-844x390.png"))
    for what in ("again-btn", "replay-link", "result-lobby", "result-close", "game-over-player"):
        box = tid(page, what).first.bounding_box()
        assert box and box["y"] >= 0 and box["y"] + box["height"] <= 390.5 and box["x"] + box["width"] <= 844.5, (what, box)
        hit = page.evaluate(
            """([x, y]) => { const e = document.elementFromPoint(x, y); const t = e && e.closest('[data-testid]');
                             return t ? t.dataset.testid : null; }""",
            [box["x"] + box["width"] / 2, box["y"] + box["height"] / 2])
        assert hit == what, (what, hit)
