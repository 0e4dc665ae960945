"""One reader of the event log per process, fanning events out to its open streams.

Streams never read the database while they wait: the hub does, once per wake-up for all of
them. It wakes on this process's commits that emitted (``kit.wakeup.subscribe``) and, on
PostgreSQL, on the ``NOTIFY`` every other process's emitting commit sends
(``kit.wakeup.listening``); a slow safety read catches anything else (a lost ``NOTIFY``
connection, SQLite written by another process).

Events are stamped before their transaction commits, so one stamped earlier can commit
later: each read looks back ``LATE_COMMIT_SECONDS`` before the newest event seen and skips
the ids it has already sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Coroutine
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, TypeVar

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from officehub.conversations import repository as conversations
from officehub.events import repository as outbox
from officehub.kit import wakeup
from officehub.kit.auth import OfficeContext
from officehub.kit.timeutil import isoformat, utcnow
from officehub.live.visibility import StreamEvent, visible

if TYPE_CHECKING:
    from officehub.events.models import OutboxEvent

logger = logging.getLogger("officehub.live")
T = TypeVar("T")

LATE_COMMIT_SECONDS = 10.0
SAFETY_READ_SECONDS = 30.0
QUEUE_SIZE = 1000
"""Events waiting for one slow stream; one more ends it (it reconnects and replays)."""
REPLAY_MAX = 1000
"""Events sent on a resume at most; further behind, the stream says ``reset``."""


class Overflowed:
    """Put in a stream's queue when it fell ``QUEUE_SIZE`` events behind."""


OVERFLOWED = Overflowed()


class Subscriber:
    def __init__(self, actor: OfficeContext) -> None:
        self.actor = actor
        self.queue: asyncio.Queue[StreamEvent | Overflowed] = asyncio.Queue(QUEUE_SIZE + 1)
        self.overflowed = False

    def offer(self, event: StreamEvent) -> None:
        if self.overflowed:
            return
        if self.queue.qsize() >= QUEUE_SIZE:
            self.overflowed = True
            self.queue.put_nowait(OVERFLOWED)
            return
        self.queue.put_nowait(event)


class StreamHub:
    def __init__(self, sessionmaker: async_sessionmaker[AsyncSession], database_url: str) -> None:
        self._sessionmaker = sessionmaker
        self._database_url = database_url
        self._by_office: dict[str, set[Subscriber]] = {}
        self._seen: dict[str, datetime] = {}
        self._newest: datetime | None = None
        self._started: datetime | None = None
        self._signal = asyncio.Event()
        self._ready = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._stopping = False
        self._reads: set[asyncio.Task[Any]] = set()

    @property
    def streams(self) -> int:
        return sum(len(s) for s in self._by_office.values())

    def subscribe(self, actor: OfficeContext) -> Subscriber:
        """A new stream's queue: every visible event the hub reads from now on goes in it."""
        subscriber = Subscriber(actor)
        self._by_office.setdefault(actor.office_id, set()).add(subscriber)
        if self._task is None:
            # What is stamped from now on is this stream's, however soon it commits.
            self._started = utcnow()
            self._task = asyncio.create_task(self._run(), name="officehub-stream-hub")
        return subscriber

    def unsubscribe(self, subscriber: Subscriber) -> None:
        office = self._by_office.get(subscriber.actor.office_id)
        if office is not None:
            office.discard(subscriber)
            if not office:
                del self._by_office[subscriber.actor.office_id]

    async def ready(self) -> None:
        """Returns once the hub knows what was recorded before it started (a replay read
        after this misses nothing the hub will not send)."""
        await self._ready.wait()

    async def whole(self, read: Coroutine[Any, Any, T]) -> T:
        """A stream's read that finishes (and gives its connection back) even when the
        client leaves while it runs: the stream is cancelled, the read is not, and
        ``close`` waits for it."""
        task = asyncio.ensure_future(read)
        self._reads.add(task)
        task.add_done_callback(self._reads.discard)
        return await asyncio.shield(task)

    async def close(self) -> None:
        """Stops the reader between two reads (a read cut in half would leave its
        connection to the garbage collector), cancelling it only if it does not stop."""
        if self._reads:
            await asyncio.gather(*self._reads, return_exceptions=True)
        if self._task is None:
            return
        self._stopping = True
        self._signal.set()
        try:
            await asyncio.wait_for(asyncio.shield(self._task), 5.0)
        except TimeoutError:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        self._task = None

    async def replay(self, actor: OfficeContext, last_event_id: str) -> list[StreamEvent] | None:
        """The visible events after ``last_event_id``, oldest first; None when that event
        is unknown to the office (purged, never its own) or more than ``REPLAY_MAX`` came
        after it."""
        async with self._sessionmaker() as session:
            after = await outbox.created_at_of(session, actor.office_id, last_event_id)
            if after is None:
                return None
            rows = await conversations.events_from_with_routing(
                session, actor.office_id, after, REPLAY_MAX + 2
            )
            found = [r for r in rows if (r[0].created_at, r[0].id) > (after, last_event_id)]
        if len(found) > REPLAY_MAX:
            return None
        events = [stream_event(*r) for r in found]
        return [e for e in events if visible(e, actor)]

    async def newest_id(self, actor: OfficeContext) -> str | None:
        """The office's newest event id: where a fresh stream says it starts."""
        async with self._sessionmaker() as session:
            return await outbox.newest_id(session, actor.office_id)

    async def _run(self) -> None:
        wakeup.subscribe(self._signal)
        try:
            async with wakeup.listening(self._database_url, self._signal):
                await self._start()
                # A commit between the first stream's subscribe and this task's own
                # subscription to the wake-ups woke nobody: read once now.
                self._signal.set()
                while not self._stopping:
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._signal.wait(), SAFETY_READ_SECONDS)
                    self._signal.clear()
                    if self._stopping:
                        return
                    try:
                        await self._read()
                    except Exception:  # a database hiccup: the next wake-up reads again
                        logger.exception("reading events for the live streams failed")
                        await asyncio.sleep(1.0)
                        self._signal.set()
        finally:
            wakeup.unsubscribe(self._signal)

    async def _start(self) -> None:
        """What was recorded before the first stream subscribed counts as sent: a stream
        gets only later events (and what its ``Last-Event-ID`` replay reads). An event
        stamped after that moment is not, even if it committed before this read: counting
        it as sent lost it (the stream saw it only once something else about its
        conversation came, seconds later, or never)."""
        started = self._started or utcnow()
        while True:
            try:
                since = started - timedelta(seconds=LATE_COMMIT_SECONDS)
                async with self._sessionmaker() as session:
                    for ident, at in await outbox.recorded_since(session, since):
                        if at <= started:
                            self._seen[ident] = at
                self._newest = max(self._seen.values(), default=since)
                self._ready.set()
                return
            except Exception:
                logger.exception("the live streams' first read failed; trying again")
                await asyncio.sleep(1.0)

    async def _read(self) -> None:
        offices = sorted(self._by_office)
        if not offices:
            return
        assert self._newest is not None  # noqa: S101 (set by _start)
        since = self._newest - timedelta(seconds=LATE_COMMIT_SECONDS)
        async with self._sessionmaker() as session:
            recent = await outbox.recorded_since(session, since, offices)
            fresh = [ident for ident, _at in recent if ident not in self._seen]
            rows = await conversations.events_with_routing(session, fresh)
        for ident, at in recent:
            self._seen[ident] = at
            if at > self._newest:
                self._newest = at
        for row in rows:
            event = stream_event(*row)
            for subscriber in list(self._by_office.get(event.office_id, ())):
                if visible(event, subscriber.actor):
                    subscriber.offer(event)
        horizon = self._newest - timedelta(seconds=LATE_COMMIT_SECONDS)
        for ident in [i for i, at in self._seen.items() if at < horizon]:
            del self._seen[ident]


def stream_event(
    row: OutboxEvent, inbox_id: str | None = None, assigned_user_id: str | None = None
) -> StreamEvent:
    body: dict[str, Any] = {
        "id": row.id,
        "event": row.name,
        "createdAt": isoformat(row.created_at),
        "officeId": row.office_id,
        "data": row.data,
    }
    data = json.dumps(body, ensure_ascii=False, separators=(",", ":"))
    return StreamEvent(
        id=row.id,
        office_id=row.office_id,
        name=row.name,
        created_at=row.created_at,
        conversation_id=row.conversation_id,
        integration_id=row.integration_id,
        target_webhook_id=row.target_webhook_id,
        inbox_id=inbox_id,
        assigned_user_id=assigned_user_id,
        frame=f"id: {row.id}\nevent: {row.name}\ndata: {data}\n\n",
    )
