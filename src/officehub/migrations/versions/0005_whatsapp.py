"""Official WhatsApp channel: integration settings, message delivery state, templates,
and the DDD kept with a contact's phone (clients map).

Revision ID: 0005_whatsapp
Revises: 0005_automation
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from officehub.migrations.types import JSON, ident, ts

revision = "0005_whatsapp"
down_revision = "0005_automation"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("integrations") as batch:
        batch.add_column(sa.Column("whatsapp", JSON, nullable=True))
    with op.batch_alter_table("contacts") as batch:
        batch.add_column(sa.Column("ddd", sa.String(length=2), nullable=True))
    op.execute(
        "UPDATE contacts SET ddd = substr(phone, 4, 2) "
        "WHERE phone LIKE '+55%' AND length(phone) IN (13, 14) AND substr(phone, 4, 1) <> '0'"
    )
    op.create_index("ix_contacts_office_id_ddd", "contacts", ["office_id", "ddd"])
    with op.batch_alter_table("messages") as batch:
        batch.add_column(sa.Column("external_id", sa.String(length=128), nullable=True))
        batch.add_column(sa.Column("error", sa.Text(), nullable=True))
        batch.add_column(sa.Column("payload", JSON, nullable=True))
        batch.add_column(sa.Column("attempts", sa.Integer(), nullable=False, server_default="0"))
        batch.add_column(ts("next_attempt_at", nullable=True))
        batch.add_column(ts("lease_until", nullable=True))
        batch.add_column(sa.Column("claim_token", sa.String(length=64), nullable=True))
        batch.add_column(sa.Column("media_external_id", sa.String(length=128), nullable=True))
    op.create_index(
        "ix_messages_office_id_external_id", "messages", ["office_id", "external_id"], unique=True
    )
    op.create_index(
        "ix_messages_send_due",
        "messages",
        ["created_at"],
        sqlite_where=sa.text("status = 'QUEUED'"),
        postgresql_where=sa.text("status = 'QUEUED'"),
    )
    op.create_index(
        "ix_messages_media_due",
        "messages",
        ["created_at"],
        sqlite_where=sa.text("media_external_id IS NOT NULL AND media_url IS NULL"),
        postgresql_where=sa.text("media_external_id IS NOT NULL AND media_url IS NULL"),
    )
    op.create_table(
        "whatsapp_templates",
        ident("office_id"),
        ident("integration_id"),
        sa.Column("name", sa.String(length=512), nullable=False),
        sa.Column("language", sa.String(length=16), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("category", sa.String(length=64), nullable=False),
        sa.Column("components", JSON, nullable=False),
        sa.Column("external_id", sa.String(length=128), nullable=True),
        ts("status_changed_at", nullable=True),
        ident("id"),
        ts("created_at"),
        ts("updated_at"),
        sa.ForeignKeyConstraint(
            ["office_id"],
            ["offices.id"],
            name=op.f("fk_whatsapp_templates_office_id_offices"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["integration_id"],
            ["integrations.id"],
            name=op.f("fk_whatsapp_templates_integration_id_integrations"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_whatsapp_templates")),
    )
    op.create_index(
        "ix_whatsapp_templates_office_id_integration_id_name_language",
        "whatsapp_templates",
        ["office_id", "integration_id", "name", "language"],
        unique=True,
    )


def downgrade() -> None:
    op.drop_table("whatsapp_templates")
    op.drop_index("ix_messages_media_due", table_name="messages")
    op.drop_index("ix_messages_send_due", table_name="messages")
    op.drop_index("ix_messages_office_id_external_id", table_name="messages")
    with op.batch_alter_table("messages") as batch:
        for column in (
            "media_external_id",
            "claim_token",
            "lease_until",
            "next_attempt_at",
            "attempts",
            "payload",
            "error",
            "external_id",
        ):
            batch.drop_column(column)
    with op.batch_alter_table("integrations") as batch:
        batch.drop_column("whatsapp")
    op.drop_index("ix_contacts_office_id_ddd", table_name="contacts")
    with op.batch_alter_table("contacts") as batch:
        batch.drop_column("ddd")
