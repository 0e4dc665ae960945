"""Issue 30, consent and opt-out: a contact's consent records per purpose
(``consent_records``, append-only) and the office's settings (``office_settings``: so far
the opt-out and opt-in keywords).

Revision ID: 0017_consent
Revises: 0017_routing (chained after it so there is one head; the lead renumbers)
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from officehub.migrations.types import JSON, ident, ts

revision = "0017_consent"
down_revision = "0017_routing"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "consent_records",
        ident("office_id"),
        ident("contact_id"),
        sa.Column("purpose", sa.String(16), nullable=False),
        sa.Column("granted", sa.Boolean(), nullable=False),
        sa.Column("source", sa.String(64), nullable=False),
        sa.Column("text_version", sa.String(64), nullable=True),
        ts("recorded_at"),
        ident("id"),
        sa.ForeignKeyConstraint(
            ["office_id"],
            ["offices.id"],
            name=op.f("fk_consent_records_office_id_offices"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["contact_id"],
            ["contacts.id"],
            name=op.f("fk_consent_records_contact_id_contacts"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_consent_records")),
    )
    op.create_index(
        "ix_consent_records_office_id_contact_id_recorded_at",
        "consent_records",
        ["office_id", "contact_id", "recorded_at"],
    )
    op.create_table(
        "office_settings",
        ident("office_id"),
        sa.Column("opt_out_keywords", JSON, nullable=True),
        sa.Column("opt_in_keywords", JSON, nullable=True),
        ts("updated_at"),
        sa.ForeignKeyConstraint(
            ["office_id"],
            ["offices.id"],
            name=op.f("fk_office_settings_office_id_offices"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("office_id", name=op.f("pk_office_settings")),
    )


def downgrade() -> None:
    op.drop_table("office_settings")
    op.drop_table("consent_records")
