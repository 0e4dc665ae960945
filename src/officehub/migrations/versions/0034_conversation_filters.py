"""Issue 42, the inbox's filters: ``GET /conversation`` by legal area, by tag and by a search
that reads message text (a trigram GIN index on PostgreSQL; SQLite reads the rows).

Revision ID: 0034_conversation_filters
Revises: 0033_event_sequences
"""

from __future__ import annotations

from alembic import op

revision = "0034_conversation_filters"
down_revision = "0033_event_sequences"
branch_labels = None
depends_on = None

BY_LEGAL_AREA = "ix_conversations_office_id_legal_area_id"
BY_TAG = "ix_conversation_tags_office_id_tag_id"
MESSAGE_TEXT = "ix_messages_office_id_text_trgm"


def upgrade() -> None:
    op.create_index(BY_LEGAL_AREA, "conversations", ["office_id", "legal_area_id"])
    op.create_index(BY_TAG, "conversation_tags", ["office_id", "tag_id", "conversation_id"])
    if op.get_bind().dialect.name != "postgresql":
        return
    # 0007_trgm made the extensions (pg_trgm, btree_gin); IF NOT EXISTS keeps this one
    # standing on its own.
    op.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
    op.execute("CREATE EXTENSION IF NOT EXISTS btree_gin")
    op.create_index(
        MESSAGE_TEXT,
        "messages",
        ["office_id", "text"],
        postgresql_using="gin",
        postgresql_ops={"text": "gin_trgm_ops"},
    )


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.drop_index(MESSAGE_TEXT, table_name="messages")
    op.drop_index(BY_TAG, table_name="conversation_tags")
    op.drop_index(BY_LEGAL_AREA, table_name="conversations")
