"""Benchmark of the review of a deal (issue 22): a whole deal from one seat at the shipped budget.

A game is played by the heuristic from ``--seed`` (or a record is read with ``--record``), and
the review of ``--seat`` in ``--deal`` runs with the shipped per-decision budget
(:class:`guandan.review.Budget`, or ``--budget``) on ``--workers`` worker processes. Printed:
the decisions of the seat and how many were evaluated (play phase, more than one legal action),
the wall time, and the CPU seconds of this process and of its worker processes (on a loaded
machine the CPU figure is the one to compare: wall ≈ CPU / workers on idle cores).
Target: ≤ 30 s wall on 2 cores for about 25 decisions.

Usage: ``PYTHONPATH=src python scripts/bench_review.py [--seed 11] [--deal 1] [--seat 0] [--workers 2]``
"""

from __future__ import annotations

import argparse
import os
import time

from guandan.agents.heuristic import HeuristicAgent
from guandan.core.match import Game
from guandan.core.views import seat_view
from guandan.records import read_lines, record_lines
from guandan.review import Budget, review_lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--record", default=None, help="review this record instead of a fresh game")
    ap.add_argument("--deal", type=int, default=1)
    ap.add_argument("--seat", type=int, default=0)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--budget", default="", help="Budget.parse spec; default: the shipped budget")
    args = ap.parse_args()
    if args.record:
        lines = read_lines(args.record)
    else:
        g = Game(seed=args.seed)
        agents = [HeuristicAgent(s) for s in range(4)]
        while g.deal_number <= args.deal and not g.over:
            s = g.to_act()
            assert s is not None
            g.apply(agents[s].act(seat_view(g, s)), s)
        lines = record_lines(g)
    budget = Budget.parse(args.budget)
    t0, c0 = time.perf_counter(), os.times()
    review = review_lines(lines, args.seat, args.deal, budget, seed=0, workers=args.workers)
    wall, c1 = time.perf_counter() - t0, os.times()
    own = (c1.user - c0.user) + (c1.system - c0.system)
    kids = (c1.children_user - c0.children_user) + (c1.children_system - c0.children_system)
    decisions = review["decisions"]
    evaluated = sum(1 for e in decisions if e["evaluated"])
    print(f"budget {budget.to_json()}, {args.workers} workers")
    print(f"seat {args.seat}, deal {args.deal}: {len(decisions)} decisions, {evaluated} evaluated, "
          f"marked {review['marked']}")
    print(f"wall {wall:.1f} s; CPU {own + kids:.1f} s ({own:.1f} s this process, {kids:.1f} s workers); "
          f"{(own + kids) / max(1, evaluated):.2f} CPU s per evaluated decision")


if __name__ == "__main__":
    main()
