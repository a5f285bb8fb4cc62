"""Ownership leases of rooms (one owner per live table) and the fencing of the owner's writes."""

from __future__ import annotations

import secrets
from collections.abc import Callable, Sequence
from typing import Any

from .keys import RELEASE_LUA, RENEW_LUA, Keys

class Leases:
    """Ownership leases of rooms in Redis (synchronous client; also used by the race test).

    Args:
        client: a ``redis.Redis`` client.
        node: this process's name (part of every token).
        lease_ms: lease time in milliseconds.
        keys: key names.
    """

    def __init__(self, client: Any, node: str, lease_ms: int, keys: Keys | None = None) -> None:
        self.client = client
        self.node = node
        self.lease_ms = int(lease_ms)
        self.keys = keys or Keys()
        self._renew = client.register_script(RENEW_LUA)
        self._release = client.register_script(RELEASE_LUA)

    def new_token(self) -> str:
        """A token unique to this process and acquisition (``node:random``)."""
        return f"{self.node}:{secrets.token_hex(8)}"

    def acquire(self, room: str) -> str | None:
        """Take ``room``'s lease if nobody holds it. Returns the token, or ``None`` (held)."""
        token = self.new_token()
        ok = self.client.set(self.keys.lease(room), token, nx=True, px=self.lease_ms)
        return token if ok else None

    def renew(self, room: str, token: str) -> bool:
        """Extend the lease by ``lease_ms``; False when it is no longer ``token``'s."""
        return bool(self._renew(keys=[self.keys.lease(room)], args=[token, self.lease_ms]))

    def release(self, room: str, token: str) -> bool:
        """Give the lease up; False when it was no longer ``token``'s."""
        return bool(self._release(keys=[self.keys.lease(room)], args=[token]))

    def holder(self, room: str) -> str | None:
        """The token holding ``room``'s lease, or ``None``."""
        v = self.client.get(self.keys.lease(room))
        return v.decode() if isinstance(v, bytes) else v


class LeaseLost(RuntimeError):
    """The owner no longer holds the room's lease: it must not write or publish (fencing)."""

    #: the record writer drops a fenced write instead of retrying it
    fenced = True


def make_store_fenced(store: Any, check: Callable[[str], None],
                      check_many: Callable[[Sequence[str]], None] | None = None) -> Any:
    """Wrap every write of ``store`` (a :class:`~guandan.server.roomstore.RoomStore`: ``save``,
    ``finish``, and its ``games`` rows' ``start``, ``append`` and ``append_many``) with the lease
    check ``check(room)``: a process that lost a room's lease raises :class:`LeaseLost` instead of
    writing (fencing). The ``game_events`` key (room, index) refuses a line written twice, so even a
    write that passed the check just before the lease expired cannot store an action twice.

    ``append_many`` (the batched appends of :class:`~guandan.server.append_batcher.AppendBatcher`,
    several rooms in one transaction) checks every room of the batch first, with ``check_many``
    (one round trip for all of them) when given, else ``check`` per room: one room whose lease is
    lost refuses the whole batch (nothing is written), and the batcher then writes the rooms one by
    one, so that only that room's lines are refused (issue 26 item 12).

    Args:
        store: the room store (changed in place and returned).
        check: raises :class:`LeaseLost` when this process does not own the room.
        check_many: the same for several rooms at once (optional).
    Returns:
        ``store``.
    """

    def fence(obj: Any, name: str, room_of: Callable[[Any], str]) -> None:
        inner = getattr(obj, name, None)
        if inner is None:
            return

        def fenced(first: Any, *args: Any, **kw: Any) -> Any:
            check(room_of(first))
            return inner(first, *args, **kw)

        fenced.__doc__ = inner.__doc__
        setattr(obj, name, fenced)

    fence(store, "save", str)
    fence(store, "finish", lambda info: str(info.id))
    games = getattr(store, "games", None)
    if games is not None:
        fence(games, "start", str)
        fence(games, "append", str)
        inner_many = getattr(games, "append_many", None)
        if inner_many is not None:
            def append_many(items: Sequence[tuple[str, int, Sequence[str]]]) -> Any:
                rooms = list(dict.fromkeys(str(item[0]) for item in items))
                if check_many is not None:
                    check_many(rooms)
                else:
                    for room in rooms:
                        check(room)
                return inner_many(items)

            append_many.__doc__ = inner_many.__doc__
            games.append_many = append_many
    return store
