from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from officehub.kit.db import Base, IdMixin
from officehub.kit.timeutil import utcnow


class WebchatVisitor(IdMixin, Base):
    """A browser that started a web chat: its token (SHA-256 only), its contact and its
    current conversation. The token is the visitor's only credential."""

    __tablename__ = "webchat_visitors"
    __table_args__ = (
        Index("ux_webchat_visitors_office_id_token_hash", "office_id", "token_hash", unique=True),
        Index("ix_webchat_visitors_office_id_conversation_id", "office_id", "conversation_id"),
    )

    office_id: Mapped[str] = mapped_column(ForeignKey("offices.id", ondelete="CASCADE"))
    integration_id: Mapped[str] = mapped_column(ForeignKey("integrations.id", ondelete="CASCADE"))
    contact_id: Mapped[str] = mapped_column(ForeignKey("contacts.id", ondelete="CASCADE"))
    conversation_id: Mapped[str] = mapped_column(ForeignKey("conversations.id", ondelete="CASCADE"))
    token_hash: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    last_seen_at: Mapped[datetime] = mapped_column(default=utcnow)


class ClaimCode(IdMixin, Base):
    """A one-time code sent to the phone a web chat visitor claimed, through the WhatsApp
    channel that owns it (``officehub.webchat.verification``). Only its HMAC is kept; it is
    used once (``used_at``), expires (``expires_at``) and takes a few wrong tries
    (``attempts``). Kept after use or expiry: the rate limits count them."""

    __tablename__ = "claim_codes"
    __table_args__ = (
        Index(
            "ix_claim_codes_office_id_contact_id_created_at",
            "office_id",
            "contact_id",
            "created_at",
        ),
        Index("ix_claim_codes_office_id_phone_created_at", "office_id", "phone", "created_at"),
    )

    office_id: Mapped[str] = mapped_column(ForeignKey("offices.id", ondelete="CASCADE"))
    contact_id: Mapped[str] = mapped_column(ForeignKey("contacts.id", ondelete="CASCADE"))
    phone: Mapped[str] = mapped_column(String(20))
    code_hash: Mapped[str] = mapped_column(String(64))
    attempts: Mapped[int] = mapped_column(default=0)
    expires_at: Mapped[datetime]
    used_at: Mapped[datetime | None]
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
