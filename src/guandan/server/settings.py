"""Server settings: database URL, secret, static files."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

DEFAULT_DB_URL = "sqlite:///./guandan.db"
STATIC_DIR = Path(__file__).with_name("static")


@dataclass(frozen=True)
class Settings:
    """Server configuration.

    Attributes:
        db_url: SQLAlchemy URL; default ``sqlite:///./guandan.db``, or the ``GUANDAN_DATABASE_URL``
            environment variable; PostgreSQL as ``postgresql+psycopg://user@host:5432/db``.
        static_dir: directory of the browser UI.
        bot_delay_s: seconds a bot waits before acting (so people can follow the table).
        session_days: lifetime of a login session in days.
    """

    db_url: str = field(default_factory=lambda: os.environ.get("GUANDAN_DATABASE_URL", DEFAULT_DB_URL))
    static_dir: Path = STATIC_DIR
    bot_delay_s: float = 0.6
    session_days: int = 30
