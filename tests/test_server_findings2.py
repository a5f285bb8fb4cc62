"""Findings of issue 26 (the hardened server's second attack), items 1, 4, 5, 7, 9 and 15; each
test fails on the code before the fix and passes after.

* One server per database (item 1): the PostgreSQL advisory lock is watched; when its connection
  is terminated the server stores nothing more and exits with one log line, and an idle timeout
  of the database never ends it. A symlinked SQLite path is the same database. A record writer
  that met a line stored by another writer never stores its own record at the game's end.
* Targeted lock-out (item 4): 30 wrong passwords for one account from 3 addresses slow those
  addresses down (backoff, then 429) but the owner's correct password from a new address logs in.
* Login flood (item 5): during a flood of wrong logins from 20 addresses that keeps the hash gate
  full, correct logins from other addresses all succeed (fair admission: per address, per
  account, and addresses with failures behind the others).
* Quick games (item 7): one live game against bots per account (a second is refused with the
  running room, in both languages), a few per address, and two requests at once make one game.
* Corrupt finished data (item 9): invalid UTF-8 in a stored record or a name, or a record that
  is not JSON, spoils only its own row: the game's page says it is damaged, history, profiles
  and the leaderboard answer 200 with the other rows intact.
* Look-alike names (item 15): ``张三ー`` (U+30FC) cannot register next to ``张三一`` (U+4E00), nor
  ``AIice`` (capital I) next to ``alice``; the error names the taken one in both languages, and
  migration 0009 gives existing accounts their keys.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

from sqlalchemy import create_engine, func, select, text
from sqlalchemy.pool import NullPool
from test_server_gamestore import make_room, manager_for
from test_server_hardening import AppServer, _running, _serve, _wait_started, fast_hashing  # noqa: F401
from test_server_storage import db_url, fresh_pg_database, pg_session_url  # noqa: F401 (fixtures)

from guandan.agents.registry import make_agent
from guandan.core.views import seat_view
from guandan.server import auth, models
from guandan.server.connections import Conn
from guandan.server.dblock import PG_LOCK_KEY, DatabaseInUse, DatabaseLock

# -- item 1: one server per database ---------------------------------------------------------------


def _lock_holders(url: str) -> list[int]:
    """Backend pids holding the server's advisory lock on ``url``'s database."""
    eng = create_engine(url, poolclass=NullPool)
    try:
        with eng.connect() as conn:
            return list(conn.execute(text(
                "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND classid = :hi AND objid = :lo "
                "AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"),
                {"hi": PG_LOCK_KEY >> 32, "lo": PG_LOCK_KEY & 0xFFFFFFFF}).scalars())
    finally:
        eng.dispose()


def _terminate(url: str, pids: list[int]) -> None:
    eng = create_engine(url, poolclass=NullPool, isolation_level="AUTOCOMMIT")
    try:
        with eng.connect() as conn:
            for pid in pids:
                assert conn.execute(text("SELECT pg_terminate_backend(:p)"), {"p": pid}).scalar() is True
    finally:
        eng.dispose()


def test_a_server_whose_postgresql_lock_is_terminated_exits_and_the_next_one_starts():
    with fresh_pg_database() as url:
        p = _serve(url)
        try:
            _wait_started(p)
            holders = _lock_holders(url)
            assert len(holders) == 1
            _terminate(url, holders)
            t0 = time.monotonic()
            _, err = p.communicate(timeout=30)
            took = time.monotonic() - t0
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
        assert p.returncode == 3, err
        assert "lock on the database" in err and "was lost" in err and "stores nothing more" in err, err
        assert took < 15, took  # checked every 2 s, plus the shutdown
        with _running(url):  # the database is free: a new server serves it
            assert len(_lock_holders(url)) == 1


def test_an_idle_session_timeout_never_ends_the_lock():
    with fresh_pg_database() as url:
        # every connection of the server gets idle_session_timeout = 1 s from the URL
        timed = url + ("&" if "?" in url else "?") + "options=-c%20idle_session_timeout%3D1000"
        with _running(timed):
            time.sleep(4.5)  # the lock connection idles for more than 1 s between checks
            assert len(_lock_holders(url)) == 1
            q = _serve(url)
            out, err = q.communicate(timeout=60)
            assert q.returncode == 2, (out, err)
            assert "another guandan server is already serving the database" in err


def test_the_lock_watch_reports_a_lost_lock_once():
    with fresh_pg_database() as url:
        lock = DatabaseLock(url).acquire()
        seen: list[str] = []
        try:
            assert lock.held()
            lock.watch(seen.append, interval_s=0.2)
            _terminate(url, _lock_holders(url))
            deadline = time.monotonic() + 10
            while not seen and time.monotonic() < deadline:
                time.sleep(0.05)
            time.sleep(0.5)
            assert len(seen) == 1 and seen[0], seen
            assert not lock.held() and lock.lost == seen[0]
        finally:
            lock.release()
        with DatabaseLock(url):  # and it is free again
            pass


def test_a_symlinked_sqlite_path_is_the_same_database(tmp_path):
    real = tmp_path / "real.db"
    other = tmp_path / "elsewhere"
    other.mkdir()
    link = other / "link.db"
    with DatabaseLock(f"sqlite:///{real}"):
        link.symlink_to(real)
        with pytest.raises(DatabaseInUse):
            DatabaseLock(f"sqlite:///{link}").acquire()
        hard = other / "hard.db"
        os.link(real, hard)  # a hard link: another name of the same file, also refused
        with pytest.raises(DatabaseInUse):
            DatabaseLock(f"sqlite:///{hard}").acquire()
    with DatabaseLock(f"sqlite:///{link}"):  # free once the first lock is gone
        pass


def test_a_second_server_on_a_symlinked_sqlite_path_exits(tmp_path):
    real = tmp_path / "real.db"
    link = tmp_path / "link.db"
    with _running(str(real)):
        link.symlink_to(real)
        q = _serve(str(link))
        out, err = q.communicate(timeout=60)
        assert q.returncode == 2, (out, err)
        assert "another guandan server is already serving the database" in err


def test_a_writer_that_met_another_writers_line_never_stores_its_game(db_url: str) -> None:  # noqa: F811
    manager = manager_for(db_url)
    uids = make_room(manager.session_factory)

    async def main() -> tuple[int, int]:
        table = await manager.start_game("room0001")
        conns = [Conn(user_id=u) for u in uids]
        agents = [make_agent("heuristic", 44 + s) for s in range(4)]
        for _ in range(3):
            game = table.game
            seat = game.to_act()
            await table.act(conns[seat], agents[seat].act(seat_view(game, seat)))
        await manager.writer.flush()
        n = manager.store.games.count("room0001")
        # another server (its own copy of the game) stores its next line first
        manager.store.games.append("room0001", n, ['{"type": "action", "seat": 9, "other": "server"}'])
        game = table.game
        seat = game.to_act()
        await table.act(conns[seat], agents[seat].act(seat_view(game, seat)))
        await manager.writer.flush()
        assert manager.writer.lost == 1  # the conflict was met
        record = "".join(line + "\n" for line in table._lines)
        manager.writer.finish(table, record, 0)  # this copy's game ends
        await manager.writer.flush()
        await manager.shutdown()
        return n, table.game_id or 0

    n, game_id = asyncio.run(main())
    assert game_id == 0
    with manager.session_factory() as db:
        assert db.scalar(select(func.count()).select_from(models.GameRow)) == 0
        assert db.scalar(select(models.Room.status).where(models.Room.id == "room0001")) == "playing"
        assert sum(db.scalars(select(models.User.games_played)).all()) == 0
    # the other writer's line is still there, untouched
    assert manager.store.games.lines("room0001", n, n + 1) == ['{"type": "action", "seat": 9, "other": "server"}']


# -- items 4 and 5: logins -------------------------------------------------------------------------


@pytest.fixture
def proxied(tmp_path: Any) -> Iterator[Any]:
    """Start servers on a new SQLite file that believe ``X-Forwarded-For`` from the test client
    (loopback), so that one test can log in from many addresses; stopped afterwards."""
    from guandan.server.settings import Settings

    servers: list[AppServer] = []

    def start(**kw: Any) -> AppServer:
        kw.setdefault("db_url", f"sqlite:///{tmp_path / 'login.db'}")
        kw.setdefault("bot_delay_s", 0.0)
        kw.setdefault("forwarded_allow_ips", ("127.0.0.1",))
        s = AppServer(Settings(**kw))
        servers.append(s)
        return s

    yield start
    for s in servers:
        s.stop()


def _login(s: AppServer, name: str, password: str, address: str) -> httpx.Response:
    return httpx.post(s.base + "/api/login", json={"name": name, "password": password},
                      headers={"x-forwarded-for": address}, timeout=60)


def test_thirty_wrong_passwords_from_three_addresses_never_refuse_the_owner(proxied, fast_hashing):  # noqa: F811
    s = proxied()
    assert s.http.post("/api/register", json={"name": "owner", "password": "owner-password-1"},
                       headers={"x-forwarded-for": "192.0.2.1"}).status_code == 200
    statuses = [_login(s, "owner", f"guess-{i}", f"203.0.113.{i % 3 + 1}").status_code for i in range(30)]
    assert statuses[:10] == [401] * 10, statuses  # the first ten guesses are answered
    assert set(statuses) <= {401, 429}, statuses
    # the attackers are slowed: past 10 failures of the account, an address that failed waits
    r = _login(s, "owner", "guess-x", "203.0.113.1")
    assert r.status_code == 429 and r.json()["code"] == "too_many_logins" and r.json()["params"]["wait_s"] >= 1
    # the owner, from an address that never failed, logs in (it was 429 for 5 minutes before)
    r = _login(s, "owner", "owner-password-1", "198.51.100.7")
    assert r.status_code == 200, r.text
    # and another new address with a wrong password is still answered 401, not locked out
    assert _login(s, "owner", "guess-y", "198.51.100.8").status_code == 401


def test_correct_logins_get_through_a_flood_of_wrong_ones(proxied):
    from argon2 import PasswordHasher

    saved = auth._hasher
    auth._hasher = PasswordHasher(time_cost=4, memory_cost=16384, parallelism=1)  # about 25 ms a check
    try:
        s = proxied(hash_concurrency=1)
        # a long wait before a 503, so that a loaded CI machine cannot turn a slow turn into a
        # refusal: the flood still meets 503s from the full queue, and the owners must be let in
        # by their rank (fewest failures first), not by luck
        auth.HASH_GATE.configure(1, wait_s=30.0)
        owners = [f"owner{i}" for i in range(10)]
        for i, name in enumerate(owners):
            assert s.http.post("/api/register", json={"name": name, "password": f"pass-of-{name}"},
                               headers={"x-forwarded-for": f"192.0.2.{100 + i}"}).status_code == 200
        flood: list[int] = []
        good: list[int] = []
        failed_from: set[int] = set()

        async def attacker(h: httpx.AsyncClient, a: int, stop: asyncio.Event) -> None:
            k = 0
            while not stop.is_set():
                k += 1
                r = await h.post("/api/login", json={"name": f"victim{a}x{k}", "password": "wrong-guess"},
                                 headers={"x-forwarded-for": f"203.0.113.{a}"})
                flood.append(r.status_code)
                if r.status_code == 401:
                    failed_from.add(a)

        async def main() -> None:
            # no keep-alive: on a loaded machine uvicorn may close an idle kept-alive connection (after
            # its 5 s keep-alive timeout) just as the client reuses it, a ReadError that says nothing
            # about the login gate; a new connection per request cannot meet that race
            limits = httpx.Limits(max_connections=400, max_keepalive_connections=0)
            async with httpx.AsyncClient(base_url=s.base, timeout=60, limits=limits) as h:
                stop = asyncio.Event()
                tasks = [asyncio.create_task(attacker(h, a, stop)) for a in range(1, 21) for _ in range(6)]
                # the gate is full and every attacking address has failed at least once (before
                # that, an attacker and an owner both have no failure: a tie that FIFO order breaks)
                await asyncio.sleep(1.0)
                for _ in range(600):
                    if len(failed_from) == 20:
                        break
                    await asyncio.sleep(0.1)
                for i, name in enumerate(owners):
                    r = await h.post("/api/login", json={"name": name, "password": f"pass-of-{name}"},
                                     headers={"x-forwarded-for": f"198.51.100.{i + 1}"})
                    good.append(r.status_code)
                    await asyncio.sleep(0.1)
                stop.set()
                await asyncio.gather(*tasks)

        asyncio.run(main())
    finally:
        auth._hasher = saved
        auth.HASH_GATE.configure(1, wait_s=5.0)
    assert flood.count(503) > 0, flood[:50]  # the flood did fill the gate
    assert set(flood) <= {401, 429, 503}, set(flood)
    assert good == [200] * 10, good


# -- item 7: quick games ---------------------------------------------------------------------------


@pytest.fixture
def quick_app(tmp_path: Any) -> Iterator[Any]:
    from fastapi.testclient import TestClient

    from guandan.server.app import create_app
    from guandan.server.settings import Settings

    def make(**kw: Any) -> Any:
        app = create_app(Settings(db_url=f"sqlite:///{tmp_path / 'quick.db'}", bot_delay_s=0.5, **kw))
        return TestClient(app)

    yield make


def test_a_second_quick_game_is_refused_while_one_runs(quick_app):
    with quick_app() as c:
        assert c.post("/api/guest", json={}).status_code == 200
        first = c.post("/api/quick", json={"difficulty": "easy"})
        assert first.status_code == 200, first.text
        room = first.json()["room"]["id"]
        r = c.post("/api/quick", json={"difficulty": "normal"})
        assert r.status_code == 409, r.text
        assert r.json()["code"] == "quick_game_running" and r.json()["params"] == {"room": room}
        # once it is abandoned (or finished), a new one may start
        assert c.post(f"/api/rooms/{room}/abandon", json={}).json()["room"]["status"] == "finished"
        again = c.post("/api/quick", json={"difficulty": "normal"})
        assert again.status_code == 200 and again.json()["room"]["id"] != room


def test_quick_games_are_limited_per_address(quick_app):
    with quick_app(bot_games_per_address=2) as c:
        rooms = []
        for _ in range(2):  # two guests behind one address
            c.cookies.clear()
            assert c.post("/api/guest", json={}).status_code == 200
            r = c.post("/api/quick", json={})
            assert r.status_code == 200, r.text
            rooms.append(r.json()["room"]["id"])
        c.cookies.clear()
        assert c.post("/api/guest", json={}).status_code == 200
        r = c.post("/api/quick", json={})
        assert r.status_code == 429 and r.json()["code"] == "too_many_quick_games" and r.json()["params"] == {"max": 2}


def test_quick_games_at_once_make_one_game(quick_app):
    import concurrent.futures

    with quick_app() as c:
        assert c.post("/api/guest", json={}).status_code == 200
        with concurrent.futures.ThreadPoolExecutor(6) as pool:
            codes = sorted(pool.map(lambda _: c.post("/api/quick", json={}).status_code, range(6)))
        assert codes == [200] + [409] * 5, codes


def test_quick_game_errors_have_both_languages():
    import re
    from pathlib import Path

    import guandan.server as srv

    text = (Path(srv.__file__).parent / "static" / "js" / "i18n.js").read_text(encoding="utf-8")
    for code in ("quick_game_running", "too_many_quick_games"):
        found = re.findall(rf"^\s*err_{code}: \"([^\"]+)\"", text, re.M)
        assert len(found) == 2 and found[0] != found[1], (code, found)
        assert any("\u4e00" <= ch <= "\u9fff" for ch in found[1])
    assert "{max}" in text.split("err_too_many_quick_games")[1].split("\n")[0]


# -- item 9: corrupt finished data -----------------------------------------------------------------


def test_corrupt_records_and_names_spoil_only_their_own_rows(tmp_path):
    import sqlite3

    from fastapi.testclient import TestClient
    from test_server_storage import played_record

    from guandan.server.app import create_app
    from guandan.server.games import record_finished_game
    from guandan.server.settings import Settings

    path = tmp_path / "corrupt.db"
    app = create_app(Settings(db_url=f"sqlite:///{path}", bot_delay_s=0.0))
    with TestClient(app) as c:
        r = c.post("/api/register", json={"name": "alice", "password": "alice-password-1"})
        assert r.status_code == 200
        alice = r.json()["user"]["id"]
        c.cookies.clear()
        bob = c.post("/api/register", json={"name": "bobby", "password": "bobby-password-1"}).json()["user"]["id"]
        c.cookies.clear()
        games = []
        with app.state.session_factory() as db:
            for seed in (3, 4, 5):
                record, winner, _ = played_record("official", seed)
                g = record_finished_game(db, None, record, winner, [(alice, None), (None, "random"), (bob, None),
                                                                    (None, "random")])
                games.append(g.id)
            db.commit()
        con = sqlite3.connect(path)  # bytes that are not UTF-8, as a damaged disk or a bad import leaves them
        con.execute("UPDATE games SET record = CAST(X'7B2274797065223A22FF7D0A' AS TEXT) WHERE id = ?", (games[0],))
        con.execute("UPDATE games SET record = 'not json at all' WHERE id = ?", (games[1],))
        con.execute("UPDATE users SET name = CAST(X'626FFF6279' AS TEXT) WHERE id = ?", (bob,))
        con.commit()
        con.close()

        for gid in games[:2]:
            r = c.get(f"/api/games/{gid}")
            assert r.status_code == 200, r.text
            body = r.json()
            assert body["damaged"] is True and body["record"] == [] and body["id"] == gid
            assert [p["seat"] for p in body["players"]] == [0, 1, 2, 3]
        r = c.get(f"/api/games/{games[2]}")
        assert r.status_code == 200 and r.json()["damaged"] is False and r.json()["record"][0]["format"]
        assert c.get(f"/api/games/{games[0]}/record").status_code == 200

        lb = c.get("/api/leaderboard")
        assert lb.status_code == 200, lb.text
        names = [p["name"] for p in lb.json()["players"]]
        assert "alice" in names and "bo\ufffdby" in names  # the damaged name is shown marked, not dropped

        prof = c.get("/api/users/alice")
        assert prof.status_code == 200, prof.text
        recent = {g["id"]: g for g in prof.json()["recent_games"]}
        assert set(recent) == set(games)
        assert recent[games[2]]["deals"] >= 1 and recent[games[0]]["deals"] == 0
        assert recent[games[0]]["damaged"] is True and recent[games[2]]["damaged"] is False

        assert c.post("/api/login", json={"name": "alice", "password": "alice-password-1"}).status_code == 200
        hist = c.get("/api/history")
        assert hist.status_code == 200, hist.text
        rows = {g["id"]: g for g in hist.json()["games"]}
        assert set(rows) == set(games)
        assert [p["name"] for p in rows[games[2]]["players"]][2] == "bo\ufffdby"
        assert rows[games[0]]["damaged"] is True and rows[games[1]]["damaged"] is True
        assert rows[games[2]]["damaged"] is False and rows[games[2]]["result"] in ("won", "lost")


# -- item 15: look-alike names ---------------------------------------------------------------------


def test_look_alike_names_cannot_both_register(quick_app):
    from guandan.server.confusables import name_key

    assert name_key("张三一") == name_key("张三ー") and name_key("张三一") != name_key("张三二")
    assert name_key("AIice") == name_key("alice") == name_key("ALICE") and name_key("alice") != name_key("alina")
    assert name_key("rnary") == name_key("mary") and name_key("ｍａｒｙ") == name_key("mary")
    with quick_app() as c:
        assert c.post("/api/register", json={"name": "张三一", "password": "zhang-password-1"}).status_code == 200
        c.cookies.clear()
        r = c.post("/api/register", json={"name": "张三ー", "password": "zhang-password-2"})
        assert r.status_code == 409, r.text
        assert r.json()["code"] == "name_look_alike" and r.json()["params"] == {"name": "张三ー", "taken": "张三一"}
        assert c.post("/api/register", json={"name": "alice", "password": "alice-password-1"}).status_code == 200
        c.cookies.clear()
        r = c.post("/api/register", json={"name": "AIice", "password": "alice-password-2"})
        assert r.status_code == 409 and r.json()["code"] == "name_look_alike"
        r = c.post("/api/register", json={"name": "ALICE", "password": "alice-password-2"})
        assert r.status_code == 409 and r.json()["code"] == "name_taken"
        assert c.post("/api/register", json={"name": "张三二", "password": "zhang-password-3"}).status_code == 200
        # the owner still logs in with the name as registered
        c.cookies.clear()
        assert c.post("/api/login", json={"name": "张三一", "password": "zhang-password-1"}).status_code == 200


def test_migration_0009_keys_existing_accounts_oldest_first(tmp_path):
    import sqlite3

    from guandan.server import db as gdb

    url = f"sqlite:///{tmp_path / 'old.db'}"
    gdb.migrate(url, "0006")
    con = sqlite3.connect(tmp_path / "old.db")
    for name in ("张三一", "张三ー", "bob"):  # two look-alikes registered before the fix
        con.execute("INSERT INTO users (name, password_hash, is_guest, created_at, rating_mu, rating_sigma, "
                    "games_played, games_won, anhui_points) VALUES (?, NULL, 0, '2026-01-01 00:00:00', 25, 8.3, 0, 0, 0)",
                    (name,))
    con.commit()
    con.close()
    gdb.migrate(url)
    con = sqlite3.connect(tmp_path / "old.db")
    keys = dict(con.execute("SELECT name, name_key FROM users").fetchall())
    con.close()
    from guandan.server.confusables import name_key

    assert keys == {"张三一": name_key("张三一"), "张三ー": None, "bob": name_key("bob")}


def test_look_alike_error_has_both_languages():
    import re
    from pathlib import Path

    import guandan.server as srv

    text = (Path(srv.__file__).parent / "static" / "js" / "i18n.js").read_text(encoding="utf-8")
    found = re.findall(r"^\s*err_name_look_alike: \"([^\"]+)\"", text, re.M)
    assert len(found) == 2 and all("{taken}" in f for f in found)
    assert any("\u4e00" <= ch <= "\u9fff" for ch in found[1])


def test_the_hash_gate_runs_trusted_and_clean_addresses_before_a_flood():
    """Unit check of the admission order (hashgate): with one hash at a time and a full queue,
    the waiting checks run trusted first, then by fewest failures, first come within a rank; a
    newcomer better placed than the worst waiter takes its place; a flooding address is held to
    ``per_client`` checks and a suspect account to ``per_account``."""
    import threading

    from guandan.server.errors import AuthError
    from guandan.server.hashgate import Caller, HashGate

    order: list[str] = []
    refused: list[str] = []
    release = threading.Event()

    def check(gate: HashGate, label: str, caller: Caller) -> None:
        try:
            with gate.caller(caller), gate:
                order.append(label)
                if label == "first":
                    release.wait(10)
        except AuthError as e:
            assert e.status == 503 and e.code == "server_busy"
            refused.append(label)

    def run(gate: HashGate, arrivals: list[tuple[str, Caller]]) -> None:
        order.clear()
        refused.clear()
        release.clear()
        threads = []
        for label, caller in arrivals:
            t = threading.Thread(target=check, args=(gate, label, caller))
            t.start()
            threads.append(t)
            time.sleep(0.05)  # arrival order
        release.set()
        for t in threads:
            t.join(10)

    run(HashGate(concurrency=1, queue=3, wait_s=10.0, per_client=2, per_account=2), [
        ("first", Caller("10.0.0.1", "a", failures=0)),
        ("flood-1", Caller("203.0.113.1", "x1", failures=50)),
        ("flood-2", Caller("203.0.113.2", "x2", failures=40)),
        ("flood-1b", Caller("203.0.113.1", "x3", failures=50)),  # the queue is full now
        ("flood-1c", Caller("203.0.113.1", "x4", failures=50)),  # a third from one address: refused
        ("owner", Caller("198.51.100.9", "owner", failures=0)),  # pushes the worst waiter out
        ("trusted", Caller("192.0.2.7", "me", failures=1, trusted=True)),  # and again
    ])
    assert refused == ["flood-1c", "flood-1b", "flood-1"], refused
    assert order == ["first", "trusted", "owner", "flood-2"], order

    run(HashGate(concurrency=1, queue=8, wait_s=10.0, per_client=4, per_account=2), [
        ("first", Caller("10.0.0.9", "target", failures=2)),
        ("second", Caller("10.0.0.8", "target", failures=2)),
        ("third", Caller("10.0.0.7", "target", failures=2)),  # a third suspect check of the account
        ("clean", Caller("10.0.0.6", "target", failures=0)),  # never held back by the account's count
    ])
    assert refused == ["third"], refused
    assert order == ["first", "clean", "second"], order


def test_a_trusted_address_that_floods_loses_its_place():
    lim = auth.LoginLimiter()
    lim.attempt("192.0.2.7", "mine", now=1.0)
    lim.succeeded("192.0.2.7", "mine", now=1.0)
    assert lim.caller("192.0.2.7", "victim", now=2.0).trusted
    for i in range(3):
        lim.attempt("192.0.2.7", f"victim{i}", now=3.0)
    c = lim.caller("192.0.2.7", "victim", now=4.0)
    assert c.failures == 3 and not c.trusted
