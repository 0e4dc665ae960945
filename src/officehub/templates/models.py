from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from officehub.kit.db import Base, IdMixin, JSONType, TimestampMixin

TEMPLATE_STATUSES = ("APPROVED", "PENDING", "REJECTED", "PAUSED")


class WhatsAppTemplate(IdMixin, TimestampMixin, Base):
    """A message template of an official integration: one per name and language."""

    __tablename__ = "whatsapp_templates"
    __table_args__ = (
        Index(
            "ix_whatsapp_templates_office_id_integration_id_name_language",
            "office_id",
            "integration_id",
            "name",
            "language",
            unique=True,
        ),
    )

    office_id: Mapped[str] = mapped_column(ForeignKey("offices.id", ondelete="CASCADE"))
    integration_id: Mapped[str] = mapped_column(ForeignKey("integrations.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(512))
    language: Mapped[str] = mapped_column(String(16))
    status: Mapped[str] = mapped_column(String(16))
    category: Mapped[str] = mapped_column(String(64))
    components: Mapped[list[Any]] = mapped_column(JSONType)
    external_id: Mapped[str | None] = mapped_column(String(128))
    status_changed_at: Mapped[datetime | None]
    # What the platform's account notifications said beyond the four statuses: its own
    # status word (DISABLED, IN_APPEAL...), the rejection reason, the quality score.
    platform_status: Mapped[str | None] = mapped_column(String(32))
    rejected_reason: Mapped[str | None] = mapped_column(String(200))
    quality_score: Mapped[str | None] = mapped_column(String(16))
