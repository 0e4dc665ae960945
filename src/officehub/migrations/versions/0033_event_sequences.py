"""Issue 44, ordering stated: each event names its subject (the conversation, else the record
it is about) and carries a sequence per subject, counted in ``event_subjects`` (one row per
office and subject, incremented in the emitting transaction).

Revision ID: 0033_event_sequences
Revises: 0029_rule_behaviour
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0033_event_sequences"
down_revision = "0029_rule_behaviour"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "event_subjects",
        sa.Column(
            "office_id",
            sa.String(32),
            sa.ForeignKey("offices.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("subject", sa.String(40), nullable=False),
        sa.Column("last_sequence", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("office_id", "subject"),
    )
    # Plain ALTER TABLE on both databases: SQLite's batch mode would copy the table and drop
    # the old one, and the drop cascades to every consumer's progress rows.
    op.add_column("outbox_events", sa.Column("subject", sa.String(40), nullable=True))
    op.add_column("outbox_events", sa.Column("sequence", sa.Integer(), nullable=True))


def downgrade() -> None:
    op.execute("ALTER TABLE outbox_events DROP COLUMN sequence")
    op.execute("ALTER TABLE outbox_events DROP COLUMN subject")
    op.drop_table("event_subjects")
