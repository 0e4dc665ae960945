"""Issue 29, console presence: one ``user_presence`` row per open console connection of a
signed-in user; a user's availability follows their presence (``users.presence``).

Revision ID: 0023_presence
Revises: 0022_sla
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from officehub.migrations.types import ident, ts

revision = "0023_presence"
down_revision = "0022_sla"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "user_presence",
        ident("office_id"),
        ident("user_id"),
        ts("opened_at"),
        ts("seen_at"),
        ts("closed_at", nullable=True),
        ident("id"),
        sa.ForeignKeyConstraint(
            ["office_id"],
            ["offices.id"],
            name=op.f("fk_user_presence_office_id_offices"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_user_presence_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_user_presence")),
    )
    op.create_index("ix_user_presence_office_id_user_id", "user_presence", ["office_id", "user_id"])


def downgrade() -> None:
    op.drop_table("user_presence")
