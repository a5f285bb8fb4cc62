"""Friends (issue 25 item 2): ``users.last_seen_at``, tables ``friend_links`` and ``friend_invites``.

``users.last_seen_at`` is the last authenticated request or table-socket message of the account
(written at most every 30 s), from which friends see who is online. ``friend_links`` holds one row per
pair of accounts (a pending request, a friendship or a block); ``friend_invites`` the invitations of friends to
waiting rooms, one per friend per room, deleted with their room. Rules: :mod:`guandan.server.friends`.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-04 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _user_fk(table: str, column: str) -> sa.ForeignKey:
    return sa.ForeignKey("users.id", ondelete="CASCADE", name=op.f(f"fk_{table}_{column}_users"))


def upgrade() -> None:
    """Add ``users.last_seen_at`` and create ``friend_links`` and ``friend_invites``."""
    # a plain ADD COLUMN (SQLite too): no batch rebuild of ``users``, whose lower(name) index stays
    op.add_column("users", sa.Column("last_seen_at", sa.DateTime(timezone=True), nullable=True))
    op.create_table(
        "friend_links",
        sa.Column("user_low", sa.Integer(), _user_fk("friend_links", "user_low"), primary_key=True),
        sa.Column("user_high", sa.Integer(), _user_fk("friend_links", "user_high"), primary_key=True),
        sa.Column("requester_id", sa.Integer(), _user_fk("friend_links", "requester_id"), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("user_low < user_high", name=op.f("ck_friend_links_pair_order")),
        sa.CheckConstraint("status IN ('pending', 'accepted', 'blocked')", name=op.f("ck_friend_links_status")),
    )
    op.create_index("ix_friend_links_user_high", "friend_links", ["user_high"])
    op.create_table(
        "friend_invites",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("room_id", sa.String(8),
                  sa.ForeignKey("rooms.id", ondelete="CASCADE", name=op.f("fk_friend_invites_room_id_rooms")),
                  nullable=False),
        sa.Column("from_id", sa.Integer(), _user_fk("friend_invites", "from_id"), nullable=False),
        sa.Column("to_id", sa.Integer(), _user_fk("friend_invites", "to_id"), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("uq_friend_invites_room_id", "friend_invites", ["room_id", "to_id"], unique=True)
    op.create_index("ix_friend_invites_to_id", "friend_invites", ["to_id"])


def downgrade() -> None:
    """Drop the friends tables and ``users.last_seen_at``."""
    op.drop_table("friend_invites")
    op.drop_table("friend_links")
    with op.batch_alter_table("users") as batch:
        batch.drop_column("last_seen_at")
