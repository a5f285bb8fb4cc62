"""Feasibility of the exact endgame solver (``agents/endgame.py``) on real late positions.

Heuristic self-play games ``Game(seed=first + i)`` are walked to their first settlement (as
``scripts/search_oracle.py`` does); at every play-phase decision with a choice, before anyone
has gone out, where a seat still playing holds at most ``late`` cards, the position is solved
on the REAL hands for the team of the seat to act (R33/R35), with a budget of ``max_nodes``
nodes. The solver is deterministic and its budget only cuts the search short, so a position
settled in ``n`` nodes is settled by every budget of at least ``n``: one run per position gives
the share settled at each budget of ``--budgets``.

Where the position is settled and the mover's team can win (some legal action wins), the
heuristic's own move is solved too (same table): the exact oracle counts the positions where
the heuristic's move loses under best play while another action wins. For comparison each
position also records whether the heuristic's move wins when the heuristic plays it out for
every seat, and whether another of the search's candidates (up to 8) would win played out
that way where it loses (what ``search_oracle.py`` counts).

Usage: ``.venv/bin/python scripts/endgame_bench.py LATE GAMES FIRST_SEED MAX_NODES
[--order fast|none] [--budgets 2000,20000,200000] [--log FILE]``
"""

from __future__ import annotations

import argparse
import time

from guandan.agents.endgame import EndgameSolver
from guandan.agents.fast_rollout import FastRolloutPolicy
from guandan.agents.heuristic import HeuristicAgent
from guandan.agents.search import candidate_actions, rollout
from guandan.evaluation.search_audit import late_positions

BUCKETS = ((0, 20), (21, 30), (31, 40), (41, 50), (51, 108))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("late", type=int)
    ap.add_argument("games", type=int)
    ap.add_argument("first", type=int)
    ap.add_argument("max_nodes", type=int)
    ap.add_argument("--order", choices=("fast", "none"), default="fast")
    ap.add_argument("--budgets", default="2000,20000,200000")
    ap.add_argument("--log", default=None)
    args = ap.parse_args()
    budgets = [int(b) for b in args.budgets.split(",")]
    h = HeuristicAgent(1)
    fast = FastRolloutPolicy()
    order = fast.act_deal if args.order == "fast" else None
    rows = []  # (total cards, nodes or None, seconds, root, heuristic move value, heuristic playout win)
    log = open(args.log, "a") if args.log else None
    for g, game, seat, v, a0 in late_positions(args.first, args.games, args.late, h):
        g += args.first  # the game's seed, as printed before
        deal = game.deal.clone()
        team = seat & 1
        total = sum(deal.n_cards)
        solver = EndgameSolver(deal, order)
        t0 = time.perf_counter()
        root = solver.solve(team, args.max_nodes)
        secs = time.perf_counter() - t0
        nodes = solver.nodes if root is not None else None
        a0_val = None
        if root is True:
            (a0_val,) = solver.solve_actions(team, [a0], args.max_nodes)
        elif root is False:
            a0_val = False
        # the rollout oracle of search_oracle.py: each candidate played out by the heuristic
        po = {}
        for c in candidate_actions(v, h, a0, 8, widen=True):
            d = game.deal.clone()
            d.apply_unchecked(c)
            r = rollout(d, h, team)
            assert isinstance(r, tuple)
            po[c] = r[0] > 0
        po_gain = not po[a0] and any(po.values())
        row = (total, nodes, secs, root, a0_val, po[a0], po_gain)
        rows.append(row)
        line = (f"game {g} seat {seat} cards {deal.n_cards} total {total} nodes {nodes} "
                f"ms {secs * 1000:.0f} root {root} heuristic_move {a0_val} playout_win {po[a0]} "
                f"playout_gain {po_gain}")
        print(line, flush=True)
        if log:
            print(line, file=log, flush=True)
    print()
    print(f"late={args.late} games={args.games} from seed {args.first}, max_nodes={args.max_nodes}, "
          f"order={args.order}: {len(rows)} positions")
    head = "| total cards left | positions | " + " | ".join(f"settled <= {b:,}" for b in budgets)
    print(head + " | median ms (settled) | max ms (settled) |")
    print("|---" * (4 + len(budgets)) + "|")
    for lo, hi in BUCKETS + ((0, 108),):
        sel = [r for r in rows if lo <= r[0] <= hi]
        if not sel:
            continue
        cells = []
        for b in budgets:
            k = sum(1 for r in sel if r[1] is not None and r[1] <= b)
            cells.append(f"{k} ({100 * k / len(sel):.0f}%)")
        ms = sorted(r[2] * 1000 for r in sel if r[1] is not None)
        med = f"{ms[len(ms) // 2]:.0f}" if ms else "-"
        mx = f"{ms[-1]:.0f}" if ms else "-"
        name = "all" if (lo, hi) == (0, 108) else f"{lo}-{hi}"
        print(f"| {name} | {len(sel)} | " + " | ".join(cells) + f" | {med} | {mx} |")
    settled = [r for r in rows if r[3] is not None]
    wins = [r for r in settled if r[3]]
    lose_a0 = [r for r in wins if r[4] is False]
    unsure = [r for r in wins if r[4] is None]
    print(f"exact oracle: settled {len(settled)}; mover's team can win {len(wins)}; "
          f"heuristic's move loses while another action wins {len(lose_a0)} "
          f"(heuristic move unsettled {len(unsure)}); mover's team lost whatever it plays "
          f"{len(settled) - len(wins)}")
    po_lose = [r for r in settled if not r[5]]
    print(f"heuristic playout of its move loses at {len(po_lose)} of the {len(settled)} settled positions; "
          f"exactly lost (best play) at {sum(1 for r in settled if r[4] is False)}")
    print(f"rollout oracle (search_oracle.py: the heuristic's move loses when played out by the heuristic, "
          f"another candidate wins): {sum(1 for r in rows if r[6])} of {len(rows)} positions, "
          f"{sum(1 for r in settled if r[6])} of the {len(settled)} settled ones")
    if log:
        log.close()


if __name__ == "__main__":
    main()
