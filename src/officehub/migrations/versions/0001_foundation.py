"""Offices, API keys, the event outbox and periodic job leases.

Revision ID: 0001_foundation
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from officehub.migrations.types import JSON, ident, ts

revision = "0001_foundation"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "offices",
        ident(primary_key=True),
        sa.Column("name", sa.String(200), nullable=False),
        ts("created_at"),
        ts("updated_at"),
    )
    op.create_table(
        "api_keys",
        ident(primary_key=True),
        sa.Column(
            "office_id",
            sa.String(32),
            sa.ForeignKey("offices.id", ondelete="CASCADE", name="fk_api_keys_office_id_offices"),
            nullable=False,
        ),
        sa.Column("name", sa.String(100), nullable=False),
        sa.Column("key_hash", sa.String(64), nullable=False),
        sa.Column("prefix", sa.String(16), nullable=False),
        sa.Column("permissions", JSON, nullable=False),
        ts("created_at"),
        ts("revoked_at", nullable=True),
        sa.UniqueConstraint("key_hash", name="uq_api_keys_key_hash"),
    )
    op.create_index("ix_api_keys_office_id_created_at", "api_keys", ["office_id", "created_at"])
    op.create_table(
        "outbox_events",
        ident(primary_key=True),
        sa.Column(
            "office_id",
            sa.String(32),
            sa.ForeignKey(
                "offices.id", ondelete="CASCADE", name="fk_outbox_events_office_id_offices"
            ),
            nullable=False,
        ),
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("data", JSON, nullable=False),
        ts("created_at"),
        ident("causation_id", nullable=True),
        sa.Column("depth", sa.Integer, nullable=False, server_default="0"),
        ident("conversation_id", nullable=True),
        ident("integration_id", nullable=True),
        ident("target_webhook_id", nullable=True),
        ts("dispatched_at", nullable=True),
    )
    op.create_index(
        "ix_outbox_events_office_id_created_at", "outbox_events", ["office_id", "created_at"]
    )
    op.create_index(
        "ix_outbox_events_undispatched",
        "outbox_events",
        ["created_at"],
        sqlite_where=sa.text("dispatched_at IS NULL"),
        postgresql_where=sa.text("dispatched_at IS NULL"),
    )
    op.create_table(
        "job_leases",
        sa.Column("name", sa.String(64), primary_key=True),
        ts("next_run_at"),
    )


def downgrade() -> None:
    op.drop_table("job_leases")
    op.drop_index("ix_outbox_events_undispatched", "outbox_events")
    op.drop_index("ix_outbox_events_office_id_created_at", "outbox_events")
    op.drop_table("outbox_events")
    op.drop_index("ix_api_keys_office_id_created_at", "api_keys")
    op.drop_table("api_keys")
    op.drop_table("offices")
