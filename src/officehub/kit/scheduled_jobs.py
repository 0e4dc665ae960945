"""Durable scheduled work: a row per due job, claimed with a lease like a delivery."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Index, String, text
from sqlalchemy.orm import Mapped, mapped_column

from officehub.kit.db import Base, IdMixin, JSONType


class ScheduledJob(IdMixin, Base):
    """Work due at ``due_at`` (a message to send, a pause to lift).

    Claiming moves ``due_at`` past a lease and sets ``claim_token`` in one statement; the
    holder sets ``done_at`` in the transaction of the job's own changes. A worker killed
    mid-job leaves the row leased; when the lease ends it is due again for any worker.
    """

    __tablename__ = "scheduled_jobs"
    __table_args__ = (
        Index(
            "ix_scheduled_jobs_due",
            "due_at",
            sqlite_where=text("done_at IS NULL"),
            postgresql_where=text("done_at IS NULL"),
        ),
        Index("ix_scheduled_jobs_office_id_created_at", "office_id", "created_at"),
    )

    office_id: Mapped[str] = mapped_column(ForeignKey("offices.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(String(64))
    payload: Mapped[dict[str, Any]] = mapped_column(JSONType)
    due_at: Mapped[datetime]
    created_at: Mapped[datetime]
    claim_token: Mapped[str | None] = mapped_column(String(64))
    attempts: Mapped[int] = mapped_column(default=0)
    done_at: Mapped[datetime | None]
    error: Mapped[str | None] = mapped_column(String(1000))
