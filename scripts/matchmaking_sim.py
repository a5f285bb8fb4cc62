"""Simulated matchmaking traffic: what settling (``matchmaking.formed_now``) costs and gives.

Pure simulation of the matching loop's rounds (every ``--tick`` seconds, as
``api_matchmaking.TICK_S``) over :func:`guandan.server.matchmaking.decide`, no server: players alone
join at random (a Poisson stream of each of ``--rates`` joins a second, display ratings from a normal
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
        if not waits:
            print(f"{rate:6g} joins/s  {name:15s} nobody seated after the warm-up")
            continue
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
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\nUsage:")[0] + f"\n\nThe settling limits are the code's: no join for "
        f"{mm.SETTLE_QUIET_S:g} s (SETTLE_QUIET_S), at most {mm.SETTLE_MAX_S:g} s (SETTLE_MAX_S).",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--spread", type=float, default=6.0, help="deviation of the display ratings, points (default 6)")
    ap.add_argument("--tick", type=float, default=0.1, help="seconds between two rounds (default 0.1, as TICK_S)")
    steady_args = ap.add_argument_group("steady traffic (the default)")
    steady_args.add_argument("--rates", default="2,10,30,100", help="joins a second, comma-separated (default 2,10,30,100)")
    steady_args.add_argument("--seconds", type=float, default=150.0,
                             help="simulated seconds per rate (default 150; short runs leave more players unseated)")
    steady_args.add_argument("--warmup", type=float, default=20.0, help="first seconds not counted (default 20)")
    steady_args.add_argument("--seed", type=int, default=0, help="seed of the joins and ratings (default 0)")
    burst_args = ap.add_argument_group("one burst (--burst N)")
    burst_args.add_argument("--burst", type=int, default=0, help="N players join at --rate a second")
    burst_args.add_argument("--rate", type=float, default=572.0, help="joins a second in the burst (default 572)")
    burst_args.add_argument("--by", type=float, default=2.0, help="count those seated this many seconds after the first join (default 2)")
    burst_args.add_argument("--seeds", default="1-8", help="rating draws, as A-B or one number (default 1-8; seed 1 is the bench's)")
    args = ap.parse_args()
    if args.tick <= 0 or args.spread < 0 or args.seconds <= 0 or (args.burst and (args.rate <= 0 or args.by <= 0)):
        ap.error("--tick, --seconds, --rate and --by must be positive, --spread not negative")
    if args.burst:
        try:
            parts = [int(x) for x in args.seeds.split("-")]
            lo, hi = parts[0], parts[-1]
            if len(parts) > 2 or hi < lo:
                raise ValueError
        except ValueError:
            ap.error(f"--seeds must look like 1-8 or 3, not {args.seeds!r}")
        for seed in range(lo, hi + 1):
            burst(args.burst, args.rate, args.by, args.spread, args.tick, seed)
        return
    try:
        rates = [float(r) for r in args.rates.split(",")]
    except ValueError:
        ap.error(f"--rates must be numbers separated by commas, not {args.rates!r}")
    if any(r <= 0 for r in rates):
        ap.error("--rates must be positive")
    print("seated: players whose table was formed (nobody declines here); waits count only them")
    for rate in rates:
        steady(rate, args.seconds, args.warmup, args.spread, args.tick, args.seed)


if __name__ == "__main__":
    main()
