"""``guandan serve``: run the multiplayer web server (accounts, rooms, live tables, browser UI)."""

from __future__ import annotations

from typing import Any

import typer

from .app import app
from .output import error_text


@app.command("serve")
def serve_command(
    host: str = typer.Option(
        "127.0.0.1", "--host",
        help="Interface to listen on: 127.0.0.1 = this machine only; 0.0.0.0 = every interface, so that "
        "friends on the same network can join (open the port in the firewall).",
    ),
    port: int = typer.Option(8000, "--port", help="TCP port (0: any free port; the URL printed says which)."),
    db: str = typer.Option(
        None,
        "--db",
        help="Database: a SQLite file path (guandan.db) or URL (sqlite:///./guandan.db), or a PostgreSQL URL "
        "(postgresql://user@127.0.0.1:5432/db); default: $GUANDAN_DATABASE_URL, else sqlite:///./guandan.db. "
        "One server per database (a second server on it exits) unless --redis makes a cluster.",
    ),
    redis: str = typer.Option(
        None, "--redis",
        help="Cluster mode: a Redis URL (redis://127.0.0.1:6379/0) shared by several guandan serve processes "
        "on one PostgreSQL database behind one address; each live table is owned by one process and taken "
        "over by another within --lease seconds if it dies (README \"Running a cluster\"). Default: "
        "$GUANDAN_REDIS_URL, else one process.",
    ),
    redis_prefix: str = typer.Option(
        None, "--redis-prefix",
        help="Cluster mode: prefix of every Redis key and channel of this cluster (default: "
        "$GUANDAN_REDIS_PREFIX, else gd:). Clusters sharing one Redis need different prefixes; the processes "
        "of one cluster the same one.",
    ),
    node_name: str = typer.Option(
        None, "--node-name", help="This process's name in logs, leases and /healthz (default: "
        "$GUANDAN_NODE_NAME, else hostname-pid).",
    ),
    lease: float = typer.Option(
        3.0, "--lease", help="Cluster mode: seconds a table's ownership lasts without renewal (failover "
        "time is about this long).",
    ),
    log_format: str = typer.Option(
        "text", "--log-format", help="Log lines: text (uvicorn's), json (JSON Lines) or kv (key=value); "
        "json and kv carry the node and the room.",
    ),
    forwarded_allow_ips: str = typer.Option(
        "",
        "--forwarded-allow-ips",
        help="Comma-separated addresses of reverse proxies whose X-Forwarded-For header gives the client "
        "address (for the login and account limits). Default: none, the header is ignored.",
    ),
    allowed_origins: str = typer.Option(
        "", "--allowed-origins",
        help="Comma-separated extra Origins (https://example.org) allowed to open table websockets "
        "(the server's own origin always is).",
    ),
    max_ws_per_room: int = typer.Option(
        200, "--max-ws-per-room",
        help="Spectator websockets allowed per room (0: no limit; a cluster counts them over every process); "
        "seated players' are never refused.",
    ),
    max_ws_per_address: int = typer.Option(
        50, "--max-ws-per-address", help="Open websockets allowed per client address (0: no limit; a cluster "
        "counts them over every process)."
    ),
    guests_per_hour: int = typer.Option(120, "--guests-per-hour", help="Guest accounts one address may create per hour (0: no limit)."),
    registrations_per_hour: int = typer.Option(
        20, "--registrations-per-hour", help="Accounts one address may register per hour (0: no limit)."
    ),
    bot_games_per_address: int = typer.Option(
        4, "--bot-games-per-address", help="Live games with bots (quick games, rooms started with bots, play "
        "again, challenge boards) one client address may have started (0: no limit, for load tests)."
    ),
    bot_delay: float = typer.Option(0.6, "--bot-delay", help="Seconds a bot waits before it acts (0 for load tests)."),
    log_level: str = typer.Option("info", "--log-level", help="uvicorn log level: critical, error, warning, info, debug."),
    public_url: str = typer.Option(
        None, "--public-url",
        help="The address people use to reach this server, e.g. http://192.168.1.20:8000 or "
        "https://guandan.example.org, put in invite links (default: $GUANDAN_PUBLIC_URL, else the "
        "address each browser used).",
    ),
    ready_timeout: float = typer.Option(
        20.0, "--ready-timeout", help="Seconds the table waits between deals for every person to press "
        "\"next\" before the next deal starts anyway.",
    ),
    idle_close: float = typer.Option(
        600.0, "--idle-close", help="Seconds a game may have no seated person connected before it is "
        "closed (ended unfinished, unrated; spectators do not count); 0 = never.",
    ),
    friends_processes: int = typer.Option(
        2, "--friends-processes", help="Worker processes that answer the friends panel every open lobby "
        "polls, apart from the tables' process (0: threads of the server process; 0-16).",
    ),
    timeouts_to_auto: int = typer.Option(
        2, "--timeouts-to-auto", help="Consecutive move-clock timeouts that turn 托管 on (each one before "
        "that plays a single move for the player).",
    ),
) -> None:
    """Run the web server: migrate the database, restore games in progress, serve http://HOST:PORT/."""
    import logging

    from rich.console import Console

    err = Console(stderr=True, soft_wrap=True)
    if not 0 <= port <= 65535:
        err.print(error_text(f"--port must be 0-65535, not {port}"))
        raise typer.Exit(2)
    if bot_delay < 0 or bot_delay > 60:
        err.print(error_text("--bot-delay must be between 0 and 60 seconds"))
        raise typer.Exit(2)

    import uvicorn

    from guandan.server.app import create_app, tune_gc, uvicorn_options
    from guandan.server.db import database_url, migrate
    from guandan.server.dblock import DatabaseInUse, DatabaseLock
    from guandan.server.logs import LOG_FORMATS
    from guandan.runtime.listen import listen_socket
    from guandan.server.settings import Settings, default_node_name

    if min(guests_per_hour, registrations_per_hour, max_ws_per_room, max_ws_per_address, bot_games_per_address) < 0:
        err.print(error_text("--guests-per-hour, --registrations-per-hour, --max-ws-per-room, "
                             "--max-ws-per-address and --bot-games-per-address must be 0 or more"))
        raise typer.Exit(2)
    if public_url is not None:
        from urllib.parse import urlsplit

        parts = urlsplit(public_url)
        try:
            port_ok = parts.port is None or parts.port > 0  # ValueError: not a port, or above 65535
        except ValueError:
            port_ok = False
        if parts.scheme not in ("http", "https") or not parts.hostname or not port_ok:
            err.print(error_text(f"--public-url must look like http://host:port or https://host, not {public_url!r}"))
            raise typer.Exit(2)
        public_url = public_url.rstrip("/")
    if not 0 < ready_timeout <= 600:
        err.print(error_text("--ready-timeout must be between 0 and 600 seconds"))
        raise typer.Exit(2)
    if not 0 <= idle_close <= 7 * 86400:
        err.print(error_text("--idle-close must be between 0 (never) and 604800 seconds (a week)"))
        raise typer.Exit(2)
    if not 1 <= timeouts_to_auto <= 100:
        err.print(error_text("--timeouts-to-auto must be between 1 and 100"))
        raise typer.Exit(2)
    if not 0 <= friends_processes <= 16:
        err.print(error_text("--friends-processes must be between 0 and 16"))
        raise typer.Exit(2)
    if log_format not in LOG_FORMATS:
        err.print(error_text(f"--log-format must be one of {', '.join(LOG_FORMATS)}, not {log_format!r}"))
        raise typer.Exit(2)
    if not 0.3 <= lease <= 120:
        err.print(error_text("--lease must be between 0.3 and 120 seconds"))
        raise typer.Exit(2)
    node_name = node_name or default_node_name()
    if not node_name or len(node_name) > 100 or any(c.isspace() or c == ":" for c in node_name):
        err.print(error_text("--node-name must be 1-100 characters with no spaces or ':'"))
        raise typer.Exit(2)
    redis = redis if redis is not None else Settings().redis_url
    redis_prefix = redis_prefix if redis_prefix is not None else Settings().redis_prefix
    from guandan.server.cluster.keys import prefix_problem

    problem = prefix_problem(redis_prefix)
    if problem is not None:
        err.print(error_text(f"--redis-prefix: {problem}"))
        raise typer.Exit(2)
    try:
        url = database_url(db if db is not None else Settings().db_url)
    except ValueError as e:
        err.print(error_text(e))
        raise typer.Exit(2) from None
    settings = Settings(
        db_url=url, bot_delay_s=bot_delay,
        forwarded_allow_ips=tuple(x.strip() for x in forwarded_allow_ips.split(",") if x.strip()),
        allowed_origins=tuple(x.strip().rstrip("/") for x in allowed_origins.split(",") if x.strip()),
        guests_per_hour=guests_per_hour, registrations_per_hour=registrations_per_hour,
        max_ws_per_room=max_ws_per_room, max_ws_per_address=max_ws_per_address,
        bot_games_per_address=bot_games_per_address, ready_timeout_s=ready_timeout, timeouts_to_auto=timeouts_to_auto,
        idle_close_s=idle_close, friends_processes=friends_processes,
        redis_url=redis or None, node_name=node_name, lease_s=lease, redis_prefix=redis_prefix,
        **({"public_url": public_url} if public_url is not None else {}),
    )
    if settings.redis_url:
        from guandan.server.cluster import _shown, import_redis, redis_url_problem

        if not settings.db_url.startswith("postgresql"):
            err.print(error_text("cluster mode (--redis) needs a PostgreSQL database (--db postgresql+psycopg://...)"))
            raise typer.Exit(2)
        problem = redis_url_problem(settings.redis_url)
        if problem is not None:
            err.print(error_text(f"--redis: {problem}"))
            raise typer.Exit(2)
        try:
            redis_mod = import_redis()
            client = redis_mod.Redis.from_url(settings.redis_url, socket_connect_timeout=5)
            client.ping()
            client.close()
        except Exception as e:  # noqa: BLE001 - redis-py missing, bad URL, Redis down: one line
            first = (str(e).strip().splitlines() or [type(e).__name__])[0]
            err.print(error_text(f"cannot use Redis {_shown(settings.redis_url)!r}: {first}"))
            raise typer.Exit(2) from None
    if log_format != "text":
        from guandan.server.logs import configure

        configure(log_format, settings.node_name, log_level)
    # one server per database, held until this process exits; the processes of a cluster share
    # the lock (it still keeps a single server off their database); the migrations take a
    # PostgreSQL advisory lock of their own while they run. Once migrated, the server bumps the
    # database's fencing token before it restores any live room: a server whose lock lapsed
    # cannot store a line after this one started (a single server checks it in each record write)
    lock = DatabaseLock(settings.db_url, shared=bool(settings.redis_url))
    try:
        lock.acquire()
        migrate(settings.db_url)
        lock.claim()
        application = create_app(settings)
        if not settings.redis_url:
            application.state.manager.store.set_fence(lock.fence)
    except DatabaseInUse as e:
        err.print(error_text(e))
        raise typer.Exit(2) from None
    except Exception as e:  # noqa: BLE001 - bad URL, unreachable database, failed migration: one line
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        err.print(error_text(f"cannot open the database {_db_shown(settings.db_url)!r}: {first}"))
        raise typer.Exit(2) from None

    try:  # proto IPPROTO_TCP: asyncio then turns Nagle off on each connection (guandan.runtime.listen)
        sock = listen_socket(host, port)
    except OSError as e:
        err.print(error_text(f"cannot listen on {host}:{port}: {e.strerror or e}"))
        raise typer.Exit(2) from None
    bound = sock.getsockname()[1]
    shown = "127.0.0.1" if host in ("0.0.0.0", "::") else host
    shown = f"[{shown}]" if ":" in shown else shown
    print(f"pyguandan server: open http://{shown}:{bound}/  (database {_db_shown(settings.db_url)}; Ctrl+C to stop)", flush=True)
    if settings.redis_url:
        print(f"cluster node {settings.node_name}: Redis {settings.redis_url.split('@')[-1]} (keys {settings.redis_prefix}*), "
              f"lease {lease:g} s", flush=True)
    if host in ("0.0.0.0", "::"):
        lan = _lan_address()
        if lan is not None:
            print(f"friends on this network: http://{lan}:{bound}/", flush=True)
    if settings.public_url:
        print(f"invite links use {settings.public_url}", flush=True)
    extra_cfg: dict[str, object] = {"log_config": None} if log_format != "text" else {}
    config = uvicorn.Config(application, log_level=log_level, **uvicorn_options(settings), **extra_cfg)
    class Server(uvicorn.Server):
        async def shutdown(self, sockets: Any = None) -> None:
            # uvicorn waits for every open response before the app's own shutdown: end the lobbies'
            # friends streams (long-lived responses) first, or a stop would wait for them forever
            push = getattr(application.state, "friends_push", None)
            if push is not None:
                push.close_all()
            await super().shutdown(sockets)

    server = Server(config)

    def lock_lost(reason: str) -> None:  # the lock's watcher thread: store nothing more, then exit
        application.state.manager.writer.halt()
        logging.getLogger("guandan.server").critical(
            "the lock on the database %s was lost (%s): another server may serve it now; this server stores "
            "nothing more, stops its tables and exits", _db_shown(settings.db_url), reason)
        server.should_exit = True

    lock.watch(lock_lost)
    tune_gc()
    try:
        server.run(sockets=[sock])
    finally:
        lock.release()
    if lock.lost is not None:
        raise typer.Exit(3)


def _db_shown(url: str) -> str:
    """The database URL ``url`` with its password, if any, replaced by ``***`` (for the console)."""
    from sqlalchemy.engine import make_url

    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:  # noqa: BLE001 - not a URL: nothing to hide
        return url


def _lan_address() -> str | None:
    """This machine's address on its local network (the interface of the default route), or ``None``.
    No packet is sent: connecting a UDP socket only picks the route."""
    import socket

    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.connect(("192.0.2.1", 9))  # TEST-NET-1: never routed anywhere
        addr = s.getsockname()[0]
    except OSError:
        return None
    finally:
        s.close()
    return None if addr.startswith("127.") or addr == "0.0.0.0" else addr
