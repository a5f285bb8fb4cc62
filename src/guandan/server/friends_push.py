"""The friends panel pushed to open lobbies (issue 25 items 2 and "Speed and scale").

Before, every open lobby polled ``GET /api/friends`` every 20 s: for 1,000 online players 50 HTTP
requests a second, each checking a session and reading a panel in the server, which raised the
tables' latency p99 (docs/friends.md, "Presence"). Now a lobby opens one long-lived stream,
``GET /api/friends/stream`` (server-sent events), and the server sends the panel when it changes:

* **Sweeps.** Every :data:`TICK_S` the server takes the streams whose check is due, at most
  :data:`BATCH_MAX` login sessions, and reads all their panels at once
  (:func:`~guandan.server.friends_store.panels_json`: five reads however many accounts) in the
  friends' pool: a worker process by default (``--friends-processes``), so that the reads never
  hold the server's interpreter lock while the event loop plays the tables; threads with
  ``--friends-processes 0``. A stream
  is checked when it opens, then every :data:`PERIOD_S` seconds (the old poll's period), sooner
  when this process changes its account's friends (:meth:`FriendsHub.nudge`). A stream whose
  session is gone (logged out, expired, suspended) is closed.
* **Only changes leave.** A stream is sent a panel only when its JSON differs from the last one it
  was sent; an unchanged stream gets a comment line when nothing was sent for :data:`KEEPALIVE_S`
  seconds (proxies close idle connections). With 1,000 open lobbies whose friends stay online the
  server writes almost nothing: the work is one batched read of about 25 sessions every
  :data:`TICK_S` (for 1,000 streams: 0.29 ms of CPU per session, measured in-process), no
  request, no HTTP per page.
* **Presence.** A sweep marks each account seen as an authenticated request does (batched writes,
  :class:`~guandan.server.presence.PresenceBatch`), so an open lobby keeps its account online.
* **Cluster.** Each process keeps its own streams and reads the shared database; a change made
  through another process reaches a stream at its next periodic check (at most :data:`PERIOD_S`).

:class:`FriendsHub` is the bookkeeping (which stream is due, what it was sent; no I/O, no clock of
its own); :class:`FriendsPush` runs the sweeps with a ``compute`` callable given by the app and
feeds each stream's :class:`Mailbox`, which the HTTP response drains.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

log = logging.getLogger(__name__)

#: Seconds between two checks of one stream's panel (the lobby's old polling period).
PERIOD_S = 20.0
#: Seconds between two sweeps.
TICK_S = 0.5
#: Login sessions read in one sweep at most (the rest wait for the next sweeps, which spreads a crowd
#: of streams opened at once over the period and keeps every read small).
BATCH_MAX = 64
#: Seconds without a write after which an unchanged stream is sent a comment line.
KEEPALIVE_S = 45.0
#: Seconds a failed read (database error) waits before the same streams are tried again.
RETRY_S = 5.0
#: Open streams one login session may hold in one process; a newer one closes the oldest.
MAX_STREAMS_PER_SESSION = 8
#: How long the browser waits before reconnecting a dropped stream (the ``retry`` field, ms).
RECONNECT_MS = 5000

#: What a mailbox holds when its stream is to end.
CLOSE = b""
#: The comment line sent to keep an unchanged stream's connection alive.
KEEPALIVE = b": keepalive\n\n"

#: ``compute(session keys, now)`` -> ``(accounts, texts)`` as
#: :func:`~guandan.server.friends_store.panels_json` returns them; raises on a database error.
Compute = Callable[[list[str], datetime], Awaitable[tuple[dict[str, int | None], dict[int, bytes]]]]


def event(text: bytes) -> bytes:
    """One server-sent event of type ``friends`` carrying a panel's JSON (one line: compact JSON
    has no raw line break)."""
    return b"event: friends\ndata: " + text + b"\n\n"


class Mailbox:
    """What one stream has yet to send: the newest panel event only (an older unsent one is
    replaced), a keepalive, or the end. Event loop only."""

    def __init__(self) -> None:
        self._pending: list[bytes] = []
        self._ready = asyncio.Event()
        self.closed = False

    def put(self, message: bytes) -> None:
        """Queue ``message`` (an :func:`event`, :data:`KEEPALIVE` or :data:`CLOSE`); a panel
        replaces a panel not yet sent, and nothing is queued after :data:`CLOSE`."""
        if self.closed:
            return
        if message == CLOSE:
            self.closed = True
            self._pending = [CLOSE]
        elif message == KEEPALIVE:
            if not self._pending:
                self._pending.append(message)
        else:
            self._pending = [message]
        self._ready.set()

    async def get(self) -> bytes:
        """The next message to send (waits for one)."""
        while not self._pending:
            self._ready.clear()
            await self._ready.wait()
        return self._pending.pop(0)


@dataclass(eq=False)
class Stream:
    """One open lobby stream: the login session it was opened with (``key``: ``auth.token_key``
    of the token), its account, when its panel is next read (monotonic seconds; ``-inf`` until
    the first read), what it was last sent and when (monotonic seconds)."""

    key: str
    account_id: int
    mailbox: Mailbox
    seq: int
    due: float = float("-inf")
    sent: bytes | None = None
    sent_at: float = 0.0


@dataclass
class FriendsHub:
    """The open streams of one process and when each is read (module docstring). No I/O: the
    caller gives the time (monotonic seconds) and delivers what :meth:`settle` returns."""

    period_s: float = PERIOD_S
    batch_max: int = BATCH_MAX
    keepalive_s: float = KEEPALIVE_S
    streams: set[Stream] = field(default_factory=set)
    _seq: Any = field(default_factory=itertools.count)
    #: the open streams by login session and by account (what :meth:`settle` looks up)
    _by_key: dict[str, set[Stream]] = field(default_factory=dict)
    _by_account: dict[int, set[Stream]] = field(default_factory=dict)

    def _add(self, s: Stream) -> None:
        self.streams.add(s)
        self._by_key.setdefault(s.key, set()).add(s)
        self._by_account.setdefault(s.account_id, set()).add(s)

    def _drop(self, s: Stream) -> None:
        if s not in self.streams:
            return
        self.streams.discard(s)
        same_key, same_account = self._by_key[s.key], self._by_account[s.account_id]
        same_key.discard(s)
        same_account.discard(s)
        if not same_key:
            del self._by_key[s.key]
        if not same_account:
            del self._by_account[s.account_id]

    def open(self, key: str, account_id: int, now: float) -> tuple[Stream, list[Stream]]:
        """Register a stream of session ``key`` and account ``account_id``, due at once.

        Returns:
            ``(stream, evicted)``: the new stream, and the session's oldest streams beyond
            :data:`MAX_STREAMS_PER_SESSION` (taken out: the caller closes them).
        """
        stream = Stream(key, account_id, Mailbox(), next(self._seq))
        self._add(stream)
        same = sorted(self._by_key[key], key=lambda s: s.seq)
        evicted = same[:-MAX_STREAMS_PER_SESSION] if len(same) > MAX_STREAMS_PER_SESSION else []
        for s in evicted:
            self._drop(s)
        return stream, evicted

    def close(self, stream: Stream) -> None:
        """Forget ``stream`` (its response ended)."""
        self._drop(stream)

    def due(self, now: float) -> list[str]:
        """The session keys to read now: those of the streams due at ``now``, the longest overdue
        first (new streams before all others), at most :attr:`batch_max` distinct keys."""
        waiting = sorted((s for s in self.streams if s.due <= now), key=lambda s: (s.due, s.seq))
        keys: list[str] = []
        for s in waiting:
            if s.key not in keys:
                keys.append(s.key)
                if len(keys) >= self.batch_max:
                    break
        return keys

    def postpone(self, keys: list[str], until: float) -> None:
        """The read of ``keys`` failed: try their streams again at ``until`` at the earliest."""
        for key in keys:
            for s in self._by_key.get(key, ()):
                s.due = max(s.due, until)

    def settle(self, accounts: dict[str, int | None], texts: dict[int, bytes],
               now: float) -> list[tuple[Stream, bytes]]:
        """Take the result of a read (:func:`~guandan.server.friends_store.panels_json`) and say
        what each stream concerned is to be sent.

        Every stream of a key read is due again :attr:`period_s` later; so is every other stream
        of an account whose panel was read (one read serves them all).

        Returns:
            ``(stream, message)`` pairs: :data:`CLOSE` for the streams of a dead session (taken
            out), an :func:`event` for a stream whose panel changed (or that was never sent one),
            :data:`KEEPALIVE` for an unchanged one silent for :attr:`keepalive_s`.
        """
        out: list[tuple[Stream, bytes]] = []
        for key, account in accounts.items():
            if account is None:
                for s in sorted(self._by_key.get(key, ()), key=lambda s: s.seq):
                    self._drop(s)
                    out.append((s, CLOSE))
        for account_id, text in texts.items():
            for s in sorted(self._by_account.get(account_id, ()), key=lambda s: s.seq):
                s.due = now + self.period_s
                if text != s.sent:
                    s.sent, s.sent_at = text, now
                    out.append((s, event(text)))
                elif now - s.sent_at >= self.keepalive_s:
                    s.sent_at = now
                    out.append((s, KEEPALIVE))
        return out

    def nudge(self, account_ids: set[int], now: float) -> int:
        """Read the panels of ``account_ids`` at the next sweep (their friends changed here).

        Returns:
            How many streams were moved forward.
        """
        n = 0
        for account_id in account_ids:
            for s in self._by_account.get(account_id, ()):
                if s.due > now:
                    s.due = now
                    n += 1
        return n

    def revoke(self, key: str) -> list[Stream]:
        """Take out every stream of the login session ``key`` (logout) and return them (to close)."""
        gone = sorted(self._by_key.get(key, ()), key=lambda s: s.seq)
        for s in gone:
            self._drop(s)
        return gone


class FriendsPush:
    """Runs the sweeps of a :class:`FriendsHub` and serves its streams (module docstring).

    Args:
        compute: reads the panels of a batch of sessions (:data:`Compute`), off the event loop.
        hub: the bookkeeping (default: a new :class:`FriendsHub`).
        tick_s: seconds between sweeps.
        clock: monotonic seconds (tests give their own).
    """

    def __init__(self, compute: Compute, hub: FriendsHub | None = None, tick_s: float = TICK_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.compute = compute
        self.hub = hub if hub is not None else FriendsHub()
        self.tick_s = tick_s
        self.clock = clock
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        #: set by :meth:`close_all`: the server is stopping, a stream opened now ends at once
        self.closing = False

    def start(self) -> None:
        """Start the sweeps (on the running event loop)."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run())

    async def stop(self) -> None:
        """Stop the sweeps and end every open stream (the server shuts down)."""
        self.close_all()
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except (asyncio.CancelledError, Exception):  # noqa: BLE001 - the shutdown goes on
                pass
            self._task = None

    def close_all(self) -> int:
        """End every open stream now (their responses complete; the browsers reconnect later), and
        every stream opened after it at once (the server is stopping).

        Returns:
            How many were ended.
        """
        self.closing = True
        streams = list(self.hub.streams)
        for s in streams:
            self.hub.close(s)
            s.mailbox.put(CLOSE)
        return len(streams)

    def nudge(self, account_ids: set[int]) -> None:
        """Read the panels of ``account_ids`` at the next sweep (a friend action of this process)."""
        if self.hub.nudge(account_ids, self.clock()):
            self._wake.set()

    def revoke(self, key: str) -> int:
        """End the streams of the login session ``key`` (logout); returns how many."""
        gone = self.hub.revoke(key)
        for s in gone:
            s.mailbox.put(CLOSE)
        return len(gone)

    async def sweep(self) -> int:
        """One sweep: read the due sessions' panels and deliver what changed.

        Returns:
            How many sessions were read (0 when none was due or the read failed; a failed read
            is logged and its streams are tried again :data:`RETRY_S` later).
        """
        keys = self.hub.due(self.clock())
        if not keys:
            return 0
        from guandan.server.models import utcnow

        try:
            accounts, texts = await self.compute(keys, utcnow())
        except asyncio.CancelledError:
            raise
        except Exception:  # noqa: BLE001 - a database outage must not end the sweeps
            log.warning("friends stream: reading %d panels failed; tried again later", len(keys), exc_info=True)
            self.hub.postpone(keys, self.clock() + RETRY_S)
            return 0
        for stream, message in self.hub.settle(accounts, texts, self.clock()):
            stream.mailbox.put(message)
        return len(keys)

    async def _run(self) -> None:
        while True:
            try:
                await asyncio.wait_for(self._wake.wait(), self.tick_s)
            except TimeoutError:
                pass
            self._wake.clear()
            await self.sweep()

    async def events(self, key: str, account_id: int) -> AsyncIterator[bytes]:
        """The body of one stream response: a ``retry`` field, then the messages the sweeps put in
        its mailbox, until it is closed (logout, a dead session, shutdown) or the client leaves
        (the response is cancelled: the stream is forgotten)."""
        if self.closing:
            return
        stream, evicted = self.hub.open(key, account_id, self.clock())
        for s in evicted:
            s.mailbox.put(CLOSE)
        self._wake.set()  # the first panel at the next sweep, not a tick later
        try:
            yield f"retry: {RECONNECT_MS}\n\n".encode()
            while True:
                message = await stream.mailbox.get()
                if message == CLOSE:
                    return
                yield message
        finally:
            self.hub.close(stream)


__all__ = ["BATCH_MAX", "CLOSE", "KEEPALIVE", "KEEPALIVE_S", "MAX_STREAMS_PER_SESSION", "PERIOD_S", "RECONNECT_MS",
           "RETRY_S", "TICK_S", "Compute", "FriendsHub", "FriendsPush", "Mailbox", "Stream", "event"]
