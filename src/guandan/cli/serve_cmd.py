"""``guandan serve``: run the multiplayer web server (accounts, rooms, live tables, browser UI)."""

from __future__ import annotations

import typer

from .app import app


@app.command("serve")
def serve_command(
    host: str = typer.Option("127.0.0.1", "--host", help="Interface to listen on (127.0.0.1: this machine only)."),
    port: int = typer.Option(8000, "--port", help="TCP port (0: any free port; the URL printed says which)."),
    db: str = typer.Option(
        None,
        "--db",
        help="Database: a SQLite file path (guandan.db) or URL (sqlite:///./guandan.db), or a PostgreSQL URL "
        "(postgresql://user@127.0.0.1:5432/db); default: $GUANDAN_DATABASE_URL, else sqlite:///./guandan.db. "
        "One server per database: a second server on it exits.",
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
    max_ws_per_room: int = typer.Option(200, "--max-ws-per-room", help="Open websockets allowed per room (0: no limit)."),
    max_ws_per_address: int = typer.Option(
        50, "--max-ws-per-address", help="Open websockets allowed per client address (0: no limit)."
    ),
    guests_per_hour: int = typer.Option(120, "--guests-per-hour", help="Guest accounts one address may create per hour (0: no limit)."),
    registrations_per_hour: int = typer.Option(
        20, "--registrations-per-hour", help="Accounts one address may register per hour (0: no limit)."
    ),
    bot_delay: float = typer.Option(0.6, "--bot-delay", help="Seconds a bot waits before it acts (0 for load tests)."),
    log_level: str = typer.Option("info", "--log-level", help="uvicorn log level: critical, error, warning, info, debug."),
) -> None:
    """Run the web server: migrate the database, restore games in progress, serve http://HOST:PORT/."""
    import socket

    from rich.console import Console

    err = Console(stderr=True, soft_wrap=True)
    if not 0 <= port <= 65535:
        err.print(f"[red]error:[/red] --port must be 0-65535, not {port}")
        raise typer.Exit(2)
    if bot_delay < 0 or bot_delay > 60:
        err.print("[red]error:[/red] --bot-delay must be between 0 and 60 seconds")
        raise typer.Exit(2)

    import uvicorn

    from guandan.server.app import create_app, uvicorn_options
    from guandan.server.db import database_url, migrate
    from guandan.server.dblock import DatabaseInUse, DatabaseLock
    from guandan.server.settings import Settings

    if min(guests_per_hour, registrations_per_hour, max_ws_per_room, max_ws_per_address) < 0:
        err.print("[red]error:[/red] --guests-per-hour, --registrations-per-hour, --max-ws-per-room and "
                  "--max-ws-per-address must be 0 or more")
        raise typer.Exit(2)
    try:
        url = database_url(db if db is not None else Settings().db_url)
    except ValueError as e:
        err.print(f"[red]error:[/red] {e}")
        raise typer.Exit(2) from None
    settings = Settings(
        db_url=url, bot_delay_s=bot_delay,
        forwarded_allow_ips=tuple(x.strip() for x in forwarded_allow_ips.split(",") if x.strip()),
        allowed_origins=tuple(x.strip().rstrip("/") for x in allowed_origins.split(",") if x.strip()),
        guests_per_hour=guests_per_hour, registrations_per_hour=registrations_per_hour,
        max_ws_per_room=max_ws_per_room, max_ws_per_address=max_ws_per_address,
    )
    lock = DatabaseLock(settings.db_url)
    try:
        lock.acquire()  # one server per database, held until this process exits
        migrate(settings.db_url)
        application = create_app(settings)
    except DatabaseInUse as e:
        err.print(f"[red]error:[/red] {e}")
        raise typer.Exit(2) from None
    except Exception as e:  # noqa: BLE001 - bad URL, unreachable database, failed migration: one line
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        err.print(f"[red]error:[/red] cannot open the database {settings.db_url!r}: {first}")
        raise typer.Exit(2) from None

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as e:
        sock.close()
        err.print(f"[red]error:[/red] cannot listen on {host}:{port}: {e.strerror or e}")
        raise typer.Exit(2) from None
    sock.listen(2048)
    bound = sock.getsockname()[1]
    shown = "127.0.0.1" if host in ("0.0.0.0", "::") else host
    shown = f"[{shown}]" if ":" in shown else shown
    print(f"pyguandan server: open http://{shown}:{bound}/  (database {settings.db_url}; Ctrl+C to stop)", flush=True)
    config = uvicorn.Config(application, log_level=log_level, **uvicorn_options(settings))
    server = uvicorn.Server(config)
    try:
        server.run(sockets=[sock])
    finally:
        lock.release()
