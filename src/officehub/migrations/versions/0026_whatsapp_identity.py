"""Issue 40, WhatsApp usernames: a contact's business-scoped user id (BSUID) and username.

``contacts.whatsapp_user_id`` is the id the platform gives a WhatsApp user within the
office's business portfolio (``BR.1502576394655843``), unique per office like the phone;
``contacts.whatsapp_username`` is the username the client chose (shown, searched, never
an identity: it can change at any time). On PostgreSQL the username has a trigram index
like the name and phone (0007_trgm): ``GET /people?search=`` matches it too.

Revision ID: 0026_whatsapp_identity
Revises: 0025_reports
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0026_whatsapp_identity"
down_revision = "0025_reports"
branch_labels = None
depends_on = None

USERNAME_TRGM = "ix_contacts_office_id_whatsapp_username_trgm"


def upgrade() -> None:
    op.add_column("contacts", sa.Column("whatsapp_user_id", sa.String(length=140), nullable=True))
    op.add_column("contacts", sa.Column("whatsapp_username", sa.String(length=100), nullable=True))
    op.create_index(
        "ux_contacts_office_id_whatsapp_user_id",
        "contacts",
        ["office_id", "whatsapp_user_id"],
        unique=True,
        sqlite_where=sa.text("whatsapp_user_id IS NOT NULL"),
        postgresql_where=sa.text("whatsapp_user_id IS NOT NULL"),
    )
    if op.get_bind().dialect.name == "postgresql":
        op.create_index(
            USERNAME_TRGM,
            "contacts",
            ["office_id", "whatsapp_username"],
            postgresql_using="gin",
            postgresql_ops={"whatsapp_username": "gin_trgm_ops"},
        )


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.drop_index(USERNAME_TRGM, table_name="contacts")
    op.drop_index("ux_contacts_office_id_whatsapp_user_id", table_name="contacts")
    # no batch copy: it would cascade on SQLite
    op.drop_column("contacts", "whatsapp_username")
    op.drop_column("contacts", "whatsapp_user_id")
