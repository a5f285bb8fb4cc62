"""Simulated matchmaking traffic: what settling (``matchmaking.formed_now``) costs and gives.

Pure simulation of the matching loop's rounds (every ``--tick`` seconds, as
``api_matchmaking.TICK_S``) over :func:`guandan.server.matchmaking.decide`, no server: players alone
join at random (a Poisson stream of ``--rate`` joins a second, display ratings drawn from a normal
law, mean 15, deviation ``--spread``), and every table found is taken either at once ("round by
round", the rule before settling) or as the queue's round now takes them (``must_form`` and
``formed_now``). Nobody declines a ready check. Players who joined in the first ``--warmup`` seconds
are not counted (the queue fills up).

Reported per rate and rule: players seated, their waits (p50, p90, p99, seconds from joining to the
round that formed their table) and the mean spread of the tables (highest minus lowest rating).

``--burst N``: instead, N players join at ``--rate`` a second (one burst) and the script reports how
many of them were seated by ``--by`` seconds after the first join, under each rule, beside the most
that one decision over all N seats.

Usage: ``PYTHONPATH=src python scripts/matchmaking_sim.py [--rates 2,10,30,100] [--seconds 150]``
or ``... --burst 1000 --rate 572 --seeds 1-8``.
"""

from __future__ import annotations

import argparse
import random
import statistics
from collections.abc import Callable

from guandan.server import matchmaking as mm

Rule = Callable[[list[mm.Ticket], float], list[mm.Match]]


def round_by_round(queue: list[mm.Ticket], now: float) -> list[mm.Match]:
    """Every table found is formed at once (the rule before settling)."""
    return mm.decide(queue, now).matches


def settling(queue: list[mm.Ticket], now: float) -> list[mm.Match]:
    """As ``MatchQueue.tick`` now forms tables."""
    if not mm.must_form(queue, now):
        return []
    return mm.formed_now(mm.decide(queue, now), queue, now)


RULES: dict[str, Rule] = {"round by round": round_by_round, "settling": settling}


def simulate(arrivals: list[tuple[float, float]], rule: Rule, tick: float, until: float
             ) -> tuple[dict[int, float], list[float]]:
    """Run the rounds. ``arrivals``: ``(join time, rating)`` sorted by time. Returns
    ``({player: time seated}, [spread of each table])``."""
    queue: dict[str, mm.Ticket] = {}
    seated: dict[int, float] = {}
    spreads: list[float] = []
    i, now = 0, 0.0
    while now <= until:
        while i < len(arrivals) and arrivals[i][0] <= now:
            queue[str(i)] = mm.Ticket(str(i), (i,), (arrivals[i][1],), arrivals[i][0])
            i += 1
        if queue:
            for m in rule(list(queue.values()), now):
                tickets = [queue.pop(t) for t in m.tickets]
                spreads.append(max(t.rating for t in tickets) - min(t.rating for t in tickets))
                for t in tickets:
                    seated[t.members[0]] = now
        now += tick
    return seated, spreads


def _q(xs: list[float], q: float) -> float:
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def steady(rate: float, seconds: float, warmup: float, spread: float, tick: float, seed: int) -> None:
    rng = random.Random(seed)
    arrivals, t = [], rng.expovariate(rate)
    while t < seconds:
        arrivals.append((t, rng.gauss(15.0, spread)))
        t += rng.expovariate(rate)
    for name, rule in RULES.items():
        seated, spreads = simulate(arrivals, rule, tick, seconds)
        waits = sorted(seated[k] - arrivals[k][0] for k in seated if arrivals[k][0] >= warmup)
        print(f"{rate:6g} joins/s  {name:15s} seated {len(waits):5d}  wait p50 {_q(waits, .5):5.2f} s  "
              f"p90 {_q(waits, .9):5.2f} s  p99 {_q(waits, .99):5.2f} s  table spread {statistics.mean(spreads):.2f}")


def burst(n: int, rate: float, by: float, spread: float, tick: float, seed: int) -> None:
    rng = random.Random(seed)
    ratings = [rng.gauss(15.0, spread) for _ in range(n)]
    arrivals = [(k / rate, r) for k, r in enumerate(ratings)]
    best = 4 * len(mm.decide([mm.Ticket(str(k), (k,), (r,), 0.0) for k, r in enumerate(ratings)], 0.0).matches)
    got = {name: len(simulate(arrivals, rule, tick, by)[0]) for name, rule in RULES.items()}
    print(f"seed {seed}: seated by {by:g} s: " + ", ".join(f"{k} {v}" for k, v in got.items())
          + f"; one decision over all {n}: {best}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rates", default="2,10,30,100", help="joins a second, comma-separated (steady traffic)")
    ap.add_argument("--seconds", type=float, default=150.0, help="simulated seconds of steady traffic")
    ap.add_argument("--warmup", type=float, default=20.0, help="first seconds not counted")
    ap.add_argument("--spread", type=float, default=6.0, help="deviation of the display ratings (points)")
    ap.add_argument("--tick", type=float, default=0.1, help="seconds between two rounds")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--burst", type=int, default=0, help="simulate one burst of N players instead")
    ap.add_argument("--rate", type=float, default=572.0, help="joins a second in the burst")
    ap.add_argument("--by", type=float, default=2.0, help="seconds after the first join (burst)")
    ap.add_argument("--seeds", default="1-8", help="burst seeds, as A-B")
    args = ap.parse_args()
    if args.burst:
        lo, hi = (int(x) for x in args.seeds.split("-"))
        for seed in range(lo, hi + 1):
            burst(args.burst, args.rate, args.by, args.spread, args.tick, seed)
        return
    for rate in (float(r) for r in args.rates.split(",")):
        steady(rate, args.seconds, args.warmup, args.spread, args.tick, args.seed)


if __name__ == "__main__":
    main()
