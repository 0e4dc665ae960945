"""Issue 32, routing: users' availability, capacity and legal areas; inboxes' assignment
policy, ``byLegalArea`` and round-robin cursor; conversations' legal area and queue time,
and the index that counts a user's open conversations.

Revision ID: 0017_routing
Revises: 0016_audit
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from officehub.migrations.types import ident, ts

revision = "0017_routing"
down_revision = "0016_audit"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Plain ADD COLUMNs (no batch copy: many tables refer to users, inboxes, conversations).
    op.add_column(
        "users",
        sa.Column("availability", sa.String(8), nullable=False, server_default="ONLINE"),
    )
    op.add_column("users", sa.Column("capacity", sa.Integer(), nullable=True))
    op.create_table(
        "user_legal_areas",
        ident("office_id"),
        ident("user_id", primary_key=True),
        ident("legal_area_id", primary_key=True),
        sa.ForeignKeyConstraint(["office_id"], ["offices.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(["legal_area_id"], ["legal_areas.id"], ondelete="CASCADE"),
    )
    op.create_index(
        "ix_user_legal_areas_office_id_legal_area_id",
        "user_legal_areas",
        ["office_id", "legal_area_id"],
    )
    op.add_column(
        "inboxes",
        sa.Column("assignment_policy", sa.String(16), nullable=False, server_default="MANUAL"),
    )
    op.add_column(
        "inboxes",
        sa.Column("assign_by_legal_area", sa.Boolean(), nullable=False, server_default=sa.false()),
    )
    op.add_column("inboxes", sa.Column("round_robin_cursor", sa.String(32), nullable=True))
    # No foreign key: SQLite cannot add one to a table others refer to without a batch copy
    # (docs/decisions.md); deleting a legal area clears it (the legal_area.deleting hook).
    op.add_column("conversations", ident("legal_area_id", nullable=True))
    op.add_column("conversations", ts("queued_at", nullable=True))
    op.create_index(
        "ix_conversations_office_id_inbox_id_queued_at",
        "conversations",
        ["office_id", "inbox_id", "queued_at"],
        sqlite_where=sa.text("queued_at IS NOT NULL"),
        postgresql_where=sa.text("queued_at IS NOT NULL"),
    )
    op.create_index(
        "ix_conversations_office_id_assigned_user_id_status",
        "conversations",
        ["office_id", "assigned_user_id", "status"],
    )


def downgrade() -> None:
    op.drop_index("ix_conversations_office_id_assigned_user_id_status", "conversations")
    op.drop_index("ix_conversations_office_id_inbox_id_queued_at", "conversations")
    op.drop_column("conversations", "queued_at")
    op.drop_column("conversations", "legal_area_id")
    op.drop_column("inboxes", "round_robin_cursor")
    op.drop_column("inboxes", "assign_by_legal_area")
    op.drop_column("inboxes", "assignment_policy")
    op.drop_index("ix_user_legal_areas_office_id_legal_area_id", "user_legal_areas")
    op.drop_table("user_legal_areas")
    op.drop_column("users", "capacity")
    op.drop_column("users", "availability")
