"""Issue 45, the conversation list at size: a deep page of a filtered list (``status=OPEN``
or ``unassigned``, ``LIMIT 20 OFFSET 1980``) walked ``ix_conversations_office_id_listed``
backwards and read every row it passed from the table to check the filter (2,000 to 6,000
rows at 1,000,000 conversations, each a random read). The list's page now skips its offset
among the ids alone (``repository._page_by_ids``); with the filters' columns included in
the two listed indexes' entries that step is an index-only scan, and only the page's rows
are read from the table (decision "A deep page of the conversation list skips its offset in
the index").

PostgreSQL only (``INCLUDE``): SQLite's indexes stay as they were. The key columns are the
same, so the order and every plan that used the indexes stay; an entry is wider (the
statuses, an assignee's id, an inbox's id), written with each message as before (a message
changes ``sorted_at``: every index of the table takes a new entry already).

Revision ID: 0039_conversation_pages
Revises: 0038_conversation_counts
"""

from __future__ import annotations

from alembic import op

revision = "0039_conversation_pages"
down_revision = "0038_conversation_counts"
branch_labels = None
depends_on = None

LISTED = "ix_conversations_office_id_listed"
INBOX_LISTED = "ix_conversations_office_id_inbox_id_listed"
ORDER = ["is_fixed", "sorted_at", "id"]
LISTED_INCLUDE = ["inbox_id", "status", "assigned_user_id", "is_archived"]
INBOX_LISTED_INCLUDE = ["status", "assigned_user_id", "is_archived"]


def _replace(include: bool) -> None:
    op.drop_index(LISTED, table_name="conversations")
    op.create_index(
        LISTED,
        "conversations",
        ["office_id", *ORDER],
        postgresql_include=LISTED_INCLUDE if include else [],
    )
    op.drop_index(INBOX_LISTED, table_name="conversations")
    op.create_index(
        INBOX_LISTED,
        "conversations",
        ["office_id", "inbox_id", *ORDER],
        postgresql_include=INBOX_LISTED_INCLUDE if include else [],
    )


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        _replace(include=True)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        _replace(include=False)
