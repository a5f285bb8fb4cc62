"""rooms.default_clocks: the R53 default move clocks apply when the game starts with 2+ people.

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-01 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add ``rooms.default_clocks`` (false for every existing room)."""
    with op.batch_alter_table("rooms") as batch:
        batch.add_column(sa.Column("default_clocks", sa.Boolean(), nullable=False, server_default=sa.false()))


def downgrade() -> None:
    """Drop ``rooms.default_clocks``."""
    with op.batch_alter_table("rooms") as batch:
        batch.drop_column("default_clocks")
