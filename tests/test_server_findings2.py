"""Findings of issue 26 (the hardened server's second attack), items 1, 4, 5, 7, 9 and 15; each
test fails on the code before the fix and passes after.

* One server per database (item 1): the PostgreSQL advisory lock is watched; when its connection
  is terminated the server stores nothing more and exits with one log line, and an idle timeout
  of the database never ends it. A symlinked SQLite path is the same database. A record writer
  that met a line stored by another writer never stores its own record at the game's end.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import time
from typing import Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

from sqlalchemy import create_engine, func, select, text
from sqlalchemy.pool import NullPool
from test_server_gamestore import make_room, manager_for
from test_server_hardening import _running, _serve, _wait_started
from test_server_storage import db_url, fresh_pg_database, pg_session_url  # noqa: F401 (fixtures)

from guandan.agents.registry import make_agent
from guandan.core.views import seat_view
from guandan.server import models
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
