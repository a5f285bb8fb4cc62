"""Benchmark of the searching bots' pool shared between tables (issue 26, item 7).

``--tables`` other tables, each with four ``hard`` bots, flood the server's bot process pool
(:data:`guandan.server.table.bots.BOT_PROCESSES` processes, the server's agent spec
``SERVER_BOT_SPECS["hard"]``: 0.8 s a decision) while one more table is timed: the seconds from
the moment its bot is to act to the moment its move is known, for ``--decisions`` decisions.
Only the decisions the ``hard`` bot searches (late in a deal: ``late_cards``; play phase, more
than one legal action) are sent and timed; the others, which it plays at once with the
heuristic, are applied directly. Every table waits ``--delay`` seconds (the server's ``bot_delay_s``, 0.6) between two moves, as
a server table does. Each decision goes through the server's own path,
:func:`guandan.server.table.bots.decide_searching`, once with no gate (``search_max_wait_s`` 0:
the pool's first come, first served, as before) and once with the server's
:class:`~guandan.server.table.search_gate.SearchGate` (1 s, 4 waiting). Printed per mode: mean,
p90 and max seconds per decision of the timed table, how many of its decisions were searched
(the others were the heuristic's, refused by the gate), and the decisions of all tables per second.

Usage: ``PYTHONPATH=src python scripts/bench_search_fairness.py [--tables 10] [--decisions 12]``
(about 2 minutes at the defaults on 2 cores; the gate-off run is the long one: its timed
table waits behind every other table's decision).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time
from typing import Any

from guandan.agents.registry import make_agent
from guandan.agents.search import is_late
from guandan.core.match import Game
from guandan.core.views import seat_view
from guandan.server.settings import Settings
from guandan.server.table import bots
from guandan.server.table.search_gate import SearchGate


class _Counting:
    """The heuristic bot, counting how often it played for a refused search."""

    def __init__(self, seed: int) -> None:
        self.agent = make_agent("heuristic", seed)
        self.moves = 0

    def act(self, view: Any) -> Any:
        self.moves += 1
        return self.agent.act(view)


def _searched(agent: Any, view: Any) -> bool:
    """Whether the hard bot searches this decision (play phase, more than one legal action, late
    in the deal: ``SearchAgent.act``); the others take it no time."""
    late = agent.late_cards is None or is_late(view, agent.late_cards)
    return view.phase == "play" and len(view.legal_actions) > 1 and late


async def _table(name: str, seed: int, gate: SearchGate | None, delay: float, stop: asyncio.Event,
                 times: list[float] | None, decisions: int, counts: dict[str, int]) -> None:
    """One table of four ``hard`` bots playing until ``stop`` (or, timed, ``decisions`` moves)."""
    spec = bots.SERVER_BOT_SPECS["hard"]
    agents = [make_agent(spec, seed * 8 + s) for s in range(4)]
    fallback = _Counting(seed)
    game = Game(seed=seed)
    while not stop.is_set():
        await asyncio.sleep(delay)
        if game.over:
            game = Game(seed=seed + 1000)
        seat = game.to_act()
        assert seat is not None
        view = seat_view(game, seat)
        while not _searched(agents[seat], view):  # early in a deal the hard bot plays the heuristic
            game.apply(fallback.agent.act(view), seat)
            if game.over:
                game = Game(seed=seed + 1000)
            seat = game.to_act()
            assert seat is not None
            view = seat_view(game, seat)
        before = fallback.moves
        t0 = time.perf_counter()
        act = await bots.decide_searching(gate, name, agents[seat], view, lambda: fallback)
        took = time.perf_counter() - t0
        game.apply(act, seat)
        counts["all"] += 1
        if times is not None:
            times.append(took)
            counts["searched"] += fallback.moves == before
            if len(times) >= decisions:
                stop.set()


async def _run(n_tables: int, decisions: int, delay: float, gate: SearchGate | None) -> dict[str, Any]:
    stop = asyncio.Event()
    times: list[float] = []
    counts = {"all": 0, "searched": 0}
    t0 = time.perf_counter()
    others = [asyncio.create_task(_table(f"other{i}", 100 + i, gate, delay, stop, None, 0, counts))
              for i in range(n_tables)]
    await asyncio.sleep(delay)  # the others are in the pool first, as in the finding
    await _table("timed", 7, gate, delay, stop, times, decisions, counts)
    for t in others:
        t.cancel()
    await asyncio.gather(*others, return_exceptions=True)
    wall = time.perf_counter() - t0
    times.sort()
    return {"mean": statistics.fmean(times), "p90": times[min(len(times) - 1, int(0.9 * len(times)))],
            "max": times[-1], "searched": counts["searched"], "n": len(times), "rate": counts["all"] / wall,
            "refused": gate.refused if gate else 0, "admitted": gate.admitted if gate else None}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tables", type=int, default=10, help="other tables flooding the pool")
    ap.add_argument("--decisions", type=int, default=12, help="timed decisions per mode")
    ap.add_argument("--delay", type=float, default=0.6, help="seconds between two moves of a table (bot_delay_s)")
    args = ap.parse_args()
    print(f"{args.tables} other tables of hard bots, {bots.BOT_PROCESSES} bot processes, spec "
          f"{bots.SERVER_BOT_SPECS['hard']!r}, delay {args.delay} s, load {os.getloadavg()[0]:.2f}")

    async def warm() -> None:  # start the pool's processes outside the timings
        g = Game(seed=1)
        view = seat_view(g, g.to_act() or 0)
        await asyncio.gather(*(bots.think_off_loop(make_agent("heuristic", 1), view)
                               for _ in range(bots.BOT_PROCESSES * 2)))

    asyncio.run(warm())
    for label, settings in (("gate off (before)", Settings(db_url="sqlite://", search_max_wait_s=0)),
                            ("gate on  (after) ", Settings(db_url="sqlite://"))):
        r = asyncio.run(_run(args.tables, args.decisions, args.delay, bots.make_search_gate(settings)))
        print(f"{label}: timed table s/decision mean {r['mean']:.2f}  p90 {r['p90']:.2f}  max {r['max']:.2f}"
              f"  ({r['searched']}/{r['n']} searched; all tables {r['rate']:.1f} decisions/s"
              + (f"; gate admitted {r['admitted']}, refused {r['refused']})" if r["admitted"] is not None else ")"))
    bots.shutdown_bot_pool(wait=True)
    print(f"load {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
