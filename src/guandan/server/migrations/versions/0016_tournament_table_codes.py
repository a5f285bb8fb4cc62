"""Players enter their own result (issue 21 item 5): ``tournament_table_codes``, one short random code per
physical table of a round, printed on the table card (:mod:`guandan.server.tournament_claims`).

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-05 08:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0016"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Create ``tournament_table_codes``."""
    op.create_table(
        "tournament_table_codes",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column(
            "tournament_id",
            sa.Integer(),
            sa.ForeignKey("tournaments.id", ondelete="CASCADE",
                          name=op.f("fk_tournament_table_codes_tournament_id_tournaments")),
            nullable=False,
        ),
        sa.Column("round", sa.Integer(), nullable=False),
        sa.Column("table_no", sa.Integer(), nullable=False),
        sa.Column("code", sa.String(16), nullable=False),
        sa.Column("pairing", sa.String(64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ux_tournament_table_codes_table", "tournament_table_codes",
                    ["tournament_id", "round", "table_no"], unique=True)


def downgrade() -> None:
    """Drop ``tournament_table_codes``."""
    op.drop_table("tournament_table_codes")
