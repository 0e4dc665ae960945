"""Issue 30: evidence keys per office, the audit trail, and what an evidence transcript
shows of a message (``messages.sent_by``, ``messages.status_history``).

Revision ID: 0015_audit
Revises: 0014_casetoken
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from officehub.migrations.types import JSON, ident, ts

revision = "0015_audit"
down_revision = "0014_casetoken"
branch_labels = None
depends_on = None


_KEYS = sa.table(
    "api_keys", sa.column("id", sa.String()), sa.column("permissions", JSON)
)
_FULL = {"read", "write", "webhooks", "edit:customer"}


def _keys() -> list[tuple[str, list[str]]]:
    return [(r.id, list(r.permissions)) for r in op.get_bind().execute(sa.select(_KEYS))]


def _set(ident: str, permissions: list[str]) -> None:
    op.get_bind().execute(
        _KEYS.update().where(_KEYS.c.id == ident).values(permissions=permissions)
    )


def upgrade() -> None:
    # The new ``audit`` scope (GET /audit-log): keys that could do everything are the
    # office's administrators' and keep doing everything; the others do not get it.
    for ident, permissions in _keys():
        if _FULL <= set(permissions) and "audit" not in permissions:
            _set(ident, [*permissions, "audit"])
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


def downgrade() -> None:
    for ident, permissions in _keys():
        if "audit" in permissions:
            _set(ident, [p for p in permissions if p != "audit"])
    op.drop_table("audit_entries")
    op.drop_table("evidence_keys")
    op.drop_column("messages", "status_history")
    op.drop_column("messages", "sent_by")
