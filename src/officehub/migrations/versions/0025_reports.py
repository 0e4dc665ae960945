"""Issue 32, reports: conversations by when they were first answered (the first-response
figures of ``GET /reports/conversations`` read a range of it).

Revision ID: 0025_reports
Revises: 0024_lawyer_user
"""

from __future__ import annotations

from alembic import op

revision = "0025_reports"
down_revision = "0024_lawyer_user"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index(
        "ix_conversations_office_id_first_response_at",
        "conversations",
        ["office_id", "first_response_at"],
    )


def downgrade() -> None:
    op.drop_index("ix_conversations_office_id_first_response_at", table_name="conversations")
