"""The table from the keyboard and for screen readers, and the plays called aloud, in Chromium
(issue 25, items 4 and 5).

* Live server, heuristic bots: the whole first trick of a deal played from the keyboard only (no
  pointer once the table is up): arrow keys to the hand, H for a hint, C to clear, arrows and Space
  to select a card, P to play it, X to pass; the focused card shows its focus ring and carries its
  name ("红桃 10"); the seats are named with their cards left.
* Scripted websocket (tests/test_browser_table.py's ScriptedTable and frames): a bot's play is
  spoken through the browser's speech synthesis (recorded by a stand-in installed before the page
  loads) in the page's language, written into the live region, and not spoken with the voice switched
  off in the drawer (a switch that persists over a reload); the keys legend; screenshots of the
  table with the keyboard focus, the legend and the settings at the four viewports in both languages
  (``test-artifacts/access-*.png``).
"""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("uvicorn")
pytest.importorskip("fastapi")

import test_browser_table as _table
from browser_helpers import ARTIFACTS, tid, wait_until
from test_browser_table import MOCK_ROOM, VIEWPORTS, ScriptedTable, new_game, state_of, view_of

server = _table.server
open_page = _table.open_page

SEED_KEYS = 6
#: Hand-written names of the cards for the check of the focused card's label (zh), level 2: 2♥ is the wild (R8).
SUIT_ZH = {"S": "黑桃", "H": "红桃", "C": "梅花", "D": "方块"}


def name_zh(card: str, level: str) -> str:
    if card == "SJ":
        return "小王"
    if card == "BJ":
        return "大王"
    rank = "10" if card[0] == "T" else card[0]
    name = f"{SUIT_ZH[card[1]]} {rank}"
    return f"{name}，逢人配" if card == f"{level}H" else name


def focused(page: Any) -> dict[str, Any] | None:
    return page.evaluate(
        """() => { const e = document.activeElement;
             if (!e || !e.matches('[data-testid=hand-card]')) return null;
             return {card: e.dataset.card, index: Number(e.dataset.index), ring: e.matches(':focus-visible'),
                     label: e.getAttribute('aria-label'), tab: e.tabIndex,
                     selected: e.getAttribute('aria-selected'),
                     outline: getComputedStyle(e.querySelector('.card')).outlineStyle}; }"""
    )


def selected(page: Any) -> list[str]:
    return page.eval_on_selector_all("[data-testid=hand-card].selected", "els => els.map(e => e.dataset.card)")


def my_moves(view: dict[str, Any]) -> list[Any]:
    return [a for s, a in view.get("history") or [] if s == view["seat"]]


def first_trick_done(view: dict[str, Any] | None) -> bool:
    """The first trick of the deal is over once a later play opened a new trick: the history holds
    more than the trick on the table (R27: three passes after a play end the trick)."""
    if not view or view.get("phase") != "play":
        return bool(view and view.get("phase") in ("deal_over", "game_over"))
    return len(view.get("history") or []) > len(view.get("trick") or [])


def test_whole_first_trick_from_the_keyboard(open_page: Any, server: Any) -> None:
    page, watcher = open_page("keys-trick")
    new_game(page, watcher, server, "Keys", SEED_KEYS)
    # from here on: the keyboard only
    page.mouse.move(0, 0)
    moves = 0
    level = watcher.view["level"]
    deadline_ms = 60_000
    while not first_trick_done(watcher.view):
        wait_until(page, lambda: first_trick_done(watcher.view) or bool(page.evaluate(
            "() => { const b = document.querySelector('[data-testid=hint-btn]'); return !!b && !b.disabled; }")),
            "seat 0's turn or the end of the first trick", deadline_ms)
        if first_trick_done(watcher.view):
            break
        view = watcher.view
        before = len(my_moves(view))
        leading = not view.get("trick")
        if leading:
            # the arrow key takes the focus into the hand, at a card with a visible ring and its name
            page.keyboard.press("ArrowRight")
            f = focused(page)
            assert f and f["ring"] and f["tab"] == 0 and f["outline"] == "solid", f
            assert f["label"] == name_zh(f["card"], level), f
            # H selects the hint's play, C clears it
            page.keyboard.press("h")
            wait_until(page, lambda: selected(page), "the hint's selection")
            page.keyboard.press("c")
            wait_until(page, lambda: not selected(page), "the selection cleared")
            # Home, two steps right, Space: exactly that card is selected (a single always leads, R18)
            page.keyboard.press("Home")
            page.keyboard.press("ArrowRight")
            page.keyboard.press("ArrowRight")
            f = focused(page)
            assert f and f["index"] == 2, f
            page.keyboard.press("Space")
            assert selected(page) == [f["card"]]
            assert focused(page)["selected"] == "true"
            page.keyboard.press("p")
            watcher.wait(lambda before=before: len(my_moves(watcher.view)) > before, "seat 0's lead")
            assert my_moves(watcher.view)[-1][0] == "single" and my_moves(watcher.view)[-1][2] == [f["card"]]
        else:
            # following: X passes
            page.keyboard.press("x")
            watcher.wait(lambda before=before: len(my_moves(watcher.view)) > before, "seat 0's pass")
            assert my_moves(watcher.view)[-1][0] == "pass"
        moves += 1
        assert moves < 10, "the first trick does not end"
    assert moves >= 2  # seed 6: seat 0 leads, the others answer, seat 0 passes until the trick ends
    assert not watcher.errors, watcher.errors
    # the seats are named for screen readers with their cards left. The bots play on after the first
    # trick, and the page may draw a newer state than the one the watcher read: compare the labels
    # with the watcher's latest view until both have the same state
    def labels_match() -> bool:
        view = watcher.view
        return all(f"剩 {view['card_counts'][s]} 张" in (tid(page, f"seat-panel-{s}").get_attribute("aria-label") or "")
                   for s in (1, 2, 3))

    wait_until(page, labels_match, "seat labels naming the cards left",
               detail=lambda: str([tid(page, f"seat-panel-{s}").get_attribute("aria-label") for s in (1, 2, 3)])
               + f" vs {watcher.view['card_counts']}")
    assert "你" in tid(page, "seat-panel-0").get_attribute("aria-label")


# -- scripted table --------------------------------------------------------------------------------------

#: A stand-in for the browser's speech synthesis that records what is said (Chromium here has no voices).
SPEECH_STUB = """
(() => {
  window.__spoken = [];
  const voices = [{name: 'zh', lang: 'zh-CN'}, {name: 'en', lang: 'en-US'}];
  class U { constructor(text) { this.text = text; this.lang = ''; this.voice = null; this.rate = 1; } }
  window.SpeechSynthesisUtterance = U;
  const synth = {pending: false, speaking: false, getVoices: () => voices, cancel() {},
                 speak(u) { window.__spoken.push({text: u.text, lang: u.lang}); }};
  Object.defineProperty(window, 'speechSynthesis', {value: synth, configurable: true});
})();
"""

HAND = ["3S", "5H", "5D", "7C", "9S", "TH", "JD", "QC", "KS", "AS", "2H", "SJ"]
LEGAL_LEAD = [["single", c[0] if c not in ("SJ", "BJ") else c, [c]] for c in HAND]


def _bot_pair_frames() -> tuple[dict[str, Any], dict[str, Any]]:
    """Seat 3 to act, then seat 3 plays a pair of 7s keeping 2 cards: it is seat 0's turn to answer."""
    v1 = view_of(HAND, [], [], to_act=3)
    v1["card_counts"] = [12, 20, 18, 4]
    pair7 = ["pair", "7", ["7S", "7D"]]
    v2 = view_of(HAND, [[3, pair7]], [["pass", None, []]], to_act=0, top=pair7, top_seat=3, trick=[[3, pair7]])
    v2["card_counts"] = [12, 20, 18, 2]
    return state_of(v1, 5), state_of(v2, 6)


def set_lang(page: Any, lang: str) -> None:
    tid(page, "menu-btn").click()
    tid(page, "drawer-lang").select_option(lang)
    tid(page, "drawer-close").click()
    tid(page, "room-drawer").wait_for(state="detached")


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_a_play_is_called_aloud_in_the_page_language_and_the_voice_switch_persists(open_page: Any, lang: str) -> None:
    page, _ = open_page(f"voice-{lang}", locale="zh-CN" if lang == "zh" else "en-US")
    page.add_init_script(SPEECH_STUB)
    first, second = _bot_pair_frames()
    table = ScriptedTable(page, [first], lambda m: [])
    page.goto(f"/room/{MOCK_ROOM}")
    tid(page, "hand").wait_for()
    table.push(second)
    want = {"zh": ("对子 7，还剩两张", "zh-CN"), "en": ("pair of sevens, two cards left", "en-US")}[lang]
    wait_until(page, lambda: page.evaluate("() => window.__spoken.length") > 0, "the play spoken")
    assert page.evaluate("() => window.__spoken") == [{"text": want[0], "lang": want[1]}]
    assert tid(page, "call-live").inner_text().endswith(want[0])
    # the drawer's voice switch: off, persisted over a reload, and nothing is spoken any more
    tid(page, "menu-btn").click()
    assert tid(page, "av-voice").is_checked() and tid(page, "av-sounds").is_checked() and tid(page, "av-effects").is_checked()
    tid(page, "av-voice").click()
    assert not tid(page, "av-voice").is_checked()
    assert page.evaluate("() => localStorage.getItem('guandan.voice')") == "0"
    page.reload()
    tid(page, "hand").wait_for()
    table.push(second)  # the same pair again is no new play; a pass by seat 0's partner is
    pass2 = state_of(view_of(HAND, [[3, ["pair", "7", ["7S", "7D"]]], [0, ["pass", None, []]], [1, ["pass", None, []]]], [], to_act=2,
                             top=["pair", "7", ["7S", "7D"]], top_seat=3,
                             trick=[[3, ["pair", "7", ["7S", "7D"]]], [0, ["pass", None, []]], [1, ["pass", None, []]]]), 8)
    table.push(pass2)
    wait_until(page, lambda: "不要" in tid(page, "call-live").inner_text() or "pass" in tid(page, "call-live").inner_text(), "the pass in the live region")
    assert page.evaluate("() => window.__spoken") == []
    tid(page, "menu-btn").click()
    assert not tid(page, "av-voice").is_checked()


def test_keys_legend_focus_ring_and_settings_screenshots(open_page: Any) -> None:
    """The keys legend opens with ? and lists P, X, H; the play/pass/hint buttons name their keys;
    screenshots at the four viewports in both languages: the table with the focus ring, the legend
    (laptops), the drawer's switches. Nothing overlaps the action bar and the focused card stays in the viewport."""
    page, _ = open_page("keys-shots")
    view = view_of(HAND, [], LEGAL_LEAD + [["pair", "5", ["5H", "5D"]]], to_act=0)
    ScriptedTable(page, [state_of(view, 3)], lambda m: [])
    page.goto(f"/room/{MOCK_ROOM}")
    tid(page, "hand").wait_for()
    assert tid(page, "play-btn").get_attribute("aria-keyshortcuts") == "P"
    assert tid(page, "pass-btn").get_attribute("aria-keyshortcuts") == "X"
    assert tid(page, "hint-btn").get_attribute("title") == "提示 (H)"
    assert tid(page, "hand").get_attribute("role") == "listbox"
    assert tid(page, "hand").get_attribute("aria-label") == "你的手牌，12 张"
    for lang in ("zh", "en"):
        if lang == "en":
            set_lang(page, "en")
            assert tid(page, "hint-btn").get_attribute("title") == "Hint (H)"
        for w, hgt in VIEWPORTS:
            page.set_viewport_size({"width": w, "height": hgt})
            page.wait_for_timeout(150)
            page.keyboard.press("ArrowRight")
            page.keyboard.press("End")
            page.keyboard.press("ArrowLeft")
            page.keyboard.press("Space")
            f = focused(page)
            assert f and f["ring"] and f["card"] == "2H" and f["selected"] == "true", f
            want = "红桃 2，逢人配" if lang == "zh" else "two of hearts, wild"
            assert f["label"] == want
            box = tid(page, "hand").locator(f'[data-index="{f["index"]}"]').bounding_box()
            assert box and box["y"] >= 0 and box["y"] + box["height"] <= hgt + 0.5 and box["x"] + box["width"] <= w + 0.5, (w, hgt, box)
            page.screenshot(path=str(ARTIFACTS / f"access-focus-{lang}-{w}x{hgt}.png"))
            page.keyboard.press("Space")  # unselect again
            if w >= 1000 and hgt >= 700:
                page.keyboard.press("Shift+Slash")
                legend = tid(page, "keys-legend")
                legend.wait_for()
                text = legend.inner_text()
                for k in ("P", "X", "H", "C", "S", "Home", "Space / Enter"):
                    assert k in text, (k, text)
                assert ("出所选的牌" if lang == "zh" else "play the selection") in text
                page.screenshot(path=str(ARTIFACTS / f"access-legend-{lang}-{w}x{hgt}.png"))
                page.keyboard.press("Escape")
                legend.wait_for(state="detached")
            tid(page, "menu-btn").click()
            tid(page, "av-settings").scroll_into_view_if_needed()
            for t_id in ("av-voice", "av-sounds", "av-effects"):
                b = tid(page, t_id).locator("xpath=..").bounding_box()
                assert b and b["height"] >= 40 and b["y"] + b["height"] <= hgt + 0.5, (t_id, w, hgt, b)
            page.screenshot(path=str(ARTIFACTS / f"access-settings-{lang}-{w}x{hgt}.png"))
            tid(page, "drawer-close").click()
            tid(page, "room-drawer").wait_for(state="detached")


def _bomb_frames() -> tuple[dict[str, Any], dict[str, Any]]:
    """Seat 3 to act, then seat 3 bombs with four 8s (a fresh play: the bomb's flash is an effect)."""
    v1 = view_of(HAND, [], [], to_act=3)
    bomb = ["bomb", "8", ["8S", "8D", "8C", "8H"]]
    v2 = view_of(HAND, [[3, bomb]], [["pass", None, []]], to_act=0, top=bomb, top_seat=3, trick=[[3, bomb]])
    return state_of(v1, 5), state_of(v2, 6)


def _bomb_flashes(page: Any, table: ScriptedTable, second: dict[str, Any]) -> bool:
    """Push the bomb; whether its flash (bomb-fx) shows within 600 ms."""
    table.push(second)
    wait_until(page, lambda: "8" in tid(page, "call-live").inner_text(), "the bomb called")
    try:
        tid(page, "bomb-fx").wait_for(timeout=600)
        return True
    except Exception:  # noqa: BLE001 - Playwright's timeout: no flash
        return False


@pytest.mark.parametrize("case", ["effects", "reduced-motion", "effects-off"])
def test_effects_follow_the_switch_and_reduced_motion(open_page: Any, case: str) -> None:
    """A bomb flashes with effects on; not under prefers-reduced-motion (whatever the switch says),
    nor with the drawer's effects switch off (persisted; the body then carries "fx-off", under
    which the CSS animates nothing)."""
    page, _ = open_page(f"fx-{case}")
    page.add_init_script(SPEECH_STUB)
    if case == "reduced-motion":
        page.emulate_media(reduced_motion="reduce")
    if case == "effects-off":
        page.add_init_script("localStorage.setItem('guandan.effects', '0')")
    first, second = _bomb_frames()
    table = ScriptedTable(page, [first], lambda m: [])
    page.goto(f"/room/{MOCK_ROOM}")
    tid(page, "hand").wait_for()
    flashed = _bomb_flashes(page, table, second)
    assert flashed == (case == "effects"), case
    assert page.evaluate("() => document.body.classList.contains('fx-off')") == (case == "effects-off")
    # the bomb is called whatever the effects: the voice says it
    assert page.evaluate("() => window.__spoken.map(s => s.text)") == ["炸弹 四个8"]
    tid(page, "menu-btn").click()
    assert tid(page, "av-effects").is_checked() == (case != "effects-off")
    if case == "reduced-motion":
        assert tid(page, "av-reduced-motion").is_visible()
