"""The daily duplicate challenge (issue 22): ``challenges``, ``challenge_plays``, and two columns
of ``rooms``: ``board`` (a board room's board JSON) and ``secret_until`` (until when only the
room's seats may see its game).

``challenges.day`` is unique (one challenge per UTC day, however many processes create it at
once); ``(challenge_id, board, user_id)`` is unique in ``challenge_plays`` (a board is played once
per account).

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-04 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _ts() -> sa.DateTime:
    return sa.DateTime(timezone=True)


def upgrade() -> None:
    """Add the two ``rooms`` columns and create the two challenge tables.

    The columns are added and dropped in place (``ALTER TABLE``; SQLite 3.35 or later drops a
    column in place), never by rebuilding ``rooms``: on SQLite a rebuild drops the old table,
    which, with foreign keys on, deletes the rows that refer to it (seats, live record lines)."""
    op.add_column("rooms", sa.Column("board", sa.Text(), nullable=True))
    op.add_column("rooms", sa.Column("secret_until", _ts(), nullable=True))
    op.create_table(
        "challenges",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("day", sa.String(10), nullable=False),
        sa.Column("preset", sa.String(32), nullable=False),
        sa.Column("bots", sa.String(16), nullable=False),
        sa.Column("n_boards", sa.Integer(), nullable=False),
        sa.Column("boards", sa.Text(), nullable=False),
        sa.Column("created_at", _ts(), nullable=False),
        sa.UniqueConstraint("day", name=op.f("uq_challenges_day")),
    )
    op.create_table(
        "challenge_plays",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column(
            "challenge_id",
            sa.Integer(),
            sa.ForeignKey("challenges.id", ondelete="CASCADE", name=op.f("fk_challenge_plays_challenge_id_challenges")),
            nullable=False,
        ),
        sa.Column("board", sa.Integer(), nullable=False),
        sa.Column(
            "user_id",
            sa.Integer(),
            sa.ForeignKey("users.id", ondelete="CASCADE", name=op.f("fk_challenge_plays_user_id_users")),
            nullable=False,
        ),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("ranked", sa.Boolean(), nullable=False),
        sa.Column(
            "room_id",
            sa.String(8),
            sa.ForeignKey("rooms.id", ondelete="SET NULL", name=op.f("fk_challenge_plays_room_id_rooms")),
            nullable=True,
        ),
        sa.Column(
            "game_id",
            sa.Integer(),
            sa.ForeignKey("games.id", ondelete="SET NULL", name=op.f("fk_challenge_plays_game_id_games")),
            nullable=True,
        ),
        sa.Column("result", sa.Integer(), nullable=True),
        sa.Column("started_at", _ts(), nullable=False),
        sa.Column("finished_at", _ts(), nullable=True),
        sa.CheckConstraint("board >= 1", name=op.f("ck_challenge_plays_board")),
        sa.CheckConstraint("seat >= 0 AND seat <= 3", name=op.f("ck_challenge_plays_seat")),
    )
    op.create_index("uq_challenge_plays_key", "challenge_plays", ["challenge_id", "board", "user_id"], unique=True)
    op.create_index("ix_challenge_plays_results", "challenge_plays", ["challenge_id", "result", "ranked"])
    op.create_index("ix_challenge_plays_finished", "challenge_plays", ["challenge_id", "finished_at"])
    op.create_index("ix_challenge_plays_user_id", "challenge_plays", ["user_id"])
    op.create_index("ix_challenge_plays_room_id", "challenge_plays", ["room_id"])


def downgrade() -> None:
    """Drop the challenge tables and the two ``rooms`` columns."""
    op.drop_table("challenge_plays")
    op.drop_table("challenges")
    op.drop_column("rooms", "secret_until")
    op.drop_column("rooms", "board")
