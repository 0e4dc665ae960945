from __future__ import annotations

from typing import Any

from sqlalchemy import ForeignKey, Index, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from officehub.kit.db import Base, IdMixin, JSONType, TimestampMixin

FAST_MESSAGE_KINDS = ("TEXT", "AUDIO", "SEQUENCE")


class FastMessage(IdMixin, TimestampMixin, Base):
    """``blocks`` (SEQUENCE only): ``[{kind, text|mediaUrl, typingSeconds, waitSeconds}]``."""

    __tablename__ = "fast_messages"
    __table_args__ = (Index("ix_fast_messages_office_id_inbox_id", "office_id", "inbox_id"),)

    office_id: Mapped[str] = mapped_column(ForeignKey("offices.id", ondelete="CASCADE"))
    inbox_id: Mapped[str] = mapped_column(ForeignKey("inboxes.id", ondelete="CASCADE"))
    title: Mapped[str] = mapped_column(String(200))
    kind: Mapped[str] = mapped_column(String(16))
    text: Mapped[str | None] = mapped_column(Text)
    audio_url: Mapped[str | None] = mapped_column(String(1000))
    blocks: Mapped[list[dict[str, Any]] | None] = mapped_column(JSONType)
