"""Tables with nobody connected are closed (issue 25, item 9): ``guandan serve --idle-close SECONDS``.

A game whose people have all closed their tabs would otherwise be played on by the bots for good
and stay "in progress" in the lobby and in the players' history (a quick game left by closing the
tab never ended). The rule: **a live game whose seats have had no open connection for
``idle_close_s`` seconds in a row (default :data:`DEFAULT_IDLE_CLOSE_S`, 600 s = 10 minutes; 0 =
never) is ended unfinished** (:meth:`guandan.server.manager.TableManager.abandon`): stored with no
winner, nobody rated, shown as abandoned in the history. Spectators do not keep a table open (only
a seated person's connection counts); a person coming back before the time is up resets the count.
Tournament tables are left alone (R54's forfeit and the match clock end them).

:class:`IdleClock` decides (plain code, no I/O, clock passed in); :func:`run_idle_close` is the
loop the application runs, looking at the tables this process holds (in a cluster: the tables it
owns, with the connections of every process, so each table is watched by exactly one process).
A table is checked every ``min(idle_close_s / 4, 30)`` seconds, so it closes between
``idle_close_s`` and ``idle_close_s`` + that interval after the last person left; after a server
restart, or when a table moves to another process of a cluster, the count starts again.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping
from typing import Any

from .table.info import PLAYING

log = logging.getLogger("guandan.server.idle_close")

#: Default seconds with nobody connected after which a live table is closed (10 minutes).
DEFAULT_IDLE_CLOSE_S = 600.0
#: Longest pause between two checks (seconds).
CHECK_MAX_S = 30.0


class IdleClock:
    """Per table, since when nobody has been connected; which tables are due to close.

    Args:
        idle_close_s: seconds with nobody connected before a table closes (``0``: never).
    Raises:
        ValueError: ``idle_close_s`` negative.
    """

    def __init__(self, idle_close_s: float) -> None:
        if idle_close_s < 0:
            raise ValueError(f"idle_close_s must be 0 or more, not {idle_close_s!r}")
        self.idle_close_s = float(idle_close_s)
        #: room id -> monotonic seconds since which nobody has been connected
        self.since: dict[str, float] = {}

    @property
    def interval_s(self) -> float:
        """Seconds between two checks: ``min(idle_close_s / 4, 30)`` (at least 0.05)."""
        return max(0.05, min(self.idle_close_s / 4, CHECK_MAX_S))

    def due(self, anyone: Mapping[str, bool], now: float) -> list[str]:
        """Look at the live tables and answer those to close now.

        Args:
            anyone: room id -> whether a seated person has an open connection, for every live game
                to watch (a room missing from it is forgotten).
            now: the current time (monotonic seconds).
        Returns:
            The rooms nobody has been connected to for at least ``idle_close_s`` seconds, sorted
            (none when ``idle_close_s`` is 0). They are forgotten: a room is answered once.
        """
        for room in [r for r in self.since if r not in anyone]:
            del self.since[room]
        if self.idle_close_s <= 0:
            return []
        out = []
        for room, connected in anyone.items():
            if connected:
                self.since.pop(room, None)
                continue
            start = self.since.setdefault(room, now)
            if now - start >= self.idle_close_s:
                out.append(room)
        for room in out:
            del self.since[room]
        return sorted(out)


def watched(manager: Any) -> dict[str, bool]:
    """The live games of ``manager`` (a :class:`~guandan.server.manager.TableManager`) that may close
    when idle, each with whether a seated person is connected: playing, not over, not a tournament
    table, not a board room (the daily challenge ends with its one deal)."""
    out: dict[str, bool] = {}
    for room, table in list(manager.tables.items()):
        if table.game is None or table.game.over or table.info.status != PLAYING:
            continue
        if room in manager.competitions or table.info.board is not None:
            continue
        if manager.cluster is not None and room not in manager.cluster.owned:
            continue
        try:
            out[room] = any(table.connected())
        except RuntimeError:  # connections changed while read: look again at the next check
            continue
    return out


async def run_idle_close(manager: Any, idle_close_s: float, clock: Any = time.monotonic) -> None:
    """Close idle tables until cancelled (the application's lifespan runs it; ``idle_close_s`` 0:
    returns at once). Each closed table is logged (``room %s: nobody connected for N s; the game
    is closed``); a failure to close one is logged and the others go on."""
    idle = IdleClock(idle_close_s)
    if idle.idle_close_s <= 0:
        return
    while True:
        await asyncio.sleep(idle.interval_s)
        for room in idle.due(watched(manager), clock()):
            try:
                await manager.abandon(room)
                log.info("room %s: nobody connected for %g s; the game is closed", room, idle.idle_close_s,
                         extra={"room": room})
            except Exception as e:  # noqa: BLE001 - over meanwhile, or the table moved: next check
                log.info("room %s: not closed: %s", room, (str(e).splitlines() or [type(e).__name__])[0])


__all__ = ["CHECK_MAX_S", "DEFAULT_IDLE_CLOSE_S", "IdleClock", "run_idle_close", "watched"]
