"""Presence refreshes gathered in memory and written together (issue 25 "Speed and scale").

An authenticated request or a table socket marks its account *seen* (docs/friends.md). Before, each
due mark was one ``UPDATE users`` and one commit in the request's own thread: about 33 small write
transactions a second for 1,000 online players, each taking SQLite's single write lock beside the
tables' record writer. Now a refresh of an account that is online anyway
(:func:`~guandan.server.friends.touch_at_once` is false) is only noted here, and one transaction
every :data:`~guandan.server.friends.PRESENCE_FLUSH_S` seconds writes all of them
(:func:`guandan.server.friends_store.write_seen`). An account that shows offline is still written
at once, so a friend sees it come online at the next poll.

Cluster mode: every process has its own :class:`PresenceBatch` and writes to the shared database;
the write only moves ``last_seen_at`` forward (``WHERE last_seen_at < :t``), so two processes
noting one account never move it back. The batch reaches the database through one callable
(``write``), which the application binds to its session factory and database thread pool.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Awaitable, Callable
from datetime import datetime

log = logging.getLogger(__name__)

#: ``write(pending)``: stores ``{account id: seen at (aware UTC)}``; raises on a database error.
SeenWriter = Callable[[dict[int, datetime]], Awaitable[object]]


class PresenceBatch:
    """Accounts seen since the last write, with the latest time each was seen.

    Thread-safe: request threads call :meth:`note`, the event loop's task calls :meth:`take`.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pending: dict[int, datetime] = {}

    def note(self, user_id: int, seen_at: datetime) -> None:
        """Remember that account ``user_id`` was seen at ``seen_at`` (aware UTC); a later time
        replaces an earlier one, an earlier one is ignored."""
        with self._lock:
            old = self._pending.get(user_id)
            if old is None or seen_at > old:
                self._pending[user_id] = seen_at

    def take(self) -> dict[int, datetime]:
        """Everything noted since the last call (``{account id: seen at}``), and forget it."""
        with self._lock:
            pending, self._pending = self._pending, {}
        return pending

    def __len__(self) -> int:
        with self._lock:
            return len(self._pending)

    async def flush(self, write: SeenWriter) -> int:
        """Write what is pending with ``write`` (nothing when nothing is).

        Returns:
            How many accounts were handed to ``write``.
        Raises:
            Whatever ``write`` raises; the accounts are then noted again (kept for the next flush,
            a newer note winning).
        """
        pending = self.take()
        if not pending:
            return 0
        try:
            await write(pending)
        except BaseException:
            for uid, t in pending.items():
                self.note(uid, t)
            raise
        return len(pending)

    async def run(self, write: SeenWriter, every_s: float) -> None:
        """Flush every ``every_s`` seconds until cancelled; a failed write is logged and retried at
        the next period (presence is best effort: nothing else waits for it)."""
        while True:
            await asyncio.sleep(every_s)
            try:
                await self.flush(write)
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - a database outage must not end the loop
                log.warning("presence: writing %d accounts seen failed; retried later", len(self), exc_info=True)


__all__ = ["PresenceBatch", "SeenWriter"]
