"""Case watch: the office's court cases followed on DataJud; movements found there are
stored in ``case_movements`` with the case and DataJud's movement code.

Revision ID: 0007_cases
Revises: 0007_fanout
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from officehub.migrations.types import ident, ts

revision = "0007_cases"
down_revision = "0007_fanout"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "cases",
        ident("office_id"),
        ident("person_id"),
        ident("conversation_id", nullable=True),
        ident("legal_area_id", nullable=True),
        sa.Column("number", sa.String(length=20), nullable=False),
        sa.Column("court", sa.String(length=16), nullable=False),
        sa.Column("watch", sa.Boolean(), nullable=False),
        ts("next_check_at", nullable=True),
        ts("last_checked_at", nullable=True),
        ts("last_movement_at", nullable=True),
        ts("history_at", nullable=True),
        sa.Column("check_status", sa.String(length=16), nullable=True),
        sa.Column("check_error", sa.String(length=300), nullable=True),
        ident("id"),
        ts("created_at"),
        ts("updated_at"),
        sa.ForeignKeyConstraint(
            ["office_id"],
            ["offices.id"],
            name=op.f("fk_cases_office_id_offices"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["person_id"],
            ["contacts.id"],
            name=op.f("fk_cases_person_id_contacts"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["conversation_id"],
            ["conversations.id"],
            name=op.f("fk_cases_conversation_id_conversations"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["legal_area_id"],
            ["legal_areas.id"],
            name=op.f("fk_cases_legal_area_id_legal_areas"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_cases")),
    )
    op.create_index("ix_cases_office_id_number", "cases", ["office_id", "number"], unique=True)
    op.create_index("ix_cases_office_id_person_id", "cases", ["office_id", "person_id"])
    op.create_index(
        "ix_cases_due",
        "cases",
        ["next_check_at"],
        sqlite_where=sa.text("next_check_at IS NOT NULL"),
        postgresql_where=sa.text("next_check_at IS NOT NULL"),
    )
    with op.batch_alter_table("case_movements") as batch:
        batch.add_column(ident("case_id", nullable=True))
        batch.add_column(sa.Column("code", sa.Integer(), nullable=True))
        batch.create_foreign_key(
            op.f("fk_case_movements_case_id_cases"),
            "cases",
            ["case_id"],
            ["id"],
            ondelete="CASCADE",
        )
        batch.create_index(
            "ix_case_movements_office_id_case_id_code_occurred_at",
            ["office_id", "case_id", "code", "occurred_at"],
            unique=True,
        )


def downgrade() -> None:
    op.execute("DELETE FROM case_movements WHERE case_id IS NOT NULL")
    with op.batch_alter_table("case_movements") as batch:
        batch.drop_index("ix_case_movements_office_id_case_id_code_occurred_at")
        batch.drop_constraint(op.f("fk_case_movements_case_id_cases"), type_="foreignkey")
        batch.drop_column("code")
        batch.drop_column("case_id")
    op.drop_index("ix_cases_due", table_name="cases")
    op.drop_index("ix_cases_office_id_person_id", table_name="cases")
    op.drop_index("ix_cases_office_id_number", table_name="cases")
    op.drop_table("cases")
