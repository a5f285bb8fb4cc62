"""Browser tests of what a new player found at the table (the "people" review): sequences drawn in
sequence order with each wild where it stands, English words for one level and for the two jokers,
deal-scoped notices and tribute/return prompts that name the receiver, the result screen on a phone
in landscape, the hint counter after 重选/理牌 and the 取消托管 button on phones.

Every test here drives the page with hand-made frames of docs/table-contract.md through the
scripted websocket of ``tests/test_browser_table.py`` (whose fixtures and helpers it reuses), so
no game is played. Screenshots go to ``test-artifacts/people-*.png``.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

pytest.importorskip("uvicorn")
pytest.importorskip("fastapi")

import test_browser_table as _table
from browser_helpers import ARTIFACTS, tid, wait_until
from test_browser_table import MOCK_ROOM, VIEWPORTS, ScriptedTable, state_of, view_of

#: The fixtures of the table tests: the live server (it serves the pages) and the page factory.
server = _table.server
open_page = _table.open_page

#: At level 2 (R9) the 2s rank above A, but in a sequence every card sits at its natural place and
#: A may be low (R10): A-2-3-4-5 is the lowest straight (its top is 5).
STRAIGHT_A5 = ["straight", "5", ["3S", "4D", "5C", "AS", "2D"]]
#: ♣ straight flush 2-3-4-5-6 at level 2: 2♥ is the wild (R8) standing for the 6♣ (R14).
SF_WILD = ["straight_flush", "6", ["3C", "4C", "5C", "2C", "2H"]]
#: 223344 with the wild 2♥ standing for the second 3 (R12).
TUBE_WILD = ["tube", "4", ["2S", "2D", "3C", "4S", "4D", "2H"]]


def cards_in(page: Any, testid: str) -> list[str]:
    return tid(page, testid).locator("[data-card]").evaluate_all("els => els.map(e => e.dataset.card)")


def set_lang(page: Any, lang: str) -> None:
    tid(page, "menu-btn").click()
    tid(page, "drawer-lang").select_option(lang)
    tid(page, "drawer-close").click()
    tid(page, "room-drawer").wait_for(state="detached")


# -- item 1: sequences in sequence order -------------------------------------------------------------


def test_sequences_drawn_in_sequence_order_with_the_wild_in_its_slot(open_page: Any) -> None:
    """At level 2 a straight A-2-3-4-5 was drawn in level order (3 4 5 A 2) and a ♣ straight flush
    completed by the wild as 3♣ 4♣ 5♣ 2♣ 2♥. In the trick, the prompt and the last trick (上一轮) a
    sequence (R10) now reads from its low end, A low in A-2-3-4-5, each wild in the slot of the card
    it stands for (data-as names that rank); a pair keeps level order (R9)."""
    page, _ = open_page("people-seq")
    trick = [[1, STRAIGHT_A5], [2, SF_WILD], [3, TUBE_WILD]]
    done = [[1, ["pair", "2", ["2S", "2C"]]], [2, ["pass", None, []]], [3, STRAIGHT_A5], [0, ["pass", None, []]], [1, ["pass", None, []]],
            [2, ["pass", None, []]]]
    view = view_of(["AS", "KH", "7D"], done + trick, [["pass", None, []]], trick=trick, top=TUBE_WILD, top_seat=3)
    ScriptedTable(page, [state_of(view, 10)], lambda m: [])
    page.goto(f"/room/{MOCK_ROOM}")
    tid(page, "trick-seat-1").locator("[data-card]").first.wait_for()
    assert cards_in(page, "trick-seat-1") == ["AS", "2D", "3S", "4D", "5C"]
    assert cards_in(page, "trick-seat-2") == ["2C", "3C", "4C", "5C", "2H"]
    assert tid(page, "trick-seat-2").locator('[data-card="2H"]').get_attribute("data-as") == "6"
    assert cards_in(page, "trick-seat-3") == ["2S", "2D", "3C", "2H", "4S", "4D"]
    assert tid(page, "trick-seat-3").locator('[data-card="2H"]').get_attribute("data-as") == "3"
    assert tid(page, "trick-seat-2").locator('[data-card="2H"] .as-badge').inner_text() == "=6"
    assert "三连对 4: 2♠ 2♦ 3♣ 2♥→3 4♠ 4♦" in tid(page, "phase-prompt").inner_text()
    tid(page, "last-trick-btn").click()
    rows = tid(page, "last-trick-row")
    assert rows.nth(0).locator("[data-card]").evaluate_all("els => els.map(e => e.dataset.card)") == ["2S", "2C"]
    assert rows.nth(2).locator("[data-card]").evaluate_all("els => els.map(e => e.dataset.card)") == ["AS", "2D", "3S", "4D", "5C"]
    tid(page, "last-trick-btn").click()
    for lang in ("zh", "en"):
        if lang == "en":
            set_lang(page, "en")
        for w, hgt in VIEWPORTS:
            page.set_viewport_size({"width": w, "height": hgt})
            page.wait_for_timeout(150)
            page.screenshot(path=str(ARTIFACTS / f"people-straight-{lang}-{w}x{hgt}.png"))
            for s in (1, 2, 3):
                b = tid(page, f"trick-seat-{s}").bounding_box()
                assert b and b["x"] >= 0 and b["y"] >= 0 and b["x"] + b["width"] <= w + 0.5 and b["y"] + b["height"] <= hgt + 0.5, (lang, w, hgt, s, b)


# -- item 2: English words -----------------------------------------------------------------------------


def result_frames(upgrade: int, levels: list[str]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A deal_result (team A 1st, then 1-4: +1 under the official upgrade) and the between state."""
    result = {"game": 1, "deal": 1, "level": "2", "finish_order": [0, 1, 3], "result": "1-4", "result_code": "flat_down",
              "winner_team": 0, "upgrade": upgrade, "levels_before": ["2", "2"], "levels": levels, "passed": False, "failed": [],
              "demoted": [], "a_fails": [0, 0],
              "hands_left": [[], [], ["3C", "3D", "4S", "4H", "5C", "6D", "7S", "8H", "9C", "TD", "JS", "QH", "KC", "AD", "SJ", "BJ"], []]}
    between = {"deal": 1, "ready": [False, True, True, True], "deadline_ms": int(time.time() * 1000) + 20000, "result": result}
    return result, between


def test_english_one_level_and_distinct_joker_names(open_page: Any) -> None:
    """"+1 levels" read wrong for an upgrade of one (now "+1 level"; "+2 levels" stays plural), and both
    jokers read "JOKER" on an English card; they now read SJ and BJ (the notation's names, as in the
    tracker), and 小王 / 大王 in Chinese."""
    page, _ = open_page("people-words", locale="en-US")
    view = view_of(["3S", "SJ", "BJ"], [], [], to_act=1)
    script = ScriptedTable(page, [state_of(view, 40)], lambda m: [])
    page.goto(f"/room/{MOCK_ROOM}")
    tid(page, "hand").wait_for()
    labels = lambda: page.locator("[data-testid=hand-card] .joker-label").all_inner_texts()
    assert labels() == ["SJ", "BJ"]
    result, between = result_frames(1, ["3", "2"])
    script.push({"type": "deal_result", **result})
    script.push(state_of(view_of(["3S", "4D"], [], [], to_act=1, deal=2), 41, between=between))
    tid(page, "result-upgrade").wait_for()
    assert tid(page, "result-upgrade").locator(".v").inner_text().strip() == "+1 level"
    assert tid(page, "result-hand-2").locator(".joker-label").all_inner_texts() == ["SJ", "BJ"]
    for lang in ("zh", "en"):
        tid(page, "result-close").click()
        set_lang(page, lang)
        tid(page, "reopen-result-btn").click()
        tid(page, "result-upgrade").wait_for()
        if lang == "zh":
            assert tid(page, "result-upgrade").locator(".v").inner_text().strip() == "升 1 级"
            assert tid(page, "result-hand-2").locator(".joker-label").all_inner_texts() == ["小王", "大王"]
    result2, between2 = result_frames(2, ["4", "2"])
    result2["deal"] = between2["deal"] = 2
    script.push({"type": "deal_result", **result2})
    script.push(state_of(view_of(["3S", "4D"], [], [], to_act=1, deal=3), 42, between=between2))
    wait_until(page, lambda: tid(page, "result-upgrade").locator(".v").inner_text().strip() == "+2 levels", "+2 levels")


# -- item 3: deal-scoped notices, tribute and return prompts that name the receiver --------------------


def named(view: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """``view`` with people's names at the four seats (so the prompts' names can be checked) and ``changes``."""
    return {**view, "seat_names": ["alice", "bob", "carol", "dave"], **changes}


def test_jiefeng_notice_ends_with_its_deal_and_prompts_name_the_receiver(open_page: Any) -> None:
    """The 接风 notice of the last deal stayed up (6 s) over the next deal's tribute: a deal's notices
    now go when the view moves to another deal. The tribute and return prompts said "对方" whoever
    received: they now name the receiver (view.owed_to) and say whether it is one's partner or an
    opponent: after a 1-4 the 末游 pays its own partner (R44); a double tribute's higher card goes to
    头游 (R46); a card goes back to the seat whose tribute was received (R47)."""
    page, _ = open_page("people-tribute", viewport=(844, 390))
    play = named(view_of(["AS", "KH", "7D"], [], [], to_act=1))
    script = ScriptedTable(page, [state_of(play, 10)], lambda m: [])
    page.goto(f"/room/{MOCK_ROOM}")
    tid(page, "hand").wait_for()
    script.push(state_of(named(play, tribute_events=[{"type": "jiefeng", "leader": 2}]), 11))
    notice = tid(page, "notice").filter(has_text="接风")
    notice.wait_for()
    # the deal ends: the result pause shows the next deal (its tribute phase) under the result screen
    result, between = result_frames(1, ["3", "2"])
    tribute = named(view_of(["AS", "KH", "7D", "3C"], [], [], to_act=0, deal=2), phase="tribute", owed_to=[2])
    script.push({"type": "deal_result", **result})
    script.push(state_of({**tribute, "legal_actions": []}, 12, between=between))
    tid(page, "result-panel").wait_for()
    # the panel opens on the deal_result frame already; the ready step shows only once the next state
    # frame (the one that moves the view to deal 2) has been handled
    tid(page, "ready-state").wait_for()
    page.wait_for_timeout(300)
    assert notice.count() == 0, "the last deal's 接风 notice is still up"
    # the pause ends: seat 0 finished last in a 1-4, so it pays its partner carol (seat 2, 头游)
    script.push(state_of({**tribute, "legal_actions": [["tribute", "A", ["AS"]]]}, 13))
    tid(page, "result-panel").wait_for(state="detached")
    prompt = tid(page, "phase-prompt")
    wait_until(page, lambda: "进贡给 carol（对家）" in prompt.inner_text(), "the tribute prompt names the partner")
    assert tid(page, "notice").count() == 0
    page.screenshot(path=str(ARTIFACTS / "people-tribute-zh-844x390.png"))
    # a double tribute: the higher card to 头游 (seat 1), the lower to seat 3
    script.push(state_of(named(tribute, owed_to=[1, 3], legal_actions=[["tribute", "A", ["AS"]]]), 14))
    wait_until(page, lambda: "大的给 bob（对手），小的给 dave（对手）" in prompt.inner_text(), "both receivers of a double tribute")
    # the return goes to the seat whose card was received
    ret = named(tribute, phase="return", owed_to=[3], legal_actions=[["return", "3", ["3C"]]],
                tribute_events=[{"type": "tribute_paid", "tributes": [[3, 0, "BJ"], [1, 2, "AH"]]}])
    script.push(state_of(ret, 15))
    wait_until(page, lambda: "还贡：选择一张牌还给 dave（对手）" in prompt.inner_text(), "the return prompt names dave")
    assert "对方" not in prompt.inner_text()
    # another seat's return, seen from seat 0: carol returns to bob
    script.push(state_of(named(ret, to_act=2, owed_to=[1], legal_actions=[]), 16))
    wait_until(page, lambda: "等待 carol 还贡给 bob（对手）" in prompt.inner_text(), "the waiting prompt names both")
    # a server without owed_to: the return prompt still finds the payer in the tribute events
    script.push(state_of({k: v for k, v in ret.items() if k != "owed_to"}, 17))
    wait_until(page, lambda: "还给 dave（对手）" in prompt.inner_text(), "dave from the tribute events")
    set_lang(page, "en")
    script.push(state_of({**tribute, "legal_actions": [["tribute", "A", ["AS"]]]}, 18))
    wait_until(page, lambda: "Tribute to carol (your partner): choose your highest card that is not a wild." in prompt.inner_text(), "English prompt")
    shoot_all(page, "people-tribute", ["phase-prompt", "hand", "play-btn"])


def shoot_all(page: Any, name: str, inside: list[str]) -> None:
    """Screenshots ``{name}-{lang}-{w}x{h}.png`` at the four viewports in English, then in Chinese;
    the elements ``inside`` (test ids) lie inside each viewport."""
    for lang in ("en", "zh"):
        if lang == "zh":
            page.set_viewport_size({"width": 1366, "height": 768})
            set_lang(page, "zh")
        for w, hgt in VIEWPORTS:
            page.set_viewport_size({"width": w, "height": hgt})
            page.wait_for_timeout(200)
            page.screenshot(path=str(ARTIFACTS / f"{name}-{lang}-{w}x{hgt}.png"))
            for what in inside:
                b = tid(page, what).bounding_box()
                assert b and b["x"] >= 0 and b["y"] >= 0 and b["x"] + b["width"] <= w + 0.5 and b["y"] + b["height"] <= hgt + 0.5, (name, lang, w, hgt, what, b)


# -- item 4: the result screen on a phone held sideways ---------------------------------------------


#: Two full-ish hands left after a 1-2 (R34: the deal ends when the winners are out 1st and 2nd).
BIG_LEFT = [["3S", "4S", "5S", "6S", "7S", "8S", "9S", "TS", "JS", "QS", "KS", "AS", "3H", "4H", "5H", "SJ"],
            ["3C", "4C", "5C", "6C", "7C", "8C", "9C", "TC", "JC", "QC", "KC", "AC", "3D", "4D", "5D", "BJ", "6D", "7D"]]


def _covered_by(page: Any, box: dict[str, float]) -> str | None:
    """The data-testid of the element at the centre of ``box`` (None when outside every test id)."""
    return page.evaluate(
        """([x, y]) => { const e = document.elementFromPoint(x, y); const t = e && e.closest('[data-testid]');
                         return t ? t.dataset.testid : null; }""",
        [box["x"] + box["width"] / 2, box["y"] + box["height"] / 2])


@pytest.mark.parametrize("locale", ["zh-CN", "en-US"])
def test_result_essentials_stay_in_view_on_a_phone_held_sideways(open_page: Any, locale: str) -> None:
    """At 844×390 the upgrade, the new levels and the hands left sat in one scrolling panel below the
    fold while the ready clock ran, with no sign that more was there. Now the winner line, the
    upgrade, the new levels, the ready clock and the Next button lie inside the viewport, uncovered
    (a tap at their centre reaches them), without scrolling; the hands left scroll in their own box,
    which shows a "more ↓" cue until its end is reached. Screenshots at the four viewports."""
    lang = locale[:2]
    page, _ = open_page(f"people-result-{lang}", viewport=(844, 390), locale=locale, touch=True)
    result, between = result_frames(3, ["5", "2"])
    result.update(finish_order=[0, 2, 1, 3], result="1-2", result_code="double_down", hands_left=[[], BIG_LEFT[0], [], BIG_LEFT[1]])
    between["result"] = result
    script = ScriptedTable(page, [state_of(view_of(["3S", "4D"], [], [], to_act=1), 40)], lambda m: [])
    page.goto(f"/room/{MOCK_ROOM}")
    tid(page, "hand").wait_for()
    script.push({"type": "deal_result", **result})
    script.push(state_of(view_of(["3S", "4D", "5H"], [], [], to_act=1, deal=2), 41, between=between))
    tid(page, "result-panel").wait_for()
    for w, hgt in VIEWPORTS:
        page.set_viewport_size({"width": w, "height": hgt})
        page.wait_for_timeout(250)
        page.screenshot(path=str(ARTIFACTS / f"people-result-{lang}-{w}x{hgt}.png"))
        for what in ("result-winner", "result-upgrade", "result-levels", "ready-clock", "ready-btn", "result-close"):
            box = tid(page, what).bounding_box()
            assert box is not None, what
            assert box["x"] >= 0 and box["y"] >= 0 and box["x"] + box["width"] <= w + 0.5 and box["y"] + box["height"] <= hgt + 0.5, (w, hgt, what, box)
            assert _covered_by(page, box) == what, (w, hgt, what, _covered_by(page, box))
        assert page.evaluate("() => document.scrollingElement.scrollTop") == 0
        details = tid(page, "result-details")
        overflow = details.evaluate("e => e.scrollHeight - e.clientHeight")
        if overflow > 4:
            assert tid(page, "result-more").is_visible(), (w, hgt, "no cue while the hands scroll")
            details.evaluate("e => { e.scrollTop = e.scrollHeight; }")
            wait_until(page, lambda: not tid(page, "result-more").is_visible(), "the cue gone at the end")
            details.evaluate("e => { e.scrollTop = 0; }")
            wait_until(page, tid(page, "result-more").is_visible, "the cue back at the top")
        else:
            assert not tid(page, "result-more").is_visible(), (w, hgt, "a cue with nothing below")
    page.set_viewport_size({"width": 844, "height": 390})
    page.wait_for_timeout(250)
    assert tid(page, "result-details").evaluate("e => e.scrollHeight - e.clientHeight") > 4, "the hands left do not fit at 844×390"
    tid(page, "result-more").click()
    wait_until(page, lambda: tid(page, "result-details").evaluate("e => e.scrollTop") > 0, "a tap on the cue scrolls on")


# -- item 5: the hint counter after 重选 / 理牌, 取消托管 on one line ------------------------------------


BOMB5 = ["bomb", "5", ["5C", "5D", "5H", "5S"]]
BOMB9 = ["bomb", "9", ["9C", "9D", "9H", "9S"]]
SF = ["straight_flush", "7", ["3S", "4S", "5S", "6S", "7S"]]


def test_hint_counter_resets_after_clear_and_sort(open_page: Any) -> None:
    """On a phone the hint counter (2/3) stayed on the hint button after 重选 and after 理牌 although
    nothing was selected any more. Both now reset it: the counter goes, and the next 提示 starts again
    from the first play of the list (without asking the server again)."""
    page, _ = open_page("people-hints", viewport=(844, 390), touch=True)
    hand = ["3S", "4S", "5S", "6S", "7S", "5C", "5D", "5H", "9C", "9D", "9H", "9S", "KD"]
    top = ["single", "BJ", ["BJ"]]
    view = view_of(hand, [[3, top]], [["pass", None, []], BOMB5, BOMB9, SF], top=top, top_seat=3, trick=[[3, top]])
    script = ScriptedTable(page, [state_of(view, 5)], lambda m: [{"type": "hints", "actions": [BOMB5, BOMB9, SF]}] if m["type"] == "hints" else [])
    page.goto(f"/room/{MOCK_ROOM}")
    tid(page, "hand").wait_for()
    selected = lambda: sorted(page.eval_on_selector_all("[data-testid=hand-card].selected", "els => els.map(e => e.dataset.card)"))
    counter = tid(page, "hint-index")
    for reset in ("clear-btn", "sort-btn"):
        tid(page, "hint-btn").click()
        wait_until(page, lambda: selected() == sorted(BOMB5[2]), "the first hint")
        tid(page, "hint-btn").click()
        wait_until(page, lambda: counter.count() == 1 and counter.inner_text() == "2/3", "the counter at 2/3")
        assert selected() == sorted(BOMB9[2])
        tid(page, reset).click()
        wait_until(page, lambda: counter.count() == 0, f"the counter gone after {reset}")
        assert selected() == []
        tid(page, "hint-btn").click()
        wait_until(page, lambda: selected() == sorted(BOMB5[2]) and counter.inner_text() == "1/3", f"the list from the start after {reset}")
        tid(page, "clear-btn").click()
    assert [m["type"] for m in script.sent].count("hints") == 1, "the list is asked for once per position"
    tid(page, "hint-btn").click()
    tid(page, "hint-btn").click()
    tid(page, "sort-btn").click()
    set_lang(page, "en")
    shoot_all(page, "people-hints", ["hint-btn", "clear-btn", "sort-btn"])
    assert counter.count() == 0


def _lines(page: Any, testid: str) -> int:
    """How many lines the text of the button ``testid`` takes."""
    return page.evaluate(
        """(id) => { const b = document.querySelector(`[data-testid="${id}"]`); const r = document.createRange();
                     r.selectNodeContents(b); const tops = new Set([...r.getClientRects()].map(x => Math.round(x.top)));
                     return tops.size; }""", testid)


@pytest.mark.parametrize("locale", ["zh-CN", "en-US"])
def test_cancel_auto_fits_one_line_on_phones(open_page: Any, locale: str) -> None:
    """取消托管 wrapped onto two lines in the action bar of a phone. At 390×844 and 844×390 the 托管
    button reads 取消托管 / Cancel auto on one line, inside the viewport, as does the banner's button."""
    lang = locale[:2]
    page, _ = open_page(f"people-auto-{lang}", viewport=(390, 844), locale=locale, touch=True)
    hand = ["3S", "4S", "5S", "6S", "7S", "5C", "5D", "5H", "9C", "9D", "9H", "9S", "KD", "QH", "JC", "TD", "8S", "8H", "7C", "6D"]
    view = view_of(hand, [], [], to_act=1)
    ScriptedTable(page, [state_of(view, 3, auto=[True, False, False, False], auto_reason=["player", None, None, None])], lambda m: [])
    page.goto(f"/room/{MOCK_ROOM}")
    tid(page, "auto-banner").wait_for()
    word = "取消托管" if lang == "zh" else "Cancel auto"
    for w, hgt in [(390, 844), (844, 390)]:
        page.set_viewport_size({"width": w, "height": hgt})
        page.wait_for_timeout(250)
        page.screenshot(path=str(ARTIFACTS / f"people-auto-{lang}-{w}x{hgt}.png"))
        for what in ("auto-btn", "auto-cancel-btn"):
            assert tid(page, what).inner_text().strip() == word
            assert _lines(page, what) == 1, (w, hgt, what)
            b = tid(page, what).bounding_box()
            assert b and b["x"] >= 0 and b["x"] + b["width"] <= w + 0.5 and b["y"] + b["height"] <= hgt + 0.5, (w, hgt, what, b)
        assert tid(page, "auto-btn").evaluate("e => e.scrollWidth <= e.clientWidth"), (w, hgt, "the label overflows its button")


def test_game_over_summary_fits_a_phone_held_sideways(open_page: Any) -> None:
    """The game-over panel shares the result screen's layout: at 844×390 with fourteen deals in the
    summary, play again, the replay link and the way back to the lobby lie inside the viewport and a
    tap at their centre reaches them."""
    page, _ = open_page("people-game-over", viewport=(844, 390), touch=True)
    script = ScriptedTable(page, [state_of(view_of(["3S", "4D"], [], [], to_act=1), 40)], lambda m: [])
    page.goto(f"/room/{MOCK_ROOM}")
    tid(page, "hand").wait_for()
    line = {"level": "2", "finish_order": [0, 2, 1, 3], "result": "1-2", "result_code": "double_down", "winner_team": 0, "upgrade": 3,
            "levels": ["5", "2"]}
    summary = {"deals": 14, "levels": ["A", "9"], "results": [{**line, "deal": d} for d in range(1, 15)]}
    final = {"winner_team": 0, "game_id": 17, "summary": summary}
    over_view = view_of([], [], [], to_act=None, deal=14)
    over_view["phase"] = "game_over"
    script.push(state_of(over_view, 90, final=final))
    script.push({"type": "game_over", **final})
    tid(page, "game-over-panel").wait_for()
    for lang in ("zh", "en"):
        if lang == "en":
            tid(page, "result-close").click()
            set_lang(page, "en")
            tid(page, "show-result-btn").click()
            tid(page, "game-over-panel").wait_for()
        page.wait_for_timeout(250)
        page.screenshot(path=str(ARTIFACTS / f"people-game-over-{lang}-844x390.png"))
        for what in ("again-btn", "replay-link", "result-lobby", "result-close"):
            box = tid(page, what).bounding_box()
            assert box and box["y"] >= 0 and box["y"] + box["height"] <= 390.5 and box["x"] + box["width"] <= 844.5, (lang, what, box)
            assert _covered_by(page, box) == what, (lang, what, _covered_by(page, box))
