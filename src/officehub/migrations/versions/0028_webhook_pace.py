"""Issue 44, a pace per endpoint: ``webhooks.rate_limit_per_second`` (null: none) and the
second the pace counts in (``pace_second``, ``pace_used``), shared by every worker process.

Revision ID: 0028_webhook_pace
Revises: 0027_sealed_secrets
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0028_webhook_pace"
down_revision = "0027_sealed_secrets"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("webhooks") as batch:
        batch.add_column(sa.Column("rate_limit_per_second", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("pace_second", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("pace_used", sa.Integer(), nullable=False, server_default="0"))


def downgrade() -> None:
    with op.batch_alter_table("webhooks") as batch:
        batch.drop_column("pace_used")
        batch.drop_column("pace_second")
        batch.drop_column("rate_limit_per_second")
