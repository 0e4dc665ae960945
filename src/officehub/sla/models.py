from __future__ import annotations

from sqlalchemy import ForeignKey, Index, String
from sqlalchemy.orm import Mapped, mapped_column

from officehub.kit.db import Base, IdMixin, TimestampMixin


class SlaPolicy(IdMixin, TimestampMixin, Base):
    """A service level of an inbox (issue 32), optionally narrowed to a conversation
    priority and/or a legal area. Times count only within the inbox's business hours."""

    __tablename__ = "sla_policies"
    __table_args__ = (
        Index("ix_sla_policies_office_id_inbox_id", "office_id", "inbox_id", "created_at"),
    )

    office_id: Mapped[str] = mapped_column(ForeignKey("offices.id", ondelete="CASCADE"))
    inbox_id: Mapped[str] = mapped_column(ForeignKey("inboxes.id", ondelete="CASCADE"))
    priority: Mapped[str | None] = mapped_column(String(8))
    # A default area (office null) or the office's own; deleting it deletes the policy.
    legal_area_id: Mapped[str | None] = mapped_column(
        ForeignKey("legal_areas.id", ondelete="CASCADE")
    )
    first_response_minutes: Mapped[int]
    next_response_minutes: Mapped[int]
    resolution_business_days: Mapped[int]
