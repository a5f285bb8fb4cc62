"""Bombs per hand under 不洗牌 (``no_shuffle``) against shuffled deals, and what a seat can place.

Bot-only games (the heuristic bot in all four seats by default) are played twice from the same
seeds: once shuffled, once with ``no_shuffle``. Every deal after a game's first is counted (the first
deal of a game is shuffled in both modes). A hand's bombs are its ranks (2..A, wilds not used as
other ranks) with four or more cards, plus the joker bomb when it holds all four jokers; a hand
with two bombs of one rank counts it once.

For the gathered deals the script also reports what stays unknown to a seat (core/gather.py):
the bits of the secure draw, ``log2(T! * 108)`` for ``T`` gathered groups, and the cards of the
other hands a seat can place from its own packets: the rest of each trick that its packets cut
(that rest lies in the neighbouring packet), an upper bound since equal cards can hide which trick
a packet edge cut.

Usage (about 2 minutes on one core for 200 games)::

    PYTHONPATH=src python scripts/bombs_no_shuffle.py --games 200 --seed 1
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import time
from collections import Counter
from collections.abc import Sequence

from guandan.agents.driver import step
from guandan.agents.registry import make_agent
from guandan.core.cards import FACE_RANK, parse_card
from guandan.core.gather import PACKET_SIZE, deal_packets, gather_pile
from guandan.core.match import Game
from guandan.core.rules import RuleSet


def bombs_in(hand: Sequence[int]) -> int:
    """Bombs in a hand of faces: ranks 2..A with 4+ cards, plus the joker bomb (all four jokers)."""
    ranks = Counter(FACE_RANK[f] for f in hand)
    natural = sum(1 for r, n in ranks.items() if r < 13 and n >= 4)
    return natural + (1 if ranks.get(13, 0) == 2 and ranks.get(14, 0) == 2 else 0)


def placeable(groups: list[list[int]], rng: random.Random) -> tuple[float, float]:
    """``(bits, cards)``: log2(T! * 108) and the mean over seats of the other hands' cards a seat can
    place (the rest of the groups cut by its own packets' edges)."""
    ids = [[(gi, k) for k in range(len(g))] for gi, g in enumerate(groups)]
    flat = {x: i for i, x in enumerate(x for g in ids for x in g)}
    pile = gather_pile([[flat[x] for x in g] for g in ids], rng)
    inverse = {i: x for x, i in flat.items()}
    group_at = [inverse[i][0] for i in pile]
    hands = deal_packets(list(range(108)))  # positions of each seat's cards on the pile
    placed = []
    for s in range(4):
        mine = set(hands[s])
        cut = {group_at[p] for p in mine}
        edge = {g for g in cut if any(group_at[q] == g and q not in mine for q in range(108))}
        placed.append(sum(len(groups[g]) for g in edge) - sum(1 for p in mine if group_at[p] in edge))
    bits = (math.lgamma(len(groups) + 1) / math.log(2)) + math.log2(108)
    return bits, statistics.mean(placed)


def run(games: int, seed: int, bot: str) -> dict[str, float]:
    out: dict[str, list[float]] = {"shuffled": [], "no_shuffle": [], "bits": [], "placed": [], "groups": []}
    for mode in ("shuffled", "no_shuffle"):
        rules = RuleSet.official().replace(no_shuffle=mode == "no_shuffle")
        for i in range(games):
            g = Game(rules, seed=seed + i, gather_rng=random.Random(seed + i))
            agents = [make_agent(bot, seed=4 * (seed + i) + s) for s in range(4)]
            while not g.over:
                before = g.deal_number
                step(g, agents)
                if g.deal_number != before and not g.over:
                    ev = g.events[g.deal_event_index]
                    hands = [[parse_card(c) for c in h] for h in ev["hands"]]
                    out[mode].extend(bombs_in(h) for h in hands)
                    if mode == "no_shuffle":
                        groups = g._prev_groups  # the groups the new deal was gathered from
                        bits, placed = placeable(groups, random.Random(seed * 7 + i))
                        out["bits"].append(bits)
                        out["placed"].append(placed)
                        out["groups"].append(len(groups))
    return {k: statistics.mean(v) if v else float("nan") for k, v in out.items()} | {
        "hands_shuffled": len(out["shuffled"]), "hands_no_shuffle": len(out["no_shuffle"])}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--games", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--bot", default="heuristic")
    a = ap.parse_args()
    t0 = time.perf_counter()
    r = run(a.games, a.seed, a.bot)
    print(f"bombs per hand, shuffled:   {r['shuffled']:.3f} ({r['hands_shuffled']} hands)")
    print(f"bombs per hand, no_shuffle: {r['no_shuffle']:.3f} ({r['hands_no_shuffle']} hands)")
    print(f"gathered groups per deal: {r['groups']:.1f}; secure bits per deal: {r['bits']:.1f}")
    print(f"other hands' cards a seat can place from its packets' edges (mean, of 81): {r['placed']:.1f}")
    print(f"packets of {PACKET_SIZE}; {a.games} games per mode, bot {a.bot}, seed {a.seed}; "
          f"{time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
