"""Play the boards of ``guandan arena A B --deals N --games 0 --seed S`` one JSON line per board.

Every ``PARTS``-th board from ``PART`` (so that several processes share one arena's boards, and
a run stopped early keeps every finished board). A line: ``board``, ``wins`` (team A won the deal
with A in seats 0/2, then in seats 1/3), ``upgrade_a``/``upgrade_b`` (levels, R35),
``times_a`` (A's decision times, seconds), ``seconds`` and the 1-minute ``load`` average at the
board's end.

Usage: ``.venv/bin/python scripts/arena_boards.py A B N S PART PARTS > boards.jsonl``; summarise
with ``.venv/bin/python scripts/arena_boards.py --summary boards*.jsonl``.
"""

from __future__ import annotations

import json
import random
import sys
import time

from guandan.core.rules import RuleSet
from guandan.evaluation.arena import decision_summary, normal_ci, play_board_deal, wilson


def play(a: str, b: str, n: int, seed: int, part: int, parts: int) -> None:
    rules = RuleSet.official()
    master = random.Random(seed)  # the board seeds of guandan.evaluation.arena.duplicate_match
    board_seeds = [master.getrandbits(48) for _ in range(n)]
    for i, bs in enumerate(board_seeds):
        if i % parts != part:
            continue
        timer: dict[str, list[float]] = {"a": [], "b": []}
        t0 = time.time()
        out: dict[str, object] = {"board": i, "wins": [], "upgrade_a": [], "upgrade_b": []}
        for seats in ((0, 2), (1, 3)):
            rec, _n = play_board_deal(a, b, rules, i, bs, seats, timer)
            out["wins"].append(int(rec.a_won))  # type: ignore[attr-defined]
            out["upgrade_a"].append(rec.upgrade_a)  # type: ignore[attr-defined]
            out["upgrade_b"].append(rec.upgrade_b)  # type: ignore[attr-defined]
        out["times_a"] = timer["a"]
        out["seconds"] = time.time() - t0
        with open("/proc/loadavg") as f:
            out["load"] = f.read().split()[0]
        print(json.dumps(out), flush=True)


def summary(paths: list[str]) -> None:
    rows = [json.loads(line) for p in paths for line in open(p) if line.strip()]
    n = 2 * len(rows)
    wins = sum(sum(r["wins"]) for r in rows)
    lo, hi = wilson(wins, n)
    scores = [sum(r["wins"]) / 2 for r in rows]
    plo, phi = normal_ci(scores)
    t = decision_summary([x for r in rows for x in r["times_a"]])
    loads = [float(r["load"]) for r in rows]
    print(f"boards {len(rows)}, deals {n}: A won {wins} = {wins / n:.1%} [{lo:.1%}, {hi:.1%}]; paired per board "
          f"[{plo:.1%}, {phi:.1%}]; boards not 0.5: {sum(s != 0.5 for s in scores)} (A ahead on "
          f"{sum(s > 0.5 for s in scores)}); levels per deal A {sum(sum(r['upgrade_a']) for r in rows) / n:.2f}, "
          f"B {sum(sum(r['upgrade_b']) for r in rows) / n:.2f}; A decisions: mean {t['mean_ms']:.0f} ms, "
          f"p99 {t['p99_ms']:.0f} ms, max {t['max_ms']:.0f} ms; load {min(loads)}-{max(loads)}")


if __name__ == "__main__":
    if sys.argv[1] == "--summary":
        summary(sys.argv[2:])
    else:
        play(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6]))
