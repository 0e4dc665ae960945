"""The official channel's statuses and account notifications in full: a failed send's
structured error and a send's pricing on the message, the template's platform status,
rejection reason and quality score, the contact's marketing opt-out, the conversation's
ad origin, and the account's notices.

Revision ID: 0009_status
Revises: 0008_inbound
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from officehub.migrations.types import JSON, ident, ts

revision = "0009_status"
down_revision = "0008_inbound"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # Plain ADD COLUMN, never a batch copy: a batch recreates the table on SQLite for a
    # column with an expression default (``sa.false()``), and dropping ``contacts`` deletes
    # every conversation that refers to it (ON DELETE CASCADE).
    op.add_column("messages", sa.Column("error_detail", JSON, nullable=True))
    op.add_column("messages", sa.Column("pricing", JSON, nullable=True))
    op.add_column("whatsapp_templates", sa.Column("platform_status", sa.String(32), nullable=True))
    op.add_column("whatsapp_templates", sa.Column("rejected_reason", sa.String(200), nullable=True))
    op.add_column("whatsapp_templates", sa.Column("quality_score", sa.String(16), nullable=True))
    op.add_column(
        "contacts",
        sa.Column("marketing_opt_out", sa.Boolean(), nullable=False, server_default=sa.false()),
    )
    op.add_column("conversations", sa.Column("lead_origin", JSON, nullable=True))
    op.create_table(
        "whatsapp_account_notices",
        ident("office_id"),
        ident("integration_id"),
        sa.Column("field", sa.String(length=64), nullable=False),
        sa.Column("event", sa.String(length=64), nullable=True),
        sa.Column("value", JSON, nullable=False),
        ts("received_at"),
        ident("id"),
        sa.ForeignKeyConstraint(
            ["office_id"],
            ["offices.id"],
            name=op.f("fk_whatsapp_account_notices_office_id_offices"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["integration_id"],
            ["integrations.id"],
            name=op.f("fk_whatsapp_account_notices_integration_id_integrations"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_whatsapp_account_notices")),
    )
    op.create_index(
        "ix_whatsapp_account_notices_office_integration_received",
        "whatsapp_account_notices",
        ["office_id", "integration_id", "received_at"],
    )


def downgrade() -> None:
    op.drop_table("whatsapp_account_notices")
    # A plain DROP COLUMN (SQLite >= 3.35), never a batch copy: recreating a table that
    # others reference with ON DELETE CASCADE deletes their rows on SQLite.
    op.drop_column("conversations", "lead_origin")
    op.drop_column("contacts", "marketing_opt_out")
    op.drop_column("whatsapp_templates", "quality_score")
    op.drop_column("whatsapp_templates", "rejected_reason")
    op.drop_column("whatsapp_templates", "platform_status")
    op.drop_column("messages", "pricing")
    op.drop_column("messages", "error_detail")
