"""The office's directory: inboxes, channels, users, departments, contacts, conversations,
messages, tags, legal areas (with the default ones), tickets and fast messages.

Revision ID: 0002_directory
Revises: 0001_foundation
"""

from __future__ import annotations

from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

from officehub.legal_areas.models import DEFAULT_LEGAL_AREAS
from officehub.migrations.types import JSON

revision = "0002_directory"
down_revision = "0001_foundation"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "departments",
        sa.Column("office_id", sa.String(length=32), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["office_id"],
            ["offices.id"],
            name=op.f("fk_departments_office_id_offices"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_departments")),
    )
    op.create_index(
        "ix_departments_office_id_name", "departments", ["office_id", "name"], unique=False
    )

    op.create_table(
        "inboxes",
        sa.Column("office_id", sa.String(length=32), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["office_id"],
            ["offices.id"],
            name=op.f("fk_inboxes_office_id_offices"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_inboxes")),
    )
    op.create_index("ix_inboxes_office_id_name", "inboxes", ["office_id", "name"], unique=False)

    op.create_table(
        "legal_areas",
        sa.Column("office_id", sa.String(length=32), nullable=True),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("color", sa.String(length=32), nullable=False),
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["office_id"],
            ["offices.id"],
            name=op.f("fk_legal_areas_office_id_offices"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_legal_areas")),
    )
    op.create_index(
        "ix_legal_areas_office_id_name", "legal_areas", ["office_id", "name"], unique=False
    )

    op.create_table(
        "ticket_statuses",
        sa.Column("office_id", sa.String(length=32), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("color", sa.String(length=32), nullable=True),
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["office_id"],
            ["offices.id"],
            name=op.f("fk_ticket_statuses_office_id_offices"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_ticket_statuses")),
    )
    op.create_index(
        "ix_ticket_statuses_office_id_name", "ticket_statuses", ["office_id", "name"], unique=False
    )

    op.create_table(
        "users",
        sa.Column("office_id", sa.String(length=32), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("email", sa.String(length=320), nullable=False),
        sa.Column("role", sa.String(length=32), nullable=False),
        sa.Column("document", sa.String(length=64), nullable=True),
        sa.Column("image_url", sa.String(length=1000), nullable=True),
        sa.Column("image_path", sa.String(length=500), nullable=True),
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["office_id"],
            ["offices.id"],
            name=op.f("fk_users_office_id_offices"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_users")),
    )
    op.create_index("ix_users_office_id_email", "users", ["office_id", "email"], unique=True)
    op.create_index("ix_users_office_id_name", "users", ["office_id", "name"], unique=False)

    op.create_table(
        "contacts",
        sa.Column("office_id", sa.String(length=32), nullable=False),
        sa.Column("inbox_id", sa.String(length=32), nullable=True),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("search_name", sa.String(length=200), nullable=False),
        sa.Column("phone", sa.String(length=20), nullable=True),
        sa.Column("email", sa.String(length=320), nullable=True),
        sa.Column("document", sa.String(length=64), nullable=True),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("image_url", sa.String(length=1000), nullable=True),
        sa.Column("is_blocked", sa.Boolean(), nullable=False),
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["inbox_id"],
            ["inboxes.id"],
            name=op.f("fk_contacts_inbox_id_inboxes"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["office_id"],
            ["offices.id"],
            name=op.f("fk_contacts_office_id_offices"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_contacts")),
    )
    op.create_index(
        "ix_contacts_office_id_created_at", "contacts", ["office_id", "created_at"], unique=False
    )
    op.create_index("ix_contacts_office_id_phone", "contacts", ["office_id", "phone"], unique=False)
    op.create_index(
        "ix_contacts_office_id_search_name", "contacts", ["office_id", "search_name"], unique=False
    )

    op.create_table(
        "fast_messages",
        sa.Column("office_id", sa.String(length=32), nullable=False),
        sa.Column("inbox_id", sa.String(length=32), nullable=False),
        sa.Column("title", sa.String(length=200), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("text", sa.Text(), nullable=True),
        sa.Column("audio_url", sa.String(length=1000), nullable=True),
        sa.Column("blocks", JSON, nullable=True),
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["inbox_id"],
            ["inboxes.id"],
            name=op.f("fk_fast_messages_inbox_id_inboxes"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["office_id"],
            ["offices.id"],
            name=op.f("fk_fast_messages_office_id_offices"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_fast_messages")),
    )
    op.create_index(
        "ix_fast_messages_office_id_inbox_id",
        "fast_messages",
        ["office_id", "inbox_id"],
        unique=False,
    )

    op.create_table(
        "integrations",
        sa.Column("office_id", sa.String(length=32), nullable=False),
        sa.Column("inbox_id", sa.String(length=32), nullable=False),
        sa.Column("type", sa.String(length=32), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("device_id", sa.String(length=200), nullable=True),
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["inbox_id"],
            ["inboxes.id"],
            name=op.f("fk_integrations_inbox_id_inboxes"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["office_id"],
            ["offices.id"],
            name=op.f("fk_integrations_office_id_offices"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_integrations")),
    )
    op.create_index(
        "ix_integrations_office_id_device_id",
        "integrations",
        ["office_id", "device_id"],
        unique=True,
    )
    op.create_index(
        "ix_integrations_office_id_inbox_id",
        "integrations",
        ["office_id", "inbox_id"],
        unique=False,
    )

    op.create_table(
        "tags",
        sa.Column("office_id", sa.String(length=32), nullable=False),
        sa.Column("inbox_id", sa.String(length=32), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("name_key", sa.String(length=100), nullable=False),
        sa.Column("color", sa.String(length=32), nullable=False),
        sa.Column("modules", JSON, nullable=False),
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["inbox_id"], ["inboxes.id"], name=op.f("fk_tags_inbox_id_inboxes"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["office_id"],
            ["offices.id"],
            name=op.f("fk_tags_office_id_offices"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_tags")),
    )
    op.create_index(
        "ix_tags_office_id_inbox_id_name_key",
        "tags",
        ["office_id", "inbox_id", "name_key"],
        unique=True,
    )

    op.create_table(
        "user_inboxes",
        sa.Column("office_id", sa.String(length=32), nullable=False),
        sa.Column("user_id", sa.String(length=32), nullable=False),
        sa.Column("inbox_id", sa.String(length=32), nullable=False),
        sa.ForeignKeyConstraint(
            ["inbox_id"],
            ["inboxes.id"],
            name=op.f("fk_user_inboxes_inbox_id_inboxes"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["office_id"],
            ["offices.id"],
            name=op.f("fk_user_inboxes_office_id_offices"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_user_inboxes_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("user_id", "inbox_id", name=op.f("pk_user_inboxes")),
    )
    op.create_index(
        "ix_user_inboxes_office_id_inbox_id",
        "user_inboxes",
        ["office_id", "inbox_id"],
        unique=False,
    )
    op.create_table(
        "contact_tags",
        sa.Column("office_id", sa.String(length=32), nullable=False),
        sa.Column("contact_id", sa.String(length=32), nullable=False),
        sa.Column("tag_id", sa.String(length=32), nullable=False),
        sa.ForeignKeyConstraint(
            ["contact_id"],
            ["contacts.id"],
            name=op.f("fk_contact_tags_contact_id_contacts"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["office_id"],
            ["offices.id"],
            name=op.f("fk_contact_tags_office_id_offices"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["tag_id"], ["tags.id"], name=op.f("fk_contact_tags_tag_id_tags"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("contact_id", "tag_id", name=op.f("pk_contact_tags")),
    )
    op.create_table(
        "conversations",
        sa.Column("office_id", sa.String(length=32), nullable=False),
        sa.Column("person_id", sa.String(length=32), nullable=False),
        sa.Column("inbox_id", sa.String(length=32), nullable=False),
        sa.Column("integration_id", sa.String(length=32), nullable=False),
        sa.Column("status", sa.String(length=8), nullable=False),
        sa.Column("priority", sa.String(length=8), nullable=False),
        sa.Column("assigned_user_id", sa.String(length=32), nullable=True),
        sa.Column("department_id", sa.String(length=32), nullable=True),
        sa.Column("last_message_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["assigned_user_id"],
            ["users.id"],
            name=op.f("fk_conversations_assigned_user_id_users"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["department_id"],
            ["departments.id"],
            name=op.f("fk_conversations_department_id_departments"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["inbox_id"],
            ["inboxes.id"],
            name=op.f("fk_conversations_inbox_id_inboxes"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["integration_id"],
            ["integrations.id"],
            name=op.f("fk_conversations_integration_id_integrations"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["office_id"],
            ["offices.id"],
            name=op.f("fk_conversations_office_id_offices"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["person_id"],
            ["contacts.id"],
            name=op.f("fk_conversations_person_id_contacts"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_conversations")),
    )
    op.create_index(
        "ix_conversations_office_id_created_at",
        "conversations",
        ["office_id", "created_at"],
        unique=False,
    )
    op.create_index(
        "ix_conversations_office_id_inbox_id_status",
        "conversations",
        ["office_id", "inbox_id", "status"],
        unique=False,
    )
    op.create_index(
        "ix_conversations_office_id_person_id_integration_id",
        "conversations",
        ["office_id", "person_id", "integration_id", "status"],
        unique=False,
    )

    op.create_table(
        "partner_links",
        sa.Column("office_id", sa.String(length=32), nullable=False),
        sa.Column("contact_id", sa.String(length=32), nullable=False),
        sa.Column("partner", JSON, nullable=False),
        sa.Column("source", sa.String(length=16), nullable=False),
        sa.Column("linked_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("unlinked_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.ForeignKeyConstraint(
            ["contact_id"],
            ["contacts.id"],
            name=op.f("fk_partner_links_contact_id_contacts"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["office_id"],
            ["offices.id"],
            name=op.f("fk_partner_links_office_id_offices"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_partner_links")),
    )
    op.create_index(
        "ix_partner_links_office_id_contact_id",
        "partner_links",
        ["office_id", "contact_id"],
        unique=False,
    )

    op.create_table(
        "conversation_notes",
        sa.Column("office_id", sa.String(length=32), nullable=False),
        sa.Column("conversation_id", sa.String(length=32), nullable=False),
        sa.Column("user_id", sa.String(length=32), nullable=True),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.ForeignKeyConstraint(
            ["conversation_id"],
            ["conversations.id"],
            name=op.f("fk_conversation_notes_conversation_id_conversations"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["office_id"],
            ["offices.id"],
            name=op.f("fk_conversation_notes_office_id_offices"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_conversation_notes_user_id_users"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_conversation_notes")),
    )
    op.create_index(
        "ix_conversation_notes_office_id_conversation_id",
        "conversation_notes",
        ["office_id", "conversation_id"],
        unique=False,
    )

    op.create_table(
        "conversation_tags",
        sa.Column("office_id", sa.String(length=32), nullable=False),
        sa.Column("conversation_id", sa.String(length=32), nullable=False),
        sa.Column("tag_id", sa.String(length=32), nullable=False),
        sa.ForeignKeyConstraint(
            ["conversation_id"],
            ["conversations.id"],
            name=op.f("fk_conversation_tags_conversation_id_conversations"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["office_id"],
            ["offices.id"],
            name=op.f("fk_conversation_tags_office_id_offices"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["tag_id"],
            ["tags.id"],
            name=op.f("fk_conversation_tags_tag_id_tags"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("conversation_id", "tag_id", name=op.f("pk_conversation_tags")),
    )
    op.create_table(
        "messages",
        sa.Column("office_id", sa.String(length=32), nullable=False),
        sa.Column("conversation_id", sa.String(length=32), nullable=False),
        sa.Column("direction", sa.String(length=8), nullable=False),
        sa.Column("type", sa.String(length=8), nullable=False),
        sa.Column("text", sa.Text(), nullable=True),
        sa.Column("template_name", sa.String(length=512), nullable=True),
        sa.Column("media_url", sa.String(length=2000), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.ForeignKeyConstraint(
            ["conversation_id"],
            ["conversations.id"],
            name=op.f("fk_messages_conversation_id_conversations"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["office_id"],
            ["offices.id"],
            name=op.f("fk_messages_office_id_offices"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_messages")),
    )
    op.create_index(
        "ix_messages_office_id_conversation_id_created_at",
        "messages",
        ["office_id", "conversation_id", "created_at"],
        unique=False,
    )

    op.create_table(
        "tickets",
        sa.Column("office_id", sa.String(length=32), nullable=False),
        sa.Column("title", sa.String(length=200), nullable=False),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("status_id", sa.String(length=32), nullable=False),
        sa.Column("priority", sa.String(length=8), nullable=False),
        sa.Column("conversation_id", sa.String(length=32), nullable=True),
        sa.Column("id", sa.String(length=32), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["conversation_id"],
            ["conversations.id"],
            name=op.f("fk_tickets_conversation_id_conversations"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["office_id"],
            ["offices.id"],
            name=op.f("fk_tickets_office_id_offices"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["status_id"],
            ["ticket_statuses.id"],
            name=op.f("fk_tickets_status_id_ticket_statuses"),
            ondelete="RESTRICT",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_tickets")),
    )
    op.create_index(
        "ix_tickets_office_id_created_at", "tickets", ["office_id", "created_at"], unique=False
    )

    op.create_table(
        "ticket_assignees",
        sa.Column("office_id", sa.String(length=32), nullable=False),
        sa.Column("ticket_id", sa.String(length=32), nullable=False),
        sa.Column("user_id", sa.String(length=32), nullable=False),
        sa.ForeignKeyConstraint(
            ["office_id"],
            ["offices.id"],
            name=op.f("fk_ticket_assignees_office_id_offices"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["ticket_id"],
            ["tickets.id"],
            name=op.f("fk_ticket_assignees_ticket_id_tickets"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_ticket_assignees_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("ticket_id", "user_id", name=op.f("pk_ticket_assignees")),
    )
    op.create_index(
        "ix_ticket_assignees_office_id_user_id",
        "ticket_assignees",
        ["office_id", "user_id"],
        unique=False,
    )
    op.create_table(
        "ticket_departments",
        sa.Column("office_id", sa.String(length=32), nullable=False),
        sa.Column("ticket_id", sa.String(length=32), nullable=False),
        sa.Column("department_id", sa.String(length=32), nullable=False),
        sa.ForeignKeyConstraint(
            ["department_id"],
            ["departments.id"],
            name=op.f("fk_ticket_departments_department_id_departments"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["office_id"],
            ["offices.id"],
            name=op.f("fk_ticket_departments_office_id_offices"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["ticket_id"],
            ["tickets.id"],
            name=op.f("fk_ticket_departments_ticket_id_tickets"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("ticket_id", "department_id", name=op.f("pk_ticket_departments")),
    )
    legal_areas = sa.table(
        "legal_areas",
        sa.column("id", sa.String),
        sa.column("office_id", sa.String),
        sa.column("name", sa.String),
        sa.column("color", sa.String),
        sa.column("created_at", sa.DateTime(timezone=True)),
        sa.column("updated_at", sa.DateTime(timezone=True)),
    )
    seeded_at = datetime(2026, 1, 1, tzinfo=UTC)
    op.bulk_insert(
        legal_areas,
        [
            {
                "id": ident,
                "office_id": None,
                "name": name,
                "color": color,
                "created_at": seeded_at,
                "updated_at": seeded_at,
            }
            for ident, name, color in DEFAULT_LEGAL_AREAS
        ],
    )


def downgrade() -> None:
    op.drop_table("ticket_departments")
    op.drop_index("ix_ticket_assignees_office_id_user_id", table_name="ticket_assignees")
    op.drop_table("ticket_assignees")
    op.drop_index("ix_tickets_office_id_created_at", table_name="tickets")

    op.drop_table("tickets")
    op.drop_index("ix_messages_office_id_conversation_id_created_at", table_name="messages")

    op.drop_table("messages")
    op.drop_table("conversation_tags")
    op.drop_index(
        "ix_conversation_notes_office_id_conversation_id", table_name="conversation_notes"
    )

    op.drop_table("conversation_notes")
    op.drop_index("ix_partner_links_office_id_contact_id", table_name="partner_links")

    op.drop_table("partner_links")
    op.drop_index("ix_conversations_office_id_person_id_integration_id", table_name="conversations")
    op.drop_index("ix_conversations_office_id_inbox_id_status", table_name="conversations")
    op.drop_index("ix_conversations_office_id_created_at", table_name="conversations")

    op.drop_table("conversations")
    op.drop_table("contact_tags")
    op.drop_index("ix_user_inboxes_office_id_inbox_id", table_name="user_inboxes")
    op.drop_table("user_inboxes")
    op.drop_index("ix_tags_office_id_inbox_id_name_key", table_name="tags")

    op.drop_table("tags")
    op.drop_index("ix_integrations_office_id_inbox_id", table_name="integrations")
    op.drop_index("ix_integrations_office_id_device_id", table_name="integrations")

    op.drop_table("integrations")
    op.drop_index("ix_fast_messages_office_id_inbox_id", table_name="fast_messages")

    op.drop_table("fast_messages")
    op.drop_index("ix_contacts_office_id_search_name", table_name="contacts")
    op.drop_index("ix_contacts_office_id_phone", table_name="contacts")
    op.drop_index("ix_contacts_office_id_created_at", table_name="contacts")

    op.drop_table("contacts")
    op.drop_index("ix_users_office_id_name", table_name="users")
    op.drop_index("ix_users_office_id_email", table_name="users")

    op.drop_table("users")
    op.drop_index("ix_ticket_statuses_office_id_name", table_name="ticket_statuses")

    op.drop_table("ticket_statuses")
    op.drop_index("ix_legal_areas_office_id_name", table_name="legal_areas")

    op.drop_table("legal_areas")
    op.drop_index("ix_inboxes_office_id_name", table_name="inboxes")

    op.drop_table("inboxes")
    op.drop_index("ix_departments_office_id_name", table_name="departments")

    op.drop_table("departments")
