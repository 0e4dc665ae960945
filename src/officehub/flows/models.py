from __future__ import annotations

from typing import Any

from sqlalchemy import Boolean, ForeignKey, Index, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from officehub.db import Base, IdMixin, JSONType, TimestampMixin


class Flow(IdMixin, TimestampMixin, Base):
    """``content`` is stored as the API shows it: ``{steps, initialStepId}``."""

    __tablename__ = "flows"
    __table_args__ = (
        Index("ix_flows_office_id_inbox_id_created_at", "office_id", "inbox_id", "created_at"),
    )

    office_id: Mapped[str] = mapped_column(ForeignKey("offices.id", ondelete="CASCADE"))
    inbox_id: Mapped[str] = mapped_column(ForeignKey("inboxes.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(200))
    description: Mapped[str] = mapped_column(Text)
    color: Mapped[str | None] = mapped_column(String(32))
    is_social_flow: Mapped[bool] = mapped_column(Boolean)
    content: Mapped[dict[str, Any]] = mapped_column(JSONType)
