"""Outbox consumers: each processes every event at least once and acts on it once.

A consumer's handler runs in one transaction with the row that marks the event done for
that consumer, so its changes commit exactly when the event counts as handled. A worker
that dies mid-event leaves the row leased; when the lease ends another worker takes it.
A handler that raises is retried with backoff, then the event is set aside with the error
(an event must not hold its conversation's later events forever).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.events import repository
from officehub.events.models import OutboxEvent
from officehub.kit.db import is_sqlite
from officehub.kit.ids import new_id
from officehub.kit.queue import heartbeat
from officehub.kit.safe_trace import safe_message
from officehub.kit.worker import QueueJob, WorkerContext

logger = logging.getLogger("officehub.events")

Handler = Callable[[AsyncSession, OutboxEvent, WorkerContext], Awaitable[None]]
BatchHandler = Callable[[AsyncSession, list[OutboxEvent], WorkerContext], Awaitable[None]]
RETRY_AFTER = repository.CONSUMER_EVENTS.backoff.steps
"""The wait after the 1st, 2nd, … failed attempt; the 5th sets the event aside."""


@dataclass(frozen=True)
class Consumer:
    name: str
    handle: Handler
    batch: int = 50
    lease: timedelta = timedelta(seconds=10)
    """Short: renewed by a heartbeat while the batch runs, so a killed worker's events
    are taken over within it."""
    concurrency: int = 8
    handle_batch: BatchHandler | None = None
    """Optional: handles a whole claimed batch in one transaction with its done marks (a
    batch holds at most one row per ordering key, so order is kept). If it raises, each
    row is handled on its own with ``handle``, so one bad event cannot hold the rest."""


def consumer_job(consumer: Consumer) -> QueueJob:
    async def job(ctx: WorkerContext) -> int:
        return await consume(ctx, consumer)

    job.__name__ = f"consume_{consumer.name}"
    return job


async def consume(ctx: WorkerContext, consumer: Consumer) -> int:
    """Claims a batch and handles it: different conversations concurrently, each in its
    own transaction. Returns how many events were claimed."""
    pg = not is_sqlite(ctx.settings.database_url)
    now = ctx.now()
    token = f"{ctx.worker_id}:{new_id()}"[:64]
    async with ctx.sessionmaker() as session, session.begin():
        seqs = await repository.claim(
            session, consumer.name, now, now + consumer.lease, token, consumer.batch
        )
    if not seqs:
        return 0
    async with heartbeat(ctx, repository.CONSUMER_EVENTS, seqs, token, consumer.lease):
        batch = consumer.handle_batch
        if batch is not None and await _handle_batch(ctx, consumer.name, batch, seqs, token):
            return len(seqs)
        limit = asyncio.Semaphore(consumer.concurrency if pg else 1)

        async def one(seq: int) -> None:
            async with limit:
                await _handle_one(ctx, consumer, seq, token)

        await asyncio.gather(*(one(seq) for seq in seqs))
    return len(seqs)


async def _handle_batch(
    ctx: WorkerContext, name: str, handle: BatchHandler, seqs: list[int], token: str
) -> bool:
    try:
        async with ctx.sessionmaker() as session, session.begin():
            found = await repository.hold_many(session, seqs, token)
            if found:
                await handle(session, [event for _row, event in found], ctx)
                await repository.finish_many(session, [row.seq for row, _e in found], ctx.now())
    except Exception:
        logger.exception("consumer %s failed on a batch; handling its rows one by one", name)
        return False
    return True


async def _handle_one(ctx: WorkerContext, consumer: Consumer, seq: int, token: str) -> None:
    attempts = 0
    try:
        async with ctx.sessionmaker() as session, session.begin():
            if not await repository.hold(session, seq, token):
                return  # the lease ran out and another worker took it over
            found = await repository.held(session, seq, token)
            if found is None:
                return  # the lease ran out and another worker took it over
            row, event = found
            attempts = row.attempts
            await consumer.handle(session, event, ctx)
            await repository.finish(session, seq, ctx.now())
    except Exception as exc:
        logger.exception("consumer %s failed on outbox row %s", consumer.name, seq)
        async with ctx.sessionmaker() as session, session.begin():
            await repository.CONSUMER_EVENTS.fail(
                session, seq, token, ctx.now(), max(attempts, 1), safe_message(exc)
            )
