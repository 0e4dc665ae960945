"""People sign in (issue 29): users' Argon2id password hashes, their active flag and the
``onlyAssignedConversations`` setting; one-use invitation and reset tokens and server-side
sessions, each kept as a SHA-256 only.

Revision ID: 0015_accounts
Revises: 0014_casetoken
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from officehub.migrations.types import ident, ts

revision = "0015_accounts"
down_revision = "0014_casetoken"
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
            ["user_id"],
            ["users.id"],
            name=op.f(f"fk_{table}_user_id_users"),
            ondelete="CASCADE",
        ),
    ]


def upgrade() -> None:
    # Plain ADD COLUMNs (no batch copy: many tables refer to users, docs/decisions.md).
    op.add_column("users", sa.Column("password_hash", sa.String(200), nullable=True))
    op.add_column(
        "users", sa.Column("is_active", sa.Boolean(), nullable=False, server_default=sa.true())
    )
    op.add_column(
        "users",
        sa.Column(
            "only_assigned_conversations", sa.Boolean(), nullable=False, server_default=sa.false()
        ),
    )
    # One sign-in per email across offices: among users holding a password the email is
    # unique (docs/decisions.md, "Accounts, sessions and roles").
    op.create_index(
        "ux_users_sign_in_email",
        "users",
        ["email_key"],
        unique=True,
        sqlite_where=sa.text("password_hash IS NOT NULL"),
        postgresql_where=sa.text("password_hash IS NOT NULL"),
    )
    op.create_table(
        "user_tokens",
        ident("office_id"),
        ident("user_id"),
        sa.Column("purpose", sa.String(length=16), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        ts("created_at"),
        ts("expires_at"),
        ts("used_at", nullable=True),
        ident("id"),
        *_owned("user_tokens"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_user_tokens")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_user_tokens_token_hash")),
    )
    op.create_index("ix_user_tokens_office_id_user_id", "user_tokens", ["office_id", "user_id"])
    op.create_table(
        "user_sessions",
        ident("office_id"),
        ident("user_id"),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("csrf_hash", sa.String(length=64), nullable=False),
        sa.Column("user_agent", sa.String(length=300), nullable=True),
        ts("created_at"),
        ts("last_seen_at"),
        ts("expires_at"),
        ident("id"),
        *_owned("user_sessions"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_user_sessions")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_user_sessions_token_hash")),
    )
    op.create_index("ix_user_sessions_office_id_user_id", "user_sessions", ["office_id", "user_id"])


def downgrade() -> None:
    op.drop_table("user_sessions")
    op.drop_table("user_tokens")
    op.drop_index("ux_users_sign_in_email", table_name="users")
    op.drop_column("users", "only_assigned_conversations")
    op.drop_column("users", "is_active")
    op.drop_column("users", "password_hash")
