"""Automation rules and the reactive core: per-consumer outbox progress, scheduled jobs.

Revision ID: 0005_automation
Revises: 0005_key_scopes
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from officehub.migrations.types import JSON

revision = "0005_automation"
down_revision = "0005_key_scopes"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "automation_card_column_entries",
        sa.Column("card_id", sa.String(length=32), nullable=False),
        sa.Column("column_id", sa.String(length=32), nullable=False),
        sa.Column("office_id", sa.String(length=32), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["office_id"],
            ["offices.id"],
            name=op.f("fk_automation_card_column_entries_office_id_offices"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint(
            "card_id", "column_id", name=op.f("pk_automation_card_column_entries")
        ),
    )
    op.create_table(
        "scheduled_jobs",
        sa.Column("office_id", sa.String(length=32), nullable=False),
        sa.Column("kind", sa.String(length=64), nullable=False),
        sa.Column("payload", JSON, nullable=False),
        sa.Column("due_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("claim_token", sa.String(length=64), nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("done_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("error", sa.String(length=1000), nullable=True),
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.ForeignKeyConstraint(
            ["office_id"],
            ["offices.id"],
            name=op.f("fk_scheduled_jobs_office_id_offices"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_scheduled_jobs")),
    )
    with op.batch_alter_table("scheduled_jobs", schema=None) as batch_op:
        batch_op.create_index(
            "ix_scheduled_jobs_due",
            ["due_at"],
            unique=False,
            sqlite_where=sa.text("done_at IS NULL"),
            postgresql_where=sa.text("done_at IS NULL"),
        )
        batch_op.create_index(
            "ix_scheduled_jobs_office_id_created_at", ["office_id", "created_at"], unique=False
        )

    op.create_table(
        "outbox_consumer_events",
        sa.Column("seq", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("office_id", sa.String(length=32), nullable=False),
        sa.Column("consumer", sa.String(length=32), nullable=False),
        sa.Column("event_id", sa.String(length=32), nullable=False),
        sa.Column("ordering_key", sa.String(length=40), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("lease_until", sa.DateTime(timezone=True), nullable=True),
        sa.Column("claim_token", sa.String(length=64), nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("done_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("error", sa.String(length=1000), nullable=True),
        sa.ForeignKeyConstraint(
            ["event_id"],
            ["outbox_events.id"],
            name=op.f("fk_outbox_consumer_events_event_id_outbox_events"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["office_id"],
            ["offices.id"],
            name=op.f("fk_outbox_consumer_events_office_id_offices"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("seq", name=op.f("pk_outbox_consumer_events")),
    )
    with op.batch_alter_table("outbox_consumer_events", schema=None) as batch_op:
        batch_op.create_index(
            "ix_outbox_consumer_events_due",
            ["consumer", "ordering_key", "seq"],
            unique=False,
            sqlite_where=sa.text("done_at IS NULL"),
            postgresql_where=sa.text("done_at IS NULL"),
        )
        batch_op.create_index(
            "ix_outbox_consumer_events_office_id_consumer_event_id",
            ["office_id", "consumer", "event_id"],
            unique=True,
        )

    op.create_table(
        "automation_rules",
        sa.Column("office_id", sa.String(length=32), nullable=False),
        sa.Column("integration_id", sa.String(length=32), nullable=True),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("enabled", sa.Boolean(), nullable=False),
        sa.Column("trigger_event", sa.String(length=64), nullable=False),
        sa.Column("conditions", JSON, nullable=False),
        sa.Column("actions", JSON, nullable=False),
        sa.Column("else_actions", JSON, nullable=True),
        sa.Column("priority", sa.Float(), nullable=False),
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["integration_id"],
            ["integrations.id"],
            name=op.f("fk_automation_rules_integration_id_integrations"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["office_id"],
            ["offices.id"],
            name=op.f("fk_automation_rules_office_id_offices"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_automation_rules")),
    )
    with op.batch_alter_table("automation_rules", schema=None) as batch_op:
        batch_op.create_index(
            "ix_automation_rules_office_id_created_at", ["office_id", "created_at"], unique=False
        )
        batch_op.create_index(
            "ix_automation_rules_office_id_trigger_event_enabled_priority",
            ["office_id", "trigger_event", "enabled", "priority"],
            unique=False,
        )

    op.create_table(
        "automation_pauses",
        sa.Column("conversation_id", sa.String(length=32), nullable=False),
        sa.Column("office_id", sa.String(length=32), nullable=False),
        sa.Column("until", sa.DateTime(timezone=True), nullable=True),
        sa.Column("resume_on_template_sent", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["conversation_id"],
            ["conversations.id"],
            name=op.f("fk_automation_pauses_conversation_id_conversations"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["office_id"],
            ["offices.id"],
            name=op.f("fk_automation_pauses_office_id_offices"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("conversation_id", name=op.f("pk_automation_pauses")),
    )
    op.create_table(
        "automation_runs",
        sa.Column("office_id", sa.String(length=32), nullable=False),
        sa.Column("rule_id", sa.String(length=32), nullable=False),
        sa.Column("event_id", sa.String(length=32), nullable=False),
        sa.Column("event_name", sa.String(length=64), nullable=False),
        sa.Column("conversation_id", sa.String(length=32), nullable=True),
        sa.Column("causation_id", sa.String(length=32), nullable=True),
        sa.Column("depth", sa.Integer(), nullable=False),
        sa.Column("branch", sa.String(length=16), nullable=False),
        sa.Column("reason", sa.String(length=500), nullable=True),
        sa.Column("outcomes", JSON, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.ForeignKeyConstraint(
            ["office_id"],
            ["offices.id"],
            name=op.f("fk_automation_runs_office_id_offices"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["rule_id"],
            ["automation_rules.id"],
            name=op.f("fk_automation_runs_rule_id_automation_rules"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_automation_runs")),
    )
    with op.batch_alter_table("automation_runs", schema=None) as batch_op:
        batch_op.create_index(
            "ix_automation_runs_office_id_rule_id_created_at",
            ["office_id", "rule_id", "created_at"],
            unique=False,
        )
        batch_op.create_index(
            "ix_automation_runs_office_id_rule_id_event_id",
            ["office_id", "rule_id", "event_id"],
            unique=True,
        )
        batch_op.create_index("ix_automation_runs_purge_due", ["created_at"], unique=False)

    with op.batch_alter_table("outbox_events", schema=None) as batch_op:
        batch_op.create_index("ix_outbox_events_purge_due", ["created_at"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("automation_runs", schema=None) as batch_op:
        batch_op.drop_index("ix_automation_runs_purge_due")
        batch_op.drop_index("ix_automation_runs_office_id_rule_id_event_id")
        batch_op.drop_index("ix_automation_runs_office_id_rule_id_created_at")

    op.drop_table("automation_runs")
    op.drop_table("automation_pauses")
    with op.batch_alter_table("automation_rules", schema=None) as batch_op:
        batch_op.drop_index("ix_automation_rules_office_id_trigger_event_enabled_priority")
        batch_op.drop_index("ix_automation_rules_office_id_created_at")

    op.drop_table("automation_rules")
    with op.batch_alter_table("outbox_consumer_events", schema=None) as batch_op:
        batch_op.drop_index("ix_outbox_consumer_events_office_id_consumer_event_id")
        batch_op.drop_index(
            "ix_outbox_consumer_events_due",
            sqlite_where=sa.text("done_at IS NULL"),
            postgresql_where=sa.text("done_at IS NULL"),
        )

    op.drop_table("outbox_consumer_events")
    with op.batch_alter_table("scheduled_jobs", schema=None) as batch_op:
        batch_op.drop_index("ix_scheduled_jobs_office_id_created_at")
        batch_op.drop_index(
            "ix_scheduled_jobs_due",
            sqlite_where=sa.text("done_at IS NULL"),
            postgresql_where=sa.text("done_at IS NULL"),
        )

    op.drop_table("scheduled_jobs")
    op.drop_table("automation_card_column_entries")
    with op.batch_alter_table("outbox_events", schema=None) as batch_op:
        batch_op.drop_index("ix_outbox_events_purge_due")
