"""The exact endgame solver (agents/endgame.py): hand-checked positions and a differential test
against plain exhaustive minimax (docs/rules.md R23-R35)."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from guandan.agents.endgame import EndgameSolver, SolveStopped, solve, solve_actions
from guandan.core.cards import parse_cards
from guandan.core.deal import Deal, team_of
from guandan.core.plays import PAIR, SINGLE
from guandan.core.rules import RuleSet

RULES = RuleSet()
LEVEL_2 = 0  # level rank 2: the wild is 2H, which no hand below holds (R8)


def _deal(hands: list[str], leader: int = 0, level: int = LEVEL_2) -> Deal:
    return Deal(RULES, level, [parse_cards(h) for h in hands], random.Random(0), first_leader=leader)


def _single(card: str) -> tuple[str, int, tuple[int, ...]]:
    (f,) = parse_cards(card)
    return (SINGLE, f >> 2, (f,))


def test_leader_who_can_go_out_wins() -> None:
    # R27: the leader plays any combination; the pair is the whole hand (R31), so seat 0 is 头游
    # and team 0 wins the deal (R35) whatever the others hold
    d = _deal(["5S 5H", "AS AH", "KS", "QS"])
    assert solve(d, 0, 10) is True
    assert solve(d, 1, 10) is False


def test_opponent_single_ace_goes_out_over_any_lead() -> None:
    # seat 0 holds 3 and 4: no two-card play (R19), so it leads a single (R27); seat 1 beats it
    # with the single ace (R23, higher key) and is out first: team 1 wins (R33, R35)
    d = _deal(["3S 4S", "AS", "KS KH", "QS QH"])
    assert solve(d, 0, 1000) is False
    assert solve(d, 1, 1000) is True


def test_leading_the_pair_loses_leading_a_single_wins() -> None:
    # seat 0: 5 5 9; seat 1 (opponent): pair of 6s; seat 2 (partner): a single ace.
    # Leading the pair of 5s lets seat 1 go out with its pair of 6s (R23, R31): team 1 wins.
    # Leading a single 5 or the 9: seat 1 can pass or play one 6 (R28) and keeps a card, and
    # seat 2 goes out with the ace over either (R23): team 0 wins (R35).
    d = _deal(["5S 5H 9S", "6S 6H", "AS", "7S 7H"])
    fives = parse_cards("5S 5H")
    pair = (PAIR, 3, fives)
    acts = [pair, _single("5S"), _single("9S")]
    assert solve_actions(d, 0, acts, 10_000) == [False, True, True]
    assert solve(d, 0, 10_000) is True
    assert d.n_cards == [3, 2, 1, 2] and d.turn == 0 and d.top is None  # left as given


def test_trick_returns_to_the_ace() -> None:
    # seat 0 leads the ace single: no single beats it and nobody has a bomb, so all three pass
    # (R28) and the trick ends with seat 0 leading again (R29); it then goes out with the 3 (R31)
    d = _deal(["AS 3S", "KS KH", "QS QH", "JS JH"])
    assert solve_actions(d, 0, [_single("AS")], 1000) == [True]


def test_bomb_beats_the_ace_and_goes_out() -> None:
    # a four-card bomb beats any non-bomb (R25) and empties seat 1's hand (R31): team 1 wins
    d = _deal(["AS 3S", "4S 4H 4C 4D", "KS KH", "QS QH"])
    assert solve(d, 1, 1000) is True


def test_straight_flush_kept_by_the_right_single() -> None:
    # seat 3 led the single 6C; seat 0 holds the spade run 3-7 and 7H. Over the 6 (R23):
    # * single 7H keeps the straight flush, a bomb (R19, R24): whatever seat 1 does (pass lets
    #   seat 2 out with the 8, R31; A or K is bombed by the flush, R25, which empties the hand),
    #   team 0 is out first (R35);
    # * single 7S leaves 3S 4S 5S 6S 7H, a plain straight: seat 1 plays the KC (if it passed,
    #   seat 2 would go out with the 8), nobody beats it (no single above K except seat 1's
    #   own A, no bomb), seat 1 leads again (R29) and goes out with KD then AD: team 1.
    # Suits decide here, so the flush hand must not be keyed by ranks only.
    d = _deal(["3S 4S 5S 6S 7S 7H", "AD KC KD", "8C", "6C 9D"], leader=3)
    d.apply(_single("6C"))
    assert solve_actions(d, 0, [_single("7S"), _single("7H")], 100_000) == [False, True]
    assert solve_actions(d, 0, [_single("7H"), _single("7S")], 100_000) == [True, False]


def test_budget_exhausted_returns_none() -> None:
    d = _deal(["5S 5H 9S", "6S 6H", "AS", "7S 7H"])
    assert solve(d, 0, 1) is None  # the root alone is one node; its first move is a second
    assert solve_actions(d, 0, [_single("5S")], 1) == [None]
    assert d.n_cards == [3, 2, 1, 2] and d.turn == 0  # left as given
    assert solve(d, 0, 10_000) is True  # and a fresh solve still settles it


def test_should_stop_raises() -> None:
    d = _deal(["3S 4S 5H 6C 8D 9S", "3H 4H 5C 7D 9H JS", "3C 5D 6H 8S TC QD", "4C 6D 7S 8H TD KS"])
    s = EndgameSolver(d, should_stop=lambda: True)
    with pytest.raises(SolveStopped):
        s.solve(0, 10**9)
    assert d.n_cards == [6, 6, 6, 6] and d.turn == 0


def test_rejects_a_deal_with_a_seat_out() -> None:
    d = _deal(["5S 5H", "AS AH", "KS", "QS"])
    d.apply((PAIR, 3, parse_cards("5S 5H")))
    with pytest.raises(ValueError):
        EndgameSolver(d)


# -- differential: TT, suit-free keys, move merging and the going-out cut vs plain minimax ---------
def _minimax(deal: Deal, team: int) -> bool:
    """Plain exhaustive minimax through the checked engine: every legal action, no table, no
    cut; the value is fixed when the first seat goes out (R33/R35)."""
    if deal.finished:
        return team_of(deal.finished[0]) == team
    vals = []
    for a in deal.legal_actions():
        d = deal.clone()
        d.apply(a)
        vals.append(_minimax(d, team))
    seat = deal.turn
    assert seat is not None
    return any(vals) if team_of(seat) == team else all(vals)


# ranks 3..7 in all suits (five consecutive ranks: straights and straight flushes possible),
# the jokers, each face twice (R1); at level 3 the wild is 3H (R8)
_POOL = [r * 4 + s for r in range(1, 6) for s in range(4)] * 2 + [52, 52, 53, 53]


@st.composite
def _positions(draw: st.DrawFn) -> tuple[Deal, int]:
    cards = list(draw(st.permutations(_POOL)))
    flush = draw(st.booleans())
    sizes = [draw(st.integers(1, 2 if flush else 3)) for _ in range(4)]
    big = draw(st.integers(0, 3))
    sizes[big] = draw(st.integers(1, 5))
    hands: list[list[int]] = []
    if flush:
        # a straight flush 3-7 of one suit (R19), or the same straight with one card of
        # another suit: suits matter for this hand (R24)
        suit = draw(st.integers(0, 3))
        run = [r * 4 + suit for r in range(1, 6)]
        if draw(st.booleans()):
            i = draw(st.integers(0, 4))
            run[i] = (run[i] & ~3) | ((suit + 1) & 3)
        for f in run:
            cards.remove(f)
        hands_big = run
    else:
        hands_big = []
    i = 0
    for seat, n in enumerate(sizes):
        if seat == big and hands_big:
            hands.append(hands_big)
            continue
        hands.append(cards[i:i + n])
        i += n
    level = draw(st.sampled_from([1, 4, 12]))
    leader = draw(st.integers(0, 3))
    d = Deal(RULES, level, hands, random.Random(0), first_leader=leader)
    # sometimes start inside a trick: the leader's play (not going out) and a few answers
    for _ in range(draw(st.integers(0, 3))):
        seat = d.turn
        assert seat is not None
        acts = [a for a in d.legal_actions() if len(a[2]) < d.n_cards[seat]]
        if not acts:
            break
        d.apply(acts[draw(st.integers(0, len(acts) - 1))])
    return d, draw(st.integers(0, 1))


@settings(max_examples=50, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(_positions())
def test_solver_equals_plain_minimax(pos: tuple[Deal, int]) -> None:
    deal, team = pos
    want = _minimax(deal.clone(), team)
    assert solve(deal, team, 10**7) is want
    acts = deal.legal_actions()[:]
    got = solve_actions(deal, team, acts, 10**7)
    for a, v in zip(acts, got):
        d = deal.clone()
        d.apply(a)
        assert v is _minimax(d, team), a


# -- the solver inside the search (hard:solver=NODES) -------------------------------------------
def _small_late_view(seed: int, max_total: int = 30):
    """A play-phase view of heuristic self-play with a choice, nobody out and at most
    ``max_total`` cards left in all."""
    from guandan.agents.heuristic import HeuristicAgent
    from guandan.core.match import Game
    from guandan.core.views import seat_view

    h = HeuristicAgent(1)
    for g in range(seed, seed + 20):
        game = Game(seed=g)
        while not game.settlements:
            seat = game.to_act()
            assert seat is not None
            v = seat_view(game, seat)
            if (v.phase == "play" and len(v.legal_actions) > 1 and not v.finished
                    and sum(game.deal.n_cards) <= max_total):
                return v
            game.apply(h.act(v), seat)
    raise AssertionError("no small late position")


def _solver_agent(**kw):
    from guandan.agents.fast_rollout import FastRolloutPolicy
    from guandan.agents.search import SearchAgent

    return SearchAgent(seed=3, worlds=4, workers=1, late_cards=10, late_rollout_policy=FastRolloutPolicy(),
                       solver_nodes=20_000, **kw)


def test_search_rolls_out_only_the_worlds_the_solver_does_not_settle(monkeypatch) -> None:
    import guandan.agents.search as search

    view = _small_late_view(500, 20)
    calls = []
    real = search.rollout

    def counted(*a, **k):
        calls.append(1)
        return real(*a, **k)

    monkeypatch.setattr(search, "rollout", counted)
    agent = _solver_agent()
    choice = agent.act(view)
    assert agent.failures == 0 and choice in view.legal_actions
    k = len(agent.last.candidates)
    assert agent.last.worlds == 4 and 1 <= agent.last.solved <= 4
    assert len(calls) == (4 - agent.last.solved) * k
    calls.clear()
    off = _solver_agent(solver_cards=10)  # too many cards left for the solver: rollouts only
    off.act(view)
    assert off.last.solved == 0 and len(calls) == 4 * len(off.last.candidates)


def test_search_with_the_solver_is_deterministic() -> None:
    view = _small_late_view(501)
    a, b = _solver_agent(), _solver_agent()
    assert a.act(view) == b.act(view)
    assert a.last.means == b.last.means and a.last.candidates == b.last.candidates


def test_solver_options_in_specs() -> None:
    from guandan.agents.levels import parse_spec

    assert parse_spec("hard:solver=2000,solver_cards=30") == (
        "search", {"solver_nodes": 2000, "solver_cards": 30})
    with pytest.raises(ValueError):
        _solver_agent(solver_cards=-1)


@st.composite
def _bigger_positions(draw: st.DrawFn) -> tuple[Deal, int]:
    cards = list(draw(st.permutations(_POOL)))
    sizes = [draw(st.integers(3, 5)) for _ in range(4)]
    hands, i = [], 0
    for n in sizes:
        hands.append(cards[i:i + n])
        i += n
    level = draw(st.sampled_from([1, 4, 12]))
    d = Deal(RULES, level, hands, random.Random(0), first_leader=draw(st.integers(0, 3)))
    return d, draw(st.integers(0, 1))


@settings(max_examples=25, deadline=None, derandomize=True)
@given(_bigger_positions())
def test_table_changes_no_value(pos: tuple[Deal, int]) -> None:
    # positions big enough for transpositions (cards played in another order): the table's key
    # (hands, seat to act, top play's key and seat, R29) must not merge positions of other values
    deal, team = pos
    acts = deal.legal_actions()[:]
    with_table = EndgameSolver(deal).solve_actions(team, acts, 200_000)
    plain = EndgameSolver(deal, table=False)
    without = plain.solve_actions(team, acts, 200_000)
    for a, b in zip(with_table, without):
        assert a is b or b is None


def test_time_budget_stops_the_solver_inside_the_search() -> None:
    # a big position (every card counted, no card limit) and no node limit: only the clock can
    # stop the solver (asked every STOP_EVERY nodes); the unfinished world is not counted and
    # the search answers the heuristic's move in time
    from guandan.agents.fast_rollout import FastRolloutPolicy
    from guandan.agents.search import SearchAgent

    class Clock:
        def __init__(self) -> None:
            self.t, self.reads = 0.0, 0

        def __call__(self) -> float:
            self.reads += 1
            self.t += 0.001
            return self.t

    view = _small_late_view(500, 108)
    clock = Clock()
    agent = SearchAgent(seed=3, budget_s=0.05, workers=1, late_cards=None, clock=clock,
                        late_rollout_policy=FastRolloutPolicy(), solver_nodes=10**9, solver_cards=108)
    act = agent.act(view)
    assert act in view.legal_actions and agent.failures == 0
    assert clock.reads < 200
    assert agent.last.worlds == 0 and agent.last.solved == 0  # the stopped world counts for nothing
