"""Reports and moderation (issue 25 item 8): tables ``account_moderation``, ``reports`` and ``moderation_log``.

``account_moderation`` holds per account the admin role and the ends of a phrase mute and of a
suspension; ``reports`` the players' reports of each other; ``moderation_log`` every admin action
(who, what, when, why). Rules: :mod:`guandan.server.moderation`; storage: :mod:`guandan.server.moderation_store`.

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-05 07:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _fk(table: str, column: str, target: str = "users", ondelete: str = "CASCADE") -> sa.ForeignKey:
    return sa.ForeignKey(f"{target}.id", ondelete=ondelete, name=op.f(f"fk_{table}_{column}_{target}"))


def upgrade() -> None:
    """Create ``account_moderation``, ``reports`` and ``moderation_log``."""
    op.create_table(
        "account_moderation",
        sa.Column("user_id", sa.Integer(), _fk("account_moderation", "user_id"), primary_key=True),
        sa.Column("is_admin", sa.Boolean(), nullable=False, server_default=sa.false()),
        sa.Column("phrases_muted_until", sa.DateTime(timezone=True), nullable=True),
        sa.Column("suspended_until", sa.DateTime(timezone=True), nullable=True),
    )
    op.create_table(
        "reports",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("reporter_id", sa.Integer(), _fk("reports", "reporter_id"), nullable=False),
        sa.Column("target_id", sa.Integer(), _fk("reports", "target_id"), nullable=False),
        sa.Column("reason", sa.String(32), nullable=False),
        sa.Column("room_id", sa.String(8), nullable=True),
        sa.Column("game_id", sa.Integer(), _fk("reports", "game_id", "games", "SET NULL"), nullable=True),
        sa.Column("deal_no", sa.Integer(), nullable=True),
        sa.Column("status", sa.String(8), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("closed_at", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint("status IN ('open', 'closed')", name=op.f("ck_reports_status")),
    )
    op.create_index("ix_reports_reporter_id", "reports", ["reporter_id"])
    op.create_index("ix_reports_target_id", "reports", ["target_id"])
    op.create_index("ix_reports_status", "reports", ["status"])
    op.create_table(
        "moderation_log",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("admin_id", sa.Integer(), _fk("moderation_log", "admin_id", ondelete="SET NULL"), nullable=True),
        sa.Column("admin_name", sa.String(32), nullable=False),
        sa.Column("action", sa.String(24), nullable=False),
        sa.Column("target_id", sa.Integer(), _fk("moderation_log", "target_id", ondelete="SET NULL"), nullable=True),
        sa.Column("target_name", sa.String(24), nullable=False),
        sa.Column("until", sa.DateTime(timezone=True), nullable=True),
        sa.Column("report_id", sa.Integer(), _fk("moderation_log", "report_id", "reports", "SET NULL"), nullable=True),
        sa.Column("why", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_index("ix_moderation_log_created_at", "moderation_log", ["created_at"])


def downgrade() -> None:
    """Drop the moderation tables."""
    op.drop_table("moderation_log")
    op.drop_table("reports")
    op.drop_table("account_moderation")
