"""The console's presence (``users.presence``) driven by ``GET /stream``: a signed-in
user's stream is recorded when it opens, refreshed while it is open, marked closed when it
ends; a check after the grace period (and the worker's ``presence-sweep``, for a process
that died) makes a user whose last stream closed OFFLINE."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from officehub.kit.auth import Actor
from officehub.kit.config import Settings
from officehub.kit.timeutil import utcnow
from officehub.kit.worker import PeriodicJob, WorkerContext
from officehub.users import presence

log = logging.getLogger(__name__)


def stale_after(settings: Settings) -> timedelta:
    """An open row not refreshed for this long is a process that died."""
    return timedelta(seconds=max(3 * settings.stream_heartbeat_seconds, 60.0))


@dataclass
class Connection:
    office_id: str
    user_id: str
    row_id: str
    touched: float = field(default_factory=time.monotonic)


class PresenceTracker:
    """One per process (``app.state.presence``). ``clock``: tests may set their own."""

    def __init__(self, sessionmaker: async_sessionmaker[AsyncSession], settings: Settings) -> None:
        self.sessionmaker = sessionmaker
        self.settings = settings
        self.clock: Callable[[], datetime] = utcnow
        self.tasks: set[asyncio.Task[None]] = set()

    @property
    def grace(self) -> timedelta:
        return timedelta(seconds=self.settings.presence_grace_seconds)

    async def open(self, actor: Actor) -> Connection:
        async with self.sessionmaker() as session, session.begin():
            row_id = await presence.opened(
                session,
                actor.office_id,
                actor.id,
                self.clock(),
                self.grace,
                stale_after(self.settings),
            )
        return Connection(actor.office_id, actor.id, row_id)

    def _spawn(self, work: Callable[[], Awaitable[None]]) -> None:
        async def run() -> None:
            try:
                await work()
            except Exception:  # a failed refresh or close: the sweep catches up
                log.exception("presence bookkeeping failed")

        task = asyncio.create_task(run())
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    def touch(self, connection: Connection) -> None:
        """The stream sent something: its row is refreshed at most once a heartbeat."""
        if time.monotonic() - connection.touched < self.settings.stream_heartbeat_seconds:
            return
        connection.touched = time.monotonic()

        async def refresh() -> None:
            async with self.sessionmaker() as session, session.begin():
                await presence.seen(session, connection.office_id, connection.row_id, self.clock())

        self._spawn(refresh)

    def close(self, connection: Connection) -> None:
        """The stream ended: its row is closed now, and after the grace the user leaves if
        nothing opened meanwhile."""

        async def end() -> None:
            async with self.sessionmaker() as session, session.begin():
                await presence.closed(
                    session, connection.office_id, connection.row_id, self.clock()
                )
            await asyncio.sleep(self.settings.presence_grace_seconds)
            async with self.sessionmaker() as session, session.begin():
                await presence.leave(
                    session,
                    connection.office_id,
                    connection.user_id,
                    self.clock(),
                    self.grace,
                    stale_after(self.settings),
                )

        self._spawn(end)

    async def tracked(self, connection: Connection, body: AsyncIterator[str]) -> AsyncIterator[str]:
        try:
            async for chunk in body:
                self.touch(connection)
                yield chunk
        finally:
            self.close(connection)

    async def stop(self) -> None:
        for task in list(self.tasks):
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)


async def sweep(ctx: WorkerContext) -> int:
    """Users whose presence ended without this process noticing (it died): OFFLINE."""
    now = ctx.now()
    grace = timedelta(seconds=ctx.settings.presence_grace_seconds)
    stale = stale_after(ctx.settings)
    async with ctx.sessionmaker() as session:
        gone = await presence.departed(session, now, grace, stale)
    left = 0
    for office_id, user_id in gone:
        async with ctx.sessionmaker() as session, session.begin():
            left += await presence.leave(session, office_id, user_id, now, grace, stale)
    return left


PRESENCE_JOB = PeriodicJob("presence-sweep", timedelta(minutes=1), sweep)
