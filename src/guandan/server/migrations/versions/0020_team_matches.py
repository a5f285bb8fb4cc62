"""Duplicate team matches (复式, issue 22 item 3; issue 21 item 2 online): ``team_matches`` and
``team_match_plays`` (one row per board and table; ``(match_id, board, table_no)`` is unique, so a
board is played once per table however many requests start it).

Revision ID: 0020
Revises: 0019
Create Date: 2026-12-05 08:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0020"
down_revision: str | None = "0019"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _ts() -> sa.DateTime:
    return sa.DateTime(timezone=True)


def upgrade() -> None:
    """Create ``team_matches`` and ``team_match_plays``."""
    op.create_table(
        "team_matches",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("name", sa.String(80), nullable=False),
        sa.Column("organiser_id", sa.Integer(),
                  sa.ForeignKey("users.id", ondelete="SET NULL", name=op.f("fk_team_matches_organiser_id_users")),
                  nullable=True),
        sa.Column("preset", sa.String(32), nullable=False),
        sa.Column("n_boards", sa.Integer(), nullable=False),
        sa.Column("boards", sa.Text(), nullable=False),
        sa.Column("seats", sa.Text(), nullable=False),
        sa.Column("ranked", sa.Boolean(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("tournament_id", sa.Integer(),
                  sa.ForeignKey("tournaments.id", ondelete="CASCADE",
                                name=op.f("fk_team_matches_tournament_id_tournaments")),
                  nullable=True),
        sa.Column("round", sa.Integer(), nullable=True),
        sa.Column("table_no", sa.Integer(), nullable=True),
        sa.Column("created_at", _ts(), nullable=False),
        sa.Column("finished_at", _ts(), nullable=True),
    )
    op.create_index("ix_team_matches_organiser_id", "team_matches", ["organiser_id"])
    op.create_index("ix_team_matches_tournament_id", "team_matches", ["tournament_id"])
    op.create_table(
        "team_match_plays",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("match_id", sa.Integer(),
                  sa.ForeignKey("team_matches.id", ondelete="CASCADE",
                                name=op.f("fk_team_match_plays_match_id_team_matches")),
                  nullable=False),
        sa.Column("board", sa.Integer(), nullable=False),
        sa.Column("table_no", sa.Integer(), nullable=False),
        sa.Column("room_id", sa.String(8),
                  sa.ForeignKey("rooms.id", ondelete="SET NULL", name=op.f("fk_team_match_plays_room_id_rooms")),
                  nullable=True),
        sa.Column("game_id", sa.Integer(),
                  sa.ForeignKey("games.id", ondelete="SET NULL", name=op.f("fk_team_match_plays_game_id_games")),
                  nullable=True),
        sa.Column("result", sa.Integer(), nullable=True),
        sa.Column("started_at", _ts(), nullable=False),
        sa.Column("finished_at", _ts(), nullable=True),
        sa.CheckConstraint("board >= 1", name=op.f("ck_team_match_plays_board")),
        sa.CheckConstraint("table_no >= 1 AND table_no <= 2", name=op.f("ck_team_match_plays_table_no")),
    )
    op.create_index("uq_team_match_plays_key", "team_match_plays", ["match_id", "board", "table_no"], unique=True)
    op.create_index("ix_team_match_plays_room_id", "team_match_plays", ["room_id"])


def downgrade() -> None:
    """Drop the team match tables."""
    op.drop_table("team_match_plays")
    op.drop_table("team_matches")
