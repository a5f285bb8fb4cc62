"""Quick phrases at a live table (issue 25 item 3): the websocket's ``phrase`` message checked by the
rules of :mod:`guandan.server.table.phrases` (R55) and fanned out to the room.

``{"type": "phrase", "id": "nice_play"}`` from a seated person becomes
``{"type": "phrase", "seat": 0-3, "id": "nice_play"}`` on every connection of the room (spectators too;
the words are the browser's). Refusals are ``error`` frames with a ``reason`` the UI words in the
player's language, checked in this order: ``unknown_phrase`` (``{id, known}``), ``not_seated``,
``phrases_off`` (``{why}``: ``tournament`` / ``board`` / ``rated``), ``phrases_muted`` (``{until}``: an
admin's mute, ISO time; read from the database at most once per :data:`MUTE_CACHE_S` per person and
table, so a mute takes hold within that time) and ``phrase_too_fast`` (``{wait_s}``: whole seconds, at
least 1). Nothing is sent when refused.

The rate is counted per account per table on the process that owns the table (in a cluster the owner
handles every message of its tables), on the monotonic clock.
"""

from __future__ import annotations

import math
import time
import weakref
from datetime import UTC, datetime
from typing import Any

from .table import phrases as rules
from .table.frames import error_frame

__all__ = ["MUTE_CACHE_S", "relay_phrase"]

#: one limiter per live table (dropped with the table)
_LIMITERS: weakref.WeakKeyDictionary[Any, rules.PhraseLimiter] = weakref.WeakKeyDictionary()
#: Seconds an account's mute state read from the database is reused (bounds the reads of a muted spammer).
MUTE_CACHE_S = 5.0
#: per live table: account id -> (monotonic time read, end of the mute or None)
_MUTES: weakref.WeakKeyDictionary[Any, dict[int | None, tuple[float, datetime | None]]] = weakref.WeakKeyDictionary()


def _limiter(table: Any) -> rules.PhraseLimiter:
    lim = _LIMITERS.get(table)
    if lim is None:
        lim = _LIMITERS[table] = rules.PhraseLimiter()
    return lim


async def _muted_until(table: Any, user_id: int | None, clock: float) -> datetime | None:
    """An admin's phrase mute of the account still running now, read off the event loop and reused for
    :data:`MUTE_CACHE_S` seconds (``None``: not muted, or no database here)."""
    host = table.manager
    factory = getattr(host, "session_factory", None)
    if factory is None or not hasattr(host, "run_db"):
        return None
    cache = _MUTES.get(table)
    if cache is None:
        cache = _MUTES[table] = {}
    hit = cache.get(user_id)
    if hit is None or clock - hit[0] >= MUTE_CACHE_S:
        from .moderation_store import phrases_muted_until

        until = await host.run_db(phrases_muted_until, factory, user_id, datetime.now(UTC))
        if len(cache) > 64:  # people come and go at a table: keep it small
            cache.clear()
        hit = cache[user_id] = (clock, until)
    until = hit[1]
    return until if until is not None and until > datetime.now(UTC) else None


async def relay_phrase(table: Any, conn: Any, msg: dict[str, Any], now: float | None = None) -> dict[str, Any] | None:
    """Carry out one ``phrase`` message (module docstring).

    Args:
        table: the live :class:`~guandan.server.table.flow.Table`. conn: the sender's connection.
        msg: the parsed message. now: monotonic seconds (default ``time.monotonic()``; tests pass their own).
    Returns:
        ``None`` when the phrase went out to the room, else the ``error`` frame for the sender.
    """
    pid = msg.get("id")
    if not isinstance(pid, str) or pid not in rules.PHRASE_IDS:
        shown = pid if isinstance(pid, str) and len(pid) <= 32 else "?"
        return error_frame(f"unknown phrase {shown!r}: phrases are sent by id from the preset list", "unknown_phrase",
                           {"id": shown, "known": sorted(rules.PHRASE_IDS)})
    seat = table.seat_of(conn)
    if seat is None:
        return error_frame("only the players at the table send phrases", "not_seated")
    off = rules.table_off_reason(table.info, table.id in table.manager.competitions)
    if off is not None:
        return error_frame(f"phrases are off at this table ({off}; R55: no signalling between partners)",
                           "phrases_off", {"why": off})
    clock = time.monotonic() if now is None else now
    muted = await _muted_until(table, conn.user_id, clock)
    if muted is not None:
        until = muted.replace(microsecond=0).isoformat().replace("+00:00", "Z")
        return error_frame(f"your phrases are muted until {until}", "phrases_muted", {"until": until})
    limiter = _limiter(table)
    wait = limiter.take(conn.user_id, clock)
    if wait > 0.0:
        secs = max(1, math.ceil(wait))
        return error_frame(f"too many phrases: wait {secs} s", "phrase_too_fast", {"wait_s": secs})
    limiter.forget_before(clock)
    frame = {"type": "phrase", "seat": seat, "id": pid}
    for c in list(table.conns):
        c.send(frame)
    return None
