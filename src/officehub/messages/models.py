"""The messages domain's own table: what an operator read (the channels' dispatcher tells
the platform)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, Index, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from officehub.kit.db import Base, IdMixin
from officehub.kit.timeutil import utcnow


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
