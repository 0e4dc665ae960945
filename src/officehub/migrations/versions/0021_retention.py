"""Issue 30, retention and the office's time zone: ``office_settings`` takes the retention
periods (closed conversations, webhook delivery logs) and the IANA time zone;
``conversations.closed_at`` (when it was last closed; the closed ones so far take their last
change) with a partial index for the retention job; ``audit_entries.details`` (the counts a
system run reports).

Revision ID: 0021_retention
Revises: 0020_djen
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from officehub.migrations.types import JSON, ts

revision = "0021_retention"
down_revision = "0020_djen"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column(
        "office_settings", sa.Column("closed_conversations_days", sa.Integer(), nullable=True)
    )
    op.add_column(
        "office_settings", sa.Column("webhook_deliveries_days", sa.Integer(), nullable=True)
    )
    op.add_column("office_settings", sa.Column("time_zone", sa.String(64), nullable=True))
    op.add_column("conversations", ts("closed_at", nullable=True))
    op.execute("UPDATE conversations SET closed_at = updated_at WHERE status = 'CLOSED'")
    op.create_index(
        "ix_conversations_office_id_closed_at",
        "conversations",
        ["office_id", "closed_at"],
        sqlite_where=sa.text("status = 'CLOSED'"),
        postgresql_where=sa.text("status = 'CLOSED'"),
    )
    op.add_column("audit_entries", sa.Column("details", JSON, nullable=True))


def downgrade() -> None:
    op.drop_column("audit_entries", "details")
    op.drop_index("ix_conversations_office_id_closed_at", table_name="conversations")
    op.drop_column("conversations", "closed_at")
    op.drop_column("office_settings", "time_zone")
    op.drop_column("office_settings", "webhook_deliveries_days")
    op.drop_column("office_settings", "closed_conversations_days")
