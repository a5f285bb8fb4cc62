"""The server's fencing token (issue 26 item 1): ``server_fence``, one row (``id`` 1, ``epoch`` 0).

``guandan serve`` bumps ``epoch`` once it holds the database lock; a single server's record writes
check it in their own transaction (:mod:`guandan.server.dblock`).

Revision ID: 0022
Revises: 0021
Create Date: 2026-12-05 16:30:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0022"
down_revision: str | None = "0021"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Create ``server_fence`` with its one row."""
    fence = op.create_table(
        "server_fence",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=False),
        sa.Column("epoch", sa.BigInteger(), nullable=False),
        sa.Column("claimed_at", sa.DateTime(timezone=True), nullable=True),
    )
    op.bulk_insert(fence, [{"id": 1, "epoch": 0, "claimed_at": None}])


def downgrade() -> None:
    """Drop ``server_fence``."""
    op.drop_table("server_fence")
