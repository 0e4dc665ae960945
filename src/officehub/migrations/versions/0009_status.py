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
    with op.batch_alter_table("messages") as batch:
        batch.add_column(sa.Column("error_detail", JSON, nullable=True))
        batch.add_column(sa.Column("pricing", JSON, nullable=True))
    with op.batch_alter_table("whatsapp_templates") as batch:
        batch.add_column(sa.Column("platform_status", sa.String(length=32), nullable=True))
        batch.add_column(sa.Column("rejected_reason", sa.String(length=200), nullable=True))
        batch.add_column(sa.Column("quality_score", sa.String(length=16), nullable=True))
    with op.batch_alter_table("contacts") as batch:
        batch.add_column(
            sa.Column("marketing_opt_out", sa.Boolean(), nullable=False, server_default=sa.false())
        )
    with op.batch_alter_table("conversations") as batch:
        batch.add_column(sa.Column("lead_origin", JSON, nullable=True))
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
    with op.batch_alter_table("conversations") as batch:
        batch.drop_column("lead_origin")
    with op.batch_alter_table("contacts") as batch:
        batch.drop_column("marketing_opt_out")
    with op.batch_alter_table("whatsapp_templates") as batch:
        batch.drop_column("quality_score")
        batch.drop_column("rejected_reason")
        batch.drop_column("platform_status")
    with op.batch_alter_table("messages") as batch:
        batch.drop_column("pricing")
        batch.drop_column("error_detail")
