"""Online tournament rounds: ``tournament_tables``, one row per table of an online round (its room, the
match clock's deadline, each pair's timeouts and arrival, the stored game, whether the result is in).

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-04 18:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Create ``tournament_tables``."""
    op.create_table(
        "tournament_tables",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column(
            "tournament_id",
            sa.Integer(),
            sa.ForeignKey("tournaments.id", ondelete="CASCADE",
                          name=op.f("fk_tournament_tables_tournament_id_tournaments")),
            nullable=False,
        ),
        sa.Column("round", sa.Integer(), nullable=False),
        sa.Column("table_no", sa.Integer(), nullable=False),
        sa.Column("room_id", sa.String(8), nullable=False),
        sa.Column("started_at", sa.Float(), nullable=False),
        sa.Column("deadline", sa.Float(), nullable=True),
        sa.Column("timeouts_a", sa.Integer(), nullable=False),
        sa.Column("timeouts_b", sa.Integer(), nullable=False),
        sa.Column("arrived_a", sa.Float(), nullable=True),
        sa.Column("arrived_b", sa.Float(), nullable=True),
        sa.Column("game_id", sa.Integer(), nullable=True),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("note", sa.String(200), nullable=True),
        sa.Column("pending", sa.Text(), nullable=True),
        sa.CheckConstraint("state IN ('playing', 'entered', 'forfeit', 'held')",
                           name=op.f("ck_tournament_tables_state")),
    )
    op.create_index("ux_tournament_tables_match", "tournament_tables", ["tournament_id", "round", "table_no"],
                    unique=True)
    op.create_index("ix_tournament_tables_room_id", "tournament_tables", ["room_id"])


def downgrade() -> None:
    """Drop ``tournament_tables``."""
    op.drop_table("tournament_tables")
