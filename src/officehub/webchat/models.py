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
