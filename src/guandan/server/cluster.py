"""Cluster mode: several ``guandan serve`` processes on one PostgreSQL database and one Redis.

``guandan serve --db postgresql+psycopg://... --redis redis://...`` runs any number of processes
behind one address (no sticky sessions). What must last is in PostgreSQL (rooms, records, accounts,
history, ratings); Redis carries who owns which table and the messages between processes.

Ownership (one owner per live table):
    The owner of room ``R`` holds the lease ``gd:lease:R`` (``SET NX PX``, value a token unique to
    this process and acquisition). It renews every lease three times per ``lease_s`` with a Lua
    compare-and-set on its token, and re-checks the lease before every write to the database
    (fencing: a stalled owner that lost its lease writes nothing and publishes nothing). Only the
    owner holds the :class:`~guandan.server.tables.Table` with the authoritative game, its bots and
    its clocks; nothing runs twice.

Connections (any process):
    Every websocket, also on the owner's process, is held by a :class:`ProxyTable` of the process it
    reached. The process records how many connections it holds per seat and for spectators in the
    hash ``gd:pres:R`` and tells the owner (``gd:in:R``). Client messages go to the owner through
    ``gd:in:R`` (pub/sub); the owner runs them through the same checks as one process
    (:func:`guandan.server.ws.handle_message`) and answers the sending process on ``gd:reply:NODE``.
    The owner publishes each seat's own frames on ``gd:out:R:<seat>`` and the spectators' frames on
    ``gd:out:R:spec``; a process subscribes only to the channels of seats (and spectators) it holds
    a connection for, so it never receives another seat's hidden cards. Frames and answers are
    published only once the change they show is stored (the owner waits for its record writer).

Failover:
    When an owner dies or stalls its leases expire. Every process sweeps the playing rooms every
    ``lease_s / 3`` seconds and takes a room whose lease is free (``SET NX``: exactly one wins),
    rebuilding the game from the database, and the move clocks, 托管 flags and the pause between
    deals from the snapshot ``gd:snap:R`` the owner keeps next to its frames. A person's message
    that no owner receives, or that the owner does not answer within ``2 * lease_s``, is answered
    with the retryable error ``owner_unavailable`` (docs/table-contract.md section 14); an action is
    applied at most once (the owner answers only after storing it). A graceful shutdown (SIGTERM)
    finishes the action in progress, stores it, releases the leases and announces the free rooms
    (``gd:ctl``), so another process takes them at once.

redis-py (``pip install -e '.[cluster]' in the pyguandan checkout``) is imported only in cluster mode.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import secrets
import time
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from guandan.core.errors import IllegalAction

from .errors import OWNER_UNAVAILABLE
from .tables import PLAYING, Conn, SharedFrame, Table, error_frame, frame_json

if TYPE_CHECKING:
    from .tables import TableManager

log = logging.getLogger("guandan.server.cluster")

#: Channel key of the spectators' frames (seats use "0".."3").
SPEC = "spec"

#: Renew the lease only while it is still ours (KEYS[1] lease key, ARGV[1] token, ARGV[2] ms).
RENEW_LUA = """
if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('pexpire', KEYS[1], ARGV[2])
end
return 0
"""
#: Delete the lease only while it is still ours (KEYS[1] lease key, ARGV[1] token).
RELEASE_LUA = """
if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('del', KEYS[1])
end
return 0
"""


def import_redis() -> Any:
    """The ``redis`` package (redis-py).

    Raises:
        RuntimeError: redis-py is not installed (one line telling how to install it).
    """
    try:
        import redis
    except ImportError:
        raise RuntimeError("cluster mode needs redis-py: pip install -e '.[cluster]' in the pyguandan checkout") from None
    return redis


class Keys:
    """Redis key and channel names of one cluster (``prefix`` separates clusters on one Redis)."""

    def __init__(self, prefix: str = "gd:") -> None:
        self.p = prefix

    def lease(self, room: str) -> str:
        """The ownership lease of ``room`` (value: the owner's token)."""
        return f"{self.p}lease:{room}"

    def inbox(self, room: str) -> str:
        """Channel of the messages to ``room``'s owner."""
        return f"{self.p}in:{room}"

    def out(self, room: str, key: str) -> str:
        """Channel of ``room``'s frames for seat ``key`` ("0".."3") or spectators (``spec``)."""
        return f"{self.p}out:{room}:{key}"

    def presence(self, room: str) -> str:
        """Hash ``member -> [n0, n1, n2, n3, n_spec]``: connections each process (``member``: its name
        and a token of this run, :attr:`ClusterNode.member`) holds for ``room``."""
        return f"{self.p}pres:{room}"

    def snapshot(self, room: str) -> str:
        """The owner's last table snapshot of ``room`` (clocks, 托管, pause) for a takeover."""
        return f"{self.p}snap:{room}"

    def alive(self, member: str) -> str:
        """Key that exists while the process run ``member`` (:attr:`ClusterNode.member`) lives (its
        presence counts are believed only then)."""
        return f"{self.p}alive:{member}"

    def reply(self, node: str) -> str:
        """Channel of the owners' answers to the process run ``node`` (:attr:`ClusterNode.member`)."""
        return f"{self.p}reply:{node}"

    def next_room(self, room: str) -> str:
        """The room "play again" made of ``room``."""
        return f"{self.p}next:{room}"

    @property
    def ctl(self) -> str:
        """Channel every process listens to (rooms changed or freed, sessions revoked)."""
        return f"{self.p}ctl"


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
        from .ws import check_message_text

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


class ClusterNode:
    """This process's part of the cluster: leases, pub/sub, forwarding and failover.

    Args:
        manager: the process's :class:`~guandan.server.tables.TableManager` (owned tables live in
            ``manager.tables``).
        url: Redis URL. node_name: this process's name. lease_s: lease time (seconds).
        prefix: key prefix (separates clusters sharing a Redis database).
    Raises:
        RuntimeError: redis-py is missing.
    """

    def __init__(self, manager: TableManager, url: str, node_name: str, lease_s: float = 3.0,
                 prefix: str = "gd:") -> None:
        redis = import_redis()
        self.manager = manager
        self.url = url
        self.node = node_name
        #: this run of the process (name and a random token): its presence counts, ``alive`` key
        #: and reply channel. A process restarted under the same name (or a second process given
        #: the same name) is another member, so the counts of a dead run are never believed again.
        self.member = f"{node_name}:{secrets.token_hex(4)}"
        self.lease_s = float(lease_s)
        self.lease_ms = max(100, int(self.lease_s * 1000))
        self.keys = Keys(prefix)
        self.sync = redis.Redis.from_url(url, socket_timeout=5, socket_connect_timeout=5)
        self.leases = Leases(self.sync, node_name, self.lease_ms, self.keys)
        self.r: Any = None
        self.pubsub: Any = None
        #: room -> lease token of the tables this process owns
        self.owned: dict[str, str] = {}
        #: owned room -> the other members whose connections it counted at its last presence sync
        #: (the renewal loop syncs again when one of them dies, so its sockets stop counting)
        self._pres_members: dict[str, set[str]] = {}
        self.proxies: dict[str, ProxyTable] = {}
        self._out_refs: dict[str, int] = {}
        self._pending: dict[str, asyncio.Future[Any]] = {}
        #: per room, frames waiting for their record lines to be stored, and the task sending them
        self._outq: dict[str, deque[tuple[str, str, int]]] = {}
        self._pub_tasks: dict[str, asyncio.Task[None]] = {}
        self._tasks: list[asyncio.Task[Any]] = []
        self._take_locks: dict[str, asyncio.Lock] = {}
        self._proxy_locks: dict[str, asyncio.Lock] = {}
        self._sub_lock = asyncio.Lock()
        self.closing = False
        #: takeovers done by this process (monitoring and tests)
        self.takeovers = 0

    # -- life cycle ------------------------------------------------------------------------------
    async def start(self) -> None:
        """Connect, listen, and start the lease renewal, sweeper and publisher tasks.

        Raises:
            redis.exceptions.ConnectionError: Redis cannot be reached.
        """
        redis = import_redis()
        # a bounded pool that waits for a free connection (a burst of tables must not fail with
        # "Too many connections"; the pub/sub listener holds one of them)
        pool = redis.asyncio.BlockingConnectionPool.from_url(self.url, max_connections=256, timeout=20,
                                                             socket_connect_timeout=5)
        self.r = redis.asyncio.Redis(connection_pool=pool)
        await self.r.ping()
        self._renew_script = self.r.register_script(RENEW_LUA)
        self._release_script = self.r.register_script(RELEASE_LUA)
        self.pubsub = self.r.pubsub()
        await self.pubsub.subscribe(self.keys.reply(self.member), self.keys.ctl)
        await self.r.set(self.keys.alive(self.member), "1", px=self.lease_ms * 3)
        loop = asyncio.get_running_loop()
        self._tasks = [loop.create_task(self._listen(), name="cluster-listen"),
                       loop.create_task(self._renew_loop(), name="cluster-renew"),
                       loop.create_task(self._sweep_loop(), name="cluster-sweep")]
        log.info("node %s joined the cluster at %s (lease %.1f s)", self.node, _shown(self.url), self.lease_s,
                 extra={"node": self.node})

    async def stop(self) -> None:
        """Graceful shutdown: finish each owned table's action in progress, store it, release the
        lease and announce the room as free so that another process takes it at once."""
        self.closing = True
        rooms = list(self.owned)
        if rooms:
            # no new message reaches these tables: a sender gets the retryable owner_unavailable
            # (never an action applied after the handover); messages already here finish first
            try:
                await self.pubsub.unsubscribe(*[self.keys.inbox(r) for r in rooms])
            except Exception:  # noqa: BLE001, S110 - Redis gone: nothing arrives anyway
                pass
        for room in rooms:
            table = self.manager.tables.get(room)
            if table is not None:
                async with table.lock:  # after the action in progress
                    table._closed = True
                    table._cancel()
                await self.manager.writer.wait(room)
        await self._drain_publisher()
        for room in rooms:
            token = self.owned.pop(room, None)
            self.manager.tables.pop(room, None)
            if token is not None:
                try:
                    await self._release_script(keys=[self.keys.lease(room)], args=[token])
                    await self.r.publish(self.keys.ctl, json.dumps({"k": "free", "room": room}))
                except Exception:  # noqa: BLE001 - Redis gone: the lease expires by itself
                    log.warning("room %s: releasing the lease failed", room, extra={"room": room, "node": self.node})
        if rooms:
            log.info("node %s handed over %d tables", self.node, len(rooms), extra={"node": self.node})
        for t in self._tasks:
            t.cancel()
        for t in self._tasks:
            try:
                await t
            except (asyncio.CancelledError, Exception):  # noqa: BLE001, S110
                pass
        try:
            await self.r.delete(self.keys.alive(self.member))
            await self.pubsub.aclose()
            await self.r.aclose()
        except Exception:  # noqa: BLE001, S110 - Redis gone
            pass
        self.sync.close()

    def ready(self) -> bool:
        """Whether Redis answers (``/readyz``; blocking, run it in a thread)."""
        try:
            return bool(self.sync.ping())
        except Exception:  # noqa: BLE001
            return False

    # -- subscriptions ---------------------------------------------------------------------------
    async def sub_out(self, room: str, key: str) -> None:
        """Count one more local connection on the frames channel ``room``/``key`` (subscribe at 1)."""
        ch = self.keys.out(room, key)
        async with self._sub_lock:
            n = self._out_refs.get(ch, 0)
            self._out_refs[ch] = n + 1
            if n == 0:
                await self.pubsub.subscribe(ch)

    async def unsub_out(self, room: str, key: str) -> None:
        """One local connection less on ``room``/``key`` (unsubscribe at 0)."""
        ch = self.keys.out(room, key)
        async with self._sub_lock:
            n = self._out_refs.get(ch, 0) - 1
            if n <= 0:
                self._out_refs.pop(ch, None)
                await self.pubsub.unsubscribe(ch)
            else:
                self._out_refs[ch] = n

    # -- connections (any process) ---------------------------------------------------------------
    async def open(self, room_id: str) -> ProxyTable | None:
        """The :class:`ProxyTable` of ``room_id`` for a new local connection (``None``: no such room)."""
        proxy = self.proxies.get(room_id)
        if proxy is not None:
            return proxy
        lock = self._proxy_locks.setdefault(room_id, asyncio.Lock())
        async with lock:
            proxy = self.proxies.get(room_id)
            if proxy is None:
                info = await self.manager.run_db(self.manager.store.load, room_id)
                if info is None:
                    return None
                proxy = self.proxies[room_id] = ProxyTable(self, info)
        return proxy

    def forget_if_idle(self, room_id: str) -> None:
        """Drop the proxy of ``room_id`` once it holds no connection."""
        p = self.proxies.get(room_id)
        if p is not None and not p.conns:
            self.proxies.pop(room_id, None)
            self._proxy_locks.pop(room_id, None)

    async def presence_changed(self, proxy: ProxyTable) -> None:
        """Store this process's connection counts of the room and tell its owner; with no owner
        listening, try to become it (a room with connections always has an owner)."""
        counts = proxy.counts()
        key = self.keys.presence(proxy.id)
        pipe = self.r.pipeline(transaction=False)
        if any(counts):
            pipe.hset(key, self.member, json.dumps(counts))
            pipe.pexpire(key, 24 * 3600 * 1000)
        else:
            pipe.hdel(key, self.member)
        pipe.publish(self.keys.inbox(proxy.id), json.dumps({"k": "pres"}))
        *_, receivers = await pipe.execute()
        if not receivers and any(counts) and not self.closing:
            asyncio.get_running_loop().create_task(self.take(proxy.id))

    def connected(self, room_id: str) -> list[bool]:
        """Per seat: whether the seated person has a connection on some live process (blocking)."""
        out = [False] * 4
        try:
            raw = self.sync.hgetall(self.keys.presence(room_id))
            if not raw:
                return out
            nodes = [n.decode() if isinstance(n, bytes) else n for n in raw]
            alive = self.sync.mget([self.keys.alive(n) for n in nodes])
            for n, a in zip(nodes, alive, strict=True):
                if a is None:
                    continue
                counts = json.loads(raw[n.encode()] if n.encode() in raw else raw[n])
                for s in range(4):
                    out[s] = out[s] or counts[s] > 0
        except Exception:  # noqa: BLE001 - only a flag of the lobby
            log.warning("room %s: reading presence failed", room_id, extra={"room": room_id})
        return out

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
        data = json.dumps(msg)
        # with no owner listening, nobody received the message, so sending it again cannot apply it
        # twice: wait up to one lease for an owner (a handover takes milliseconds, a failover up to
        # the lease time) before answering owner_unavailable
        give_up = time.monotonic() + self.lease_s
        took = False
        try:
            while True:
                try:
                    receivers = await self.r.publish(self.keys.inbox(room), data)
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
        """Run ``op`` (``start``, ``changed``, ``moved``, ``abandon``) at ``room``'s owner.

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
                receivers = await self.r.publish(self.keys.inbox(room), json.dumps(msg))
                if receivers:
                    left = end - time.monotonic()
                    try:
                        reply = await asyncio.wait_for(fut, timeout=max(0.1, left))
                    except TimeoutError:
                        if time.monotonic() >= end:
                            raise TimeoutError(f"room {room}: no owner answered {op!r}") from None
                        continue
                    if reply.get("error"):
                        raise IllegalAction(reply["error"], reply.get("message") or reply["error"])
                    return reply.get("result")
            finally:
                self._pending.pop(req, None)
            if not take:
                return None
            if await self.take(room) is None:
                if time.monotonic() >= end:
                    raise TimeoutError(f"room {room}: no owner and the lease is held")
                await asyncio.sleep(0.05)

    # -- ownership -------------------------------------------------------------------------------
    async def take(self, room: str) -> Table | None:
        """Become ``room``'s owner if its lease is free: load the room from the database, replay
        its record, restore clocks and 托管 from the snapshot, and serve the connections.

        Returns:
            The owned table, or ``None`` (another process owns it, or no such room).
        """
        if self.closing:
            return None
        lock = self._take_locks.setdefault(room, asyncio.Lock())
        async with lock:
            table = self.manager.tables.get(room)
            if table is not None and room in self.owned:
                return table
            token = self.leases.new_token()
            ok = await self.r.set(self.keys.lease(room), token, nx=True, px=self.lease_ms)
            if not ok:
                return None
            self.owned[room] = token
            t0 = time.monotonic()
            try:
                table = await self.manager.load_table(room, schedule=False)
            except Exception:
                log.exception("room %s: taking the table failed", room, extra={"room": room, "node": self.node})
                table = None
            if table is None:
                self.owned.pop(room, None)
                await self._release_script(keys=[self.keys.lease(room)], args=[token])
                return None
            self.manager.tables[room] = table
            if table.game is not None and not table.game.over:
                table._store_new_lines()  # lines not stored yet (a first deal dealt again) go first
                await self._restore_snapshot(table)
            await self.pubsub.subscribe(self.keys.inbox(room))
            self.takeovers += 1
            log.info("room %s: owned by %s (status %s, %d events, %.0f ms)", room, self.node, table.info.status,
                     0 if table.game is None else len(table.game.events), (time.monotonic() - t0) * 1000,
                     extra={"room": room, "node": self.node})
            await self.sync_presence(table)
            return table

    async def _restore_snapshot(self, table: Table) -> None:
        """Clocks, 托管 and the pause between deals as the previous owner last published them, when
        the snapshot matches the stored game (same number of events)."""
        raw = await self.r.get(self.keys.snapshot(table.id))
        table.restored_grace_until = time.monotonic() + self.manager.restart_grace_s
        if raw is None or table.game is None:
            return
        try:
            snap = json.loads(raw)
            if snap.get("events") != len(table.game.events):
                return
            table.auto = [bool(x) for x in snap["auto"]]
            table.auto_reason = list(snap["auto_reason"])
            table.timeouts = [int(x) for x in snap["timeouts"]]
            if snap.get("deadline") is not None:
                seat, when = snap["deadline"]
                table.resume_deadline = (int(seat), float(when))
            b = snap.get("between")
            if b is None:
                table.between = None  # the pause had ended (the record alone cannot tell)
            elif table.between is not None and table.between["deal"] == b["deal"]:
                table.between["pressed"] = [bool(x) for x in b["pressed"]]
                table.between["deadline"] = float(b["deadline"])
        except (ValueError, KeyError, TypeError):
            log.warning("room %s: ignoring a malformed snapshot", table.id, extra={"room": table.id})

    def snapshot(self, table: Table) -> str | None:
        """The JSON snapshot of ``table``'s clocks, 托管 and pause (``None`` before the game)."""
        if table.game is None:
            return None
        b = table.between
        return json.dumps({
            "events": len(table.game.events),
            "auto": table.auto, "auto_reason": table.auto_reason, "timeouts": table.timeouts,
            "deadline": list(table.deadline) if table.deadline is not None else None,
            "between": None if b is None else {"deal": b["deal"], "pressed": b["pressed"], "deadline": b["deadline"]},
        })

    async def sync_presence(self, table: Table) -> None:
        """At the owner: read every live process's connection counts of the room, keep one
        :class:`ChannelConn` per seat/spectators channel that has connections, and send everyone
        the state (a new connection gets its first frame this way)."""
        room = table.id
        raw = await self.r.hgetall(self.keys.presence(room))
        want: set[str] = set()
        members: set[str] = set()
        if raw:
            names = [n.decode() if isinstance(n, bytes) else n for n in raw]
            alive = await self.r.mget([self.keys.alive(n) for n in names])
            dead = []
            for n, v, a in zip(names, raw.values(), alive, strict=True):
                if a is None and n != self.member:
                    dead.append(n)  # a process that died holding sockets: they are gone
                    continue
                counts = json.loads(v)
                if n != self.member and any(counts):
                    members.add(n)
                want.update(str(s) for s in range(4) if counts[s] > 0)
                if counts[4] > 0:
                    want.add(SPEC)
            if dead:
                await self.r.hdel(self.keys.presence(room), *dead)
        async with table.lock:
            if room not in self.owned or self.manager.tables.get(room) is not table:
                return
            self._pres_members[room] = members
            old = {c.key: c for c in table.conns if isinstance(c, ChannelConn)}
            before = table.connected()
            for c in old.values():
                table.conns.discard(c)
                c.closed = True
            for key in sorted(want):
                uid = None if key == SPEC else table.info.seats[int(key)].user_id
                table.conns.add(ChannelConn(self, room, key, uid, table))
            after = table.connected()
            reports = []
            if table.game is not None and not table.game.over:
                for s in range(4):
                    if after[s] and not before[s] and table.auto_reason[s] == "away":
                        reports.append(table._end_auto(s, notify=False))
            table._schedule()
            table._broadcast()
            for report in reports:
                if report is not None:
                    table.notice("bot_played", **report)
            idle = not want and table.info.status != PLAYING
        if idle:
            await self.release(room)

    async def release(self, room: str) -> None:
        """Stop owning ``room`` (a waiting or finished room nobody looks at any more)."""
        table = self.manager.tables.get(room)
        if table is not None:
            async with table.lock:
                if any(isinstance(c, ChannelConn) for c in table.conns) or table.info.status == PLAYING:
                    return
                table._closed = True
                table._cancel()
        await self.manager.writer.wait(room)
        await self._drain_publisher(room)
        self.manager.tables.pop(room, None)
        self._take_locks.pop(room, None)
        token = self.owned.pop(room, None)
        self.manager.writer.forget(room)
        await self.pubsub.unsubscribe(self.keys.inbox(room))
        if token is not None:
            await self._release_script(keys=[self.keys.lease(room)], args=[token])

    def demote(self, room: str, why: str) -> None:
        """The lease is lost (a stall): stop the table here at once; the new owner has it."""
        self.owned.pop(room, None)
        self._take_locks.pop(room, None)
        table = self.manager.tables.pop(room, None)
        self.manager.writer.forget(room)
        if table is not None:
            table._closed = True
            table._cancel()
            for c in table.conns:
                if isinstance(c, ChannelConn):
                    c.closed = True
        if self.pubsub is not None:
            asyncio.get_running_loop().create_task(self.pubsub.unsubscribe(self.keys.inbox(room)))
        log.warning("room %s: lease lost (%s); the table is dropped here", room, why,
                    extra={"room": room, "node": self.node})

    def check_lease(self, room: str) -> None:
        """Fencing before a write (blocking; database threads call it).

        Raises:
            LeaseLost: this process no longer holds ``room``'s lease.
        """
        token = self.owned.get(room)
        if token is None or self.leases.holder(room) != token:
            raise LeaseLost(f"room {room}: this server no longer owns the table")

    # -- the owner's side of messages ------------------------------------------------------------
    async def _on_inbox(self, room: str, msg: dict[str, Any]) -> None:
        table = self.manager.tables.get(room)
        if table is None or room not in self.owned:
            return
        kind = msg.get("k")
        if kind == "pres":
            await self.sync_presence(table)
        elif kind == "msg":
            from .ws import handle_message

            conn = Conn(msg.get("uid"), msg.get("name"))
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

    # -- background loops ------------------------------------------------------------------------
    async def _listen(self) -> None:
        reply_ch = self.keys.reply(self.member)
        ctl = self.keys.ctl
        in_prefix = self.keys.inbox("")
        out_prefix = self.keys.out("", "")[:-1]
        while True:
            try:
                if not self.pubsub.subscribed:
                    await asyncio.sleep(0.05)
                    continue
                m = await self.pubsub.get_message(ignore_subscribe_messages=True, timeout=1.0)
                if m is None:
                    continue
                ch = m["channel"].decode() if isinstance(m["channel"], bytes) else m["channel"]
                data = m["data"].decode() if isinstance(m["data"], bytes) else m["data"]
                if ch.startswith(out_prefix):
                    room, key = ch[len(out_prefix):].rsplit(":", 1)
                    proxy = self.proxies.get(room)
                    if proxy is not None:
                        proxy.deliver(key, data)
                elif ch == reply_ch:
                    msg = json.loads(data)
                    fut = self._pending.get(msg.get("req"))
                    if fut is not None and not fut.done():
                        fut.set_result(msg)
                elif ch.startswith(in_prefix):
                    room = ch[len(in_prefix):]
                    asyncio.get_running_loop().create_task(self._guarded(self._on_inbox(room, json.loads(data))))
                elif ch == ctl:
                    asyncio.get_running_loop().create_task(self._guarded(self._on_ctl(json.loads(data))))
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - keep listening
                log.exception("cluster listener failed", extra={"node": self.node})
                await asyncio.sleep(0.2)

    async def _guarded(self, coro: Any) -> None:
        try:
            await coro
        except asyncio.CancelledError:
            raise
        except Exception:  # noqa: BLE001
            log.exception("cluster message failed", extra={"node": self.node})

    async def _on_ctl(self, msg: dict[str, Any]) -> None:
        kind = msg.get("k")
        if kind == "free" and not self.closing:
            # a graceful shutdown handed the room over: one process takes it now (SET NX)
            await asyncio.sleep(random.uniform(0, 0.02))
            await self.take(msg["room"])
        elif kind == "changed":
            proxy = self.proxies.get(msg["room"])
            if proxy is not None:
                info = await self.manager.run_db(self.manager.store.load, msg["room"])
                if info is not None:
                    await proxy.reseat(info)
        elif kind == "revoke":
            for proxy in list(self.proxies.values()):
                for c in list(proxy.conns):
                    if c.session_key is not None and c.session_key == msg["key"]:
                        c.close(4401, "logged out")

    async def _renew_loop(self) -> None:
        period = self.lease_s / 3
        while True:
            await asyncio.sleep(period)
            try:
                rooms = list(self.owned.items())
                pipe = self.r.pipeline(transaction=False)
                pipe.get(self.keys.alive(self.member))
                pipe.set(self.keys.alive(self.member), "1", px=self.lease_ms * 3)
                for room, token in rooms:
                    pipe.eval(RENEW_LUA, 1, self.keys.lease(room), token, self.lease_ms)
                results = await pipe.execute()
                for (room, token), ok in zip(rooms, results[2:], strict=True):
                    if not ok and self.owned.get(room) == token:
                        self.demote(room, "not renewed in time")
                if results[0] is None:
                    self._announce_presence()
                await self._forget_dead_members()
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - Redis unreachable: keep trying; the leases may expire
                log.warning("renewing leases failed", exc_info=True, extra={"node": self.node})

    def _announce_presence(self) -> None:
        """This process was taken for dead (its ``alive`` key expired: Redis was out of reach, or
        the process stalled, for three leases), so the owners stopped counting its connections:
        store its counts again and tell every owner, which sends its connections the state."""
        rooms = [p for p in self.proxies.values() if p.conns]
        if rooms:
            log.warning("node %s was out of touch with the cluster; announcing its connections of %d rooms again",
                        self.node, len(rooms), extra={"node": self.node})
        for proxy in rooms:
            asyncio.get_running_loop().create_task(self._guarded(self.presence_changed(proxy)))

    async def _forget_dead_members(self) -> None:
        """Sync the presence of every owned room that counted a connection of a process that has
        died since (its ``alive`` key expired; it could not say its sockets closed), so that the
        seat counts as away and the bot covers it as on one server."""
        for room in [r for r in self._pres_members if r not in self.owned]:
            self._pres_members.pop(room, None)
        members = sorted(set().union(*self._pres_members.values())) if self._pres_members else []
        if not members:
            return
        alive = await self.r.mget([self.keys.alive(m) for m in members])
        dead = {m for m, a in zip(members, alive, strict=True) if a is None}
        for room, counted in list(self._pres_members.items()):
            table = self.manager.tables.get(room)
            if counted & dead and table is not None and room in self.owned:
                log.info("room %s: connections of %s are gone (the process died)", room,
                         ", ".join(sorted(counted & dead)), extra={"room": room, "node": self.node})
                self._pres_members[room] = counted - dead
                asyncio.get_running_loop().create_task(self._guarded(self.sync_presence(table)))

    async def _sweep_loop(self) -> None:
        """Take the playing rooms whose lease is free (their owner died or stalled)."""
        period = self.lease_s / 3
        while True:
            await asyncio.sleep(period * random.uniform(0.8, 1.2))
            if self.closing:
                continue
            try:
                ids = await self.manager.run_db(self.manager.store.playing_ids)
                # and any room this process holds sockets for (a waiting or finished room whose
                # owner died has no other way back to an owner)
                ids = list(dict.fromkeys([*ids, *[r for r, p in self.proxies.items() if p.conns]]))
                ids = [r for r in ids if r not in self.owned]
                if not ids:
                    continue
                holders = await self.r.mget([self.keys.lease(r) for r in ids])
                for room, holder in zip(ids, holders, strict=True):
                    if holder is None:
                        await self.take(room)
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001
                log.warning("sweeping for free tables failed", exc_info=True, extra={"node": self.node})

    # -- shared state of the API -----------------------------------------------------------------
    def next_room(self, room_id: str) -> str | None:
        """The room "play again" made of ``room_id`` (any process), or ``None`` (blocking)."""
        v = self.sync.get(self.keys.next_room(room_id))
        return v.decode() if isinstance(v, bytes) else v

    def set_next_room(self, room_id: str, new_id: str) -> bool:
        """Record "play again" (blocking). Returns False when another room was recorded first."""
        return bool(self.sync.set(self.keys.next_room(room_id), new_id, nx=True, ex=30 * 24 * 3600))

    def lock(self, name: str, timeout_s: float = 30.0) -> Any:
        """A lock shared by every process (``redis.lock.Lock``; a context manager, blocking)."""
        return self.sync.lock(f"{self.keys.p}lock:{name}", timeout=timeout_s, blocking_timeout=timeout_s)

    async def room_changed(self, room_id: str) -> None:
        """Seats changed in the database: tell the owner (if any) and every process's proxies."""
        await self.r.publish(self.keys.ctl, json.dumps({"k": "changed", "room": room_id}))
        await self.call(room_id, "changed", take=False)

    async def revoke_session(self, session_key: str) -> None:
        """Close the connections of a logged-out session on every process."""
        await self.r.publish(self.keys.ctl, json.dumps({"k": "revoke", "key": session_key}))


#: Sliding-window limits in sorted sets (KEYS: one set per limit; ARGV[1] now (epoch s),
#: ARGV[2] window (s), ARGV[3] member, ARGV[4] mode: "attempt" (check then count), "check",
#: "count"; ARGV[5..]: the limits). Returns 0, or {index of the limit reached (1-based), oldest score}.
WINDOW_LUA = """
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local mode = ARGV[4]
if mode ~= 'count' then
  for i, key in ipairs(KEYS) do
    redis.call('zremrangebyscore', key, '-inf', now - window)
    if redis.call('zcard', key) >= tonumber(ARGV[4 + i]) then
      local oldest = redis.call('zrange', key, 0, 0, 'WITHSCORES')
      return {i, oldest[2]}
    end
  end
end
if mode ~= 'check' then
  for _, key in ipairs(KEYS) do
    redis.call('zadd', key, now, ARGV[3])
    redis.call('pexpire', key, math.ceil(window * 1000))
  end
end
return 0
"""


class SharedLoginLimiter:
    """:class:`guandan.server.auth.LoginLimiter` shared by every process of a cluster (Redis sorted
    sets, one atomic script per call): the same limits per (address, account), per account and per
    address, counted once over all processes, so a load balancer spreading guesses over the
    processes gives no extra tries.

    Args:
        client: a ``redis.Redis`` client; prefix: key prefix; the limits as ``LoginLimiter``'s.
    """

    def __init__(self, client: Any, prefix: str = "gd:", max_failures: int = 10, window_s: float = 300.0,
                 account_failures: int = 30, address_failures: int = 100) -> None:
        self.client = client
        self.p = prefix
        self.max_failures, self.window_s = max_failures, window_s
        self.account_failures, self.address_failures = account_failures, address_failures
        self._script = client.register_script(WINDOW_LUA)

    def _keys(self, client: str, name: str) -> tuple[list[str], list[int]]:
        from .auth import limiter_key

        account = limiter_key(name)
        return ([f"{self.p}login:{client}|{account}", f"{self.p}login:*|{account}", f"{self.p}login:{client}|*"],
                [self.max_failures, self.account_failures, self.address_failures])

    def _run(self, mode: str, client: str, name: str) -> None:
        from .auth import AuthError

        keys, limits = self._keys(client, name)
        now = time.time()
        out = self._script(keys=keys, args=[now, self.window_s, f"{now}:{secrets.token_hex(4)}", mode, *limits])
        if out and out != 0:
            wait = int(float(out[1]) + self.window_s - now) + 1
            raise AuthError(429, f"too many failed logins; try again in {wait} s", "too_many_logins",
                            {"wait_s": wait})

    def attempt(self, client: str, name: str) -> None:
        """Check the limits and count this attempt as a failure, atomically (see ``LoginLimiter``).

        Raises:
            AuthError(429, ``too_many_logins``, params ``wait_s``): a limit is reached.
        """
        self._run("attempt", client, name)

    def check(self, client: str, name: str) -> None:
        """Refuse while a limit is reached, without counting. Raises AuthError(429)."""
        self._run("check", client, name)

    def failed(self, client: str, name: str) -> None:
        """Count one failed login of ``client`` for ``name``."""
        self._run("count", client, name)

    def succeeded(self, client: str, name: str) -> None:
        """A good login: forget the (address, account) failures and take this attempt back from
        the account and address totals."""
        keys, _ = self._keys(client, name)
        pipe = self.client.pipeline(transaction=False)
        pipe.delete(keys[0])
        pipe.zpopmax(keys[1])
        pipe.zpopmax(keys[2])
        pipe.execute()


class SharedRateLimiter:
    """:class:`guandan.server.auth.RateLimiter` shared by every process of a cluster (Redis).

    Args:
        client: ``redis.Redis``; prefix: key prefix; limit: events per window; window_s: seconds;
        what: what is limited, for the message.
    """

    def __init__(self, client: Any, prefix: str, limit: int, window_s: float, what: str) -> None:
        self.client = client
        self.key = f"{prefix}rate:{what.replace(' ', '_')}:"
        self.limit, self.window_s, self.what = limit, window_s, what
        self._script = client.register_script(WINDOW_LUA)

    def hit(self, key: str) -> None:
        """Count one event for ``key`` (a client address).

        Raises:
            AuthError(429, ``rate_limited``, params ``wait_s``): over the limit.
        """
        from .auth import AuthError

        now = time.time()
        out = self._script(keys=[self.key + key], args=[now, self.window_s, f"{now}:{secrets.token_hex(4)}",
                                                         "attempt", self.limit])
        if out and out != 0:
            wait = int(float(out[1]) + self.window_s - now) + 1
            raise AuthError(429, f"too many {self.what} from this address; try again in {wait} s",
                            "rate_limited", {"wait_s": wait})


def _shown(url: str) -> str:
    """A Redis URL without its password (for logs and messages)."""
    if "@" in url and "://" in url:
        scheme, rest = url.split("://", 1)
        return f"{scheme}://***@{rest.rsplit('@', 1)[1]}"
    return url


def redis_url_problem(url: str) -> str | None:
    """What is wrong with the Redis URL ``url`` that redis-py would not say, or ``None``.

    redis-py ignores a database number it cannot read (``redis://host:6379/abc``, ``?db=x``) and
    silently uses database 0, which may be another cluster's or another program's.

    Returns:
        A one-line problem (the URL shown without its password), or ``None`` when the scheme is
        ``redis``, ``rediss`` or ``unix`` and the database number (path or ``db=``), if any, is an
        integer of 0 or more.
    """
    from urllib.parse import parse_qs, unquote, urlsplit

    parts = urlsplit(url)
    if parts.scheme not in ("redis", "rediss", "unix"):
        return f"{_shown(url)!r} is not a Redis URL (redis://host:6379/0, rediss://..., unix:///path.sock)"
    dbs = parse_qs(parts.query).get("db", [])
    if parts.scheme != "unix" and unquote(parts.path).strip("/"):
        dbs.append(unquote(parts.path).strip("/"))
    for db in dbs:
        if not db.isascii() or not db.isdigit():
            return f"the database number {db!r} of {_shown(url)!r} is not a number (redis://host:6379/0)"
    return None


def make_store_fenced(store: Any, check: Callable[[str], None]) -> Any:
    """Wrap every write of ``store`` (a :class:`~guandan.server.tables.RoomStore`: ``save``,
    ``finish``, and its ``games`` rows' ``start`` and ``append``) with the lease check
    ``check(room)``: a process that lost a room's lease raises :class:`LeaseLost` instead of
    writing (fencing). The ``game_events`` key (room, index) refuses a line written twice, so even a
    write that passed the check just before the lease expired cannot store an action twice."""

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
    return store


__all__ = ["OWNER_UNAVAILABLE", "ChannelConn", "ClusterNode", "Keys", "LeaseLost", "Leases", "ProxyTable",
           "SharedLoginLimiter", "SharedRateLimiter", "make_store_fenced", "redis_url_problem"]
