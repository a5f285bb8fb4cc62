"""A logged-in account's request run in worker processes (issue 25 "Speed and scale").

:class:`~guandan.server.account_calls.AccountCalls` runs a whole request (session check, presence,
the endpoint's work, JSON) in one hand-off to a small pool of threads. Threads of the server
process still share its interpreter lock with the event loop that plays the tables: 1,000 lobbies
polling the friends panel (about 50 requests a second) raised the tables' move-latency p99 by
about 2.4 ms over a control that polled ``/healthz`` (docs/friends.md, ``scripts/bench_presence.py
--deals 5 --repeats 4 --control``). :class:`ProcessCalls` does the same work in worker processes
instead, each with its own interpreter and its own database engine, so the event loop only
forwards the cookie and the answer's bytes.

No thread of the server process takes part: each worker has a pipe of its own, the event loop
writes a request into a worker's pipe and reads the answer when the selector says it has come
(``loop.add_reader``). (A ``concurrent.futures.ProcessPoolExecutor`` moves every call through
two threads of the server process, its queue manager and its queue's feeder, which take the
interpreter lock from the event loop several times per call.) A worker runs one request at a time
and holds the next in its pipe, so it never waits for the event loop between two requests;
requests beyond those wait in the pool's queue.

What crosses between the processes:

* to a worker: the session cookie's value, the endpoint's function (a module-level function,
  pickled by reference) and its arguments;
* back: ``("ok", result, noted)``, ``("error", (status, detail, headers), noted)`` for an
  ``HTTPException``, or ``("raised", exception, noted)`` for any other exception, where
  ``noted`` is ``{account id: seen at}``, the presence refreshes the worker only noted (accounts
  online anyway, :func:`~guandan.server.friends_store.touch`); the event loop adds them to the
  app's :class:`~guandan.server.presence.PresenceBatch`, which writes them with the others. A
  refresh that must be written at once (an account that shows offline) is written by the worker.

An ``HTTPException`` raised in the worker (401 ``login_required``, 403 ``guest_no_friends``, ...)
is raised again in the event loop with the same status, detail and headers, so the client sees
exactly what the thread pool gives. Another exception of the endpoint is raised again as it is
(the app's catch-all answers 500). A worker that dies (killed, out of memory) is replaced at
once; the requests in its pipe are answered with the retryable 503 ``temporarily_unavailable``.

Workers are started with ``forkserver`` (``spawn`` where there is none: never ``fork`` from a
server process that runs threads) and ignore ``SIGINT``: Ctrl-C in a terminal reaches the whole
process group, and the server stops its workers itself (:meth:`ProcessCalls.aclose`). A worker
whose server dies reads the end of its pipe and exits.

An in-memory SQLite database cannot be reached from another process: :func:`make_account_calls`
gives such a server the thread pool.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import multiprocessing
import pickle
import os
import signal
import struct
import sys
import time
import traceback
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any, TypeVar

from fastapi import HTTPException, Request
from sqlalchemy.engine import make_url
from starlette.exceptions import HTTPException as StarletteHTTPException

from guandan.server.account_calls import MAX_WAITING, AccountCalls, busy, call_as_account, call_plain
from guandan.server.auth import COOKIE_NAME
from guandan.server.db import make_engine, make_session_factory, normalize_url
from guandan.server.presence import PresenceBatch

__all__ = ["DEPTH", "ProcessCalls", "background", "in_memory_url", "make_account_calls"]

T = TypeVar("T")
log = logging.getLogger(__name__)


def in_memory_url(url: str) -> bool:
    """Whether ``url`` names an in-memory SQLite database (``sqlite://``, ``sqlite:///:memory:``,
    ``...?mode=memory``), which only the process that opened it can reach.

    Raises:
        ValueError: a URL that cannot be read.
    """
    u = make_url(normalize_url(url))
    if u.get_backend_name() != "sqlite":
        return False
    return not u.database or ":memory:" in u.database or u.query.get("mode") == "memory"


def background() -> bool:
    """Make this process background work for the CPU scheduler (Linux ``SCHED_BATCH``): a worker
    woken by a request in its pipe then does not preempt the server's event loop on its core.
    Measured with a stack sampler on a loaded 2-core machine: the server's writes of the friends
    streams' sweeps into a worker's pipe took about 2 ms each (the writer preempted by the woken
    worker), 0.4 % of the event loop's time. Returns whether the policy was set (not on other
    systems, nor where it is refused)."""
    if not hasattr(os, "sched_setscheduler") or not hasattr(os, "SCHED_BATCH"):
        return False
    try:
        os.sched_setscheduler(0, os.SCHED_BATCH, os.sched_param(0))
    except OSError:
        return False
    return True


def _worker_main(conn: Connection, db_url: str) -> None:
    """A worker process: its own engine (one connection: one request at a time) and session
    factory, then requests from ``conn`` until the server closes its end (module docstring).
    ``SIGINT`` and ``SIGTERM`` are ignored: a terminal's Ctrl-C or a service manager's signal to
    the whole process group must not end a worker while the server drains; it ends with its pipe."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    background()
    engine = make_engine(db_url, pool_size=1, max_overflow=1)
    factory = make_session_factory(engine)
    try:
        while True:
            try:
                token, batched, fn, args, plain = pickle.loads(conn.recv_bytes())
            except (EOFError, OSError):
                return
            conn.send_bytes(_answer_of(factory, token, batched, fn, args, plain))
    except OSError:
        return
    finally:
        engine.dispose()


def _answer_of(factory: Any, token: str | None, batched: bool, fn: Callable[..., Any], args: tuple[Any, ...],
               plain: bool = False) -> bytes:
    """One request's answer, pickled: ``("ok", result, noted)``, ``("error", (status, detail,
    headers), noted)`` or ``("raised", exception, noted)``. An answer that would not come back
    whole in the server (it does not pickle, or does not unpickle: an exception class with
    required keyword arguments) becomes a ``RuntimeError`` naming it. ``plain``: no session to
    check, ``fn(db, *args, batch)`` (:meth:`ProcessCalls.call`)."""
    batch = PresenceBatch() if batched else None
    try:
        out: tuple[str, Any] = ("ok", call_plain(factory, batch, fn, args) if plain
                                else call_as_account(factory, token, batch, fn, args))
    except StarletteHTTPException as e:  # FastAPI's HTTPException is one
        out = ("error", (e.status_code, e.detail, dict(e.headers) if e.headers else None))
    except Exception as e:  # noqa: BLE001 - given to the server, which raises it again
        e.add_note("in a friends worker process:\n" + traceback.format_exc())
        out = ("raised", e)
    noted = batch.take() if batch is not None else {}
    try:
        data = pickle.dumps((*out, noted))
        pickle.loads(data)  # what the server will do: fails here, not there
    except Exception as e:  # noqa: BLE001 - an answer that does not travel
        data = pickle.dumps(("raised", RuntimeError(f"a worker's answer cannot be sent: {type(e).__name__}: {e}"[:500]),
                             noted))
    return data


#: Requests one worker may hold at once: the one it runs and the next, already in its pipe, so that
#: a worker never waits for the event loop (busy with the tables) to hand it more work.
DEPTH = 2

_Answer = tuple[str, Any, dict[Any, Any]]


class _Worker:
    """One worker process, the server's end of its pipe (non-blocking), the requests in its pipe
    (oldest first, each with the presence batch its answer's refreshes go to) and the bytes of an
    answer not yet whole."""

    def __init__(self, proc: Any, conn: Connection) -> None:
        self.proc = proc
        self.conn = conn
        self.fd = conn.fileno()
        self.sent: collections.deque[tuple[asyncio.Future[_Answer], Any]] = collections.deque()
        self.buf = bytearray()
        self.started = time.monotonic()
        self.dead = False


def _frames(buf: bytearray) -> list[bytes]:
    """The whole messages at the start of ``buf`` (``multiprocessing.connection``'s framing: a
    4-byte big-endian length, or -1 and an 8-byte length), removed from it."""
    out = []
    while len(buf) >= 4:
        (n,) = struct.unpack("!i", buf[:4])
        head = 4
        if n == -1:
            if len(buf) < 12:
                break
            (n,) = struct.unpack("!Q", buf[4:12])
            head = 12
        if len(buf) < head + n:
            break
        out.append(bytes(buf[head:head + n]))
        del buf[:head + n]
    return out


def _frame(message: bytes) -> bytes:
    """``message`` framed as ``Connection.recv_bytes`` reads it."""
    n = len(message)
    return (struct.pack("!i", n) if n <= 0x7FFFFFFF else struct.pack("!iQ", -1, n)) + message


class ProcessCalls:
    """A bounded set of worker processes that runs a logged-in account's request in one hand-off
    (module docstring); the same :meth:`run` as :class:`~guandan.server.account_calls.AccountCalls`.
    Its state belongs to the event loop that called :meth:`start` (the server's); :meth:`run` from
    another loop is carried over to that one.

    A request goes into the pipe of the worker that holds the fewest (at most :data:`DEPTH`); when
    every worker holds ``DEPTH``, it waits in the pool's queue and is sent by the reader callback
    as soon as a worker answers.

    Args:
        processes: worker processes (>= 1).
        db_url: the server's database URL (each worker opens its own engine on it; not in memory).
        max_waiting: requests that may wait beyond those the workers hold (>= 0); more are refused (503).
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
        self._loop: asyncio.AbstractEventLoop | None = None
        self._workers: list[_Worker] = []
        self._queue: collections.deque[tuple[bytes, asyncio.Future[_Answer], Any]] = collections.deque()
        self._closed = False
        self._quick_deaths = 0  # workers in a row that died within 5 s of their start
        self._respawn: asyncio.TimerHandle | None = None
        self._in_flight = 0  # requests in run() (in a pipe or waiting)

    @property
    def pids(self) -> list[int]:
        """The process ids of the live workers (empty before :meth:`start`)."""
        return [w.proc.pid for w in self._workers if not w.dead]

    def start(self) -> None:
        """Start the workers (each imports the server's modules in its own time, about a second,
        before it answers). Called on the event loop (the app's start); a second call does nothing.

        Raises:
            RuntimeError: the pool is closed, or no event loop runs in this thread.
        """
        if self._closed:
            raise RuntimeError("this ProcessCalls pool is closed")
        if self._loop is not None:
            return
        self._loop = asyncio.get_running_loop()
        for _ in range(self.processes):
            self._spawn()

    def _spawn(self) -> None:
        assert self._loop is not None
        self._respawn = None
        methods = multiprocessing.get_all_start_methods()
        ctx = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
        mine, theirs = ctx.Pipe(duplex=True)
        proc = ctx.Process(target=_worker_main, args=(theirs, self.db_url), name="guandan-friends", daemon=True)
        proc.start()
        theirs.close()
        os.set_blocking(mine.fileno(), False)  # the event loop reads what has come and never waits
        worker = _Worker(proc, mine)
        self._workers.append(worker)
        self._loop.add_reader(worker.fd, self._answered, worker)
        self._feed(worker)

    def _feed(self, worker: _Worker) -> None:
        """Give ``worker`` waiting requests until it holds :data:`DEPTH`. A broken or full pipe
        puts the request back at the head of the queue and replaces the worker (the new one is fed)."""
        while self._queue and not worker.dead and len(worker.sent) < DEPTH:
            message, fut, batch = self._queue.popleft()
            if fut.done():  # its client went away while it waited
                continue
            data = _frame(message)
            try:  # a pipe holds DEPTH small requests: the write is whole
                whole = os.write(worker.fd, data) == len(data)
            except OSError:
                whole = False
            if not whole:
                self._queue.appendleft((message, fut, batch))
                self._lost(worker)
                return
            worker.sent.append((fut, batch))

    def _answered(self, worker: _Worker) -> None:
        """The reader callback: take what ``worker`` sent (whole answers go to their requests, a
        part waits for the rest), or its pipe ended (the worker died)."""
        ended = False
        try:
            while True:
                chunk = os.read(worker.fd, 1 << 16)
                if not chunk:
                    ended = True
                    break
                worker.buf += chunk
        except BlockingIOError:
            pass
        except OSError:
            ended = True
        for message in _frames(worker.buf):
            if not worker.sent:  # nothing asked for it: the pipe is out of step, drop the worker
                ended = True
                break
            fut, batch = worker.sent.popleft()  # answers come in the order of the requests
            try:
                kind, value, noted = pickle.loads(message)
            except Exception as e:  # noqa: BLE001 - checked in the worker; never expected here
                kind, value, noted = "raised", RuntimeError(f"a worker's answer could not be read: {e}"), {}
            if batch is not None:
                for uid, seen_at in noted.items():
                    batch.note(uid, seen_at)
            if not fut.done():
                fut.set_result((kind, value, noted))
        if ended:
            self._lost(worker)
            return
        self._feed(worker)

    def _lost(self, worker: _Worker) -> None:
        """A worker died: the requests in its pipe fail (503), and a new worker takes its place,
        at once, or after a pause growing to 30 s when workers keep dying within 5 s of their start."""
        if worker.dead:
            return
        worker.dead = True
        assert self._loop is not None
        self._loop.remove_reader(worker.fd)
        worker.conn.close()
        worker.proc.join(timeout=0)  # reaped if it has exited
        self._workers.remove(worker)
        while worker.sent:
            fut, _ = worker.sent.popleft()
            if not fut.done():
                fut.set_exception(busy())
        if self._closed:
            return
        self._quick_deaths = self._quick_deaths + 1 if time.monotonic() - worker.started < 5.0 else 0
        log.warning("a friends worker process (pid %s) died; starting another", worker.proc.pid)
        if self._quick_deaths < 3:
            self._spawn()
        elif self._respawn is None:
            self._respawn = self._loop.call_later(min(30.0, 2.0 ** (self._quick_deaths - 2)), self._spawn)
        if not self._workers:  # nobody to run the waiting requests for a while
            while self._queue:
                _, fut, _ = self._queue.popleft()
                if not fut.done():
                    fut.set_exception(busy())

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
            HTTPException: 503 ``temporarily_unavailable`` when ``processes * DEPTH + max_waiting``
                requests are in the pool already, when no worker is alive (workers that keep dying
                at their start are started again after a pause), when the worker died while
                holding it, or when the pool is closed meanwhile; 401 ``login_required`` when the request has no live
                session; the ``HTTPException`` ``fn`` raised, with its status, detail and headers.
            RuntimeError: the pool was never started or is closed.
            Exception: whatever else ``fn`` raised.
        """
        if self._loop is None or self._closed:
            raise RuntimeError("this ProcessCalls pool is not running")
        if asyncio.get_running_loop() is not self._loop:
            # another event loop's request (a test client's own loop): the pool's state stays on its loop
            return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(self.run(request, fn, *args), self._loop))
        batch = getattr(request.app.state, "presence", None)
        return await self._submit((request.cookies.get(COOKIE_NAME), batch is not None, fn, args, False), batch)

    async def call(self, factory: Any, batch: PresenceBatch | None, fn: Callable[..., T], *args: Any) -> T:
        """``fn(db, *args, presence)`` in a worker process, with no session to check: work of the
        server's own, such as a sweep of the friends streams.

        Args:
            factory: unused (the worker has its own engine on the same database); there for the
                same signature as :meth:`AccountCalls.call <guandan.server.account_calls.AccountCalls.call>`.
            batch: the app's :class:`~guandan.server.presence.PresenceBatch`; ``fn`` gets the
                worker's own, whose notes are added to ``batch`` when the answer comes (``None``:
                ``fn`` gets ``None``).
            fn: a module-level function (pickled by reference); ``args`` and its result must pickle.
        Returns:
            What ``fn`` returned.
        Raises:
            HTTPException: 503 ``temporarily_unavailable`` as for :meth:`run`.
            RuntimeError: the pool was never started or is closed.
            Exception: whatever ``fn`` raised.
        """
        if self._loop is None or self._closed:
            raise RuntimeError("this ProcessCalls pool is not running")
        if asyncio.get_running_loop() is not self._loop:
            return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(
                self.call(factory, batch, fn, *args), self._loop))
        return await self._submit((None, batch is not None, fn, args, True), batch)

    async def _submit(self, request: tuple[Any, ...], batch: Any) -> Any:
        """Queue one pickled call and wait for its answer (:meth:`run`, :meth:`call`)."""
        assert self._loop is not None
        if self._in_flight >= self.processes * DEPTH + self.max_waiting or not self._workers:
            raise busy()
        message = pickle.dumps(request)
        answer: asyncio.Future[_Answer] = self._loop.create_future()
        self._in_flight += 1
        try:
            self._queue.append((message, answer, batch))
            for worker in sorted(self._workers, key=lambda w: len(w.sent)):
                self._feed(worker)
                if not self._queue:
                    break
            kind, value, _ = await answer  # the presence refreshes are noted when it comes
        finally:
            self._in_flight -= 1
        if kind == "error":
            status, detail, headers = value
            raise HTTPException(status_code=status, detail=detail, headers=headers)
        if kind == "raised":
            raise value
        return value  # type: ignore[no-any-return]

    async def aclose(self) -> None:
        """Stop the workers (the app's shutdown): requests waiting or in a pipe are answered 503,
        the pipes closed (each worker ends after the request it runs), and the workers waited for
        (at most 5 s each, then killed). Later calls of :meth:`run` raise ``RuntimeError``."""
        self._closed = True
        if self._respawn is not None:
            self._respawn.cancel()
        for _, fut, _ in self._queue:
            if not fut.done():
                fut.set_exception(busy())
        self._queue.clear()
        workers, self._workers = self._workers, []
        for w in workers:
            if self._loop is not None and not w.dead:
                self._loop.remove_reader(w.fd)
            w.dead = True
            while w.sent:
                fut, _ = w.sent.popleft()
                if not fut.done():
                    fut.set_exception(busy())
            w.conn.close()
        await asyncio.to_thread(_join_all, [w.proc for w in workers])


def _join_all(procs: list[Any]) -> None:
    """Wait for ``procs`` to end, 5 s in all, then kill those left."""
    deadline = time.monotonic() + 5.0
    for p in procs:
        p.join(timeout=max(0.0, deadline - time.monotonic()))
    for p in procs:
        if p.is_alive():
            p.kill()
            p.join(timeout=5)


def make_account_calls(processes: int, threads: int, db_url: str, name: str) -> AccountCalls | ProcessCalls:
    """The pool for an endpoint that many clients call at once: :class:`ProcessCalls` with
    ``processes`` workers, or :class:`~guandan.server.account_calls.AccountCalls` with ``threads``
    threads named ``name`` when ``processes`` is 0, the database is in-memory SQLite, or on
    Windows (whose event loop cannot watch a pipe).

    Raises:
        ValueError: a negative ``processes``, ``threads`` below 1, or a URL that cannot be read.
    """
    if processes < 0:
        raise ValueError("processes must be >= 0")
    if processes == 0 or in_memory_url(db_url) or sys.platform == "win32":  # no add_reader on a pipe there
        return AccountCalls(threads, name)
    return ProcessCalls(processes, db_url)
