"""Tournaments on the web server: ``tournaments``, ``tournament_directors`` and ``tournament_audit``.

A tournament's whole state is the engine's JSON (``guandan.tournament.to_json``, the text the
``guandan tournament`` CLI saves) in ``tournaments.state``, written only over the ``version`` it was
read at (optimistic concurrency). Every organiser action adds a ``tournament_audit`` row.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-04 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _ts() -> sa.DateTime:
    return sa.DateTime(timezone=True)


def upgrade() -> None:
    """Create the three tournament tables."""
    op.create_table(
        "tournaments",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("format", sa.String(16), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("rounds_played", sa.Integer(), nullable=False),
        sa.Column("rounds_total", sa.Integer(), nullable=False),
        sa.Column(
            "organiser_id",
            sa.Integer(),
            sa.ForeignKey("users.id", ondelete="SET NULL", name=op.f("fk_tournaments_organiser_id_users")),
            nullable=True,
        ),
        sa.Column("state", sa.Text(), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("created_at", _ts(), nullable=False),
        sa.Column("updated_at", _ts(), nullable=False),
        sa.CheckConstraint("status IN ('registering', 'running', 'finished')", name=op.f("ck_tournaments_status")),
    )
    op.create_index("ix_tournaments_organiser_id", "tournaments", ["organiser_id"])
    op.create_index("ix_tournaments_updated_at", "tournaments", ["updated_at"])
    op.create_table(
        "tournament_directors",
        sa.Column(
            "tournament_id",
            sa.Integer(),
            sa.ForeignKey("tournaments.id", ondelete="CASCADE",
                          name=op.f("fk_tournament_directors_tournament_id_tournaments")),
            primary_key=True,
        ),
        sa.Column(
            "user_id",
            sa.Integer(),
            sa.ForeignKey("users.id", ondelete="CASCADE", name=op.f("fk_tournament_directors_user_id_users")),
            primary_key=True,
        ),
    )
    op.create_index("ix_tournament_directors_user_id", "tournament_directors", ["user_id"])
    op.create_table(
        "tournament_audit",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column(
            "tournament_id",
            sa.Integer(),
            sa.ForeignKey("tournaments.id", ondelete="CASCADE",
                          name=op.f("fk_tournament_audit_tournament_id_tournaments")),
            nullable=False,
        ),
        sa.Column(
            "user_id",
            sa.Integer(),
            sa.ForeignKey("users.id", ondelete="SET NULL", name=op.f("fk_tournament_audit_user_id_users")),
            nullable=True,
        ),
        sa.Column("at", _ts(), nullable=False),
        sa.Column("operation", sa.String(32), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("before", sa.JSON(), nullable=True),
        sa.Column("after", sa.JSON(), nullable=True),
    )
    op.create_index("ix_tournament_audit_tournament_id", "tournament_audit", ["tournament_id"])


def downgrade() -> None:
    """Drop the three tournament tables."""
    op.drop_table("tournament_audit")
    op.drop_table("tournament_directors")
    op.drop_table("tournaments")
