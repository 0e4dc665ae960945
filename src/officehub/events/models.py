from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Index, String, text
from sqlalchemy.orm import Mapped, mapped_column

from officehub.db import Base, IdMixin, JSONType


class OutboxEvent(IdMixin, Base):
    """An event recorded in the transaction of the change that caused it.

    ``dispatched_at`` is set once the event has been fanned out to webhook deliveries;
    the partial index keeps finding undispatched events cheap however long the table is.
    """

    __tablename__ = "outbox_events"
    __table_args__ = (
        Index("ix_outbox_events_office_id_created_at", "office_id", "created_at"),
        Index(
            "ix_outbox_events_undispatched",
            "created_at",
            sqlite_where=text("dispatched_at IS NULL"),
            postgresql_where=text("dispatched_at IS NULL"),
        ),
    )

    office_id: Mapped[str] = mapped_column(ForeignKey("offices.id", ondelete="CASCADE"))
    name: Mapped[str] = mapped_column(String(64))
    data: Mapped[dict[str, Any]] = mapped_column(JSONType)
    created_at: Mapped[datetime]
    causation_id: Mapped[str | None] = mapped_column(String(32))
    depth: Mapped[int] = mapped_column(default=0)
    conversation_id: Mapped[str | None] = mapped_column(String(32))
    integration_id: Mapped[str | None] = mapped_column(String(32))
    target_webhook_id: Mapped[str | None] = mapped_column(String(32))
    dispatched_at: Mapped[datetime | None]


class JobLease(Base):
    """One row per periodic job: whoever moves ``next_run_at`` forward runs it."""

    __tablename__ = "job_leases"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    next_run_at: Mapped[datetime]
