"""Trigram indexes for substring search of contacts (PostgreSQL only).

``GET /people?search=`` matches ``search_name LIKE '%…%'`` or ``phone LIKE '%…%'`` (see
``contacts.repository._contacts_query``). A B-tree cannot serve a pattern with a leading
wildcard, so past ~100,000 contacts an office's search read every one of its contacts.
GIN indexes of ``pg_trgm`` trigrams serve ``LIKE`` with any wildcard; ``btree_gin`` lets
the same index start with ``office_id`` (every index starts with it: the schema can be
sharded by office). Both extensions ship with PostgreSQL and are trusted (PostgreSQL 13+):
the database's owner may create them. SQLite is untouched: it has no such index, and
searches there stay bounded by the ``(office_id, search_name)`` index.

Both databases: ``(office_id, inbox_id, created_at, id)`` on conversations, the order of
``GET /conversation?inboxId=`` (newest first): the list of one inbox reads its page from
the index instead of walking the office's conversations by date and skipping other inboxes'
(``tests/test_query_plans.py`` found the plan).

Revision ID: 0007_trgm
Revises: 0007_webchat
"""

from __future__ import annotations

from alembic import op

revision = "0007_trgm"
down_revision = "0007_webchat"
branch_labels = None
depends_on = None

INDEXES = {
    "ix_contacts_office_id_search_name_trgm": "search_name",
    "ix_contacts_office_id_phone_trgm": "phone",
}


CONVERSATIONS_BY_INBOX = "ix_conversations_office_id_inbox_id_created_at"


def upgrade() -> None:
    op.create_index(
        CONVERSATIONS_BY_INBOX, "conversations", ["office_id", "inbox_id", "created_at", "id"]
    )
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
    op.execute("CREATE EXTENSION IF NOT EXISTS btree_gin")
    for name, column in INDEXES.items():
        op.create_index(
            name,
            "contacts",
            ["office_id", column],
            postgresql_using="gin",
            postgresql_ops={column: "gin_trgm_ops"},
        )


def downgrade() -> None:
    op.drop_index(CONVERSATIONS_BY_INBOX, table_name="conversations")
    if op.get_bind().dialect.name != "postgresql":
        return
    for name in INDEXES:
        op.drop_index(name, table_name="contacts")
    # The extensions stay: other objects of the database may use them by now.
