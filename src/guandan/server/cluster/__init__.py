"""Cluster mode: several ``guandan serve`` processes on one PostgreSQL database and one Redis.

``guandan serve --db postgresql+psycopg://... --redis redis://...`` runs any number of processes
behind one address (no sticky sessions). What must last is in PostgreSQL (rooms, records, accounts,
history, ratings); Redis carries who owns which table and the messages between processes.

Ownership (one owner per live table):
    The owner of room ``R`` holds the lease ``gd:lease:R`` (``SET NX PX``, value a token unique to
    this process and acquisition). It renews every lease three times per ``lease_s`` with a Lua
    compare-and-set on its token, and re-checks the lease before every write to the database
    (fencing: a stalled owner that lost its lease writes nothing and publishes nothing). Only the
    owner holds the :class:`~guandan.server.table.flow.Table` with the authoritative game, its bots and
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
    (``gd:ctl``), so another process takes them at once. A taken table whose replayed game is over
    but whose room is still ``playing`` (the owner died between storing the last line and the
    game's end) is finished by the new owner. Services whose work moves with a table register
    ``ClusterNode.on_take`` / ``on_drop`` hooks (online tournament rounds:
    :mod:`guandan.server.tournament_cluster`).

Modules, one concern each: :mod:`~.keys` (Redis key names, scripts, URLs), :mod:`~.leases`
(ownership leases and fencing of the store's writes), :mod:`~.proxy` (the connections' side: a
room seen from the process holding its sockets, and the owner's per-seat channels), :mod:`~.node`
(this process's part: taking tables over, presence, its loops), :mod:`~.routing` (messages to the
owner, frames published once stored),
:mod:`~.limits` (login and rate limits shared by every process), :mod:`~.snapshots` (what a new
owner restores beside the record), :mod:`~.identity` (forwarded messages signed with the sender's
session key: the owner never believes a ``uid`` it cannot check), :mod:`~.sockets` (the socket
caps counted over every process) and :mod:`~.outage` (a Redis outage answers a retryable 503).
The names below are importable from ``guandan.server.cluster`` itself.

Key prefix: ``gd:`` above is the default prefix (``guandan serve --redis-prefix``); clusters that
share one Redis use different ones. Redis is a trust boundary: whoever reads it sees every hand
(README "Running a cluster": a dedicated instance, an ACL user; a warning is logged at start when
Redis answers clients without a password).

redis-py (``pip install -e '.[cluster]' in the pyguandan checkout``) is imported only in cluster mode.
"""

from __future__ import annotations

from __future__ import annotations

from ..errors import OWNER_UNAVAILABLE
from .keys import RELEASE_LUA, RENEW_LUA, SPEC, Keys, _shown, import_redis, redis_url_problem
from .leases import LeaseLost, Leases, make_store_fenced
from .limits import WINDOW_LUA, SharedLoginLimiter, SharedRateLimiter
from .node import ClusterNode
from .proxy import ChannelConn, ProxyTable, raw_frame

__all__ = ["OWNER_UNAVAILABLE", "RELEASE_LUA", "RENEW_LUA", "SPEC", "WINDOW_LUA", "ChannelConn", "ClusterNode", "Keys", "LeaseLost", "Leases", "ProxyTable",
           "SharedLoginLimiter", "SharedRateLimiter", "_shown", "import_redis", "make_store_fenced", "raw_frame",
           "redis_url_problem"]
