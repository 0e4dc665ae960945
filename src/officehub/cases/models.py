from __future__ import annotations

from datetime import datetime

from sqlalchemy import Boolean, ForeignKey, Index, Integer, String, Text, text
from sqlalchemy.orm import Mapped, mapped_column

from officehub.kit.db import Base, IdMixin, JSONType, TimestampMixin


class Case(IdMixin, TimestampMixin, Base):
    """A court case the office follows on DataJud.

    ``number`` is the 20 digits; ``court`` the DataJud alias it routes to. A watched case
    is due for a check at ``next_check_at`` (null when not watched); the watcher claims due
    cases across offices through the partial index (hence ``_due``) and moves
    ``next_check_at`` past its lease (renewed while it checks) under ``claim_token``.
    ``history_at``: when the case's past movements were first stored (those are not
    announced; later ones are). ``source_failing_since``: the first failed check since
    DataJud last gave a usable answer; ``source_stale_since``: when that silence lasted
    ``datajud_stale_after_seconds`` and ``case.source.stale`` was emitted (both null once it
    answers again).
    """

    __tablename__ = "cases"
    __table_args__ = (
        Index("ix_cases_office_id_number", "office_id", "number", unique=True),
        Index("ix_cases_office_id_person_id", "office_id", "person_id"),
        Index(
            "ix_cases_due",
            "next_check_at",
            sqlite_where=text("next_check_at IS NOT NULL"),
            postgresql_where=text("next_check_at IS NOT NULL"),
        ),
    )

    office_id: Mapped[str] = mapped_column(ForeignKey("offices.id", ondelete="CASCADE"))
    person_id: Mapped[str] = mapped_column(ForeignKey("contacts.id", ondelete="CASCADE"))
    conversation_id: Mapped[str | None] = mapped_column(
        ForeignKey("conversations.id", ondelete="SET NULL")
    )
    legal_area_id: Mapped[str | None] = mapped_column(
        ForeignKey("legal_areas.id", ondelete="SET NULL")
    )
    number: Mapped[str] = mapped_column(String(20))
    court: Mapped[str] = mapped_column(String(16))
    watch: Mapped[bool] = mapped_column(Boolean)
    next_check_at: Mapped[datetime | None]
    last_checked_at: Mapped[datetime | None]
    last_movement_at: Mapped[datetime | None]
    history_at: Mapped[datetime | None]
    check_status: Mapped[str | None] = mapped_column(String(16))
    check_error: Mapped[str | None] = mapped_column(String(300))
    source_failing_since: Mapped[datetime | None]
    source_stale_since: Mapped[datetime | None]
    claim_token: Mapped[str | None] = mapped_column(String(64))
    """The watcher's claim while it checks the case (``kit.queue``)."""


class CaseMovement(IdMixin, TimestampMixin, Base):
    """A movement of a contact's legal case: recorded by the office through the API
        (``case_id`` null), or found on DataJud for a watched case (``case_id`` and ``code``,
        DataJud's movement code; unique with the date, so a movement is stored once; and
    ``complements``, the names of its tabled complements, which fill its explanation). What the
        default ``SEARCH_MOVEMENTS`` adapter reads."""

    __tablename__ = "case_movements"
    __table_args__ = (
        Index(
            "ix_case_movements_office_id_person_id_occurred_at",
            "office_id",
            "person_id",
            "occurred_at",
        ),
        Index(
            "ix_case_movements_office_id_case_id_code_occurred_at",
            "office_id",
            "case_id",
            "code",
            "occurred_at",
            unique=True,
        ),
    )

    office_id: Mapped[str] = mapped_column(ForeignKey("offices.id", ondelete="CASCADE"))
    person_id: Mapped[str] = mapped_column(ForeignKey("contacts.id", ondelete="CASCADE"))
    case_number: Mapped[str] = mapped_column(String(64))
    description: Mapped[str] = mapped_column(Text)
    occurred_at: Mapped[datetime] = mapped_column()
    case_id: Mapped[str | None] = mapped_column(ForeignKey("cases.id", ondelete="CASCADE"))
    code: Mapped[int | None] = mapped_column(Integer)
    complements: Mapped[list[str] | None] = mapped_column(JSONType)
    """The names of DataJud's ``complementosTabelados`` (null for a recorded movement)."""
