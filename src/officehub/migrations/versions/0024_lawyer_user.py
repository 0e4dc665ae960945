"""Issue 31, a lawyer linked to a user: ``lawyers.user_id``, the office's user who is the
lawyer (their publications' tickets are assigned to them).

No foreign key: SQLite cannot add one to a table others refer to (``publications``) without
a batch copy, which would null the publications' ``lawyer_id`` (docs/decisions.md); users
are never deleted, and the sync assigns only an active user of the office.

Revision ID: 0024_lawyer_user
Revises: 0023_presence
"""

from __future__ import annotations

from alembic import op

from officehub.migrations.types import ident

revision = "0024_lawyer_user"
down_revision = "0023_presence"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("lawyers", ident("user_id", nullable=True))


def downgrade() -> None:
    op.drop_column("lawyers", "user_id")
