"""Benchmark of the duplicate challenge's scoring (issue 22): a day of 10,000 players x 12 boards.

Synthetic results (levels -3..+3 without 0, the R35 outcomes of a board) are added one at a time
to :class:`guandan.duplicate.matchpoints.DayScores`. Then, ``--repeat`` times: one more result
is added (timed), and the leaderboard is asked for as a page would show it (the top 50 and the
new player's own line: a recompute of the day's averages after the new result), then the whole
leaderboard (10,000 lines), then the page again (cached). Wall and CPU (process) times are
printed: on a loaded machine the CPU time is the figure to compare. Target: < 100 ms.

Usage: ``PYTHONPATH=src python scripts/bench_matchpoints.py [--players N] [--boards B] [--seed S]``
"""

from __future__ import annotations

import argparse
import random
import time

from guandan.duplicate.matchpoints import DayScores


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--players", type=int, default=10_000)
    ap.add_argument("--boards", type=int, default=12)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    day = DayScores(range(1, args.boards + 1))
    values = (-3, -2, -1, 1, 2, 3)
    t0 = time.perf_counter()
    for p in range(args.players - 1):
        for b in range(1, args.boards + 1):
            day.add(b, p, rng.choice(values))
    t_fill = time.perf_counter() - t0
    last = args.players - 1
    rows: dict[str, list[tuple[float, float]]] = {"add": [], "page": [], "full": [], "cached": []}

    def timed(name: str, fn):  # type: ignore[no-untyped-def]
        w, c = time.perf_counter(), time.process_time()
        out = fn()
        rows[name].append((time.perf_counter() - w, time.process_time() - c))
        return out

    for r in range(args.repeat):
        b = r % args.boards + 1
        who = (last, r)
        timed("add", lambda: day.add(b, who, rng.choice(values)))
        page = timed("page", lambda: (day.leaderboard(limit=50), day.standing(who)))
        full = timed("full", lambda: day.leaderboard())
        timed("cached", lambda: (day.leaderboard(limit=50), day.standing(who)))
    print(f"{args.players:,} players x {args.boards} boards: {len(full):,} on the leaderboard; "
          f"filled in {t_fill:.2f} s ({t_fill / ((args.players - 1) * args.boards) * 1e6:.1f} us per result)")
    labels = {"add": "one result added", "page": "leaderboard page after a new result (top 50 + own line)",
              "full": "whole leaderboard (every line)", "cached": "leaderboard page again (cached)"}
    for name, label in labels.items():
        ws = sorted(x[0] for x in rows[name])
        cs = sorted(x[1] for x in rows[name])
        print(f"{label}: median wall {ws[len(ws) // 2] * 1e3:.2f} ms, CPU {cs[len(cs) // 2] * 1e3:.2f} ms "
              f"(max wall {ws[-1] * 1e3:.2f} ms)")
    print(f"top: {page[0][0]}; the new player: {page[1]}")


if __name__ == "__main__":
    main()
