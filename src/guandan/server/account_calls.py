"""One hand-off to a thread per request, for the endpoints that many clients call at once.

A plain FastAPI handler with the usual dependencies (``db: DbSession, user: RequiredUser``) is
handed to the thread pool once per dependency and once more for the handler (four hand-offs),
and the session check loads ORM objects. Under a burst (1,000 players joining the matchmaking
queue at once, 1,000 lobbies polling the friends panel) that overhead, not the work asked for,
was most of the server's CPU per request (issue 25 "Speed and scale"; docs/friends.md,
docs/matchmaking.md). :class:`AccountCalls` runs the whole request but the HTTP in one call on a
small pool of its own:

1. the session of the ``gd_session`` cookie is checked as :func:`~guandan.server.auth.current_user`
   does, with one Core query (:func:`~guandan.server.auth.account_of_token`; an expired session is
   deleted);
2. the account is marked seen (presence, :func:`~guandan.server.friends_store.touch`, through the
   app's ``state.presence`` batch when it has one);
3. the endpoint's function runs with the database session and the account row, and its result is
   returned to the event loop.

The pool is bounded (``threads``), so however many requests arrive at once, at most that many
threads compete with the event loop for the interpreter and hold a database connection; the
others wait in the pool's queue, up to ``max_waiting`` of them: beyond that a request is answered
at once with the retryable 503 ``temporarily_unavailable`` (``params.retry_s``, ``Retry-After``)
rather than wait behind a queue the server cannot work off.

The database session comes from ``app.state.session_factory`` directly: an override of the
:func:`~guandan.server.db.get_db` dependency does not reach these endpoints. An endpoint with a
JSON body takes it as parsed JSON (FastAPI still answers 422 ``json_invalid`` for a body that is not
JSON) and checks it against its model with :func:`validated` after the session, so a request with
no session is answered 401 whatever its body, as with the plain dependencies.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from fastapi import HTTPException, Request
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ValidationError

from guandan.server.auth import COOKIE_NAME, account_of_token, login_required
from guandan.server.friends_store import touch
from guandan.server.models import utcnow

__all__ = ["BUSY_RETRY_S", "MAX_WAITING", "AccountCalls", "busy", "call_as_account", "call_plain", "validated"]

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)

#: Requests that may wait for a thread of one pool before the next is refused (503).
MAX_WAITING = 256
#: ``Retry-After`` (seconds) of that refusal.
BUSY_RETRY_S = 2


def busy() -> HTTPException:
    """The retryable 503 ``temporarily_unavailable`` (``params.retry_s``, ``Retry-After``) of a pool
    that has as many requests as it may hold."""
    return HTTPException(status_code=503, headers={"Retry-After": str(BUSY_RETRY_S)},
                         detail={"message": "the server is busy; try again in a moment",
                                 "code": "temporarily_unavailable", "params": {"retry_s": BUSY_RETRY_S}})


def call_as_account(factory: Callable[[], Any], token: str | None, batch: Any, fn: Callable[..., T],
                    args: tuple[Any, ...]) -> T:
    """The body of one pooled request, in the thread or process that runs it: steps 1-3 of the
    module docstring.

    Args:
        factory: makes the SQLAlchemy session (closed after the call; uncommitted work rolled back).
        token: the ``gd_session`` cookie's value, or ``None``.
        batch: the :class:`~guandan.server.presence.PresenceBatch` that takes the presence refreshes
            of accounts online anyway, or ``None`` (every due mark written at once).
        fn: called as ``fn(db, account, *args)``.
    Returns:
        What ``fn`` returned.
    Raises:
        HTTPException: 401 ``login_required`` (no live session; an expired one is deleted), and
            whatever ``fn`` raises.
    """
    with factory() as db:
        me = account_of_token(db, token)
        if me is None:
            if token:
                db.commit()  # keeps the removal of an expired session
            raise login_required()
        if touch(db, me, utcnow(), batch):
            db.commit()
        return fn(db, me, *args)


def call_plain(factory: Callable[[], Any], batch: Any, fn: Callable[..., T], args: tuple[Any, ...]) -> T:
    """``fn(db, *args, batch)`` in a session of its own (closed after it; ``fn`` commits what it
    keeps): a pool's work with no session to check (:meth:`AccountCalls.call`)."""
    with factory() as db:
        return fn(db, *args, batch)


def validated(model: type[M], data: Any) -> M:
    """``data`` (a request's parsed JSON body, ``None`` when it had none) checked against ``model``.

    Raises:
        RequestValidationError: no body, or a body that does not fit ``model`` (the app answers 422
            ``invalid_request`` with the first problem's field, as for a body FastAPI checks itself).
    """
    if data is None:
        raise RequestValidationError([{"type": "missing", "loc": ("body",), "msg": "Field required", "input": None}])
    try:
        return model.model_validate(data)
    except ValidationError as e:
        raise RequestValidationError([{**err, "loc": ("body", *err["loc"])} for err in e.errors()]) from None


class AccountCalls:
    """A bounded thread pool that runs a logged-in account's request in one hand-off (module docstring).

    Args:
        threads: the pool's size (>= 1).
        name: prefix of the threads' names (seen in a profile or a thread dump).
        max_waiting: requests that may wait for a thread (>= 0); more are refused (503).
    Raises:
        ValueError: ``threads`` below 1 or ``max_waiting`` below 0.
    """

    def __init__(self, threads: int, name: str, max_waiting: int = MAX_WAITING) -> None:
        if threads < 1 or max_waiting < 0:
            raise ValueError("an AccountCalls pool needs at least one thread and max_waiting >= 0")
        self.threads = threads
        self.max_waiting = max_waiting
        self._pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix=name)
        self._in_flight = 0  # requests handed to the pool and not yet answered (event loop only)

    async def run(self, request: Request, fn: Callable[..., T], *args: Any) -> T:
        """``fn(db, account, *args)`` in one thread of the pool, for the account of the request's session.

        Args:
            request: the HTTP request (its ``gd_session`` cookie; ``app.state.session_factory`` and
                ``app.state.presence``).
            fn: called as ``fn(db, account, *args)`` with an open SQLAlchemy session (closed after
                it, uncommitted work rolled back: ``fn`` commits what it keeps) and the account row
                (``id``, ``name``, ``is_guest``, ``rating_mu``, ``rating_sigma``, ``games_played``,
                ``last_seen_at``).
        Returns:
            What ``fn`` returned.
        Raises:
            HTTPException: 503 ``temporarily_unavailable`` (``params.retry_s``, ``Retry-After``) when
                ``threads + max_waiting`` requests are in the pool already; 401 ``login_required``
                when the request has no live session; and whatever ``fn`` raises.
        """
        if self._in_flight >= self.threads + self.max_waiting:
            raise busy()
        token = request.cookies.get(COOKIE_NAME)
        factory = request.app.state.session_factory
        batch = getattr(request.app.state, "presence", None)
        loop = asyncio.get_running_loop()
        self._in_flight += 1
        try:
            return await loop.run_in_executor(self._pool, call_as_account, factory, token, batch, fn, args)
        finally:
            self._in_flight -= 1

    async def call(self, factory: Callable[[], Any], batch: Any, fn: Callable[..., T], *args: Any) -> T:
        """``fn(db, *args, batch)`` in one thread of the pool with a session from ``factory``, and
        no session to check: work of the server's own, such as a sweep of the friends streams.

        Raises:
            HTTPException: 503 ``temporarily_unavailable`` when the pool holds as many calls as it may.
            Exception: whatever ``fn`` raised.
        """
        if self._in_flight >= self.threads + self.max_waiting:
            raise busy()
        loop = asyncio.get_running_loop()
        self._in_flight += 1
        try:
            return await loop.run_in_executor(self._pool, call_plain, factory, batch, fn, args)
        finally:
            self._in_flight -= 1

    async def aclose(self) -> None:
        """:meth:`close` with ``wait``, off the event loop (the app's shutdown)."""
        await asyncio.to_thread(self.close, True)

    def close(self, wait: bool = False) -> None:
        """Stop the pool's threads once their requests are done (the app's shutdown; with ``wait``,
        block until they are); later calls raise ``RuntimeError``."""
        self._pool.shutdown(wait=wait, cancel_futures=False)
