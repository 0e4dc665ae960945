"""Issue 31, the DJEN part: ``publications`` (a court journal's communication naming a
lawyer of the office, once per office by DJEN id and by hash, with its deadline), and the
lawyers' sync state (``next_sync_at``, ``synced_through``).

Revision ID: 0020_djen
Revises: 0019_stale
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from officehub.migrations.types import ident, ts

revision = "0020_djen"
down_revision = "0019_stale"
branch_labels = None
depends_on = None


def _fk(column: str, target: str, ondelete: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        [column],
        [f"{target}.id"],
        name=op.f(f"fk_publications_{column}_{target}"),
        ondelete=ondelete,
    )


def upgrade() -> None:
    with op.batch_alter_table("lawyers") as batch:
        batch.add_column(ts("next_sync_at", nullable=True))
        batch.add_column(sa.Column("synced_through", sa.Date(), nullable=True))
    op.create_table(
        "publications",
        ident("office_id"),
        ident("lawyer_id", nullable=True),
        ident("case_id", nullable=True),
        ident("ticket_id", nullable=True),
        sa.Column("djen_id", sa.BigInteger(), nullable=False),
        sa.Column("hash", sa.String(length=100), nullable=True),
        sa.Column("made_available", sa.Date(), nullable=False),
        sa.Column("published_on", sa.Date(), nullable=False),
        sa.Column("court", sa.String(length=30), nullable=False),
        sa.Column("kind", sa.String(length=100), nullable=False),
        sa.Column("category", sa.String(length=16), nullable=False),
        sa.Column("organ", sa.String(length=300), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("case_number", sa.String(length=20), nullable=True),
        sa.Column("link", sa.String(length=2000), nullable=True),
        ts("read_at", nullable=True),
        sa.Column("deadline_days", sa.Integer(), nullable=True),
        sa.Column("deadline_days_source", sa.String(length=8), nullable=True),
        sa.Column("deadline_at", sa.Date(), nullable=True),
        sa.Column("deadline_calendar", sa.String(length=40), nullable=True),
        ident("id"),
        ts("created_at"),
        ts("updated_at"),
        _fk("office_id", "offices", "CASCADE"),
        _fk("lawyer_id", "lawyers", "SET NULL"),
        _fk("case_id", "cases", "SET NULL"),
        _fk("ticket_id", "tickets", "SET NULL"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_publications")),
    )
    for name, columns, unique in (
        ("djen_id", ["office_id", "djen_id"], True),
        ("hash", ["office_id", "hash"], True),
        ("made_available", ["office_id", "made_available"], False),
        ("case_id", ["office_id", "case_id"], False),
        ("lawyer_id", ["office_id", "lawyer_id"], False),
    ):
        op.create_index(f"ix_publications_office_id_{name}", "publications", columns, unique=unique)


def downgrade() -> None:
    op.drop_table("publications")
    with op.batch_alter_table("lawyers") as batch:
        batch.drop_column("synced_through")
        batch.drop_column("next_sync_at")
