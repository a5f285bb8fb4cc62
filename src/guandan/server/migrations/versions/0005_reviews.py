"""Reviews of deals (issue 22, 复盘): table ``reviews``, the cache of computed reviews.

One row per (game, deal, seat, budget): the review's JSON text and the job id it was computed
under (:mod:`guandan.server.reviews`). Rows go with their game (``ON DELETE CASCADE``).

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-04 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Create ``reviews`` and its unique key index."""
    op.create_table(
        "reviews",
        sa.Column("id", sa.String(32), primary_key=True),
        sa.Column(
            "game_id",
            sa.Integer(),
            sa.ForeignKey("games.id", ondelete="CASCADE", name=op.f("fk_reviews_game_id_games")),
            nullable=False,
        ),
        sa.Column("deal", sa.Integer(), nullable=False),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("budget", sa.String(200), nullable=False),
        sa.Column("result", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("seat >= 0 AND seat <= 3", name=op.f("ck_reviews_seat")),
        sa.CheckConstraint("deal >= 1", name=op.f("ck_reviews_deal")),
    )
    op.create_index("ix_reviews_key", "reviews", ["game_id", "deal", "seat", "budget"], unique=True)


def downgrade() -> None:
    """Drop ``reviews``."""
    op.drop_index("ix_reviews_key", table_name="reviews")
    op.drop_table("reviews")
