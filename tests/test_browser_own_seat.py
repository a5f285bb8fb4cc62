"""One's own seat and the socket (issue 25, item 9): the own seat showed 离线/offline while its
socket was open, because the room summary it came from could be older than the connection (the
waiting room, a quick game where one leads, after 再来一局, after coming back), until someone else
moved. Now the own seat is offline exactly while the page's own socket is down; the other seats
follow the server's word. Driven by tests/test_browser_table.py's scripted websocket."""

from __future__ import annotations

import copy
from typing import Any

import pytest

pytest.importorskip("uvicorn")
pytest.importorskip("fastapi")

import test_browser_table as _table
from browser_helpers import tid, wait_until
from test_browser_table import MOCK_ROOM, ScriptedTable, state_of, view_of

server = _table.server
open_page = _table.open_page


def _stale_frame() -> dict[str, Any]:
    """seat 0 (alice, this page) to lead, in a frame whose room summary still says alice is not
    connected, and seat 2's person is really away."""
    frame = state_of(view_of(["3S", "4H", "9C"], [], [["single", "3", ["3S"]]]), 1)
    room = copy.deepcopy(frame["room"])
    room["seats"][0]["connected"] = False
    room["seats"][2] = {"seat": 2, "kind": "person", "user": "carol", "bot": None, "difficulty": None, "connected": False}
    frame["room"] = room
    frame["view"]["seat_names"][2] = "carol"
    return frame


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_own_seat_is_offline_exactly_while_its_socket_is_down(open_page: Any, lang: str) -> None:
    page, _ = open_page(f"own-seat-{lang}", locale="zh-CN" if lang == "zh" else "en-US")
    word = "离线" if lang == "zh" else "offline"
    frame = _stale_frame()
    refuse = {"on": False}
    table = ScriptedTable(page, [frame], lambda m: [])
    on_connect = table._on

    def connect(ws: Any) -> None:
        if refuse["on"]:
            ws.close()
            return
        on_connect(ws)

    page.route_web_socket("**/ws/rooms/**", connect)
    # the room as GET /api/rooms/{id} tells it: the same (stale) summary
    page.route(f"**/api/rooms/{MOCK_ROOM}", lambda route: route.fulfill(json={"room": frame["room"]}))
    page.goto(f"/room/{MOCK_ROOM}")
    tid(page, "hand").wait_for()
    # connected: one's own seat is not offline, whatever the older summary says; carol is
    wait_until(page, lambda: tid(page, "conn-status").get_attribute("class") == "conn conn-open", "the socket open")
    assert tid(page, "seat-offline-0").count() == 0
    assert word not in (tid(page, "seat-panel-0").get_attribute("aria-label") or "")
    assert tid(page, "seat-offline-2").inner_text() == word
    # the socket drops (and the server is unreachable for a while): one's own seat shows offline
    refuse["on"] = True
    table.ws.close()
    tid(page, "seat-offline-0").wait_for()
    assert tid(page, "seat-offline-0").inner_text() == word
    assert word in tid(page, "seat-panel-0").get_attribute("aria-label")
    # back: the next connection takes the offline mark away again, before anyone moves
    refuse["on"] = False
    tid(page, "seat-offline-0").wait_for(state="detached", timeout=20_000)
    assert tid(page, "seat-offline-2").inner_text() == word
