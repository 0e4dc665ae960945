"""The CRM: funnels, their columns and the cards (leads) in them.

Revision ID: 0003_crm
Revises: 0002_directory
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from officehub.migrations.types import JSON

revision = "0003_crm"
down_revision = "0002_directory"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "crm_funnels",
        sa.Column("office_id", sa.String(length=32), nullable=False),
        sa.Column("inbox_id", sa.String(length=32), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("card_config", JSON, nullable=True),
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["inbox_id"],
            ["inboxes.id"],
            name=op.f("fk_crm_funnels_inbox_id_inboxes"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["office_id"],
            ["offices.id"],
            name=op.f("fk_crm_funnels_office_id_offices"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_crm_funnels")),
    )
    op.create_index(
        "ix_crm_funnels_office_id_inbox_id", "crm_funnels", ["office_id", "inbox_id"], unique=False
    )

    op.create_table(
        "crm_columns",
        sa.Column("office_id", sa.String(length=32), nullable=False),
        sa.Column("funnel_id", sa.String(length=32), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("color", sa.String(length=32), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=8), nullable=False),
        sa.Column("time_limit_days", sa.Integer(), nullable=True),
        sa.Column("show_badge_progress", sa.Boolean(), nullable=False),
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["funnel_id"],
            ["crm_funnels.id"],
            name=op.f("fk_crm_columns_funnel_id_crm_funnels"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["office_id"],
            ["offices.id"],
            name=op.f("fk_crm_columns_office_id_offices"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_crm_columns")),
    )
    op.create_index(
        "ix_crm_columns_office_id_funnel_id_position",
        "crm_columns",
        ["office_id", "funnel_id", "position"],
        unique=False,
    )

    op.create_table(
        "crm_cards",
        sa.Column("office_id", sa.String(length=32), nullable=False),
        sa.Column("funnel_id", sa.String(length=32), nullable=False),
        sa.Column("column_id", sa.String(length=32), nullable=False),
        sa.Column("person_id", sa.String(length=32), nullable=False),
        sa.Column("conversation_id", sa.String(length=32), nullable=True),
        sa.Column("integration_id", sa.String(length=32), nullable=True),
        sa.Column("user_id", sa.String(length=32), nullable=True),
        sa.Column("legal_area_id", sa.String(length=32), nullable=True),
        sa.Column("channel", sa.String(length=32), nullable=True),
        sa.Column("custom_fields", JSON, nullable=False),
        sa.Column("lead_origin", JSON, nullable=True),
        sa.Column("column_changed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("overdue_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("overdue_emitted_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["column_id"],
            ["crm_columns.id"],
            name=op.f("fk_crm_cards_column_id_crm_columns"),
            ondelete="RESTRICT",
        ),
        sa.ForeignKeyConstraint(
            ["conversation_id"],
            ["conversations.id"],
            name=op.f("fk_crm_cards_conversation_id_conversations"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["funnel_id"],
            ["crm_funnels.id"],
            name=op.f("fk_crm_cards_funnel_id_crm_funnels"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["legal_area_id"],
            ["legal_areas.id"],
            name=op.f("fk_crm_cards_legal_area_id_legal_areas"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["office_id"],
            ["offices.id"],
            name=op.f("fk_crm_cards_office_id_offices"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["person_id"],
            ["contacts.id"],
            name=op.f("fk_crm_cards_person_id_contacts"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_crm_cards_user_id_users"), ondelete="SET NULL"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_crm_cards")),
    )
    op.create_index(
        "ix_crm_cards_office_id_column_id_column_changed_at_id",
        "crm_cards",
        ["office_id", "column_id", "column_changed_at", "id"],
        unique=False,
    )
    op.create_index(
        "ix_crm_cards_office_id_column_id_user_id_column_changed_at",
        "crm_cards",
        ["office_id", "column_id", "user_id", "column_changed_at"],
        unique=False,
    )
    op.create_index(
        "ix_crm_cards_office_id_conversation_id",
        "crm_cards",
        ["office_id", "conversation_id"],
        unique=False,
    )
    op.create_index(
        "ix_crm_cards_office_id_person_id_conversation_id",
        "crm_cards",
        ["office_id", "person_id", "conversation_id"],
        unique=True,
    )
    op.create_index(
        "ix_crm_cards_overdue_due",
        "crm_cards",
        ["overdue_at"],
        unique=False,
        sqlite_where=sa.text("overdue_at IS NOT NULL"),
        postgresql_where=sa.text("overdue_at IS NOT NULL"),
    )

    op.create_table(
        "crm_column_counts",
        sa.Column("office_id", sa.String(length=32), nullable=False),
        sa.Column("column_id", sa.String(length=32), nullable=False),
        sa.Column("owner_key", sa.String(length=32), nullable=False),
        sa.Column("cards", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["column_id"],
            ["crm_columns.id"],
            name=op.f("fk_crm_column_counts_column_id_crm_columns"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["office_id"],
            ["offices.id"],
            name=op.f("fk_crm_column_counts_office_id_offices"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint(
            "office_id", "column_id", "owner_key", name=op.f("pk_crm_column_counts")
        ),
    )
    if op.get_bind().dialect.name == "postgresql":
        for statement in _PG_COUNT_TRIGGER:
            op.execute(statement)
    else:
        for statement in _SQLITE_COUNT_TRIGGERS:
            op.execute(statement)


# The board's totals: cards per (column, owner), kept by triggers so that every path
# (the API, bulk loads, cascades from deleted contacts or users) counts.
_ADD = """
    INSERT INTO crm_column_counts (office_id, column_id, owner_key, cards)
    VALUES (NEW.office_id, NEW.column_id, COALESCE(NEW.user_id, ''), 1)
    ON CONFLICT (office_id, column_id, owner_key)
    DO UPDATE SET cards = crm_column_counts.cards + 1;
"""
_SUBTRACT = """
    UPDATE crm_column_counts SET cards = cards - 1
    WHERE office_id = OLD.office_id AND column_id = OLD.column_id
      AND owner_key = COALESCE(OLD.user_id, '');
"""
_SQLITE_COUNT_TRIGGERS = (
    f"CREATE TRIGGER crm_cards_count_insert AFTER INSERT ON crm_cards BEGIN {_ADD} END",
    f"CREATE TRIGGER crm_cards_count_delete AFTER DELETE ON crm_cards BEGIN {_SUBTRACT} END",
    "CREATE TRIGGER crm_cards_count_update AFTER UPDATE OF column_id, user_id ON crm_cards"
    " WHEN OLD.column_id IS NOT NEW.column_id OR OLD.user_id IS NOT NEW.user_id"
    f" BEGIN {_SUBTRACT} {_ADD} END",
)
_PG_COUNT_TRIGGER = (
    f"""
    CREATE FUNCTION crm_cards_count() RETURNS trigger AS $$
    BEGIN
        -- Rows are locked in key order, so two opposite moves cannot deadlock.
        IF TG_OP = 'UPDATE' AND (OLD.column_id, COALESCE(OLD.user_id, ''))
                IS NOT DISTINCT FROM (NEW.column_id, COALESCE(NEW.user_id, '')) THEN
            RETURN NULL;
        END IF;
        IF TG_OP = 'UPDATE' AND (OLD.column_id, COALESCE(OLD.user_id, ''))
                > (NEW.column_id, COALESCE(NEW.user_id, '')) THEN
            {_ADD}
            {_SUBTRACT}
            RETURN NULL;
        END IF;
        IF TG_OP IN ('DELETE', 'UPDATE') THEN
            {_SUBTRACT}
        END IF;
        IF TG_OP IN ('INSERT', 'UPDATE') THEN
            {_ADD}
        END IF;
        RETURN NULL;
    END
    $$ LANGUAGE plpgsql
    """,
    "CREATE TRIGGER crm_cards_count AFTER INSERT OR DELETE OR UPDATE OF column_id, user_id"
    " ON crm_cards FOR EACH ROW EXECUTE FUNCTION crm_cards_count()",
)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TRIGGER IF EXISTS crm_cards_count ON crm_cards")
        op.execute("DROP FUNCTION IF EXISTS crm_cards_count()")
    op.drop_table("crm_column_counts")
    op.drop_index("ix_crm_cards_overdue_due", table_name="crm_cards")
    op.drop_index("ix_crm_cards_office_id_person_id_conversation_id", table_name="crm_cards")
    op.drop_index("ix_crm_cards_office_id_conversation_id", table_name="crm_cards")
    op.drop_index(
        "ix_crm_cards_office_id_column_id_user_id_column_changed_at", table_name="crm_cards"
    )
    op.drop_index("ix_crm_cards_office_id_column_id_column_changed_at_id", table_name="crm_cards")

    op.drop_table("crm_cards")
    op.drop_index("ix_crm_columns_office_id_funnel_id_position", table_name="crm_columns")

    op.drop_table("crm_columns")
    op.drop_index("ix_crm_funnels_office_id_inbox_id", table_name="crm_funnels")

    op.drop_table("crm_funnels")
