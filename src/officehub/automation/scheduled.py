"""Durable scheduled work: due jobs claimed with a lease, like webhook deliveries.

``schedule`` adds a job in the caller's transaction. ``scheduled_runner`` makes the queue
job that claims due rows (``FOR UPDATE SKIP LOCKED`` on PostgreSQL) by moving ``due_at``
past a lease, then runs each in its own transaction, which also marks it done. A worker
killed mid-job leaves the row leased; when the lease ends any worker runs it again.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.kit.ids import new_id
from officehub.kit.queue import NOW, Backoff, WorkQueue
from officehub.kit.safe_trace import safe_message
from officehub.kit.scheduled_jobs import ScheduledJob
from officehub.kit.worker import QueueJob, WorkerContext

logger = logging.getLogger("officehub.worker")

JobHandler = Callable[[AsyncSession, ScheduledJob, WorkerContext], Awaitable[None]]
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


async def schedule(
    session: AsyncSession,
    office_id: str,
    kind: str,
    payload: dict[str, Any],
    due_at: datetime,
    now: datetime,
) -> ScheduledJob:
    """Added to the session, written with its next flush or commit."""
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


async def _claim(session: AsyncSession, now: datetime, token: str) -> list[str]:
    ids = await SCHEDULED.claim(session, now, LEASE, token, BATCH)
    if not ids:
        return []
    rows = await session.execute(
        select(ScheduledJob.id, ScheduledJob.created_at).where(ScheduledJob.id.in_(ids))
    )
    return [row[0] for row in sorted(rows, key=lambda r: (r[1], r[0]))]


def scheduled_runner(handlers: Mapping[str, JobHandler]) -> QueueJob:
    async def run_scheduled(ctx: WorkerContext) -> int:
        token = f"{ctx.worker_id}:{new_id()}"[:64]
        async with ctx.sessionmaker() as session, session.begin():
            ids = await _claim(session, ctx.now(), token)
        for ident in ids:
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
