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
    g = Game.from_start(RuleSet.official(), hands, 7, (7, 3), first_leader=1)
    assert g.deal.level == 7 and g.score.levels == [7, 3] and g.to_act() == 1
    ev = g.events[0]
    assert ev["type"] == "deal" and ev["level"] == "9" and ev["levels"] == ["9", "5"] and ev["first_leader"] == 1
    assert len(g.events) == 1 and g.deal_number == 1
    with pytest.raises(GuandanError):
        Game.from_start(RuleSet.official(), hands, 8, (7, 3), first_leader=1)  # R7
    with pytest.raises(GuandanError):
        Game.from_start(RuleSet.official(), hands, 7, (7, 3))  # no leader, no tribute (R51)
    # with the previous result, tribute follows (R44): 1-2 by seats 1 and 3, seats 0 and 2 pay
    g = Game.from_start(RuleSet.official(), hands, 3, (7, 3), prev=DealResult((1, 3), (9, 0, 4, 0)))
    assert g.events[0]["levels"] == ["9", "5"]
    if list(hands[0]).count(BIG_JOKER) + list(hands[2]).count(BIG_JOKER) >= 2:  # R48: anti-tribute,
        assert g.phase == "play" and g.to_act() == 1  # 头游 leads (R49)
    else:
        assert g.phase == "tribute" and g.to_act() == 2  # head 1's 下家 pays first
