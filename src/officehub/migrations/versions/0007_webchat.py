"""Web chat and bridged channels: integration settings, visitors (hashed tokens) and the
bridged channels' peers.

Revision ID: 0007_webchat
Revises: 0006_flows
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from officehub.migrations.types import JSON, ident, ts

revision = "0007_webchat"
down_revision = "0006_flows"
branch_labels = None
depends_on = None


def _fk(table: str, column: str, target: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        [column],
        [f"{target}.id"],
        name=op.f(f"fk_{table}_{column}_{target}"),
        ondelete="CASCADE",
    )


def upgrade() -> None:
    with op.batch_alter_table("integrations") as batch:
        batch.add_column(sa.Column("webchat", JSON, nullable=True))
        batch.add_column(sa.Column("bridge", JSON, nullable=True))
    op.create_table(
        "webchat_visitors",
        ident("office_id"),
        ident("integration_id"),
        ident("contact_id"),
        ident("conversation_id"),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        ts("created_at"),
        ts("last_seen_at"),
        ident("id"),
        _fk("webchat_visitors", "office_id", "offices"),
        _fk("webchat_visitors", "integration_id", "integrations"),
        _fk("webchat_visitors", "contact_id", "contacts"),
        _fk("webchat_visitors", "conversation_id", "conversations"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_webchat_visitors")),
    )
    op.create_index(
        "ux_webchat_visitors_office_id_token_hash",
        "webchat_visitors",
        ["office_id", "token_hash"],
        unique=True,
    )
    op.create_index(
        "ix_webchat_visitors_office_id_conversation_id",
        "webchat_visitors",
        ["office_id", "conversation_id"],
    )
    op.create_table(
        "channel_peers",
        ident("office_id"),
        ident("integration_id"),
        ident("contact_id"),
        sa.Column("peer_id", sa.String(length=128), nullable=False),
        ts("created_at"),
        ident("id"),
        _fk("channel_peers", "office_id", "offices"),
        _fk("channel_peers", "integration_id", "integrations"),
        _fk("channel_peers", "contact_id", "contacts"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_channel_peers")),
    )
    op.create_index(
        "ux_channel_peers_office_id_integration_id_peer_id",
        "channel_peers",
        ["office_id", "integration_id", "peer_id"],
        unique=True,
    )
    op.create_index(
        "ix_channel_peers_office_id_integration_id_contact_id",
        "channel_peers",
        ["office_id", "integration_id", "contact_id"],
    )


def downgrade() -> None:
    op.drop_table("channel_peers")
    op.drop_table("webchat_visitors")
    with op.batch_alter_table("integrations") as batch:
        batch.drop_column("bridge")
        batch.drop_column("webchat")
