"""Append-only game storage (issue 10): table ``game_events``, one row per record line.

A live game was stored by rewriting the room's whole ``record`` after every action (about 70 KB
per action late in a game). From this revision the live game is its header (row ``idx`` 0) plus one
row per event (``idx`` 1, 2, ...) in ``game_events``; ``rooms.record`` stays empty while the game is
played and receives the complete record when the game is over (:mod:`guandan.server.gamestore`).

Existing databases migrate in place: the record of every ``playing`` room is split into rows and
its ``record`` column emptied, so a server of this version restores the same tables. Rooms in any
other status keep their ``record`` (finished games are complete there; a ``damaged`` room's record
is never read).

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-01 00:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_rooms = sa.table(
    "rooms",
    sa.column("id", sa.String(8)),
    sa.column("status", sa.String(16)),
    sa.column("record", sa.Text()),
)
_events = sa.table(
    "game_events",
    sa.column("room_id", sa.String(8)),
    sa.column("idx", sa.Integer()),
    sa.column("line", sa.Text()),
)


def upgrade() -> None:
    """Create ``game_events``; move every playing room's record into it (one row per line)."""
    op.create_table(
        "game_events",
        sa.Column(
            "room_id",
            sa.String(8),
            sa.ForeignKey("rooms.id", ondelete="CASCADE", name=op.f("fk_game_events_room_id_rooms")),
            primary_key=True,
        ),
        sa.Column("idx", sa.Integer(), primary_key=True, autoincrement=False),
        sa.Column("line", sa.Text(), nullable=False),
        sa.CheckConstraint("idx >= 0", name=op.f("ck_game_events_idx")),
    )
    conn = op.get_bind()
    ids = conn.execute(
        sa.select(_rooms.c.id).where(_rooms.c.status == "playing", _rooms.c.record != "")
    ).scalars().all()
    for room_id in ids:  # one room's record in memory at a time
        record = conn.execute(sa.select(_rooms.c.record).where(_rooms.c.id == room_id)).scalar_one()
        lines = [ln for ln in record.split("\n") if ln.strip()]
        if lines:
            conn.execute(_events.insert(), [{"room_id": room_id, "idx": i, "line": ln} for i, ln in enumerate(lines)])
        conn.execute(_rooms.update().where(_rooms.c.id == room_id).values(record=""))


def downgrade() -> None:
    """Put every live game's rows back into its room's ``record``; drop ``game_events``."""
    conn = op.get_bind()
    ids = conn.execute(sa.select(_events.c.room_id).distinct()).scalars().all()
    for room_id in ids:
        lines = conn.execute(
            sa.select(_events.c.line).where(_events.c.room_id == room_id).order_by(_events.c.idx)
        ).scalars().all()
        conn.execute(
            _rooms.update().where(_rooms.c.id == room_id, _rooms.c.status == "playing")
            .values(record="".join(ln + "\n" for ln in lines))
        )
    op.drop_table("game_events")
