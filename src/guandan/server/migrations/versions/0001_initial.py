"""Initial schema: users, sessions, rooms, room_seats, games, game_players.

Revision ID: 0001
Revises:
Create Date: 2025-01-01 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _ts() -> sa.DateTime:
    return sa.DateTime(timezone=True)


def upgrade() -> None:
    """Create every table of the server contract."""
    op.create_table(
        "users",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column("name", sa.String(24), nullable=False),
        sa.Column("password_hash", sa.String(255), nullable=True),
        sa.Column("is_guest", sa.Boolean(), nullable=False),
        sa.Column("created_at", _ts(), nullable=False),
        sa.Column("rating_mu", sa.Float(), nullable=False),
        sa.Column("rating_sigma", sa.Float(), nullable=False),
        sa.Column("games_played", sa.Integer(), nullable=False),
        sa.Column("games_won", sa.Integer(), nullable=False),
        sa.Column("anhui_points", sa.Integer(), nullable=False),
        sa.UniqueConstraint("name", name=op.f("uq_users_name")),
    )
    op.create_index("uq_users_name_lower", "users", [sa.text("lower(name)")], unique=True)

    op.create_table(
        "sessions",
        sa.Column("token", sa.String(64), primary_key=True),
        sa.Column(
            "user_id",
            sa.Integer(),
            sa.ForeignKey("users.id", ondelete="CASCADE", name=op.f("fk_sessions_user_id_users")),
            nullable=False,
        ),
        sa.Column("created_at", _ts(), nullable=False),
        sa.Column("expires_at", _ts(), nullable=False),
    )
    op.create_index("ix_sessions_user_id", "sessions", ["user_id"])

    op.create_table(
        "rooms",
        sa.Column("id", sa.String(8), primary_key=True),
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("preset", sa.String(32), nullable=False),
        sa.Column("options", sa.JSON(), nullable=False),
        sa.Column(
            "owner_id",
            sa.Integer(),
            sa.ForeignKey("users.id", ondelete="SET NULL", name=op.f("fk_rooms_owner_id_users")),
            nullable=True,
        ),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("seed", sa.BigInteger(), nullable=True),
        sa.Column("record", sa.Text(), nullable=False),
        sa.Column("created_at", _ts(), nullable=False),
        sa.Column("updated_at", _ts(), nullable=False),
        sa.CheckConstraint("status IN ('waiting', 'playing', 'finished')", name=op.f("ck_rooms_status")),
    )
    op.create_index("ix_rooms_status", "rooms", ["status"])

    op.create_table(
        "room_seats",
        sa.Column(
            "room_id",
            sa.String(8),
            sa.ForeignKey("rooms.id", ondelete="CASCADE", name=op.f("fk_room_seats_room_id_rooms")),
            primary_key=True,
        ),
        sa.Column("seat", sa.Integer(), primary_key=True),
        sa.Column(
            "user_id",
            sa.Integer(),
            sa.ForeignKey("users.id", ondelete="SET NULL", name=op.f("fk_room_seats_user_id_users")),
            nullable=True,
        ),
        sa.Column("bot", sa.String(16), nullable=True),
        sa.CheckConstraint("seat >= 0 AND seat <= 3", name=op.f("ck_room_seats_seat")),
    )
    op.create_index("ix_room_seats_user_id", "room_seats", ["user_id"])

    op.create_table(
        "games",
        sa.Column("id", sa.Integer(), primary_key=True, autoincrement=True),
        sa.Column(
            "room_id",
            sa.String(8),
            sa.ForeignKey("rooms.id", ondelete="SET NULL", name=op.f("fk_games_room_id_rooms")),
            nullable=True,
        ),
        sa.Column("preset", sa.String(32), nullable=False),
        sa.Column("record", sa.Text(), nullable=False),
        sa.Column("winner_team", sa.Integer(), nullable=True),
        sa.Column("finished_at", _ts(), nullable=False),
    )
    op.create_index("ix_games_room_id", "games", ["room_id"])
    op.create_index("ix_games_finished_at", "games", ["finished_at"])

    op.create_table(
        "game_players",
        sa.Column(
            "game_id",
            sa.Integer(),
            sa.ForeignKey("games.id", ondelete="CASCADE", name=op.f("fk_game_players_game_id_games")),
            primary_key=True,
        ),
        sa.Column("seat", sa.Integer(), primary_key=True),
        sa.Column(
            "user_id",
            sa.Integer(),
            sa.ForeignKey("users.id", ondelete="SET NULL", name=op.f("fk_game_players_user_id_users")),
            nullable=True,
        ),
        sa.Column("bot", sa.String(16), nullable=True),
        sa.CheckConstraint("seat >= 0 AND seat <= 3", name=op.f("ck_game_players_seat")),
    )
    op.create_index("ix_game_players_user_id", "game_players", ["user_id"])


def downgrade() -> None:
    """Drop every table (all data is lost)."""
    op.drop_index("ix_game_players_user_id", table_name="game_players")
    op.drop_table("game_players")
    op.drop_index("ix_games_finished_at", table_name="games")
    op.drop_index("ix_games_room_id", table_name="games")
    op.drop_table("games")
    op.drop_index("ix_room_seats_user_id", table_name="room_seats")
    op.drop_table("room_seats")
    op.drop_index("ix_rooms_status", table_name="rooms")
    op.drop_table("rooms")
    op.drop_index("ix_sessions_user_id", table_name="sessions")
    op.drop_table("sessions")
    op.drop_index("uq_users_name_lower", table_name="users")
    op.drop_table("users")
