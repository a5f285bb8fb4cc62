"""Benchmark of matchmaking (issue 25 item 1, "Speed and scale"): 1,000 players queue at once on one
server and are matched; target < 2 s.

The server is the real app (:func:`guandan.server.app.create_app`, one process, the queue in
memory, a new SQLite file or ``--db`` a PostgreSQL URL) served by uvicorn on loopback in this
process. It gets ``--players`` guest accounts, whose ratings are then set in the database to a
spread like a real ladder's (display rating ``mu - 3*sigma`` drawn from a normal law, mean 15,
deviation ``--spread``, seed 1). Timed: a separate client process sends every player's
``POST /api/match/join`` (``--concurrency`` requests in flight); this process watches the queue
(``MatchQueue.counts`` every 5 ms) and notes when the last player leaves it for a ready check.
Ready checks are made to last an hour here (``matchmaking.READY_S``) since nobody answers them:
the bench measures matching, not the 15 s people have to accept.

Reported: the floor (one ``GET /api/me`` per player, same concurrency: what any request with a
session costs on this machine), the joins' time, the time from the first join until 50 %, 99 % and all players are
matched, the players still waiting ``--limit`` seconds after the joins (their ratings: the range schedule keeps
far-off ratings waiting), and the matching step apart: the matching loop's rounds during the run
(time under the lock, and of it :func:`guandan.server.matchmaking.decide`), and ``decide`` alone on
the same 1,000 tickets. The machine's load average is printed before and after.

The client sends its requests with stdlib ``http.client``, one thread per connection (not httpx's
``AsyncClient``, which was itself the bound at about 100 requests a second: :func:`send_all`).

``--redis URL``: two (``--nodes``) ``guandan serve --redis URL`` processes on one Redis and one
PostgreSQL database (``--db``, default a new database next to ``postgresql://postgres@127.0.0.1:5432/test``,
dropped afterwards) share one queue; the client spreads its connections over them, and this process
watches the queue's Redis hashes. Their matching loops take the one Redis lock in turn.

Usage: ``PYTHONPATH=src python scripts/matchmaking_bench.py [--players 1000] [--spread 6] [--db URL]
[--redis redis://127.0.0.1:6379/1 [--nodes 2]]``
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

import httpx
from sqlalchemy import update

from guandan.server import matchmaking as mm
from guandan.server import models


async def guests(url: str, n: int, workers: int) -> list[tuple[str, str]]:
    """``n`` guest accounts ``(session token, name)``, ``workers`` clients at once (each forgets the
    cookie it was given, so that every request makes a new guest)."""
    out: list[tuple[str, str]] = []

    async def worker(k: int) -> None:
        async with httpx.AsyncClient(base_url=url, timeout=60) as c:
            for _ in range(k, n, workers):
                c.cookies.clear()
                r = await c.post("/api/guest", json={})
                r.raise_for_status()
                out.append((r.cookies["gd_session"], r.json()["user"]["name"]))

    await asyncio.gather(*(worker(k) for k in range(workers)))
    return out


RETRIES = [0]
#: Answers 503 ``temporarily_unavailable`` (the queue's lock not taken in time), each sent again after
#: its ``Retry-After`` as the UI would.
BUSY = [0]


def send_all(urls: list[str], method: str, path: str, tokens: list[str], conc: int, ok: tuple[int, ...]) -> float:
    """Send ``method path`` once per token (its session cookie) with ``conc`` keep-alive connections
    (stdlib ``http.client``, one thread each, connection ``k`` to ``urls[k % len(urls)]``); returns
    the seconds taken. A dropped keep-alive connection is opened again and the request sent once
    more (counted in ``RETRIES``; joining again answers the same entry, never a second one).

    Not httpx: its ``AsyncClient`` with 64 connections is itself the bound here (about 100 requests
    a second on this 2-core machine even against a bare Starlette app that answers 3,600 a second to
    this client), so the figures it gave measured the client, not the server.
    """
    body = b"{}" if method == "POST" else None
    errors: list[str] = []

    def worker(k: int) -> None:
        u = urlsplit(urls[k % len(urls)])
        conn = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
        for tok in tokens[k::conc]:
            headers = {"Cookie": f"gd_session={tok}", "Content-Type": "application/json"}
            dropped = 0
            while True:
                try:
                    conn.request(method, path, body=body, headers=headers)
                    r = conn.getresponse()
                    text = r.read()
                except (http.client.HTTPException, OSError):
                    if dropped:
                        raise
                    dropped = 1
                    RETRIES[0] += 1
                    conn.close()
                    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
                    continue
                if r.status != 503:
                    break
                BUSY[0] += 1
                time.sleep(float(r.getheader("Retry-After") or 2))
            if r.status not in ok:
                errors.append(f"{r.status} {text[:200]!r}")
        conn.close()

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(conc)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - t0
    assert not errors, errors[:3]
    return elapsed


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, max(0, int(round(q * len(xs))) - 1))]


def serve(db: str) -> tuple[object, str, threading.Thread]:
    """The app served by uvicorn on 127.0.0.1 (a free port) in a thread: ``(app, base URL, thread)``."""
    import uvicorn

    from guandan.server.app import create_app
    from guandan.server.settings import Settings

    app = create_app(Settings(db_url=db, bot_delay_s=0.05, guests_per_hour=0, registrations_per_hour=0))
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    app.state.bench_server = server
    return app, f"http://127.0.0.1:{port}", thread


def client(urls: list[str], tokens_file: str, conc: int) -> None:
    """The client process: the floor, then every join; one JSON line ``{start, end, floor, retries}``
    (wall-clock seconds)."""
    tokens = json.loads(Path(tokens_file).read_text())
    floor = send_all(urls, "GET", "/api/me", tokens, conc, (200,))
    start = time.time()
    send_all(urls, "POST", "/api/match/join", tokens, conc, (200, 201))
    print(json.dumps({"start": start, "end": time.time(), "floor": floor, "retries": RETRIES[0], "busy": BUSY[0]}),
          flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--players", type=int, default=1000)
    ap.add_argument("--spread", type=float, default=6.0, help="deviation of the display ratings (points)")
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--limit", type=float, default=30.0, help="seconds after the joins to wait for the last matches")
    ap.add_argument("--db", default=None)
    ap.add_argument("--redis", default=None, help="Redis URL: --nodes server processes on it share one queue")
    ap.add_argument("--nodes", type=int, default=2, help="server processes with --redis")
    ap.add_argument("--client", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--tokens", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.client:
        return client(args.client.split(","), args.tokens, args.concurrency)
    print("load average before: %.2f %.2f %.2f" % os.getloadavg())
    if args.redis:
        return main_redis(args)
    db = args.db or f"sqlite:///{Path(tempfile.mkdtemp()) / 'bench.db'}"
    mm.READY_S = 3600.0  # nobody answers the ready checks here (module docstring)
    app, url, thread = serve(db)
    queue = app.state.matchmaking.queue
    rounds: list[tuple[float, float]] = []  # (seconds under the lock, seconds in decide) of each round
    plain_tick = queue.tick

    def timed_tick(now: float) -> list:
        t = time.perf_counter()
        out = plain_tick(now)
        rounds.append((time.perf_counter() - t, queue.last_decide_s))
        return out

    queue.tick = timed_tick  # type: ignore[method-assign]
    try:
        t = time.perf_counter()
        accounts = asyncio.run(guests(url, args.players, 16))
        print(f"setup: {len(accounts)} guest accounts in {time.perf_counter() - t:.1f} s")
        rng = random.Random(1)
        sigma = 2.0
        ratings = {name: rng.gauss(15.0, args.spread) for _, name in accounts}
        with app.state.session_factory() as s:
            for name, r in ratings.items():
                s.execute(update(models.User).where(models.User.name == name)
                          .values(rating_mu=r + 3 * sigma, rating_sigma=sigma))
            s.commit()
        tokens_file = Path(tempfile.mkdtemp()) / "tokens.json"
        tokens_file.write_text(json.dumps([tok for tok, _ in accounts]))
        rounds.clear()
        proc = subprocess.Popen([sys.executable, __file__, "--client", url, "--tokens", str(tokens_file),
                                 "--concurrency", str(args.concurrency)], stdout=subprocess.PIPE, text=True)
        n = len(accounts)
        marks: dict[str, float] = {}
        t_begin = time.time()
        joins_end: float | None = None
        while time.time() - t_begin < args.limit + 120:
            c = queue.counts()
            matched = 4 * c["proposals"] - 0  # every proposal seats four people (no bot fill here)
            now = time.time()
            for label, share in (("50", 0.5), ("99", 0.99), ("all", 1.0)):
                if label not in marks and matched >= share * n:
                    marks[label] = now
            if joins_end is None and proc.poll() is not None:
                joins_end = now
            if "all" in marks or (joins_end is not None and now - joins_end > args.limit):
                break
            time.sleep(0.005)
        out, _ = proc.communicate(timeout=120)
        joins = json.loads(out.strip().splitlines()[-1])
        start = joins["start"]
        print(f"floor: {n} GET /api/me (session lookup only) answered in {joins['floor']:.2f} s "
              f"({n / joins['floor']:.0f} requests/s)")
        print(f"joins: {n} POST /api/match/join answered in {joins['end'] - start:.2f} s ({n / (joins['end'] - start):.0f}/s) (concurrency {args.concurrency}; "
              f"{joins['retries']} requests sent again after a dropped connection, {joins['busy']} after a 503)")
        print("matched, from the first join: " + ", ".join(f"{k} % by {v - start:.2f} s" if k != "all" else f"all by {v - start:.2f} s"
                                                           for k, v in marks.items()))
        c = queue.counts()
        if c["people"]:
            left = sorted(round(ratings[name], 1) for tok, name in accounts
                          if queue.state(app_user_id(app, name), time.time())["status"] == "queued")
            print(f"still queued at the end: {c['people']} players, ratings {left[:16]}")
        busy = [r for r in rounds if r[1] > 0]
        if busy:
            print(f"matching loop during the run: {len(rounds)} rounds; under the lock max {max(r[0] for r in rounds) * 1000:.1f} ms, "
                  f"total {sum(r[0] for r in rounds) * 1000:.0f} ms; decide max {max(r[1] for r in busy) * 1000:.1f} ms, "
                  f"total {sum(r[1] for r in busy) * 1000:.0f} ms")
    finally:
        app.state.bench_server.should_exit = True
        thread.join(20)
    rng = random.Random(1)
    tickets = [mm.Ticket(str(i), (i,), (rng.gauss(15.0, args.spread),), 0.0) for i in range(args.players)]
    t = time.perf_counter()
    d = mm.decide(tickets, 0.0)
    took = (time.perf_counter() - t) * 1000
    # the most any choice of tables seats (people alone, one 3-point range): runs of four neighbours
    # in rating order, by a plain dynamic programme (tests/test_matchmaking.py says why it is exact)
    rs = sorted(x.rating for x in tickets)
    most = [0] * (len(rs) + 1)
    for i in range(1, len(rs) + 1):
        most[i] = most[i - 1]
        if i >= 4 and rs[i - 1] - rs[i - 4] <= mm.RANGE_BASE:
            most[i] = max(most[i], most[i - 4] + 4)
    print(f"decide() alone: {len(tickets)} tickets -> {len(d.matches)} tables in {took:.1f} ms "
          f"({4 * len(d.matches)} players; the most any choice of tables seats at the 0 s range: {most[-1]})")
    print("load average after: %.2f %.2f %.2f" % os.getloadavg())


PG_BASE = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
#: The server process of ``--redis``: the real CLI, ready checks made to last an hour (nobody answers them).
NODE_CODE = "import guandan.server.matchmaking as mm; mm.READY_S = 3600.0; from guandan.cli import main; main()"


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_node(db: str, redis_url: str, prefix: str, name: str) -> tuple[subprocess.Popen[str], str]:
    """One ``guandan serve --redis`` process; returns ``(process, base URL)`` once ``/healthz`` answers."""
    port = free_port()
    cmd = [sys.executable, "-c", NODE_CODE, "serve", "--port", str(port), "--db", db, "--redis", redis_url,
           "--redis-prefix", prefix, "--node-name", name, "--log-level", "warning",
           "--guests-per-hour", "0", "--registrations-per-hour", "0"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True)
    url = f"http://127.0.0.1:{port}"
    end = time.monotonic() + 60
    while time.monotonic() < end and proc.poll() is None:
        try:
            if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    proc.kill()
    raise RuntimeError(f"node {name} did not start (exit code {proc.poll()})")


def main_redis(args: argparse.Namespace) -> None:
    """``--redis``: the same run on ``--nodes`` server processes sharing one queue in Redis."""
    import secrets

    import redis
    from sqlalchemy import create_engine, text
    from sqlalchemy.engine import make_url
    from sqlalchemy.orm import sessionmaker

    from guandan.server.db import make_engine, normalize_url

    admin = None
    db = args.db
    if db is None:  # a new database, dropped afterwards
        base = make_url(normalize_url(PG_BASE))
        dbname = f"mmbench_{secrets.token_hex(4)}"
        admin = create_engine(base, isolation_level="AUTOCOMMIT")
        with admin.connect() as c:
            c.execute(text(f'CREATE DATABASE "{dbname}"'))
        db = base.set(database=dbname).render_as_string(hide_password=False)
    prefix = f"mmbench{secrets.token_hex(3)}:"
    r = redis.Redis.from_url(args.redis)
    nodes: list[tuple[subprocess.Popen[str], str]] = []
    try:
        for k in range(args.nodes):
            nodes.append(start_node(db, args.redis, prefix, f"bench{k}"))
        urls = [u for _, u in nodes]
        t = time.perf_counter()
        accounts = asyncio.run(guests(urls[0], args.players, 16))
        print(f"setup: {args.nodes} server processes on one Redis; {len(accounts)} guest accounts in "
              f"{time.perf_counter() - t:.1f} s")
        rng = random.Random(1)
        sigma = 2.0
        ratings = {name: rng.gauss(15.0, args.spread) for _, name in accounts}
        engine = make_engine(db)
        with sessionmaker(engine)() as s:
            for name, rt in ratings.items():
                s.execute(update(models.User).where(models.User.name == name)
                          .values(rating_mu=rt + 3 * sigma, rating_sigma=sigma))
            s.commit()
        engine.dispose()
        tokens_file = Path(tempfile.mkdtemp()) / "tokens.json"
        tokens_file.write_text(json.dumps([tok for tok, _ in accounts]))
        proc = subprocess.Popen([sys.executable, __file__, "--client", ",".join(urls), "--tokens", str(tokens_file),
                                 "--concurrency", str(args.concurrency)], stdout=subprocess.PIPE, text=True)
        n = len(accounts)
        marks: dict[str, float] = {}
        t_begin = time.time()
        joins_end: float | None = None
        while time.time() - t_begin < args.limit + 120:
            matched = 4 * int(r.hlen(f"{prefix}mm:props"))  # every proposal seats four people
            now = time.time()
            for label, share in (("50", 0.5), ("99", 0.99), ("all", 1.0)):
                if label not in marks and matched >= share * n:
                    marks[label] = now
            if joins_end is None and proc.poll() is not None:
                joins_end = now
            if "all" in marks or (joins_end is not None and now - joins_end > args.limit):
                break
            time.sleep(0.005)
        out, _ = proc.communicate(timeout=120)
        joins = json.loads(out.strip().splitlines()[-1])
        start = joins["start"]
        print(f"floor: {n} GET /api/me (session lookup only) answered in {joins['floor']:.2f} s "
              f"({n / joins['floor']:.0f} requests/s)")
        print(f"joins: {n} POST /api/match/join answered in {joins['end'] - start:.2f} s ({n / (joins['end'] - start):.0f}/s) (concurrency {args.concurrency} "
              f"over {args.nodes} processes; {joins['retries']} requests sent again after a dropped connection, "
              f"{joins['busy']} after a 503 temporarily_unavailable)")
        print("matched, from the first join: " + ", ".join(f"{k} % by {v - start:.2f} s" if k != "all" else f"all by {v - start:.2f} s"
                                                           for k, v in marks.items()))
        # read under the queue's lock: a round writes its ready checks, then deletes their tickets
        from guandan.server.matchmaking_store import RedisBackend

        lock = RedisBackend(r, prefix).lock()
        if not lock.acquire(10.0):
            raise RuntimeError("the queue's lock was not free within 10 s")
        try:
            waiting = [json.loads(v) for v in r.hvals(f"{prefix}mm:tickets")]
        finally:
            lock.release()
        if waiting:
            print(f"still queued at the end: {sum(len(w['members']) for w in waiting)} players, ratings "
                  f"{sorted(round(x, 1) for w in waiting for x in w['ratings'])[:16]}")
    finally:
        for p, _ in nodes:
            p.terminate()
        for p, _ in nodes:
            try:
                p.wait(20)
            except subprocess.TimeoutExpired:
                p.kill()
        for key in r.scan_iter(f"{prefix}*"):
            r.delete(key)
        if admin is not None:
            with admin.connect() as c:
                c.execute(text(f'DROP DATABASE IF EXISTS "{dbname}" WITH (FORCE)'))
            admin.dispose()
    print("load average after: %.2f %.2f %.2f" % os.getloadavg())


def app_user_id(app: object, name: str) -> int:
    with app.state.session_factory() as s:  # type: ignore[attr-defined]
        return int(s.query(models.User.id).filter(models.User.name == name).scalar())


if __name__ == "__main__":
    main()
