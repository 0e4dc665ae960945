"""The case watcher claims through the one queue: ``cases.claim_token`` (the claim that
holds a case while it is checked; a check recorded only while it still holds it).

Revision ID: 0014_casetoken
Revises: 0013_claimcode
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0014_casetoken"
down_revision = "0013_claimcode"
branch_labels = None
depends_on = None


def upgrade() -> None:
    # A plain ADD COLUMN (no batch copy: case_movements refers to cases, docs/decisions.md).
    op.add_column("cases", sa.Column("claim_token", sa.String(64), nullable=True))


def downgrade() -> None:
    op.drop_column("cases", "claim_token")
