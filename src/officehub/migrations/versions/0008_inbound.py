"""Every inbound WhatsApp kind kept readably: a message's typed ``content``, the message it
replies to, the forwarded flag, reactions, edits and deletions (with the original text);
``type`` widened for the new kinds (``UNSUPPORTED`` and the like).

Revision ID: 0008_inbound
Revises: 0007_cases
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from officehub.migrations.types import JSON, ident, ts

revision = "0008_inbound"
down_revision = "0007_cases"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("messages") as batch:
        batch.alter_column("type", existing_type=sa.String(length=8), type_=sa.String(length=16))
        batch.add_column(sa.Column("content", JSON, nullable=True))
        batch.add_column(ident("reply_to_id", nullable=True))
        batch.add_column(
            sa.Column("forwarded", sa.Boolean(), nullable=False, server_default=sa.false())
        )
        batch.add_column(sa.Column("reactions", JSON, nullable=True))
        batch.add_column(sa.Column("original_text", sa.Text(), nullable=True))
        batch.add_column(ts("edited_at", nullable=True))
        batch.add_column(ts("deleted_at", nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("messages") as batch:
        for column in (
            "deleted_at",
            "edited_at",
            "original_text",
            "reactions",
            "forwarded",
            "reply_to_id",
            "content",
        ):
            batch.drop_column(column)
        batch.alter_column("type", existing_type=sa.String(length=16), type_=sa.String(length=8))
