"""Connections in a cluster: the room seen from the process holding its sockets (:class:`ProxyTable`)
and, at the owner, one :class:`ChannelConn` per seat that publishes that seat's frames."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ..connections import Conn
from ..table.flow import Table
from ..table.frames import SharedFrame, frame_json
from ..ws import check_message_text
from .keys import SPEC

if TYPE_CHECKING:
    from .node import ClusterNode

class ChannelConn(Conn):
    """At the owner, stands for every connection of one seat (or the spectators) in the cluster:
    what the table sends it is published on the channel ``gd:out:ROOM:KEY``.

    Args:
        node: the :class:`ClusterNode`; room: the room id; key: "0".."3" or ``spec``;
        user_id: the seat's person (``None`` for spectators), so that ``Table.connected`` counts them.
    """

    def __init__(self, node: ClusterNode, room: str, key: str, user_id: int | None,
                 table: Table | None = None) -> None:
        super().__init__(user_id, None)
        self.node = node
        self.table = table
        self.room = room
        self.key = key
        self.channel = node.keys.out(room, key)

    def send(self, frame: dict[str, Any]) -> None:
        """Publish ``frame`` (after the room's pending writes are stored)."""
        if not self.closed:
            stored = getattr(self.table, "_queued", 0) if self.table is not None else 0
            self.node.publish(self.room, self.channel, frame_json(frame), stored)

    def close(self, code: int = 1000, reason: str = "") -> None:
        """Stop publishing (the connections themselves belong to their processes)."""
        self.closed = True


def raw_frame(text: str) -> SharedFrame:
    """A frame whose JSON text is already made (forwarded as received)."""
    f = SharedFrame()
    f._text = text
    return f


class ProxyTable:
    """A room as seen by the process holding some of its websockets (owner or not).

    It keeps the room's seats (to know each connection's seat), the local connections, and
    forwards: client messages to the owner, the owner's frames to the connections.

    Attributes:
        id: room id; info: the room (seats) from the database; conns: local connections.
        game: always ``None`` (the game lives at the owner only).
    """

    game = None

    def __init__(self, node: ClusterNode, info: Any) -> None:
        self.node = node
        self.info = info
        self.conns: set[Conn] = set()
        self.keys: dict[Conn, str] = {}

    @property
    def id(self) -> str:
        """The room id."""
        return str(self.info.id)

    def key_of(self, conn: Conn) -> str:
        """``"0".."3"`` for a seated person's connection, ``spec`` otherwise."""
        s = self.info.seat_of(conn.user_id)
        return SPEC if s is None else str(s)

    def counts(self) -> list[int]:
        """Local connections per seat 0-3 and spectators (five numbers)."""
        out = [0] * 5
        for k in self.keys.values():
            out[4 if k == SPEC else int(k)] += 1
        return out

    async def connect(self, conn: Conn) -> None:
        """Hold ``conn``: subscribe to its seat's channel, then tell the owner (which sends the state)."""
        self.conns.add(conn)
        key = self.key_of(conn)
        self.keys[conn] = key
        await self.node.sub_out(self.id, key)
        await self.node.presence_changed(self)

    async def disconnect(self, conn: Conn) -> None:
        """Forget ``conn`` and tell the owner (the bot may have to play for an absent person)."""
        self.conns.discard(conn)
        conn.close()
        key = self.keys.pop(conn, None)
        if key is not None:
            await self.node.unsub_out(self.id, key)
        await self.node.presence_changed(self)

    async def reseat(self, info: Any) -> None:
        """New seats (taken or left while the room waits): move connections to their new channels."""
        self.info = info
        for conn in list(self.conns):
            key = self.key_of(conn)
            old = self.keys.get(conn)
            if key != old:
                self.keys[conn] = key
                await self.node.sub_out(self.id, key)
                if old is not None:
                    await self.node.unsub_out(self.id, old)
        await self.node.presence_changed(self)

    def deliver(self, key: str, text: str) -> None:
        """A frame from the owner for channel ``key``: queue it for the local connections of that key."""
        frame = raw_frame(text)
        for conn, k in list(self.keys.items()):
            if k == key:
                conn.send(frame)

    async def handle(self, conn: Conn, text: str | bytes | None, rate_limit: int) -> dict[str, Any] | None:
        """A client message: size, rate and ``ping`` are answered here; the rest goes to the owner.

        Returns:
            The reply frame for ``conn`` (an ``error``, ``hint`` or ``hints`` frame), or ``None``
            when the answer is the state frames. ``owner_unavailable`` (retryable, with
            ``retry_ms``) when no owner received or answered the message (a failover).
        """
        checked = check_message_text(conn, text, rate_limit)
        if isinstance(checked, dict):
            return checked
        text = checked
        if '"ping"' in text:
            try:
                if json.loads(text).get("type") == "ping":
                    return {"type": "pong"}
            except (ValueError, AttributeError, RecursionError):
                pass
        return await self.node.forward(self.id, conn, text)
