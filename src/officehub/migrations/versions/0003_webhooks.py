"""Webhooks: subscriptions, deliveries (the worker queue) and every delivery attempt.

Revision ID: 0003_webhooks
Revises: 0002_directory
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from officehub.migrations.types import JSON

revision = "0003_webhooks"
down_revision = "0002_directory"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "webhooks",
        sa.Column("office_id", sa.String(length=32), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("description", sa.String(length=500), nullable=True),
        sa.Column("url", sa.Text(), nullable=False),
        sa.Column("secret", sa.String(length=256), nullable=False),
        sa.Column("previous_secret", sa.String(length=256), nullable=True),
        sa.Column("secret_rotated_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("events", JSON, nullable=False),
        sa.Column("is_active", sa.Boolean(), nullable=False),
        sa.Column("headers", JSON, nullable=True),
        sa.Column("disabled_reason", sa.String(length=500), nullable=True),
        sa.Column("failing_since", sa.DateTime(timezone=True), nullable=True),
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["office_id"],
            ["offices.id"],
            name=op.f("fk_webhooks_office_id_offices"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_webhooks")),
    )
    with op.batch_alter_table("webhooks", schema=None) as batch_op:
        batch_op.create_index(
            "ix_webhooks_office_id_created_at", ["office_id", "created_at"], unique=False
        )

    op.create_table(
        "webhook_deliveries",
        sa.Column("office_id", sa.String(length=32), nullable=False),
        sa.Column("webhook_id", sa.String(length=32), nullable=False),
        sa.Column("event_id", sa.String(length=32), nullable=False),
        sa.Column("event", sa.String(length=64), nullable=False),
        sa.Column("payload", JSON, nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("status_code", sa.Integer(), nullable=True),
        sa.Column("response_body", sa.Text(), nullable=True),
        sa.Column("error_message", sa.Text(), nullable=True),
        sa.Column("duration_ms", sa.Integer(), nullable=True),
        sa.Column("attempt_count", sa.Integer(), nullable=False),
        sa.Column("next_retry_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("claim_token", sa.String(length=64), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.ForeignKeyConstraint(
            ["office_id"],
            ["offices.id"],
            name=op.f("fk_webhook_deliveries_office_id_offices"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["webhook_id"],
            ["webhooks.id"],
            name=op.f("fk_webhook_deliveries_webhook_id_webhooks"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_webhook_deliveries")),
    )
    with op.batch_alter_table("webhook_deliveries", schema=None) as batch_op:
        batch_op.create_index(
            "ix_webhook_deliveries_due",
            ["next_retry_at"],
            unique=False,
            sqlite_where=sa.text("status IN ('PENDING', 'RETRYING')"),
            postgresql_where=sa.text("status IN ('PENDING', 'RETRYING')"),
        )
        batch_op.create_index("ix_webhook_deliveries_expiry_due", ["expires_at"], unique=False)
        batch_op.create_index(
            "ix_webhook_deliveries_office_id_webhook_id_created_at",
            ["office_id", "webhook_id", "created_at"],
            unique=False,
        )
        batch_op.create_index(
            "ix_webhook_deliveries_office_id_webhook_id_event_id",
            ["office_id", "webhook_id", "event_id"],
            unique=True,
        )

    op.create_table(
        "webhook_delivery_attempts",
        sa.Column("office_id", sa.String(length=32), nullable=False),
        sa.Column("delivery_id", sa.String(length=32), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("status_code", sa.Integer(), nullable=True),
        sa.Column("response_body", sa.Text(), nullable=True),
        sa.Column("error_message", sa.Text(), nullable=True),
        sa.Column("duration_ms", sa.Integer(), nullable=False),
        sa.Column("worker_id", sa.String(length=128), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.ForeignKeyConstraint(
            ["delivery_id"],
            ["webhook_deliveries.id"],
            name=op.f("fk_webhook_delivery_attempts_delivery_id_webhook_deliveries"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["office_id"],
            ["offices.id"],
            name=op.f("fk_webhook_delivery_attempts_office_id_offices"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_webhook_delivery_attempts")),
    )
    with op.batch_alter_table("webhook_delivery_attempts", schema=None) as batch_op:
        batch_op.create_index(
            "ix_webhook_delivery_attempts_office_id_delivery_id",
            ["office_id", "delivery_id"],
            unique=False,
        )


def downgrade() -> None:
    with op.batch_alter_table("webhook_delivery_attempts", schema=None) as batch_op:
        batch_op.drop_index("ix_webhook_delivery_attempts_office_id_delivery_id")

    op.drop_table("webhook_delivery_attempts")
    with op.batch_alter_table("webhook_deliveries", schema=None) as batch_op:
        batch_op.drop_index("ix_webhook_deliveries_office_id_webhook_id_event_id")
        batch_op.drop_index("ix_webhook_deliveries_office_id_webhook_id_created_at")
        batch_op.drop_index("ix_webhook_deliveries_expiry_due")
        batch_op.drop_index(
            "ix_webhook_deliveries_due",
            sqlite_where=sa.text("status IN ('PENDING', 'RETRYING')"),
            postgresql_where=sa.text("status IN ('PENDING', 'RETRYING')"),
        )

    op.drop_table("webhook_deliveries")
    with op.batch_alter_table("webhooks", schema=None) as batch_op:
        batch_op.drop_index("ix_webhooks_office_id_created_at")

    op.drop_table("webhooks")
