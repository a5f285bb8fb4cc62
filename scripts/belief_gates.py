"""Gates of the learned belief (issue 23): hand statistics of sampled worlds (G1) and the
late-position deviation experiment (G2). Measurement only; prints one JSON object.

  python scripts/belief_gates.py hands [--worlds 24]
      Positions of ``late_positions(700, 16, 10, HeuristicAgent(1))``, every 4th (the issue's
      52 positions, 156 hidden hands): mean ``heuristic.hand_cost`` of the real hidden hands
      and of each sampler's hidden hands (``greedy``, ``exact``, ``table``, ``net``), overall and for
      hands of 10 cards or fewer, with bombs per hand (bombs in the hand's best decomposition).

  python scripts/belief_gates.py positions --spec SPEC [--spec SPEC ...]
      Positions of ``late_positions(900, 14, 10, HeuristicAgent(1))``, every 2nd (the issue's
      106): each spec's move against the heuristic's; every changed move and the heuristic's
      are played out on the real hands with the heuristic (as ``bench-search --audit``):
      moves changed, deals gained / lost. A spec with ``sampler=oracle`` draws worlds with the
      exact sampler given every hidden seat's real count of every rank group (suits shuffled),
      the issue's upper bound, through the same code path as ``sampler=table``. Specs with
      ``sampler=net2``, ``net3`` or ``net5`` draw from the belief network tilted more sharply,
      ``q(k)^t / h(k)`` with t = 2, 3, 5 (measured 2026-12-04, docs/bot-strength.md).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time

from guandan.agents import make_agent
from guandan.agents.heuristic import HeuristicAgent, decompose
from guandan.agents.search import world_sampler
from guandan.core.cards import N_FACES
from guandan.core.plays import BOMB_TYPES
from guandan.core.worlds import WorldConstraints
from guandan.evaluation.search_audit import late_positions, true_outcome


def _stats(hand: tuple[int, ...], level: int) -> tuple[float, int]:
    counts = [0] * N_FACES
    for f in hand:
        counts[f] += 1
    d = decompose(counts, level)
    return d.cost, sum(1 for c in d.combos if c[0] in BOMB_TYPES)


def hands(worlds: int, samplers: list[str]) -> dict[str, object]:
    acc: dict[str, list[float]] = {k: [0.0, 0.0, 0.0, 0.0, 0.0] for k in ["real"] + samplers}
    secs = dict.fromkeys(samplers, 0.0)
    positions = 0
    for i, (_g, game, seat, view, _a) in enumerate(late_positions(700, 16, 10, HeuristicAgent(1))):
        if i % 4:
            continue
        positions += 1
        cons = WorldConstraints(view)
        hidden = [s for s in cons.others if cons.counts[s] > 0]
        real = {s: tuple(f for f in range(N_FACES) for _ in range(game.deal.hands[s][f])) for s in hidden}
        groups: dict[str, list[dict[int, tuple[int, ...]]]] = {"real": [real]}
        for kind in samplers:
            t0 = time.perf_counter()
            draw = world_sampler(kind, view, cons)
            ws = [draw(random.Random(f"{i}:{j}")) for j in range(worlds)]
            secs[kind] += time.perf_counter() - t0
            groups[kind] = [{s: w[s] for s in hidden} for w in ws]
        for kind, ws_ in groups.items():
            a = acc[kind]
            for w in ws_:
                for s in hidden:
                    cost, bombs = _stats(w[s], view.level)
                    a[0] += cost
                    a[1] += 1
                    if len(w[s]) <= 10:
                        a[2] += cost
                        a[3] += bombs
                        a[4] += 1
    out: dict[str, object] = {"positions": positions}
    for kind, a in acc.items():
        out[kind] = {"cost": round(a[0] / a[1], 3), "hands": int(a[1]),
                     "cost_le10": round(a[2] / max(a[4], 1), 3), "bombs_le10": round(a[3] / max(a[4], 1), 3),
                     "hands_le10": int(a[4])}
        if kind in secs:
            out[kind]["ms_per_position"] = round(1000 * secs[kind] / positions, 1)  # type: ignore[index]
    return out


_TRUTH: dict[str, list[list[int]]] = {}


def _install_oracle() -> None:
    """Add the ``oracle`` world sampler to the search (this process only; measurement)."""
    import guandan.agents.search as search

    if "oracle" in search.WORLD_SAMPLERS:
        return
    search.WORLD_SAMPLERS = search.WORLD_SAMPLERS + ("oracle",)
    plain = search.world_sampler

    def patched(kind, view, cons):  # type: ignore[no-untyped-def]
        if kind != "oracle":
            return plain(kind, view, cons)
        y = _TRUTH["groups"]
        w = [[[1.0 if k == y[s][g] else 0.0 for k in range(9)] for g in range(16)] for s in range(4)]
        return cons.exact(w).sample

    search.world_sampler = patched


#: the sharper tilts of :func:`_install_tilts`: sampler name -> exponent of the network's q
TILTS = {"net2": 2.0, "net3": 3.0, "net5": 5.0}


def _install_tilts() -> None:
    """Add the samplers ``net2``/``net3``/``net5``: exact draws tilted by ``q(k)^t / h(k)`` (this
    process only; measurement)."""
    import guandan.agents.search as search
    from guandan.agents.belief import hypergeometric, seat_features
    from guandan.agents.belief_net import NetPrior, history_features
    from guandan.core.exact_worlds import MAX_GROUP, N_GROUPS

    if "net2" in search.WORLD_SAMPLERS:
        return
    search.WORLD_SAMPLERS = search.WORLD_SAMPLERS + tuple(TILTS)
    plain = search.world_sampler
    prior = NetPrior.load()

    def patched(kind, view, cons):  # type: ignore[no-untyped-def]
        if kind not in TILTS:
            return plain(kind, view, cons)
        feats = seat_features(view, cons)
        hist = history_features(view)
        qs = prior.predict_many(feats, [hist[f.seat] for f in feats])
        w = [[[1.0] * (MAX_GROUP + 1) for _ in range(N_GROUPS)] for _ in range(4)]
        for f, q in zip(feats, qs):
            for g in range(N_GROUPS):
                h = hypergeometric(f.n, min(f.u[g], MAX_GROUP), f.total)
                w[f.seat][g] = [q[g][k] ** TILTS[kind] / h[k] if h[k] > 0 else 0.0 for k in range(MAX_GROUP + 1)]
        return cons.exact(w).sample

    search.world_sampler = patched


def positions(specs: list[str], step: int = 2) -> dict[str, object]:
    if any("sampler=oracle" in s for s in specs):
        _install_oracle()
    if any(f"sampler={t}" in s for s in specs for t in TILTS):
        _install_tilts()
    from guandan.core.exact_worlds import group_of_faces

    heuristic = HeuristicAgent(1)
    agents = [make_agent(s, 1) for s in specs]
    stats = {s: {"positions": 0, "changed": 0, "gained": 0, "lost": 0, "even": 0, "seconds": 0.0,
                 "winning_found": 0} for s in specs}
    winnable = 0
    for i, (_g, game, seat, view, a0) in enumerate(late_positions(900, 14, 10, heuristic)):
        if i % step:
            continue
        truth: dict[object, int] = {}
        gof = group_of_faces(view.level)
        _TRUTH["groups"] = [[sum(game.deal.hands[s][f] for f in range(N_FACES) if gof[f] == g) for g in range(16)]
                            for s in range(4)]

        def outcome(a: object) -> int:
            return true_outcome(game, seat, a, truth, heuristic)  # type: ignore[arg-type]

        base = outcome(a0)
        for spec, agent in zip(specs, agents):
            st = stats[spec]
            st["positions"] += 1
            t0 = time.perf_counter()
            a1 = agent.act(view)
            st["seconds"] += time.perf_counter() - t0
            if a1 == a0:
                continue
            st["changed"] += 1
            d = outcome(a1) - base
            st["gained" if d > 0 else "lost" if d < 0 else "even"] += 1
            if d > 0:
                st["winning_found"] += 1
        if base < 0:
            # a position the heuristic's move loses: does some legal move win it? (as the issue)
            cands = getattr(agents[0], "last", None)
            pool = list(cands.candidates) if cands is not None and cands.candidates else []
            if any(outcome(a) > 0 for a in pool):
                winnable += 1
        print(json.dumps({"position": i, **{s: [v["changed"], v["gained"], v["lost"]] for s, v in stats.items()}}),
              file=sys.stderr, flush=True)
    return {"winnable_among_first_spec_candidates": winnable, **stats}


def main() -> int:
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    h = sub.add_parser("hands")
    h.add_argument("--worlds", type=int, default=24)
    h.add_argument("--sampler", action="append", default=None, help="greedy, exact, table, net")
    p = sub.add_parser("positions")
    p.add_argument("--spec", action="append", required=True)
    p.add_argument("--step", type=int, default=2)
    a = ap.parse_args()
    t0 = time.process_time()
    if a.cmd == "hands":
        out = hands(a.worlds, a.sampler or ["greedy", "exact", "table", "net"])
    else:
        out = positions(a.spec, a.step)
    out["cpu_s"] = round(time.process_time() - t0, 1)
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
