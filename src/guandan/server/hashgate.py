"""Fair admission of password hashes and checks (issue 26 item 5: a flood of wrong logins from
about 20 addresses kept the first-come queue of the hash gate full, and 9 of 11 correct logins
during it were answered 503).

Every argon2 hash or check (about 170 ms of one core and 64 MiB each) goes through one
:class:`HashGate` per process. At most ``concurrency`` run at once; the others wait, at most
``queue`` of them, each for at most ``wait_s`` seconds. Who waits, and who runs next, is decided
per caller (:class:`Caller`, set for the current thread with :meth:`HashGate.caller`):

1. **Per address**: one client address has at most ``per_client`` checks running or waiting; one
   more is refused at once (503 ``server_busy``), without taking a place in the queue.
2. **Per account**: the checks for one account from addresses that already failed recently (see
   below) are at most ``per_account`` running or waiting; one more such check is refused at once.
   A check from a trusted or unblemished address is never refused by this limit, so a flood
   aimed at one account cannot keep its owner out.
3. **Priority**: the next check to run is the waiting one with the best rank: first the callers
   that are *trusted* (their address logged in successfully recently; :class:`Caller.trusted`),
   then by the number of recent failed logins of their address (fewer first), then first come.
   An address that floods wrong passwords sinks behind everyone who does not.
4. **Full queue**: a newcomer whose rank is better than the worst waiting one takes its place
   (that one is answered 503 ``server_busy``); otherwise the newcomer is refused.

A call with no caller set (anonymous) ranks as an address with no failure and is bound by no
per-address or per-account limit. The gate is plain code (threads and a lock; no I/O).
"""

from __future__ import annotations

import contextvars
import itertools
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from .errors import AuthError


@dataclass(frozen=True)
class Caller:
    """Who asks for a hash or a check.

    Attributes:
        client: the client address (``""``: unknown, no per-address limit).
        account: the account the check is for, as :func:`guandan.server.auth.limiter_key` gives
            it (``""``: none, e.g. a registration).
        failures: failed logins of ``client`` over the login window (from the login limiter).
        trusted: ``client`` logged in successfully recently (it runs before everyone else).
    """

    client: str = ""
    account: str = ""
    failures: int = 0
    trusted: bool = False

    def rank(self, seq: int) -> tuple[int, int, int]:
        """Sort key of a waiting caller that arrived ``seq``-th: smaller runs first."""
        return (0 if self.trusted else 1, self.failures, seq)


_CALLER: contextvars.ContextVar[Caller] = contextvars.ContextVar("guandan_hash_caller", default=Caller())


@dataclass
class _Waiter:
    caller: Caller
    seq: int
    event: threading.Event = field(default_factory=threading.Event)
    admitted: bool = False
    evicted: bool = False


def _busy() -> AuthError:
    return AuthError(503, "the server is busy; try again in a moment", "server_busy")


class HashGate:
    """Bounds the argon2 work done at once and admits it fairly (see the module docstring).

    Args:
        concurrency: hashes at once (>= 1). queue: callers allowed to wait. wait_s: longest wait
            in seconds before a 503. per_client: checks one address may have running or waiting.
        per_account: checks of addresses with recent failures one account may have running or
            waiting.

    Use ``with gate:`` around one hash or check; :meth:`caller` says who asks. Entering raises
    :class:`~guandan.server.errors.AuthError` (503, ``server_busy``) when the caller is refused,
    pushed out of the queue, or waited ``wait_s`` seconds.
    """

    def __init__(self, concurrency: int = 2, queue: int = 16, wait_s: float = 5.0,
                 per_client: int = 4, per_account: int = 2) -> None:
        self._lock = threading.Lock()
        self._local = threading.local()
        self._seq = itertools.count()
        self.per_client = per_client
        self.per_account = per_account
        self.configure(concurrency, queue, wait_s)

    def configure(self, concurrency: int, queue: int | None = None, wait_s: float | None = None) -> None:
        """Set the limits (``create_app`` applies ``settings.hash_concurrency``); forgets who waits."""
        with self._lock:
            self.concurrency = max(1, int(concurrency))
            self.queue = max(0, int(queue if queue is not None else getattr(self, "queue", 16)))
            self.wait_s = float(wait_s if wait_s is not None else getattr(self, "wait_s", 5.0))
            self._running = 0
            self._waiting: list[_Waiter] = []
            self._per_client: dict[str, int] = {}
            self._per_account: dict[str, int] = {}

    @contextmanager
    def caller(self, caller: Caller) -> Iterator[None]:
        """Within the block, hashes and checks of this thread (and its context) are ``caller``'s."""
        token = _CALLER.set(caller)
        try:
            yield
        finally:
            _CALLER.reset(token)

    # -- bookkeeping (under self._lock) ----------------------------------------------------------
    def _suspect(self, c: Caller) -> bool:
        return bool(c.account) and not c.trusted and c.failures > 0

    def _take(self, c: Caller) -> None:
        if c.client:
            self._per_client[c.client] = self._per_client.get(c.client, 0) + 1
        if self._suspect(c):
            self._per_account[c.account] = self._per_account.get(c.account, 0) + 1

    def _give(self, c: Caller) -> None:
        for counts, key, on in ((self._per_client, c.client, bool(c.client)),
                                (self._per_account, c.account, self._suspect(c))):
            if on:
                n = counts.get(key, 0) - 1
                if n > 0:
                    counts[key] = n
                else:
                    counts.pop(key, None)

    def _wake_next(self) -> None:
        while self._running < self.concurrency and self._waiting:
            best = min(self._waiting, key=lambda w: w.caller.rank(w.seq))
            self._waiting.remove(best)
            best.admitted = True
            self._running += 1
            best.event.set()

    # -- entering and leaving --------------------------------------------------------------------
    def __enter__(self) -> HashGate:
        c = _CALLER.get()
        with self._lock:
            if c.client and self._per_client.get(c.client, 0) >= self.per_client:
                raise _busy()
            if self._suspect(c) and self._per_account.get(c.account, 0) >= self.per_account:
                raise _busy()
            if self._running < self.concurrency and not self._waiting:
                self._running += 1
                self._take(c)
                self._push(c)
                return self
            w = _Waiter(c, next(self._seq))
            if len(self._waiting) >= self.queue:
                worst = max(self._waiting, key=lambda x: x.caller.rank(x.seq)) if self._waiting else None
                if worst is None or worst.caller.rank(worst.seq)[:2] <= c.rank(w.seq)[:2]:
                    raise _busy()
                self._waiting.remove(worst)  # a worse-ranked waiter makes room
                worst.evicted = True
                self._give(worst.caller)
                worst.event.set()
            self._waiting.append(w)
            self._take(c)
        w.event.wait(self.wait_s)
        with self._lock:
            if not w.admitted:
                if not w.evicted:
                    self._waiting.remove(w)
                    self._give(c)
                raise _busy()
        self._push(c)
        return self

    def _push(self, c: Caller) -> None:
        stack = getattr(self._local, "stack", None)
        if stack is None:
            stack = self._local.stack = []
        stack.append(c)

    def __exit__(self, *exc: object) -> None:
        c = self._local.stack.pop()
        with self._lock:
            self._running = max(0, self._running - 1)
            self._give(c)
            self._wake_next()


__all__ = ["Caller", "HashGate"]
