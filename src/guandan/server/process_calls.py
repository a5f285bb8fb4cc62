"""A logged-in account's request run in worker processes (issue 25 "Speed and scale").

:class:`~guandan.server.account_calls.AccountCalls` runs a whole request (session check, presence,
the endpoint's work, JSON) in one hand-off to a small pool of threads. Threads of the server
process still share its interpreter lock with the event loop that plays the tables: 1,000 lobbies
polling the friends panel (about 50 requests a second) raised the tables' move-latency p99 by
about 2.4 ms over a control that polled ``/healthz`` (docs/friends.md, ``scripts/bench_presence.py
--deals 5 --repeats 4 --control``). :class:`ProcessCalls` does the same work in worker processes
instead, each with its own interpreter and its own database engine, so the event loop only
forwards the cookie and the answer's bytes.

What crosses between the processes:

* to a worker: the session cookie's value, the endpoint's function (a module-level function,
  pickled by reference) and its arguments;
* back: ``("ok", result, noted)`` or ``("error", (status, detail, headers), noted)``, where
  ``noted`` is ``{account id: seen at}``, the presence refreshes the worker only noted (accounts
  online anyway, :func:`~guandan.server.friends_store.touch`); the event loop adds them to the
  app's :class:`~guandan.server.presence.PresenceBatch`, which writes them with the others. A
  refresh that must be written at once (an account that shows offline) is written by the worker.

An ``HTTPException`` raised in the worker (401 ``login_required``, 403 ``guest_no_friends``, ...)
is raised again in the event loop with the same status, detail and headers, so the client sees
exactly what the thread pool gives. Another exception of the endpoint is raised again as it is
(the app's catch-all answers 500). A worker that dies (killed, out of memory) breaks the pool:
the request is answered with the retryable 503 ``temporarily_unavailable`` and the next request
starts a fresh pool.

Workers are started with ``forkserver`` (``spawn`` where there is none: never ``fork`` from a
server process that runs threads) and ignore ``SIGINT``: Ctrl-C in a terminal reaches the whole
process group, and the server stops its workers itself (:meth:`ProcessCalls.close`).

An in-memory SQLite database cannot be reached from another process: :func:`make_account_calls`
gives such a server the thread pool.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import signal
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, TypeVar

from fastapi import HTTPException, Request
from sqlalchemy.engine import make_url

from guandan.server.account_calls import MAX_WAITING, AccountCalls, busy, call_as_account
from guandan.server.auth import COOKIE_NAME
from guandan.server.db import make_engine, make_session_factory, normalize_url
from guandan.server.presence import PresenceBatch

__all__ = ["ProcessCalls", "in_memory_url", "make_account_calls"]

T = TypeVar("T")

_FACTORY: Any = None  # the worker's session factory (set by _init_worker)


def in_memory_url(url: str) -> bool:
    """Whether ``url`` names an in-memory SQLite database (``sqlite://``, ``sqlite:///:memory:``,
    ``...?mode=memory``), which only the process that opened it can reach.

    Raises:
        ValueError: a URL that cannot be read.
    """
    u = make_url(normalize_url(url))
    if u.get_backend_name() != "sqlite":
        return False
    return u.database in (None, "", ":memory:") or u.query.get("mode") == "memory"


def _init_worker(db_url: str) -> None:
    """A worker's start: its own engine (one connection: a worker runs one request at a time) and
    session factory; ``SIGINT`` ignored (the server stops its workers)."""
    global _FACTORY
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _FACTORY = make_session_factory(make_engine(db_url, pool_size=1, max_overflow=1))


def _ready() -> bool:
    """Nothing: a call that makes the pool start a worker (:meth:`ProcessCalls.start`)."""
    return True


def _work(token: str | None, batched: bool, fn: Callable[..., Any], args: tuple[Any, ...]) -> tuple[str, Any, dict[Any, Any]]:
    """One request in a worker (module docstring): ``("ok", result, noted)`` or ``("error", (status,
    detail, headers), noted)``."""
    batch = PresenceBatch() if batched else None
    try:
        result = call_as_account(_FACTORY, token, batch, fn, args)
    except HTTPException as e:
        return "error", (e.status_code, e.detail, dict(e.headers) if e.headers else None), _taken(batch)
    return "ok", result, _taken(batch)


def _taken(batch: PresenceBatch | None) -> dict[Any, Any]:
    return batch.take() if batch is not None else {}


class ProcessCalls:
    """A bounded pool of worker processes that runs a logged-in account's request in one hand-off
    (module docstring); the same :meth:`run` as :class:`~guandan.server.account_calls.AccountCalls`.

    Args:
        processes: worker processes (>= 1).
        db_url: the server's database URL (each worker opens its own engine on it; not in memory).
        max_waiting: requests that may wait for a worker (>= 0); more are refused (503).
    Raises:
        ValueError: ``processes`` below 1, ``max_waiting`` below 0, or an in-memory SQLite URL.
    """

    def __init__(self, processes: int, db_url: str, max_waiting: int = MAX_WAITING) -> None:
        if processes < 1 or max_waiting < 0:
            raise ValueError("a ProcessCalls pool needs at least one process and max_waiting >= 0")
        if in_memory_url(db_url):
            raise ValueError("an in-memory SQLite database cannot be reached from worker processes")
        self.processes = processes
        self.max_waiting = max_waiting
        self.db_url = db_url
        self._pool: ProcessPoolExecutor | None = None
        self._closed = False
        self._in_flight = 0  # requests handed to the pool and not yet answered (event loop only)

    def _ensure(self) -> ProcessPoolExecutor:
        if self._closed:
            raise RuntimeError("this ProcessCalls pool is closed")
        if self._pool is None:
            methods = multiprocessing.get_all_start_methods()
            ctx = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
            self._pool = ProcessPoolExecutor(self.processes, mp_context=ctx, initializer=_init_worker,
                                             initargs=(self.db_url,))
        return self._pool

    def _drop(self, pool: ProcessPoolExecutor) -> None:
        if self._pool is pool:
            self._pool = None
        pool.shutdown(wait=False, cancel_futures=True)

    def start(self) -> list[Future[bool]]:
        """Start every worker now (each takes about a second to import the server's modules), so
        that the first polls do not wait for them. Returns at once.

        Returns:
            One future per worker start (done when that worker has answered).
        """
        pool = self._ensure()
        return [pool.submit(_ready) for _ in range(self.processes)]

    async def run(self, request: Request, fn: Callable[..., T], *args: Any) -> T:
        """``fn(db, account, *args)`` in a worker process, for the account of the request's session.

        Args:
            request: the HTTP request (its ``gd_session`` cookie; ``app.state.presence`` takes the
                refreshes the worker noted).
            fn: a module-level function (pickled by reference), called in the worker as ``fn(db,
                account, *args)`` with an open SQLAlchemy session (closed after it: ``fn`` commits
                what it keeps) and the account row; ``args`` and its result must pickle.
        Returns:
            What ``fn`` returned.
        Raises:
            HTTPException: 503 ``temporarily_unavailable`` when ``processes + max_waiting`` requests
                are in the pool already or a worker died; 401 ``login_required`` when the request
                has no live session; the ``HTTPException`` ``fn`` raised, with its status, detail
                and headers.
            Exception: whatever else ``fn`` raised.
        """
        if self._in_flight >= self.processes + self.max_waiting:
            raise busy()
        token = request.cookies.get(COOKIE_NAME)
        batch = getattr(request.app.state, "presence", None)
        self._in_flight += 1
        try:
            pool = self._ensure()
            try:
                try:
                    fut = pool.submit(_work, token, batch is not None, fn, args)
                except BrokenProcessPool:  # a worker died earlier: one fresh pool
                    self._drop(pool)
                    pool = self._ensure()
                    fut = pool.submit(_work, token, batch is not None, fn, args)
                kind, value, noted = await asyncio.wrap_future(fut)
            except BrokenProcessPool:
                self._drop(pool)
                raise busy() from None
        finally:
            self._in_flight -= 1
        if batch is not None:
            for uid, seen_at in noted.items():
                batch.note(uid, seen_at)
        if kind == "error":
            status, detail, headers = value
            raise HTTPException(status_code=status, detail=detail, headers=headers)
        return value  # type: ignore[no-any-return]

    def close(self, wait: bool = False) -> None:
        """Stop the workers (the app's shutdown): requests not started are cancelled; with ``wait``,
        block until the workers have exited (their database connections closed). Later calls of
        :meth:`run` raise ``RuntimeError``."""
        self._closed = True
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=wait, cancel_futures=True)


def make_account_calls(processes: int, threads: int, db_url: str, name: str) -> AccountCalls | ProcessCalls:
    """The pool for an endpoint that many clients call at once: :class:`ProcessCalls` with
    ``processes`` workers, or :class:`~guandan.server.account_calls.AccountCalls` with ``threads``
    threads named ``name`` when ``processes`` is 0 or the database is in-memory SQLite.

    Raises:
        ValueError: a negative ``processes``, ``threads`` below 1, or a URL that cannot be read.
    """
    if processes < 0:
        raise ValueError("processes must be >= 0")
    if processes == 0 or in_memory_url(db_url):
        return AccountCalls(threads, name)
    return ProcessCalls(processes, db_url)
