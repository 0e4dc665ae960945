"""One-time codes that verify a web chat visitor's claimed phone (issue 27): only their
HMAC is kept, with the expiry, the wrong tries and when the code was used.

Revision ID: 0013_claimcode
Revises: 0012_confid
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from officehub.migrations.types import ident, ts

revision = "0013_claimcode"
down_revision = "0012_confid"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "claim_codes",
        ident("office_id"),
        ident("contact_id"),
        sa.Column("phone", sa.String(length=20), nullable=False),
        sa.Column("code_hash", sa.String(length=64), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        ts("expires_at"),
        ts("used_at", nullable=True),
        ts("created_at"),
        ident("id"),
        sa.ForeignKeyConstraint(
            ["office_id"],
            ["offices.id"],
            name=op.f("fk_claim_codes_office_id_offices"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["contact_id"],
            ["contacts.id"],
            name=op.f("fk_claim_codes_contact_id_contacts"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_claim_codes")),
    )
    op.create_index(
        "ix_claim_codes_office_id_contact_id_created_at",
        "claim_codes",
        ["office_id", "contact_id", "created_at"],
    )
    op.create_index(
        "ix_claim_codes_office_id_phone_created_at",
        "claim_codes",
        ["office_id", "phone", "created_at"],
    )


def downgrade() -> None:
    op.drop_table("claim_codes")
