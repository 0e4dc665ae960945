"""Issue 43, rules that behave: ``automation_rules.run_once_per_conversation`` and
``skip_while_human_assigned`` (false by default), the failures since the last good run
(``failure_count``, ``last_failure``), and ``automation_rule_conversations``: the
conversations a run-once rule has acted in (its primary key holds "once").

Revision ID: 0029_rule_behaviour
Revises: 0028_webhook_pace
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from officehub.migrations.types import JSON

revision = "0029_rule_behaviour"
down_revision = "0028_webhook_pace"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("automation_rules") as batch:
        batch.add_column(
            sa.Column(
                "run_once_per_conversation", sa.Boolean(), nullable=False, server_default=sa.false()
            )
        )
        batch.add_column(
            sa.Column(
                "skip_while_human_assigned", sa.Boolean(), nullable=False, server_default=sa.false()
            )
        )
        batch.add_column(
            sa.Column("failure_count", sa.Integer(), nullable=False, server_default="0")
        )
        batch.add_column(sa.Column("last_failure", JSON, nullable=True))
    op.create_table(
        "automation_rule_conversations",
        sa.Column("rule_id", sa.String(length=32), nullable=False),
        sa.Column("conversation_id", sa.String(length=32), nullable=False),
        sa.Column("office_id", sa.String(length=32), nullable=False),
        sa.Column("event_id", sa.String(length=32), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["rule_id"],
            ["automation_rules.id"],
            name=op.f("fk_automation_rule_conversations_rule_id_automation_rules"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["conversation_id"],
            ["conversations.id"],
            name=op.f("fk_automation_rule_conversations_conversation_id_conversations"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["office_id"],
            ["offices.id"],
            name=op.f("fk_automation_rule_conversations_office_id_offices"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint(
            "rule_id", "conversation_id", name=op.f("pk_automation_rule_conversations")
        ),
    )


def downgrade() -> None:
    op.drop_table("automation_rule_conversations")
    with op.batch_alter_table("automation_rules") as batch:
        batch.drop_column("last_failure")
        batch.drop_column("failure_count")
        batch.drop_column("skip_while_human_assigned")
        batch.drop_column("run_once_per_conversation")
