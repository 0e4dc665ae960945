"""Issue 29, the optional TOTP second factor: one ``user_totp`` row per enrolled user (the
secret sealed at rest, the last accepted time step) and the hashed one-use recovery codes.

Revision ID: 0018_totp
Revises: 0018_hours (chained after it so there is one head; the lead renumbers)
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from officehub.migrations.types import ident, ts

revision = "0018_totp"
down_revision = "0018_hours"
branch_labels = None
depends_on = None


def _owned(table: str) -> list[sa.ForeignKeyConstraint]:
    return [
        sa.ForeignKeyConstraint(
            ["office_id"],
            ["offices.id"],
            name=op.f(f"fk_{table}_office_id_offices"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f(f"fk_{table}_user_id_users"), ondelete="CASCADE"
        ),
    ]


def upgrade() -> None:
    op.create_table(
        "user_totp",
        ident("office_id"),
        ident("user_id"),
        sa.Column("secret", sa.Text(), nullable=False),
        ts("confirmed_at", nullable=True),
        sa.Column("last_step", sa.BigInteger(), nullable=True),
        ts("created_at"),
        ident("id"),
        *_owned("user_totp"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_user_totp")),
        sa.UniqueConstraint("user_id", name=op.f("uq_user_totp_user_id")),
    )
    op.create_index("ix_user_totp_office_id_user_id", "user_totp", ["office_id", "user_id"])
    op.create_table(
        "user_recovery_codes",
        ident("office_id"),
        ident("user_id"),
        sa.Column("code_hash", sa.String(length=64), nullable=False),
        ts("used_at", nullable=True),
        ident("id"),
        *_owned("user_recovery_codes"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_user_recovery_codes")),
        sa.UniqueConstraint("code_hash", name=op.f("uq_user_recovery_codes_code_hash")),
    )
    op.create_index(
        "ix_user_recovery_codes_office_id_user_id",
        "user_recovery_codes",
        ["office_id", "user_id"],
    )


def downgrade() -> None:
    op.drop_table("user_recovery_codes")
    op.drop_table("user_totp")
