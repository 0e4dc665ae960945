from __future__ import annotations

from datetime import date, datetime

from sqlalchemy import BigInteger, Date, ForeignKey, Index, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from officehub.kit.db import Base, IdMixin, TimestampMixin


class Lawyer(IdMixin, TimestampMixin, Base):
    """A lawyer of the office, by OAB registration (number and state): whose court
    publications the office follows. One per registration and office."""

    __tablename__ = "lawyers"
    __table_args__ = (
        Index(
            "ix_lawyers_office_id_oab_number_oab_uf",
            "office_id",
            "oab_number",
            "oab_uf",
            unique=True,
        ),
    )

    office_id: Mapped[str] = mapped_column(ForeignKey("offices.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(200))
    oab_number: Mapped[str] = mapped_column(String(7))
    oab_uf: Mapped[str] = mapped_column(String(2))
    user_id: Mapped[str | None] = mapped_column(String(32))
    """The office's user who is this lawyer: their publications' tickets are assigned to
    them. No foreign key (SQLite cannot add one to a table others refer to without a batch
    copy); users are never deleted, and one not of the office or inactive is not assigned."""
    next_sync_at: Mapped[datetime | None]
    """When the daily sync next asks DJEN for the lawyer (null: at its next run)."""
    synced_through: Mapped[date | None] = mapped_column(Date)
    """The last day of the latest successful sync's range."""


class CourtHoliday(IdMixin, TimestampMixin, Base):
    """A local holiday of the office's courts (a day without court business that is not a
    national holiday): deadlines skip it. One per day and office."""

    __tablename__ = "court_holidays"
    __table_args__ = (Index("ix_court_holidays_office_id_day", "office_id", "day", unique=True),)

    office_id: Mapped[str] = mapped_column(ForeignKey("offices.id", ondelete="CASCADE"))
    day: Mapped[date] = mapped_column(Date)
    name: Mapped[str] = mapped_column(String(200))


class Publication(IdMixin, TimestampMixin, Base):
    """A communication of a court journal (DJEN) naming a lawyer of the office: stored once
    per office (by DJEN's id, and by its hash), linked to the office's case of that number
    when there is one. ``deadline_at`` is the last day of its period (business days,
    ``publications.deadlines``) when it has one; ``deadline_days_source`` says whether the
    length is the default of its kind or the lawyer's."""

    __tablename__ = "publications"
    __table_args__ = (
        Index("ix_publications_office_id_djen_id", "office_id", "djen_id", unique=True),
        Index("ix_publications_office_id_hash", "office_id", "hash", unique=True),
        Index("ix_publications_office_id_made_available", "office_id", "made_available"),
        Index("ix_publications_office_id_case_id", "office_id", "case_id"),
        Index("ix_publications_office_id_lawyer_id", "office_id", "lawyer_id"),
    )

    office_id: Mapped[str] = mapped_column(ForeignKey("offices.id", ondelete="CASCADE"))
    lawyer_id: Mapped[str | None] = mapped_column(ForeignKey("lawyers.id", ondelete="SET NULL"))
    case_id: Mapped[str | None] = mapped_column(ForeignKey("cases.id", ondelete="SET NULL"))
    ticket_id: Mapped[str | None] = mapped_column(ForeignKey("tickets.id", ondelete="SET NULL"))
    djen_id: Mapped[int] = mapped_column(BigInteger)
    hash: Mapped[str | None] = mapped_column(String(100))
    made_available: Mapped[date] = mapped_column(Date)
    published_on: Mapped[date] = mapped_column(Date)
    court: Mapped[str] = mapped_column(String(30))
    kind: Mapped[str] = mapped_column(String(100))
    category: Mapped[str] = mapped_column(String(16))
    organ: Mapped[str] = mapped_column(String(300))
    text: Mapped[str] = mapped_column(Text)
    case_number: Mapped[str | None] = mapped_column(String(20))
    link: Mapped[str | None] = mapped_column(String(2000))
    read_at: Mapped[datetime | None]
    deadline_days: Mapped[int | None] = mapped_column(Integer)
    deadline_days_source: Mapped[str | None] = mapped_column(String(8))
    deadline_at: Mapped[date | None] = mapped_column(Date)
    deadline_calendar: Mapped[str | None] = mapped_column(String(40))
