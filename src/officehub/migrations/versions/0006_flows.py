"""Conversation flows: the step graph of an inbox.

Revision ID: 0006_flows
Revises: 0005_whatsapp
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from officehub.migrations.types import JSON, ident, ts

revision = "0006_flows"
down_revision = "0005_whatsapp"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "flows",
        ident("office_id"),
        ident("inbox_id"),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("color", sa.String(length=32), nullable=True),
        sa.Column("is_social_flow", sa.Boolean(), nullable=False),
        sa.Column("content", JSON, nullable=False),
        ident("id"),
        ts("created_at"),
        ts("updated_at"),
        sa.ForeignKeyConstraint(
            ["office_id"],
            ["offices.id"],
            name=op.f("fk_flows_office_id_offices"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["inbox_id"],
            ["inboxes.id"],
            name=op.f("fk_flows_inbox_id_inboxes"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_flows")),
    )
    op.create_index(
        "ix_flows_office_id_inbox_id_created_at",
        "flows",
        ["office_id", "inbox_id", "created_at"],
    )


def downgrade() -> None:
    op.drop_index("ix_flows_office_id_inbox_id_created_at", table_name="flows")
    op.drop_table("flows")
