"""Issue 32, service levels: the SLA policies of inboxes (``sla_policies``), and on each
conversation the policy that applies, its due times and breaches, and the times reports
count from (first inbound, first response, awaiting since, last response, resolution).

Revision ID: 0022_sla
Revises: 0021_retention
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from officehub.migrations.types import ident, ts

revision = "0022_sla"
down_revision = "0021_retention"
branch_labels = None
depends_on = None

TIMES = (
    "first_inbound_at",
    "first_response_at",
    "awaiting_since",
    "last_response_at",
    "resolution_started_at",
    "first_response_due_at",
    "next_response_due_at",
    "resolution_due_at",
    "first_response_breached_at",
    "next_response_breached_at",
    "resolution_breached_at",
    "sla_check_at",
)


def upgrade() -> None:
    op.create_table(
        "sla_policies",
        ident("id"),
        ident("office_id"),
        ident("inbox_id"),
        sa.Column("priority", sa.String(8), nullable=True),
        ident("legal_area_id", nullable=True),
        sa.Column("first_response_minutes", sa.Integer(), nullable=False),
        sa.Column("next_response_minutes", sa.Integer(), nullable=False),
        sa.Column("resolution_business_days", sa.Integer(), nullable=False),
        ts("created_at"),
        ts("updated_at"),
        sa.ForeignKeyConstraint(
            ["office_id"],
            ["offices.id"],
            name=op.f("fk_sla_policies_office_id_offices"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["inbox_id"],
            ["inboxes.id"],
            name=op.f("fk_sla_policies_inbox_id_inboxes"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["legal_area_id"],
            ["legal_areas.id"],
            name=op.f("fk_sla_policies_legal_area_id_legal_areas"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_sla_policies")),
    )
    op.create_index(
        "ix_sla_policies_office_id_inbox_id",
        "sla_policies",
        ["office_id", "inbox_id", "created_at"],
    )
    # Plain ADD COLUMNs (no batch copy: many tables refer to conversations).
    op.add_column("conversations", ident("sla_policy_id", nullable=True))
    for name in TIMES:
        op.add_column("conversations", ts(name, nullable=True))
    op.create_index(
        "ix_conversations_sla_check_due",
        "conversations",
        ["sla_check_at"],
        sqlite_where=sa.text("sla_check_at IS NOT NULL"),
        postgresql_where=sa.text("sla_check_at IS NOT NULL"),
    )


def downgrade() -> None:
    op.drop_index("ix_conversations_sla_check_due", "conversations")
    for name in reversed(TIMES):
        op.drop_column("conversations", name)
    op.drop_column("conversations", "sla_policy_id")
    op.drop_index("ix_sla_policies_office_id_inbox_id", "sla_policies")
    op.drop_table("sla_policies")
