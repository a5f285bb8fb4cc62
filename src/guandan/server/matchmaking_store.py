"""The matchmaking queue's storage (issue 25 item 1): in memory on one process, in Redis for a cluster.

The decisions are :mod:`guandan.server.matchmaking`'s; this module keeps the queue between
requests and applies them. Three collections, the same in both back ends:

* ``tickets``: ticket id -> the ticket (``{id, members, ratings, names, joined_at, bot_level}``);
* ``who``: user id -> where the person is: ``{"kind": "t", "id"}`` (queued), ``{"kind": "p", "id"}``
  (in a ready check) or ``{"kind": "r", "room", "until"}`` (seated by a match, kept
  :data:`SEATED_KEEP_S` so that every tab learns the room);
* ``props``: proposal id -> a match waiting for its ready check (``{id, tickets, seats, bot_level,
  deadline, ready, declined, state, claimed_at}``);
* ``declines``: user id -> ``{"at": [times]}``, the ready checks the person declined or let run out
  lately (:func:`guandan.server.matchmaking.cooldown_left`), forgotten after 12 minutes.

Every change runs under one lock: a ``threading.Lock`` in memory (:class:`MemoryBackend`), a Redis
lock (``SET NX PX`` with a token, redis-py's ``Lock``) shared by every process of the cluster
(:class:`RedisBackend`), so that no two processes match one person twice. A lock not taken within
:data:`LOCK_WAIT_S` is refused with the retryable ``503 temporarily_unavailable`` (``params.retry_s``)
rather than a 500: nothing was changed, and the same request may be sent again. Times are wall-clock
seconds (``time.time()``), shared by the processes of a cluster.

Errors are :class:`MatchError` (an :class:`~guandan.server.errors.HttpError`: status, message, code).
"""

from __future__ import annotations

import json
import math
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Protocol

from . import matchmaking as mm
from .errors import HttpError

#: Seconds a person's "seated in room X" answer is kept after a match starts.
SEATED_KEEP_S = 300.0
#: Seconds after which a proposal claimed for seating (all ready) but never seated (the claiming
#: process died) is claimed again by another.
CLAIM_STALE_S = 30.0
#: Seconds between two sweeps of the "seated" answers past their time (:meth:`MatchQueue.tick`).
SWEEP_EVERY_S = 60.0
#: Seconds one process may hold the Redis lock (a safety net: an operation takes milliseconds).
LOCK_TIMEOUT_S = 10.0
#: Seconds a queue action waits for the lock before it is refused (503 ``temporarily_unavailable``).
LOCK_WAIT_S = 3.0
#: Seconds between two tries of a process waiting for the Redis lock. Every waiter tries ``SET NX``
#: this often: at 2 ms, 64 joins at once on two processes spent the 2-core machine polling (the joins
#: took 18.5 s, 42 of them 503s); at 10 ms, 8.4 s and one 503 (scripts/matchmaking_bench.py --redis).
LOCK_POLL_S = 0.01
#: Seconds the client is told to wait before sending a refused (503) action again.
RETRY_S = 2

TICKETS, WHO, PROPS, DECLINES, META = "tickets", "who", "props", "declines", "meta"
#: Keys in ``META`` (settling, :func:`guandan.server.matchmaking.settle_due`): ``NEWEST`` ``{"t"}``, the
#: time of the latest join, and ``OLDEST`` ``{"t"}``, a lower bound of the queue's oldest ``joined_at``
#: (set exactly by a round that read the tickets; lowered by a join whose time, taken before it got
#: the lock, is earlier, and by tickets put back after a failed ready check; deleted when a round finds
#: the queue empty; a stale low value after a leave is still a lower bound). Both are kept by
#: :meth:`Backend.note_join` in one step (one Redis call per join). With both, a round tells from a
#: few small reads that no table would be formed yet, without the lock and without reading every
#: ticket while a burst is still arriving.
NEWEST, OLDEST = "newest", "oldest"


class MatchError(HttpError):
    """A refused queue action (status, message, code, params)."""


def unavailable() -> MatchError:
    """The retryable refusal of an action whose lock was not taken in time: 503
    ``temporarily_unavailable`` with ``params.retry_s`` (the code the cluster's Redis-outage answer uses)."""
    return MatchError(503, "the matchmaking queue is busy right now; try again in a moment",
                      "temporarily_unavailable", {"retry_s": RETRY_S})


class Backend(Protocol):
    """Where the three collections live (module docstring); values are JSON-able dicts."""

    def lock(self) -> Any:
        """A lock with ``acquire(blocking_timeout_s) -> bool`` and ``release()``."""
        ...

    def get(self, coll: str, key: str) -> dict[str, Any] | None: ...

    def put(self, coll: str, key: str, value: dict[str, Any]) -> None: ...

    def put_many(self, coll: str, items: dict[str, dict[str, Any]]) -> None: ...

    def delete(self, coll: str, *keys: str) -> None: ...

    def count(self, coll: str) -> int:
        """The number of entries of ``coll`` (Redis ``HLEN``)."""
        ...

    def note_join(self, now: float) -> None:
        """A join at ``now`` (seconds): ``META`` ``NEWEST`` becomes ``now``, and ``OLDEST``, when set
        and later than ``now``, becomes ``now`` (one atomic step)."""
        ...

    def all(self, coll: str) -> dict[str, dict[str, Any]]: ...


class MemoryBackend:
    """The collections in this process's memory (one server without Redis).

    Values are kept as given and handed back as they are (no copies: a matching round over 1,000
    tickets spent most of its time copying them); the queue changes a value only under its lock and
    puts it back, as it must with Redis.
    """

    def __init__(self) -> None:
        self._data: dict[str, dict[str, dict[str, Any]]] = {TICKETS: {}, WHO: {}, PROPS: {}, DECLINES: {}, META: {}}
        self._lock = _ThreadLock()

    def lock(self) -> Any:
        return self._lock

    def get(self, coll: str, key: str) -> dict[str, Any] | None:
        return self._data[coll].get(key)

    def put(self, coll: str, key: str, value: dict[str, Any]) -> None:
        self._data[coll][key] = value

    def put_many(self, coll: str, items: dict[str, dict[str, Any]]) -> None:
        self._data[coll].update(items)

    def delete(self, coll: str, *keys: str) -> None:
        for k in keys:
            self._data[coll].pop(k, None)

    def all(self, coll: str) -> dict[str, dict[str, Any]]:
        return dict(self._data[coll])

    def count(self, coll: str) -> int:
        return len(self._data[coll])

    def note_join(self, now: float) -> None:
        meta = self._data[META]
        meta[NEWEST] = {"t": now}
        if OLDEST in meta and float(meta[OLDEST]["t"]) > now:
            meta[OLDEST] = {"t": now}


#: :meth:`RedisBackend.note_join` in one call: KEYS[1] the ``META`` hash; ARGV[1] ``{"t": now}`` as
#: JSON, ARGV[2] ``now``.
_NOTE_JOIN_LUA = """
redis.call('HSET', KEYS[1], 'newest', ARGV[1])
local o = redis.call('HGET', KEYS[1], 'oldest')
if o and tonumber(cjson.decode(o)['t']) > tonumber(ARGV[2]) then
  redis.call('HSET', KEYS[1], 'oldest', ARGV[1])
end
return 1
"""


class RedisBackend:
    """The collections as Redis hashes ``{prefix}mm:tickets|who|props|declines|meta``, one queue for
    every process of a cluster; the lock is ``{prefix}mm:lock``.

    Args:
        client: a synchronous ``redis.Redis``. prefix: the cluster's key prefix (``gd:``).
    """

    def __init__(self, client: Any, prefix: str = "gd:") -> None:
        self.r = client
        self.p = f"{prefix}mm:"
        self._note_join: Any = None

    def lock(self) -> Any:
        return _RedisLock(self.r.lock(self.p + "lock", timeout=LOCK_TIMEOUT_S, sleep=LOCK_POLL_S))

    def get(self, coll: str, key: str) -> dict[str, Any] | None:
        raw = self.r.hget(self.p + coll, key)
        return json.loads(raw) if raw is not None else None

    def put(self, coll: str, key: str, value: dict[str, Any]) -> None:
        self.r.hset(self.p + coll, key, json.dumps(value))

    def put_many(self, coll: str, items: dict[str, dict[str, Any]]) -> None:
        if items:
            self.r.hset(self.p + coll, mapping={k: json.dumps(v) for k, v in items.items()})

    def delete(self, coll: str, *keys: str) -> None:
        if keys:
            self.r.hdel(self.p + coll, *keys)

    def all(self, coll: str) -> dict[str, dict[str, Any]]:
        return {(k.decode() if isinstance(k, bytes) else k): json.loads(v) for k, v in self.r.hgetall(self.p + coll).items()}

    def count(self, coll: str) -> int:
        return int(self.r.hlen(self.p + coll))

    def note_join(self, now: float) -> None:
        if self._note_join is None:
            self._note_join = self.r.register_script(_NOTE_JOIN_LUA)
        self._note_join(keys=[self.p + META], args=[json.dumps({"t": now}), repr(now)])


class _ThreadLock:
    """One process's lock, with the time-out of :meth:`MatchQueue._locked`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()

    def acquire(self, wait_s: float) -> bool:
        return self._lock.acquire(timeout=wait_s)

    def release(self) -> None:
        self._lock.release()


class _RedisLock:
    """redis-py's ``Lock`` with the time-out of :meth:`MatchQueue._locked`."""

    def __init__(self, lock: Any) -> None:
        self._lock = lock

    def acquire(self, wait_s: float) -> bool:
        return bool(self._lock.acquire(blocking=True, blocking_timeout=wait_s))

    def release(self) -> None:
        from redis.exceptions import LockError

        try:
            self._lock.release()
        except LockError:  # held past LOCK_TIMEOUT_S and expired: nothing left to release
            pass


def _ticket(d: dict[str, Any]) -> mm.Ticket:
    return mm.Ticket(d["id"], tuple(d["members"]), tuple(d["ratings"]), float(d["joined_at"]), d.get("bot_level"))


class MatchQueue:
    """The queue's operations over a :class:`Backend` (one lock around each).

    Args:
        backend: :class:`MemoryBackend` (default) or :class:`RedisBackend`.
        clock: wall-clock seconds (``time.time``; the server passes it), read again once the lock
            is held by :meth:`join` and :meth:`tick`: a ``now`` taken before waiting for the lock
            (up to :data:`LOCK_WAIT_S`) would make a round see the newest join as after its own time,
            or a join older than the round that ran meanwhile. ``None`` (tests): the ``now`` given.
    """

    def __init__(self, backend: Backend | None = None, clock: Callable[[], float] | None = None) -> None:
        self.b: Backend = backend if backend is not None else MemoryBackend()
        self.clock = clock
        #: seconds the last :meth:`tick` spent deciding (``matchmaking.decide``), for the benchmark
        self.last_decide_s = 0.0
        self._next_sweep = 0.0
        #: seconds an action waits for the lock (:data:`LOCK_WAIT_S`)
        self.lock_wait_s = LOCK_WAIT_S

    def _now(self, now: float) -> float:
        """``now``, or the clock's time once the lock is held when it is later (see ``clock``)."""
        return now if self.clock is None else max(now, self.clock())

    @contextmanager
    def _locked(self) -> Iterator[None]:
        """Hold the queue's lock; raises :func:`unavailable` (503) when not taken within
        :data:`LOCK_WAIT_S`."""
        lock = self.b.lock()
        if not lock.acquire(self.lock_wait_s):
            raise unavailable()
        try:
            yield
        finally:
            lock.release()

    # -- reading ---------------------------------------------------------------------------

    def state(self, user_id: int, now: float) -> dict[str, Any]:
        """Where ``user_id`` stands: ``{"status": "idle"}``, ``{"status": "queued", "ticket"}``,
        ``{"status": "ready_check", "proposal", "ticket"}`` or ``{"status": "seated", "room"}``.
        ``ticket`` and ``proposal`` are the stored dicts (module docstring)."""
        where = self.b.get(WHO, str(user_id))
        if where is None:
            return {"status": "idle"}
        if where["kind"] == "t":
            t = self.b.get(TICKETS, where["id"])
            return {"status": "queued", "ticket": t} if t is not None else {"status": "idle"}
        if where["kind"] == "p":
            p = self.b.get(PROPS, where["id"])
            if p is None:
                return {"status": "idle"}
            mine = next((t for t in p["tickets"] if user_id in t["members"]), None)
            return {"status": "ready_check", "proposal": p, "ticket": mine}
        if where["kind"] == "r" and float(where.get("until", 0)) > now:
            return {"status": "seated", "room": where["room"]}
        return {"status": "idle"}

    # -- changing --------------------------------------------------------------------------

    def join(self, members: list[int], ratings: list[float], names: list[str], bot_level: str | None,
             now: float, address: str | None = None) -> tuple[dict[str, Any], bool]:
        """Put ``members`` (one person, or the joiner and a partner) in the queue.

        Args:
            members: user ids, the joiner first. ratings, names: theirs, same order.
            bot_level: bot difficulty for bot fill, or ``None``. now: wall-clock seconds.
            address: the joiner's client address (kept in the ticket: a bot-fill game counts against
                its limit of live games with bots, :mod:`guandan.server.botgames`).
        Returns:
            ``(state of the joiner, created)``: ``created`` is ``False`` when the joiner already
            stood in the queue or a ready check (two tabs): the existing entry is answered.
        Raises:
            MatchError: 409 ``partner_busy`` when the partner is queued or in a ready check already;
                429 ``decline_cooldown`` (``params.retry_s``: whole seconds left) when the joiner, or
                ``partner_cooldown`` (``params.name``, ``retry_s``) when the partner, declined too
                many ready checks lately (:func:`guandan.server.matchmaking.cooldown_left`); 503
                ``temporarily_unavailable`` (the lock).
        """
        joiner = members[0]
        with self._locked():
            now = self._now(now)
            current = self.state(joiner, now)
            if current["status"] in ("queued", "ready_check"):
                return current, False
            for other in members[1:]:
                if self.state(other, now)["status"] in ("queued", "ready_check"):
                    raise MatchError(409, f"{names[1]} is already looking for a game", "partner_busy",
                                     {"name": names[1][:40]})
            for i, u in enumerate(members):
                left = self.cooldown_left(u, now)
                if left > 0:
                    secs = math.ceil(left)
                    if i == 0:
                        raise MatchError(429, f"you declined {mm.DECLINE_LIMIT} games lately: wait {secs} s before "
                                         "joining again", "decline_cooldown", {"retry_s": secs})
                    raise MatchError(429, f"{names[i]} declined {mm.DECLINE_LIMIT} games lately: wait {secs} s",
                                     "partner_cooldown", {"name": names[i][:40], "retry_s": secs})
            tid = secrets.token_urlsafe(8)
            ticket = {"id": tid, "members": members, "ratings": ratings, "names": names,
                      "joined_at": now, "bot_level": bot_level, "address": address}
            self.b.put(TICKETS, tid, ticket)
            self.b.put_many(WHO, {str(u): {"kind": "t", "id": tid} for u in members})
            self.b.note_join(now)
            return {"status": "queued", "ticket": ticket}, True

    def cooldown_left(self, user_id: int, now: float) -> float:
        """Seconds ``user_id`` must still wait before joining (0.0: may join now)."""
        d = self.b.get(DECLINES, str(user_id))
        return mm.cooldown_left(d["at"], now) if d else 0.0

    def set_bot_level(self, user_id: int, level: str | None, now: float) -> dict[str, Any]:
        """Choose (or, with ``None``, drop) bot fill for the caller's queued ticket.

        Raises:
            MatchError: 409 ``not_queued``.
        """
        with self._locked():
            st = self.state(user_id, now)
            if st["status"] != "queued":
                raise MatchError(409, "you are not waiting in the queue", "not_queued")
            ticket = st["ticket"]
            ticket["bot_level"] = level
            self.b.put(TICKETS, ticket["id"], ticket)
            return {"status": "queued", "ticket": ticket}

    def leave(self, user_id: int, now: float) -> bool:
        """Leave the queue (with one's partner), or decline a ready check, or forget a seated
        answer. Returns whether there was anything to leave."""
        with self._locked():
            where = self.b.get(WHO, str(user_id))
            if where is None:
                return False
            if where["kind"] == "t":
                t = self.b.get(TICKETS, where["id"])
                self.b.delete(TICKETS, where["id"])
                self.b.delete(WHO, *[str(u) for u in (t["members"] if t else [user_id])])
                return True
            if where["kind"] == "p":
                return self._answer(user_id, False, now)
            self.b.delete(WHO, str(user_id))
            return True

    def answer(self, user_id: int, accept: bool, now: float) -> bool:
        """Accept (``True``) or decline the caller's ready check; a decline ends it at once (the
        others go back to the front of the queue, the decliner and partner out).

        Returns:
            Whether the caller had a ready check open.
        """
        with self._locked():
            return self._answer(user_id, accept, now)

    def _answer(self, user_id: int, accept: bool, now: float) -> bool:
        where = self.b.get(WHO, str(user_id))
        if where is None or where["kind"] != "p":
            return False
        p = self.b.get(PROPS, where["id"])
        if p is None or p["state"] != "open":
            return p is not None
        key = "ready" if accept else "declined"
        if user_id not in p[key]:
            p[key].append(user_id)
        if accept:
            self.b.put(PROPS, p["id"], p)
        else:
            self._fail(p, {user_id}, now)
        return True

    def _fail(self, p: dict[str, Any], out: set[int], now: float, declined: bool = True) -> None:
        """End proposal ``p``: tickets holding someone of ``out`` leave the queue, the others go back
        with their old ``joined_at`` (the front of the queue); when ``declined``, each person of
        ``out`` has one more decline counted (the cool-down)."""
        if out and declined:
            declines: dict[str, dict[str, Any]] = {}
            for u in out:
                old = self.b.get(DECLINES, str(u))
                declines[str(u)] = {"at": mm.declines_kept([*(old["at"] if old else []), now], now)}
            self.b.put_many(DECLINES, declines)
        back: dict[str, dict[str, Any]] = {}
        gone: list[str] = []
        for t in p["tickets"]:
            if out.intersection(t["members"]):
                gone.extend(str(u) for u in t["members"])
            else:
                back[t["id"]] = t
        self.b.put_many(TICKETS, back)
        if back:  # the queue's oldest may now be older than the hint says
            oldest = self.b.get(META, OLDEST)
            first = min(float(t["joined_at"]) for t in back.values())
            if oldest is not None and first < float(oldest["t"]):
                self.b.put(META, OLDEST, {"t": first})
        self.b.put_many(WHO, {str(u): {"kind": "t", "id": t["id"]} for t in back.values() for u in t["members"]})
        self.b.delete(WHO, *gone)
        self.b.delete(PROPS, p["id"])

    def _nothing_due(self, now: float) -> bool:
        """Without the lock: no ready check open, and either no ticket queued or the ``META`` hint
        says no table would be formed (players still arriving, none waiting
        :data:`~guandan.server.matchmaking.SETTLE_MAX_S`). Read without the lock, a change made
        meanwhile is seen by the next round (0.1 s later)."""
        if self.b.count(PROPS):
            return False
        return self.b.count(TICKETS) == 0 or not self._settle_due(now)

    def _settle_due(self, now: float) -> bool:
        """:func:`guandan.server.matchmaking.settle_due` from the ``META`` hint; ``True`` when the
        hint is incomplete (the tickets must be read)."""
        newest, oldest = self.b.get(META, NEWEST), self.b.get(META, OLDEST)
        if newest is None or oldest is None:
            return True
        return mm.settle_due(float(newest["t"]), float(oldest["t"]), now)

    def tick(self, now: float) -> list[dict[str, Any]]:
        """One round: forget the "seated" answers past their time (every :data:`SWEEP_EVERY_S`
        seconds in each process), settle the ready checks (time-outs fail, all-ready ones are
        claimed for seating), then form new matches from the queue (:func:`matchmaking.decide`, less
        those :func:`matchmaking.formed_now` keeps waiting while players are still arriving) and open
        their ready checks. A round with nothing to do (no ready check open, and no ticket queued or
        a burst still arriving: :meth:`_nothing_due`) returns at once without the lock, except the
        process's sweep round.

        Args:
            now: wall-clock seconds (``time.time()``), the clock of the tickets' ``joined_at``.
        Returns:
            The proposals claimed now for seating (the caller makes their rooms and then calls
            :meth:`seated`, or :meth:`seat_failed`).
        Raises:
            MatchError: 503 ``temporarily_unavailable`` when the lock is not taken within
                :data:`LOCK_WAIT_S` (the loop tries again next round).
        """

        if now < self._next_sweep and self._nothing_due(now):
            return []  # a burst still arriving: not even the lock (joins wait for it)
        with self._locked():
            now = self._now(now)
            if now >= self._next_sweep:  # forget the "seated" answers past their time
                self._next_sweep = now + SWEEP_EVERY_S
                old = [u for u, w in self.b.all(WHO).items() if w["kind"] == "r" and float(w.get("until", 0)) <= now]
                self.b.delete(WHO, *old)
                done = [u for u, d in self.b.all(DECLINES).items() if not mm.declines_kept(d["at"], now)]
                self.b.delete(DECLINES, *done)
            claimed: list[dict[str, Any]] = []
            for p in self.b.all(PROPS).values():
                if p["state"] == "seating":
                    if now - float(p.get("claimed_at", now)) >= CLAIM_STALE_S:
                        p["claimed_at"] = now
                        self.b.put(PROPS, p["id"], p)
                        claimed.append(p)
                    continue
                people = [u for t in p["tickets"] for u in t["members"]]
                outcome, out = mm.ready_outcome(people, p["ready"], p["declined"], p["deadline"], now)
                if outcome == mm.ALL_READY:
                    p["state"], p["claimed_at"] = "seating", now
                    self.b.put(PROPS, p["id"], p)
                    claimed.append(p)
                elif outcome == mm.FAILED:
                    self._fail(p, set(out), now)
            if not self._settle_due(now):
                return claimed  # players still arriving, none waiting 2 s: no table yet (a burst settles first)
            stored = self.b.all(TICKETS)
            if not stored:
                self.b.delete(META, OLDEST)
                return claimed
            t0 = time.perf_counter()
            queue = [_ticket(t) for t in stored.values()]
            # the bound made exact (a ticket that left may have been the oldest)
            self.b.put(META, OLDEST, {"t": min(t.joined_at for t in queue)})
            if not mm.must_form(queue, now):
                return claimed
            formed = mm.formed_now(mm.decide(queue, now), queue, now)
            self.last_decide_s = time.perf_counter() - t0
            props: dict[str, dict[str, Any]] = {}
            who: dict[str, dict[str, Any]] = {}
            for m in formed:
                pid = secrets.token_urlsafe(8)
                props[pid] = {"id": pid, "tickets": [stored[i] for i in m.tickets], "seats": list(m.seats),
                              "bot_level": m.bot_level, "deadline": now + mm.READY_S, "ready": [],
                              "declined": [], "state": "open"}
                who.update({str(u): {"kind": "p", "id": pid} for u in m.people})
            if props:
                self.b.put_many(PROPS, props)
                self.b.put_many(WHO, who)
                self.b.delete(TICKETS, *[i for m in formed for i in m.tickets])
                gone = {i for m in formed for i in m.tickets}
                left = [t.joined_at for t in queue if t.id not in gone]
                if left:
                    self.b.put(META, OLDEST, {"t": min(left)})
                else:
                    self.b.delete(META, OLDEST)
            return claimed

    def seated(self, proposal_id: str, room_id: str, now: float) -> None:
        """The room of a claimed proposal is made: every person of it is answered ``seated``."""
        with self._locked():
            p = self.b.get(PROPS, proposal_id)
            if p is None:
                return
            self.b.put_many(WHO, {str(u): {"kind": "r", "room": room_id, "until": now + SEATED_KEEP_S}
                                  for t in p["tickets"] for u in t["members"]})
            self.b.delete(PROPS, proposal_id)

    def seat_failed(self, proposal_id: str, busy: set[int] | None = None) -> None:
        """The room of a claimed proposal could not be made: everyone goes back to the queue, except
        the tickets holding someone of ``busy`` (people seated in a game under way meanwhile), which
        leave it with no decline counted."""
        with self._locked():
            p = self.b.get(PROPS, proposal_id)
            if p is not None:
                self._fail(p, set(busy or ()), time.time(), declined=False)

    def counts(self) -> dict[str, int]:
        """``{"tickets", "people", "proposals"}``: the queue's size now (for the lobby and tests)."""
        with self._locked():
            tickets = self.b.all(TICKETS)
            return {"tickets": len(tickets), "people": sum(len(t["members"]) for t in tickets.values()),
                    "proposals": len(self.b.all(PROPS))}


__all__ = ["CLAIM_STALE_S", "SEATED_KEEP_S", "SWEEP_EVERY_S", "MatchError", "MatchQueue", "MemoryBackend", "RedisBackend"]
