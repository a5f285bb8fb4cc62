"""Database engine, migrations and sessions of the web server (SQLite or PostgreSQL).

Typical start-up (what ``create_app`` does)::

    engine = make_engine(settings.db_url)
    migrate(engine)                       # Alembic "upgrade head": creates or updates the schema
    app.state.session_factory = make_session_factory(engine)

Request handlers take a session with the :func:`get_db` dependency; other code (the tables, the
websocket) uses ``with session_scope(factory) as db: ...``. Sessions are synchronous (FastAPI runs
sync handlers in its thread pool); keep each transaction short.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

from fastapi import Depends
from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session, sessionmaker
from starlette.requests import HTTPConnection

#: Where the Alembic environment and versions live (inside the package: ``pip install`` is all the set-up).
MIGRATIONS_DIR = Path(__file__).with_name("migrations")

#: A factory of ORM sessions bound to one engine (``sessionmaker[Session]``).
SessionFactory = sessionmaker[Session]


def normalize_url(url: str) -> str:
    """Give a PostgreSQL URL without a driver the psycopg (v3) driver.

    ``postgresql://...`` and ``postgres://...`` become ``postgresql+psycopg://...``; other URLs are
    returned unchanged.

    Raises:
        ValueError: ``url`` is not a database URL SQLAlchemy can read.
    """
    try:
        parsed = make_url(url)
    except Exception as exc:  # sqlalchemy.exc.ArgumentError
        raise ValueError(f"not a database URL: {url!r}") from exc
    if parsed.drivername in ("postgresql", "postgres"):
        parsed = parsed.set(drivername="postgresql+psycopg")
    return parsed.render_as_string(hide_password=False)


#: What ``--db`` accepts, for messages.
SUPPORTED_DATABASES = (
    "SQLite (a file path such as guandan.db, or sqlite:///path.db) and PostgreSQL "
    "(postgresql://user@host:5432/db)"
)


def database_url(value: str) -> str:
    """The database URL meant by a ``--db`` value.

    A plain file path (``guandan.db``, ``data/games.sqlite``, ``C:\\games.db``) means SQLite;
    ``sqlite:///...`` and ``postgresql://...`` URLs are normalised by :func:`normalize_url`.

    Raises:
        ValueError: an empty value, an unreadable URL, or a database other than SQLite and
            PostgreSQL (the message names the supported ones).
    """
    v = value.strip()
    if not v:
        raise ValueError(f"--db is empty; supported databases: {SUPPORTED_DATABASES}")
    if "://" not in v and not v.startswith("sqlite:"):
        return "sqlite:///" + v  # a path, relative to the working directory or absolute
    try:
        parsed = make_url(v)
    except Exception:  # noqa: BLE001 - sqlalchemy.exc.ArgumentError
        raise ValueError(f"not a database URL: {value!r}; supported databases: {SUPPORTED_DATABASES}") from None
    backend = parsed.get_backend_name()
    if backend not in ("sqlite", "postgresql", "postgres"):
        raise ValueError(f"the {backend} database is not supported; supported databases: {SUPPORTED_DATABASES}")
    return normalize_url(v)


def sqlite_text(raw: bytes) -> str:
    """How the server reads SQLite text: UTF-8, with each byte that is not UTF-8 (a damaged file,
    a bad import) read as U+FFFD, so that one damaged value spoils only its own row instead of
    failing the whole query (issue 26 item 9: one bad name made the whole leaderboard a 500).
    Valid UTF-8 reads exactly as before."""
    return raw.decode("utf-8", "replace")


def _sqlite_on_connect(dbapi_conn: Any, _record: Any) -> None:
    # Foreign keys are off by default in SQLite; WAL lets readers run while a writer commits;
    # busy_timeout makes concurrent writers wait instead of failing at once.
    dbapi_conn.text_factory = sqlite_text
    cur = dbapi_conn.cursor()
    try:
        cur.execute("PRAGMA foreign_keys=ON")
        cur.execute("PRAGMA busy_timeout=5000")
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute("PRAGMA synchronous=NORMAL")
    finally:
        cur.close()


def make_engine(url: str, **kwargs: Any) -> Engine:
    """Create the engine for ``url``.

    SQLite (``sqlite:///path.db``): usable from any thread (``check_same_thread=False``), foreign keys
    on, WAL journal, 5 s busy timeout, bytes that are not UTF-8 read as U+FFFD (:func:`sqlite_text`). PostgreSQL: the psycopg 3 driver (a bare ``postgresql://``
    URL gets it), ``pool_pre_ping`` on.

    Args:
        url: SQLAlchemy database URL.
        kwargs: extra ``create_engine`` arguments.
    Returns:
        The engine (connects lazily).
    Raises:
        ValueError: a URL that cannot be read.
    """
    url = normalize_url(url)
    backend = make_url(url).get_backend_name()
    if backend == "sqlite":
        connect_args = dict(kwargs.pop("connect_args", {}))
        connect_args.setdefault("check_same_thread", False)
        engine = create_engine(url, connect_args=connect_args, **kwargs)
        event.listen(engine, "connect", _sqlite_on_connect)
        return engine
    kwargs.setdefault("pool_pre_ping", True)
    return create_engine(url, **kwargs)


def alembic_config(url: str | None = None) -> Any:
    """The Alembic ``Config`` of the server, built in code (no ``alembic.ini`` needed).

    Args:
        url: database URL stored as ``sqlalchemy.url`` (used when no connection is passed in).
    Returns:
        An ``alembic.config.Config`` whose script location is :data:`MIGRATIONS_DIR`.
    """
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    if url is not None:
        # ConfigParser interpolation: a literal % must be doubled.
        cfg.set_main_option("sqlalchemy.url", normalize_url(url).replace("%", "%%"))
    return cfg


#: PostgreSQL advisory lock held while migrating (any fixed number; "gdmigrat" in ASCII), so that
#: servers of a cluster starting together run the migrations one at a time.
MIGRATION_LOCK_KEY = 0x6764_6D69_6772_6174


def migrate(url_or_engine: str | Engine, revision: str = "head") -> None:
    """Bring the database schema up to ``revision`` with Alembic (``upgrade head`` by default).

    A fresh SQLite file or an empty PostgreSQL database gets the whole schema; an up-to-date one is
    left unchanged (idempotent). Safe to call at every start-up.

    Args:
        url_or_engine: a database URL, or an engine made by :func:`make_engine`.
        revision: Alembic target revision.
    Raises:
        sqlalchemy.exc.OperationalError: the database cannot be reached.
    """
    from alembic import command

    if isinstance(url_or_engine, str):
        engine = make_engine(url_or_engine)
        owned = True
    else:
        engine = url_or_engine
        owned = False
    sqlite = engine.dialect.name == "sqlite"
    try:
        with engine.connect() as conn:
            if sqlite:
                # a migration that rebuilds a table (batch mode) drops the old one: with foreign
                # keys on, that would cascade to the rows that refer to it (seats, games)
                conn.exec_driver_sql("PRAGMA foreign_keys=OFF")
                conn.commit()
            try:
                with conn.begin():
                    if engine.dialect.name == "postgresql":
                        # several servers of a cluster may start at once: one migrates, the others
                        # wait here and then find the schema up to date (released at commit)
                        conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({MIGRATION_LOCK_KEY})")
                    cfg = alembic_config()
                    cfg.attributes["connection"] = conn
                    with warnings.catch_warnings():
                        # SQLite batch migrations reflect the schema, and SQLAlchemy cannot reflect
                        # the expression index uq_users_name_lower (lower(name)); the rebuilt
                        # tables never include it and it stays in place, so the warning printed on
                        # every fresh start (`make serve`) tells the user nothing
                        warnings.filterwarnings(
                            "ignore", message="Skipped unsupported reflection of expression-based index"
                        )
                        command.upgrade(cfg, revision)
            finally:
                if sqlite:
                    conn.exec_driver_sql("PRAGMA foreign_keys=ON")
                    conn.commit()
    finally:
        if owned:
            engine.dispose()


def current_revision(engine: Engine) -> str | None:
    """The Alembic revision the database is at, or ``None`` when it was never migrated."""
    from alembic.runtime.migration import MigrationContext

    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def make_session_factory(engine: Engine) -> SessionFactory:
    """A session factory bound to ``engine``; objects stay readable after commit (``expire_on_commit=False``)."""
    return sessionmaker(bind=engine, expire_on_commit=False, future=True)


@contextmanager
def session_scope(factory: SessionFactory) -> Iterator[Session]:
    """A transaction: yields a session, commits when the block ends, rolls back on an exception.

    Raises:
        whatever the block raises (after the rollback), or a database error from the commit.
    """
    session = factory()
    try:
        yield session
        session.commit()
    except BaseException:
        session.rollback()
        raise
    finally:
        session.close()


def get_db(conn: HTTPConnection) -> Iterator[Session]:
    """FastAPI dependency: a session from ``app.state.session_factory``, closed after the request.

    Handlers commit explicitly (``db.commit()``); anything uncommitted is rolled back at close.
    The app may override this dependency (``app.dependency_overrides[get_db] = ...``).

    Raises:
        RuntimeError: the app has no ``state.session_factory`` (a wiring mistake).
    """
    factory = getattr(conn.app.state, "session_factory", None)
    if factory is None:
        raise RuntimeError("app.state.session_factory is not set; see guandan.server.db")
    session = factory()
    try:
        yield session
    finally:
        session.close()


#: Handler parameter type for a request's session: ``def handler(db: DbSession): ...``.
DbSession = Annotated[Session, Depends(get_db)]
