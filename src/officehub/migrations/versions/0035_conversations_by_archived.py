"""Issue 45, the conversation list at size: the console asks every list with
``isArchived=false``, and the list's total then read the whole table (no index held
``is_archived``). An index on ``(office_id, is_archived)`` counts it from the index alone.

Revision ID: 0035_conversations_by_archived
Revises: 0034_conversation_filters
"""

from __future__ import annotations

from alembic import op

revision = "0035_conversations_by_archived"
down_revision = "0034_conversation_filters"
branch_labels = None
depends_on = None

BY_ARCHIVED = "ix_conversations_office_id_is_archived"


def upgrade() -> None:
    op.create_index(BY_ARCHIVED, "conversations", ["office_id", "is_archived"])


def downgrade() -> None:
    op.drop_index(BY_ARCHIVED, table_name="conversations")
