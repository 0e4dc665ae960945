from __future__ import annotations

from sqlalchemy import ForeignKey, Index, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from officehub.kit.db import Base, IdMixin, TimestampMixin

PRIORITIES = ("LOW", "MEDIUM", "HIGH")


class TicketStatus(IdMixin, TimestampMixin, Base):
    __tablename__ = "ticket_statuses"
    __table_args__ = (Index("ix_ticket_statuses_office_id_name", "office_id", "name"),)

    office_id: Mapped[str] = mapped_column(ForeignKey("offices.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(100))
    color: Mapped[str | None] = mapped_column(String(32))


class Ticket(IdMixin, TimestampMixin, Base):
    __tablename__ = "tickets"
    __table_args__ = (Index("ix_tickets_office_id_created_at", "office_id", "created_at"),)

    office_id: Mapped[str] = mapped_column(ForeignKey("offices.id", ondelete="CASCADE"))
    title: Mapped[str] = mapped_column(String(200))
    description: Mapped[str | None] = mapped_column(Text)
    status_id: Mapped[str] = mapped_column(ForeignKey("ticket_statuses.id", ondelete="RESTRICT"))
    priority: Mapped[str] = mapped_column(String(8))
    conversation_id: Mapped[str | None] = mapped_column(
        ForeignKey("conversations.id", ondelete="SET NULL")
    )


class TicketAssignee(Base):
    __tablename__ = "ticket_assignees"
    __table_args__ = (Index("ix_ticket_assignees_office_id_user_id", "office_id", "user_id"),)

    office_id: Mapped[str] = mapped_column(ForeignKey("offices.id", ondelete="CASCADE"))
    ticket_id: Mapped[str] = mapped_column(
        ForeignKey("tickets.id", ondelete="CASCADE"), primary_key=True
    )
    user_id: Mapped[str] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )


class TicketDepartment(Base):
    __tablename__ = "ticket_departments"

    office_id: Mapped[str] = mapped_column(ForeignKey("offices.id", ondelete="CASCADE"))
    ticket_id: Mapped[str] = mapped_column(
        ForeignKey("tickets.id", ondelete="CASCADE"), primary_key=True
    )
    department_id: Mapped[str] = mapped_column(
        ForeignKey("departments.id", ondelete="CASCADE"), primary_key=True
    )
