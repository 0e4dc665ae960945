"""Durable scheduled work: a row per due job, claimed with a lease like a delivery."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Index, String, delete, select, text
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Mapped, mapped_column

from officehub.kit.db import Base, IdMixin, JSONType
from officehub.kit.ids import new_id
from officehub.kit.repository import batches, mentioning


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


def add_job(
    session: AsyncSession,
    office_id: str,
    kind: str,
    payload: dict[str, Any],
    due_at: datetime,
    now: datetime,
) -> ScheduledJob:
    """A job added to the session, written with its next flush or commit."""
    job = ScheduledJob(
        id=new_id(),
        office_id=office_id,
        kind=kind,
        payload=payload,
        due_at=due_at,
        created_at=now,
        attempts=0,
    )
    session.add(job)
    return job


async def forget_jobs_mentioning(
    session: AsyncSession, office_id: str, mentions: list[str]
) -> None:
    """Deletes the office's jobs, done or not, whose payload names any of ``mentions`` (an
    erasure: a scheduled send to the contact carries its words)."""
    for chunk in batches(sorted(mentions)):
        ids = list(
            await session.scalars(
                select(ScheduledJob.id).where(
                    ScheduledJob.office_id == office_id, mentioning(ScheduledJob.payload, chunk)
                )
            )
        )
        if ids:
            await session.execute(delete(ScheduledJob).where(ScheduledJob.id.in_(ids)))
