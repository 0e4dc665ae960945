"""Issue 31, a stale source: when a watched case's DataJud checks began failing
(``source_failing_since``) and when that silence made ``case.source.stale``
(``source_stale_since``).

Revision ID: 0019_stale
Revises: 0018_totp
"""

from __future__ import annotations

from alembic import op

from officehub.migrations.types import ts

revision = "0019_stale"
down_revision = "0018_totp"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("cases", ts("source_failing_since", nullable=True))
    op.add_column("cases", ts("source_stale_since", nullable=True))


def downgrade() -> None:
    op.drop_column("cases", "source_stale_since")
    op.drop_column("cases", "source_failing_since")
