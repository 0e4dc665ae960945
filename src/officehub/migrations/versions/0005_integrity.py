"""Invariants held by the database: unique indexes for every uniqueness rule.

One phone per office; one card per contact without conversation; one user per email
ignoring case (``users.email_key``, lower-cased in Python so it is the same on both
databases); one open conversation per contact and integration; distinct column positions
per funnel.

Data already breaking a rule is not changed silently: the migration stops with a message
naming the rule and the offending records (fix them, then migrate again), except duplicate
column positions, which carry no information and are renumbered keeping their order.

Revision ID: 0005_integrity
Revises: 0004_merge_heads
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005_integrity"
down_revision = "0004_merge_heads"
branch_labels = None
depends_on = None


class DuplicateDataError(RuntimeError):
    """Stored data breaks a rule the new unique index enforces. The message names records
    by id only (no phone or email: it ends up in logs)."""


def _refuse_duplicates(rule: str, query: str) -> None:
    rows = op.get_bind().execute(sa.text(query)).fetchall()
    if rows:
        listed = "; ".join(", ".join(str(v) for v in row) for row in rows[:20])
        raise DuplicateDataError(
            f"0005_integrity: {len(rows)} group(s) of records break the rule {rule!r} "
            f"(office id, count, first and last record id): {listed}. Resolve them and run "
            "the migration again."
        )


def _renumber_column_positions() -> None:
    bind = op.get_bind()
    funnels = bind.execute(
        sa.text(
            "SELECT DISTINCT funnel_id FROM crm_columns GROUP BY office_id, funnel_id, position "
            "HAVING count(*) > 1"
        )
    ).fetchall()
    for (funnel_id,) in funnels:
        ids = bind.execute(
            sa.text(
                "SELECT id FROM crm_columns WHERE funnel_id = :f ORDER BY position, created_at, id"
            ),
            {"f": funnel_id},
        ).fetchall()
        for position, (ident,) in enumerate(ids):
            bind.execute(
                sa.text("UPDATE crm_columns SET position = :p WHERE id = :i"),
                {"p": -1 - position, "i": ident},
            )
        bind.execute(
            sa.text("UPDATE crm_columns SET position = -1 - position WHERE funnel_id = :f"),
            {"f": funnel_id},
        )


def _fill_email_keys() -> None:
    bind = op.get_bind()
    for ident, email in bind.execute(sa.text("SELECT id, email FROM users")).fetchall():
        bind.execute(
            sa.text("UPDATE users SET email_key = :k WHERE id = :i"),
            {"k": email.lower(), "i": ident},
        )


def upgrade() -> None:
    _refuse_duplicates(
        "one phone per office",
        "SELECT office_id, count(*), min(id), max(id) FROM contacts WHERE phone IS NOT NULL "
        "GROUP BY office_id, phone HAVING count(*) > 1",
    )
    _refuse_duplicates(
        "one open conversation per contact and integration",
        "SELECT office_id, count(*), min(id), max(id) FROM conversations "
        "WHERE status = 'OPEN' GROUP BY office_id, person_id, integration_id "
        "HAVING count(*) > 1",
    )
    _refuse_duplicates(
        "one card per contact without conversation",
        "SELECT office_id, count(*), min(id), max(id) FROM crm_cards WHERE conversation_id IS NULL "
        "GROUP BY office_id, person_id HAVING count(*) > 1",
    )
    op.add_column(
        "users",
        sa.Column("email_key", sa.String(length=320), nullable=False, server_default=""),
    )
    _fill_email_keys()
    _refuse_duplicates(
        "one user per email, ignoring case",
        "SELECT office_id, count(*), min(id), max(id) FROM users "
        "GROUP BY office_id, email_key HAVING count(*) > 1",
    )
    if op.get_bind().dialect.name == "postgresql":
        op.alter_column("users", "email_key", server_default=None)
    _renumber_column_positions()

    op.drop_index("ix_contacts_office_id_phone", table_name="contacts")
    op.create_index(
        "ux_contacts_office_id_phone",
        "contacts",
        ["office_id", "phone"],
        unique=True,
        sqlite_where=sa.text("phone IS NOT NULL"),
        postgresql_where=sa.text("phone IS NOT NULL"),
    )
    op.create_index(
        "ux_conversations_office_id_person_id_integration_id_open",
        "conversations",
        ["office_id", "person_id", "integration_id"],
        unique=True,
        sqlite_where=sa.text("status = 'OPEN'"),
        postgresql_where=sa.text("status = 'OPEN'"),
    )
    op.create_index(
        "ux_crm_cards_office_id_person_id_without_conversation",
        "crm_cards",
        ["office_id", "person_id"],
        unique=True,
        sqlite_where=sa.text("conversation_id IS NULL"),
        postgresql_where=sa.text("conversation_id IS NULL"),
    )
    op.drop_index("ix_crm_columns_office_id_funnel_id_position", table_name="crm_columns")
    op.create_index(
        "ux_crm_columns_office_id_funnel_id_position",
        "crm_columns",
        ["office_id", "funnel_id", "position"],
        unique=True,
    )
    op.drop_index("ix_users_office_id_email", table_name="users")
    op.create_index(
        "ux_users_office_id_email_key", "users", ["office_id", "email_key"], unique=True
    )


def downgrade() -> None:
    op.drop_index("ux_users_office_id_email_key", table_name="users")
    op.create_index("ix_users_office_id_email", "users", ["office_id", "email"], unique=True)
    op.drop_column("users", "email_key")  # SQLite >= 3.35 drops it in place
    op.drop_index("ux_crm_columns_office_id_funnel_id_position", table_name="crm_columns")
    op.create_index(
        "ix_crm_columns_office_id_funnel_id_position",
        "crm_columns",
        ["office_id", "funnel_id", "position"],
    )
    op.drop_index("ux_crm_cards_office_id_person_id_without_conversation", table_name="crm_cards")
    op.drop_index(
        "ux_conversations_office_id_person_id_integration_id_open", table_name="conversations"
    )
    op.drop_index("ux_contacts_office_id_phone", table_name="contacts")
    op.create_index("ix_contacts_office_id_phone", "contacts", ["office_id", "phone"])
