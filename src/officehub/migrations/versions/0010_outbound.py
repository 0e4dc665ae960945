"""Read receipts: an operator's reading of a conversation, told to the platform.

Revision ID: 0010_outbound
Revises: 0009_status
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from officehub.migrations.types import ident, ts

revision = "0010_outbound"
down_revision = "0009_status"
branch_labels = None
depends_on = None


def _fk(column: str, target: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        [column],
        [f"{target}.id"],
        name=op.f(f"fk_read_receipts_{column}_{target}"),
        ondelete="CASCADE",
    )


def upgrade() -> None:
    op.create_table(
        "read_receipts",
        ident("office_id"),
        ident("conversation_id"),
        ident("message_id"),
        ident("integration_id"),
        sa.Column("external_id", sa.String(length=128), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("attempts", sa.Integer(), server_default="0", nullable=False),
        ts("next_attempt_at", nullable=True),
        ts("lease_until", nullable=True),
        sa.Column("claim_token", sa.String(length=64), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        ts("created_at"),
        ts("sent_at", nullable=True),
        ident("id"),
        _fk("office_id", "offices"),
        _fk("conversation_id", "conversations"),
        _fk("message_id", "messages"),
        _fk("integration_id", "integrations"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_read_receipts")),
    )
    op.create_index(
        "ux_read_receipts_office_id_message_id",
        "read_receipts",
        ["office_id", "message_id"],
        unique=True,
    )
    op.create_index(
        "ix_read_receipts_office_id_conversation_id",
        "read_receipts",
        ["office_id", "conversation_id"],
    )
    op.create_index(
        "ix_read_receipts_due",
        "read_receipts",
        ["status", "next_attempt_at"],
    )


def downgrade() -> None:
    op.drop_table("read_receipts")
