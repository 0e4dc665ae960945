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
    op.create_table(
        "flow_sessions",
        ident("office_id"),
        ident("conversation_id"),
        ident("flow_id"),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("current_step_id", sa.String(length=128), nullable=True),
        sa.Column("reasked", sa.Boolean(), nullable=False),
        sa.Column("end_reason", sa.String(length=32), nullable=True),
        sa.Column("steps", JSON, nullable=False),
        ts("last_activity_at"),
        ident("id"),
        ts("created_at"),
        ts("updated_at"),
        sa.ForeignKeyConstraint(
            ["office_id"],
            ["offices.id"],
            name=op.f("fk_flow_sessions_office_id_offices"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["conversation_id"],
            ["conversations.id"],
            name=op.f("fk_flow_sessions_conversation_id_conversations"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["flow_id"],
            ["flows.id"],
            name=op.f("fk_flow_sessions_flow_id_flows"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_flow_sessions")),
    )
    op.create_index(
        "ix_flow_sessions_office_id_conversation_id",
        "flow_sessions",
        ["office_id", "conversation_id"],
        unique=True,
    )

    op.create_table(
        "case_movements",
        ident("office_id"),
        ident("person_id"),
        sa.Column("case_number", sa.String(length=64), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        ts("occurred_at"),
        ident("id"),
        ts("created_at"),
        ts("updated_at"),
        sa.ForeignKeyConstraint(
            ["office_id"],
            ["offices.id"],
            name=op.f("fk_case_movements_office_id_offices"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["person_id"],
            ["contacts.id"],
            name=op.f("fk_case_movements_person_id_contacts"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_case_movements")),
    )
    op.create_index(
        "ix_case_movements_office_id_person_id_occurred_at",
        "case_movements",
        ["office_id", "person_id", "occurred_at"],
    )


def downgrade() -> None:
    op.drop_index("ix_case_movements_office_id_person_id_occurred_at", table_name="case_movements")
    op.drop_table("case_movements")
    op.drop_index("ix_flow_sessions_office_id_conversation_id", table_name="flow_sessions")
    op.drop_table("flow_sessions")
    op.drop_index("ix_flows_office_id_inbox_id_created_at", table_name="flows")
    op.drop_table("flows")
