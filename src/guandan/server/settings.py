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
        public_url: the address people use to reach the server (``"http://192.168.1.20:8000"``,
            no trailing slash), sent to the UI for invite links; ``None``: the UI uses the address
            the browser used. Default: ``GUANDAN_PUBLIC_URL`` or ``None``.
        ready_timeout_s: seconds the table waits between deals for every person to press "next"
            before it starts the next deal anyway.
        timeouts_to_auto: consecutive move-clock timeouts of one seat that turn 托管 on (each
            timeout before that plays one move for the seat).
        default_clock_lead_s, default_clock_follow_s: move clocks (seconds) given by default to a
            room that starts with more than one person (RULES.md R53: 60 s lead, 30 s follow).
    """

    db_url: str = field(default_factory=lambda: os.environ.get("GUANDAN_DATABASE_URL", DEFAULT_DB_URL))
    static_dir: Path = STATIC_DIR
    bot_delay_s: float = 0.6
    session_days: int = 30
    public_url: str | None = field(default_factory=lambda: os.environ.get("GUANDAN_PUBLIC_URL") or None)
    ready_timeout_s: float = 20.0
    timeouts_to_auto: int = 2
    default_clock_lead_s: float = 60.0
    default_clock_follow_s: float = 30.0
