"""The last tournament state this process wrote, kept parsed (issue 21, "Speed and scale").

An online round enters each table's result into the tournament's JSON state: read the row, parse the
state, enter the result, write it back over the version read (:meth:`OnlineRounds._enter_decided`).
For a 200-table round (400 pairs) the state is about 0.4 MB, and parsing and checking it took 15 ms of
the interpreter lock per result, in the database worker threads the tables' event loop shares the lock
with. Near the end of a round, when most tables finish within a minute, up to four threads also
entered results of the same tournament at once, so all but one lost the version race and parsed it
again (up to 20 times).

:class:`ParsedStates` removes both costs without trusting anything it cannot check:

* :meth:`ParsedStates.entering` serialises the result entries of one tournament in this process (the
  database's version check still guards against other processes and the organiser);
* :meth:`ParsedStates.take` hands back the :class:`~guandan.tournament.model.Tournament` this process
  wrote as ``version``, and only for that exact version: any other writer (the organiser, another
  process of a cluster) bumps the row's version, and the state is then parsed from the row again;
* the object is *taken* (removed), so an entry that fails half-way (an engine error after a change, a
  lost version race, an exception) can never leave a changed object behind: only :meth:`keep` after a
  successful write puts one back.

Plain code with no I/O (threads and locks only); at most :data:`KEEP` tournaments are kept.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager

from guandan.tournament.model import Tournament

#: Tournaments kept parsed at once (the ones that entered a result most recently).
KEEP = 8


class ParsedStates:
    """Parsed tournament states by tournament id, each valid for one row version (module docstring)."""

    def __init__(self, keep: int = KEEP) -> None:
        if keep < 1:
            raise ValueError(f"keep must be at least 1, not {keep}")
        self._keep = keep
        self._states: OrderedDict[int, tuple[int, Tournament]] = OrderedDict()
        self._locks: dict[int, threading.Lock] = {}
        self._guard = threading.Lock()
        #: states handed back by :meth:`take` / parsed again (for the benchmark and tests)
        self.hits = 0
        self.misses = 0

    @contextmanager
    def entering(self, tournament_id: int) -> Iterator[None]:
        """Hold the lock of ``tournament_id`` for this process (one result entry at a time)."""
        with self._guard:
            lock = self._locks.setdefault(tournament_id, threading.Lock())
        with lock:
            yield

    def take(self, tournament_id: int, version: int) -> Tournament | None:
        """The state of ``tournament_id`` at row version ``version`` if this process kept exactly that
        one, removed from the keeping (the caller owns it now); else None (parse the row)."""
        with self._guard:
            got = self._states.pop(tournament_id, None)
        if got is not None and got[0] == version:
            self.hits += 1
            return got[1]
        self.misses += 1
        return None

    def keep(self, tournament_id: int, version: int, t: Tournament) -> None:
        """Keep ``t`` as the state of ``tournament_id`` at row version ``version`` (call only once that
        version is committed, and do not change ``t`` afterwards)."""
        with self._guard:
            self._states.pop(tournament_id, None)
            self._states[tournament_id] = (version, t)
            while len(self._states) > self._keep:
                self._states.popitem(last=False)


__all__ = ["KEEP", "ParsedStates"]
