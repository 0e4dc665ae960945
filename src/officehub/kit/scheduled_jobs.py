"""Durable scheduled work: a row per due job, and its one runner.

``add_job`` adds a job in the caller's transaction. The runner (``scheduled_runner``, a
``kit.worker`` queue job) claims due rows through ``kit.queue`` (``FOR UPDATE SKIP LOCKED``
on PostgreSQL) by moving ``due_at`` past a lease, renews that lease while it works (one
heartbeat for the batch), and runs each row in its own transaction through the handler
its domain registered for its ``kind``; that transaction also marks it done. A worker
killed mid-job leaves the row leased; when the lease ends any worker runs it again.

A domain declares its background work in its own ``jobs.py`` as a ``DomainJobs``: the
handlers of the kinds of scheduled job it owns, its periodic jobs and its queue jobs; the
worker's job list (``officehub.jobs``) only collects them, and ``handlers_of`` refuses a
kind registered twice.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ForeignKey, Index, String, delete, select, text
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Mapped, mapped_column

from officehub.kit.db import Base, IdMixin, JSONType
from officehub.kit.ids import new_id
from officehub.kit.queue import NOW, Backoff, WorkQueue, renewing
from officehub.kit.repository import batches, mentioning
from officehub.kit.safe_trace import safe_message
from officehub.kit.worker import PeriodicJob, QueueJob, WorkerContext

logger = logging.getLogger("officehub.worker")


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


# The runner ------------------------------------------------------------------------------

JobHandler = Callable[[AsyncSession, ScheduledJob, WorkerContext], Awaitable[None]]
"""Runs one job in the transaction that marks it done (its changes and the mark commit
together); raises ``RetryLater`` to be tried again (or to fail for good)."""

LEASE = timedelta(seconds=60)
BATCH = 50
RETRY_AFTER = tuple(timedelta(seconds=s) for s in (5, 30, 120, 600, 1800))


class RetryLater(Exception):
    """Raised by a handler: the job failed this time and should run again at ``at``
    (``at`` None: it has failed for good). ``error`` is kept on the job."""

    def __init__(self, error: str, at: datetime | None) -> None:
        super().__init__(error)
        self.error = error
        self.at = at


@dataclass(frozen=True)
class DomainJobs:
    """A domain's background work, declared in its ``jobs.py``: ``scheduled``, the handler
    of each kind of scheduled job it owns; ``periodic``, jobs run once per interval across
    every worker; ``queue``, jobs that drain a table of the domain's own."""

    scheduled: Mapping[str, JobHandler] = field(default_factory=dict)
    periodic: tuple[PeriodicJob, ...] = ()
    queue: tuple[QueueJob, ...] = ()


def handlers_of(domains: Iterable[DomainJobs]) -> dict[str, JobHandler]:
    """Every domain's handlers by kind; a kind two domains register is a mistake."""
    handlers: dict[str, JobHandler] = {}
    for domain in domains:
        for kind, handler in domain.scheduled.items():
            if kind in handlers:
                raise ValueError(f"scheduled job kind {kind!r} registered twice")
            handlers[kind] = handler
    return handlers


SCHEDULED = WorkQueue(
    "scheduled_jobs",
    key=ScheduledJob.id,
    lease=ScheduledJob.due_at,
    token=ScheduledJob.claim_token,
    open=ScheduledJob.done_at.is_(None),
    backoff=Backoff(RETRY_AFTER),
    attempts=ScheduledJob.attempts,
    error=ScheduledJob.error,
    gave_up={"done_at": NOW},
    order_by=(ScheduledJob.due_at, ScheduledJob.id),
)
"""The queue of scheduled jobs: ``due_at`` is due time and lease (``kit.queue``)."""


async def _claim(session: AsyncSession, now: datetime, token: str, lease: timedelta) -> list[str]:
    ids = await SCHEDULED.claim(session, now, lease, token, BATCH)
    if not ids:
        return []
    rows = await session.execute(
        select(ScheduledJob.id, ScheduledJob.created_at).where(ScheduledJob.id.in_(ids))
    )
    return [row[0] for row in sorted(rows, key=lambda r: (r[1], r[0]))]


def scheduled_runner(handlers: Mapping[str, JobHandler], lease: timedelta = LEASE) -> QueueJob:
    """The queue job that runs due scheduled jobs: a batch claimed at a time, the batch's
    leases renewed every third of a lease while it runs, each job in its own transaction
    (a kind with no handler fails for good, the error kept on the row). ``lease``: how long
    a claim holds a job before another worker may run it (a test's shorter one)."""

    async def run_scheduled(ctx: WorkerContext) -> int:
        token = f"{ctx.worker_id}:{new_id()}"[:64]
        async with ctx.sessionmaker() as session, session.begin():
            ids = await _claim(session, ctx.now(), token, lease)
        if not ids:
            return 0
        # The heartbeat renews the jobs still waiting their turn; the one running is held by
        # its transaction's lock (PostgreSQL's row lock, SQLite's write lock) meanwhile.
        waiting = set(ids)
        async with renewing(ctx.sessionmaker, SCHEDULED, waiting, token, lease, ctx.now):
            for ident in ids:
                waiting.discard(ident)
                await _run_one(ctx, handlers, ident, token)
        return len(ids)

    return run_scheduled


async def _run_one(
    ctx: WorkerContext, handlers: Mapping[str, JobHandler], ident: str, token: str
) -> None:
    attempts = 0
    try:
        async with ctx.sessionmaker() as session, session.begin():
            # Written first: the row lock (PostgreSQL) or the database's write lock (SQLite)
            # before any read, so a concurrent commit cannot invalidate this transaction.
            if not await SCHEDULED.hold(session, ident, token):
                return  # the lease ran out and another worker took it over
            job = await session.get(ScheduledJob, ident)
            if job is None:
                return  # the lease ran out and another worker took it over
            attempts = job.attempts
            handler = handlers.get(job.kind)
            if handler is None:
                raise RetryLater(f"no handler for {job.kind!r}", None)
            await handler(session, job, ctx)
            job.done_at = ctx.now()
            job.claim_token = None
    except RetryLater as retry:
        await _failed(ctx, ident, token, attempts, retry.error, retry.at)
    except Exception as exc:
        logger.exception("scheduled job %s failed", ident)
        await _failed(ctx, ident, token, attempts, safe_message(exc), None, retry=True)


async def _failed(
    ctx: WorkerContext,
    ident: str,
    token: str,
    attempts: int,
    error: str,
    at: datetime | None,
    *,
    retry: bool = False,
) -> None:
    """Records the failed attempt: due again at ``at`` (``retry``: on the queue's backoff
    schedule), or given up (done, the error kept)."""
    now = ctx.now()
    values, _ = SCHEDULED.failure(now, attempts + 1, error)
    if not retry:
        values.pop("due_at", None)
        values.pop("done_at", None)
        values.update({"done_at": now} if at is None else {"due_at": at})
    async with ctx.sessionmaker() as session, session.begin():
        await SCHEDULED.finish(session, ident, token, values)
