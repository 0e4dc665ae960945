"""The live inbox's conversation list (issue 29): pinned and archived conversations, the
last message and the inbound count kept on the conversation, the list's order column, and
each user's read mark.

Revision ID: 0015_inboxlist
Revises: 0015_notices
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from officehub.migrations.types import ident, ts

revision = "0015_inboxlist"
down_revision = "0015_notices"
branch_labels = None
depends_on = None

_COUNT = "SELECT count(*) FROM messages m WHERE m.conversation_id = conversations.id"
_LAST = (
    "SELECT m.{column} FROM messages m WHERE m.conversation_id = conversations.id "
    "AND m.type <> 'REACTION' ORDER BY m.created_at DESC, m.id DESC LIMIT 1"
)


def upgrade() -> None:
    # Plain ADD COLUMN, never a batch copy: messages, notes and tags refer to conversations
    # (ON DELETE CASCADE), docs/decisions.md.
    false, zero = sa.false(), "0"
    for column in (
        sa.Column("is_fixed", sa.Boolean(), nullable=False, server_default=false),
        sa.Column("is_archived", sa.Boolean(), nullable=False, server_default=false),
        ts("sorted_at", nullable=True),
        ident("last_message_id", nullable=True),
        sa.Column("last_message_text", sa.Text(), nullable=True),
        sa.Column("last_message_type", sa.String(16), nullable=True),
        ident("last_message_user_id", nullable=True),
        sa.Column("inbound_count", sa.Integer(), nullable=False, server_default=zero),
        sa.Column("inbound_read", sa.Integer(), nullable=False, server_default=zero),
    ):
        op.add_column("conversations", column)
    # What the stored messages say: the last one, the inbound count, all of it read (no
    # read mark was kept before, so nothing counts as unread after the upgrade).
    op.execute(
        "UPDATE conversations SET "  # noqa: S608 (built of the constants above)
        f"last_message_id = ({_LAST.format(column='id')}), "
        f"last_message_text = ({_LAST.format(column='text')}), "
        f"last_message_type = ({_LAST.format(column='type')}), "
        f"inbound_count = ({_COUNT} AND m.direction = 'INBOUND'), "
        f"inbound_read = ({_COUNT} AND m.direction = 'INBOUND')"
    )
    op.execute("UPDATE conversations SET sorted_at = COALESCE(last_message_at, created_at)")
    op.create_index(
        "ix_conversations_office_id_listed",
        "conversations",
        ["office_id", "is_fixed", "sorted_at", "id"],
    )
    op.create_index(
        "ix_conversations_office_id_inbox_id_listed",
        "conversations",
        ["office_id", "inbox_id", "is_fixed", "sorted_at", "id"],
    )
    op.create_table(
        "conversation_reads",
        ident("office_id"),
        ident("conversation_id"),
        ident("user_id"),
        sa.Column("inbound_read", sa.Integer(), nullable=False),
        ts("read_at"),
        sa.ForeignKeyConstraint(
            ["office_id"],
            ["offices.id"],
            name=op.f("fk_conversation_reads_office_id_offices"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["conversation_id"],
            ["conversations.id"],
            name=op.f("fk_conversation_reads_conversation_id_conversations"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_conversation_reads_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("conversation_id", "user_id", name=op.f("pk_conversation_reads")),
    )
    op.create_index(
        "ix_conversation_reads_office_id_user_id", "conversation_reads", ["office_id", "user_id"]
    )


def downgrade() -> None:
    op.drop_table("conversation_reads")
    op.drop_index("ix_conversations_office_id_inbox_id_listed", table_name="conversations")
    op.drop_index("ix_conversations_office_id_listed", table_name="conversations")
    for column in (
        "inbound_read",
        "inbound_count",
        "last_message_user_id",
        "last_message_type",
        "last_message_text",
        "last_message_id",
        "sorted_at",
        "is_archived",
        "is_fixed",
    ):
        op.drop_column("conversations", column)
