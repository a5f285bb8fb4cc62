"""Storage cost of one action of a live table: bytes written and time, early and late in a game.

Plays one seeded game (one ``Game`` with ``max_games=1``, heuristic bots) and after every action
stores it the way the web server does:

* ``--store record``: the room's ``record`` column rewritten with the whole JSON Lines record so
  far (``RoomStore.save``; the server's storage before issue 10);
* ``--store rows``: one ``game_events`` row per new line (``GameStore.append``; issue 10).

For the first and last ``--window`` actions it reports the mean payload bytes sent per action (the
record text or the new lines, UTF-8), the mean wall time of the write (ms), and the bytes the
database wrote per action: on PostgreSQL the WAL (``pg_current_wal_lsn`` before and after each
write: table, index and TOAST pages), on SQLite the bytes this process passed to ``write(2)``
(``wchar`` of ``/proc/self/io``: database file and rollback journal; Linux only).

Usage::

    python scripts/bench_storage.py --db sqlite:///tmp/bench.db --store rows
    python scripts/bench_storage.py --db postgresql+psycopg://postgres@127.0.0.1:5432/bench --store record

The database is migrated to the newest revision first; the script adds one user-less room
(``bench-<random>``) and leaves it, finished, in the database.
"""

from __future__ import annotations

import argparse
import secrets
import statistics
import sys
import time


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--db", required=True, help="database URL or SQLite path (migrated first)")
    p.add_argument("--store", choices=("record", "rows"), default="rows",
                   help="record: rewrite rooms.record per action (old); rows: one game_events row per event")
    p.add_argument("--seed", type=int, default=7, help="game seed (default 7)")
    p.add_argument("--window", type=int, default=100, help="actions measured at the start and at the end (default 100)")
    args = p.parse_args(argv)
    if args.window < 1:
        p.error("--window must be at least 1")

    from sqlalchemy import text

    from guandan.agents.registry import make_agent
    from guandan.core.match import Game
    from guandan.core.rules import RuleSet
    from guandan.core.views import seat_view
    from guandan.records import dumps, record_header
    from guandan.server import db as gdb
    from guandan.server import models
    from guandan.server.roomstore import RoomStore

    url = gdb.database_url(args.db)
    engine = gdb.make_engine(url)
    gdb.migrate(engine)
    factory = gdb.make_session_factory(engine)
    pg = engine.dialect.name == "postgresql"

    room_id = "b" + secrets.token_hex(3)
    with factory() as db:
        db.add(models.Room(id=room_id, name="bench", preset="official", options={}, status="playing", record=""))
        db.commit()

    game = Game(RuleSet.preset("official"), seed=args.seed, max_games=1)
    agents = [make_agent("heuristic", args.seed * 4 + s) for s in range(4)]
    names = ["p0", "p1", "p2", "p3"]
    lines = [dumps(record_header(game, "official", names))]

    rooms = RoomStore(factory)
    if args.store == "rows":
        from guandan.server.gamestore import GameStore

        games = GameStore(factory)
        games.append(room_id, 0, lines)
    else:
        rooms.save(room_id, lines[0] + "\n", "playing")

    def wal() -> int:
        if not pg:  # SQLite writes from this process: bytes passed to write(2) (file and journal)
            with open("/proc/self/io") as f:
                return next(int(x.split()[1]) for x in f if x.startswith("wchar:"))
        with engine.connect() as conn:
            return int(conn.execute(text("SELECT pg_current_wal_lsn() - '0/0'::pg_lsn")).scalar_one())

    samples: list[tuple[int, float, int]] = []  # (payload bytes, seconds, wal bytes) per action
    while not game.over:
        seat = game.to_act()
        assert seat is not None
        game.apply(agents[seat].act(seat_view(game, seat)), seat)
        start = len(lines)
        lines.extend(dumps(ev) for ev in game.events[start - 1:])
        w0 = wal()
        t0 = time.perf_counter()
        if args.store == "rows":
            new = lines[start:]
            games.append(room_id, start, new)
            payload = sum(len(x.encode()) + 1 for x in new)
        else:
            record = "".join(x + "\n" for x in lines)
            rooms.save(room_id, record, "playing")
            payload = len(record.encode())
        dt = time.perf_counter() - t0
        samples.append((payload, dt, wal() - w0))

    n = len(samples)
    k = min(args.window, n // 2)
    print(f"{engine.dialect.name}, store={args.store}: {n} actions, {len(lines)} record lines, "
          f"{sum(len(x.encode()) + 1 for x in lines)} record bytes at the end")
    for label, part in (("first", samples[:k]), ("last", samples[-k:])):
        b = statistics.mean(s[0] for s in part)
        ms = statistics.mean(s[1] for s in part) * 1000
        p90 = sorted(s[1] for s in part)[int(0.9 * (len(part) - 1))] * 1000
        what = "WAL" if pg else "file+journal write()"
        extra = f", {what} {statistics.mean(s[2] for s in part):.0f} B/action"
        print(f"  {label} {k} actions: payload {b:.0f} B/action, write {ms:.2f} ms mean ({p90:.2f} ms p90){extra}")
    engine.dispose()
    return 0


if __name__ == "__main__":
    sys.exit(main())
