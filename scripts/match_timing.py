"""Decision times and levels per deal of our bot in a ``match.py`` run (README "Bot strength").

``../shared/opponents/match.py --out DIR`` keeps the records of both seatings
(``DIR/ours-seats02/rec``, ``DIR/ours-seats13/rec``) but not how long our bot took. This script
replays the records (:func:`guandan.records.replay`, every event verified) and, at each position
where one of our seats is to act, times ``BOT``'s decision alone (``time.perf_counter``; the
protocol client's own overhead is not included). It also sums the levels won per deal by each
side over every recorded deal (R35).

Usage: ``.venv/bin/python scripts/match_timing.py BOT DIR [GAMES_PER_SEATING]``; prints one JSON
line: deals, levels per deal (ours, theirs), timed decisions, mean / p99 / max in milliseconds.
"""

from __future__ import annotations

import glob
import json
import os
import sys
import time

from guandan.agents import make_agent
from guandan.core.views import seat_view
from guandan.records import replay


def main(bot: str, out: str, max_games: int | None = None) -> dict[str, object]:
    agent = make_agent(bot, 1)
    times: list[float] = []
    lv_ours = lv_theirs = deals = 0
    for run in ("ours-seats02", "ours-seats13"):
        ours = {0, 2} if run.endswith("02") else {1, 3}
        team = 0 if run.endswith("02") else 1
        paths = sorted(glob.glob(os.path.join(out, run, "rec", "game-*.jsonl")))
        if not paths:
            raise SystemExit(f"no records under {os.path.join(out, run, 'rec')}")
        for p in paths:
            with open(p, encoding="utf-8") as f:
                for line in f:
                    ev = json.loads(line)
                    if ev.get("type") == "deal_end":
                        deals += 1
                        if ev["winner_team"] == team:
                            lv_ours += ev["upgrade"]
                        else:
                            lv_theirs += ev["upgrade"]
        for p in paths[:max_games]:
            last = [-1]

            def on_event(_line: int, _ev: dict[str, object], game: object) -> None:
                n = len(game.events)  # type: ignore[attr-defined]
                if n == last[0] or game.over:  # type: ignore[attr-defined]
                    return
                last[0] = n
                seat = game.to_act()  # type: ignore[attr-defined]
                if seat in ours:
                    v = seat_view(game, seat)  # type: ignore[arg-type]
                    t0 = time.perf_counter()
                    agent.act(v)
                    times.append(time.perf_counter() - t0)

            replay(p, on_event)
    times.sort()
    n = len(times)
    return {"bot": bot, "out": out, "deals": deals,
            "levels_per_deal_ours": round(lv_ours / deals, 3) if deals else None,
            "levels_per_deal_theirs": round(lv_theirs / deals, 3) if deals else None,
            "timed_decisions": n,
            "mean_ms": round(1000 * sum(times) / n, 3) if n else None,
            "p99_ms": round(1000 * times[min(n - 1, int(0.99 * n))], 3) if n else None,
            "max_ms": round(1000 * times[-1], 2) if n else None}


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        raise SystemExit(__doc__)
    print(json.dumps(main(sys.argv[1], sys.argv[2], int(sys.argv[3]) if len(sys.argv) == 4 else None)))
