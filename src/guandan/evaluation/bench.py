"""Benchmark of legal-move generation and random self-play (``guandan bench``).

Figures measured (all on this process, single thread):

* **per-scenario move generation**: for each of the ten fixed scenarios of
  ``tests/cases/perf-hands.json`` (level 7, so the wilds are the two 7H; a 27-card hand with no
  wild and the same hand with two wilds; free lead and answers to a single, a pair, a straight
  and a 4-card bomb), the median time in microseconds of one cold call of
  :func:`guandan.core.movegen.legal_plays`, and the number of plays it returns (PASS is not
  counted: ``legal_plays`` never returns it; the deal adds it when following). "Cold" means no
  state carries over from one call to the next: the move generator keeps no per-hand cache
  (its only tables are built once at import and do not depend on the hand), and if it ever
  exposes ``clear_caches()`` the benchmark calls it before every timed call, outside the
  timed region.
* **random deals per second** (``random_deals_per_s``): whole deals played by four uniformly
  random agents, each drawing uniformly from ``game.legal_actions()`` (tribute, return, PASS
  and plays alike), every action applied with the checking
  :meth:`guandan.core.match.Game.apply`. Each deal is the first deal of a fresh
  :class:`~guandan.core.match.Game` (new shuffle, level 2, no tribute), played until it ends;
  the settlement, which also shuffles and deals the next deal, is included. A second figure,
  ``random_deals_per_s_views``, plays deals the same way through the real driver path: four
  :class:`~guandan.agents.base.RandomAgent` fed by :func:`guandan.agents.driver.step`, so a seat view
  (:func:`guandan.core.views.seat_view`) is built before every action. Both are wall-clock
  rates: on a shared machine they move with its load more than the medians do.
* **peak memory**: the process's peak resident set size (``resource.getrusage(...).ru_maxrss``),
  in MB (2**20 bytes); ``tracemalloc`` is not used because it would slow the timings down.

The scenario hands are embedded below (copied from ``tests/cases/perf-hands.json``; a test checks
they still agree with that file when it is present); :func:`load_scenarios` reads a file of
the same format.
"""

from __future__ import annotations

import json
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from guandan.core.cards import counts_of, parse_card, parse_cards, parse_rank
from guandan.core.plays import PlayT, classify

#: Level rank of the fixed scenarios (``'7'``: the wilds are the two 7H).
LEVEL_RANK = "7"

_HAND_NOWILD = (
    "2S 3S 4C 4H 5C 5H 5S 6S 6S 7C 7D 7S 8S TC TD TH TH JC JC JD JH JS QD QS AD BJ BJ"
)
_HAND_WILD = (
    "2S 3S 4C 4H 5C 5H 5S 6S 6S 7D 7H 7H 7S TC TD TH TH JC JC JD JH JS QD QS AD BJ BJ"
)
_TABLES: dict[str, tuple[str | None, str | None]] = {
    # name: (cards of the play to beat, its type)
    "lead": (None, None),
    "single": ("8C", "single"),
    "pair": ("6S 6D", "pair"),
    "straight": ("4C 5D 6S 7C 8H", "straight"),
    "bomb4": ("5S 5H 5C 5D", "bomb"),
}

#: Scenario ids in report order.
SCENARIO_IDS: tuple[str, ...] = tuple(
    f"{t}_{v}" for v in ("nowild", "wild") for t in ("lead", "single", "pair", "straight", "bomb4")
)

#: Target medians in microseconds per call (this project's goals on a 2-core machine).
TARGET_US: dict[str, float] = {
    **{f"{t}_nowild": 50.0 for t in ("single", "pair", "straight", "bomb4")},
    **{f"{t}_wild": 150.0 for t in ("single", "pair", "straight", "bomb4")},
    "lead_nowild": 150.0,
    "lead_wild": 1000.0,
}
#: Target for random 4-bot deals per second (at least).
TARGET_DEALS_PER_S = 150.0


@dataclass(frozen=True)
class Scenario:
    """One move-generation input.

    Attributes:
        id: e.g. ``'pair_wild'``.
        hand: the hand's faces (sorted).
        level: the level rank index (0..12).
        table: the play to beat ``(type, rank, cards)``, or ``None`` for a free lead.
    """

    id: str
    hand: tuple[int, ...]
    level: int
    table: PlayT | None


def _table_play(cards: Sequence[str] | str | None, ptype: str | None, level: int) -> PlayT | None:
    """The reading of ``cards`` of type ``ptype`` (``None`` cards: free lead).

    Raises:
        ValueError: the cards have no reading of that type, or several.
    """
    if cards is None:
        return None
    faces = parse_cards(cards if isinstance(cards, str) else list(cards))
    readings = [tuple(p) for p in classify(faces, level)]
    if ptype is not None:
        readings = [p for p in readings if p[0] == ptype.lower().replace(" ", "_")]
    if len(readings) != 1:
        raise ValueError(f"table play {cards!r} has {len(readings)} readings of type {ptype!r}")
    return readings[0]  # type: ignore[return-value]


def default_scenarios() -> list[Scenario]:
    """The ten fixed scenarios (embedded copy of ``tests/cases/perf-hands.json``), in report order."""
    level = parse_rank(LEVEL_RANK)
    out = []
    for sid in SCENARIO_IDS:
        tname, variant = sid.rsplit("_", 1)
        hand = parse_cards(_HAND_WILD if variant == "wild" else _HAND_NOWILD)
        cards, ptype = _TABLES[tname]
        out.append(Scenario(sid, hand, level, _table_play(cards, ptype, level)))
    return out


def load_scenarios(path: str | Path) -> list[Scenario]:
    """Scenarios from a JSON file in the ``perf-hands.json`` format.

    The file has ``level_rank`` and ``scenarios``: a list of ``{"id", "hand": [cards],
    "table": [cards] | null, "table_type": str | null}``.

    Raises:
        OSError: the file cannot be read.
        ValueError: malformed JSON or content (bad card notation included, as
            :class:`~guandan.core.errors.NotationError`, a ``ValueError``).
    """
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: not JSON ({e})") from None
    except RecursionError:
        raise ValueError(f"{path}: unreadable JSON (nested too deeply)") from None
    try:
        level = parse_rank(str(data["level_rank"]))
        if level > 12:
            raise ValueError(f"level_rank must be 2..A, not {data['level_rank']!r}")
        out = []
        for sc in data["scenarios"]:
            hand = tuple(sorted(parse_card(c) for c in sc["hand"]))
            if any(hand.count(f) > 2 for f in set(hand)):
                raise ValueError(f"scenario {sc.get('id')!r}: a card appears more than twice (two decks)")
            out.append(Scenario(str(sc["id"]), hand, level, _table_play(sc["table"], sc.get("table_type"), level)))
    except KeyError as e:
        raise ValueError(f"{path}: not a perf-hands file (missing key {e})") from None
    except (TypeError, AttributeError, IndexError) as e:
        raise ValueError(f"{path}: not a perf-hands file ({e})") from None
    except ValueError as e:  # bad card or rank notation, or a table play of no such type
        raise ValueError(f"{path}: {e}") from None
    return out


def _clear_hook() -> Callable[[], None] | None:
    from guandan.core import movegen

    hook = getattr(movegen, "clear_caches", None)
    return hook if callable(hook) else None


def time_scenario(sc: Scenario, repeat: int = 300, legal: Callable[..., list[PlayT]] | None = None) -> tuple[float, int]:
    """Median time of one cold ``legal_plays`` call on ``sc`` and the number of plays.

    Args:
        sc: the scenario.
        repeat: timed calls (each timed on its own; the median is reported). Must be >= 1.
        legal: the move generator to time (default :func:`guandan.core.movegen.legal_plays`),
            with the signature ``(counts, level, table)``.
    Returns:
        ``(median microseconds per call, number of plays returned, PASS excluded)``.
    Raises:
        ValueError: ``repeat`` < 1.
    """
    if repeat < 1:
        raise ValueError("repeat must be at least 1")
    from guandan.core.movegen import legal_plays

    fn: Callable[..., list[PlayT]] = legal if legal is not None else legal_plays
    clear = _clear_hook()
    counts = counts_of(sc.hand)
    level, table = sc.level, sc.table
    n = len(fn(counts, level, table))
    for _ in range(min(20, repeat)):  # warm-up (bytecode specialisation), not timed
        fn(counts, level, table)
    clock = time.perf_counter_ns
    samples = []
    for _ in range(repeat):
        if clear is not None:
            clear()  # outside the timed region
        t0 = clock()
        fn(counts, level, table)
        samples.append(clock() - t0)
    return statistics.median(samples) / 1000.0, n


def random_deals(seconds: float = 3.0, seed: int = 1, views: bool = False, max_deals: int | None = None) -> tuple[float, int]:
    """Random 4-bot self-play throughput.

    Plays whole deals for about ``seconds`` (at least one deal): deal ``i`` is the first deal
    (level 2, no tribute) of a fresh :class:`~guandan.core.match.Game` seeded ``seed + i``; the
    four agents choose uniformly among ``game.legal_actions()`` and every action goes through
    the checking :meth:`Game.apply`. Without ``views`` one ``random.Random(seed + i)`` draws
    straight from ``game.legal_actions()``; with ``views`` each seat is a
    :class:`~guandan.agents.base.RandomAgent` seeded ``4 * (seed + i) + seat`` and driven by
    :func:`guandan.agents.driver.step` (a seat view is built before every action).

    Args:
        seconds: wall-clock budget in seconds (> 0).
        seed: base seed (the sequence of deals is reproducible).
        views: go through seat views and agents (the real driver path) or not.
        max_deals: stop after this many deals even if time is left.
    Returns:
        ``(deals per second, deals played)``.
    Raises:
        ValueError: ``seconds`` <= 0.
    """
    if seconds <= 0:
        raise ValueError("seconds must be positive")
    from guandan.agents.base import RandomAgent
    from guandan.agents.driver import step
    from guandan.core.match import Game
    from guandan.core.rules import RuleSet

    rules = RuleSet.official()
    deals = 0
    clock = time.perf_counter
    start = clock()
    deadline = start + seconds
    while True:
        game = Game(rules, seed=seed + deals)
        if views:
            agents = [RandomAgent(seed=(seed + deals) * 4 + s) for s in range(4)]
            while game.deal_number == 1 and not game.over:
                step(game, agents)
        else:
            choice = random.Random(seed + deals).choice
            while game.deal_number == 1 and not game.over:
                game.apply(choice(game.legal_actions()))
        deals += 1
        now = clock()
        if now >= deadline or (max_deals is not None and deals >= max_deals):
            return deals / (now - start), deals


def peak_mb() -> float:
    """Peak resident set size of this process in MB (2**20 bytes), from ``ru_maxrss``.

    Returns ``-1.0`` where the ``resource`` module is missing (Windows).
    """
    try:
        import resource
    except ImportError:  # pragma: no cover - Windows
        return -1.0
    kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    if sys.platform == "darwin":  # bytes there, kilobytes on Linux
        return kb / 2**20
    return kb / 1024.0


def run_bench(
    repeat: int = 300,
    deals_seconds: float = 3.0,
    scenarios: Sequence[Scenario] | None = None,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Run the whole benchmark.

    Args:
        repeat: timed calls per scenario (>= 1).
        deals_seconds: seconds of random self-play for each of the two deals/s figures
            (0: skip them, reported as ``None``).
        scenarios: default :func:`default_scenarios`.
        progress: called with a short label before each step (for progress display).
    Returns:
        A JSON-ready dict: ``scenarios`` (list of ``{"id", "us_per_call", "moves",
        "target_us"}``; ``moves`` counts plays, PASS excluded), ``random_deals_per_s``,
        ``random_deals_per_s_views``, ``deals_played``, ``peak_mb`` (peak resident set size),
        ``peak_mb_source`` (``"ru_maxrss"``), ``repeat``, ``deals_seconds``, ``targets``
        (``{"us_per_call": {id: us}, "random_deals_per_s": n}``).
    Raises:
        ValueError: ``repeat`` < 1 or ``deals_seconds`` < 0.
    """
    if repeat < 1:
        raise ValueError("repeat must be at least 1")
    if deals_seconds < 0:
        raise ValueError("deals_seconds must not be negative")
    if scenarios is None:
        scenarios = default_scenarios()
    rows = []
    for sc in scenarios:
        if progress:
            progress(sc.id)
        us, n = time_scenario(sc, repeat)
        rows.append({"id": sc.id, "us_per_call": round(us, 2), "moves": n, "target_us": TARGET_US.get(sc.id)})
    dps = dps_views = None
    played = 0
    if deals_seconds > 0:
        if progress:
            progress("random deals")
        dps, played = random_deals(deals_seconds, views=False)
        if progress:
            progress("random deals (seat views)")
        dps_views, n_views = random_deals(deals_seconds, views=True)
        played += n_views
    return {
        "scenarios": rows,
        "random_deals_per_s": None if dps is None else round(dps, 1),
        "random_deals_per_s_views": None if dps_views is None else round(dps_views, 1),
        "deals_played": played,
        "peak_mb": round(peak_mb(), 1),
        "peak_mb_source": "ru_maxrss",
        "repeat": repeat,
        "deals_seconds": deals_seconds,
        "targets": {"us_per_call": dict(TARGET_US), "random_deals_per_s": TARGET_DEALS_PER_S},
    }


__all__ = [
    "LEVEL_RANK",
    "SCENARIO_IDS",
    "TARGET_DEALS_PER_S",
    "TARGET_US",
    "Scenario",
    "default_scenarios",
    "load_scenarios",
    "peak_mb",
    "random_deals",
    "run_bench",
    "time_scenario",
]
