"""``guandan play``: rendering/parsing helpers, the scripted session, and the real command in a
pseudo-terminal (pexpect).

Expected values come from docs/rules.md: level order R9 (level rank above A, then SJ, BJ), wilds R8
(the two hearts of the level rank), readings R17, leading R27, 接风 R30, card counts R32,
upgrades R35, tribute R44-R49, Anhui points and titles section 2.1 / AMB-22.
"""

from __future__ import annotations

import io
import re
import sys
from pathlib import Path

import pytest
from rich.console import Console

from guandan.core.cards import parse_card, parse_cards, parse_rank
from guandan.core.errors import NotationError
from guandan.core.match import Game
from guandan.core.plays import PASS, classify
from guandan.core.rules import RuleSet
from guandan.core.views import seat_view
from guandan.terminal.commands import parse_command
from guandan.terminal.render import (
    card_label,
    counts_cell,
    group_hand,
    play_plain,
    render_hand,
    render_view,
    return_rule_text,
    seat_name,
    sort_hand,
    typed,
)
from guandan.terminal.session import PlaySession

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
RULE_ID = re.compile(r"\b(R\d+|AMB-\d+|EC-\d+)\b")


def cards(text: str) -> list[int]:
    return list(parse_cards(text))


# --- pure helpers --------------------------------------------------------------------------------
def test_sort_hand_level_order_with_wilds_and_jokers() -> None:
    # level 7 (rank index 5): R9 level order 2 < ... < A < 7 < SJ < BJ; the wild 7H (R8) sits
    # with the level cards, after the natural 7s
    level = parse_rank("7")
    hand = cards("BJ 7H 2S SJ AS 7S 8D 7D")
    assert [card_label(f) for f in sort_hand(hand, level)] == ["2♠", "8♦", "A♠", "7♠", "7♦", "7♥", "SJ", "BJ"]
    groups = group_hand(hand, level)
    assert [g[0] for g in groups] == [parse_rank(r) for r in ("2", "8", "A", "7", "SJ", "BJ")]
    assert groups[3][1] == (parse_card("7S"), parse_card("7D"), parse_card("7H"))


def test_render_hand_marks_wild_shows_notation_and_wraps() -> None:
    level = parse_rank("5")
    hand = cards("2S 2D 3H 4S 5C 5H 6H 6D 8S 9H 9D TH TD JS QS QH KD AS AS AH SJ BJ BJ 7C 7D 8D KS")
    con = Console(file=io.StringIO(), width=40, color_system=None)
    con.print(render_hand(hand, level, width=40))
    out = con.file.getvalue()  # type: ignore[attr-defined]
    lines = out.splitlines()
    assert all(len(line) <= 40 for line in lines)
    assert len(lines) % 3 == 0 and len(lines) >= 6  # wrapped into several three-line rows
    assert "5♥*" in out and "5H" in out  # the wild is marked, its typed notation shown
    assert "10♥" in out and "TH" in out
    assert "5 level" in out
    # the typed-notation rows, read in order: level cards then jokers at the top end (R9)
    typed_order = [tok for line in lines[2::3] for tok in line.split()]
    assert typed_order[-5:] == ["5C", "5H", "SJ", "BJ", "BJ"]
    assert typed_order[:3] == ["2S", "2D", "3H"]


def test_parse_command_cards_and_words() -> None:
    assert parse_command("TH th 9s").faces == tuple(sorted(cards("TH TH 9S")))
    assert parse_command("10h, 10D").faces == tuple(sorted(cards("TH TD")))
    assert parse_command("p").kind == "pass"
    assert parse_command(" PASS ").kind == "pass"
    assert parse_command("h").kind == "hint"
    assert parse_command("q").kind == "quit"
    assert parse_command("?").kind == "help"
    assert parse_command("   ").kind == "empty"
    with pytest.raises(NotationError) as e:
        parse_command("TH ZZ")
    assert e.value.token == "ZZ"


def test_play_text_helpers() -> None:
    level = parse_rank("2")
    pair = classify(cards("TH TD"), level)[0]
    assert play_plain(pair, level) == "pair 10: 10♥ 10♦"
    assert typed(pair) == "TH TD"
    assert typed(PASS) == "p" and play_plain(PASS, level) == "pass"
    # 9 8 6 5 + the wild 2H: the wild stands for the missing 7 (R12)
    (straight,) = classify(cards("5S 6D 8C 9D 2H"), level)
    assert straight[0] == "straight" and straight[1] == parse_rank("9")
    assert play_plain(straight, level) == "straight 9: 5♠ 6♦ 2♥→7♠ 8♣ 9♦"  # the wild where the 7 sits (R10)
    assert card_label(parse_card("SJ")) == "SJ" and card_label(parse_card("AS")) == "A♠"
    assert counts_cell(None) == "?" and counts_cell(7) == "7"
    assert seat_name(1) == "East (seat 1)" and seat_name(2, False) == "North"
    assert "10 or lower" in return_rule_text("le10", False)
    assert "any" in return_rule_text("any", True)
    assert "any" in return_rule_text("le10_partner_only", False)
    assert "10 or lower" in return_rule_text("le10_partner_only", True)


def test_render_view_hides_counts_over_ten_with_le10() -> None:
    game = Game(RuleSet.official().replace(card_counts="le10"), seed=4)
    con = Console(file=io.StringIO(), width=100, color_system=None)
    con.print(render_view(game, seat_view(game, 0), 100))
    out = con.file.getvalue()  # type: ignore[attr-defined]
    names = ("You (seat 0)", "East (seat 1)")
    rows = {name: line for line in out.splitlines() for name in names if name in line}
    assert rows["You (seat 0)"].split()[3] == "27"  # own count always shown
    assert "?" in rows["East (seat 1)"].split()  # 27 > 10 cards: hidden (R32, AMB-24)
    assert "wilds 2♥" in out


# --- scripted sessions ---------------------------------------------------------------------------
class PassBot:
    """Passes whenever allowed, else takes the first legal action (deterministic)."""

    name = "passbot"

    def act(self, view):  # type: ignore[no-untyped-def]
        return PASS if PASS in view.legal_actions else view.legal_actions[0]


def run_session(game: Game, answers, hint=None):  # type: ignore[no-untyped-def]
    """Run a session with scripted answers (a list of strings or a callable(prompt) -> str)."""
    buf = io.StringIO()
    con = Console(file=buf, width=200, color_system=None, highlight=False)
    prompts: list[str] = []
    it = iter(answers) if isinstance(answers, list) else None

    def ask(prompt: str) -> str:
        prompts.append(prompt)
        con.print(prompt, end="")
        ans = next(it) if it is not None else answers(prompt)  # StopIteration -> EOF below
        con.print(ans)
        return ans

    def ask_eof(prompt: str) -> str:
        try:
            return ask(prompt)
        except StopIteration:
            raise EOFError from None

    bots = [PassBot()] * 4
    sess = PlaySession(game, bots, hint or PassBot(), con, ask=ask_eof)
    rc = sess.run()
    return rc, buf.getvalue(), prompts


def lead_game() -> Game:
    # seat 0 leads a one-deal position; level 2, wild 2H
    hands = [cards("3S 3D 4S 4D 2H 2H 9C"), cards("AS AD KC"), cards("QS QD JC"), cards("TS TD 8C")]
    return Game(hands=hands, first_leader=0)


def test_illegal_inputs_get_one_line_reasons_and_reprompt() -> None:
    rc, out, prompts = run_session(lead_game(), ["ZZ", "p", "9C 9C", "KC", "9C 3S", "q", "n", "q", "y"])
    assert rc == 0
    assert "✗ bad card 'ZZ': write rank then suit, e.g. TH, AS, 7D; jokers SJ and BJ" in out
    assert "✗ the leader must play, not pass" in out  # R27: no pass when leading
    assert not RULE_ID.search(out)  # plain words: no rule ids quoted at players (issue 11)
    assert "✗ you hold 9C only once, not 2 times" in out
    assert "✗ KC is not in your hand" in out
    assert "✗ 3S 9C is not a legal play" in out  # R19: no such combination
    assert "Traceback" not in out
    play_prompts = [p for p in prompts if p.startswith("Your play")]
    assert len(play_prompts) == 7  # re-prompted after each error, and after 'q' + 'n'
    assert out.rstrip().endswith("Bye — the game was left unfinished.")


def test_several_readings_are_listed_and_chosen() -> None:
    # 3 3 4 4 + two wilds (level 2): tube 2-3-4, tube 3-4-5, plate 333-444 (R10, R12, R17)
    game = lead_game()
    rc, out, _ = run_session(game, ["3S 3D 4S 4D 2H 2H", "x", "", "3s 3d 4s 4d 2h 2h", "3"])
    listing = [line.strip() for line in out.splitlines() if re.match(r"\s+\d\) ", line)]
    names = sorted(line.split("  ")[0][3:] for line in listing[:3])
    assert names == ["plate 4", "tube 4", "tube 5"]
    assert "✗ type a number from 1 to 3, or just Enter to cancel" in out
    chosen = listing[2].split("  ")[0][3:]
    seat, act = game.deal.history[0]
    assert seat == 0 and f"{act[0]} {'5' if act[1] == 3 else '4'}" == chosen
    assert rc == 0


def test_hint_shows_the_hint_agents_choice() -> None:
    class FixedHint:
        name = "fixed"

        def act(self, view):  # type: ignore[no-untyped-def]
            return classify(cards("9C"), view.level)[0]

    rc, out, _ = run_session(lead_game(), ["h"], hint=FixedHint())
    assert "hint (heuristic bot): single 9: 9♣  → type: 9C" in out
    assert rc == 0  # EOF after the hint quits cleanly


def _two_deals(deal2_hands):  # type: ignore[no-untyped-def]
    """Deal 1: seat 1 leads its only card, everyone passes, 接风 gives West the lead (R30), West
    goes out: East & West win 1-2 (R33). Deal 2 uses ``deal2_hands``."""
    d1 = [cards("3S 4S"), cards("AS"), cards("5C 6C"), cards("KD")]

    def source(game_no: int, deal_no: int):  # type: ignore[no-untyped-def]
        return d1 if deal_no == 1 else deal2_hands

    return source


def test_double_tribute_prompt_result_screen_and_reveals() -> None:
    # after a 1-2 for East & West (level 2 +3 = 5, R35) You and North pay a double tribute (R44)
    deal2 = [cards("5H AS AD KS 3C"), cards("SJ 2S"), cards("BJ 4C 6D"), cards("7C 8C")]
    game = Game(hands=_two_deals(deal2), first_leader=1)
    rc, out, prompts = run_session(game, ["p", "", "5H", "KS", "AS AD", "AS"])
    assert rc == 0
    assert "Partner leads: 接风 — East went out" in out
    assert "1st East, 2nd West — you & North double down (双下)" in out
    assert "East & West win 1-2" in out
    assert "you & North 2 → 2 · East & West 2 → 5" in out
    assert prompts[0].startswith("Your play") and prompts[1].startswith("Press Enter")
    # R45: highest card not counting the wild 5H: the aces
    assert "Allowed: A♠ (AS), A♦ (AD)" in out
    assert out.count("✗ the tribute must be your highest card, not counting the wild") == 2
    assert "✗ give exactly one card as your tribute (you typed 2)" in out
    # R46: BJ > A, so North's BJ goes to 头游 East and your A to West; returns go back (R47)
    assert "Tribute (进贡): North (seat 2) → East (seat 1): BJ" in out
    assert "Tribute (进贡): You (seat 0) → West (seat 3): A♠" in out
    assert "Return (还贡): East (seat 1) → North (seat 2): 2♠" in out  # only card ≤ 10 (R47)
    assert "North (seat 2) leads the first trick." in out


def test_return_prompt_lists_allowed_cards() -> None:
    # deal 1 won 1-2 by You and North (You lead the only card, 接风 to North); level 2 + 3 = 5
    d1 = [cards("AS"), cards("3S 4S"), cards("KD"), cards("5C 6C")]
    deal2 = [cards("5D 9S TC JH QS 5H"), cards("BJ 3C"), cards("6S 7S"), cards("SJ 4D")]
    game = Game(hands=lambda g, d: d1 if d == 1 else deal2, first_leader=0)
    rc, out, _ = run_session(game, ["AS", "", "JH", "5D", "9S"])
    assert rc == 0
    # East pays BJ (to You, the higher card, R46), West pays SJ to North
    assert "Tribute (进贡): East (seat 1) → You (seat 0): BJ" in out
    assert "Your turn: return a card (还贡) to East (seat 1) — you received BJ from East." in out
    # R47 (le10): rank 10 or lower and not a level card: 5D (level) and 5H (wild) excluded
    assert "Allowed: 9S TC" in out
    assert out.count("✗ the return must rank 10 or lower and not be a level card") == 2
    assert "Return (还贡): You (seat 0) → East (seat 1): 9♠" in out


def test_anti_tribute_announced_with_the_jokers() -> None:
    d1 = [cards("AS"), cards("3S 4S"), cards("KD"), cards("5C 6C")]
    deal2 = [cards("3H 4H"), cards("BJ 3C"), cards("6S 7S"), cards("BJ 4D")]
    game = Game(hands=lambda g, d: d1 if d == 1 else deal2, first_leader=0)
    rc, out, _ = run_session(game, ["AS", ""])
    assert (
        "Anti-tribute (抗贡): East (seat 1) shows BJ; West (seat 3) shows BJ — no tribute; You (seat 0) lead"
        in out
    )
    assert rc == 0


def test_anhui_points_and_titles_on_the_result_screen() -> None:
    deal2 = [cards("3H 4H"), cards("SJ 2S"), cards("BJ 4C 6D"), cards("7C 8C")]
    game = Game(RuleSet.preset("anhui"), hands=_two_deals(deal2), first_leader=1)
    rc, out, _ = run_session(game, ["p", ""])
    # section 2.1: 1-2 gives the winners +4 each and the losers -4; below 0 is 平民 (AMB-22)
    assert "You: -4 → -4 (平民)" in out
    assert "East: +4 → 4 (秀才)" in out
    assert "East & West 2 → 8" in out  # anhui upgrade 6/4/2: 1-2 = +6
    assert rc == 0


def test_autoplay_full_game_in_process_reaches_final_screen() -> None:
    from guandan.agents.base import RandomAgent

    buf = io.StringIO()
    con = Console(file=buf, width=100, color_system=None)
    game = Game(seed=5)
    bots = [RandomAgent(i) for i in range(4)]
    never = lambda p: pytest.fail("autoplay asked")
    rc = PlaySession(game, bots, bots[0], con, ask=never, autoplay=True).run()
    out = buf.getvalue()
    assert rc == 0 and game.over
    assert f"Game over: {('you & North', 'East & West')[game.winner]} passed A and win" in out
    assert len(re.findall(r"Game 1 · Deal \d+ result", out)) == len(game.settlements)  # one per deal


def test_a_bot_choosing_an_illegal_action_stops_with_one_line() -> None:
    class BadBot:
        name = "bad"

        def act(self, view):  # type: ignore[no-untyped-def]
            return PASS  # illegal when leading (R27)

    hands = [cards("3S"), cards("AS AD"), cards("QS"), cards("TS")]
    game = Game(hands=hands, first_leader=1)
    buf = io.StringIO()
    con = Console(file=buf, width=200, color_system=None)
    rc = PlaySession(game, [BadBot()] * 4, BadBot(), con, ask=lambda p: "").run()
    assert rc == 1
    assert (
        buf.getvalue()
        .strip()
        .endswith(
            "✗ error: the bad bot at seat 1 chose an illegal action: the leader must play, not pass"
        )
    )


# --- the real command in a pseudo-terminal --------------------------------------------------------
GUANDAN = Path(sys.executable).parent / "guandan"
pytestmark_pty = pytest.mark.skipif(not GUANDAN.exists(), reason="guandan script not installed")


def spawn(args: str):  # type: ignore[no-untyped-def]
    pexpect = pytest.importorskip("pexpect")
    env = {"TERM": "dumb", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "PATH": "/usr/bin:/bin", "COLUMNS": "100"}
    return pexpect.spawn(
        f"{GUANDAN} play {args}", encoding="utf-8", dimensions=(40, 100), env=env, timeout=20
    )


PLAY_PROMPT = "Your play (cards, p = pass, h = hint, ? = help, q = quit): "
PROMPTS = [
    PLAY_PROMPT,
    "Tribute card (h = hint, ? = help, q = quit): ",
    "Card to return (h = hint, ? = help, q = quit): ",
    "Press Enter for the next deal (q = quit) ",
    "Reading [1-",  # the typed cards have several readings (R17)
]


def answer_with_hint(child, prompt: str) -> None:  # type: ignore[no-untyped-def]
    """At ``prompt``: ask for a hint, wait for the new prompt, type the suggested cards."""
    child.sendline("h")
    child.expect(r"→ type: ([0-9A-Zp ]+)\r?\n")
    suggestion = child.match.group(1).strip()
    child.expect_exact(prompt)  # asked again after the hint
    child.sendline(suggestion)


@pytestmark_pty
def test_pty_illegal_input_hint_and_quit() -> None:
    import pexpect

    child = spawn("--seed 1 --bot random --delay 0")
    child.expect_exact(PLAY_PROMPT)
    child.sendline("ZZ")
    child.expect_exact("✗ bad card 'ZZ': write rank then suit")
    child.expect_exact(PLAY_PROMPT)
    child.sendline("SJ SJ SJ")
    child.expect(r"✗ (you hold SJ only|SJ is not in your hand)")
    child.expect_exact(PLAY_PROMPT)
    answer_with_hint(child, PLAY_PROMPT)
    if child.expect([r"You \(seat 0\): ", r"Reading \[1-"]) == 1:
        child.sendline("1")
        child.expect(r"You \(seat 0\): ")
    child.expect_exact(PLAY_PROMPT)
    child.sendline("q")
    child.expect_exact("Quit the game? [y/N]")
    child.sendline("y")
    child.expect_exact("Bye")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


@pytestmark_pty
def test_pty_whole_deal_by_hints_then_ctrl_d() -> None:
    import pexpect

    child = spawn("--seed 2 --bot random --delay 0")
    for _ in range(300):
        i = child.expect_exact(PROMPTS)
        if i == 3:
            break
        if i == 4:
            child.sendline("1")
            continue
        answer_with_hint(child, PROMPTS[i])
    else:
        pytest.fail("the first deal did not end")
    child.sendeof()  # Ctrl-D quits cleanly
    child.expect_exact("Bye")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert "Traceback" not in (child.before or "")


@pytestmark_pty
def test_pty_autoplay_full_game_reaches_final_screen() -> None:
    import pexpect

    child = spawn("--seed 1 --bot random --autoplay --delay 0")
    child.expect_exact("Final result", timeout=60)
    child.expect(r"Game over: (you & North|East & West) passed A and win")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert "Traceback" not in ANSI.sub("", child.before or "")


def test_bad_options_are_one_line_errors() -> None:
    from typer.testing import CliRunner

    from guandan.cli import app

    runner = CliRunner()
    r = runner.invoke(app, ["play", "--bot", "genius"])
    assert r.exit_code == 2 and "unknown bot 'genius'" in r.output
    r = runner.invoke(app, ["play", "--lang", "xx"])
    assert r.exit_code == 2 and "--lang 'xx' is not available" in r.output
    r = runner.invoke(app, ["play", "--rule", "nonsense=1"])
    assert r.exit_code == 2


# --- rank-only input and plain words (issue 11) ---------------------------------------------------
def test_parse_command_reads_ranks_without_suits() -> None:
    assert parse_command("QQQ") == parse_command("q q q") == parse_command("Q Q Q")
    cmd = parse_command("QQQ")
    assert cmd.kind == "ranks" and cmd.ranks == (parse_rank("Q"),) * 3 and cmd.faces == ()
    assert parse_command("10 10").ranks == (parse_rank("10"),) * 2
    mixed = parse_command("55 3h")
    assert mixed.kind == "ranks" and mixed.ranks == (parse_rank("5"),) * 2 and mixed.faces == (parse_card("3H"),)
    assert parse_command("TH TD").kind == "cards"  # full cards stay cards
    with pytest.raises(NotationError):
        parse_command("QQX")


def test_rank_only_pair_uses_natural_cards_not_the_wilds() -> None:
    game = lead_game()  # You: 3S 3D 4S 4D 2H 2H 9C at level 2 (2H wild, R8)
    rc, out, _ = run_session(game, ["33"])
    seat, act = game.deal.history[0]
    assert seat == 0 and act[0] == "pair" and sorted(act[2]) == sorted(cards("3S 3D"))
    assert "You (seat 0): pair 3: 3♠ 3♦" in out and rc == 0


def test_rank_only_input_picks_the_reading_of_the_typed_ranks() -> None:
    # R17: 3S 3D 4S 4D 2H 2H reads as tube 2-3-4, tube 3-4-5 or plate 333-444; typed as ranks
    # 2 2 3 3 4 4 only the tube 2-3-4 (the wilds as the level cards themselves) matches
    game = lead_game()
    _rc, _out, prompts = run_session(game, ["223344"])
    _seat, act = game.deal.history[0]
    assert act[0] == "tube" and sorted(act[2]) == sorted(cards("3S 3D 4S 4D 2H 2H"))
    assert not [p for p in prompts if p.startswith("Reading")]  # no question needed


def test_rank_only_input_fills_a_missing_card_with_a_wild_and_reports_impossible_ranks() -> None:
    game = lead_game()
    _rc, out, prompts = run_session(game, ["KK", "9999", "999", "y"])
    assert "✗ you have no K" in out  # two wilds alone are a pair of level cards, not of kings
    assert "✗ you hold 1 × 9 and 2 wild card(s): not enough for 4" in out
    assert [p for p in prompts if "wild card" in p] == ["Play triple 9: 9♣ 2♥→9♣ 2♥→9♣ using your wild card 2♥? [y/N] "]
    _seat, act = game.deal.history[0]
    assert act[0] == "triple" and sorted(act[2]) == sorted(cards("9C 2H 2H"))
    assert not RULE_ID.search(out)


def test_rank_only_straight_keeps_a_straight_flush_and_prefers_a_plain_straight() -> None:
    # You hold a spade straight flush 3-7 and a second 3-7 in mixed suits: typing 34567 plays
    # the mixed straight (a plain straight, R13) and keeps the straight flush (R14) intact
    hands = [cards("3S 4S 5S 6S 7S 3D 4C 5D 6C 7H KD"), cards("AS AD KC"), cards("QS QD JC"), cards("TS TD 8C")]
    game = Game(hands=hands, first_leader=0)
    _rc, _out, _ = run_session(game, ["34567"])
    _seat, act = game.deal.history[0]
    assert act[0] == "straight"
    left = [f for f in range(54) for _ in range(game.deal.hands[0][f])]
    assert sorted(left) == sorted(cards("3S 4S 5S 6S 7S KD"))


def test_rank_only_tribute_card() -> None:
    deal2 = [cards("5H AS AD KS 3C"), cards("SJ 2S"), cards("BJ 4C 6D"), cards("7C 8C")]
    game = Game(hands=_two_deals(deal2), first_leader=1)
    _rc, out, _ = run_session(game, ["p", "", "K", "A"])
    assert "✗ the tribute must be your highest card, not counting the wild" in out  # K is not (R45)
    assert "Tribute (进贡): You (seat 0) → " in out


@pytestmark_pty
def test_pty_rank_only_input_and_no_rule_ids_in_a_whole_demo_game() -> None:
    import pexpect

    child = spawn("--seed 1 --bot random --autoplay --delay 0")
    child.expect_exact("Final result", timeout=60)
    child.expect(pexpect.EOF)
    child.close()
    text = ANSI.sub("", child.before or "")
    assert not RULE_ID.search(text), RULE_ID.search(text)


@pytestmark_pty
def test_pty_chinese_game_prompts_help_and_messages() -> None:
    import pexpect

    child = spawn("--seed 1 --bot random --delay 0 --lang zh")
    child.expect_exact("你坐南边（0号位）")
    child.expect_exact("官方规则 · 种子 1 · 机器人：随机。")  # not "规则 official" or "bots random"
    prompt = "你出牌（输入牌，p = 不出，h = 提示，? = 帮助，q = 退出）："
    child.expect_exact(prompt)
    child.sendline("?")
    child.expect_exact("不在乎花色时只写点数也可以")
    child.expect_exact(prompt)
    child.sendline("ZZ")
    child.expect_exact("✗ 看不懂 'ZZ'")
    child.expect_exact(prompt)
    child.sendline("h")
    child.expect(r"→ 输入：([0-9A-Zp ]+)\r?\n")
    child.expect_exact(prompt)
    child.sendline("q")
    child.expect_exact("退出游戏？")
    child.sendline("y")
    child.expect_exact("再见")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    text = ANSI.sub("", child.before or "")
    for english in ("Your play", "Levels:", "Your hand", "Game 1"):
        assert english not in text


# --- a new player's review: asking before a wild completes typed ranks, Chinese words ------------
def test_rank_only_input_asks_before_a_wild_completes_the_ranks() -> None:
    """``99`` with one 9 in hand spent a wild (R8, R12) without a word. Now the game asks first: "n"
    (or Enter) plays nothing and asks for the play again, "y" plays it. Ranks the natural cards
    cover (``33``) and the wild typed as the level card it is (``22``, R13) need no question."""
    game = lead_game()  # You: 3S 3D 4S 4D 2H 2H 9C at level 2 (2H wild)
    rc, out, prompts = run_session(game, ["99", "n", "99", "", "99", "y"])
    assert rc == 0
    question = "Play pair 9: 9♣ 2♥→9♣ using your wild card 2♥? [y/N] "
    assert prompts.count(question) == 3
    assert out.count("(not played: type the cards with their suits to choose others)") == 2
    assert len(game.deal.history) >= 1
    seat, act = game.deal.history[0]
    assert seat == 0 and act[0] == "pair" and sorted(act[2]) == sorted(cards("9C 2H"))
    # natural cards: no question
    game = lead_game()
    _rc, _out, prompts = run_session(game, ["33"])
    assert not [p for p in prompts if "wild card" in p]
    assert game.deal.history[0][1][0] == "pair"
    # the wilds as the level cards they are (a pair of 2s at level 2): no question
    game = lead_game()
    _rc, _out, prompts = run_session(game, ["22"])
    assert not [p for p in prompts if "wild card" in p]
    assert sorted(game.deal.history[0][1][2]) == sorted(cards("2H 2H"))


def test_chinese_mode_says_xiaowang_dawang_and_ju() -> None:
    """The Chinese terminal printed the jokers as SJ/BJ and called a deal 副 (and a game 局) where the
    web table says 局 (and 场): now 小王/大王 (the typed notation stays SJ/BJ) and 第 1 场 · 第 1 局;
    the return rule shows no option id (return_rule=any)."""
    from guandan.core.cards import BIG_JOKER, SMALL_JOKER
    from guandan.terminal.i18n import set_language

    set_language("zh")
    try:
        assert card_label(SMALL_JOKER) == "小王" and card_label(BIG_JOKER) == "大王"
        con = Console(file=io.StringIO(), width=40, color_system=None)
        con.print(render_hand(cards("3S 4D SJ BJ BJ"), parse_rank("2"), width=40))
        lines = con.file.getvalue().splitlines()  # type: ignore[attr-defined]
        assert lines[1].split() == ["3♠", "4♦", "小王", "大王", "大王"]
        assert lines[2].split() == ["3S", "4D", "SJ", "BJ", "BJ"]  # what is typed
        assert lines[1].index("小王") == lines[2].index("SJ")  # the columns line up (小王 is 4 cells wide)
        assert return_rule_text("any", False) == "还任意一张牌"
        from guandan.terminal.game import _bot_words

        assert _bot_words("hard:worlds=24") == "困难:worlds=24" and _bot_words("expert") == "专家"
        # the double tribute scenario: North pays 大王 to East (R46)
        deal2 = [cards("5H AS AD KS 3C"), cards("SJ 2S"), cards("BJ 4C 6D"), cards("7C 8C")]
        game = Game(hands=_two_deals(deal2), first_leader=1)
        _rc, out, prompts = run_session(game, ["p", "", "AS"])
        assert "第 1 场 · 第 1 局 · 打 2" in out and "第 1 场 · 第 1 局结果" in out and "第 1 场 · 第 2 局 · 打 5" in out
        assert "进贡：北家（2号位） → 东家（1号位）: 大王" in out
        assert "副" not in out and "BJ" not in out.replace("（BJ）", "")
        assert any(p.startswith("按回车开始下一局") for p in prompts)
    finally:
        set_language("en")


def test_sequences_read_in_sequence_order() -> None:
    """As on the web table: a straight, tube or straight flush reads from its low end (R10, A low in
    A-2-3-4-5), each wild where the card it stands for sits (R12), not in level or face order."""
    level = parse_rank("2")

    def line(text: str, want_type: str, rank: str) -> str:
        play = [p for p in classify(tuple(sorted(cards(text))), level) if p[0] == want_type and p[1] == parse_rank(rank)]
        return play_plain(play[0], level)

    assert line("AS 2D 3S 4D 5C", "straight", "5") == "straight 5: A♠ 2♦ 3♠ 4♦ 5♣"
    assert line("2C 3C 4C 5C 2H", "straight_flush", "5") == "straight flush 5: 2♥→A♣ 2♣ 3♣ 4♣ 5♣"
    assert line("2C 3C 4C 5C 2H", "straight_flush", "6") == "straight flush 6: 2♣ 3♣ 4♣ 5♣ 2♥→6♣"
    assert line("2S 2D 3C 4S 4D 2H", "tube", "4") == "tube 4: 2♠ 2♦ 3♣ 2♥→3♠ 4♠ 4♦"
