"""Server settings: database URL, secret, static files."""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_DB_URL = "sqlite:///./guandan.db"
#: Prefix of a cluster's Redis keys and channels when none is given (what clusters used before it
#: could be chosen, so that their processes keep finding one another's rooms).
DEFAULT_REDIS_PREFIX = "gd:"
STATIC_DIR = Path(__file__).with_name("static")
#: Per-decision budget of a review (复盘) served by the web server: 40 sampled worlds, 6 moves
#: compared, at most 1.5 s of sampling per decision (about half a minute for a seat's deal).
DEFAULT_REVIEW_BUDGET = "worlds=40,candidates=6,seconds=1.5"


def default_node_name() -> str:
    """``GUANDAN_NODE_NAME``, else ``<hostname>-<pid>``: the name this process gives itself in a
    cluster's logs, leases and ``/healthz``."""
    return os.environ.get("GUANDAN_NODE_NAME") or f"{socket.gethostname()}-{os.getpid()}"


@dataclass(frozen=True)
class Settings:
    """Server configuration.

    Attributes:
        db_url: SQLAlchemy URL; default ``sqlite:///./guandan.db``, or the ``GUANDAN_DATABASE_URL``
            environment variable; PostgreSQL as ``postgresql+psycopg://user@host:5432/db``.
        static_dir: directory of the browser UI.
        bot_delay_s: seconds a bot waits before acting (so people can follow the table).
        session_days: lifetime of a login session in days.
        seeded_deals: tests only: deal every room's game from ``random.Random(room seed)`` so that a
            test plays known hands. Never set by ``guandan serve``: anyone who knows the seed knows
            every hand. Off (the default), deals, first leaders and random ties come from
            ``secrets.SystemRandom`` and no seed exists (README "Security").
        max_body_bytes: largest accepted HTTP request body (bytes); larger ones get 413 and are not read.
        forwarded_allow_ips: proxy addresses whose ``X-Forwarded-For`` gives the client address
            (``guandan serve --forwarded-allow-ips``); empty: the header is ignored.
        allowed_origins: extra ``Origin`` values allowed to open table websockets (same origin always is).
        max_ws_per_room: spectator websockets allowed per room (in a cluster: over every process,
            :mod:`guandan.server.cluster.sockets`); the sockets of
            accounts that hold a seat in the room are never refused nor counted (each seated
            account keeps at most ``ws.MAX_TABS_PER_SEAT`` open, the oldest closed first).
        max_ws_per_address: open websockets allowed per client address (all rooms; in a cluster
            over every process).
        ws_ping_interval_s: seconds between websocket pings; a peer that does not answer within
            ``ws_ping_timeout_s`` is closed (a dropped client then counts as away).
        ws_ping_timeout_s: see ``ws_ping_interval_s``.
        hash_concurrency: password hashes computed at once (argon2, about 170 ms and 64 MiB each);
            default half the CPU cores (at least 1), so that hashing never starves the tables.
        db_timeout_s: seconds a request waits for a database connection before a 503 ``database_busy``.
        registrations_per_hour: accounts one client address may register per hour (0: no limit).
        guests_per_hour: guest accounts one client address may create per hour (0: no limit).
        public_url: the address people use to reach the server (``"http://192.168.1.20:8000"``,
            no trailing slash), sent to the UI for invite links; ``None``: the UI uses the address
            the browser used. Default: ``GUANDAN_PUBLIC_URL`` or ``None``.
        ready_timeout_s: seconds the table waits between deals for every person to press "next"
            before it starts the next deal anyway.
        idle_close_s: seconds a live game may have no seated person connected before it is closed
            (ended unfinished, unrated; :mod:`guandan.server.idle_close`); 0: never. Default 600.
        timeouts_to_auto: consecutive move-clock timeouts of one seat that turn 托管 on (each
            timeout before that plays one move for the seat).
        default_clock_lead_s, default_clock_follow_s: move clocks (seconds) given by default to a
            room that starts with more than one person (docs/rules.md R53: 60 s lead, 30 s follow).
        redis_url: cluster mode (``guandan serve --redis``): the Redis URL (``redis://127.0.0.1:6379/0``)
            through which several server processes on one PostgreSQL database share the live tables
            (:mod:`guandan.server.cluster`); default ``GUANDAN_REDIS_URL`` or ``None`` (one process).
        node_name: this process's name in the cluster (logs, lease tokens, ``/healthz``); default
            ``GUANDAN_NODE_NAME`` or ``<hostname>-<pid>``.
        redis_prefix: cluster mode: the prefix of every Redis key and channel of this cluster
            (``guandan serve --redis-prefix``); default ``GUANDAN_REDIS_PREFIX`` or ``gd:``. Clusters
            that share one Redis need different prefixes (each sees only its own rooms); every
            process of one cluster must use the same one.
        lease_s: cluster mode: seconds a table's ownership lease lasts without renewal (the owner
            renews it three times per lease); a dead owner's tables are taken over after about
            this long.
        review_budget: the per-decision budget of a deal's review (复盘, :mod:`guandan.server.reviews`;
            keys of :meth:`guandan.review.Budget.parse`); default ``GUANDAN_REVIEW_BUDGET`` or
            :data:`DEFAULT_REVIEW_BUDGET`: 40 worlds, 6 moves compared, at most 1.5 s per decision.
        review_workers: processes that compute reviews (one review at a time each), apart from
            the bots' process pool.
        review_jobs_per_account: reviews one account may have queued or computing at once.
        review_jobs_max: reviews queued or computing at once on this server (all accounts).
        bot_games_per_account: live games against bots (quick games, rooms started with bots,
            play again, challenge boards) one account may have; another one is refused with 409
            ``quick_game_running`` (0: no limit).
        bot_games_per_address: live games with bots one client address may have started (all
            accounts; 429 ``too_many_quick_games``; 0: no limit; ``guandan serve
            --bot-games-per-address``). See :mod:`guandan.server.botgames`.
        search_max_wait_s: seconds a searching bot's (``hard``/``expert``) decision may wait for
            the shared bot process pool before the heuristic plays it (1; 0: no gate, the pool
            serves decisions first come, first served). ``search_max_waiting``: such decisions
            waiting at once (4). See :mod:`guandan.server.table.search_gate`.
        challenge_boards, challenge_preset, challenge_bots: how each day's duplicate challenge is
            made (:mod:`guandan.server.challenge`): 12 boards, the ``official`` preset, bots at
            level ``normal``; ``challenge_start_grace_s``: seconds a just-started board waits
            for its player's page before the bot covers an absent player (20).
        friends_processes: worker processes that answer ``GET /api/friends``, the panel every open
            lobby polls (:mod:`guandan.server.process_calls`: the panel's work then never takes the
            tables' interpreter lock); 0: two threads of the server process. Default 0 here, 2 in
            ``guandan serve`` (``--friends-processes``); an in-memory SQLite database always uses
            the threads. The workers start with the server.
        teammatch_start_grace_s: the same for a team match's board (复式, :mod:`guandan.server.api_teammatch`, 20).
    """

    db_url: str = field(default_factory=lambda: os.environ.get("GUANDAN_DATABASE_URL", DEFAULT_DB_URL))
    static_dir: Path = STATIC_DIR
    bot_delay_s: float = 0.6
    session_days: int = 30
    seeded_deals: bool = False
    max_body_bytes: int = 16 * 1024
    forwarded_allow_ips: tuple[str, ...] = ()
    allowed_origins: tuple[str, ...] = ()
    max_ws_per_room: int = 200
    max_ws_per_address: int = 50
    ws_ping_interval_s: float = 5.0
    ws_ping_timeout_s: float = 5.0
    hash_concurrency: int = field(default_factory=lambda: max(1, (os.cpu_count() or 2) // 2))
    db_timeout_s: float = 5.0
    registrations_per_hour: int = 20
    guests_per_hour: int = 120
    public_url: str | None = field(default_factory=lambda: os.environ.get("GUANDAN_PUBLIC_URL") or None)
    ready_timeout_s: float = 20.0
    idle_close_s: float = 600.0
    timeouts_to_auto: int = 2
    default_clock_lead_s: float = 60.0
    default_clock_follow_s: float = 30.0
    redis_url: str | None = field(default_factory=lambda: os.environ.get("GUANDAN_REDIS_URL") or None)
    node_name: str = field(default_factory=default_node_name)
    redis_prefix: str = field(default_factory=lambda: os.environ.get("GUANDAN_REDIS_PREFIX") or DEFAULT_REDIS_PREFIX)
    lease_s: float = 3.0
    review_budget: str = field(default_factory=lambda: os.environ.get("GUANDAN_REVIEW_BUDGET") or DEFAULT_REVIEW_BUDGET)
    review_workers: int = 1
    review_jobs_per_account: int = 1
    review_jobs_max: int = 4
    bot_games_per_account: int = 1
    bot_games_per_address: int = 4
    search_max_wait_s: float = 1.0
    search_max_waiting: int = 4
    challenge_boards: int = 12
    challenge_preset: str = "official"
    challenge_bots: str = "normal"
    challenge_start_grace_s: float = 20.0
    #: seconds a just-started team match board (复式) waits for a person's page before the bot covers
    teammatch_start_grace_s: float = 20.0
    friends_processes: int = 0
