"""Dispatched outbox events are purged after ``OFFICEHUB_OUTBOX_RETENTION_DAYS``."""

from __future__ import annotations

from datetime import timedelta

from officehub.events import repository
from officehub.kit.worker import PeriodicJob, WorkerContext

_BATCH = 1000


async def purge_processed_events(ctx: WorkerContext) -> int:
    """Deletes events older than the retention that every consumer has processed."""
    before = ctx.now() - timedelta(days=ctx.settings.outbox_retention_days)
    total = 0
    while True:
        async with ctx.sessionmaker() as session, session.begin():
            removed = await repository.purge_processed(session, before, _BATCH)
        total += removed
        if removed < _BATCH:
            return total


OUTBOX_PURGE_JOB = PeriodicJob("outbox-purge", timedelta(hours=1), purge_processed_events)
