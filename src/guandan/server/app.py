"""The FastAPI application: accounts API, rooms API, table websockets and the browser UI.

``create_app(settings)`` migrates the database (Alembic ``upgrade head``), restores every game
in progress from its stored record, and serves the single-page UI from the package's
``static/`` directory for every page path.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any
from contextlib import asynccontextmanager

from fastapi import FastAPI
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles

from . import api_accounts
from .api_rooms import make_rooms_router
from .hardening import GuardMiddleware, install_catch_all
from .settings import Settings
from .tables import TableManager
from .ws import make_ws_router

#: Page paths served by the single-page UI (the UI routes them itself).
PAGES = ("/", "/room/{room_id}", "/profile/{name}", "/replay/{game_id}", "/leaderboard", "/history", "/login")


def create_app(settings: Settings | None = None) -> FastAPI:
    """Build the application.

    Args:
        settings: configuration (database URL, static directory, bot delay); default
            :class:`Settings` (SQLite ``./guandan.db`` or ``GUANDAN_DATABASE_URL``).
    Returns:
        The FastAPI app; ``app.state.manager`` is the :class:`TableManager`.
    Raises:
        sqlalchemy.exc.OperationalError: the database cannot be reached.
    """
    settings = settings or Settings()
    manager_box: dict[str, TableManager] = {}

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        manager = manager_box["manager"]
        await manager.start()
        try:
            yield
        finally:
            await manager.shutdown()
            app.state.engine.dispose()

    app = FastAPI(title="pyguandan", lifespan=lifespan, docs_url="/api/docs", openapi_url="/api/openapi.json")
    session_factory = api_accounts.setup_storage(app, settings)
    manager = TableManager(session_factory, settings)
    manager.restore()
    manager_box["manager"] = manager
    app.state.manager = manager
    app.include_router(make_rooms_router(session_factory, manager, settings))
    app.include_router(make_ws_router(session_factory, manager, settings))
    install_catch_all(app)
    app.add_middleware(GuardMiddleware, max_body_bytes=settings.max_body_bytes)
    app.mount("/static", StaticFiles(directory=str(settings.static_dir)), name="static")
    index = settings.static_dir / "index.html"

    async def page() -> FileResponse:
        return FileResponse(index, media_type="text/html")

    for path in PAGES:
        app.add_api_route(path, page, methods=["GET"], include_in_schema=False)
    return app


def uvicorn_options(settings: Settings) -> dict[str, Any]:
    """Keyword arguments of ``uvicorn.Config`` for serving :func:`create_app` (``guandan serve``).

    * Proxy headers: ``X-Forwarded-For`` is believed only from ``settings.forwarded_allow_ips``
      (``--forwarded-allow-ips``); with none given it is ignored, so a client cannot pick the
      address the login limits count (uvicorn's own default trusts 127.0.0.1).
    * Websocket pings every ``ws_ping_interval_s`` seconds; a peer silent for
      ``ws_ping_timeout_s`` more is closed, so a dropped client is soon counted as away.

    Returns:
        ``{"ws", "lifespan", "proxy_headers", "forwarded_allow_ips", "ws_ping_interval",
        "ws_ping_timeout", "server_header"}``.
    """
    allowed = list(settings.forwarded_allow_ips)
    return {
        "ws": "websockets-sansio",
        "lifespan": "on",
        "proxy_headers": bool(allowed),
        "forwarded_allow_ips": allowed or None,
        "ws_ping_interval": settings.ws_ping_interval_s,
        "ws_ping_timeout": settings.ws_ping_timeout_s,
        "server_header": False,
    }
