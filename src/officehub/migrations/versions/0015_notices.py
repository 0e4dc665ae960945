"""Case notices (issue 31): ``case_movements.complements`` (the names of DataJud's
``complementosTabelados``, which fill a movement's explanation), ``case_notices`` (what a
client is told of a new movement, approved by the lawyer) and ``case_notice_settings``
(per office: the policy per category, the template, quiet hours); the office's
``lawyers`` (by OAB registration) and ``court_holidays`` (local days without court
business, which deadlines skip).

Revision ID: 0015_notices
Revises: 0015_accounts
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from officehub.migrations.types import JSON, ident, ts

revision = "0015_notices"
down_revision = "0015_accounts"
branch_labels = None
depends_on = None


def _fk(table: str, column: str, target: str, ondelete: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        [column],
        [f"{target}.id"],
        name=op.f(f"fk_{table}_{column}_{target}"),
        ondelete=ondelete,
    )


def upgrade() -> None:
    # A plain ADD COLUMN (no batch copy: case_movements is referenced, docs/decisions.md).
    op.add_column("case_movements", sa.Column("complements", JSON, nullable=True))
    op.create_table(
        "case_notices",
        ident("office_id"),
        ident("case_id"),
        ident("movement_id"),
        ident("person_id"),
        ident("conversation_id", nullable=True),
        sa.Column("case_number", sa.String(length=32), nullable=False),
        ts("occurred_at"),
        sa.Column("category", sa.String(length=16), nullable=False),
        sa.Column("explanation", sa.Text(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        ts("send_after", nullable=True),
        sa.Column("sent_as", sa.String(length=16), nullable=True),
        ident("message_id", nullable=True),
        sa.Column("error", sa.String(length=300), nullable=True),
        ts("approved_at", nullable=True),
        ts("sent_at", nullable=True),
        ident("id"),
        ts("created_at"),
        ts("updated_at"),
        _fk("case_notices", "office_id", "offices", "CASCADE"),
        _fk("case_notices", "case_id", "cases", "CASCADE"),
        _fk("case_notices", "movement_id", "case_movements", "CASCADE"),
        _fk("case_notices", "person_id", "contacts", "CASCADE"),
        _fk("case_notices", "conversation_id", "conversations", "SET NULL"),
        _fk("case_notices", "message_id", "messages", "SET NULL"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_case_notices")),
    )
    op.create_index(
        "ix_case_notices_office_id_movement_id",
        "case_notices",
        ["office_id", "movement_id"],
        unique=True,
    )
    op.create_index(
        "ix_case_notices_office_id_status_created_at",
        "case_notices",
        ["office_id", "status", "created_at"],
    )
    op.create_index("ix_case_notices_office_id_case_id", "case_notices", ["office_id", "case_id"])
    op.create_index(
        "ix_case_notices_office_id_person_id", "case_notices", ["office_id", "person_id"]
    )
    op.create_index(
        "ix_case_notices_due",
        "case_notices",
        ["send_after"],
        sqlite_where=sa.text("status = 'APPROVED'"),
        postgresql_where=sa.text("status = 'APPROVED'"),
    )
    op.create_table(
        "case_notice_settings",
        ident("office_id"),
        sa.Column("categories", JSON, nullable=False),
        sa.Column("template_name", sa.String(length=512), nullable=True),
        sa.Column("template_language", sa.String(length=16), nullable=True),
        sa.Column("quiet_hours", sa.Boolean(), nullable=False),
        sa.Column("quiet_from", sa.String(length=5), nullable=False),
        sa.Column("quiet_until", sa.String(length=5), nullable=False),
        sa.Column("quiet_sundays", sa.Boolean(), nullable=False),
        sa.Column("time_zone", sa.String(length=64), nullable=False),
        ident("id"),
        ts("created_at"),
        ts("updated_at"),
        _fk("case_notice_settings", "office_id", "offices", "CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_case_notice_settings")),
    )
    op.create_index(
        "ix_case_notice_settings_office_id", "case_notice_settings", ["office_id"], unique=True
    )
    op.create_table(
        "lawyers",
        ident("office_id"),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("oab_number", sa.String(length=7), nullable=False),
        sa.Column("oab_uf", sa.String(length=2), nullable=False),
        ident("id"),
        ts("created_at"),
        ts("updated_at"),
        _fk("lawyers", "office_id", "offices", "CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_lawyers")),
    )
    op.create_index(
        "ix_lawyers_office_id_oab_number_oab_uf",
        "lawyers",
        ["office_id", "oab_number", "oab_uf"],
        unique=True,
    )
    op.create_table(
        "court_holidays",
        ident("office_id"),
        sa.Column("day", sa.Date(), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        ident("id"),
        ts("created_at"),
        ts("updated_at"),
        _fk("court_holidays", "office_id", "offices", "CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_court_holidays")),
    )
    op.create_index(
        "ix_court_holidays_office_id_day", "court_holidays", ["office_id", "day"], unique=True
    )


def downgrade() -> None:
    op.drop_table("court_holidays")
    op.drop_table("lawyers")
    op.drop_table("case_notice_settings")
    op.drop_table("case_notices")
    op.drop_column("case_movements", "complements")
