"""Joins the CRM and webhook branches so every later migration has one parent.

Revision ID: 0004_merge_heads
Revises: 0003_crm, 0003_webhooks
"""

from __future__ import annotations

revision = "0004_merge_heads"
down_revision = ("0003_crm", "0003_webhooks")
branch_labels = None
depends_on = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
