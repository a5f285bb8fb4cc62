"""Issue 25 items 6-7 in the engine and the records: the turned card of R51 recorded in the first
deal's event, the Yangzhou streaks (AMB-17) in ``deal_end``, records written before those fields
still replaying (tests/data/old_records, written by main at 6353305), and the house modes
``no_shuffle`` (core/gather.py) and ``single_deal``."""

from __future__ import annotations

import json
import random
import secrets
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from guandan.agents.base import RandomAgent
from guandan.agents.driver import run_game
from guandan.core.cards import N_FACES, full_deck, parse_card
from guandan.core.errors import GuandanError
from guandan.core.gather import PACKET_SIZE, deal_packets, gather_deal, gather_pile
from guandan.core.match import Game
from guandan.core.rules import RuleSet
from guandan.records import RecordError, record_lines, replay, replay_lines

OLD = Path(__file__).parent / "data" / "old_records"


def play(rules: RuleSet, seed: int, **kw) -> Game:  # type: ignore[no-untyped-def]
    g = Game(rules, max_games=1, **kw) if "rng" in kw else Game(rules, seed=seed, max_games=1, **kw)
    run_game(g, [RandomAgent(seed * 4 + s) for s in range(4)])
    return g


# -- old records -----------------------------------------------------------------------------------

# deals counted in the files by hand (grep -c '"type":"deal"'); none has turned_card or streaks
OLD_FILES = {
    "official_seed11.jsonl": 12,
    "server_no_seed.jsonl": 12,
    "yangzhou_streak_seed100.jsonl": 10,
    "anhui_seed7.jsonl": 6,
}


@pytest.mark.parametrize("name,deals", sorted(OLD_FILES.items()))
def test_old_records_still_replay(name: str, deals: int) -> None:
    text = (OLD / name).read_text(encoding="utf-8")
    assert '"turned_card":"' not in text and '"streaks":{' not in text  # written before the fields
    res = replay(OLD / name)
    assert res.complete
    assert res.n_deals == deals


def test_old_record_replays_as_written_without_a_made_up_turned_card() -> None:
    # server_no_seed has no seed: its first leader (seat 0) comes from the record, which names no
    # card; the replayed game must not invent one (the table would show it after a restart)
    res = replay(OLD / "server_no_seed.jsonl")
    assert res.game.events[0]["first_leader"] == 0
    assert "turned_card" not in res.game.events[0] and res.game.turned is None
    lines = (OLD / "server_no_seed.jsonl").read_text(encoding="utf-8").splitlines()
    assert record_lines(res.game, seed=None, hands="explicit")[1:] == lines[1:]  # rewritten unchanged


def test_old_seeded_record_replays_with_its_turned_card_now_known() -> None:
    # official_seed11's first deal: seat 3 leads (first_leader 3 in the file); the replay now also
    # knows which card was turned, and that card is in seat 3's hand and neither joker nor wild (2H)
    res = replay(OLD / "official_seed11.jsonl")
    first = res.game.events[0]
    assert first["first_leader"] == 3
    card = first["turned_card"]
    assert card in first["hands"][3]
    assert card not in ("SJ", "BJ", "2H")


def test_old_yangzhou_record_gets_its_streak_explained() -> None:
    # From the file's finish orders: seat 1 was 头游 in deals 5, 6 and 7, so deal 7 carries a
    # 头游 run of 3 and one extra level (AMB-17: n - 2); its upgrade 2 = 1 (1-4) + 1. No 末游 run
    # reached 3 (seat 2 last in deals 3-4, seat 0 in 5-6), so no penalty anywhere.
    res = replay(OLD / "yangzhou_streak_seed100.jsonl")
    ends = [e for e in res.game.events if e["type"] == "deal_end"]
    assert len(ends) == 10
    assert ends[6]["streaks"] == {"bonus": 1, "penalty": [0, 0], "first_run": [1, 3], "last_runs": [[3, 1]]}
    assert ends[6]["upgrade"] == 2
    assert [e["streaks"]["bonus"] for e in ends] == [0, 0, 0, 0, 0, 0, 1, 0, 0, 0]
    assert all(e["streaks"]["penalty"] == [0, 0] for e in ends)
    assert ends[5]["streaks"]["last_runs"] == [[0, 2], [2, 1]]  # 双下 in deal 6: both losers extend


# -- the turned card (R51) -------------------------------------------------------------------------


def test_turned_card_recorded_and_replayed() -> None:
    g = play(RuleSet.official(), 21)
    deal1 = g.events[0]
    card = deal1["turned_card"]
    assert card in deal1["hands"][deal1["first_leader"]]
    assert card not in ("SJ", "BJ", "2H")  # R51: neither a joker nor the wild of level 2
    later = [e for e in g.events if e["type"] == "deal" and e["deal"] > 1]
    assert later and all("turned_card" not in e for e in later)  # only the game's first deal
    lines = record_lines(g)
    assert replay_lines(lines).game.events[0]["turned_card"] == card
    # the record's card is checked: another card of the same holder does not replay
    ev = json.loads(lines[1])
    other = next(c for c in ev["hands"][ev["first_leader"]] if c not in (card, "SJ", "BJ", "2H"))
    ev["turned_card"] = other
    with pytest.raises(RecordError, match="turned_card"):
        replay_lines([lines[0], json.dumps(ev, ensure_ascii=False), *lines[2:]])


def test_turned_card_of_a_record_without_seed_comes_from_the_record() -> None:
    g = play(RuleSet.official(), 4, rng=secrets.SystemRandom())
    lines = record_lines(g, seed=None, hands="explicit")
    assert json.loads(lines[0])["seed"] is None
    assert replay_lines(lines).game.events[0]["turned_card"] == g.events[0]["turned_card"]


def test_random_seat_rules_turn_no_card() -> None:
    g = play(RuleSet.preset("anhui"), 5)
    assert "turned_card" not in g.events[0] and isinstance(g.events[0]["first_leader"], int)


def test_streaks_only_under_the_streak_rule() -> None:
    g = play(RuleSet.official(), 8)
    assert all("streaks" not in e for e in g.events if e["type"] == "deal_end")
    y = play(RuleSet.preset("yangzhou"), 8)
    ends = [e for e in y.events if e["type"] == "deal_end"]
    assert ends and all(set(e["streaks"]) == {"bonus", "penalty", "first_run", "last_runs"} for e in ends)
    assert replay_lines(record_lines(y)).complete


# -- single_deal -----------------------------------------------------------------------------------


def test_single_deal_is_one_deal_at_a_random_level() -> None:
    levels = set()
    for seed in range(12):
        g = play(RuleSet.official().replace(single_deal=True), seed)
        deals = [e for e in g.events if e["type"] == "deal"]
        assert len(deals) == 1 and g.over
        level = deals[0]["level"]
        assert deals[0]["levels"] == [level, level]  # both teams at the deal's level
        end = next(e for e in g.events if e["type"] == "deal_end")
        assert g.events[-1] == {"type": "game_over", "game": 1, "winner_team": end["winner_team"]}
        assert g.winner == end["winner_team"]
        levels.add(level)
        assert replay_lines(record_lines(g)).complete
    assert len(levels) > 3  # not always level 2


def test_single_deal_without_seed_replays_its_level() -> None:
    g = play(RuleSet.official().replace(single_deal=True), 3, rng=secrets.SystemRandom())
    res = replay_lines(record_lines(g, seed=None, hands="explicit"))
    assert res.complete and res.game.events[0]["level"] == g.events[0]["level"]


# -- no_shuffle (不洗牌) -----------------------------------------------------------------------------


class _NoDraws(random.Random):
    """Keeps the gathered tricks in play order and cuts at 0: the deal can be worked out by hand."""

    def shuffle(self, x, random=None) -> None:  # type: ignore[no-untyped-def,override]
        return None

    def randrange(self, start, stop=None, step=1):  # type: ignore[no-untyped-def,override]
        return 0


def test_no_shuffle_deal_by_hand() -> None:
    # with no reordering and no cut, the pile is deal 1's plays in play order followed by the cards
    # left in the unfinished seats' hands (seat order); seat s takes cards 9s..9s+8, 36+9s.., 72+9s..
    g = play(RuleSet.official().replace(no_shuffle=True), 9, gather_rng=_NoDraws())
    events = g.events
    second = next(i for i, e in enumerate(events) if e["type"] == "deal" and e["deal"] == 2)
    pile = [c for e in events[:second] if e["type"] == "action" and e["action"][0] != "pass"
            for c in e["action"][2]]
    first = events[0]
    # cards left: the deal's hands minus everything played (tribute-free first deal)
    left = {s: Counter(first["hands"][s]) for s in range(4)}
    for e in events[:second]:
        if e["type"] == "action":
            left[e["seat"]] -= Counter(e["action"][2])
    for s in range(4):
        pile += sorted(left[s].elements(), key=parse_card)
    assert len(pile) == 108
    hands = events[second]["hands"]
    for s in range(4):
        want = pile[9 * s: 9 * s + 9] + pile[36 + 9 * s: 45 + 9 * s] + pile[72 + 9 * s: 81 + 9 * s]
        assert hands[s] == sorted(want, key=parse_card)


def test_no_shuffle_game_replays_from_its_recorded_hands() -> None:
    g = play(RuleSet.official().replace(no_shuffle=True), 6)  # gathered with the secure source
    lines = record_lines(g)
    assert json.loads(lines[0])["hands"] == "explicit"
    deals = [e for e in g.events if e["type"] == "deal"]
    assert len(deals) > 1
    for e in deals:
        assert sorted(Counter(c for h in e["hands"] for c in h).values()) == [2] * 54
        assert [len(h) for h in e["hands"]] == [27] * 4
    assert replay_lines(lines).complete


@st.composite
def _groups(draw: st.DrawFn) -> list[list[int]]:
    cards = draw(st.permutations(full_deck()))  # physical ids: every card can be followed
    cuts = sorted(draw(st.sets(st.integers(1, 107), max_size=60)))
    bounds = [0, *cuts, 108]
    return [list(cards[a:b]) for a, b in zip(bounds, bounds[1:])]


@settings(max_examples=150, deadline=None)
@given(_groups(), st.integers(0, 2**32))
def test_no_shuffle_deal_property(groups: list[list[int]], seed: int) -> None:
    pile = gather_pile(groups, random.Random(seed))
    assert sorted(pile) == list(range(108))
    pos = {c: i for i, c in enumerate(pile)}
    # each group (trick) stays together in play order on the pile, up to the cut (a circle)
    for g in groups:
        assert all(pos[b] == (pos[a] + 1) % 108 for a, b in zip(g, g[1:]))
    hands = deal_packets(pile)
    assert [len(h) for h in hands] == [27, 27, 27, 27]
    assert sorted(c for h in hands for c in h) == list(range(108))
    for s in range(4):  # packets of 9 in turn: seat s holds pile[36r + 9s : 36r + 9s + 9], r = 0..2
        assert hands[s] == [pile[36 * r + 9 * s + i] for r in range(3) for i in range(PACKET_SIZE)]
    assert gather_deal(groups, random.Random(seed)) == hands


def test_gather_refuses_a_wrong_card_count() -> None:
    with pytest.raises(GuandanError, match="108"):
        gather_pile([[1, 2, 3]])
    with pytest.raises(GuandanError, match="packet"):
        deal_packets(list(range(108)), packet=10)


def test_no_shuffle_default_source_is_the_secure_one() -> None:
    # no rng given: two gathers of the same 108 one-card tricks agree with probability 1/(108!*108)
    groups = [[f % N_FACES] for f in full_deck()]
    assert gather_deal(groups) != gather_deal(groups)


# -- the terminal ----------------------------------------------------------------------------------


def test_terminal_house_modes_and_turned_card_in_both_languages() -> None:
    from typer.testing import CliRunner

    from guandan.cli.app import app
    from guandan.terminal.i18n import set_language

    runner = CliRunner()
    try:
        zh = runner.invoke(app, ["play", "--no-shuffle", "--single-deal", "--autoplay", "--seed", "5", "--delay", "0",
                                 "--lang", "zh"])
        en = runner.invoke(app, ["play", "--single-deal", "--autoplay", "--seed", "5", "--delay", "0"])
    finally:
        set_language("en")
    assert zh.exit_code == 0, zh.output
    assert "房规：不洗牌, 单局" in zh.output and "翻牌：" in zh.output and "赢下这一局" in zh.output
    assert en.exit_code == 0, en.output
    assert "House modes: single deal (单局)" in en.output
    assert "The card turned face up is" in en.output and "win the single deal" in en.output
    assert en.output.count("Deal 1 result") == 1 and "Deal 2" not in en.output


def test_terminal_streak_words() -> None:
    from guandan.terminal.i18n import set_language
    from guandan.terminal.render import streak_lines

    # seat 1 (East) 头游 3 deals running: +1 (AMB-17); seats 0 and 2 last 4 and 2 running after a 双下
    ev = {"bonus": 1, "penalty": [2, 0], "first_run": [1, 3], "last_runs": [[0, 4], [2, 2]]}
    assert streak_lines(ev) == ["East 1st out 3 deals running: East & West +1 extra",
                                "You last 4 deals running: you & North -2"]
    try:
        set_language("zh")
        assert streak_lines(ev) == ["东家连续 3 局头游：东家和西家多升 1 级", "你连续 4 局末游：你和北家降 2 级"]
    finally:
        set_language("en")
    assert streak_lines({"bonus": 0, "penalty": [0, 0], "first_run": [1, 2], "last_runs": [[0, 1]]}) == []
    assert streak_lines(None) == []
