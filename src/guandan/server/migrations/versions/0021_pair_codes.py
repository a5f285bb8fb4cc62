"""One result code per pair (issue 21 item 5): ``tournament_table_codes`` gets a ``side`` column (``"a"`` or
``"b"``), unique per (tournament, round, table, side), so the side of a claim comes from its code.

The table-wide codes of ``0016`` are deleted, not kept as side-less codes: the codes are made again, one
per pair, the first time a director reads them (:func:`guandan.server.tournament_claims.round_codes`), so
the table cards of a round in play must be printed again after this upgrade.

Revision ID: 0021
Revises: 0020
Create Date: 2026-12-05 09:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0021"
down_revision: str | None = "0020"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Delete the table-wide codes, add ``side``, make (tournament, round, table, side) unique."""
    op.execute("DELETE FROM tournament_table_codes")
    op.drop_index("ux_tournament_table_codes_table", table_name="tournament_table_codes")
    with op.batch_alter_table("tournament_table_codes") as batch:
        batch.add_column(sa.Column("side", sa.String(1), nullable=False, server_default="a"))
    op.create_index("ux_tournament_table_codes_side", "tournament_table_codes",
                    ["tournament_id", "round", "table_no", "side"], unique=True)


def downgrade() -> None:
    """Back to one code per table: the per-pair codes are deleted (made again when read)."""
    op.execute("DELETE FROM tournament_table_codes")
    op.drop_index("ux_tournament_table_codes_side", table_name="tournament_table_codes")
    with op.batch_alter_table("tournament_table_codes") as batch:
        batch.drop_column("side")
    op.create_index("ux_tournament_table_codes_table", "tournament_table_codes",
                    ["tournament_id", "round", "table_no"], unique=True)
