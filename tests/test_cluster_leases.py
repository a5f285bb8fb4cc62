"""Cluster mode, the parts that need no running cluster (issue 10):

* leases: ``SET NX PX`` plus compare-and-set renew/release on the token (a stale owner can neither
  renew nor release a lease another process holds);
* two OS processes racing for the same free tables: exactly one owns each (a Hypothesis property
  over many races with drawn start offsets);
* fencing: a process whose lease was taken writes no record line;
* single-process mode (SQLite) needs no Redis: ``/healthz``, ``/readyz`` answer with ``redis: off``
  and redis-py is never imported;
* structured log lines carry the node and the room.

Redis at ``GUANDAN_TEST_REDIS_URL`` (default ``redis://127.0.0.1:6379/1``); skipped when it is not
running, failed under CI=true.
"""

from __future__ import annotations

import json
import logging
import multiprocessing
import os
import secrets
import subprocess
import sys
import time
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cluster_helpers import REDIS_URL, redis_client

def _redis() -> Any:
    return redis_client()


def _leases(node: str, lease_ms: int = 5000, prefix: str | None = None) -> Any:
    from guandan.server.cluster import Keys, Leases

    return Leases(_redis(), node, lease_ms, Keys(prefix or f"gdtest{secrets.token_hex(3)}:"))


def test_lease_is_exclusive_and_only_its_token_renews_or_releases_it() -> None:
    a = _leases("node-a")
    b = _leases("node-b", prefix=a.keys.p)
    ta = a.acquire("room1")
    assert ta is not None and ta.startswith("node-a:")
    assert b.acquire("room1") is None  # held
    assert a.holder("room1") == ta
    assert b.renew("room1", "node-b:forged") is False and b.release("room1", "node-b:forged") is False
    assert a.holder("room1") == ta
    assert a.renew("room1", ta) is True
    ttl = a.client.pttl(a.keys.lease("room1"))
    assert 4000 < ttl <= 5000
    assert a.release("room1", ta) is True
    assert a.holder("room1") is None
    tb = b.acquire("room1")
    assert tb is not None and b.holder("room1") == tb
    assert a.renew("room1", ta) is False  # the old owner cannot extend the new owner's lease
    assert b.release("room1", tb)


def test_a_lease_expires_when_its_owner_stops_renewing() -> None:
    a = _leases("node-a", lease_ms=200)
    b = _leases("node-b", lease_ms=200, prefix=a.keys.p)
    ta = a.acquire("r")
    assert ta is not None and b.acquire("r") is None
    time.sleep(0.35)
    tb = b.acquire("r")
    assert tb is not None and a.renew("r", ta) is False
    b.release("r", tb)


def _racer(node: str, prefix: str, rooms: list[str], offsets_us: list[int], barrier: Any, out: Any) -> None:
    from guandan.server.cluster import Keys, Leases

    import redis

    leases = Leases(redis.Redis.from_url(REDIS_URL), node, 60_000, Keys(prefix))
    won = []
    for room, off in zip(rooms, offsets_us, strict=True):
        barrier.wait()
        if off:
            time.sleep(off / 1e6)
        if leases.acquire(room) is not None:
            won.append(room)
    out.put((node, won))


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(0, 300), st.integers(0, 300)), min_size=40, max_size=40))
def test_two_processes_racing_for_free_tables_exactly_one_owns_each(offsets: list[tuple[int, int]]) -> None:
    _redis()
    prefix = f"gdrace{secrets.token_hex(3)}:"
    rooms = [f"room{i}" for i in range(len(offsets))]
    ctx = multiprocessing.get_context("fork")
    barrier = ctx.Barrier(2)
    out = ctx.Queue()
    procs = [ctx.Process(target=_racer, args=(f"n{k}", prefix, rooms, [o[k] for o in offsets], barrier, out))
             for k in range(2)]
    for p in procs:
        p.start()
    results = dict(out.get(timeout=60) for _ in procs)
    for p in procs:
        p.join(30)
        assert p.exitcode == 0
    won0, won1 = set(results["n0"]), set(results["n1"])
    assert not won0 & won1, "two processes own the same table"
    assert won0 | won1 == set(rooms), "a free table was owned by nobody"
    from guandan.server.cluster import Keys

    client = _redis()
    keys = Keys(prefix)
    for room in rooms:
        holder = client.get(keys.lease(room)).decode()
        assert holder.split(":")[0] == ("n0" if room in won0 else "n1")
        client.delete(keys.lease(room))


def test_a_process_that_lost_the_lease_writes_no_record_line(tmp_path: Any) -> None:
    from guandan.server import db as gdb
    from guandan.server.cluster import LeaseLost, make_store_fenced
    from guandan.server.roomstore import RoomStore

    a = _leases("node-a")
    url = f"sqlite:///{tmp_path / 'g.db'}"
    gdb.migrate(url)
    store = RoomStore(gdb.make_session_factory(gdb.make_engine(url)))
    owned: dict[str, str] = {}

    def check(room: str) -> None:
        if a.holder(room) != owned.get(room):
            raise LeaseLost(room)

    make_store_fenced(store, check)
    owned["r1"] = a.acquire("r1") or ""
    a.client.delete(a.keys.lease("r1"))  # the lease expired; another process takes it
    b = _leases("node-b", prefix=a.keys.p)
    assert b.acquire("r1") is not None
    with pytest.raises(LeaseLost):
        store.games.append("r1", 1, ['{"type": "action"}'])
    with pytest.raises(LeaseLost):
        store.games.start("r1", '{"type": "header"}')
    assert LeaseLost("x").fenced is True


def test_single_process_sqlite_serves_and_needs_no_redis(tmp_path: Any) -> None:
    """``guandan serve`` on SQLite with no Redis configured: ready, ``redis: off``, redis-py never
    imported (it is an optional extra)."""
    code = f"""
import sys, json
from fastapi.testclient import TestClient
from guandan.server.app import create_app
from guandan.server.settings import Settings
app = create_app(Settings(db_url="sqlite:///{tmp_path / 'one.db'}", redis_url=None, node_name="solo"))
with TestClient(app) as c:
    h = c.get("/healthz"); r = c.get("/readyz")
    print(json.dumps([h.status_code, h.json(), r.status_code, r.json(), "redis" in sys.modules]))
"""
    env = {k: v for k, v in os.environ.items() if k != "GUANDAN_REDIS_URL"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    h_status, h, r_status, r, imported = json.loads(out.stdout.strip().splitlines()[-1])
    assert h_status == 200 and h == {"status": "ok", "node": "solo", "friends_streams": 0}
    assert r_status == 200 and r["status"] == "ready" and r["redis"] == "off" and r["migrations"] == "head"
    assert imported is False


def test_readyz_is_503_while_the_schema_is_behind(tmp_path: Any) -> None:
    from fastapi.testclient import TestClient

    from guandan.server.app import create_app
    from guandan.server.settings import Settings

    url = f"sqlite:///{tmp_path / 'behind.db'}"
    app = create_app(Settings(db_url=url, redis_url=None, node_name="n"))
    with TestClient(app) as c:
        assert c.get("/readyz").status_code == 200
        with app.state.engine.begin() as conn:
            conn.exec_driver_sql("UPDATE alembic_version SET version_num = '0002'")
        r = c.get("/readyz")
        assert r.status_code == 503 and r.json()["status"] == "not_ready"
        assert r.json()["migrations"].startswith("at 0002")
        assert c.get("/healthz").status_code == 200


def test_serve_refuses_cluster_mode_on_sqlite(tmp_path: Any) -> None:
    out = subprocess.run([sys.executable, "-c", "from guandan.cli import main; main()", "serve", "--port", "0",
                          "--db", str(tmp_path / "x.db"), "--redis", REDIS_URL], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 2
    assert "cluster mode (--redis) needs a PostgreSQL database" in out.stderr


@pytest.mark.parametrize("fmt", ["json", "kv"])
def test_structured_log_lines_carry_node_and_room(fmt: str) -> None:
    from guandan.server.logs import StructuredFormatter

    f = StructuredFormatter(fmt, "node-7")
    rec = logging.LogRecord("guandan.server.tables", logging.WARNING, __file__, 1,
                            "room %s: writing the record failed; retrying", ("abc123",), None)
    line = f.format(rec)
    assert "\n" not in line
    if fmt == "json":
        d = json.loads(line)
        assert d["node"] == "node-7" and d["room"] == "abc123" and d["level"] == "warning"
        assert d["msg"] == "room abc123: writing the record failed; retrying"
    else:
        assert "node=node-7" in line and "room=abc123" in line and "level=warning" in line
        assert 'msg="room abc123: writing the record failed; retrying"' in line
    plain = logging.LogRecord("x", logging.INFO, __file__, 1, "no room here", (), None)
    shown = f.format(plain)
    assert ("room" not in json.loads(shown)) if fmt == "json" else (" room=" not in shown)


def test_login_and_signup_limits_are_counted_once_over_the_processes() -> None:
    """Two limiters on one Redis stand for two processes: failures spread over them add up."""
    from guandan.server.auth import AuthError
    from guandan.server.cluster import SharedLoginLimiter, SharedRateLimiter

    client = _redis()
    prefix = f"gdlim{secrets.token_hex(3)}:"
    a, b = SharedLoginLimiter(client, prefix), SharedLoginLimiter(client, prefix)
    for i in range(10):
        (a if i % 2 else b).attempt("10.0.0.1", "Alice")
    with pytest.raises(AuthError) as e:
        a.attempt("10.0.0.1", "ALICE")  # spellings of one name share their tries
    assert e.value.code == "too_many_logins" and 1 <= e.value.params["wait_s"] <= 301
    b.attempt("10.0.0.2", "alice")  # another address still may try
    b.succeeded("10.0.0.2", "alice")
    ra, rb = SharedRateLimiter(client, prefix, 3, 3600.0, "guest accounts"), \
        SharedRateLimiter(client, prefix, 3, 3600.0, "guest accounts")
    ra.hit("10.0.0.9")
    rb.hit("10.0.0.9")
    ra.hit("10.0.0.9")
    with pytest.raises(AuthError) as e2:
        rb.hit("10.0.0.9")
    assert e2.value.code == "rate_limited"
    rb.hit("10.0.0.10")
    for key in client.scan_iter(f"{prefix}*"):
        client.delete(key)


def test_a_cluster_slows_guessers_of_an_account_but_never_refuses_its_owner() -> None:
    """Issue 26 item 4 in a cluster: the shared limiter used to refuse every address once an
    account had 30 failures (the owner's correct password too). Now, as in one process: 30 wrong
    passwords from 3 addresses over two processes leave a new address free to try; an address
    that failed on the account waits 2 ** (failures - 10) s, at most 60 s; a good login trusts the
    address in the hash gate."""
    from guandan.server.auth import AuthError
    from guandan.server.cluster import SharedLoginLimiter

    client = _redis()
    prefix = f"gdlim{secrets.token_hex(3)}:"
    a, b = SharedLoginLimiter(client, prefix), SharedLoginLimiter(client, prefix)
    try:
        for i in range(30):  # 10 each from 3 addresses (counted, as by attempts whose password was wrong)
            (a if i % 2 else b).failed(f"10.1.0.{i % 3}", "owner")
        for addr in ("10.1.0.0", "10.1.0.1", "10.1.0.2"):
            with pytest.raises(AuthError) as e:
                a.attempt(addr, "owner")
            assert e.value.code == "too_many_logins"
        b.attempt("10.1.0.9", "owner")  # a new address is checked: the owner gets in
        b.succeeded("10.1.0.9", "owner")
        caller = a.caller("10.1.0.9", "owner")
        assert (caller.failures, caller.trusted) == (0, True)
        assert a.caller("10.1.0.0", "owner").failures == 10 and not a.caller("10.1.0.0", "owner").trusted
        # a fourth guesser: its first try is checked, its second waits out the backoff
        # (29 account failures in the window after the owner's success took one back: 2 ** 19 s,
        # capped at 60 s)
        a.attempt("10.1.0.5", "owner")
        with pytest.raises(AuthError) as e2:
            b.attempt("10.1.0.5", "owner")
        assert 55 <= e2.value.params["wait_s"] <= 61
        b.attempt("10.1.0.9", "owner")  # the trusted owner's address is never slowed on its account
    finally:
        for key in client.scan_iter(f"{prefix}*"):
            client.delete(key)


def test_cluster_processes_share_the_database_lock_and_keep_a_single_server_off() -> None:
    """PostgreSQL advisory lock: cluster processes take it shared (several at once), a plain
    single server exclusive; neither kind starts while the other serves the database."""
    from cluster_helpers import fresh_database, require_services

    from guandan.server.dblock import DatabaseInUse, DatabaseLock

    require_services()
    with fresh_database() as db:
        a, b = DatabaseLock(db, shared=True).acquire(), DatabaseLock(db, shared=True).acquire()
        with pytest.raises(DatabaseInUse, match="another guandan server is already serving"):
            DatabaseLock(db).acquire()
        a.release()
        b.release()
        single = DatabaseLock(db).acquire()
        with pytest.raises(DatabaseInUse, match="a single guandan server .* is serving the database"):
            DatabaseLock(db, shared=True).acquire()
        single.release()


@pytest.mark.parametrize("url", ["redis://127.0.0.1:6379/abc", "redis://127.0.0.1:6379/5?db=x", "redis://127.0.0.1:6379/-1"])
def test_serve_refuses_a_redis_url_whose_database_number_is_not_one(url: str) -> None:
    """redis-py reads ``/abc`` (or ``db=x``) as no database number and uses database 0 (perhaps
    another cluster's); the server refuses to start instead (exit code 2, one line). Checked before
    Redis or PostgreSQL are contacted, so neither needs to run."""
    out = subprocess.run([sys.executable, "-c", "from guandan.cli import main; main()", "serve", "--port", "0",
                          "--db", "postgresql+psycopg://nobody@127.0.0.1:1/none", "--redis", url],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 2, out.stderr[-2000:]
    assert "--redis: the database number" in out.stderr and "is not a number" in out.stderr


def test_serve_does_not_print_the_redis_password() -> None:
    """A Redis that cannot be reached is named in the error without the URL's password."""
    out = subprocess.run([sys.executable, "-c", "from guandan.cli import main; main()", "serve", "--port", "0",
                          "--db", "postgresql+psycopg://nobody@127.0.0.1:1/none",
                          "--redis", "redis://:s3cr3t-pw@127.0.0.1:1/5"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 2, out.stderr[-2000:]
    assert "cannot use Redis 'redis://***@127.0.0.1:1/5'" in out.stderr
    assert "s3cr3t-pw" not in out.stdout + out.stderr


def test_redis_url_problem_accepts_the_usual_forms() -> None:
    from guandan.server.cluster import redis_url_problem

    for ok in ("redis://127.0.0.1:6379", "redis://127.0.0.1:6379/", "redis://127.0.0.1:6379/0",
               "rediss://user:pw@host:6380/15", "unix:///run/redis.sock?db=2", "redis://h/3?socket_timeout=5"):
        assert redis_url_problem(ok) is None, ok
    assert "not a Redis URL" in (redis_url_problem("http://127.0.0.1:6379/0") or "")
    assert "pw" not in (redis_url_problem("redis://u:pw@h:1/x") or "pw")
