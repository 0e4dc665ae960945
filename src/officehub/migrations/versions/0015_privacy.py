"""The office's legal duties, first part: a contact's legal hold (``contacts.legal_hold``,
``contacts.legal_hold_reason``) and the ``admin`` key scope (erasure, legal holds).

A key that held every scope before (made without ``--permission``) gets ``admin`` too, as a
key made now does; a key restricted to some scopes stays as it was.

Revision ID: 0015_privacy
Revises: 0015_inboxlist (chained after it so there is one head; the lead renumbers)
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from officehub.migrations.types import JSON

revision = "0015_privacy"
down_revision = "0015_inboxlist"
branch_labels = None
depends_on = None

_EVERY_SCOPE_BEFORE = {"read", "write", "webhooks", "edit:customer"}
_keys = sa.table("api_keys", sa.column("id", sa.String(32)), sa.column("permissions", JSON))


def _rewrite(change: dict[str, list[str]]) -> None:
    bind = op.get_bind()
    for key_id, permissions in change.items():
        bind.execute(_keys.update().where(_keys.c.id == key_id).values(permissions=permissions))


def _current() -> dict[str, list[str]]:
    rows = op.get_bind().execute(sa.select(_keys.c.id, _keys.c.permissions))
    return {row.id: list(row.permissions or []) for row in rows}


def upgrade() -> None:
    # Plain ADD COLUMNs (no batch copy: many tables refer to contacts, docs/decisions.md).
    op.add_column(
        "contacts",
        sa.Column("legal_hold", sa.Boolean(), nullable=False, server_default=sa.false()),
    )
    op.add_column("contacts", sa.Column("legal_hold_reason", sa.Text(), nullable=True))
    _rewrite(
        {
            key_id: [*perms, "admin"]
            for key_id, perms in _current().items()
            if _EVERY_SCOPE_BEFORE <= set(perms) and "admin" not in perms
        }
    )


def downgrade() -> None:
    _rewrite({key_id: [p for p in perms if p != "admin"] for key_id, perms in _current().items()})
    op.drop_column("contacts", "legal_hold_reason")
    op.drop_column("contacts", "legal_hold")
