"""This process's part of the cluster (:class:`ClusterNode`): taking tables over (leases, snapshots,
presence), its background loops, and (from :mod:`~guandan.server.cluster.routing`) routing client
messages and operations to each table's owner and publishing frames once their record lines are
stored. See :mod:`guandan.server.cluster` for the protocol."""

from __future__ import annotations

import asyncio
import json
import logging
import random
import secrets
import time
from collections import deque
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ..table.flow import Table
from ..table.info import PLAYING
from .identity import ForwardedIdentity, revoke_hash
from .keys import RELEASE_LUA, RENEW_LUA, SPEC, Keys, _shown, import_redis, without_credentials
from .leases import LeaseLost, Leases
from .proxy import ChannelConn, ProxyTable
from .snapshots import restore_snapshot, table_snapshot
from .sockets import SocketCaps
from .routing import Routing

if TYPE_CHECKING:
    from ..manager import TableManager

log = logging.getLogger("guandan.server.cluster")


class ClusterNode(Routing):
    """This process's part of the cluster: leases, pub/sub, forwarding and failover.

    Args:
        manager: the process's :class:`~guandan.server.manager.TableManager` (owned tables live in
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
        #: owned room -> the snapshot last written to Redis (the renewal loop writes changed ones)
        self._snap_written: dict[str, str] = {}
        #: the owner's check of the uid in forwarded messages (and their signing)
        self.identity = ForwardedIdentity(manager.run_db, manager.session_factory)
        #: when the listener last logged a Redis outage (monotonic s)
        self._outage_logged = -1e9
        #: rooms a takeover is already timed for (their lease expires within a sweep period)
        self._timed_takes: set[str] = set()
        #: hooks of the services whose work moves with a table (online tournament rounds:
        #: :mod:`guandan.server.tournament_cluster`): ``await on_take(table)`` once this process
        #: owns a table (before the connections are served), ``on_drop(room)`` when it stops owning
        #: it (released, lease lost); neither may raise
        self.on_take: list[Callable[[Table], Awaitable[None]]] = []
        self.on_drop: list[Callable[[str], None]] = []

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
        await self._warn_if_open()
        self._renew_script = self.r.register_script(RENEW_LUA)
        self._release_script = self.r.register_script(RELEASE_LUA)
        self.sockets = SocketCaps(self.r, self.keys.p, self.member)
        self.pubsub = self.r.pubsub()
        await self.pubsub.subscribe(self.keys.reply(self.member), self.keys.ctl)
        await self.r.set(self.keys.alive(self.member), "1", px=self.lease_ms * 3)
        loop = asyncio.get_running_loop()
        self._tasks = [loop.create_task(self._listen(), name="cluster-listen"),
                       loop.create_task(self._renew_loop(), name="cluster-renew"),
                       loop.create_task(self._sweep_loop(), name="cluster-sweep")]
        log.info("node %s joined the cluster at %s (lease %.1f s)", self.node, _shown(self.url), self.lease_s,
                 extra={"node": self.node})

    async def _warn_if_open(self) -> bool:
        """Log a warning when Redis answers a client that gives no password (Redis carries every
        seat's hidden cards and the players' actions: README "Running a cluster", Redis is a trust
        boundary). Returns whether it warned."""
        redis = import_redis()
        bare = redis.asyncio.Redis.from_url(without_credentials(self.url), socket_timeout=3, socket_connect_timeout=3)
        try:
            await bare.ping()
        except Exception:  # noqa: BLE001 - refused without credentials (NOAUTH, WRONGPASS...): as it should be
            return False
        finally:
            await bare.aclose()
        log.warning("Redis at %s answers clients without a password: anyone who reaches it can read every "
                    "seat's hidden cards and disturb the tables; give the cluster an ACL user and a dedicated "
                    "instance (README \"Running a cluster\")", _shown(self.url), extra={"node": self.node})
        return True

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
            self._dropped(room)
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

    async def admit_socket(self, room: str, address: str, *, spectator: bool, seated: bool, per_room: int,
                           per_address: int) -> str | None:
        """Check a new websocket against the caps counted over every process and count it
        (:meth:`~guandan.server.cluster.sockets.SocketCaps.admit`: ``None``, ``"room"`` or
        ``"address"``). Raises redis.exceptions.RedisError (Redis out of reach)."""
        return await self.sockets.admit(room, address, spectator=spectator, seated=seated, per_room=per_room,
                                        per_address=per_address)

    async def release_socket(self, room: str, address: str, *, spectator: bool) -> None:
        """A socket counted by :meth:`admit_socket` closed (a Redis failure is logged: the count
        then stays until this process's fields are dropped, when it dies, or the day's expiry)."""
        try:
            await self.sockets.release(room, address, spectator=spectator)
        except Exception as e:  # noqa: BLE001 - the socket is closing anyway
            self._redis_failed("taking back a socket's count failed", e)

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
        pipe = self.r.pipeline(transaction=True)
        if any(counts):
            pipe.hset(key, self.member, json.dumps(counts))
            pipe.pexpire(key, 24 * 3600 * 1000)
        else:
            pipe.hdel(key, self.member)
        # an owner listens when the inbox channel itself has a subscriber (a pattern subscriber
        # receives the message too, and is no owner: see Routing.to_owner)
        pipe.pubsub_numsub(self.keys.inbox(proxy.id))
        pipe.publish(self.keys.inbox(proxy.id), json.dumps({"k": "pres"}))
        *_, numsub, published = await pipe.execute()
        receivers = min(int(numsub[0][1]) if numsub else 0, int(published))
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

    # -- ownership -------------------------------------------------------------------------------
    async def take(self, room: str, keep: bool = False) -> Table | None:
        """Become ``room``'s owner if its lease is free: load the room from the database, replay
        its record, restore clocks and 托管 from the snapshot, and serve the connections.

        A room nobody looks at that is not being played is released again at once, unless
        ``keep`` (an operation is about to run on it here: :meth:`Routing.call` releases it after).

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
            for hook in self.on_take:
                await self._guarded(hook(table))
            if table.game is not None and table.game.over and table.info.status == PLAYING:
                # the previous owner stored the game's last line and died before storing its end
                # (the games row, the room finished): store it now, as the game's end would have
                log.info("room %s: the game is over but was not finished; finishing it", room,
                         extra={"room": room, "node": self.node})
                async with table.lock:
                    table._game_over([])
            log.info("room %s: owned by %s (status %s, %d events, %.0f ms)", room, self.node, table.info.status,
                     0 if table.game is None else len(table.game.events), (time.monotonic() - t0) * 1000,
                     extra={"room": room, "node": self.node})
            await self.sync_presence(table, release_idle=not keep)
            return table

    async def _restore_snapshot(self, table: Table) -> None:
        """Clocks, 托管 and the pause between deals as the previous owner last wrote them
        (:func:`~guandan.server.cluster.snapshots.restore_snapshot`)."""
        raw = await self.r.get(self.keys.snapshot(table.id))
        restore_snapshot(table, raw, self.manager.restart_grace_s)

    def snapshot(self, table: Table) -> str | None:
        """The JSON snapshot of ``table``'s clocks, 托管 and pause (``None`` before the game;
        :func:`~guandan.server.cluster.snapshots.table_snapshot`)."""
        snap = table_snapshot(table)
        if snap is not None:
            self._snap_written[table.id] = snap
        return snap

    def _changed_snapshots(self) -> list[tuple[str, str]]:
        """``(room, snapshot)`` of the owned tables whose snapshot changed since it was last
        written: the renewal loop writes them, so that a table nobody watches (no frame is
        published) still leaves a fresh snapshot for a takeover."""
        out = []
        for room in list(self.owned):
            table = self.manager.tables.get(room)
            snap = table_snapshot(table) if table is not None else None
            if snap is not None and self._snap_written.get(room) != snap:
                self._snap_written[room] = snap
                out.append((room, snap))
        for room in [r for r in self._snap_written if r not in self.owned]:
            self._snap_written.pop(room, None)
        return out

    async def sync_presence(self, table: Table, release_idle: bool = True) -> None:
        """At the owner: read every live process's connection counts of the room, keep one
        :class:`ChannelConn` per seat/spectators channel that has connections, and send everyone
        the state (a new connection gets its first frame this way). A room with no connection
        that is not being played is released (unless ``release_idle`` is False)."""
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
        if idle and release_idle:
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
        self._dropped(room)
        if token is not None:
            await self._release_script(keys=[self.keys.lease(room)], args=[token])

    def _dropped(self, room: str) -> None:
        for hook in self.on_drop:
            try:
                hook(room)
            except Exception:  # noqa: BLE001 - a hook never stops the handover
                log.exception("room %s: a drop hook failed", room, extra={"room": room, "node": self.node})

    async def offer(self, rooms: list[str]) -> None:
        """Announce ``rooms`` (playing rooms nobody owns yet) as free on ``gd:ctl``: every live process,
        this one included, tries to take each (``SET NX``: one wins), so new tables spread over the
        cluster. A room nobody takes is taken by a sweep within ``lease_s / 3`` seconds."""
        if not rooms:
            return
        pipe = self.r.pipeline(transaction=False)
        for room in rooms:
            pipe.publish(self.keys.ctl, json.dumps({"k": "free", "room": room}))
        await pipe.execute()

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
        self._dropped(room)
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

    def check_leases(self, rooms: list[str] | tuple[str, ...]) -> None:
        """:meth:`check_lease` for several rooms in one round trip (``MGET``; the batched record
        appends of :class:`~guandan.server.append_batcher.AppendBatcher` call it; blocking).

        Raises:
            LeaseLost: this process no longer holds the lease of one of ``rooms`` (the first such
                room is named).
        """
        rooms = list(rooms)
        if not rooms:
            return
        tokens = [self.owned.get(room) for room in rooms]
        for room, token in zip(rooms, tokens, strict=True):
            if token is None:
                raise LeaseLost(f"room {room}: this server no longer owns the table")
        held = self.sync.mget([self.keys.lease(room) for room in rooms])
        for room, token, v in zip(rooms, tokens, held, strict=True):
            if (v.decode() if isinstance(v, bytes) else v) != token:
                raise LeaseLost(f"room {room}: this server no longer owns the table")

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
            except Exception as e:  # noqa: BLE001 - keep listening
                self._redis_failed("cluster listener failed", e)
                await asyncio.sleep(0.2)

    def _redis_failed(self, what: str, e: Exception) -> None:
        """Log a failure of a background loop: a Redis outage as one line at most every 10 s (the
        loops retry several times a second), anything else with its traceback."""
        redis = import_redis()
        if not isinstance(e, (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError)):
            log.warning(what, exc_info=e, extra={"node": self.node})
            return
        now = time.monotonic()
        if now - self._outage_logged >= 10.0:
            self._outage_logged = now
            first = (str(e).strip().splitlines() or [type(e).__name__])[0][:200]
            log.warning("Redis out of reach (%s); retrying", first, extra={"node": self.node})

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
            hashed = str(msg.get("h") or "")
            self.identity.revoked(hashed)
            for proxy in list(self.proxies.values()):
                for c in list(proxy.conns):
                    if c.session_key is not None and revoke_hash(c.session_key) == hashed:
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
                for room, snap in self._changed_snapshots():
                    pipe.set(self.keys.snapshot(room), snap, px=24 * 3600 * 1000)
                results = await pipe.execute()
                for (room, token), ok in zip(rooms, results[2:2 + len(rooms)], strict=True):
                    if not ok and self.owned.get(room) == token:
                        self.demote(room, "not renewed in time")
                if results[0] is None:
                    self._announce_presence()
                await self._forget_dead_members()
            except asyncio.CancelledError:
                raise
            except Exception as e:  # noqa: BLE001 - Redis unreachable: keep trying; the leases may expire
                self._redis_failed("renewing leases failed", e)

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
                pipe = self.r.pipeline(transaction=False)
                for room in ids:
                    pipe.pttl(self.keys.lease(room))
                ttls = await pipe.execute()
                for room, ttl in zip(ids, ttls, strict=True):
                    if ttl == -2:  # no lease: nobody owns the room
                        await self.take(room)
                    elif 0 <= ttl <= period * 1.25 * 1000 and room not in self._timed_takes:
                        # not renewed for most of a lease (its owner died or stalled): try when
                        # it expires rather than up to a sweep period later
                        self._timed_takes.add(room)
                        asyncio.get_running_loop().create_task(self._guarded(self._take_at(room, ttl / 1000)))
            except asyncio.CancelledError:
                raise
            except Exception as e:  # noqa: BLE001
                self._redis_failed("sweeping for free tables failed", e)

    async def _take_at(self, room: str, delay_s: float) -> None:
        """Try to take ``room`` once its lease has expired, ``delay_s`` seconds from now."""
        try:
            await asyncio.sleep(delay_s + 0.005)
            if not self.closing:
                await self.take(room)
        finally:
            self._timed_takes.discard(room)

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
        """Close the connections of a logged-out session on every process (a Redis outage is
        logged: the other processes then keep those sockets until they close)."""
        try:
            await self.r.publish(self.keys.ctl, json.dumps({"k": "revoke", "h": revoke_hash(session_key)}))
        except Exception as e:  # noqa: BLE001 - run as a task: nobody awaits it
            first = (str(e).strip().splitlines() or [type(e).__name__])[0][:200]
            log.warning("telling the other processes of a logout failed: %s", first, extra={"node": self.node})
