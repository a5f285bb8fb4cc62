"""Mutual blocks (issue 25 item 2): ``friend_links.status`` may be ``blocked_both``.

Until now a pair of accounts held one link, so when both blocked each other the second block wrote
nothing and the first blocker's unblock lifted both. ``blocked_both`` keeps the two blocks: either
side's unblock turns it back into a plain ``blocked`` by the other (rules: :mod:`guandan.server.friends`).

Revision ID: 0015
Revises: 0010
Create Date: 2026-12-05 03:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0015"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_OLD = "status IN ('pending', 'accepted', 'blocked')"
_NEW = "status IN ('pending', 'accepted', 'blocked', 'blocked_both')"


def _status_check(allowed: str) -> None:
    # SQLite cannot alter a CHECK in place: the batch rebuilds the table (its index is kept by name)
    with op.batch_alter_table("friend_links", recreate="always") as batch:
        batch.drop_constraint(op.f("ck_friend_links_status"), type_="check")
        batch.create_check_constraint("status", allowed)


def upgrade() -> None:
    """Allow ``blocked_both`` in ``friend_links.status``."""
    _status_check(_NEW)


def downgrade() -> None:
    """Turn mutual blocks back into one block (the first blocker's) and drop ``blocked_both``."""
    op.execute("UPDATE friend_links SET status = 'blocked' WHERE status = 'blocked_both'")
    _status_check(_OLD)
