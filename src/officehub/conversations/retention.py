"""Retention (issue 30): what an office no longer needs is removed by the worker after the
periods it set (``GET|PATCH /office``, ``retentionDays``).

Every hour one worker (``RETENTION_JOB``, a periodic job) queues a ``retention.run``
scheduled job per office with a period set; each office's run is a job of its own on the
queue, so one office's failure is retried on the queue's backoff and holds no other. A run
takes a batch at a time, each in its own transaction: closed conversations past the period
are erased as an erasure erases (their messages, notes, tags, flow sessions and rule runs;
the outbox events, webhook deliveries and jobs naming them; their clients' files, deleted
by ``contacts.erased`` after commit), and finished webhook delivery logs past theirs are
deleted. A full batch queues the next one at once; the last writes the run's audit entry
(counts only, actor ``system``/``worker:retention``).
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.audit.recorder import Pending, append_now
from officehub.contacts.erasure import forget_derived
from officehub.conversations import repository
from officehub.conversations.hooks import ConversationsErasing, conversations_erasing
from officehub.kit.actor import system_actor
from officehub.kit.scheduled_jobs import ScheduledJob, add_job
from officehub.kit.storage.base import conversation_folders
from officehub.kit.worker import PeriodicJob, WorkerContext
from officehub.offices.settings import offices_with_retention, retention_of
from officehub.webhooks.service import purge_logs_before

logger = logging.getLogger("officehub.retention")

RUN_JOB = "retention.run"
ACTOR = system_actor("worker:retention")


async def queue_runs(ctx: WorkerContext) -> int:
    """Queues a run for every office with a retention period, unless one is still queued."""
    async with ctx.sessionmaker() as session, session.begin():
        now = ctx.now()
        offices = await offices_with_retention(session)
        waiting = set(
            await session.scalars(
                select(ScheduledJob.office_id).where(
                    ScheduledJob.kind == RUN_JOB, ScheduledJob.done_at.is_(None)
                )
            )
        )
        queued = 0
        for office in offices:
            if office.office_id not in waiting:
                add_job(session, office.office_id, RUN_JOB, {}, now, now)
                queued += 1
        return queued


async def run_batch(session: AsyncSession, job: ScheduledJob, ctx: WorkerContext) -> None:
    """One batch of the office's run (``job.payload`` carries the run's counts so far)."""
    office_id, now, batch = job.office_id, ctx.now(), ctx.settings.retention_batch_size
    periods = await retention_of(session, office_id)
    counts = {
        "closedConversations": int(job.payload.get("closedConversations", 0)),
        "webhookDeliveries": int(job.payload.get("webhookDeliveries", 0)),
    }
    more = False
    if periods.closed_conversations_days is not None:
        before = now - timedelta(days=periods.closed_conversations_days)
        erased = await erase_closed(session, office_id, before, batch, now)
        counts["closedConversations"] += erased
        more = more or erased == batch
    if periods.webhook_deliveries_days is not None:
        before = now - timedelta(days=periods.webhook_deliveries_days)
        purged = await purge_logs_before(session, office_id, before, batch)
        counts["webhookDeliveries"] += purged
        more = more or purged == batch
    if more:
        add_job(session, office_id, RUN_JOB, dict(counts), now, now)
        return
    details: dict[str, Any] = dict(counts)
    details["closedConversationsDays"] = periods.closed_conversations_days
    details["webhookDeliveriesDays"] = periods.webhook_deliveries_days
    await append_now(
        session,
        Pending(
            office_id=office_id,
            at=now,
            actor=ACTOR,
            action="applyRetention",
            record_type="office",
            record_id=None,
            person_id=None,
            details={k: v for k, v in details.items() if v is not None},
        ),
    )
    logger.info(
        "retention: office %s, %d conversations erased, %d delivery logs deleted",
        office_id,
        counts["closedConversations"],
        counts["webhookDeliveries"],
    )


async def erase_closed(
    session: AsyncSession, office_id: str, before: datetime, limit: int, now: datetime
) -> int:
    """Erases up to ``limit`` conversations closed at or before ``before`` (none of a client
    under legal hold) and what derives from them; how many."""
    ids = await repository.claim_expired_closed(session, office_id, before, limit)
    if not ids:
        return 0
    files: set[str] = set()
    for conversation_id in ids:  # template header media, whole folders
        files.update(conversation_folders(office_id, conversation_id))
    # Messages name their inbound media (officehub.messages.subscribers).
    erasing = ConversationsErasing(session, office_id, ids, set(ids), files)
    await conversations_erasing.fire(erasing)
    await repository.delete_conversations(session, office_id, ids)
    await forget_derived(session, office_id, sorted(erasing.mentions), files, now)
    return len(ids)


RETENTION_JOB = PeriodicJob("retention", timedelta(hours=1), queue_runs)
