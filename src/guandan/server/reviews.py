"""Review jobs of the web server (复盘, issue 22): a deal's review computed in worker processes,
with progress, a limit on concurrent jobs, and a cache in the database.

A review (:func:`guandan.review.review_lines`) of one seat's decisions in one deal of a finished
game takes seconds per decision, so it never runs on the event loop nor in a request's thread:
:class:`ReviewService` queues it in a :class:`~concurrent.futures.ProcessPoolExecutor` of its own
(``settings.review_workers`` processes, ``forkserver`` or ``spawn``: never ``fork`` from the
threaded server), apart from the bots' pool so that reviews never slow a table's bots. The worker
(:mod:`guandan.server.review_worker`) sends ``(job, done, total)`` on a queue after each decision;
a reader thread here keeps each job's progress.

Cache: a finished review is stored as a ``reviews`` row (:class:`~guandan.server.models.ReviewRow`)
keyed by (game, deal, seat, budget), under the job's id; the same request later answers from the
row at once, also after a restart, and ``GET /api/reviews/{job}`` keeps answering. The budget is
``settings.review_budget`` (default :data:`~guandan.server.settings.DEFAULT_REVIEW_BUDGET`), in its
canonical JSON form with the engine's ``REVIEW_VERSION`` in the key; the worlds' seed is :data:`SEED`.

Limits: a request for a review already queued or computing joins that job; otherwise an account
may have ``settings.review_jobs_per_account`` jobs queued or computing and the server
``settings.review_jobs_max`` in all; beyond that :meth:`ReviewService.submit` raises
:class:`ReviewBusy` (the router answers 429).

What a job reveals: the review of a finished game, which the replay shows whole (every hand);
failures are reported as a code, never with the record's content.
"""

from __future__ import annotations

import json
import logging
import multiprocessing
import secrets
import threading
from collections.abc import Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from typing import Any

from guandan.review import REVIEW_VERSION, Budget

log = logging.getLogger("guandan.server.reviews")

__all__ = ["SEED", "ReviewBusy", "ReviewJob", "ReviewService", "budget_key", "record_deals"]

#: Seed of the sampled worlds of every review the server computes.
SEED = 0
#: Finished or failed jobs kept in memory (the finished ones are in the database anyway).
_KEEP_DONE = 256


class ReviewBusy(Exception):
    """Too many reviews queued or computing.

    Attributes:
        code: ``review_running`` (this account's limit; ``params.job`` names its job) or
            ``reviews_busy`` (the server's limit).
        params: values for the message (``limit``, ``job``).
    """

    def __init__(self, code: str, message: str, params: dict[str, Any]) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.params = params


@dataclass
class ReviewJob:
    """One review being computed (or just computed).

    Attributes:
        id: the job id (32 hex digits; also the ``reviews`` row's id once stored).
        game, deal, seat, budget: what is reviewed, and the budget's canonical JSON.
        account: the account that started it (``None`` for a cached answer).
        status: ``queued``, ``running``, ``done`` or ``failed``.
        done, total: decisions evaluated and to evaluate (``total`` is ``None`` until known).
        result: the review (``done``). error: the failure's code (``failed``).
    """

    id: str
    game: int
    deal: int
    seat: int
    budget: str
    account: int | None
    status: str = "queued"
    done: int = 0
    total: int | None = None
    result: dict[str, Any] | None = field(default=None, repr=False)
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        """``{job, status, done, total, game, deal, seat}``, plus ``result`` when done and
        ``error`` (``{code}``) when failed."""
        out: dict[str, Any] = {"job": self.id, "status": self.status, "done": self.done, "total": self.total,
                               "game": self.game, "deal": self.deal, "seat": self.seat}
        if self.status == "done":
            out["result"] = self.result
        if self.status == "failed":
            out["error"] = {"code": self.error}
        return out


def budget_key(spec: str) -> tuple[Budget, str]:
    """A budget (:meth:`guandan.review.Budget.parse` text) and the cache key's part for it: the
    budget's canonical JSON with the review engine's :data:`~guandan.review.REVIEW_VERSION` (a new
    version of the engine's method or JSON never answers from reviews stored by an older one).

    Raises:
        ValueError: an unknown key or a bad value.
    """
    budget = Budget.parse(spec)
    return budget, json.dumps({**budget.to_json(), "version": REVIEW_VERSION}, sort_keys=True, separators=(",", ":"))


def record_deals(record: Sequence[dict[str, Any]]) -> tuple[int, bool]:
    """The number of deals in a parsed record and whether the game is over (a ``game_over`` event;
    for a board play's record, :mod:`guandan.duplicate.board_records`, its one deal's ``deal_end``).

    Args:
        record: the record's JSON objects (header first).
    """
    deals = sum(1 for ev in record if isinstance(ev, dict) and ev.get("type") == "deal")
    end = "deal_end" if record and isinstance(record[0], dict) and isinstance(record[0].get("board"), dict) \
        else "game_over"
    over = any(isinstance(ev, dict) and ev.get("type") == end for ev in record)
    return deals, over


class ReviewService:
    """Review jobs: the worker processes, the jobs in memory and the ``reviews`` cache.

    Args:
        session_factory: the server's database sessions.
        settings: ``review_budget``, ``review_workers``, ``review_jobs_per_account``, ``review_jobs_max``.
    Raises:
        ValueError: a bad ``review_budget`` or a limit below 1.
    """

    def __init__(self, session_factory: Any, settings: Any) -> None:
        from guandan.server.settings import DEFAULT_REVIEW_BUDGET

        self.session_factory = session_factory
        self.budget, self.budget_json = budget_key(getattr(settings, "review_budget", DEFAULT_REVIEW_BUDGET))
        self.workers = int(getattr(settings, "review_workers", 1))
        self.per_account = int(getattr(settings, "review_jobs_per_account", 1))
        self.max_jobs = int(getattr(settings, "review_jobs_max", 4))
        if min(self.workers, self.per_account, self.max_jobs) < 1:
            raise ValueError("review_workers, review_jobs_per_account and review_jobs_max must be >= 1")
        self._lock = threading.Lock()
        self._jobs: dict[str, ReviewJob] = {}
        self._active: dict[tuple[int, int, int, str], ReviewJob] = {}
        self._pool: ProcessPoolExecutor | None = None
        self._queue: Any = None
        self._reader: threading.Thread | None = None
        self._closed = False

    # -- the cache ------------------------------------------------------------------------------

    def cached(self, game: int, deal: int, seat: int) -> ReviewJob | None:
        """The stored review of (game, deal, seat) at this server's budget, as a done job, or
        ``None``. Blocking database work: call it from a worker thread."""
        from sqlalchemy import select

        from guandan.server.models import ReviewRow

        with self.session_factory() as db:
            row = db.scalars(select(ReviewRow).where(
                ReviewRow.game_id == game, ReviewRow.deal == deal, ReviewRow.seat == seat,
                ReviewRow.budget == self.budget_json)).first()
            return None if row is None else self._row_job(row)

    def _row_job(self, row: Any) -> ReviewJob:
        result = json.loads(row.result)
        n = sum(1 for e in result.get("decisions", ()) if e.get("evaluated"))
        return ReviewJob(row.id, row.game_id, row.deal, row.seat, row.budget, None, "done", n, n, result)

    def _store(self, job: ReviewJob, text: str) -> None:
        from sqlalchemy.exc import IntegrityError

        from guandan.server.models import ReviewRow

        try:
            with self.session_factory() as db:
                db.add(ReviewRow(id=job.id, game_id=job.game, deal=job.deal, seat=job.seat,
                                 budget=job.budget, result=text))
                db.commit()
        except IntegrityError:  # stored meanwhile (another process), or the game was deleted
            log.info("review %s of game %d not stored (stored already, or the game is gone)", job.id, job.game)
        except Exception as e:  # noqa: BLE001 - a database failure: the review stays in memory only
            log.warning("review %s of game %d not stored: %s", job.id, job.game, type(e).__name__)

    # -- jobs -----------------------------------------------------------------------------------

    def get(self, job_id: str) -> ReviewJob | None:
        """The job with this id: in memory, else a stored review; ``None`` when unknown.
        Blocking database work for a job not in memory."""
        with self._lock:
            job = self._jobs.get(job_id)
        if job is not None:
            return job
        if len(job_id) != 32 or any(c not in "0123456789abcdef" for c in job_id):
            return None
        from guandan.server.models import ReviewRow

        with self.session_factory() as db:
            row = db.get(ReviewRow, job_id)
            return None if row is None else self._row_job(row)

    def submit(self, game: int, deal: int, seat: int, lines: Sequence[str], account: int) -> ReviewJob:
        """Queue the review of ``seat`` in the ``deal``-th deal of game ``game`` (record ``lines``),
        or join the job already queued or computing for it. The caller has checked that the game
        is public and finished and that the deal exists, and looked in the cache (:meth:`cached`).

        Raises:
            ReviewBusy: this account, or the server, has as many jobs queued or computing as allowed.
            RuntimeError: the service is shut down.
        """
        key = (game, deal, seat, self.budget_json)
        with self._lock:
            if self._closed:
                raise RuntimeError("the review service is shut down")
            job = self._active.get(key)
            if job is not None:
                return job
            mine = [j for j in self._active.values() if j.account == account]
            if len(mine) >= self.per_account:
                raise ReviewBusy("review_running", "a review of yours is still being computed",
                                 {"limit": self.per_account, "job": mine[0].id})
            if len(self._active) >= self.max_jobs:
                raise ReviewBusy("reviews_busy", "the server is computing too many reviews; try again soon",
                                 {"limit": self.max_jobs})
            job = ReviewJob(secrets.token_hex(16), game, deal, seat, self.budget_json, account)
            self._jobs[job.id] = job
            self._active[key] = job
            pool = self._ensure_pool()
        from guandan.server.review_worker import compute_review

        args = (compute_review, job.id, list(lines), seat, deal, self.budget.to_json(), SEED)
        try:
            try:
                fut = pool.submit(*args)
            except BrokenProcessPool:  # a worker died earlier: start a fresh pool once
                self._drop_pool(pool)
                with self._lock:
                    pool = self._ensure_pool()
                fut = pool.submit(*args)
        except Exception:
            with self._lock:
                self._active.pop(key, None)
                self._jobs.pop(job.id, None)
            raise
        fut.add_done_callback(lambda f, p=pool: self._finished(job, f, p))
        return job

    def _ensure_pool(self) -> ProcessPoolExecutor:
        if self._pool is None:
            from guandan.server.review_worker import init_worker

            methods = multiprocessing.get_all_start_methods()
            ctx = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
            if self._queue is None:  # one queue and one reader for every pool of this service
                self._queue = ctx.Queue()
                self._reader = threading.Thread(target=self._read_progress, args=(self._queue,),
                                                name="review-progress", daemon=True)
                self._reader.start()
            self._pool = ProcessPoolExecutor(self.workers, mp_context=ctx, initializer=init_worker,
                                             initargs=(self._queue,))
        return self._pool

    def _drop_pool(self, pool: ProcessPoolExecutor) -> None:
        """Forget a broken pool (if it is still the current one) and shut it down without waiting."""
        with self._lock:
            if self._pool is pool:
                self._pool = None
        pool.shutdown(wait=False, cancel_futures=True)

    def _read_progress(self, q: Any) -> None:
        while True:
            try:
                msg = q.get()
            except (EOFError, OSError, ValueError):
                return
            if msg is None:
                return
            job_id, done, total = msg
            with self._lock:
                job = self._jobs.get(job_id)
                if job is not None and job.status in ("queued", "running"):
                    job.status, job.done, job.total = "running", done, total

    def _finished(self, job: ReviewJob, fut: Future[str], pool: ProcessPoolExecutor) -> None:
        """Done callback (the pool's thread): store the review, or mark the job failed; a pool
        whose worker died is dropped (the next job starts a fresh one)."""
        key = (job.game, job.deal, job.seat, job.budget)
        text = None
        try:
            text = fut.result()
        except Exception as e:  # noqa: BLE001 - any failure of the worker: the job fails with a code
            code = "review_cancelled" if fut.cancelled() else "review_failed"
            if isinstance(e, BrokenProcessPool):  # a worker died (killed, out of memory)
                self._drop_pool(pool)
            log.warning("review %s (game %d, deal %d, seat %d) failed: %s", job.id, job.game, job.deal, job.seat,
                        type(e).__name__)
            with self._lock:
                job.status, job.error = "failed", code
                self._active.pop(key, None)
                self._trim()
            return
        result = json.loads(text)
        n = sum(1 for e in result.get("decisions", ()) if e.get("evaluated"))
        with self._lock:
            job.result, job.done, job.total, job.status = result, n, n, "done"
        try:
            if not self._closed:
                self._store(job, text)
        finally:
            with self._lock:
                self._active.pop(key, None)
                self._trim()

    def _trim(self) -> None:
        over = len(self._jobs) - _KEEP_DONE
        if over > 0:
            for jid in [j.id for j in self._jobs.values() if j.status in ("done", "failed")][:over]:
                del self._jobs[jid]

    def active(self) -> int:
        """Jobs queued or computing."""
        with self._lock:
            return len(self._active)

    def shutdown(self) -> None:
        """Stop the worker processes (jobs not finished are dropped: asked again, they start anew)."""
        with self._lock:
            self._closed = True
            pool, self._pool = self._pool, None
            q, self._queue = self._queue, None
        if pool is not None:
            procs = list((getattr(pool, "_processes", None) or {}).values())
            pool.shutdown(wait=False, cancel_futures=True)
            for p in procs:  # a review in progress would hold the process for seconds
                if p.is_alive():
                    p.terminate()
        if q is not None:
            try:
                q.put(None)
            except (OSError, ValueError):
                pass
        if self._reader is not None:
            self._reader.join(timeout=2)

