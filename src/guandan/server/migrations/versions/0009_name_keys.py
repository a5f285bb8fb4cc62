"""Look-alike names (issue 26 item 15): ``users.name_key``, unique.

``name_key`` is :func:`guandan.server.confusables.name_key` of the name (its TR39-style skeleton):
two names with the same key look alike, and only one of them may be registered. Existing accounts
get their key here, oldest first; an account whose key an older one already holds keeps ``NULL``
(both stay usable; no new look-alike of either can register).

Revision ID: 0009
Revises: 0007
Create Date: 2026-12-04 18:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Add ``users.name_key``, fill it for existing accounts, and make it unique."""
    from guandan.server.confusables import name_key

    op.add_column("users", sa.Column("name_key", sa.String(24), nullable=True))
    conn = op.get_bind()
    users = sa.table("users", sa.column("id", sa.Integer), sa.column("name", sa.String), sa.column("name_key", sa.String))
    taken: set[str] = set()
    for uid, name in conn.execute(sa.select(users.c.id, users.c.name).order_by(users.c.id)).all():
        key = name_key(name or "")
        if not key or key in taken:
            continue
        taken.add(key)
        conn.execute(sa.update(users).where(users.c.id == uid).values(name_key=key))
    op.create_index("uq_users_name_key", "users", ["name_key"], unique=True)


def downgrade() -> None:
    """Drop ``users.name_key``."""
    op.drop_index("uq_users_name_key", table_name="users")
    with op.batch_alter_table("users") as batch:
        batch.drop_column("name_key")
