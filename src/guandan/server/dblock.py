"""One server per database (issue 11: two servers on one database both ran every game).

Until a cluster mode exists, ``guandan serve`` takes an exclusive lock on its database before it
migrates or restores anything, and holds it until it exits:

* SQLite ``path.db``: the path is resolved first (``os.path.realpath``: a symlink ``link.db`` to
  ``real.db`` is the same database), then an exclusive ``flock`` is taken on the file
  ``real.db.lock`` next to it *and* on the database file itself (so that a hard link or another
  mount of the same file is the same database too). SQLite's own locks are ``fcntl`` record locks,
  which do not interact with ``flock`` on Linux. The locks go with the process: a crashed server
  leaves no stale lock behind.
* PostgreSQL: a session-level advisory lock (``pg_try_advisory_lock``) held by one dedicated
  connection. That connection turns ``idle_session_timeout`` and
  ``idle_in_transaction_session_timeout`` off for itself, and :meth:`DatabaseLock.watch` checks
  every few seconds that the lock is still held (issue 26 item 1: after ``pg_terminate_backend``
  of the connection, or an idle timeout, a second server started and stored its own copy of a
  live game). When the lock is lost the callback given to :meth:`~DatabaseLock.watch` runs once:
  ``guandan serve`` then stops its tables and exits with a one-line error.

  A check every few seconds leaves a window: the lock can be lost just after a check, and a second
  server can start and restore a live room before the first one learns of it. So the lock also
  comes with a fencing token (``server_fence.epoch``, migration ``0022``): once migrated, each
  server bumps it (:meth:`DatabaseLock.claim`) *before* it restores any live room, and a single
  server's record writes run :meth:`DatabaseLock.fence` in their own transaction. ``fence`` reads
  the token ``FOR SHARE``, so a bump waits for writes in flight, and a write that starts after the
  bump sees the new token and is refused (:class:`DatabaseFenced`): every line the first server
  stored is there when the second one restores the room, and nothing it writes later lands.

A second server on the same database gets :class:`DatabaseInUse` (one line) and exits.

Cluster mode (``guandan serve --redis``, PostgreSQL only) takes the same advisory lock *shared*
(``pg_try_advisory_lock_shared``): any number of cluster processes serve the database together,
while a plain single server (exclusive lock) and a cluster never run on one database at once.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from typing import Any

from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url
from sqlalchemy.pool import NullPool

from .db import normalize_url

#: Advisory lock key of the server on PostgreSQL (any fixed 64-bit number; "pyguandan" in ASCII).
PG_LOCK_KEY = 0x7079_6775_616E_6461
#: Seconds between two checks of a held PostgreSQL lock (:meth:`DatabaseLock.watch`).
CHECK_INTERVAL_S = 2.0

log = logging.getLogger("guandan.server.dblock")


class DatabaseInUse(RuntimeError):
    """Another server holds the database (the message is one line for the person)."""


class DatabaseFenced(RuntimeError):
    """A write was refused: a newer server bumped the fencing token (this server lost the database
    lock). The write changed nothing; the writer must store nothing more (:meth:`DatabaseLock.fence`)."""

    #: the record writer halts (stores nothing more) instead of retrying
    lock_lost = True


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
        self._db_fd: int | None = None
        self._conn: Any = None
        self._engine: Any = None
        self._conn_lock = threading.Lock()
        self._stop = threading.Event()
        self._watcher: threading.Thread | None = None
        #: why the lock was lost (``None`` while it is held or was never taken)
        self.lost: str | None = None
        #: the fencing token this server set (:meth:`claim`); ``None``: no fence (SQLite, or not claimed)
        self.epoch: int | None = None
        self._on_lost: Callable[[str], None] | None = None
        self._reported = False
        self._report_lock = threading.Lock()

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
                real = os.path.realpath(path)
                self._fd = self._lock_file(real + ".lock", write_pid=True)
                try:
                    self._db_fd = self._lock_file(real, write_pid=False)
                except DatabaseInUse:
                    self.release()
                    raise
        elif backend == "postgresql":
            self._lock_pg()
        return self

    def _lock_file(self, lock_path: str, write_pid: bool) -> int:
        """An exclusive ``flock`` on ``lock_path`` (created when missing); its descriptor.
        ``write_pid``: replace the file's content by this process's id (the ``.lock`` file only)."""
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
        if write_pid:
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()}\n".encode())
        return fd

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
        # this connection must never be closed by the server for idling (it holds the lock)
        for setting in ("idle_session_timeout", "idle_in_transaction_session_timeout"):
            try:
                conn.execute(text(f"SET {setting} = 0"))
            except Exception:  # noqa: BLE001 - an older PostgreSQL without the setting
                log.debug("cannot set %s on the lock connection", setting)
        self._conn = conn

    def claim(self) -> int | None:
        """Bump the fencing token ``server_fence.epoch`` (PostgreSQL; the database must be migrated
        to ``0022``): writes of a server that claimed before are refused from now on. Call it once
        the lock is held and before any live room is restored. It waits for a write in flight of
        the previous server (its :meth:`fence` holds the row) to commit or roll back.

        Returns:
            The new token (also :attr:`epoch`), or ``None`` on SQLite and in-memory databases,
            whose file locks cannot lapse while the process runs.
        Raises:
            RuntimeError: the lock is not held. sqlalchemy.exc.SQLAlchemyError: the database failed.
        """
        if self._engine is None:
            return None
        with self._conn_lock:
            if self._conn is None:
                raise RuntimeError("the database lock is not held")
            self._conn.execute(text("INSERT INTO server_fence (id, epoch) VALUES (1, 0) ON CONFLICT (id) DO NOTHING"))
            epoch = self._conn.execute(text(
                "UPDATE server_fence SET epoch = epoch + 1, claimed_at = now() WHERE id = 1 RETURNING epoch")).scalar_one()
        self.epoch = int(epoch)
        return self.epoch

    def fence(self, conn: Any) -> None:
        """Refuse the write of the transaction ``conn`` is in unless this server's token is still
        the newest (run it first in every record write of a single server; a cluster's processes
        fence their writes with leases instead). The token row stays locked ``FOR SHARE`` until
        that transaction ends, so a newer server's :meth:`claim` cannot pass a write in flight.

        Args:
            conn: the SQLAlchemy ``Connection`` of the write's transaction.
        Raises:
            DatabaseFenced: a newer server claimed the database (the lost-lock callback given to
                :meth:`watch`, if any, has been called; the caller must roll back).
        """
        if self.epoch is None or self.shared:
            return
        now = conn.execute(text("SELECT epoch FROM server_fence WHERE id = 1 FOR SHARE")).scalar()
        if now == self.epoch:
            return
        reason = f"another server claimed the database (fencing token {now}, this server's {self.epoch})"
        self.lost = self.lost or reason
        self._report(self.lost)
        raise DatabaseFenced(f"write refused: {reason}")

    def _report(self, reason: str) -> None:
        """Call the :meth:`watch` callback once, whoever finds the loss first (watch or fence)."""
        with self._report_lock:
            if self._reported or self._on_lost is None:
                return
            self._reported = True
            on_lost = self._on_lost
        on_lost(reason)

    def held(self) -> bool:
        """Whether the lock is still held: SQLite and in-memory databases always (the lock is a
        descriptor of this process); PostgreSQL: the lock connection answers and
        ``pg_locks`` lists the advisory lock as granted to it. The check also keeps the
        connection from idling.

        Returns:
            ``False`` once the lock was lost (the connection was terminated or the lock released).
        """
        if self.lost is not None:
            return False
        with self._conn_lock:
            conn = self._conn
            if conn is None:
                return self._engine is None  # never a PostgreSQL lock, or released
            try:
                n = conn.execute(text(
                    "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid() "
                    "AND granted AND classid = :hi AND objid = :lo"),
                    {"hi": (PG_LOCK_KEY >> 32) & 0xFFFFFFFF, "lo": PG_LOCK_KEY & 0xFFFFFFFF}).scalar()
            except Exception as e:  # noqa: BLE001 - a terminated connection, PostgreSQL down: lost
                self.lost = (str(e).strip().splitlines() or [type(e).__name__])[0][:200]
                return False
            if not n:
                self.lost = "the advisory lock is no longer held by this server's connection"
                return False
            return True

    def watch(self, on_lost: Callable[[str], None], interval_s: float = CHECK_INTERVAL_S) -> None:
        """Check the lock every ``interval_s`` seconds on a daemon thread (PostgreSQL only; a file
        lock cannot be lost) and call ``on_lost(reason)`` once, from that thread, when it is lost
        (or from the thread of a write that :meth:`fence` refused, whichever comes first).
        The thread stops at :meth:`release`.

        Args:
            on_lost: called with a one-line reason; it must be thread-safe (``guandan serve``
                asks uvicorn to exit). interval_s: seconds between checks (> 0).
        Raises:
            ValueError: ``interval_s`` is not positive.
        """
        if interval_s <= 0:
            raise ValueError("interval_s must be positive")
        if self._conn is None or self._watcher is not None:
            return
        self._on_lost = on_lost

        def run() -> None:
            while not self._stop.wait(interval_s):
                if not self.held():
                    if self._stop.is_set():  # released meanwhile: not a loss
                        return
                    self._report(self.lost or "lost")
                    return

        self._watcher = threading.Thread(target=run, name="guandan-dblock", daemon=True)
        self._watcher.start()

    def _message(self, lock_path: str | None) -> str:
        shown = make_url(self.url).render_as_string(hide_password=True)
        if self.shared:
            return (f"a single guandan server (not a cluster) is serving the database {shown}; stop it "
                    "before starting cluster processes (--redis) on it")
        where = f" (lock file {lock_path})" if lock_path else " (PostgreSQL advisory lock)"
        return (f"another guandan server is already serving the database {shown}{where}; "
                "one server per database: stop it first or use another database")

    def release(self) -> None:
        """Give the lock back (also when the process exits) and stop :meth:`watch`."""
        self._stop.set()
        watcher, self._watcher = self._watcher, None
        if watcher is not None and watcher is not threading.current_thread():
            watcher.join(timeout=10)
        # closing a descriptor of the database file drops this process's fcntl locks on it (POSIX),
        # SQLite's included: release only once the server's connections are done (serve exits)
        for name in ("_db_fd", "_fd"):
            fd = getattr(self, name)
            if fd is not None:
                os.close(fd)
                setattr(self, name, None)
        with self._conn_lock:
            if self._conn is not None:
                try:
                    self._conn.close()
                except Exception:  # noqa: BLE001 - a terminated connection: nothing to give back
                    pass
                finally:
                    self._conn = None
                    self._engine.dispose()
                    self._engine = None

    def __enter__(self) -> DatabaseLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


__all__ = ["CHECK_INTERVAL_S", "PG_LOCK_KEY", "DatabaseFenced", "DatabaseInUse", "DatabaseLock"]
