"""Web-chat identity: a contact a web chat visitor made is unverified, and what the visitor
typed is a claim kept apart from the phone and email the office holds.

``contacts.verified`` (true for every existing contact but those below), and
``claimed_phone``/``claimed_email``. Contacts only web chats ever talked with (a visitor
of theirs, no conversation of another channel) were made by what a visitor typed: they
become unverified and their phone and email move to the claim columns, freeing the
phone for the office's real client.

Revision ID: 0012_confid
Revises: 0011_identity
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0012_confid"
down_revision = "0011_identity"
branch_labels = None
depends_on = None

_UNVERIFY_WEBCHAT_ONLY = """
UPDATE contacts SET verified = false, claimed_phone = phone, claimed_email = email,
    phone = NULL, email = NULL, ddd = NULL
WHERE id IN (SELECT contact_id FROM webchat_visitors)
    AND NOT EXISTS (
        SELECT 1 FROM conversations c JOIN integrations i ON i.id = c.integration_id
        WHERE c.person_id = contacts.id AND i.type <> 'WEBCHAT'
    )
"""

_CLAIMS_BACK = """
UPDATE contacts SET phone = claimed_phone, claimed_phone = NULL
WHERE claimed_phone IS NOT NULL AND phone IS NULL
    AND NOT EXISTS (
        SELECT 1 FROM contacts other
        WHERE other.office_id = contacts.office_id AND other.phone = contacts.claimed_phone
    )
    AND (
        SELECT count(*) FROM contacts other
        WHERE other.office_id = contacts.office_id
            AND other.claimed_phone = contacts.claimed_phone
    ) = 1
"""

_EMAIL_CLAIMS_BACK = """
UPDATE contacts SET email = claimed_email
WHERE claimed_email IS NOT NULL AND email IS NULL
"""

_PHONE_CLAIMS_INTO_DESCRIPTION = """
UPDATE contacts SET description = COALESCE(description || ' ', '')
    || 'Web chat visitor who gave ' || claimed_phone || '; not verified.'
WHERE claimed_phone IS NOT NULL
"""


def upgrade() -> None:
    # Plain ``ALTER TABLE … ADD COLUMN`` on both databases: a batch copy of ``contacts`` on
    # SQLite would drop the table, and with it (ON DELETE CASCADE) every conversation.
    op.add_column(
        "contacts", sa.Column("verified", sa.Boolean(), nullable=False, server_default=sa.true())
    )
    op.add_column("contacts", sa.Column("claimed_phone", sa.String(length=20), nullable=True))
    op.add_column("contacts", sa.Column("claimed_email", sa.String(length=320), nullable=True))
    op.execute(_UNVERIFY_WEBCHAT_ONLY)


def downgrade() -> None:
    """Claims go back where 0007 kept them: the phone (when no other contact holds or
    claims it) and the email; a phone that cannot go back is written in the description."""
    for statement in (_CLAIMS_BACK, _EMAIL_CLAIMS_BACK, _PHONE_CLAIMS_INTO_DESCRIPTION):
        op.execute(statement)
    for column in ("claimed_email", "claimed_phone", "verified"):
        op.drop_column("contacts", column)
