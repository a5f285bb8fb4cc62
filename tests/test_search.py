"""The search bot and the difficulty levels (guandan.agents.search, .easy, .levels).

Search: deterministic for a seed in rollout-count mode (also across worker counts), stops by an
injected clock (anytime), falls back to the heuristic's move on any failure, only ever answers
a legal action. Levels: every name plays a complete game; the easy level never gives a bomb
away where the heuristic keeps it. No timed assertions (strength and speed are arena figures).
"""

from __future__ import annotations

import random

import pytest

from guandan.agents import AGENT_NAMES, make_agent
from guandan.agents.driver import run_game
from guandan.agents.easy import EasyAgent
from guandan.agents.heuristic import HeuristicAgent
from guandan.agents.levels import LEVEL_NAMES, parse_spec
from guandan.agents.search import SearchAgent, candidate_actions, rollout
from guandan.core.match import Game
from guandan.core.plays import BOMB_TYPES, PASS
from guandan.core.views import seat_view
from guandan.core.worlds import sample_world, world_deal


def _views(seed: int, n: int, min_choices: int = 3, skip: int = 0):
    """Play-phase views with a real choice, from heuristic self-play of game ``seed``, after
    ``skip`` actions (later positions make shorter rollouts)."""
    game = Game(seed=seed)
    h = HeuristicAgent()
    out = []
    k = 0
    while not game.settlements and len(out) < n:
        seat = game.to_act()
        v = seat_view(game, seat)
        k += 1
        if k > skip and v.phase == "play" and len(v.legal_actions) >= min_choices:
            out.append(v)
        game.apply(h.act(v), seat)
    return out


class FakeClock:
    """A clock that advances ``step`` seconds each time it is read."""

    def __init__(self, step: float) -> None:
        self.t = 0.0
        self.step = step
        self.reads = 0

    def __call__(self) -> float:
        self.reads += 1
        self.t += self.step
        return self.t


def test_rollout_count_mode_is_deterministic_for_a_seed():
    views = _views(1, 2, skip=40)
    assert len(views) == 2
    for v in views:
        a = SearchAgent(seed=7, worlds=3)
        b = SearchAgent(seed=7, worlds=3)
        assert a.act(v) == b.act(v)
        assert a.last.means == b.last.means and a.last.worlds == 3
        assert a.last.candidates == b.last.candidates


def test_other_seed_samples_other_worlds():
    """World i of a decision is drawn from Random("seed:game:deal:actions:seat:i")."""
    v = _views(2, 1)[0]
    from guandan.core.worlds import WorldConstraints

    cons = WorldConstraints(v)
    assert cons.sample(random.Random("1:1:1:%d:%d:0" % (len(v.history), v.seat))) != cons.sample(
        random.Random("2:1:1:%d:%d:0" % (len(v.history), v.seat))
    )


def test_parallel_workers_give_the_same_choice_as_one_process():
    v = _views(3, 1, skip=40)[0]
    one = SearchAgent(seed=5, worlds=3, workers=1)
    two = SearchAgent(seed=5, worlds=3, workers=2)
    assert one.act(v) == two.act(v)
    assert two.failures == 0 and two.pool_failures == 0, two.last_error
    assert one.last.means == two.last.means and two.last.worlds == 3


def test_time_budget_stops_the_anytime_loop_by_the_clock():
    """Each clock read advances 0.01 s; with a 0.05 s budget the search must stop after a few
    reads and still answer legally (the best so far, or the heuristic's move with no world)."""
    v = _views(4, 1)[0]
    clock = FakeClock(0.01)
    agent = SearchAgent(seed=1, budget_s=0.05, clock=clock)
    act = agent.act(v)
    assert act in v.legal_actions
    assert agent.failures == 0
    assert clock.reads < 60  # a run-away loop would read the clock hundreds of times
    assert agent.last.seconds <= 0.05 + 0.01 * 10


def test_big_budget_fake_clock_completes_worlds():
    v = _views(4, 1, skip=30)[0]
    clock = FakeClock(1e-5)
    agent = SearchAgent(seed=1, budget_s=0.002, clock=clock)
    agent.act(v)
    assert agent.last.worlds >= 1
    assert len(agent.last.means) == len(agent.last.candidates)


def test_failure_falls_back_to_the_heuristic_move(monkeypatch):
    v = _views(5, 1)[0]
    agent = SearchAgent(seed=1, worlds=2)

    def broken(*_a, **_k):
        raise RuntimeError("sampler exploded")

    monkeypatch.setattr("guandan.agents.search.WorldConstraints", broken)
    act = agent.act(v)
    assert act == HeuristicAgent().act(v)
    assert agent.failures == 1 and agent.last.fell_back


def test_candidates_are_legal_distinct_and_lead_with_the_heuristic_move():
    h = HeuristicAgent()
    for v in _views(6, 12, min_choices=2):
        first = h.act(v)
        cands = candidate_actions(v, h, first, limit=5)
        assert cands[0] == first
        assert len(cands) == len(set(cands)) <= 5
        assert all(c in v.legal_actions for c in cands)
        if v.top is not None:
            assert PASS in cands  # following: passing is always compared (R28)
            bombs = [a for a in v.legal_actions if a[0] in BOMB_TYPES]
            if bombs and first[0] not in BOMB_TYPES:
                assert any(c[0] in BOMB_TYPES for c in cands)


def test_rollout_ends_the_deal_with_a_result():
    v = _views(7, 1)[0]
    deal = world_deal(v, sample_world(v, random.Random(1)))
    win, levels = rollout(deal, HeuristicAgent(), v.seat & 1)
    assert deal.result is not None
    assert win in (1, -1) and abs(levels) in (1, 2, 3) and (win > 0) == (levels > 0)
    assert (deal.result.winner_team == (v.seat & 1)) == (win == 1)


def test_bad_arguments_are_rejected():
    with pytest.raises(ValueError):
        SearchAgent(budget_s=0)
    for never_decides in (float("inf"), 1e9):  # "hard:budget=inf" used to hang the arena
        with pytest.raises(ValueError, match="at most 3600 seconds"):
            SearchAgent(budget_s=never_decides)
    with pytest.raises(ValueError):
        SearchAgent(worlds=0)
    with pytest.raises(ValueError):
        SearchAgent(workers=0)
    with pytest.raises(ValueError):
        SearchAgent(rollout_depth=5)
    with pytest.raises(ValueError):
        EasyAgent(mistake_rate=2)


def test_value_function_hook_cuts_rollouts():
    v = _views(8, 1, skip=20)[0]
    calls = []

    def value_fn(deal, team):
        calls.append(team)
        return 0.0

    agent = SearchAgent(seed=1, worlds=2, value_fn=value_fn, rollout_depth=3)
    agent.act(v)
    assert calls and agent.last.worlds == 2
    assert agent.last.means == [0.0] * len(agent.last.candidates)
    assert agent.last.chosen == agent.last.candidates[0]  # no evidence against the heuristic's move


def test_level_names_and_specs():
    assert set(LEVEL_NAMES) <= set(AGENT_NAMES)
    assert {"random", "heuristic"} <= set(AGENT_NAMES)
    assert type(make_agent("normal", 1)) is HeuristicAgent
    hard = make_agent("hard:budget=0.2,workers=1,worlds=3", 1)
    assert isinstance(hard, SearchAgent) and hard.budget_s == 0.2 and hard.workers == 1 and hard.worlds == 3
    assert isinstance(make_agent("easy", 1), EasyAgent)
    assert parse_spec("easy:mistakes=0.5") == ("easy", {"mistake_rate": 0.5})
    with pytest.raises(ValueError, match="valid options"):
        make_agent("hard:speed=3", 1)
    with pytest.raises(ValueError, match="valid agents"):
        make_agent("genius", 1)
    with pytest.raises(ValueError):
        make_agent("heuristic:budget=1", 1)


def test_easy_never_gives_away_a_bomb_the_heuristic_keeps():
    """Over many decisions (mistake rate 1: a mistake wherever one is allowed), easy plays a
    bomb only where the heuristic plays one, never beats its partner where the heuristic passes,
    and goes out whenever the heuristic goes out (R31)."""
    h = HeuristicAgent()
    easy = EasyAgent(seed=3, mistake_rate=1.0)
    checked = 0
    for seed in (11, 12):
        for v in _views(seed, 200, min_choices=2):
            best = h.act(v)
            got = easy.act(v)
            assert got in v.legal_actions
            if got[0] in BOMB_TYPES:
                assert best[0] in BOMB_TYPES
            if v.top_seat == (v.seat + 2) % 4 and best == PASS:
                assert got == PASS
            if len(best[2]) == len(v.hand):
                assert got == best
            checked += 1
    assert checked > 50 and easy.mistakes > 10


@pytest.mark.parametrize(
    "name", ["random", "heuristic", "easy", "normal", "hard:worlds=1,candidates=2,workers=1"]
)
def test_each_level_plays_a_complete_game(name):
    """A whole game (level 2 to passing A) with the agent in seats 0 and 2 against the heuristic;
    the driver checks every action (``apply``)."""
    agents = [make_agent(name, 10 + s) if s % 2 == 0 else HeuristicAgent() for s in range(4)]
    game = Game(seed=21)
    if name.startswith("hard"):
        # keep CI fast: the search plays one whole deal, the heuristic the rest of the game
        while not game.settlements:
            seat = game.to_act()
            game.apply(agents[seat].act(seat_view(game, seat)), seat)
        assert game.settlements[0].result in ("1-2", "1-3", "1-4")
        assert all(a.failures == 0 for a in agents[::2])
        return
    run_game(game, agents)
    assert game.over and game.winner in (0, 1)


@pytest.mark.slow
def test_hard_with_a_tiny_budget_plays_a_whole_game():
    """CI smoke game of ``hard`` with a tiny time budget: a complete game, every action legal."""
    agents = [make_agent("hard:budget=0.02,workers=1", s) if s % 2 == 0 else HeuristicAgent()
              for s in range(4)]
    game = Game(seed=22)
    run_game(game, agents)
    assert game.over
    assert all(a.failures == 0 for a in agents[::2])


@pytest.mark.parametrize("command", [["arena", "--help"], ["play", "--help"], ["simulate", "--help"],
                                     ["compat", "join", "--help"]])
def test_bot_options_list_the_levels(command):
    from typer.testing import CliRunner

    from guandan.cli import app

    out = CliRunner().invoke(app, command, env={"COLUMNS": "200"}).output
    for name in ("easy", "normal", "hard", "heuristic", "random"):
        assert name in out, f"{' '.join(command)} does not list {name}"


def test_simulate_accepts_a_level_and_rejects_a_bad_option():
    from typer.testing import CliRunner

    from guandan.cli import app

    runner = CliRunner()
    res = runner.invoke(app, ["simulate", "-n", "1", "--bot", "hard:speed=2"])
    assert res.exit_code == 2 and "valid options" in res.output


def test_a_broken_worker_pool_falls_back_to_searching_in_process(monkeypatch):
    from concurrent.futures.process import BrokenProcessPool

    def broken(_workers):
        raise BrokenProcessPool("a worker died")

    monkeypatch.setattr("guandan.agents.search._pool", broken)
    v = _views(9, 1, skip=40)[0]
    agent = SearchAgent(seed=1, worlds=2, workers=2)
    ref = SearchAgent(seed=1, worlds=2, workers=1)
    assert agent.act(v) == ref.act(v)
    assert agent.pool_failures == 1 and agent.failures == 0 and agent.last.worlds == 2


def test_switching_needs_a_significant_paired_gain():
    """_select keeps the heuristic's move (index 0) unless another candidate wins on the same
    worlds by more than the margin with switch_z standard errors to spare."""
    agent = SearchAgent(seed=1, worlds=10, prior_bonus=0.02, switch_z=2.0, min_worlds=4)
    u = 1000  # one deal win in the integer sums
    # 10 worlds: candidate 1 wins every world the heuristic's move loses (diff +2 wins each)
    # layout: score sums, sums of squared differences to candidate 0, sum of weights, of squares
    sums = [-10 * u, 10 * u, 10 * (2 * u) ** 2 * 0, 10 * (2 * u) ** 2, 10, 10]
    assert agent._select(sums, 2, 10) == 1
    # candidate 1 better on average (+0.4) but by +2 on 6 worlds and -2 on 4: not significant
    sums = [0, 4 * u, 0, 10 * (2 * u) ** 2, 10, 10]
    assert agent._select(sums, 2, 10) == 0
    # too few worlds to overrule the heuristic
    assert agent._select([-3 * u, 3 * u, 0, 3 * (2 * u) ** 2, 3, 3], 2, 3) == 0
    # weighted worlds: equal weights change nothing; one world carrying almost all the weight
    # leaves an effective size near 1 world, below min_worlds: the heuristic's move stands
    w = [4] * 10
    sums = [-sum(w) * u, sum(w) * u, 0, sum(w) * (2 * u) ** 2, sum(w), sum(x * x for x in w)]
    assert agent._select(sums, 2, 10) == 1
    w = [1000] + [1] * 9
    sums = [-sum(w) * u, sum(w) * u, 0, sum(w) * (2 * u) ** 2, sum(w), sum(x * x for x in w)]
    assert agent._select(sums, 2, 10) == 0


@pytest.mark.slow
def test_hard_searches_through_the_competition_protocol_without_falling_back():
    """``compat join --bot hard`` path: the protocol client's views (history, counts, trick as the
    protocol gives them) feed the world sampler and the search runs on most decisions.

    Known gap outside the search (compat/client.py): the client reads a new deal's first plays
    with the previous deal's level (``beginning`` carries no ``curRank`` yet), so a play can be
    missing from its history; the sampler then finds the counts inconsistent and the search
    falls back to the heuristic for the rest of that deal (about 1 decision in 10 here)."""
    import asyncio

    from guandan.compat.client import join
    from guandan.compat.host import CompatHost
    from test_compat_host import run_table

    bots = [make_agent("hard:worlds=1,candidates=2,workers=1,late=all", seed=i) if i % 2 == 0
            else make_agent("heuristic", seed=i) for i in range(4)]
    host = CompatHost(games=1, timeout=30, seed=8)
    clients = [lambda url, i=i: join(url, bots[i]) for i in range(4)]
    summary, _results = asyncio.run(run_table(clients, host))
    assert summary.games == 1 and sum(summary.fallback_decisions) == 0
    searched = sum(len(b.worlds_log) for b in bots[::2])
    failed = sum(b.failures for b in bots[::2])
    assert searched > 20
    assert failed <= searched // 4, [b.last_error for b in bots[::2]]
    for b in bots[::2]:
        assert b.last_error is None or b.last_error.startswith("InconsistentView"), b.last_error


# -- late-position search (late_cards) ------------------------------------------------------------


def _random_views(seed: int, n: int) -> list:
    """Play-phase views of the seat to act from games of random legal moves (any position)."""
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        game = Game(seed=rng.getrandbits(32))
        while not game.over and len(out) < n:
            seat = game.to_act()
            v = seat_view(game, seat)
            if v.phase == "play" and rng.random() < 0.2:
                out.append(v)
            game.apply(rng.choice(v.legal_actions), seat)
    return out


def test_rollout_policies_play_only_legal_moves_over_random_positions():
    """Every rollout policy answers one of the view's legal actions (R23-R28) in positions
    reached by random play (odd hands, wilds, bombs, finished seats)."""
    from guandan.agents.search import RolloutPolicy

    policies = [RolloutPolicy(1), HeuristicAgent(1)]
    views = _random_views(11, 150)
    for v in views:
        for p in policies:
            assert p.act(v) in v.legal_actions


def test_is_late_reads_the_smallest_hand_still_playing():
    from guandan.agents.search import is_late

    for v in _random_views(12, 60):
        counts = [len(v.hand) if s == v.seat else v.card_counts[s] for s in range(4) if s not in v.finished]
        assert is_late(v, 10) == (min(counts) <= 10)
        assert is_late(v, 27)  # a hand never holds more than 27 cards in the play phase (R4)


def test_early_positions_are_answered_by_the_heuristic_without_search():
    """With late_cards, a position where every hand is big is the heuristic's move and no world is
    sampled (counted in ``skipped``); a late position is searched."""
    early = [v for v in _views(13, 6) if all((n or 27) > 10 for n in v.card_counts)]
    assert early
    agent = SearchAgent(seed=1, worlds=2, late_cards=10)
    for v in early:
        assert agent.act(v) == HeuristicAgent().act(v)
        assert agent.last.worlds == 0
    assert agent.skipped == len(early) and agent.worlds_log == []
    late = next(v for v in _views(13, 200, min_choices=2) if min(n for n in v.card_counts if n) <= 10)
    agent.act(late)
    assert agent.last.worlds == 2 and agent.skipped == len(early)


def test_late_candidates_are_widened_with_other_legal_actions():
    from guandan.agents.search import is_late

    h = HeuristicAgent()
    seen = 0
    for v in _views(14, 300, min_choices=2):
        if not is_late(v, 10):
            continue
        first = h.act(v)
        short = candidate_actions(v, h, first, limit=8)
        wide = candidate_actions(v, h, first, limit=8, widen=True)
        assert wide[: len(short)] == short and wide[0] == first
        assert len(set(wide)) == len(wide) <= 8 and all(a in v.legal_actions for a in wide)
        distinct = {(a[0], a[1], tuple(sorted(a[2]))) for a in v.legal_actions}
        assert len(wide) == min(8, len(wide)) and len(wide) <= len(distinct)
        seen += 1
    assert seen >= 5


def test_late_search_is_deterministic_and_counts_its_worlds():
    from guandan.agents.search import is_late

    v = next(v for v in _views(15, 300, min_choices=3) if is_late(v, 10))
    a = SearchAgent(seed=3, worlds=5, late_cards=10)
    b = SearchAgent(seed=3, worlds=5, late_cards=10, workers=2)
    assert a.act(v) == b.act(v) and a.last.means == b.last.means
    assert a.last.worlds == 5 and a.worlds_log == [5]


def test_late_option_in_specs():
    assert parse_spec("hard:late=8,late_candidates=6,z=1.5") == (
        "search", {"late_cards": 8, "late_candidates": 6, "switch_z": 1.5})
    assert parse_spec("hard:late=all")[1] == {"late_cards": None}
    with pytest.raises(ValueError, match="late"):
        parse_spec("hard:late=-3")
    with pytest.raises(ValueError):
        SearchAgent(late_cards=-1)


def test_the_true_deal_agrees_with_every_heuristic_decision():
    """In heuristic self-play the real hands are one of the sampled worlds' possibilities, and
    re-asking the heuristic the other seats' recent decisions with the real hands (the deal
    replayed from the start of the play phase, R29-R33) gives back what each played, in deals
    with tribute too (games of several deals)."""
    from guandan.agents.search import past_decisions, world_agreement

    h = HeuristicAgent()
    asked = 0
    rng = random.Random(1)
    for g in range(2):
        game = Game(seed=40 + g)
        while len(game.settlements) < 3 and not game.over:
            seat = game.to_act()
            v = seat_view(game, seat)
            if v.phase == "play" and rng.random() < 0.3:
                checks = past_decisions(v, 3)
                world = [tuple(f for f in range(54) for _ in range(game.deal.hands[s][f])) for s in range(4)]
                assert world_agreement(v, world, checks, h) == len(checks)
                asked += len(checks)
            game.apply(h.act(v), seat)
    assert asked > 100


def test_belief_weighting_prefers_worlds_where_the_heuristic_plays_as_seen():
    """Among sampled worlds, those where the other seats' recent decisions are what the heuristic
    would do with that world's hands get the weight; with belief_weight=1 the search is unweighted (same means
    as the plain search)."""
    from guandan.agents.search import past_decisions, world_agreement
    from guandan.core.worlds import WorldConstraints

    h = HeuristicAgent()
    v = _views(16, 1, skip=30)[0]
    cons = WorldConstraints(v)
    checks = past_decisions(v, 3)
    assert len(checks) == 9
    rng = random.Random(3)
    agreements = [world_agreement(v, cons.sample(rng), checks, h) for _ in range(40)]
    assert all(0 <= a <= len(checks) for a in agreements)
    assert len(set(agreements)) > 1  # the trick tells worlds apart
    plain = SearchAgent(seed=2, worlds=4)
    flat = SearchAgent(seed=2, worlds=4, belief_weight=1)
    plain.act(v)
    flat.act(v)
    assert plain.last.means == flat.last.means
    with pytest.raises(ValueError):
        SearchAgent(belief_weight=0)


def test_late_search_with_beliefs_stops_by_the_clock():
    """The hard level's settings (late positions, belief weighting) in time mode: with a clock
    that advances 0.01 s per read and a 0.05 s budget the search stops after a few reads (the
    clock is read before every world and every rollout action) and answers legally."""
    from guandan.agents.levels import HARD_DEFAULTS
    from guandan.agents.search import is_late

    v = next(v for v in _views(17, 300, min_choices=3) if is_late(v, 10))
    clock = FakeClock(0.01)
    agent = SearchAgent(seed=1, budget_s=0.05, clock=clock, **HARD_DEFAULTS)
    assert agent.act(v) in v.legal_actions
    assert agent.failures == 0 and clock.reads < 60
    # a generous budget completes worlds and counts them
    agent = SearchAgent(seed=1, budget_s=0.5, clock=FakeClock(1e-4), **HARD_DEFAULTS)
    agent.act(v)
    assert agent.failures == 0 and agent.last.worlds >= 1 and agent.worlds_log == [agent.last.worlds]
