"""One database transaction for the record appends of every table (see :class:`AppendBatcher`)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .manager import TableManager


class AppendBatcher:
    """Gathers the record appends of every table into one database transaction
    (:meth:`GameStore.append_many`), so that N tables acting at once cost one insert of N rows
    instead of N transactions (each of which held the interpreter in a worker thread, slowing
    the event loop). While one write runs the next appends queue up and go in the next.

    A failed multi-room write is repeated room by room, so that only the room at fault sees the
    error (:class:`DuplicateEventError` for a line stored twice) and the others are stored.

    Args:
        manager: the :class:`TableManager` (its ``store.games`` and ``db_executor``).
    """

    def __init__(self, manager: TableManager) -> None:
        self.manager = manager
        self._queue: list[tuple[str, int, list[str], asyncio.Future[None]]] = []
        self._task: asyncio.Task[None] | None = None
        #: transactions run (multi-room writes and one-room fallbacks)
        self.transactions = 0

    async def append(self, room_id: str, index: int, lines: list[str]) -> None:
        """Store ``lines`` at ``index``, ... of the room's record with the next batch.

        Raises:
            DuplicateEventError, sqlalchemy errors: as :meth:`GameStore.append` for this room.
        """
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._queue.append((room_id, index, lines, fut))
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._run())
        await fut

    async def _run(self) -> None:
        games = self.manager.store.games
        while self._queue:
            batch, self._queue = self._queue, []
            try:
                self.transactions += 1
                await self.manager.run_db(games.append_many, [(r, i, ls) for r, i, ls, _ in batch])
                for *_, fut in batch:
                    if not fut.done():
                        fut.set_result(None)
                continue
            except asyncio.CancelledError:
                for *_, fut in batch:
                    fut.cancel()
                raise
            except Exception as e:  # noqa: BLE001 - told to the rooms concerned
                if len(batch) == 1 or getattr(e, "lock_lost", False):  # lock lost: no room may write
                    for *_, fut in batch:
                        if not fut.done():
                            fut.set_exception(e)
                    continue
            for room_id, index, lines, fut in batch:  # one by one: only the faulty room fails
                try:
                    self.transactions += 1
                    await self.manager.run_db(games.append, room_id, index, lines)
                    if not fut.done():
                        fut.set_result(None)
                except asyncio.CancelledError:
                    raise
                except Exception as e:  # noqa: BLE001
                    if not fut.done():
                        fut.set_exception(e)
