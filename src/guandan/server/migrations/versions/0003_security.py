"""Security (issue 11): session tokens stored as SHA-256; rooms may be ``damaged``.

* ``sessions.token`` holds ``sha256(token)`` in hex (64 characters) instead of the token itself;
  existing sessions are converted in place, so nobody is logged out.
* ``rooms.status`` may be ``damaged``: a room whose stored game cannot be restored.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01 00:00:00
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_OLD = "status IN ('waiting', 'playing', 'finished')"
_NEW = "status IN ('waiting', 'playing', 'finished', 'damaged')"


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def upgrade() -> None:
    """Hash the stored session tokens; allow the ``damaged`` room status."""
    conn = op.get_bind()
    sessions = sa.table("sessions", sa.column("token", sa.String(64)))
    for (token,) in conn.execute(sa.select(sessions.c.token)).all():
        conn.execute(sessions.update().where(sessions.c.token == token).values(token=_hash(token)))
    with op.batch_alter_table("rooms") as batch:
        batch.drop_constraint(op.f("ck_rooms_status"), type_="check")
        batch.create_check_constraint(op.f("ck_rooms_status"), _NEW)


def downgrade() -> None:
    """Restore the old status check (damaged rooms become finished); hashed sessions are dropped
    (a hash cannot be turned back into its token: everyone logs in again)."""
    op.execute("UPDATE rooms SET status = 'finished' WHERE status = 'damaged'")
    op.execute("DELETE FROM sessions")
    with op.batch_alter_table("rooms") as batch:
        batch.drop_constraint(op.f("ck_rooms_status"), type_="check")
        batch.create_check_constraint(op.f("ck_rooms_status"), _OLD)
