"""One server per database (issue 11: two servers on one database both ran every game).

Until a cluster mode exists, ``guandan serve`` takes an exclusive lock on its database before it
migrates or restores anything, and holds it until it exits:

* SQLite ``path.db``: an exclusive ``flock`` on the file ``path.db.lock`` next to it (the lock
  goes with the process: a crashed server leaves no stale lock behind);
* PostgreSQL: a session-level advisory lock (``pg_try_advisory_lock``) held by one dedicated
  connection.

A second server on the same database gets :class:`DatabaseInUse` (one line) and exits.

Cluster mode (``guandan serve --redis``, PostgreSQL only) takes the same advisory lock *shared*
(``pg_try_advisory_lock_shared``): any number of cluster processes serve the database together,
while a plain single server (exclusive lock) and a cluster never run on one database at once.
"""

from __future__ import annotations

import os
from typing import Any

from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url
from sqlalchemy.pool import NullPool

from .db import normalize_url

#: Advisory lock key of the server on PostgreSQL (any fixed 64-bit number; "pyguandan" in ASCII).
PG_LOCK_KEY = 0x7079_6775_616E_6461


class DatabaseInUse(RuntimeError):
    """Another server holds the database (the message is one line for the person)."""


class DatabaseLock:
    """The exclusive right of one server process to serve a database.

    Args:
        url: the database URL (``sqlite:///path.db`` or ``postgresql+psycopg://...``); an
            in-memory SQLite database needs no lock.
        shared: a cluster process (PostgreSQL): share the lock with the other processes of the
            cluster; it still excludes a single server.
    """

    def __init__(self, url: str, shared: bool = False) -> None:
        self.url = normalize_url(url)
        self.shared = shared
        self._fd: int | None = None
        self._conn: Any = None
        self._engine: Any = None

    def acquire(self) -> DatabaseLock:
        """Take the lock.

        Returns:
            ``self``.
        Raises:
            DatabaseInUse: another process holds it.
            sqlalchemy.exc.OperationalError: PostgreSQL cannot be reached.
        """
        parsed = make_url(self.url)
        backend = parsed.get_backend_name()
        if backend == "sqlite":
            path = parsed.database
            if path and path != ":memory:" and not path.startswith("file::memory:"):
                self._lock_file(os.path.abspath(path) + ".lock")
        elif backend == "postgresql":
            self._lock_pg()
        return self

    def _lock_file(self, lock_path: str) -> None:
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            import fcntl

            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except ImportError:  # Windows
            import msvcrt

            try:
                msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
            except OSError:
                os.close(fd)
                raise DatabaseInUse(self._message(lock_path)) from None
        except OSError:
            os.close(fd)
            raise DatabaseInUse(self._message(lock_path)) from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd = fd

    def _lock_pg(self) -> None:
        self._engine = create_engine(self.url, poolclass=NullPool, isolation_level="AUTOCOMMIT")
        conn = self._engine.connect()
        fn = "pg_try_advisory_lock_shared" if self.shared else "pg_try_advisory_lock"
        got = conn.execute(text(f"SELECT {fn}(:k)"), {"k": PG_LOCK_KEY}).scalar()
        if not got:
            conn.close()
            self._engine.dispose()
            self._engine = None
            raise DatabaseInUse(self._message(None))
        self._conn = conn

    def _message(self, lock_path: str | None) -> str:
        shown = make_url(self.url).render_as_string(hide_password=True)
        if self.shared:
            return (f"a single guandan server (not a cluster) is serving the database {shown}; stop it "
                    "before starting cluster processes (--redis) on it")
        where = f" (lock file {lock_path})" if lock_path else " (PostgreSQL advisory lock)"
        return (f"another guandan server is already serving the database {shown}{where}; "
                "one server per database: stop it first or use another database")

    def release(self) -> None:
        """Give the lock back (also when the process exits)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        if self._conn is not None:
            try:
                self._conn.close()
            finally:
                self._conn = None
                self._engine.dispose()
                self._engine = None

    def __enter__(self) -> DatabaseLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


__all__ = ["PG_LOCK_KEY", "DatabaseInUse", "DatabaseLock"]
