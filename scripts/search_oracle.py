"""How much a perfect-information search could gain at late positions (a diagnostic for `hard`).

Heuristic self-play games ``Game(seed=first + i)`` are walked to their first settlement; at every
play-phase decision with a choice, before anyone has gone out, where a seat still playing holds at
most ``late`` cards, each of the search's candidate actions (``candidate_actions``, up to 8, the
late list) is played out on the REAL hands by the heuristic for every seat (R29-R33). Printed:
positions, positions where the heuristic's own move loses the deal (R35), and those of them where
another candidate wins it. An oracle that knew the hands would gain at the last kind; the search,
which samples the hidden hands, can only approach it.

Usage: ``.venv/bin/python scripts/search_oracle.py LATE GAMES [FIRST_SEED]``
"""

from __future__ import annotations

import sys

from guandan.agents.heuristic import HeuristicAgent
from guandan.agents.search import candidate_actions, rollout
from guandan.evaluation.search_audit import late_positions


def main(late: int, games: int, first: int = 500) -> None:
    h = HeuristicAgent(1)
    positions = loses = gain = 0
    for _g, game, seat, v, a0 in late_positions(first, games, late, h):
        positions += 1
        won = {}
        for c in candidate_actions(v, h, a0, 8, widen=True):
            d = game.deal.clone()
            d.apply_unchecked(c)
            r = rollout(d, h, seat & 1)
            assert isinstance(r, tuple)
            won[c] = r[0] > 0
        if not won[a0]:
            loses += 1
            gain += any(won.values())
    print(f"late={late} games={games} from seed {first}: positions {positions}, heuristic's move loses {loses}, "
          f"another candidate wins instead {gain}")


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]) if len(sys.argv) > 3 else 500)
