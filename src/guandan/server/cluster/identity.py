"""Who sent a forwarded message: the owner of a table checks the ``uid`` another process puts in
a message it forwards, instead of believing it (issue 26 item 11).

A process holding a person's websocket forwards that person's messages to the table's owner over
Redis (``{prefix}in:ROOM``). Anyone who can publish on that Redis could otherwise send
``{"uid": 7, "text": "act ..."}`` and play account 7's cards. So the forwarding process signs each
message with HMAC-SHA256 under the person's **session key** (the SHA-256 of the session cookie,
what the ``sessions`` table stores; it never travels through Redis), over the room, the reply
channel, the request id, the account id and name, the send time and the message text. The owner
looks up the live sessions of that account in the database (cached for
:data:`SESSION_CACHE_S` seconds, read again, at most once a second, for a signature that matches
none, such as a new login's; forgotten when a session is revoked) and believes the ``uid`` only when one of them gives
the same signature, the send time is within :data:`MAX_AGE_S` seconds of its clock, and the
request id was not seen before (a copied message cannot be replayed). Otherwise the message is
handled as a spectator's (it can change nothing) and a warning is logged.

Why a signature under the session key rather than a secret shared by the processes: the session
key is already a secret every process can reach through the database (the trust root of the
cluster) and no Redis client can; a shared secret would be one more thing to configure and rotate,
and kept in Redis it would protect nothing. Logouts tell the other processes a hash of the session
key, never the key itself.

Redis remains a trust boundary all the same (README "Running a cluster"): a client that can read
it sees every seat's hidden cards, and one that can publish can disturb tables (fake frames to
sockets, room operations); give the cluster its own ACL user and instance.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

log = logging.getLogger("guandan.server.cluster")

#: Largest difference (seconds) between a forwarded message's send time and the owner's clock.
MAX_AGE_S = 30.0
#: Seconds the owner keeps an account's session keys before reading them again.
SESSION_CACHE_S = 30.0
#: Messages of one account that may wait for its sessions to be read again (more are not believed).
MAX_WAITING = 32


def signature(session_key: str, room: str, node: str, req: str, uid: int, name: str | None, ts: float,
              text: str) -> str:
    """HMAC-SHA256 (hex) of a forwarded message under the sender's session key.

    Args:
        session_key: ``auth.token_key`` of the person's session (64 hex digits); room: the room id;
        node: the reply channel's member name; req: the request id; uid, name: the account;
        ts: send time (epoch seconds); text: the client's message text.
    """
    body = json.dumps([room, node, req, uid, name, ts, text], ensure_ascii=True, separators=(",", ":"))
    return hmac.new(session_key.encode("ascii", "replace"), body.encode("ascii"), hashlib.sha256).hexdigest()


def revoke_hash(session_key: str) -> str:
    """What a logout publishes for ``session_key`` (SHA-256 of it: the key itself never goes to Redis)."""
    return hashlib.sha256(b"gd-revoke:" + session_key.encode("ascii", "replace")).hexdigest()


def live_session_keys(session_factory: Callable[[], Any], uid: int) -> list[str]:
    """The keys of ``uid``'s sessions that have not expired (blocking: run it in a thread)."""
    from sqlalchemy import select

    from ..models import UserSession, utcnow

    with session_factory() as db:
        rows = db.execute(select(UserSession.token).where(UserSession.user_id == uid,
                                                           UserSession.expires_at > utcnow())).scalars().all()
    return [str(r) for r in rows]


class ForwardedIdentity:
    """The owner's check of forwarded messages (see the module's docstring).

    Args:
        run_db: runs a blocking function in the database threads (``TableManager.run_db``).
        session_factory: the database sessions (for :func:`live_session_keys`).
    """

    def __init__(self, run_db: Callable[..., Awaitable[Any]], session_factory: Callable[[], Any]) -> None:
        self.run_db = run_db
        self.session_factory = session_factory
        self._keys: dict[int, tuple[float, list[str]]] = {}
        #: request ids seen in the last 2 * MAX_AGE_S seconds, and (forget at, id) oldest first
        self._seen: set[str] = set()
        self._seen_order: deque[tuple[float, str]] = deque()
        #: per account: one reading of its sessions at a time, and how many messages wait for it
        self._locks: dict[int, asyncio.Lock] = {}
        self._waiting: dict[int, int] = {}
        self._last_warning = -1e9
        #: forwarded messages whose uid was not believed (monitoring and tests)
        self.refused = 0

    def sign(self, msg: dict[str, Any], room: str, session_key: str | None) -> dict[str, Any]:
        """Add the send time ``ts`` and, for a person (``msg["uid"]`` set and a session key),
        the signature ``sig`` to the message ``msg`` (``node``, ``req``, ``uid``, ``name``,
        ``text``) before it is published. Returns ``msg``."""
        msg["ts"] = time.time()
        if msg.get("uid") is not None and session_key:
            msg["sig"] = signature(session_key, room, msg["node"], msg["req"], int(msg["uid"]), msg.get("name"),
                                   msg["ts"], msg["text"] if isinstance(msg.get("text"), str) else "")
        return msg

    async def verified_uid(self, room: str, msg: dict[str, Any]) -> int | None:
        """The ``uid`` of the forwarded message ``msg`` if its signature, send time and request id
        check out (see the module's docstring), else ``None`` (a spectator; logged)."""
        uid = msg.get("uid")
        if uid is None:
            return None
        why = self._why_not(msg)
        if why is None:
            ok = await self._matches(room, msg)
            why = None if ok else "the signature matches none of the account's sessions"
        if why is None:
            return int(uid)
        self.refused += 1
        now = time.monotonic()
        if now - self._last_warning >= 10.0:
            self._last_warning = now
            log.warning("room %s: a forwarded message for account %s was not believed (%s)", room, str(uid)[:20], why,
                        extra={"room": room})
        return None

    def _why_not(self, msg: dict[str, Any]) -> str | None:
        uid, ts, req, sig = msg.get("uid"), msg.get("ts"), msg.get("req"), msg.get("sig")
        if not isinstance(uid, int) or isinstance(uid, bool) or not isinstance(sig, str) or not isinstance(req, str) \
                or not isinstance(ts, (int, float)) or not isinstance(msg.get("node"), str) \
                or not isinstance(msg.get("text"), str) or not (msg.get("name") is None or isinstance(msg["name"], str)):
            return "unsigned or malformed"
        now = time.time()
        if abs(now - float(ts)) > MAX_AGE_S:
            return "sent too long ago"
        while self._seen_order and self._seen_order[0][0] < now:  # oldest first: forget expired ids
            self._seen.discard(self._seen_order.popleft()[1])
        if req in self._seen:
            return "a replayed request"
        self._seen.add(req)
        self._seen_order.append((now + 2 * MAX_AGE_S, req))
        return None

    async def _matches(self, room: str, msg: dict[str, Any]) -> bool:
        uid = int(msg["uid"])
        want = msg["sig"]

        def good(keys: list[str]) -> bool:
            return any(hmac.compare_digest(signature(k, room, msg["node"], msg["req"], uid, msg.get("name"),
                                                     msg["ts"], msg["text"]), want) for k in keys)

        cached = self._keys.get(uid)
        if cached is not None and time.monotonic() - cached[0] < SESSION_CACHE_S and good(cached[1]):
            return True
        # not among the cached keys (a new login, or a forgery): read the account's sessions again,
        # at most once a second per account, one reading at a time; a flood of forged messages
        # for one account waits in a bounded queue instead of reaching the database
        if self._waiting.get(uid, 0) >= MAX_WAITING:
            return False
        self._waiting[uid] = self._waiting.get(uid, 0) + 1
        try:
            async with self._locks.setdefault(uid, asyncio.Lock()):
                cached = self._keys.get(uid)
                if cached is not None:
                    age = time.monotonic() - cached[0]
                    if age < SESSION_CACHE_S and good(cached[1]):
                        return True  # read meanwhile by another message
                    if age < 1.0:
                        await asyncio.sleep(1.0 - age)
                keys = await self.run_db(live_session_keys, self.session_factory, uid)
                self._keys[uid] = (time.monotonic(), keys)
                if len(self._keys) > 10_000:
                    self._keys.pop(next(iter(self._keys)))
                return good(keys)
        finally:
            self._waiting[uid] -= 1
            if not self._waiting[uid]:
                self._waiting.pop(uid, None)
                self._locks.pop(uid, None)

    def revoked(self, hashed: str) -> None:
        """A session was revoked (:func:`revoke_hash` of its key): forget the cached keys that hold it."""
        for uid, (_, keys) in list(self._keys.items()):
            if any(hmac.compare_digest(revoke_hash(k), hashed) for k in keys):
                self._keys.pop(uid, None)
