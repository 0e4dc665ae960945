"""API key scopes: every key made before scopes keeps what it could do.

Before this revision the only permission was ``edit:customer`` and every key could read,
change and manage webhooks. Each existing key is given ``read``, ``write`` and
``webhooks``; ``edit:customer`` stays where it was (a key made without ``--permission``
held it, so it now holds all four scopes, as a new default key does).

Revision ID: 0005_key_scopes
Revises: 0005_integrity
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from officehub.migrations.types import JSON

revision = "0005_key_scopes"
down_revision = "0005_integrity"
branch_labels = None
depends_on = None

_ADDED = ("read", "write", "webhooks")
_keys = sa.table("api_keys", sa.column("id", sa.String(32)), sa.column("permissions", JSON))


def _rewrite(change: dict[str, list[str]]) -> None:
    bind = op.get_bind()
    for key_id, permissions in change.items():
        bind.execute(_keys.update().where(_keys.c.id == key_id).values(permissions=permissions))


def _current() -> dict[str, list[str]]:
    rows = op.get_bind().execute(sa.select(_keys.c.id, _keys.c.permissions))
    return {row.id: list(row.permissions or []) for row in rows}


def upgrade() -> None:
    _rewrite(
        {
            key_id: [*_ADDED, *(p for p in perms if p not in _ADDED)]
            for key_id, perms in _current().items()
        }
    )


def downgrade() -> None:
    _rewrite(
        {key_id: [p for p in perms if p not in _ADDED] for key_id, perms in _current().items()}
    )
