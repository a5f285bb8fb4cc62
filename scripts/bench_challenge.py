"""Benchmark of the daily challenge's leaderboard read from the database (issue 22).

A fresh database (SQLite file, or ``--db`` a PostgreSQL URL) gets a day's challenge, ``--players``
accounts and their results on ``--boards`` boards (synthetic results -3..+3 without 0, finished over
ten hours). Then the day's leaderboard is answered as ``GET /api/challenge/leaderboard`` answers it
(:meth:`guandan.server.challenge_store.ChallengeStore.scores`: settle, count the results, read
those stored since the last answer, rank; the top 100 lines and one player's own line): once
cold (every result read), ``--repeat`` times with no new result, and ``--repeat`` times after
one new result each. Target: < 100 ms.

Usage: ``PYTHONPATH=src python scripts/bench_challenge.py [--players N] [--boards B] [--db URL]``
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from datetime import date, timedelta
from pathlib import Path

from sqlalchemy import insert, select

from guandan.server import models
from guandan.server.challenge import ChallengeConfig, standings_json
from guandan.server.challenge_store import ChallengeStore
from guandan.server.db import make_engine, make_session_factory, migrate


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--players", type=int, default=10_000)
    ap.add_argument("--boards", type=int, default=12)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--db", default=None, help="database URL (default: a new SQLite file)")
    args = ap.parse_args()
    url = args.db or f"sqlite:///{Path(tempfile.mkdtemp()) / 'bench.db'}"
    engine = make_engine(url)
    migrate(engine)
    store = ChallengeStore(make_session_factory(engine))
    ch = store.get_or_create(date(2026, 12, 4), ChallengeConfig(boards=args.boards))
    rng = random.Random(1)
    with engine.begin() as c:
        c.execute(insert(models.User), [{"name": f"u{i}", "is_guest": False, "created_at": models.utcnow()}
                                        for i in range(args.players)])
        ids = [r[0] for r in c.execute(select(models.User.id))]
        start = models.utcnow() - timedelta(hours=10)
        rows = [{"challenge_id": ch.id, "board": b, "user_id": u, "seat": 0, "ranked": True,
                 "result": rng.choice((-3, -2, -1, 1, 2, 3))} for u in ids for b in range(1, args.boards)]
        for i, r in enumerate(rows):
            r["started_at"] = r["finished_at"] = start + timedelta(seconds=i * 36_000 / len(rows))
        c.execute(insert(models.ChallengePlayRow), rows)

    def answer() -> float:
        t = time.perf_counter()
        with store.scores(ch) as (scores, names):
            standings_json(scores.leaderboard(0, 100), names)
            scores.standing(ids[len(ids) // 2])
        return 1000 * (time.perf_counter() - t)

    kind = url.split(":", 1)[0]
    print(f"{kind}: {args.players} players, {len(rows)} results on {args.boards - 1} boards")
    print(f"  cold (every result read): {answer():.0f} ms")
    print("  no new result:            " + ", ".join(f"{answer():.0f}" for _ in range(args.repeat)) + " ms")
    times = []
    for k in range(args.repeat):
        with engine.begin() as c:
            now = models.utcnow()
            c.execute(insert(models.ChallengePlayRow), [{
                "challenge_id": ch.id, "board": args.boards, "user_id": ids[k], "seat": 0, "ranked": True,
                "result": 2, "started_at": now, "finished_at": now}])
        times.append(answer())
    print("  after one new result:     " + ", ".join(f"{x:.0f}" for x in times) + " ms")
    engine.dispose()


if __name__ == "__main__":
    main()
