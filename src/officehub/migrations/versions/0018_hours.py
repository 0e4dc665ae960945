"""Issue 32, business hours: an inbox's hours (``inbox_business_hours``, no row: always
open) and when a conversation last got the away message (``conversations.away_sent_at``).

Revision ID: 0018_hours
Revises: 0017_consent
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from officehub.migrations.types import JSON, ident, ts

revision = "0018_hours"
down_revision = "0017_consent"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "inbox_business_hours",
        ident("inbox_id"),
        ident("office_id"),
        sa.Column("timezone", sa.String(64), nullable=False),
        sa.Column("week", JSON, nullable=False),
        sa.Column("closed_dates", JSON, nullable=False),
        sa.Column("open_dates", JSON, nullable=False),
        sa.Column("away_message", JSON, nullable=True),
        ts("updated_at"),
        sa.ForeignKeyConstraint(
            ["inbox_id"],
            ["inboxes.id"],
            name=op.f("fk_inbox_business_hours_inbox_id_inboxes"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["office_id"],
            ["offices.id"],
            name=op.f("fk_inbox_business_hours_office_id_offices"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("inbox_id", name=op.f("pk_inbox_business_hours")),
    )
    op.add_column("conversations", ts("away_sent_at", nullable=True))


def downgrade() -> None:
    op.drop_column("conversations", "away_sent_at")
    op.drop_table("inbox_business_hours")
