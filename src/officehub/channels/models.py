from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Index, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from officehub.kit.db import Base, IdMixin, JSONType
from officehub.kit.timeutil import utcnow


class ChannelPeer(IdMixin, Base):
    """Who a contact is on a bridged channel (the gateway's sender id: a phone number on
    WhatsApp, a user id on Instagram): where its replies go."""

    __tablename__ = "channel_peers"
    __table_args__ = (
        Index(
            "ux_channel_peers_office_id_integration_id_peer_id",
            "office_id",
            "integration_id",
            "peer_id",
            unique=True,
        ),
        Index(
            "ix_channel_peers_office_id_integration_id_contact_id",
            "office_id",
            "integration_id",
            "contact_id",
        ),
    )

    office_id: Mapped[str] = mapped_column(ForeignKey("offices.id", ondelete="CASCADE"))
    integration_id: Mapped[str] = mapped_column(ForeignKey("integrations.id", ondelete="CASCADE"))
    contact_id: Mapped[str] = mapped_column(ForeignKey("contacts.id", ondelete="CASCADE"))
    peer_id: Mapped[str] = mapped_column(String(128))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class AccountNotice(IdMixin, Base):
    """A notification about the WhatsApp account rather than a message (phone number
    quality, account update or alert, capability change, an unknown field): kept as the
    platform sent it, for the office's records. Never holds a client's personal data: a
    client's marketing preference goes to the contact, not here."""

    __tablename__ = "whatsapp_account_notices"
    __table_args__ = (
        Index(
            "ix_whatsapp_account_notices_office_integration_received",
            "office_id",
            "integration_id",
            "received_at",
        ),
    )

    office_id: Mapped[str] = mapped_column(ForeignKey("offices.id", ondelete="CASCADE"))
    integration_id: Mapped[str] = mapped_column(ForeignKey("integrations.id", ondelete="CASCADE"))
    field: Mapped[str] = mapped_column(String(64))
    event: Mapped[str | None] = mapped_column(String(64))
    value: Mapped[dict[str, Any]] = mapped_column(JSONType)
    received_at: Mapped[datetime] = mapped_column(default=utcnow)


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
