from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Boolean, ForeignKey, Index, String, Text, text
from sqlalchemy.orm import Mapped, mapped_column

from officehub.kit.db import Base, IdMixin, JSONType, TimestampMixin


class CaseNotice(IdMixin, TimestampMixin, Base):
    """What the client is told of a new movement of their case: written from the
    movement's explanation, approved (or edited, or discarded) by the lawyer, then sent.

    ``status``: PENDING (waits for the lawyer), APPROVED (due at ``send_after``: quiet
    hours put it off), SENT, DISCARDED or FAILED (the send could not be made: ``error``).
    One notice per movement (unique). ``sent_as``: TEXT (inside the client's 24-hour
    window) or TEMPLATE (the office's utility template, outside it); ``message_id`` the
    message sent, whose delivery status the notice shows.
    """

    __tablename__ = "case_notices"
    __table_args__ = (
        Index("ix_case_notices_office_id_movement_id", "office_id", "movement_id", unique=True),
        Index("ix_case_notices_office_id_status_created_at", "office_id", "status", "created_at"),
        Index("ix_case_notices_office_id_case_id", "office_id", "case_id"),
        Index("ix_case_notices_office_id_person_id", "office_id", "person_id"),
        Index(
            "ix_case_notices_due",
            "send_after",
            sqlite_where=text("status = 'APPROVED'"),
            postgresql_where=text("status = 'APPROVED'"),
        ),
    )

    office_id: Mapped[str] = mapped_column(ForeignKey("offices.id", ondelete="CASCADE"))
    case_id: Mapped[str] = mapped_column(ForeignKey("cases.id", ondelete="CASCADE"))
    movement_id: Mapped[str] = mapped_column(ForeignKey("case_movements.id", ondelete="CASCADE"))
    person_id: Mapped[str] = mapped_column(ForeignKey("contacts.id", ondelete="CASCADE"))
    conversation_id: Mapped[str | None] = mapped_column(
        ForeignKey("conversations.id", ondelete="SET NULL")
    )
    case_number: Mapped[str] = mapped_column(String(32))
    occurred_at: Mapped[datetime]
    category: Mapped[str] = mapped_column(String(16))
    explanation: Mapped[str] = mapped_column(Text)
    text: Mapped[str] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(16))
    send_after: Mapped[datetime | None]
    sent_as: Mapped[str | None] = mapped_column(String(16))
    message_id: Mapped[str | None] = mapped_column(ForeignKey("messages.id", ondelete="SET NULL"))
    error: Mapped[str | None] = mapped_column(String(300))
    approved_at: Mapped[datetime | None]
    sent_at: Mapped[datetime | None]


class CaseNoticeSettings(IdMixin, TimestampMixin, Base):
    """The office's rules for case notices (one row per office; absent means the
    defaults): per movement category ASK (the lawyer approves first), SEND (at once) or
    NEVER; the approved utility template sent outside the client's window; quiet hours
    in the office's time zone."""

    __tablename__ = "case_notice_settings"
    __table_args__ = (Index("ix_case_notice_settings_office_id", "office_id", unique=True),)

    office_id: Mapped[str] = mapped_column(ForeignKey("offices.id", ondelete="CASCADE"))
    categories: Mapped[dict[str, Any]] = mapped_column(JSONType)
    template_name: Mapped[str | None] = mapped_column(String(512))
    template_language: Mapped[str | None] = mapped_column(String(16))
    quiet_hours: Mapped[bool] = mapped_column(Boolean)
    quiet_from: Mapped[str] = mapped_column(String(5))
    quiet_until: Mapped[str] = mapped_column(String(5))
    quiet_sundays: Mapped[bool] = mapped_column(Boolean)
    time_zone: Mapped[str] = mapped_column(String(64))
