"""The FastAPI application: accounts API, rooms API, table websockets and the browser UI.

``create_app(settings)`` migrates the database (Alembic ``upgrade head``), restores every game
in progress from its stored record, and serves the single-page UI from the package's
``static/`` directory for every page path. An unknown page path answers 404 with the same
``index.html`` (the UI shows its own "page not found"); an unknown ``/api/`` path answers the JSON
error ``not_found``. The API docs (``/api/docs``) work offline: the Swagger UI files come from the
``swagger-ui-bundle`` package and are served under ``/api/docs-assets``.

Health (for load balancers and orchestrators; also in single-process mode): ``GET /healthz``
answers 200 ``{"status": "ok", "node"}`` while the process serves; ``GET /readyz`` answers 200
``{"status": "ready", "node", "db": "ok", "migrations": "head", "redis": "ok" | "off"}`` when the
database answers, its schema is at the newest migration and (cluster mode) Redis answers, else
503 with ``status: "not_ready"`` and the failing part.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import AsyncIterator
from typing import Any
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import FileResponse, HTMLResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from . import api_accounts, api_ladder, botgames
from .api_challenge import make_challenge_router
from .api_friends import POLL_THREADS, make_friends_router
from .account_calls import AccountCalls
from .api_matchmaking import CALL_THREADS, MatchService, make_match_router
from .api_moderation import make_moderation_router
from .api_reviews import make_reviews_router
from .api_rooms import make_rooms_router
from .api_teammatch import TeamMatchService, make_teammatch_router
from .api_tournaments import make_tournaments_router
from .challenge_store import ChallengeStore
from .teammatch_store import TeamMatchStore
from .friends import PRESENCE_FLUSH_S
from .friends_push import FriendsPush
from .friends_store import panels_json, write_seen_with
from .hardening import GuardMiddleware, install_catch_all
from .idle_close import DEFAULT_IDLE_CLOSE_S, run_idle_close
from .presence import PresenceBatch
from .process_calls import ProcessCalls, make_account_calls
from .settings import Settings
from .manager import TableManager
from .reviews import ReviewService
from .table.bots import shutdown_bot_pool
from .tournament_claims import make_claims_router
from .tournament_rounds import OnlineRounds
from .tournament_teams import TeamRounds
from .webapp import VERSION_HEADER, install_webapp
from .ws import MAX_FRAME_BYTES, make_ws_router

#: Page paths served by the single-page UI (the UI routes them itself).
PAGES = ("/", "/room/{room_id}", "/profile/{name}", "/replay/{game_id}", "/review/{game_id}", "/leaderboard",
         "/history", "/login", "/tournaments", "/tournaments/{tournament_id}", "/challenge", "/admin",
         "/teammatch/{match_id}")


def create_app(settings: Settings | None = None) -> FastAPI:
    """Build the application.

    Args:
        settings: configuration (database URL, static directory, bot delay); default
            :class:`Settings` (SQLite ``./guandan.db`` or ``GUANDAN_DATABASE_URL``).
    Returns:
        The FastAPI app; ``app.state.manager`` is the :class:`TableManager`, ``app.state.reviews``
        the :class:`~guandan.server.reviews.ReviewService` (reviews of deals, 复盘),
        ``app.state.matchmaking`` the :class:`~guandan.server.api_matchmaking.MatchService` (匹配).
    Raises:
        ValueError: a bad ``settings.review_budget``.
        sqlalchemy.exc.OperationalError: the database cannot be reached.
    """
    settings = settings or Settings()
    manager_box: dict[str, TableManager] = {}

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        manager = manager_box["manager"]
        await manager.start()
        await app.state.online_rounds.start()  # tournament tables: match clocks, results (issue 21)
        await app.state.team_matches.start()  # team matches (复式): boards that ended while down (issue 22)
        await app.state.team_rounds.start()  # online team rounds of tournaments (issue 21 item 2)
        idle = asyncio.get_running_loop().create_task(
            run_idle_close(manager, float(getattr(settings, "idle_close_s", DEFAULT_IDLE_CLOSE_S))))
        await app.state.matchmaking.start()  # the queue's matching loop (issue 25 item 1)
        for pool in app.state.call_pools:  # worker processes start now, not at the first poll
            if isinstance(pool, ProcessCalls):
                pool.start()
        app.state.friends_push.start()  # the lobbies' friends streams (issue 25)
        write_seen = functools.partial(manager.run_db, write_seen_with, session_factory)
        seen_task = asyncio.get_running_loop().create_task(app.state.presence.run(write_seen, PRESENCE_FLUSH_S))
        try:
            yield
        finally:
            idle.cancel()
            await app.state.friends_push.stop()
            seen_task.cancel()
            try:  # a write in progress ends first, so that the flush below takes every account
                await seen_task
            except (asyncio.CancelledError, Exception):  # noqa: BLE001 - the shutdown goes on
                pass
            try:  # the refreshes noted since the last write (best effort, as presence is)
                await app.state.presence.flush(write_seen)
            except Exception:  # noqa: BLE001 - the shutdown goes on
                logging.getLogger("guandan.server").warning("presence: the last batch was not written", exc_info=True)
            await app.state.matchmaking.stop()
            for pool in app.state.call_pools:  # worker processes exit (their connections closed)
                await pool.aclose()
            await app.state.online_rounds.shutdown()
            await manager.shutdown()
            # the searching bots' processes, before uvicorn re-raises SIGTERM (no atexit then)
            await asyncio.to_thread(shutdown_bot_pool, True)
            await asyncio.to_thread(reviews.shutdown)
            app.state.engine.dispose()

    docs_assets = _swagger_ui_dir()
    app = FastAPI(title="pyguandan", lifespan=lifespan, openapi_url="/api/openapi.json",
                  docs_url=None if docs_assets is not None else "/api/docs", redoc_url=None)
    session_factory = api_accounts.setup_storage(app, settings)
    manager = TableManager(session_factory, settings)
    if getattr(settings, "redis_url", None):  # cluster mode: the node owns the tables through leases
        from .cluster import ClusterNode, make_store_fenced

        manager.attach_cluster(ClusterNode(manager, settings.redis_url, getattr(settings, "node_name", "node"),
                                           float(getattr(settings, "lease_s", 3.0)),
                                           prefix=getattr(settings, "redis_prefix", None) or "gd:"))
        make_store_fenced(manager.store, manager.cluster.check_lease, manager.cluster.check_leases)
    manager.restore()
    manager_box["manager"] = manager
    app.state.manager = manager
    app.state.presence = PresenceBatch()  # friends' presence refreshes, written every few seconds
    bot_limits = botgames.from_settings(settings)  # one per process: every path that starts a game with bots
    app.include_router(make_rooms_router(session_factory, manager, settings, bot_limits))
    app.include_router(make_ws_router(session_factory, manager, settings))
    reviews = ReviewService(session_factory, settings)
    app.state.reviews = reviews
    app.include_router(api_ladder.router)
    app.include_router(make_reviews_router(reviews))
    if manager.cluster is not None:  # each table's owner runs its match clock and enters its result
        from .tournament_cluster import ClusterRounds

        app.state.online_rounds = ClusterRounds(session_factory, manager)
    else:
        app.state.online_rounds = OnlineRounds(session_factory, manager)
    app.include_router(make_tournaments_router())
    app.include_router(make_claims_router())  # players' results with the table's code (issue 21)
    app.include_router(make_challenge_router(ChallengeStore(session_factory), manager, settings, bot_limits))
    # the endpoints many clients call at once, each in one hand-off to a pool of its own (issue 25)
    app.state.call_pools = [make_account_calls(int(getattr(settings, "friends_processes", 0)), POLL_THREADS,
                                               settings.db_url, "guandan-friends"),
                            AccountCalls(CALL_THREADS, "guandan-match")]
    presence, friends_pool = app.state.presence, app.state.call_pools[0]

    async def panels(keys: list[str], now: Any) -> Any:  # one sweep of the friends streams, in the friends' pool
        return await friends_pool.call(session_factory, presence, panels_json, keys, now)

    app.state.friends_push = FriendsPush(panels)
    manager.session_listeners.append(app.state.friends_push.revoke)  # logout ends the session's streams
    app.include_router(make_friends_router(app.state.call_pools[0], app.state.friends_push))
    app.state.team_matches = TeamMatchService(TeamMatchStore(session_factory), manager,
                                              float(getattr(settings, "teammatch_start_grace_s", 20.0)))
    app.include_router(make_teammatch_router(app.state.team_matches))
    app.state.team_rounds = TeamRounds(session_factory, app.state.team_matches)
    app.state.matchmaking = MatchService(session_factory, manager, settings, limits=bot_limits)
    app.include_router(make_match_router(app.state.matchmaking, app.state.call_pools[1]))
    app.include_router(make_moderation_router())  # reports and admin pages (issue 25 item 8)
    install_catch_all(app)
    if manager.cluster is not None:  # a Redis outage: a retryable 503, not a 500
        from .cluster.outage import install_outage_handler

        install_outage_handler(app)
    app.add_middleware(GuardMiddleware, max_body_bytes=settings.max_body_bytes)
    app.mount("/static", StaticFiles(directory=str(settings.static_dir)), name="static")
    index = settings.static_dir / "index.html"
    static_version = install_webapp(app, settings.static_dir)  # manifest and service worker (issue 25)

    async def page() -> FileResponse:
        # always revalidated: the version header must be the running server's (the service worker reads it)
        return FileResponse(index, media_type="text/html", headers={VERSION_HEADER: static_version, "Cache-Control": "no-cache"})

    for path in PAGES:
        app.add_api_route(path, page, methods=["GET"], include_in_schema=False)
    _health(app, settings, manager)
    if docs_assets is not None:
        _offline_docs(app, docs_assets)
    _not_found_page(app, index)
    return app


def _health(app: FastAPI, settings: Settings, manager: TableManager) -> None:
    """``/healthz`` (the process serves) and ``/readyz`` (database, migrations and Redis ready)."""
    from fastapi.responses import JSONResponse
    from sqlalchemy import text

    from .db import alembic_config, current_revision

    node = getattr(settings, "node_name", None)

    def head() -> str | None:
        from alembic.script import ScriptDirectory

        return ScriptDirectory.from_config(alembic_config()).get_current_head()

    head_rev = head()

    async def healthz() -> dict[str, Any]:
        # friends_streams: the lobbies' open friends streams in this process (a count, nothing more)
        return {"status": "ok", "node": node, "friends_streams": len(app.state.friends_push.hub.streams)}

    def readyz() -> JSONResponse:
        out: dict[str, Any] = {"status": "ready", "node": node, "db": "ok", "migrations": "head",
                               "redis": "off" if manager.cluster is None else "ok"}
        try:
            engine = app.state.engine
            with engine.connect() as conn:
                conn.execute(text("SELECT 1"))
            rev = current_revision(engine)
            if rev != head_rev:
                out["migrations"] = f"at {rev}, not {head_rev}"
                out["status"] = "not_ready"
        except Exception as e:  # noqa: BLE001 - any database failure: not ready
            out["db"] = (str(e).strip().splitlines() or [type(e).__name__])[0][:200]
            out["status"] = "not_ready"
        if manager.cluster is not None and not manager.cluster.ready():
            out["redis"] = "unreachable"
            out["status"] = "not_ready"
        return JSONResponse(out, status_code=200 if out["status"] == "ready" else 503)

    app.add_api_route("/healthz", healthz, methods=["GET"], include_in_schema=False)
    app.add_api_route("/readyz", readyz, methods=["GET"], include_in_schema=False)


def uvicorn_options(settings: Settings) -> dict[str, Any]:
    """Keyword arguments of ``uvicorn.Config`` for serving :func:`create_app` (``guandan serve``).

    * Proxy headers: ``X-Forwarded-For`` is believed only from ``settings.forwarded_allow_ips``
      (``--forwarded-allow-ips``); with none given it is ignored, so a client cannot pick the
      address the login limits count (uvicorn's own default trusts 127.0.0.1).
    * Websocket pings every ``ws_ping_interval_s`` seconds; a peer silent for
      ``ws_ping_timeout_s`` more is closed, so a dropped client is soon counted as away.
    * Websockets: uvicorn's sans-I/O protocol with outgoing messages deflated at level 1
      (:class:`guandan.server.ws_protocol.TableSocketProtocol`; zlib's default level cost three
      times as much CPU, the server's largest single cost under load).
    * Websocket messages are read up to :data:`guandan.server.ws.MAX_FRAME_BYTES` (64 KiB, against
      uvicorn's default of 16 MiB): a larger one is refused while it is read (close code 1009).

    Returns:
        ``{"ws", "lifespan", "proxy_headers", "forwarded_allow_ips", "ws_ping_interval",
        "ws_ping_timeout", "ws_max_size", "server_header"}``.
    """
    from .ws_protocol import TableSocketProtocol

    allowed = list(settings.forwarded_allow_ips)
    return {
        "ws": TableSocketProtocol,
        "lifespan": "on",
        "proxy_headers": bool(allowed),
        "forwarded_allow_ips": allowed or None,
        "ws_ping_interval": settings.ws_ping_interval_s,
        "ws_ping_timeout": settings.ws_ping_timeout_s,
        "ws_max_size": MAX_FRAME_BYTES,
        "server_header": False,
    }


#: ``gc.set_threshold`` of a serving process: (young objects before a collection, young
#: collections per middle one, middle collections per full one)
GC_THRESHOLDS = (20_000, 50, 100)


def tune_gc() -> None:
    """Make garbage collection cheaper for a serving process (``guandan serve`` calls it before
    serving): everything loaded so far (modules, the app) is frozen out of the collector's scans
    (``gc.freeze``), and collections run less often (:data:`GC_THRESHOLDS`; Python's default is
    700, 10, 10). A state frame allocates thousands of short-lived containers; with the default
    thresholds a loaded server spent seconds per minute in collections, and a full collection
    over the heap of hundreds of live games stopped every table for 100-600 ms (issue 10: the
    p99 of ``guandan loadtest``). Unreachable cycles are still collected.
    """
    from guandan.runtime.gctune import tune_gc as _tune

    _tune(*GC_THRESHOLDS)


def _swagger_ui_dir() -> Path | None:
    """The Swagger UI files of the ``swagger-ui-bundle`` package (``None`` when it is missing: the
    docs then load Swagger UI from FastAPI's default CDN)."""
    try:
        from swagger_ui_bundle import swagger_ui_path
    except ImportError:
        return None
    path = Path(str(swagger_ui_path))
    return path if (path / "swagger-ui-bundle.js").is_file() else None


def _offline_docs(app: FastAPI, assets: Path) -> None:
    """``/api/docs`` with every file served by this server (no CDN): works with no Internet."""
    app.mount("/api/docs-assets", StaticFiles(directory=str(assets)), name="docs-assets")

    async def docs() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url="/api/openapi.json",
            title="pyguandan API",
            swagger_js_url="/api/docs-assets/swagger-ui-bundle.js",
            swagger_css_url="/api/docs-assets/swagger-ui.css",
            swagger_favicon_url="/static/favicon.svg",
        )

    app.add_api_route("/api/docs", docs, methods=["GET"], include_in_schema=False)


def _not_found_page(app: FastAPI, index: Path) -> None:
    """Unknown page paths (not ``/api/``, ``/static/``, ``/ws/``) answer 404 with the UI's
    ``index.html``, which shows the app's own 404 page; everything else keeps the JSON errors."""
    json_errors = app.exception_handlers[StarletteHTTPException]

    async def handler(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, StarletteHTTPException)
        path = request.url.path
        if exc.status_code == 404 and request.method in ("GET", "HEAD") \
                and not path.startswith(("/api/", "/static/", "/ws/")) and path != "/api":
            return FileResponse(index, status_code=404, media_type="text/html")
        result = json_errors(request, exc)
        return await result if hasattr(result, "__await__") else result  # type: ignore[no-any-return]

    app.add_exception_handler(StarletteHTTPException, handler)
