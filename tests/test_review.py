"""Review of a deal (issue 22): a clear mistake is marked, the first view never reads hidden
cards, the review is reproducible and cached, board records are reviewable, and the terminal
``guandan review`` on a record written by ``guandan simulate`` (--json: one entry per decision)."""

from __future__ import annotations

import json
import os
import random

import pytest
from review_helpers import blunder
from typer.testing import CliRunner

from guandan.agents.heuristic import HeuristicAgent
from guandan.cli import app
from guandan.core.cards import cards_text, faces_of
from guandan.core.match import Game, action_to_json
from guandan.core.views import seat_view
from guandan.duplicate import deal_board_set, play_board
from guandan.duplicate.board_records import board_record_lines
from guandan.records import record_lines
from guandan.review import Budget, ReviewCache, assess_view, deal_decisions, review_candidates, review_lines

SMALL = Budget(worlds=12, candidates=4, belief=1, solver_nodes=2000)


def _mistake_record() -> tuple[list[str], int, int]:
    """A deal where a seat, with nobody out yet and an opponent down to at most two cards, could
    go out at once with a legal play (R31) but passes (following an opponent) or leads its lowest
    single instead; everything else is played by the heuristic.

    Returns:
        The record's lines, the seat and the index of the mistake among that seat's decisions.
    """
    for seed in (26, 185, 28):
        g = Game(seed=seed)
        agents = [HeuristicAgent(s) for s in range(4)]
        count = [0, 0, 0, 0]
        mistake = None
        while g.deal_number == 1:
            s = g.to_act()
            act = None
            if mistake is None:
                act = blunder(g, s)
                if act is not None:
                    mistake = (s, count[s])
            if act is None:
                act = agents[s].act(seat_view(g, s))
            count[s] += 1
            g.apply(act, s)
        if mistake is not None:
            return record_lines(g), mistake[0], mistake[1]
    raise AssertionError("no position found for the mistake")


@pytest.fixture(scope="module")
def mistake():
    return _mistake_record()


def test_the_review_marks_a_clear_mistake(mistake):
    lines, seat, idx = mistake
    review = review_lines(lines, seat=seat, deal=1, budget=SMALL, seed=1, workers=0, only=[idx])
    e = review["decisions"][idx]
    assert e["played"][0] in ("pass", "single") and len(e["played"][2]) < e["hand"] and e["evaluated"]
    # the best alternative goes out at once: its cards are the whole hand
    assert e["best_alternative"] is not None and len(e["best_alternative"][2]) == e["hand"]
    # going out now is 头游 (R31, R33), and the team of 头游 wins the deal (R35) in every world
    assert e["view"]["best_alternative"]["win"] == 1.0
    assert e["real"]["best_alternative"]["win"] == 1.0
    assert e["view"]["best_alternative"]["levels"] >= 1.0  # at least a 1-4 win (+1, R35)
    assert e["cost"]["win"] >= 0.10 and e["view"]["z"] >= 2.0
    assert e["severity"] in ("mistake", "blunder")
    assert e["costliest"] == 1 and review["marked"] == [idx]
    # the other decisions were listed but not asked for
    assert all(not d["evaluated"] for d in review["decisions"] if d["index"] != idx)


def test_the_first_view_never_reads_the_hidden_cards():
    # two deals with the same hand for seat 0 and the other seats' cards dealt differently: seat 0
    # leads first, so its view is the same; the first view's estimates must be equal, the real
    # hands' view may differ
    g1 = Game(seed=5, first_leader=0)
    hands = [list(h) for h in g1.deal.initial_hands]
    rest = hands[1] + hands[2] + hands[3]
    random.Random(7).shuffle(rest)
    g2 = Game(hands=[hands[0], sorted(rest[:27]), sorted(rest[27:54]), sorted(rest[54:])], first_leader=0)
    assert seat_view(g1, 0) == seat_view(g2, 0)
    act = HeuristicAgent(0).act(seat_view(g1, 0))
    g1.apply(act, 0)
    g2.apply(act, 0)
    tiny = Budget(worlds=6, candidates=4, belief=4, solver_nodes=0)
    r1 = review_lines(record_lines(g1), 0, 1, tiny, seed=3, workers=0)
    r2 = review_lines(record_lines(g2), 0, 1, tiny, seed=3, workers=0)
    (e1,), (e2,) = r1["decisions"], r2["decisions"]
    assert e1["evaluated"] and e1["view"] == e2["view"]
    assert e1["best_alternative"] == e2["best_alternative"]
    # the evaluation itself takes the view and nothing else
    d = deal_decisions(record_lines(g1), 0, 1).decisions[0]
    cands = review_candidates(d.view, d.played, 4)
    va = assess_view(d.view, cands, SMALL, "k")
    assert va.candidates[0] == d.played and va.worlds == 12
    assert all(0.0 <= e.win <= 1.0 for e in va.estimates)


def test_the_review_is_reproducible_and_cached(tmp_path, mistake):
    lines, seat, idx = mistake
    budget = Budget(worlds=4, candidates=3, belief=1, solver_nodes=0)
    cache = ReviewCache(tmp_path / "cache")
    other = max(d.index for d in deal_decisions(lines, seat, 1).decisions
                if d.index < idx and d.phase == "play" and len(d.view.legal_actions) > 1)
    calls: list[tuple[int, int]] = []
    a = review_lines(lines, seat, 1, budget, seed=2, workers=1, cache=cache, only=[idx, other],
                     progress=lambda d, t: calls.append((d, t)))
    assert calls[0] == (0, 2) and calls[-1] == (2, 2)
    assert len(list((tmp_path / "cache").glob("*.json"))) == 1
    b = review_lines(lines, seat, 1, budget, seed=2, workers=0, only=[other, idx])  # in-process: the same numbers
    assert json.loads(json.dumps(a)) == json.loads(json.dumps(b))
    calls.clear()
    c = review_lines(lines, seat, 1, budget, seed=2, workers=1, cache=cache, only=[idx, other],
                     progress=lambda d, t: calls.append((d, t)))
    assert c == json.loads(json.dumps(a)) and calls == []  # from the cache, nothing computed


def test_a_board_play_is_reviewable():
    board = deal_board_set(1, seed=4, tribute_share=1.0)[0]
    play = play_board(board, [HeuristicAgent(s) for s in range(4)])
    lines = board_record_lines(play)
    seat = board.first_leader
    dd = deal_decisions(lines, seat, 1)
    assert dd.board == board.to_json() and dd.decisions[0].turn == 0
    assert [d.played for d in dd.decisions if d.phase == "play"] == [a for s, a in play.actions if s == seat]
    review = review_lines(lines, seat, 1, Budget(worlds=2, candidates=2, belief=1, solver_nodes=0), workers=0,
                          only=[0])
    assert review["decisions"][0]["evaluated"] and review["board"]["number"] == 1


def test_bad_requests():
    lines = record_lines(Game(seed=1))
    with pytest.raises(ValueError):
        review_lines(lines, seat=4)
    with pytest.raises(ValueError):
        review_lines(lines, deal=2)  # the record has one deal
    with pytest.raises(ValueError):
        Budget.parse("worlds=0")
    with pytest.raises(ValueError):
        Budget.parse("nonsense=1")
    assert Budget.parse("worlds=3,seconds=1.5") == Budget(worlds=3, seconds=1.5)


def test_guandan_review_json_on_a_simulated_record(tmp_path):
    runner = CliRunner()
    out = runner.invoke(app, ["simulate", "-n", "1", "--seed", "3", "--record", str(tmp_path)])
    assert out.exit_code == 0, out.output
    rec = tmp_path / "game-0001.jsonl"
    res = runner.invoke(app, ["review", str(rec), "--deal", "2", "--seat", "1", "--json",
                              "--budget", "worlds=2,candidates=2,belief=1,solver=0", "--workers", "1"])
    assert res.exit_code == 0, res.output
    review = json.loads(res.output)
    # every action of seat 1 in the record's second deal is an entry, in order
    events = [json.loads(line) for line in rec.read_text().splitlines()[1:]]
    starts = [i for i, ev in enumerate(events) if ev["type"] == "deal"]
    second = events[starts[1]: starts[2] if len(starts) > 2 else len(events)]
    mine = [ev["action"] for ev in second if ev["type"] == "action" and ev["seat"] == 1]
    assert [e["played"] for e in review["decisions"]] == mine
    assert review["seat"] == 1 and review["deal"]["number"] == 2 and review["deal"]["deals"] == len(starts)
    for e in review["decisions"]:
        assert set(e) >= {"played", "best_alternative", "view", "real", "cost", "severity", "evaluated"}
        if e["evaluated"]:
            for view in ("view", "real"):
                for key in ("played", "best_alternative"):
                    est = e[view][key]
                    assert 0.0 <= est["win"] <= 1.0 and set(est) == {"win", "levels", "n", "method"}
        else:
            assert e["note"]
    assert any(e["evaluated"] for e in review["decisions"])
    # the table form runs too, and a bad record is an error with status 1
    table = runner.invoke(app, ["review", str(rec), "--budget", "worlds=1,candidates=2,belief=1,solver=0",
                                "--workers", "0"], env={"COLUMNS": "80"})
    assert table.exit_code == 0 and "Review: seat 0" in table.output
    # at 80 columns every heading is whole and no line is longer
    head = next(line for line in table.output.splitlines() if "played" in line and "mark" in line)
    assert head.split() == ["#", "played", "win%", "lv", "best", "alt", "win%", "lv", "real", "real", "alt", "mark"]
    assert max(len(line) for line in table.output.splitlines()) <= 80
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{}\n")
    assert runner.invoke(app, ["review", str(bad)]).exit_code == 1


def _hands_through_the_record(lines, deal_no):
    """Each action of the ``deal_no``-th deal of a record with the acting seat's hand just before
    it, and the four hands when the play phase starts, from the record's events alone: the deal's
    hands, then the tributes paid and returns revealed (R44-R47), then the cards of each play."""
    events = [json.loads(line) for line in lines[1:]]
    starts = [i for i, ev in enumerate(events) if ev["type"] == "deal"]
    end = starts[deal_no] if deal_no < len(starts) else len(events)
    hands = None
    start = None
    seen = []
    for ev in events[starts[deal_no - 1]:end]:
        if ev["type"] == "deal":
            hands = [list(h) for h in ev["hands"]]
        elif ev["type"] == "tribute_paid":
            for payer, receiver, card in ev["tributes"]:
                hands[payer].remove(card)
                hands[receiver].append(card)
        elif ev["type"] == "returns_revealed":
            for receiver, target, card in ev["returns"]:
                hands[receiver].remove(card)
                hands[target].append(card)
        elif ev["type"] == "action" and ev["action"][0] not in ("tribute", "return"):
            if start is None:
                start = [sorted(h) for h in hands]
            seat = ev["seat"]
            seen.append((seat, ev["action"], sorted(hands[seat])))
            for card in ev["action"][2]:
                hands[seat].remove(card)
    return seen, start


def _board_with_tribute_paid(seed):
    for b in deal_board_set(8, seed=seed, tribute_share=1.0):
        if b.tribute.tributes:  # cards were exchanged (not an anti-tribute, R48)
            return b
    raise AssertionError("no board with a tribute paid")


@pytest.mark.parametrize("seed", [4, 6])
def test_a_board_that_began_with_tribute_is_reviewed_from_the_hands_after_the_exchange(seed):
    board = _board_with_tribute_paid(seed)
    play = play_board(board, [HeuristicAgent(s) for s in range(4)])
    lines = board_record_lines(play)
    seen, start = _hands_through_the_record(lines, 1)
    assert start != [sorted(cards_text(h).split()) for h in board.hands]  # the exchange moved cards
    payers = {p for p, _r, _f in board.tribute.tributes}
    for seat in range(4):
        dd = deal_decisions(lines, seat, 1)
        # the exchange is the board's, not the seat's: the seat's decisions are its plays, in order
        mine = [(act, hand) for s, act, hand in seen if s == seat]
        assert [action_to_json(d.played) for d in dd.decisions] == [act for act, _h in mine]
        assert all(d.phase == "play" for d in dd.decisions)
        # each position holds the hand the seat actually played from, in its view and in the real deal
        for d, (_act, hand) in zip(dd.decisions, mine):
            assert sorted(cards_text(d.view.hand).split()) == hand
            assert sorted(cards_text(faces_of(d.real.hands[seat])).split()) == hand
        assert [sorted(h) for h in dd.start_hands] == start
        if seat in payers:  # the payer's first play is reviewed (R49: a payer leads)
            review = review_lines(lines, seat, 1, Budget(worlds=2, candidates=2, belief=1, solver_nodes=0),
                                  workers=0, only=[0])
            e = review["decisions"][0]
            assert e["played"] == mine[0][0] and e["hand"] == len(mine[0][1]) == 27
            assert [sorted(h) for h in review["deal"]["start_hands"]] == start


def test_a_game_deal_that_began_with_tribute_is_reviewed_from_the_hands_after_the_exchange():
    g = Game(seed=3)
    agents = [HeuristicAgent(s) for s in range(4)]
    while g.deal_number < 3:
        s = g.to_act()
        g.apply(agents[s].act(seat_view(g, s)), s)
    lines = record_lines(g)
    events = [json.loads(line) for line in lines[1:]]
    assert any(ev["type"] == "tribute_paid" for ev in events)  # deal 2 began with tribute (R43)
    seen, start = _hands_through_the_record(lines, 2)
    for seat in range(4):
        dd = deal_decisions(lines, seat, 2)
        plays = [d for d in dd.decisions if d.phase == "play"]
        mine = [(act, hand) for s, act, hand in seen if s == seat]
        assert [action_to_json(d.played) for d in plays] == [act for act, _h in mine]
        for d, (_act, hand) in zip(plays, mine):
            assert sorted(cards_text(d.view.hand).split()) == hand
        assert [sorted(h) for h in dd.start_hands] == start


def test_guandan_review_refuses_a_bad_cache_path(tmp_path):
    from guandan.review import review_key

    lines = record_lines(Game(seed=1, first_leader=0))  # one deal, nothing played yet: a quick review
    rec = tmp_path / "game.jsonl"
    rec.write_text("\n".join(lines) + "\n", encoding="utf-8")
    budget = "worlds=1,candidates=2,belief=1,solver=0"
    args = ["review", str(rec), "--json", "--workers", "0", "--budget", budget, "--cache"]
    runner = CliRunner()
    good = runner.invoke(app, [*args, str(tmp_path / "cache")])  # a new directory in an existing one
    assert good.exit_code == 0, good.output
    assert len(list((tmp_path / "cache").glob("*.json"))) == 1
    a_file = tmp_path / "a-file"
    a_file.write_text("not a directory\n")
    bad_paths = [a_file, tmp_path / "missing" / "cache", a_file / "cache"]
    if os.geteuid() != 0:  # root writes into a read-only directory anyway
        ro = tmp_path / "read-only"
        ro.mkdir()
        ro.chmod(0o500)
        bad_paths.append(ro)
    for path in bad_paths:
        res = runner.invoke(app, [*args, str(path)])
        # a bad option: status 2, one line on stderr, no traceback, nothing reviewed or created
        assert res.exit_code == 2 and isinstance(res.exception, SystemExit), (path, res.output)
        assert res.stderr.startswith(f"error: --cache {path}: ") and res.stderr.count("\n") == 1, res.stderr
        assert res.stdout == ""
    assert not (tmp_path / "missing").exists() and a_file.read_text() == "not a directory\n"
    # the cache directory is fine but the review's own file cannot be written (a directory holds
    # its name): status 1 and one line, not a traceback
    key = review_key(lines, 0, 1, Budget.parse(budget), 0)
    (tmp_path / "cache2" / f"{key}.json").mkdir(parents=True)
    res = runner.invoke(app, [*args, str(tmp_path / "cache2")])
    assert res.exit_code == 1 and isinstance(res.exception, SystemExit), res.output
    assert res.stderr.startswith(f"error: --cache {tmp_path / 'cache2'}: ") and res.stderr.count("\n") == 1
    assert "Traceback" not in res.output


@pytest.mark.parametrize("command", ["review", "replay"])
def test_review_and_replay_report_an_unreadable_record_the_same_way(tmp_path, command):
    # both commands read the record through one helper: one line on stderr, status 1
    runner = CliRunner()
    missing = tmp_path / "none.jsonl"
    res = runner.invoke(app, [command, str(missing)])
    assert res.exit_code == 1 and isinstance(res.exception, SystemExit)
    assert res.stderr == f"error: cannot read {missing}: No such file or directory\n"
    latin = tmp_path / "latin1.jsonl"
    latin.write_bytes(record_lines(Game(seed=1))[0].encode() + b"\n\xe9t\xe9\n")
    res = runner.invoke(app, [command, str(latin)])
    assert res.exit_code == 1 and isinstance(res.exception, SystemExit)
    assert res.stderr.startswith(f"error: {latin}: line 2: not UTF-8 text") and res.stderr.count("\n") == 1
