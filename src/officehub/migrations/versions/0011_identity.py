"""One client, one contact: ``contacts.whatsapp_id`` (the id the WhatsApp platform knows
the contact by, where sends go) and stored Brazilian mobiles in their canonical form.

A Brazilian mobile is one number with or without its ninth digit; the canonical form has
it (``+551188887777`` → ``+5511988887777``), so the unique ``(office_id, phone)`` index
holds both forms. Contacts the channel stored in the old form (the platform's id) are
rewritten, keeping that id as ``whatsapp_id``, only where no contact of the office already
has the canonical form: those pairs are one person split in two, left for
``officehub people duplicates --merge`` (a migration does not merge people).

The rule is written out here, not imported, so the migration stays what it was when run.

Revision ID: 0011_identity
Revises: 0010_outbound
"""

from __future__ import annotations

import re

import sqlalchemy as sa
from alembic import op

revision = "0011_identity"
down_revision = "0010_outbound"
branch_labels = None
depends_on = None

# +55, the area code (11-99, no zero), 8 digits starting 6-9: a mobile without the ninth
# digit. Landlines (8 digits starting 2-5) never had one.
OLD_MOBILE = re.compile(r"\+55([1-9]{2})([6-9][0-9]{7})")

contacts = sa.table(
    "contacts",
    sa.column("id", sa.String),
    sa.column("office_id", sa.String),
    sa.column("phone", sa.String),
    sa.column("whatsapp_id", sa.String),
)


def upgrade() -> None:
    op.add_column("contacts", sa.Column("whatsapp_id", sa.String(length=32), nullable=True))
    bind = op.get_bind()
    candidates = bind.execute(
        sa.select(contacts.c.id, contacts.c.office_id, contacts.c.phone).where(
            contacts.c.phone.like("+55%"), sa.func.length(contacts.c.phone) == 13
        )
    ).all()
    for ident, office_id, phone in candidates:
        found = OLD_MOBILE.fullmatch(phone)
        if found is None:
            continue
        canonical = f"+55{found[1]}9{found[2]}"
        taken = bind.execute(
            sa.select(contacts.c.id).where(
                contacts.c.office_id == office_id, contacts.c.phone == canonical
            )
        ).first()
        if taken is not None:
            continue
        bind.execute(
            sa.update(contacts)
            .where(contacts.c.id == ident)
            .values(phone=canonical, whatsapp_id=phone.removeprefix("+"))
        )


def downgrade() -> None:
    # The canonical numbers stay: both forms are the same number, and the old form is
    # still known by ``whatsapp_id`` until it goes.
    op.drop_column("contacts", "whatsapp_id")  # no batch copy: it would cascade on SQLite
