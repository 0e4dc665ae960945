from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Index, SmallInteger, String, Text, false, text
from sqlalchemy.orm import Mapped, mapped_column

from officehub.kit.db import Base, IdMixin, JSONType, TimestampMixin
from officehub.kit.timeutil import utcnow

CONVERSATION_STATUSES = ("OPEN", "CLOSED")
MESSAGE_DIRECTIONS = ("INBOUND", "OUTBOUND")
MESSAGE_TYPES = (
    "TEXT",
    "TEMPLATE",
    "MEDIA",
    "NOTE",
    "LOCATION",
    "CONTACTS",
    "INTERACTIVE",
    "ORDER",
    "SYSTEM",
    "UNSUPPORTED",
    "REACTION",
)


LISTED_INCLUDE = ["inbox_id", "status", "assigned_user_id", "is_archived"]
"""The list's filters kept in ``ix_conversations_office_id_listed``'s entries (PostgreSQL,
0039): an inbox (a supervisor's visible inboxes), a status, an assignee or none, archived."""
INBOX_LISTED_INCLUDE = ["status", "assigned_user_id", "is_archived"]


class Conversation(IdMixin, TimestampMixin, Base):
    __tablename__ = "conversations"
    __table_args__ = (
        Index(
            "ix_conversations_office_id_person_id_integration_id",
            "office_id",
            "person_id",
            "integration_id",
            "status",
        ),
        Index(
            "ux_conversations_office_id_person_id_integration_id_open",
            "office_id",
            "person_id",
            "integration_id",
            unique=True,
            sqlite_where=text("status = 'OPEN'"),
            postgresql_where=text("status = 'OPEN'"),
        ),
        Index("ix_conversations_office_id_inbox_id_status", "office_id", "inbox_id", "status"),
        # GET /conversation?inboxId= (newest first): the page straight from the index
        Index(
            "ix_conversations_office_id_inbox_id_created_at",
            "office_id",
            "inbox_id",
            "created_at",
            "id",
        ),
        Index("ix_conversations_office_id_created_at", "office_id", "created_at"),
        # GET /conversation: pinned first, then by last message; the page from the index.
        # On PostgreSQL each entry includes the kept filters' columns (0039): a page's ids
        # skip their offset in an index-only scan, the filters checked in the index.
        Index(
            "ix_conversations_office_id_listed",
            "office_id",
            "is_fixed",
            "sorted_at",
            "id",
            postgresql_include=LISTED_INCLUDE,
        ),
        Index(
            "ix_conversations_office_id_inbox_id_listed",
            "office_id",
            "inbox_id",
            "is_fixed",
            "sorted_at",
            "id",
            postgresql_include=INBOX_LISTED_INCLUDE,
        ),
        # Routing: an inbox's queue in arrival order (only queued rows: small, and never the
        # narrowest index a count of an inbox's conversations could read instead).
        Index(
            "ix_conversations_office_id_inbox_id_queued_at",
            "office_id",
            "inbox_id",
            "queued_at",
            sqlite_where=text("queued_at IS NOT NULL"),
            postgresql_where=text("queued_at IS NOT NULL"),
        ),
        # Retention: an office's closed conversations by when they were closed.
        Index(
            "ix_conversations_office_id_closed_at",
            "office_id",
            "closed_at",
            sqlite_where=text("status = 'CLOSED'"),
            postgresql_where=text("status = 'CLOSED'"),
        ),
        # Reports (issue 32): first responses made in a range of days.
        Index("ix_conversations_office_id_first_response_at", "office_id", "first_response_at"),
        # Routing: each user's open conversations (capacity, least busy).
        Index(
            "ix_conversations_office_id_assigned_user_id_status",
            "office_id",
            "assigned_user_id",
            "status",
        ),
        # GET /conversation?isArchived= (the console's every list), alone or beside an
        # inbox, a status or an assignee: the total counted from the index alone, not the
        # table (issue 45: 37 ms to 11 ms at 100,000 conversations alone, 47-70 ms to 1-5
        # beside another filter; 0037 replaced 0035's (office_id, is_archived))
        Index(
            "ix_conversations_office_id_is_archived_filters",
            "office_id",
            "is_archived",
            "inbox_id",
            "status",
            "assigned_user_id",
        ),
        # GET /conversation?legalAreaId= (issue 42)
        Index("ix_conversations_office_id_legal_area_id", "office_id", "legal_area_id"),
        # SLA (issue 32): the breach job's queue, across offices (only rows with a due
        # time still to watch).
        Index(
            "ix_conversations_sla_check_due",
            "sla_check_at",
            sqlite_where=text("sla_check_at IS NOT NULL"),
            postgresql_where=text("sla_check_at IS NOT NULL"),
        ),
    )

    office_id: Mapped[str] = mapped_column(ForeignKey("offices.id", ondelete="CASCADE"))
    person_id: Mapped[str] = mapped_column(ForeignKey("contacts.id", ondelete="CASCADE"))
    inbox_id: Mapped[str] = mapped_column(ForeignKey("inboxes.id", ondelete="CASCADE"))
    integration_id: Mapped[str] = mapped_column(ForeignKey("integrations.id", ondelete="CASCADE"))
    status: Mapped[str] = mapped_column(String(8), default="OPEN")
    priority: Mapped[str] = mapped_column(String(8), default="MEDIUM")
    assigned_user_id: Mapped[str | None] = mapped_column(
        ForeignKey("users.id", ondelete="SET NULL")
    )
    department_id: Mapped[str | None] = mapped_column(
        ForeignKey("departments.id", ondelete="SET NULL")
    )
    # The legal area the conversation is about (routing ``byLegalArea`` reads it). No
    # foreign key (migration 0017): deleting the area clears it (``legal_area_deleting``).
    legal_area_id: Mapped[str | None] = mapped_column(String(32))
    # Routing: when it joined its inbox's queue (it waits for a person); null once assigned.
    queued_at: Mapped[datetime | None]
    # When the inbox's away message was last sent here (issue 32): once per closed period.
    away_sent_at: Mapped[datetime | None]
    last_message_at: Mapped[datetime | None]
    # When it was last closed (null while open, set by ``sla.on_status``): retention counts
    # from it, and it is the resolution time reports read (``resolvedAt`` in the API).
    closed_at: Mapped[datetime | None]
    # Service levels (issue 32): the times reports count from, kept whatever the policy.
    # The client's first inbound message; the first response to it (an outbound message a
    # person or an API key sent); the client's oldest unanswered message after that (the
    # next response's anchor) and the last response; when the resolution clock started
    # (the first inbound message, or the reopen); when it was closed is ``closed_at``.
    first_inbound_at: Mapped[datetime | None]
    first_response_at: Mapped[datetime | None]
    awaiting_since: Mapped[datetime | None]
    last_response_at: Mapped[datetime | None]
    resolution_started_at: Mapped[datetime | None]
    # The policy that applies (no foreign key: its deletion recomputes) and its due times;
    # each breach is stamped once (a new next-response due clears its stamp).
    sla_policy_id: Mapped[str | None] = mapped_column(String(32))
    first_response_due_at: Mapped[datetime | None]
    next_response_due_at: Mapped[datetime | None]
    resolution_due_at: Mapped[datetime | None]
    first_response_breached_at: Mapped[datetime | None]
    next_response_breached_at: Mapped[datetime | None]
    resolution_breached_at: Mapped[datetime | None]
    # The earliest due time not yet met nor reported (the breach job's queue), else null.
    sla_check_at: Mapped[datetime | None]
    # The ad (Click-to-WhatsApp referral) the conversation came from, in the CRM card's
    # ``leadOrigin`` shape: kept here until a card of the conversation takes it.
    lead_origin: Mapped[dict[str, Any] | None] = mapped_column(JSONType)
    is_fixed: Mapped[bool] = mapped_column(default=False, server_default=false())
    is_archived: Mapped[bool] = mapped_column(default=False, server_default=false())
    # The list's order after pinned: the last message's time, else the creation's (kept,
    # so the list never reads messages).
    sorted_at: Mapped[datetime | None] = mapped_column(default=utcnow)
    # The last message, kept in the transaction that stores each message (``lastMessage``).
    last_message_id: Mapped[str | None] = mapped_column(String(32))
    last_message_text: Mapped[str | None] = mapped_column(Text)
    last_message_type: Mapped[str | None] = mapped_column(String(16))
    last_message_user_id: Mapped[str | None] = mapped_column(String(32))
    # Inbound messages so far, and how many of them the office has read (its last read
    # mark): ``unreadCount`` for an API key is the difference.
    inbound_count: Mapped[int] = mapped_column(default=0, server_default="0")
    inbound_read: Mapped[int] = mapped_column(default=0, server_default="0")


class ConversationCount(Base):
    """How many of an office's conversations have one inbox, status, assignee ('' for
    nobody) and archived flag: the list's exact total is the sum of the matching rows
    (issue 45). Kept by database triggers on ``conversations`` (migration
    ``0038_conversation_counts``), so every insert, change and delete counts, the
    database's cascades included. On PostgreSQL a key's count is split over ``shard``
    (from the conversation id's last character, 0 to 7), so concurrent writes of one
    inbox rarely wait on one row; SQLite (one writer) keeps shard 0."""

    __tablename__ = "conversation_counts"
    # SQLite: the rows stored in their key's order (a list's rows are one range of it).
    __table_args__ = ({"sqlite_with_rowid": False},)

    office_id: Mapped[str] = mapped_column(
        ForeignKey("offices.id", ondelete="CASCADE"), primary_key=True
    )
    inbox_id: Mapped[str] = mapped_column(String(32), primary_key=True)
    status: Mapped[str] = mapped_column(String(8), primary_key=True)
    assignee_key: Mapped[str] = mapped_column(String(32), primary_key=True)
    is_archived: Mapped[bool] = mapped_column(primary_key=True)
    shard: Mapped[int] = mapped_column(SmallInteger, primary_key=True)
    conversations: Mapped[int] = mapped_column(default=0)


class ConversationRead(Base):
    """A user's read mark on a conversation: how many of its inbound messages they had
    read (``unreadCount`` of a signed-in user is ``inbound_count`` minus it)."""

    __tablename__ = "conversation_reads"
    __table_args__ = (Index("ix_conversation_reads_office_id_user_id", "office_id", "user_id"),)

    office_id: Mapped[str] = mapped_column(ForeignKey("offices.id", ondelete="CASCADE"))
    conversation_id: Mapped[str] = mapped_column(
        ForeignKey("conversations.id", ondelete="CASCADE"), primary_key=True
    )
    user_id: Mapped[str] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    inbound_read: Mapped[int] = mapped_column(default=0)
    read_at: Mapped[datetime]


class ConversationTag(Base):
    __tablename__ = "conversation_tags"
    # GET /conversation?tagId= (issue 42): the tag's conversations
    __table_args__ = (
        Index("ix_conversation_tags_office_id_tag_id", "office_id", "tag_id", "conversation_id"),
    )

    office_id: Mapped[str] = mapped_column(ForeignKey("offices.id", ondelete="CASCADE"))
    conversation_id: Mapped[str] = mapped_column(
        ForeignKey("conversations.id", ondelete="CASCADE"), primary_key=True
    )
    tag_id: Mapped[str] = mapped_column(ForeignKey("tags.id", ondelete="CASCADE"), primary_key=True)


class ConversationNote(IdMixin, Base):
    __tablename__ = "conversation_notes"
    __table_args__ = (
        Index("ix_conversation_notes_office_id_conversation_id", "office_id", "conversation_id"),
    )

    office_id: Mapped[str] = mapped_column(ForeignKey("offices.id", ondelete="CASCADE"))
    conversation_id: Mapped[str] = mapped_column(ForeignKey("conversations.id", ondelete="CASCADE"))
    user_id: Mapped[str | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    text: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime]
