"""The messages domain's tables: the messages of conversations (``messages``) and what an
operator read (``read_receipts``: the channels' dispatcher tells the platform)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Index, String, Text, false, text
from sqlalchemy.orm import Mapped, mapped_column

from officehub.kit.db import Base, IdMixin, JSONType
from officehub.kit.timeutil import utcnow


class Message(IdMixin, Base):
    __tablename__ = "messages"
    __table_args__ = (
        Index(
            "ix_messages_office_id_conversation_id_created_at",
            "office_id",
            "conversation_id",
            "created_at",
        ),
        # A channel's message id is stored once: the platform retries its notifications.
        Index("ix_messages_office_id_external_id", "office_id", "external_id", unique=True),
        # The dispatcher's queue: outbound messages still to send, oldest first.
        Index(
            "ix_messages_send_due",
            "created_at",
            sqlite_where=text("status = 'QUEUED'"),
            postgresql_where=text("status = 'QUEUED'"),
        ),
        # Inbound media still to fetch from the platform.
        Index(
            "ix_messages_media_due",
            "created_at",
            sqlite_where=text("media_external_id IS NOT NULL AND media_url IS NULL"),
            postgresql_where=text("media_external_id IS NOT NULL AND media_url IS NULL"),
        ),
        # GET /conversation?q= (issue 42): a fragment of a message's text, any case, by its
        # trigrams (pg_trgm and btree_gin, 0007_trgm). SQLite has no such index.
        Index(
            "ix_messages_office_id_text_trgm",
            "office_id",
            "text",
            postgresql_using="gin",
            postgresql_ops={"text": "gin_trgm_ops"},
            info={"dialect": "postgresql"},
        ).ddl_if(dialect="postgresql"),
    )

    office_id: Mapped[str] = mapped_column(ForeignKey("offices.id", ondelete="CASCADE"))
    conversation_id: Mapped[str] = mapped_column(ForeignKey("conversations.id", ondelete="CASCADE"))
    direction: Mapped[str] = mapped_column(String(8))
    type: Mapped[str] = mapped_column(String(16))
    text: Mapped[str | None] = mapped_column(Text)
    template_name: Mapped[str | None] = mapped_column(String(512))
    media_url: Mapped[str | None] = mapped_column(String(2000))
    status: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[datetime]
    external_id: Mapped[str | None] = mapped_column(String(128))
    error: Mapped[str | None] = mapped_column(Text)
    # What a send needs beyond text: template language, variables, header media, options.
    payload: Mapped[dict[str, Any] | None] = mapped_column(JSONType)
    attempts: Mapped[int] = mapped_column(default=0, server_default="0")
    next_attempt_at: Mapped[datetime | None]
    lease_until: Mapped[datetime | None]
    claim_token: Mapped[str | None] = mapped_column(String(64))
    media_external_id: Mapped[str | None] = mapped_column(String(128))
    # What the channel sent beyond text, by kind (location, contacts, reply, order...).
    content: Mapped[dict[str, Any] | None] = mapped_column(JSONType)
    # The message of the same conversation this one replies to (no foreign key: a reply
    # outlives the message it quotes).
    reply_to_id: Mapped[str | None] = mapped_column(String(32))
    forwarded: Mapped[bool] = mapped_column(default=False, server_default=false())
    # [{emoji, from, at}]: at most one per sender ("CONTACT" or "OFFICE").
    reactions: Mapped[list[dict[str, Any]] | None] = mapped_column(JSONType)
    # The text before the sender edited or deleted the message, kept for the office.
    original_text: Mapped[str | None] = mapped_column(Text)
    edited_at: Mapped[datetime | None]
    deleted_at: Mapped[datetime | None]

    # A failure the platform reported: {code, title, details} (``error`` keeps the summary).
    error_detail: Mapped[dict[str, Any] | None] = mapped_column(JSONType)
    # What the platform said a send costs: {category, type, billable, pricingModel,
    # conversation}.
    pricing: Mapped[dict[str, Any] | None] = mapped_column(JSONType)
    # Who sent an outbound message (``apikey:<id>`` or ``user:<id>``, officehub.kit.actor);
    # None for inbound messages and for those the service sent on its own (flows, rules).
    sent_by: Mapped[str | None] = mapped_column(String(80))
    # [{status, at}]: every status the message had, oldest first (evidence transcripts).
    status_history: Mapped[list[dict[str, Any]] | None] = mapped_column(JSONType)

    @property
    def reply_to_external_id(self) -> str | None:
        """The channel's id of the message this one quotes (``payload.replyToExternalId``),
        kept even when that message is not stored here."""
        quoted = (self.payload or {}).get("replyToExternalId")
        return str(quoted) if quoted else None


class ReadReceipt(IdMixin, Base):
    """An operator read a conversation up to ``message_id`` (an inbound message): the
    platform is told so (``PENDING`` → ``SENT``/``FAILED``, sent by the dispatcher's
    ``send_read_receipts`` job), or, on channels without read receipts, it is only
    ``RECORDED``. One per message (the unique index makes a repeated read a no-op)."""

    __tablename__ = "read_receipts"
    __table_args__ = (
        Index("ux_read_receipts_office_id_message_id", "office_id", "message_id", unique=True),
        Index("ix_read_receipts_office_id_conversation_id", "office_id", "conversation_id"),
        Index("ix_read_receipts_due", "status", "next_attempt_at"),
    )

    office_id: Mapped[str] = mapped_column(ForeignKey("offices.id", ondelete="CASCADE"))
    conversation_id: Mapped[str] = mapped_column(ForeignKey("conversations.id", ondelete="CASCADE"))
    message_id: Mapped[str] = mapped_column(ForeignKey("messages.id", ondelete="CASCADE"))
    integration_id: Mapped[str] = mapped_column(ForeignKey("integrations.id", ondelete="CASCADE"))
    external_id: Mapped[str | None] = mapped_column(String(128))
    status: Mapped[str] = mapped_column(String(16))
    attempts: Mapped[int] = mapped_column(default=0, server_default="0")
    next_attempt_at: Mapped[datetime | None]
    lease_until: Mapped[datetime | None]
    claim_token: Mapped[str | None] = mapped_column(String(64))
    error: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    sent_at: Mapped[datetime | None]
