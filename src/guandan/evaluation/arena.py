"""Duplicate matches between two agents (``guandan arena``).

Format
------
Duplicate play cancels the luck of the cards: every deal is played twice with the same cards
in the same seat positions and the same first leader, once with team A in seats 0 and 2 and
team B in seats 1 and 3, once with the teams swapped (A in seats 1 and 3). Each team therefore
holds each side's cards exactly once.

* **Boards** (``deals``): board ``i`` is one deal at level 2 with no tribute (the first deal of
  a game, R43, R46, EC-46), dealt by :func:`guandan.core.match.shuffle_deal` from its own
  ``random.Random(board seed)``; the first leader follows the preset's ``first_leader`` rule
  (R51) drawn from the same generator. A deal is *won* by the team of 头游 (first out, R35);
  each board gives two deals, so ``deals`` boards give ``2 * deals`` deals.
* **Games** (``games``): whole games from level 2 until a team passes the target (R5, R37),
  also in duplicate. Game ``j`` uses a hand source that deals its ``k``-th deal from
  ``random.Random(seed of (game j, deal k))``, so both plays see the same cards per seat
  position deal by deal even when levels, tribute and the number of deals differ. A game that
  has not ended after ``max_deals`` deals counts as half a win for each team.

Statistics
----------
Rates come with 95 % Wilson score intervals over the individual deals (``2 * deals``) and
games (``2 * games``), treating them as independent trials. Within a board the two plays are
negatively correlated (the team with the good cards tends to win both seatings' halves), so
treating them as independent makes the interval slightly conservative. ``board_ci`` gives
the paired alternative: a normal-approximation interval over per-board scores (0, ½, 1).
"Mean upgrade" is the mean number of levels team A (respectively B) gains per deal (R35,
the preset's ``upgrade``), over the board deals.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from guandan.agents.base import Agent

from guandan.agents.registry import make_agent
from guandan.core.match import Game, shuffle_deal, turned_card_leader
from guandan.core.rules import RuleSet
from guandan.core.views import seat_view

#: ``progress(done, total)``: called after each deal of a board and each game played.
Progress = Callable[[int, int], None]

Z95 = 1.959963984540054


def wilson(successes: float, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion.

    Args:
        successes: number of successes (may be fractional, e.g. half-wins).
        n: number of trials; ``0`` gives ``(0.0, 1.0)``.
        z: normal quantile (1.96 for 95 %).
    Returns:
        ``(low, high)`` within ``[0, 1]``; it always contains ``successes / n``.
    """
    if n <= 0:
        return (0.0, 1.0)
    p = successes / n
    denom = 1.0 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, min(p, centre - half)), min(1.0, max(p, centre + half)))


def normal_ci(scores: Sequence[float], z: float = Z95) -> tuple[float, float]:
    """Normal-approximation interval for the mean of ``scores`` (each in ``[0, 1]``; the result
    clipped to ``[0, 1]``).

    With one score, or when every score is the same (no spread to estimate from: ten boards all
    won would give a zero-width interval at 1.0), the Wilson interval of ``sum(scores)``
    successes in ``len(scores)`` trials is returned instead; no scores give ``(0.0, 1.0)``."""
    n = len(scores)
    if n == 0:
        return (0.0, 1.0)
    m = sum(scores) / n
    var = sum((x - m) ** 2 for x in scores) / (n - 1) if n > 1 else 0.0
    if var == 0.0:
        return wilson(sum(scores), n, z)
    half = z * math.sqrt(var / n)
    return (max(0.0, m - half), min(1.0, m + half))


@dataclass
class DealRecord:
    """One played deal of a board: which team A sat in, the finish order and the outcome."""

    board: int
    a_seats: tuple[int, int]
    first_leader: int
    finish_order: tuple[int, ...]
    result: str
    a_won: bool
    upgrade_a: int
    upgrade_b: int
    hands: list[list[str]]


@dataclass
class ArenaResult:
    """Outcome of :func:`duplicate_match`.

    Attributes:
        agent_a, agent_b: agent names; ``preset``: rule preset name (or ``custom``); ``seed``.
        boards: boards played; ``deals``: deals played (``2 * boards``).
        deal_wins_a: deals where team A had 头游.
        deal_win_rate: ``deal_wins_a / deals``; ``deal_ci``: its 95 % Wilson interval.
        board_ci: paired alternative (normal approximation over per-board scores).
        mean_upgrade_a, mean_upgrade_b: mean levels gained per deal by A and by B (R35).
        results_a: how A's won deals ended, ``{'1-2': n, '1-3': n, '1-4': n}``.
        games: games played (``2 * game pairs``); ``game_wins_a``: games A won (half a win for an
            unfinished game); ``game_win_rate`` and ``game_ci`` (Wilson); ``mean_game_deals``.
        seconds: wall time; ``actions``: actions applied; ``ms_per_action``: average time per
            action (agents' decisions plus engine), milliseconds.
        records: per-deal records of the boards (only with ``keep_records``).
    """

    agent_a: str
    agent_b: str
    preset: str
    seed: int
    boards: int
    deals: int
    deal_wins_a: int
    deal_win_rate: float
    deal_ci: tuple[float, float]
    board_ci: tuple[float, float]
    mean_upgrade_a: float
    mean_upgrade_b: float
    results_a: dict[str, int]
    games: int
    game_wins_a: float
    game_win_rate: float
    game_ci: tuple[float, float]
    mean_game_deals: float
    seconds: float
    actions: int
    ms_per_action: float
    records: list[DealRecord] = field(default_factory=list)
    #: decision times of A's and B's agents (every ``act`` call): ``{"n", "mean_ms", "p99_ms", "max_ms"}``
    decision_ms_a: dict[str, float] = field(default_factory=dict)
    decision_ms_b: dict[str, float] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (records included when kept)."""
        d = asdict(self)
        d["deal_ci"] = list(self.deal_ci)
        d["board_ci"] = list(self.board_ci)
        d["game_ci"] = list(self.game_ci)
        return d


#: ``{"a": [seconds, ...], "b": [...]}``: decision times collected by :class:`_Timed`.
Timer = dict[str, list[float]]


class _Timed:
    """An agent whose ``act`` calls are timed into a list (seconds, ``time.perf_counter``)."""

    def __init__(self, agent: Agent, bucket: list[float]) -> None:
        self.agent = agent
        self.name = agent.name
        self.bucket = bucket

    def act(self, view: Any) -> Any:
        import time

        t0 = time.perf_counter()
        try:
            return self.agent.act(view)
        finally:
            self.bucket.append(time.perf_counter() - t0)


def decision_summary(times: Sequence[float]) -> dict[str, float]:
    """``{"n", "mean_ms", "p99_ms", "max_ms"}`` of decision times given in seconds."""
    if not times:
        return {"n": 0, "mean_ms": 0.0, "p99_ms": 0.0, "max_ms": 0.0}
    xs = sorted(times)
    p99 = xs[min(len(xs) - 1, max(0, math.ceil(0.99 * len(xs)) - 1))]
    mean = sum(xs) / len(xs)
    return {"n": len(xs), "mean_ms": 1000.0 * mean, "p99_ms": 1000.0 * p99, "max_ms": 1000.0 * xs[-1]}


def _agents(
    name_a: str, name_b: str, a_seats: tuple[int, int], seed: int, timer: Timer | None = None
) -> list[Agent]:
    out: list[Agent] = []
    for s in range(4):
        name = name_a if s in a_seats else name_b
        agent = make_agent(name, seed * 4 + s)
        if timer is not None:
            agent = _Timed(agent, timer["a" if s in a_seats else "b"])
        out.append(agent)
    return out


def _play_until(game: Game, agents: Sequence[Agent], stop: Callable[[Game], bool], max_actions: int) -> int:
    n = 0
    while not game.over and not stop(game):
        seat = game.to_act()
        assert seat is not None
        act = agents[seat].act(seat_view(game, seat))
        game.apply(act, seat)
        n += 1
        if n > max_actions:
            raise RuntimeError(f"no progress after {max_actions} actions")
    return n


def _first_leader(rules: RuleSet, hands: Sequence[Sequence[int]], rng: random.Random) -> int:
    """R51 as the preset says: the holder of a turned card, or a random seat."""
    if rules.first_leader == "turned_card":
        return turned_card_leader(hands, 0, rng)
    return rng.randrange(4)


def _board_deal(rules: RuleSet, board_seed: int) -> tuple[list[list[int]], int]:
    rng = random.Random(board_seed)
    hands = shuffle_deal(rng)
    return hands, _first_leader(rules, hands, rng)


def play_board_deal(
    agent_a: str, agent_b: str, rules: RuleSet, board: int, board_seed: int, a_seats: tuple[int, int],
    timer: Timer | None = None,
) -> tuple[DealRecord, int]:
    """Play board ``board`` once with team A in ``a_seats`` ((0, 2) or (1, 3)).

    Returns:
        ``(record, actions applied)``.
    Raises:
        ValueError: an unknown agent name (from :func:`guandan.agents.base.make_agent`).
    """
    hands, leader = _board_deal(rules, board_seed)
    game = Game(rules, seed=board_seed, hands=hands, first_leader=leader)
    agents = _agents(agent_a, agent_b, a_seats, board_seed, timer)
    n = _play_until(game, agents, lambda g: bool(g.settlements), 20_000)
    st = game.settlements[0]
    a_team = a_seats[0] & 1
    ev = next(e for e in game.events if e["type"] == "deal_end")
    rec = DealRecord(
        board=board,
        a_seats=a_seats,
        first_leader=leader,
        finish_order=tuple(ev["finish_order"]),
        result=st.result,
        a_won=st.winner == a_team,
        upgrade_a=st.upgrade if st.winner == a_team else 0,
        upgrade_b=st.upgrade if st.winner != a_team else 0,
        hands=game.events[0]["hands"],
    )
    return rec, n


def game_hand_source(game_seed: int) -> Callable[[int, int], list[list[int]]]:
    """The hand source of duplicate game ``game_seed``: deal ``k`` is dealt by
    :func:`~guandan.core.match.shuffle_deal` from ``random.Random(game_seed * 1000 + k)``,
    whatever happened before, so that both seatings see the same cards deal by deal."""

    def source(_game: int, k: int) -> list[list[int]]:
        return shuffle_deal(random.Random(game_seed * 1_000 + k))

    return source


def play_game(
    agent_a: str, agent_b: str, rules: RuleSet, game_seed: int, a_seats: tuple[int, int],
    max_deals: int = 200, timer: Timer | None = None,
) -> tuple[Game, int]:
    """Play one whole game (R5) with team A in ``a_seats`` ((0, 2) or (1, 3)).

    The first deal's leader follows the preset's ``first_leader`` rule (R51) on the first
    deal's hands, drawn from ``random.Random(game_seed)``, so it is the same for both seatings.

    Returns:
        ``(game, actions applied)``; the game is over unless ``max_deals`` deals were played.
    Raises:
        ValueError: an unknown agent name.
    """
    source = game_hand_source(game_seed)
    first = _first_leader(rules, source(1, 1), random.Random(game_seed))
    game = Game(rules, seed=game_seed, hands=source, first_leader=first)
    agents = _agents(agent_a, agent_b, a_seats, game_seed, timer)
    n = _play_until(game, agents, lambda g: len(g.settlements) >= max_deals, 2_000_000)
    return game, n


def play_duplicate_game(
    agent_a: str, agent_b: str, rules: RuleSet, game_seed: int, a_seats: tuple[int, int],
    max_deals: int = 200, timer: Timer | None = None,
) -> tuple[float, int, int]:
    """:func:`play_game`, summarised.

    Returns:
        ``(A's score: 1 win, 0 loss, 0.5 unfinished after max_deals; deals played; actions)``.
    """
    game, n = play_game(agent_a, agent_b, rules, game_seed, a_seats, max_deals, timer)
    if not game.over:
        return 0.5, len(game.settlements), n
    return (1.0 if game.winner == (a_seats[0] & 1) else 0.0), len(game.settlements), n


def duplicate_match(
    agent_a: str,
    agent_b: str,
    deals: int,
    rules: RuleSet | None = None,
    seed: int = 0,
    progress: Progress | None = None,
    games: int = 0,
    keep_records: bool = False,
    max_deals: int = 200,
) -> ArenaResult:
    """Play ``agent_a`` (team A) against ``agent_b`` (team B) in duplicate (see the module docstring).

    Args:
        agent_a, agent_b: agent names for :func:`guandan.agents.base.make_agent`.
        deals: number of boards; each is played twice (``2 * deals`` deals).
        rules: rule set (default ``official``).
        seed: master seed; board ``i`` and game ``j`` get seeds drawn from ``random.Random(seed)``.
        progress: optional ``progress(done, total)`` callback (units: deals plus games played).
        games: number of game pairs (each game played twice, seats swapped); 0 for none.
        keep_records: keep a :class:`DealRecord` per board deal in the result.
        max_deals: safety bound on the deals of one game (an unfinished game is half a win).
    Returns:
        An :class:`ArenaResult`.
    Raises:
        ValueError: an unknown agent name, or negative ``deals``/``games``.
    """
    import time

    if deals < 0 or games < 0:
        raise ValueError("deals and games must be >= 0")
    for name in (agent_a, agent_b):
        make_agent(name, 0)  # validates the name
    rules = rules or RuleSet.official()
    t0 = time.perf_counter()
    master = random.Random(seed)
    board_seeds = [master.getrandbits(48) for _ in range(deals)]
    game_seeds = [master.getrandbits(40) for _ in range(games)]
    total = 2 * deals + 2 * games
    done = 0
    actions = 0
    wins = 0
    up_a = 0
    up_b = 0
    results_a = {"1-2": 0, "1-3": 0, "1-4": 0}
    board_scores: list[float] = []
    records: list[DealRecord] = []
    timer: Timer = {"a": [], "b": []}
    for i, bs in enumerate(board_seeds):
        score = 0.0
        for a_seats in ((0, 2), (1, 3)):
            rec, n = play_board_deal(agent_a, agent_b, rules, i, bs, a_seats, timer)
            actions += n
            if rec.a_won:
                wins += 1
                score += 0.5
                results_a[rec.result] += 1
            up_a += rec.upgrade_a
            up_b += rec.upgrade_b
            if keep_records:
                records.append(rec)
            done += 1
            if progress is not None:
                progress(done, total)
        board_scores.append(score)
    game_wins = 0.0
    game_deals = 0
    for gs in game_seeds:
        for a_seats in ((0, 2), (1, 3)):
            sc, nd, n = play_duplicate_game(agent_a, agent_b, rules, gs, a_seats, max_deals, timer)
            game_wins += sc
            game_deals += nd
            actions += n
            done += 1
            if progress is not None:
                progress(done, total)
    nd = 2 * deals
    ng = 2 * games
    secs = time.perf_counter() - t0
    return ArenaResult(
        agent_a=agent_a,
        agent_b=agent_b,
        preset=rules.preset_name() or "custom",
        seed=seed,
        boards=deals,
        deals=nd,
        deal_wins_a=wins,
        deal_win_rate=wins / nd if nd else 0.0,
        deal_ci=wilson(wins, nd),
        board_ci=normal_ci(board_scores),
        mean_upgrade_a=up_a / nd if nd else 0.0,
        mean_upgrade_b=up_b / nd if nd else 0.0,
        results_a=results_a,
        games=ng,
        game_wins_a=game_wins,
        game_win_rate=game_wins / ng if ng else 0.0,
        game_ci=wilson(game_wins, ng),
        mean_game_deals=game_deals / ng if ng else 0.0,
        seconds=secs,
        actions=actions,
        ms_per_action=1000.0 * secs / actions if actions else 0.0,
        records=records,
        decision_ms_a=decision_summary(timer["a"]),
        decision_ms_b=decision_summary(timer["b"]),
    )
