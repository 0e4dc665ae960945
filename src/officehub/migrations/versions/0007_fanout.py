"""Webhook fan-out as an outbox consumer; FIRE_WEBHOOK deliveries with a delivery log.

Events not yet fanned out (``dispatched_at IS NULL``) become ``webhooks`` consumer rows
(in event order, so their seq keeps it), then ``dispatched_at`` and its index are
dropped. ``action_deliveries`` holds the automation and flow ``FIRE_WEBHOOK`` calls.

The downgrade puts the flag back (events whose ``webhooks`` row is not done are
undispatched again), deletes the ``webhooks`` rows, and turns open action deliveries
back into ``automation.fire_webhook`` scheduled jobs before dropping their table.

Revision ID: 0007_fanout
Revises: 0007_trgm
"""

from __future__ import annotations

from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

from officehub.kit.ids import new_id
from officehub.migrations.types import JSON, ident, ts

revision = "0007_fanout"
down_revision = "0007_trgm"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(
        "INSERT INTO outbox_consumer_events"
        " (office_id, consumer, event_id, ordering_key, created_at, attempts)"
        " SELECT office_id, 'webhooks', id, COALESCE(conversation_id, id), created_at, 0"
        " FROM outbox_events WHERE dispatched_at IS NULL ORDER BY created_at, id"
    )
    op.drop_index("ix_outbox_events_undispatched", "outbox_events")
    # Native on PostgreSQL and SQLite ≥ 3.35: no table copy (a batch copy would drop and
    # recreate outbox_events, and the consumer rows referencing it would cascade away).
    op.execute("ALTER TABLE outbox_events DROP COLUMN dispatched_at")

    op.create_table(
        "action_deliveries",
        ident("office_id"),
        ident("rule_id", nullable=True),
        ident("flow_id", nullable=True),
        sa.Column("event_id", sa.String(length=32), nullable=True),
        sa.Column("event", sa.String(length=64), nullable=False),
        sa.Column("url", sa.Text(), nullable=False),
        sa.Column("method", sa.String(length=8), nullable=False),
        sa.Column("headers", JSON, nullable=False),
        sa.Column("secret", sa.String(length=256), nullable=True),
        sa.Column("payload", JSON, nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("status_code", sa.Integer(), nullable=True),
        sa.Column("response_body", sa.Text(), nullable=True),
        sa.Column("error_message", sa.Text(), nullable=True),
        sa.Column("duration_ms", sa.Integer(), nullable=True),
        sa.Column("attempt_count", sa.Integer(), nullable=False),
        sa.Column("attempts", JSON, nullable=False),
        ts("next_retry_at", nullable=True),
        sa.Column("claim_token", sa.String(length=64), nullable=True),
        ts("created_at"),
        ts("expires_at"),
        ident("id"),
        sa.ForeignKeyConstraint(
            ["office_id"],
            ["offices.id"],
            name=op.f("fk_action_deliveries_office_id_offices"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["rule_id"],
            ["automation_rules.id"],
            name=op.f("fk_action_deliveries_rule_id_automation_rules"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["flow_id"],
            ["flows.id"],
            name=op.f("fk_action_deliveries_flow_id_flows"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_action_deliveries")),
    )
    op.create_index(
        "ix_action_deliveries_office_id_rule_id_created_at",
        "action_deliveries",
        ["office_id", "rule_id", "created_at"],
    )
    op.create_index(
        "ix_action_deliveries_office_id_flow_id_created_at",
        "action_deliveries",
        ["office_id", "flow_id", "created_at"],
    )
    op.create_index(
        "ix_action_deliveries_due",
        "action_deliveries",
        ["next_retry_at"],
        sqlite_where=sa.text("status IN ('PENDING', 'RETRYING')"),
        postgresql_where=sa.text("status IN ('PENDING', 'RETRYING')"),
    )
    op.create_index("ix_action_deliveries_expiry_due", "action_deliveries", ["expires_at"])


_deliveries = sa.table(
    "action_deliveries",
    sa.column("id", sa.String),
    sa.column("office_id", sa.String),
    sa.column("url", sa.Text),
    sa.column("method", sa.String),
    sa.column("headers", JSON),
    sa.column("secret", sa.String),
    sa.column("event", sa.String),
    sa.column("payload", JSON),
    sa.column("status", sa.String),
    sa.column("next_retry_at", sa.DateTime(timezone=True)),
)
_jobs = sa.table(
    "scheduled_jobs",
    sa.column("id", sa.String),
    sa.column("office_id", sa.String),
    sa.column("kind", sa.String),
    sa.column("payload", JSON),
    sa.column("due_at", sa.DateTime(timezone=True)),
    sa.column("created_at", sa.DateTime(timezone=True)),
    sa.column("attempts", sa.Integer),
)


def downgrade() -> None:
    bind = op.get_bind()
    now = datetime.now(UTC)
    open_ones = bind.execute(
        sa.select(_deliveries).where(_deliveries.c.status.in_(("PENDING", "RETRYING")))
    ).all()
    if open_ones:
        bind.execute(
            sa.insert(_jobs),
            [
                {
                    "id": new_id(),
                    "office_id": row.office_id,
                    "kind": "automation.fire_webhook",
                    "payload": {
                        "url": row.url,
                        "method": row.method,
                        "headers": row.headers or {},
                        "secret": row.secret,
                        "event": row.event,
                        "body": row.payload,
                    },
                    "due_at": row.next_retry_at or now,
                    "created_at": now,
                    "attempts": 0,
                }
                for row in open_ones
            ],
        )
    op.drop_index("ix_action_deliveries_expiry_due", "action_deliveries")
    op.drop_index("ix_action_deliveries_due", "action_deliveries")
    op.drop_index("ix_action_deliveries_office_id_flow_id_created_at", "action_deliveries")
    op.drop_index("ix_action_deliveries_office_id_rule_id_created_at", "action_deliveries")
    op.drop_table("action_deliveries")

    op.add_column("outbox_events", ts("dispatched_at", nullable=True))
    op.execute(
        "UPDATE outbox_events SET dispatched_at = created_at WHERE NOT EXISTS ("
        " SELECT 1 FROM outbox_consumer_events c WHERE c.event_id = outbox_events.id"
        " AND c.consumer = 'webhooks' AND c.done_at IS NULL)"
    )
    op.create_index(
        "ix_outbox_events_undispatched",
        "outbox_events",
        ["created_at"],
        sqlite_where=sa.text("dispatched_at IS NULL"),
        postgresql_where=sa.text("dispatched_at IS NULL"),
    )
    op.execute("DELETE FROM outbox_consumer_events WHERE consumer = 'webhooks'")
