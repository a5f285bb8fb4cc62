"""A fair share of the searching bots' process pool between tables (issue 26, item 7).

Every ``hard``/``expert`` decision of every table of a server process runs in one pool of
:data:`~guandan.server.table.bots.BOT_PROCESSES` worker processes (about a second of CPU each).
Without a gate the pool's queue is first come, first served: 30 quick games with ``hard`` bots
kept it full, and every other search table waited ~10 s per bot move. :class:`SearchGate` admits
decisions to the pool instead:

* at most ``slots`` decisions run at once (the pool's size);
* waiting decisions are admitted **least recently served table first** (a table that has not
  been admitted for the longest goes next; ties: first come);
* a table holds no more than its share of the slots, ``ceil(slots / tables running or
  waiting)``, so one table with several stale searches cannot take the pool from the others;
* a decision that waited ``max_wait_s`` seconds is refused, and so is one that meets
  ``max_waiting`` decisions already waiting -- except that a newcomer from a table served less
  recently than the table of the most recently served waiting decision takes that decision's
  place, and that decision is refused instead.

A refused decision is played by the heuristic bot (the search is an improvement on the
heuristic, so a table never stalls; :func:`guandan.server.table.bots.decide_searching`).

Plain asyncio, no I/O: one gate per event loop (the :class:`~guandan.server.manager.TableManager`
holds it). Time is the loop's clock (seconds).
"""

from __future__ import annotations

import asyncio
import itertools
import math
from dataclasses import dataclass, field

#: Default seconds a decision may wait for a slot before the heuristic plays it.
DEFAULT_MAX_WAIT_S = 1.0
#: Tables whose last service is remembered (older ones count as never served, which keeps their
#: order: they were the least recently served anyway).
_REMEMBERED = 4096


@dataclass(eq=False)
class _Waiter:
    table: str
    arrival: int
    future: asyncio.Future[bool]
    timer: asyncio.TimerHandle | None = field(default=None)


class SearchGate:
    """Admission of searching bots' decisions to the process pool, fairly between tables.

    Args:
        slots: decisions that may run at once (the pool's processes; >= 1).
        max_wait_s: seconds a decision may wait before it is refused (> 0; default 1).
        max_waiting: decisions that may wait at once (>= 0; 0: a decision that cannot run at
            once is refused).

    Attributes:
        running: table id -> decisions of that table admitted and not yet released (tables with
            none are absent).

    Raises:
        ValueError: ``slots < 1``, ``max_wait_s <= 0`` or ``max_waiting < 0``.
    """

    def __init__(self, slots: int, max_wait_s: float = DEFAULT_MAX_WAIT_S, max_waiting: int = 4) -> None:
        if int(slots) < 1 or not float(max_wait_s) > 0 or int(max_waiting) < 0:
            raise ValueError("SearchGate needs slots >= 1, max_wait_s > 0 and max_waiting >= 0")
        self.slots = int(slots)
        self.max_wait_s = float(max_wait_s)
        self.max_waiting = int(max_waiting)
        self.running: dict[str, int] = {}
        self._queue: list[_Waiter] = []
        self._served: dict[str, int] = {}
        self._clock = itertools.count(1)
        #: decisions admitted, refused (waited too long or queue full) since the gate was made
        self.admitted = 0
        self.refused = 0

    # -- public -----------------------------------------------------------------------------
    def waiting(self) -> list[str]:
        """The tables of the waiting decisions, in the order they will be admitted."""
        return [w.table for w in self._ordered()]

    async def acquire(self, table_id: str) -> bool:
        """Wait for a slot for one decision of ``table_id``.

        Returns:
            True: admitted (call :meth:`release` with the same id when the decision is done).
            False: refused -- it waited ``max_wait_s`` seconds, met a full queue, or gave its
            place to a table served less recently; nothing to release.
        Raises:
            asyncio.CancelledError: the caller was cancelled (a slot it had just been given is
            handed back).
        """
        loop = asyncio.get_running_loop()
        if self._free() and self._may_run(table_id, extra=table_id) and not self._admissible():
            self._admit(table_id)
            return True
        waiter = _Waiter(table_id, next(self._clock), loop.create_future())
        if len(self._queue) >= self.max_waiting:
            victim = self._last_in_line()
            if victim is None or not self._before(table_id, victim.table):
                self.refused += 1
                return False
            self._refuse(victim)
        self._queue.append(waiter)
        waiter.timer = loop.call_later(self.max_wait_s, self._timeout, waiter)
        self._dispatch()
        try:
            return await waiter.future
        except asyncio.CancelledError:
            if waiter.future.done() and not waiter.future.cancelled() and waiter.future.result():
                self.release(table_id)  # admitted just as the caller went away
            else:
                self._drop(waiter)
            raise

    def release(self, table_id: str) -> None:
        """One decision of ``table_id`` is done: free its slot and admit the next waiting one.

        Raises:
            KeyError: ``table_id`` holds no slot.
        """
        n = self.running[table_id] - 1
        if n:
            self.running[table_id] = n
        else:
            del self.running[table_id]
        self._dispatch()

    # -- internals --------------------------------------------------------------------------
    def _free(self) -> int:
        return self.slots - sum(self.running.values())

    def _share(self, extra: str | None = None) -> int:
        tables = set(self.running) | {w.table for w in self._queue}
        if extra is not None:
            tables.add(extra)
        return max(1, math.ceil(self.slots / max(1, len(tables))))

    def _may_run(self, table_id: str, extra: str | None = None) -> bool:
        return self.running.get(table_id, 0) < self._share(extra)

    def _key(self, w: _Waiter) -> tuple[int, int]:
        return (self._served.get(w.table, 0), w.arrival)

    def _before(self, table_a: str, table_b: str) -> bool:
        """Whether ``table_a`` was served less recently than ``table_b``."""
        return self._served.get(table_a, 0) < self._served.get(table_b, 0)

    def _ordered(self) -> list[_Waiter]:
        return sorted(self._queue, key=self._key)

    def _last_in_line(self) -> _Waiter | None:
        return max(self._queue, key=self._key) if self._queue else None

    def _admissible(self) -> bool:
        return any(self._may_run(w.table) for w in self._queue)

    def _admit(self, table_id: str) -> None:
        self.running[table_id] = self.running.get(table_id, 0) + 1
        self._served.pop(table_id, None)  # re-inserted last: the dict stays in service order
        self._served[table_id] = next(self._clock)
        self.admitted += 1
        if len(self._served) > _REMEMBERED:
            for old in list(itertools.islice(self._served, len(self._served) - _REMEMBERED)):
                if old not in self.running:
                    del self._served[old]

    def _dispatch(self) -> None:
        while self._free() > 0:
            nxt = next((w for w in self._ordered() if self._may_run(w.table)), None)
            if nxt is None:
                return
            self._drop(nxt)
            self._admit(nxt.table)
            nxt.future.set_result(True)

    def _drop(self, w: _Waiter) -> None:
        if w in self._queue:
            self._queue.remove(w)
        if w.timer is not None:
            w.timer.cancel()

    def _refuse(self, w: _Waiter) -> None:
        self._drop(w)
        self.refused += 1
        if not w.future.done():
            w.future.set_result(False)

    def _timeout(self, w: _Waiter) -> None:
        if w in self._queue:
            self._refuse(w)
            self._dispatch()  # the share of the others may have grown


__all__ = ["DEFAULT_MAX_WAIT_S", "SearchGate"]
