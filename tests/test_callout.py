"""The words of the table for the ear (static/js/callout.js, issue 25 items 4 and 5), run in node:
the phrase each play is called aloud with (报牌) in Chinese and English, the cards-left call of R32
(10 or fewer after a play), and the names of cards read by screen readers (the wild, R8, named as
such). Every expected phrase is written here by hand from the play, not taken from the code."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

NODE = shutil.which("node")
CALLOUT_JS = Path(__file__).resolve().parents[1] / "src" / "guandan" / "server" / "static" / "js" / "callout.js"

pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed")


def _run(expr: str) -> object:
    assert NODE is not None
    script = f"const c = await import({json.dumps(CALLOUT_JS.as_uri())});\nconsole.log(JSON.stringify({expr}));"
    proc = subprocess.run([NODE, "--input-type=module", "-e", script], check=False, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout)


#: (action as the server lists it [type, rank, cards] at level 2, cards left after it, zh call, en call)
PLAYS = [
    (["single", "7", ["7S"]], 20, "7", "seven"),
    (["single", "T", ["TH"]], 15, "10", "ten"),
    (["single", "SJ", ["SJ"]], 12, "小王", "small joker"),
    (["single", "BJ", ["BJ"]], 11, "大王", "big joker"),
    (["pair", "7", ["7S", "7D"]], 18, "对子 7", "pair of sevens"),
    (["pair", "6", ["6S", "6D"]], 18, "对子 6", "pair of sixes"),
    (["pair", "BJ", ["BJ", "BJ"]], 16, "对子 大王", "pair of big jokers"),
    (["triple", "Q", ["QS", "QD", "QC"]], 14, "三张 Q", "three queens"),
    (["full_house", "5", ["5S", "5D", "5C", "9H", "9S"]], 13, "三带二 5", "full house, fives"),
    (["straight", "9", ["5S", "6D", "7C", "8H", "9S"]], 22, "顺子 9", "straight to nine"),
    (["straight", "5", ["AS", "2D", "3C", "4H", "5S"]], 22, "顺子 5", "straight to five"),
    (["tube", "4", ["2S", "2D", "3C", "2H", "4S", "4D"]], 21, "三连对 4", "tube to four"),
    (["plate", "K", ["QS", "QD", "QC", "KS", "KD", "KC"]], 21, "钢板 K", "plate to king"),
    (["bomb", "8", ["8S", "8D", "8C", "8H"]], 17, "炸弹 四个8", "bomb, four eights"),
    (["bomb", "7", ["7S", "7D", "7C", "7H", "7S", "2H"]], 17, "炸弹 六个7", "bomb, six sevens"),
    (["straight_flush", "6", ["3C", "4C", "5C", "2C", "2H"]], 19, "同花顺 6", "straight flush to six"),
    (["joker_bomb", None, ["SJ", "SJ", "BJ", "BJ"]], 23, "天王炸", "joker bomb"),
    (["pass", None, []], 9, "不要", "pass"),
    # R32: 10 or fewer cards left after a play are called
    (["pair", "A", ["AS", "AH"]], 10, "对子 A，还剩十张", "pair of aces, ten cards left"),
    (["single", "T", ["TH"]], 2, "10，还剩两张", "ten, two cards left"),
    (["single", "3", ["3C"]], 1, "3，还剩一张", "three, one card left"),
    (["bomb", "9", ["9S", "9D", "9C", "9H", "9S"]], 6, "炸弹 五个9，还剩六张", "bomb, five nines, six cards left"),
    # the last cards (none left) and an unknown count call only the play
    (["triple", "J", ["JS", "JD", "JC"]], 0, "三张 J", "three jacks"),
    (["single", "K", ["KS"]], None, "K", "king"),
]


@pytest.mark.parametrize("lang", ["zh", "en"])
def test_each_play_type_is_called_in_words(lang: str) -> None:
    got = _run("[" + ",".join(f"c.callout({json.dumps(a)}, {json.dumps(left)}, {json.dumps(lang)})" for a, left, _, _ in PLAYS) + "]")
    want = [zh if lang == "zh" else en for _, _, zh, en in PLAYS]
    assert got == want


def test_a_pass_never_calls_the_cards_left_and_tribute_is_not_called() -> None:
    """A pass does not change the count, so R32's call belongs to plays only; tribute and return
    are not plays of the trick and are not called."""
    got = _run('[c.callout(["pass", null, []], 3, "zh"), c.callout(["pass", null, []], 3, "en"), '
               'c.callout(["tribute", "A", ["AS"]], 26, "zh"), c.callout(["return", "3", ["3S"]], 27, "en"), c.callout(null, 5, "en")]')
    assert got == ["不要", "pass", "", "", ""]


def test_left_phrase_counts_only_ten_or_fewer() -> None:
    got = _run('[11, 10, 7, 4, 3, 2, 1, 0].flatMap((n) => [c.leftPhrase(n, "zh"), c.leftPhrase(n, "en")])')
    assert got == ["", "", "还剩十张", "ten cards left", "还剩七张", "seven cards left", "还剩四张", "four cards left", "还剩三张", "three cards left",
                   "还剩两张", "two cards left", "还剩一张", "one card left", "", ""]


def test_card_names_for_screen_readers() -> None:
    """The heart of the level is the wild (R8): at level 2 the 2♥ is named as the wild, the 2♠ is not;
    at level 10 the 10♥ is."""
    got = _run('[["TH", "2"], ["2H", "2"], ["2S", "2"], ["AS", "2"], ["QD", "2"], ["JC", "2"], ["SJ", "2"], ["BJ", "2"], ["TH", "T"]]'
               '.flatMap(([card, level]) => [c.cardName(card, level, "zh"), c.cardName(card, level, "en")])')
    assert got == [
        "红桃 10", "ten of hearts",
        "红桃 2，逢人配", "two of hearts, wild",
        "黑桃 2", "two of spades",
        "黑桃 A", "ace of spades",
        "方块 Q", "queen of diamonds",
        "梅花 J", "jack of clubs",
        "小王", "small joker",
        "大王", "big joker",
        "红桃 10，逢人配", "ten of hearts, wild",
    ]
