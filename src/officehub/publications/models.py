from __future__ import annotations

from datetime import date

from sqlalchemy import Date, ForeignKey, Index, String
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


class CourtHoliday(IdMixin, TimestampMixin, Base):
    """A local holiday of the office's courts (a day without court business that is not a
    national holiday): deadlines skip it. One per day and office."""

    __tablename__ = "court_holidays"
    __table_args__ = (Index("ix_court_holidays_office_id_day", "office_id", "day", unique=True),)

    office_id: Mapped[str] = mapped_column(ForeignKey("offices.id", ondelete="CASCADE"))
    day: Mapped[date] = mapped_column(Date)
    name: Mapped[str] = mapped_column(String(200))
