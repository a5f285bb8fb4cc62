"""rooms.unrated: a room whose games move no rating and no Anhui points (issue 25: a matched room filled
with bots is 不计分 / unrated).

Revision ID: 0019
Revises: 0017
Create Date: 2026-12-05 08:10:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0019"
down_revision: str | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add ``rooms.unrated`` (false for every existing room: they stay rated as before). In place, not
    a batch rebuild: rebuilding ``rooms`` on SQLite cascades to its game_events (as in 0008)."""
    op.add_column("rooms", sa.Column("unrated", sa.Boolean(), nullable=False, server_default=sa.false()))


def downgrade() -> None:
    """Drop ``rooms.unrated`` (in place: SQLite 3.35+ drops a column without rebuilding the table)."""
    op.drop_column("rooms", "unrated")
