"""Issue 30: evidence keys per office, the audit trail, what an evidence transcript shows of
a message (``messages.sent_by``, ``messages.status_history``), the ``audit`` scope, and the
secrets already stored sealed at rest (``officehub.kit.encryption``): webhooks' and
deliveries' secrets, integrations' access tokens, app secrets, verify tokens and bridge
secrets. The key is the service's (``OFFICEHUB_SECRETS_KEY`` or ``DATA_DIR/secrets.key``,
made here if there is something to seal and no key yet).

Revision ID: 0016_audit
Revises: 0015_privacy
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op

from officehub.migrations.types import JSON, ident, ts

revision = "0016_audit"
down_revision = "0015_privacy"
branch_labels = None
depends_on = None


_KEYS = sa.table("api_keys", sa.column("id", sa.String()), sa.column("permissions", JSON))
_FULL = {"read", "write", "webhooks", "edit:customer"}


def _keys() -> list[tuple[str, list[str]]]:
    return [(r.id, list(r.permissions)) for r in op.get_bind().execute(sa.select(_KEYS))]


def _set(key_id: str, permissions: list[str]) -> None:
    op.get_bind().execute(
        _KEYS.update().where(_KEYS.c.id == key_id).values(permissions=permissions)
    )


_SEALED_TEXT = (
    ("webhooks", "secret"),
    ("webhooks", "previous_secret"),
    ("action_deliveries", "secret"),
)
_SEALED_JSON = (
    ("integrations", "whatsapp", ("accessToken", "appSecret", "verifyToken")),
    ("integrations", "bridge", ("secret",)),
)


def _seal_existing() -> None:
    """Seals every secret still in clear, row by row (what the models' types would do)."""
    from officehub.kit.config import get_settings
    from officehub.kit.encryption import is_sealed, keyring, load_secrets_keys

    bind = op.get_bind()
    key = None

    def sealing() -> Any:
        nonlocal key
        if key is None:
            key = keyring.current or load_secrets_keys(get_settings())
        return key

    for table_name, column in _SEALED_TEXT:
        table = sa.table(table_name, sa.column("id", sa.String()), sa.column(column, sa.Text()))
        for row in bind.execute(sa.select(table.c.id, table.c[column])):
            value = row[1]
            if value is not None and not is_sealed(value):
                sealed = sealing().seal(value, purpose=f"{table_name}.{column}")
                bind.execute(table.update().where(table.c.id == row[0]).values({column: sealed}))
    for table_name, column, fields in _SEALED_JSON:
        table = sa.table(table_name, sa.column("id", sa.String()), sa.column(column, JSON))
        for row in bind.execute(sa.select(table.c.id, table.c[column])):
            value = row[1]
            if not isinstance(value, dict):
                continue
            changed = dict(value)
            for name in fields:
                field = changed.get(name)
                if isinstance(field, str) and field and not is_sealed(field):
                    purpose = f"{table_name}.{column}.{name}"
                    changed[name] = sealing().seal(field, purpose=purpose)
            if changed != value:
                bind.execute(table.update().where(table.c.id == row[0]).values({column: changed}))


def upgrade() -> None:
    # A sealed secret is longer than the clear one: the varchar(256) columns become text
    # (SQLite keeps no length: nothing to change there).
    if op.get_bind().dialect.name == "postgresql":
        for table_name, column in _SEALED_TEXT:
            op.alter_column(table_name, column, type_=sa.Text(), existing_type=sa.String(256))
    _seal_existing()
    # The new ``audit`` scope (GET /audit-log): keys that could do everything are the
    # office's administrators' and keep doing everything; the others do not get it.
    for key_id, permissions in _keys():
        if _FULL <= set(permissions) and "audit" not in permissions:
            _set(key_id, [*permissions, "audit"])
    # Plain ADD COLUMNs (no batch copy: messages is referred to, docs/decisions.md).
    op.add_column("messages", sa.Column("sent_by", sa.String(80), nullable=True))
    op.add_column("messages", sa.Column("status_history", JSON, nullable=True))
    op.create_table(
        "evidence_keys",
        ident("office_id"),
        sa.Column("public_key_pem", sa.Text(), nullable=False),
        sa.Column("fingerprint", sa.String(64), nullable=False),
        sa.Column("private_key_sealed", sa.Text(), nullable=False),
        ts("created_at"),
        sa.ForeignKeyConstraint(
            ["office_id"],
            ["offices.id"],
            name=op.f("fk_evidence_keys_office_id_offices"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("office_id", name=op.f("pk_evidence_keys")),
    )
    op.create_table(
        "audit_entries",
        ident("office_id"),
        sa.Column("seq", sa.BigInteger(), nullable=False),
        ts("at"),
        sa.Column("actor_kind", sa.String(8), nullable=False),
        sa.Column("actor_id", sa.String(64), nullable=False),
        sa.Column("actor_address", sa.String(64), nullable=False),
        sa.Column("action", sa.String(64), nullable=False),
        sa.Column("record_type", sa.String(32), nullable=False),
        sa.Column("record_id", sa.String(64), nullable=True),
        ident("person_id", nullable=True),
        sa.Column("previous_hash", sa.String(64), nullable=False),
        sa.Column("hash", sa.String(64), nullable=False),
        ident("id"),
        sa.ForeignKeyConstraint(
            ["office_id"],
            ["offices.id"],
            name=op.f("fk_audit_entries_office_id_offices"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_audit_entries")),
    )
    op.create_index(
        "ux_audit_entries_office_id_seq", "audit_entries", ["office_id", "seq"], unique=True
    )
    op.create_index("ix_audit_entries_office_id_at", "audit_entries", ["office_id", "at"])
    op.create_index(
        "ix_audit_entries_office_id_person_id_at",
        "audit_entries",
        ["office_id", "person_id", "at"],
    )
    op.create_index(
        "ix_audit_entries_office_id_actor_id_at", "audit_entries", ["office_id", "actor_id", "at"]
    )


def _open_sealed() -> None:
    """Puts every sealed secret back in clear (what the older code reads)."""
    from officehub.kit.config import get_settings
    from officehub.kit.encryption import is_sealed, keyring, load_secrets_keys

    bind = op.get_bind()

    def opened(value: str, purpose: str) -> str:
        if not keyring.keys:
            load_secrets_keys(get_settings())
        return keyring.open(value, purpose=purpose)

    for table_name, column in _SEALED_TEXT:
        table = sa.table(table_name, sa.column("id", sa.String()), sa.column(column, sa.Text()))
        for row in bind.execute(sa.select(table.c.id, table.c[column])):
            if is_sealed(row[1]):
                clear = opened(row[1], f"{table_name}.{column}")
                bind.execute(table.update().where(table.c.id == row[0]).values({column: clear}))
    for table_name, column, fields in _SEALED_JSON:
        table = sa.table(table_name, sa.column("id", sa.String()), sa.column(column, JSON))
        for row in bind.execute(sa.select(table.c.id, table.c[column])):
            if not isinstance(row[1], dict):
                continue
            changed = {
                name: opened(value, f"{table_name}.{column}.{name}")
                if name in fields and isinstance(value, str) and is_sealed(value)
                else value
                for name, value in row[1].items()
            }
            if changed != row[1]:
                bind.execute(table.update().where(table.c.id == row[0]).values({column: changed}))


def downgrade() -> None:
    # The secrets go back in clear; the columns keep the text type.
    _open_sealed()
    for key_id, permissions in _keys():
        if "audit" in permissions:
            _set(key_id, [p for p in permissions if p != "audit"])
    op.drop_table("audit_entries")
    op.drop_table("evidence_keys")
    op.drop_column("messages", "status_history")
    op.drop_column("messages", "sent_by")
