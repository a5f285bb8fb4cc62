"""Duplicate boards (issue 22): JSON round trip, deterministic replays of a board, a board that
starts after tribute, results in levels or Anhui points, board records, and the layers."""

from __future__ import annotations

import ast
import json
import pathlib
import random
import sys

import pytest

from guandan.agents.heuristic import HeuristicAgent
from guandan.core.cards import BIG_JOKER, FACE_RANK, faces_of
from guandan.core.deal import DealResult
from guandan.core.match import shuffle_deal
from guandan.core.rules import RuleSet
from guandan.core.views import seat_view
from guandan.duplicate import Board, BoardError, BoardTribute, deal_board_set, play_board, side_result
from guandan.duplicate.board_records import board_record_lines, replay_board_lines
from guandan.records import RecordError, replay_lines


def _agents():
    return [HeuristicAgent(s) for s in range(4)]


@pytest.mark.parametrize("preset", ["official", "anhui", "classic"])
def test_board_json_round_trip(preset):
    boards = deal_board_set(6, RuleSet.preset(preset), seed=5, tribute_share=0.7, preset=preset)
    assert [b.number for b in boards] == [1, 2, 3, 4, 5, 6]
    assert any(b.tribute is not None for b in boards) and any(b.tribute is None for b in boards)
    for b in boards:
        text = json.dumps(b.to_json())
        again = Board.from_json(json.loads(text))
        assert again == b
        assert again.to_json() == b.to_json()
        assert json.loads(text)["format"] == "pyguandan-board" and json.loads(text)["version"] == 1


def test_board_json_errors():
    b = deal_board_set(1, seed=1)[0]
    data = b.to_json()
    with pytest.raises(BoardError):
        Board.from_json({**data, "version": 2})
    with pytest.raises(BoardError):
        Board.from_json({**data, "format": "other"})
    short = json.loads(json.dumps(data))
    short["hands"][0] = short["hands"][0][1:]
    with pytest.raises(BoardError):
        Board.from_json(short)
    with pytest.raises(BoardError):
        Board.from_json({**data, "level": "9", "levels": ["2", "3"]})  # R7: the level is a team's


def test_playing_a_board_twice_gives_the_same_result():
    for b in deal_board_set(4, seed=9, tribute_share=0.5):
        first = play_board(b, _agents())
        again = play_board(Board.from_json(json.loads(json.dumps(b.to_json()))), _agents())
        assert first.actions == again.actions
        assert first.result == again.result
        assert first.score(0) == -first.score(1) != 0
        # by hand from the finish (R35, official 3/2/1): 头游's team gains, the other loses as much
        code = first.result.result
        gain = {"1-2": 3, "1-3": 2, "1-4": 1}[code]
        assert first.score(first.result.winner_team) == gain
        assert first.events[-1]["type"] == "deal_end" and first.events[0]["type"] == "deal"


def test_side_result_levels_and_anhui_points():
    official, anhui = RuleSet.official(), RuleSet.preset("anhui")
    one_three = DealResult((1, 0, 3, 2), (0, 0, 0, 0))  # 头游 seat 1, partner 3 third: 1-3
    assert (side_result(official, one_three, 1), side_result(official, one_three, 0)) == (2, -2)
    assert (side_result(anhui, one_three, 1), side_result(anhui, one_three, 0)) == (2, -2)  # 1-3: ±2 points
    double_up = DealResult((2, 0), (0, 5, 0, 7))  # 1-2 for seats 0/2
    assert side_result(official, double_up, 0) == 3 and side_result(anhui, double_up, 0) == 4
    assert side_result(anhui, double_up, 1) == -4
    one_four = DealResult((0, 1, 3, 2), (0, 0, 0, 0))
    assert side_result(official, one_four, 0) == 1 and side_result(anhui, one_four, 1) == -1
    with pytest.raises(ValueError):
        side_result(official, one_four, 2)


def _single_tribute_board(**change):
    # seat 2 is 末游 of a 1-4 deal won by seat 0 (finish 0, 1, 3, 2): seat 2 pays seat 0 (R44), its
    # big joker is its highest card (R45, R9); seat 0 returns a card of rank <= 10, not the level (R47)
    for seed in range(100):
        hands = [sorted(h) for h in shuffle_deal(random.Random(seed))]
        if hands[2].count(BIG_JOKER) == 1:  # one big joker: no anti-tribute (R48)
            break
    level = 5  # rank 7, team 0's level (R7: 头游's team)
    ret = next(f for f in hands[0] if FACE_RANK[f] <= 8 and FACE_RANK[f] != level)
    args = dict(number=1, rules=RuleSet.official(), hands=tuple(tuple(h) for h in hands), level=level,
                levels=(level, 9), first_leader=2,
                tribute=BoardTribute((0, 1, 3, 2), (0, 0, 6, 0), ((2, 0, BIG_JOKER),), ((0, 2, ret),)))
    args.update(change)
    return Board(**args), hands, ret


def test_a_board_that_starts_after_tribute():
    board, hands, ret = _single_tribute_board()
    game = board.start_game()
    assert game.phase == "play" and game.to_act() == 2  # R49: the payer leads
    want0 = sorted(hands[0] + [BIG_JOKER])
    want0.remove(ret)
    want2 = list(hands[2])
    want2.remove(BIG_JOKER)
    want2 = sorted(want2 + [ret])
    assert list(faces_of(game.deal.hands[0])) == want0
    assert list(faces_of(game.deal.hands[2])) == want2
    assert list(faces_of(game.deal.hands[1])) == hands[1]
    # the exchange is public to every seat (R50)
    for s in range(4):
        evs = seat_view(game, s).tribute_events
        assert [e["type"] for e in evs] == ["tribute_paid", "returns_revealed"]
    assert Board.from_json(json.loads(json.dumps(board.to_json()))) == board
    play = play_board(board, _agents())
    assert play.actions[0][0] == 2
    lines = board_record_lines(play, ["a", "b", "c", "d"])
    got = replay_board_lines(lines)
    assert got.complete and got.n_actions == len(play.actions)


def test_a_tribute_that_does_not_follow_the_rules_is_refused():
    board, hands, ret = _single_tribute_board()
    low = next(f for f in hands[2] if FACE_RANK[f] == 0)  # a 2 is not seat 2's highest card (R45)
    with pytest.raises(BoardError):
        _single_tribute_board(tribute=BoardTribute((0, 1, 3, 2), (0, 0, 6, 0), ((2, 0, low),), ((0, 2, ret),)))[0].start_game()
    with pytest.raises(BoardError):  # seat 0 leads, not the payer (R49)
        _single_tribute_board(first_leader=0)[0].start_game()
    with pytest.raises(BoardError):  # the wrong receiver (R44: 末游 pays 头游)
        _single_tribute_board(tribute=BoardTribute((0, 1, 3, 2), (0, 0, 6, 0), ((2, 1, BIG_JOKER),),
                                                   ((1, 2, ret),)))[0].start_game()


def test_board_records_replay_and_detect_tampering():
    boards = deal_board_set(3, seed=21, tribute_share=0.5)
    for b in boards:
        play = play_board(b, _agents())
        lines = board_record_lines(play)
        got = replay_board_lines(lines)
        assert got.complete and json.loads(lines[0])["board"] == b.to_json()
        with pytest.raises(RecordError):  # the plain replay plays on into a next deal: not a game record
            replay_lines(lines)
        i = next(i for i, line in enumerate(lines) if '"type":"action"' in line and '"pass"' not in line
                 and i > 2)
        bad = list(lines)
        ev = json.loads(bad[i])
        ev["seat"] = (ev["seat"] + 1) % 4
        bad[i] = json.dumps(ev)
        with pytest.raises(RecordError):
            replay_board_lines(bad)


def test_board_sets_come_from_the_secure_source_unless_seeded():
    assert [b.to_json() for b in deal_board_set(2, seed=3)] == [b.to_json() for b in deal_board_set(2, seed=3)]
    a, b = deal_board_set(1), deal_board_set(1)
    assert a[0].hands != b[0].hands  # 108 cards from os.urandom twice: equal with probability ~0
    with pytest.raises(ValueError):
        deal_board_set(0)


SRC = pathlib.Path(__file__).resolve().parents[1] / "src"
LAYERS = {
    # below the server: boards and scoring use the core, the bots (a board's tribute choice), records
    "duplicate": ("guandan.core", "guandan.agents", "guandan.records", "guandan.duplicate"),
    "review": ("guandan.core", "guandan.agents", "guandan.records", "guandan.duplicate", "guandan.review"),
}


@pytest.mark.parametrize("package", sorted(LAYERS))
def test_layers_of_the_new_packages(package):
    bad = []
    files = sorted((SRC / "guandan" / package).rglob("*.py"))
    assert files
    for f in files:
        tree = ast.parse(f.read_text("utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                mod = node.module or ""
                if node.level:
                    mod = f"guandan.{package}.{mod}" if node.level == 1 else f"guandan.{mod}"
                names = [mod]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                continue
            for m in names:
                top = m.split(".")[0]
                if top in sys.stdlib_module_names or top == "__future__":
                    continue
                if not any(m == p or m.startswith(p + ".") for p in LAYERS[package]):
                    bad.append(f"{f.name}: {m}")
    assert not bad, bad


def test_game_from_start_deals_at_the_given_levels():
    from guandan.core.errors import GuandanError
    from guandan.core.match import Game

    hands = shuffle_deal(random.Random(2))
    # no tribute: a game's first deal, both teams and the deal at level 2 (R7, R43, EC-46)
    g = Game.from_start(RuleSet.official(), hands, 0, (0, 0), first_leader=1)
    assert g.deal.level == 0 and g.score.levels == [0, 0] and g.to_act() == 1
    ev = g.events[0]
    assert ev["type"] == "deal" and ev["level"] == "2" and ev["levels"] == ["2", "2"] and ev["first_leader"] == 1
    assert len(g.events) == 1 and g.deal_number == 1
    with pytest.raises(GuandanError):
        Game.from_start(RuleSet.official(), hands, 0, (0, 0))  # no leader, no tribute (R51)
    # with the previous result, tribute follows (R44): 1-2 by seats 1 and 3, seats 0 and 2 pay;
    # the deal is at team 1's level, index 3 = "5" (R7)
    g = Game.from_start(RuleSet.official(), hands, 3, (7, 3), prev=DealResult((1, 3), (9, 0, 4, 0)))
    assert g.events[0]["levels"] == ["9", "5"] and g.events[0]["level"] == "5"
    if list(hands[0]).count(BIG_JOKER) + list(hands[2]).count(BIG_JOKER) >= 2:  # R48: anti-tribute,
        assert g.phase == "play" and g.to_act() == 1  # 头游 leads (R49)
    else:
        assert g.phase == "tribute" and g.to_act() == 2  # head 1's 下家 pays first


@pytest.mark.parametrize(("level", "levels", "prev", "words"), [
    # no tribute = a game's first deal: only level 2 with both teams at 2 (R7, R43)
    (7, (7, 3), None, "first deal"),
    (0, (0, 3), None, "first deal"),
    (3, (0, 3), None, "first deal"),
    # after a deal won by seat 1 (team 1/3, at index 3 = "5"), the deal is at "5", not team 0's "9"
    (7, (7, 3), DealResult((1, 3), (9, 0, 4, 0)), "seat 1"),
    # after a 1-4 won by seat 0 (team 0/2 at index 5 = "7"), not at team 1/3's "J"
    (9, (5, 9), DealResult((0, 1, 3, 2), (0, 0, 0, 6)), "seat 0"),
])
def test_game_from_start_refuses_levels_against_r7(level, levels, prev, words):
    from guandan.core.match import Game

    hands = shuffle_deal(random.Random(2))
    with pytest.raises(ValueError, match="R7") as err:
        Game.from_start(RuleSet.official(), hands, level, levels, prev=prev, first_leader=None if prev else 0)
    assert words in str(err.value)


def test_board_levels_follow_r7():
    board, _hands, _ret = _single_tribute_board()  # 1-4 won by seat 0: team 0/2's level 5 = "7"
    assert board.level == board.levels[0] == 5
    with pytest.raises(BoardError, match="R7"):  # the other team's level
        _single_tribute_board(level=9)
    with pytest.raises(BoardError, match="R7"):  # the same deal without tribute is no first deal
        _single_tribute_board(tribute=None)
    first = Board(1, RuleSet.official(), board.hands, 0, (0, 0), 3, None)  # a first deal (EC-46)
    assert first.start_game().to_act() == 3
    with pytest.raises(BoardError, match="R7"):
        Board(1, RuleSet.official(), board.hands, 0, (0, 4), 3, None)
    # a later deal at 2 with both teams at 2 can happen (R41: 头游's team sent back to 2 after a
    # third failed attempt at A), so a board with tribute may have it
    Board(1, RuleSet.official(), board.hands, 0, (0, 0), 2, board.tribute)
    # from JSON, before any deal is started
    data = board.to_json()
    for change in ({"level": "J"}, {"tribute": None}):
        with pytest.raises(BoardError, match="R7"):
            Board.from_json({**data, **change}, check=False)
    data0 = first.to_json()
    with pytest.raises(BoardError, match="R7"):
        Board.from_json({**data0, "level": "9", "levels": ["9", "5"]}, check=False)


def test_board_tribute_must_match_the_previous_result():
    board, _hands, _ret = _single_tribute_board()  # finish 0, 1, 3, 2: seat 2 is 末游, 6 cards left
    t = board.tribute
    bad_rests = [
        (0, 0, 0, 0),  # 末游 still held cards when the deal ended (R33)
        (0, 5, 6, 0),  # seat 1 went out 2nd: it held none
        (0, 0, 6, 28),  # seat 3 went out 3rd; and 28 is more than a hand
    ]
    for rest in bad_rests:
        with pytest.raises(BoardError, match="prev_rest"):
            _single_tribute_board(tribute=BoardTribute(t.prev_finish, rest, t.tributes, t.returns))
    with pytest.raises(BoardError, match="return"):  # a tribute without its return (R47)
        _single_tribute_board(tribute=BoardTribute(t.prev_finish, t.prev_rest, t.tributes, ()))
    with pytest.raises(BoardError, match="finished deal"):  # 0, 1 is not how a deal ends (R33)
        _single_tribute_board(tribute=BoardTribute((0, 1), (0, 0, 6, 6), t.tributes, t.returns))
    # a 1-2 by seats 1 and 3: both losers still held cards, the winners none
    BoardTribute((1, 3), (4, 0, 9, 0)).prev_result()
    with pytest.raises(BoardError, match="prev_rest"):
        BoardTribute((1, 3), (4, 2, 9, 0)).prev_result()


def test_deal_board_plays_the_level_of_the_head_team():
    # R7: a board with tribute is played at the level of the team that supplied 头游 in the previous
    # deal; a board without is a first deal, at 2 with both teams at 2
    boards = deal_board_set(40, seed=17, tribute_share=0.8)
    heads = {0: 0, 1: 0}
    for b in boards:
        if b.tribute is None:
            assert (b.level, b.levels) == (0, (0, 0))
            continue
        team = b.tribute.prev_finish[0] % 2
        assert b.level == b.levels[team]
        if b.levels[0] != b.levels[1]:
            heads[team] += 1
    assert heads[0] > 0 and heads[1] > 0  # both teams at the head, at levels that differ


def test_deal_board_head_team_level_is_reachable():
    # R35: 头游's team has just gone up 3 (1-2), 2 (1-3) or 1 (1-4) levels from at least 2, so it is at
    # 5..A, 4..A or 3..A (indices 3.., 2.., 1..; the R41 fall back to 2 is not drawn)
    boards = deal_board_set(120, seed=3, tribute_share=1.0)
    lowest = {2: 12, 3: 12, 4: 12}
    for b in boards:
        finish = b.tribute.prev_finish
        mate_place = 2 if len(finish) == 2 else finish.index((finish[0] + 2) % 4) + 1
        need = {2: 3, 3: 2, 4: 1}[mate_place]
        assert b.level >= need, (b.number, finish, b.level)
        lowest[mate_place] = min(lowest[mate_place], b.level)
    assert lowest == {2: 3, 3: 2, 4: 1}  # the lowest reachable level is drawn for each result


def _changed(data, path, value):
    """A deep copy of ``data`` with the value at ``path`` (keys and indices) replaced."""
    out = json.loads(json.dumps(data))
    node = out
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = value
    return out


@pytest.mark.parametrize(("path", "value", "field"), [
    (("number",), "1", "number"),  # a string is not an int
    (("number",), True, "number"),  # nor a bool
    (("number",), 1.0, "number"),  # nor a float
    (("number",), 0, "number"),  # 1-based
    (("first_leader",), "2", "first_leader"),
    (("first_leader",), True, "first_leader"),
    (("first_leader",), 2.0, "first_leader"),
    (("first_leader",), 4, "first_leader"),
    (("level",), 5, "level"),  # a rank string, not a rank index
    (("level",), "SJ", "level"),  # no level above A (R6)
    (("levels",), ["7"], "levels"),
    (("levels",), ["7", "J", "2"], "levels"),
    (("levels", 1), 9, "levels[1]"),
    (("preset",), 5, "preset"),
    (("options",), "official", "options"),
    (("options", "upgrade"), "3/2/1", "options.upgrade"),  # the CLI's spelling is not the JSON's
    (("options", "streaks"), 0, "options.streaks"),  # an int is not a bool
    (("options", "a_fail_limit"), 3.0, "options.a_fail_limit"),
    (("options", "a_fail_limit"), "3", "options.a_fail_limit"),
    (("hands",), [], "hands"),
    (("hands", 1), ["2S"] * 2, "hands[1]"),
    (("hands", 2, 4), "XX", "hands[2][4]"),  # an unknown card
    (("hands", 2, 4), 7, "hands[2][4]"),  # a face index is not a card string
    (("tribute",), [], "tribute"),
    (("tribute", "prev_finish", 0), "0", "tribute.prev_finish[0]"),
    (("tribute", "prev_finish", 0), False, "tribute.prev_finish[0]"),
    (("tribute", "prev_finish"), [0, 1, 3], "tribute.prev_finish"),
    (("tribute", "prev_rest", 2), 6.0, "tribute.prev_rest[2]"),
    (("tribute", "prev_rest"), [0, 0, 6], "tribute.prev_rest"),
    (("tribute", "tributes", 0, 0), "2", "tribute.tributes[0][0]"),
    (("tribute", "tributes", 0, 2), 53, "tribute.tributes[0][2]"),
    (("tribute", "returns", 0), [0, 2], "tribute.returns[0]"),
    (("tribute", "returns", 0, 2), "1X", "tribute.returns[0][2]"),
])
def test_board_from_json_checks_types_without_coercion(path, value, field):
    board, _hands, _ret = _single_tribute_board()
    data = board.to_json()
    assert Board.from_json(data) == board
    with pytest.raises(BoardError) as err:
        Board.from_json(_changed(data, path, value), check=False)
    assert isinstance(err.value, ValueError)
    assert f"board field '{field}'" in str(err.value), str(err.value)


def test_board_from_json_refuses_a_third_copy_of_a_card():
    board, _hands, _ret = _single_tribute_board()
    data = board.to_json()
    card = data["hands"][0][0]
    k = next(i for i, c in enumerate(data["hands"][3]) if c != card)
    # the hands still hold 108 cards, 27 each, but one card three times and another once (R1)
    with pytest.raises(BoardError, match="third") as err:
        Board.from_json(_changed(data, ("hands", 3, k), card), check=False)
    assert "board field 'hands[" in str(err.value)
    with pytest.raises(BoardError):  # a missing field is named too
        Board.from_json({k: v for k, v in data.items() if k != "levels"})
    try:
        Board.from_json({k: v for k, v in data.items() if k != "levels"})
    except BoardError as e:
        assert "'levels'" in str(e) and "missing" in str(e)
