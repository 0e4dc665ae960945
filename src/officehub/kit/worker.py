"""The background worker's runner (the job list is ``officehub.jobs``): queue jobs that drain
work, and periodic jobs run once per interval.

A queue job is ``async (WorkerContext) -> int`` returning how much it did; the loop keeps
calling them while any did something, and sleeps ``worker_poll_seconds`` when all were idle.
A periodic job runs at most once per interval across every worker process: the worker that
moves its ``job_leases.next_run_at`` forward (a single conditional UPDATE) runs it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import socket
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import insert, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker

from officehub.kit import queue, wakeup
from officehub.kit.config import Settings
from officehub.kit.db import database_now, database_unreachable
from officehub.kit.job_leases import JobLease
from officehub.kit.timeutil import utcnow

logger = logging.getLogger("officehub.worker")

Clock = Callable[[], datetime]


def _no_nudge() -> None:
    """A context's nudge when no running worker waits to be woken."""


@dataclass
class WorkerContext:
    """What a job runs with.

    ``clock`` is this host's clock (tests pass one they control). ``database_clock``: jobs
    that compare with times other hosts wrote (the delivery queue's due times and leases)
    read the time with ``time_in``, which on PostgreSQL is the database's ``now()`` — the
    one clock every worker shares — unless it is false (a test driving time with its own
    ``clock``). SQLite lives on one host, so there it is always ``clock``.
    """

    settings: Settings
    engine: AsyncEngine
    sessionmaker: async_sessionmaker[AsyncSession]
    clock: Clock = utcnow
    worker_id: str = field(default_factory=lambda: f"{socket.gethostname()}:{os.getpid()}")
    database_clock: bool = True
    overlap: bool = False
    """Set by a long-running worker (``Worker.run``): the queue's pools return at once and
    their work finishes on its own while later passes claim more (``kit.queue.drain``)."""
    pools: dict[str, Any] = field(default_factory=dict)
    """The worker's ``kit.queue.Pool`` per kind of work, kept between passes."""
    nudge: Callable[[], None] = lambda: None
    """Wakes the idle worker (a pool's slot freed up)."""

    def now(self) -> datetime:
        return self.clock()

    async def time_in(self, session: AsyncSession) -> datetime:
        """Now, by the clock the workers share (see the class)."""
        if self.database_clock and session.get_bind().dialect.name != "sqlite":
            return await database_now(session)
        return self.clock()


_PERIODIC_CHECK = timedelta(seconds=1)
"""Periodic jobs (intervals of minutes or hours) are looked at no more than once a second,
so a worker woken for every event does not pay their claims on each pass."""

QueueJob = Callable[[WorkerContext], Awaitable[int]]

SHUTDOWN_GRACE_SECONDS = 10.0
"""How long a stopping worker lets the work it has in flight finish before releasing it."""

MAX_BACKOFF_SECONDS = 15.0
"""The longest a worker waits between passes while the database stays unreachable."""


@dataclass(frozen=True)
class PeriodicJob:
    name: str
    interval: timedelta
    run: Callable[[WorkerContext], Awaitable[object]]


async def claim_periodic(ctx: WorkerContext, job: PeriodicJob) -> bool:
    """True for exactly one caller per interval, whatever the number of workers."""
    now = ctx.now()
    async with ctx.sessionmaker() as session, session.begin():
        result = await session.execute(
            update(JobLease)
            .where(JobLease.name == job.name, JobLease.next_run_at <= now)
            .values(next_run_at=now + job.interval)
        )
        if result.rowcount == 1:  # type: ignore[attr-defined]
            return True
    with contextlib.suppress(IntegrityError):
        async with ctx.sessionmaker() as session, session.begin():
            await session.execute(
                insert(JobLease).values(name=job.name, next_run_at=now + job.interval)
            )
            return True
    return False


class Worker:
    def __init__(
        self,
        ctx: WorkerContext,
        queue_jobs: Sequence[QueueJob],
        periodic_jobs: Sequence[PeriodicJob] = (),
    ) -> None:
        self.ctx = ctx
        self.queue_jobs = list(queue_jobs)
        self.periodic_jobs = list(periodic_jobs)
        self.stopping = asyncio.Event()
        self.wake = asyncio.Event()
        self.idle = asyncio.Event()
        """Set while the running worker waits for work (a caller waits on it, not a sleep)."""
        self._periodic_checked: datetime | None = None
        self.unreachable_passes = 0
        """Passes in a row that found the database unreachable (0 once one reaches it)."""
        self._unreachable_now = False

    async def run_once(self) -> int:
        """One pass over every job; returns how much work was done."""
        done = 0
        self._unreachable_now = False
        now = self.ctx.now()
        checked = self._periodic_checked
        periodic = checked is None or not checked <= now < checked + _PERIODIC_CHECK
        if periodic:
            self._periodic_checked = now
        ran: list[str] = []
        for job in self.periodic_jobs if periodic else ():
            try:
                if await claim_periodic(self.ctx, job):
                    ran.append(job.name)
                    await job.run(self.ctx)
            except Exception as exc:
                self._failed(f"periodic job {job.name}", exc)
        if ran:
            # One line per pass (not per job: a first start's frame stays on screen): which
            # worker ran which jobs, each once per interval.
            logger.info("periodic jobs ran: %s", ", ".join(ran), extra={"jobs": ran})
        for queue_job in self.queue_jobs:
            try:
                done += await queue_job(self.ctx)
            except Exception as exc:
                self._failed(f"queue job {getattr(queue_job, '__name__', queue_job)}", exc)
        self.unreachable_passes = self.unreachable_passes + 1 if self._unreachable_now else 0
        return done

    def _failed(self, what: str, exc: Exception) -> None:
        if database_unreachable(exc):
            self._unreachable_now = True
            if self.unreachable_passes == 0:  # once per outage, not once per pass
                logger.warning("%s: the database is unreachable; backing off", what)
            return
        logger.exception("%s failed", what)

    def backoff_seconds(self) -> float:
        """The wait before the next pass while the database is unreachable: the poll
        interval, doubled with each pass that found it so, up to ``MAX_BACKOFF_SECONDS``."""
        poll = max(self.ctx.settings.worker_poll_seconds, 0.05)
        return min(math.ldexp(poll, max(self.unreachable_passes - 1, 0)), MAX_BACKOFF_SECONDS)

    async def run_until_idle(self, max_passes: int = 1000) -> int:
        total = 0
        for _ in range(max_passes):
            done = await self.run_once()
            total += done
            if done == 0:
                break
        return total

    async def run(self) -> None:
        """Works while there is work; when idle, sleeps until an event commits (woken in
        process, or by PostgreSQL NOTIFY) or the poll interval passes (scheduled work)."""
        logger.info("worker %s started", self.ctx.worker_id)
        wakeup.subscribe(self.wake)
        self.ctx.overlap, self.ctx.nudge = True, self.wake.set
        try:
            async with wakeup.listening(self.ctx.settings.database_url, self.wake):
                while not self.stopping.is_set():
                    self.wake.clear()
                    done = await self.run_once()
                    if self.unreachable_passes:
                        await self._idle(self.backoff_seconds())
                    elif done == 0:
                        await self._idle()
        finally:
            wakeup.unsubscribe(self.wake)
            # Work in flight may finish; what it still holds then is due again at once.
            await queue.shutdown(self.ctx, grace=SHUTDOWN_GRACE_SECONDS)
            # Stopped, the context is a single pass's again: a later ``run_until_idle`` on
            # it settles what it starts (rate-limited work waiting included), as it would
            # on a context that never ran, rather than leaving that work to a loop that
            # has ended.
            self.ctx.overlap, self.ctx.nudge = False, _no_nudge
        logger.info("worker %s stopped", self.ctx.worker_id)

    async def _idle(self, seconds: float | None = None) -> None:
        waits = [
            asyncio.ensure_future(self.stopping.wait()),
            asyncio.ensure_future(self.wake.wait()),
        ]
        self.idle.set()
        try:
            await asyncio.wait(
                waits,
                timeout=self.ctx.settings.worker_poll_seconds if seconds is None else seconds,
                return_when=asyncio.FIRST_COMPLETED,
            )
        finally:
            self.idle.clear()
            for waiter in waits:
                waiter.cancel()

    def stop(self) -> None:
        self.stopping.set()
