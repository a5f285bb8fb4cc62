"""Routing in a cluster: client messages and operations to a table's owner, its frames back out.

The methods of :class:`Routing` are part of :class:`~guandan.server.cluster.node.ClusterNode` (a mixin
over its Redis clients, leases and manager). A process holding a socket sends the message to the owner
(``gd:in:R``) and waits for the answer on its reply channel; the owner runs it through the same
checks as one process (:func:`guandan.server.ws.handle_message`); every frame an owner publishes
waits until the change it shows is stored (:meth:`Routing.publish`).
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
import time
from collections import deque
from typing import TYPE_CHECKING, Any

from guandan.core.errors import IllegalAction

from ..connections import Conn
from ..errors import OWNER_UNAVAILABLE
from ..table.flow import Table
from ..table.frames import error_frame
from ..table.leaving import leave_game
from ..ws import handle_message

if TYPE_CHECKING:
    from ..manager import TableManager
    from .identity import ForwardedIdentity
    from .keys import Keys

log = logging.getLogger("guandan.server.cluster")


class Routing:
    """Messages to owners and frames from them (mixed into :class:`~guandan.server.cluster.node.ClusterNode`)."""

    manager: TableManager
    keys: Keys
    node: str
    member: str
    lease_s: float
    owned: dict[str, str]
    closing: bool
    r: Any
    _pending: dict[str, asyncio.Future[Any]]
    _outq: dict[str, deque[tuple[str, str, int]]]
    _pub_tasks: dict[str, asyncio.Task[None]]
    identity: ForwardedIdentity

    if TYPE_CHECKING:  # ClusterNode's own (ownership)
        async def take(self, room: str, keep: bool = False) -> Table | None: ...
        async def sync_presence(self, table: Table, release_idle: bool = True) -> None: ...
        async def release(self, room: str) -> None: ...
        async def _guarded(self, coro: Any) -> None: ...
        def snapshot(self, table: Table) -> str | None: ...

    async def forward(self, room: str, conn: Conn, text: str) -> dict[str, Any] | None:
        """Send a client message to ``room``'s owner and wait for its answer.

        Returns:
            The owner's reply frame (``None``: the answer is the state frames); the retryable
            ``owner_unavailable`` error when no owner listens within ``lease_s`` (the message is
            sent again every 50 ms meanwhile; nobody received it, so it cannot apply twice) or the
            owner does not answer within ``2 * lease_s``.
        """
        req = secrets.token_hex(8)
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[req] = fut
        msg = {"k": "msg", "node": self.member, "req": req, "uid": conn.user_id, "name": conn.name, "text": text}
        # signed with the person's session key: the owner believes the uid only then (identity.py)
        data = json.dumps(self.identity.sign(msg, room, getattr(conn, "session_key", None)))
        # with no owner listening, nobody received the message, so sending it again cannot apply it
        # twice: wait up to one lease for an owner (a handover takes milliseconds, a failover up to
        # the lease time) before answering owner_unavailable
        give_up = time.monotonic() + self.lease_s
        took = False
        try:
            while True:
                try:
                    receivers = await self.to_owner(room, data)
                except Exception as e:  # noqa: BLE001 - Redis unreachable or slow: the socket stays open
                    log.warning("room %s: forwarding a message failed: %s", room,
                                str(e).splitlines()[0] if str(e) else type(e).__name__,
                                extra={"room": room, "node": self.node})
                    return self._unavailable()
                if receivers:
                    break
                if self.closing or time.monotonic() >= give_up:
                    return self._unavailable()
                if not took:
                    took = True
                    asyncio.get_running_loop().create_task(self.take(room))
                await asyncio.sleep(0.05)
            try:
                reply = await asyncio.wait_for(fut, timeout=2 * self.lease_s)
            except TimeoutError:
                return self._unavailable()
            return reply.get("frame")  # type: ignore[no-any-return]
        finally:
            self._pending.pop(req, None)

    def _unavailable(self) -> dict[str, Any]:
        retry_ms = int(self.lease_s * 1000 / 2)
        return error_frame("the table is moving to another server; send the action again",
                           OWNER_UNAVAILABLE, {"retry_ms": retry_ms})

    async def call(self, room: str, op: str, *, take: bool = True, timeout_s: float | None = None,
                   **args: Any) -> Any:
        """Run ``op`` (``start``, ``changed``, ``moved``, ``abandon``, ``leave``) at ``room``'s owner.

        With no owner: ``take`` makes this process the owner and runs it here; otherwise nothing
        happens (returns ``None``).

        Raises:
            IllegalAction: the owner refused (``abandon`` of a game that is over).
            TimeoutError: no owner answered within ``timeout_s`` (default ``4 * lease_s``).
        """
        end = time.monotonic() + (timeout_s if timeout_s is not None else 4 * self.lease_s)
        while True:
            table = self.manager.tables.get(room)
            if table is not None and room in self.owned:
                return await self._local_op(table, op, args)
            req = secrets.token_hex(8)
            fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
            self._pending[req] = fut
            try:
                msg = {"k": "call", "op": op, "node": self.member, "req": req, "args": args}
                receivers = await self.to_owner(room, json.dumps(msg))
                if receivers:  # the owner has it: wait for its answer (never sent twice)
                    left = end - time.monotonic()
                    try:
                        reply = await asyncio.wait_for(fut, timeout=max(0.1, left))
                    except TimeoutError:
                        raise TimeoutError(f"room {room}: no owner answered {op!r}") from None
                    if reply.get("error"):
                        raise IllegalAction(reply["error"], reply.get("message") or reply["error"])
                    return reply.get("result")
            finally:
                self._pending.pop(req, None)
            if not take:
                return None
            taken = await self.take(room, keep=True)
            if taken is not None and room in self.owned and self.manager.tables.get(room) is taken:
                try:  # here, on the table just taken (an idle room is released afterwards)
                    return await self._local_op(taken, op, args)
                finally:
                    asyncio.get_running_loop().create_task(self._guarded(self.release(room)))
            if time.monotonic() >= end:
                raise TimeoutError(f"room {room}: no owner and the lease is held")
            await asyncio.sleep(0.05)


    async def to_owner(self, room: str, data: str) -> int:
        """Publish ``data`` on ``room``'s inbox. Returns how many processes listening to that very
        channel received it (0: no owner listens, so nobody acted on it and it may be sent again).

        ``PUBLISH`` alone counts pattern subscribers too (a ``PSUBSCRIBE *`` watching the traffic
        would pass for an owner), so the channel's own subscribers are counted in the same
        transaction (``PUBSUB NUMSUB``, then ``PUBLISH``, with no command between them).
        """
        pipe = self.r.pipeline(transaction=True)
        pipe.pubsub_numsub(self.keys.inbox(room))
        pipe.publish(self.keys.inbox(room), data)
        numsub, published = await pipe.execute()
        return min(int(numsub[0][1]) if numsub else 0, int(published))

    # -- the owner's side of messages ------------------------------------------------------------
    async def _on_inbox(self, room: str, msg: dict[str, Any]) -> None:
        table = self.manager.tables.get(room)
        if table is None or room not in self.owned:
            return
        kind = msg.get("k")
        if kind == "pres":
            await self.sync_presence(table)
        elif kind == "msg":
            uid = await self.identity.verified_uid(room, msg)  # never the uid as received
            conn = Conn(uid, msg.get("name") if uid is not None else None)
            frame = await handle_message(table, conn, msg.get("text"), rate_limit=1_000_000)
            self.publish(room, self.keys.reply(msg["node"]), json.dumps({"req": msg["req"], "frame": frame}),
                         getattr(table, "_queued", 0))
        elif kind == "call":
            reply: dict[str, Any]
            try:
                reply = {"req": msg["req"], "result": await self._local_op(table, msg["op"], msg.get("args") or {})}
            except IllegalAction as e:
                reply = {"req": msg["req"], "error": e.reason, "message": str(e)}
            except Exception as e:  # noqa: BLE001 - answer, never hang the caller
                log.exception("room %s: %s failed", room, msg.get("op"), extra={"room": room, "node": self.node})
                reply = {"req": msg["req"], "error": "internal", "message": str(e).splitlines()[0] if str(e) else "error"}
            self.publish(room, self.keys.reply(msg["node"]), json.dumps(reply), getattr(table, "_queued", 0))

    async def _local_op(self, table: Table, op: str, args: dict[str, Any]) -> Any:
        room = table.id
        if op == "start":
            info = await self.manager.run_db(self.manager.store.load, room)
            if info is None:
                raise IllegalAction("no_room", f"no room {room!r}")
            grace = float(args.get("grace_s") or 0.0)
            if grace > 0:  # a board started before its people's pages connect (manager.start_game)
                table.restored_grace_until = max(table.restored_grace_until, time.monotonic() + grace)
            await table.begin(info)
            await self.manager.writer.wait(room)
            await self._drain_publisher(room)
            return True
        if op == "changed":
            info = await self.manager.run_db(self.manager.store.load, room)
            if info is not None:
                await table.refresh(info)
                await self.sync_presence(table)
            return True
        if op == "moved":
            async with table.lock:
                table.moved(args["new"])
                table._broadcast()
            return True
        if op == "abandon":
            await table.abandon()
            await self.manager.writer.wait(room)
            await self._drain_publisher(room)
            return True
        if op == "leave":
            outcome = await leave_game(table, int(args["seat"]))
            await self.manager.writer.wait(room)
            await self._drain_publisher(room)
            return outcome
        raise IllegalAction("malformed", f"unknown operation {op!r}")

    # -- publishing ------------------------------------------------------------------------------
    def publish(self, room: str, channel: str, text: str, stored: int = 0) -> None:
        """Queue ``text`` for ``channel``; it goes out, in order, once ``room``'s record lines
        ``0 .. stored - 1`` (those queued when the change was made) are stored, and only while this
        process still owns ``room``. Each room has its own queue: a slow write of one table never
        holds back another table's frames."""
        q = self._outq.setdefault(room, deque())
        q.append((channel, text, stored))
        task = self._pub_tasks.get(room)
        if task is None or task.done():
            self._pub_tasks[room] = asyncio.get_running_loop().create_task(self._publish_room(room))

    async def _drain_publisher(self, room: str | None = None) -> None:
        """Wait (at most about 5 s) until the queued frames (of ``room``, or of every room) are out."""
        for _ in range(1000):
            tasks = [t for r, t in self._pub_tasks.items() if (room is None or r == room) and not t.done()]
            if not tasks:
                return
            await asyncio.wait(tasks, timeout=0.005)

    async def _publish_room(self, room: str) -> None:
        q = self._outq.get(room)
        try:
            while q:
                batch = list(q)
                q.clear()
                await self.manager.writer.wait_stored(room, max(n for _, _, n in batch))
                if room not in self.owned:
                    continue  # fenced: a demoted owner publishes nothing
                pipe = self.r.pipeline(transaction=False)
                for channel, text, _n in batch:
                    pipe.publish(channel, text)
                table = self.manager.tables.get(room)
                snap = self.snapshot(table) if table is not None else None
                if snap is not None:
                    pipe.set(self.keys.snapshot(room), snap, px=24 * 3600 * 1000)
                try:
                    await pipe.execute()
                except asyncio.CancelledError:
                    raise
                except Exception:  # noqa: BLE001 - Redis hiccup: the next change sends the whole state again
                    log.exception("room %s: publishing frames failed", room, extra={"room": room, "node": self.node})
                    await asyncio.sleep(0.2)
        finally:
            if not q:
                self._outq.pop(room, None)
            self._pub_tasks.pop(room, None)
