"""One open ``GET /stream``: a resume from ``Last-Event-ID``, then each visible event as
the hub queues it, a comment line when idle, an end after ``stream_max_seconds``."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

from officehub.kit.auth import OfficeContext
from officehub.live.hub import Overflowed, StreamHub

RETRY_MILLISECONDS = 2000
RESET = "event: reset\ndata: {}\n\n"
"""Sent when a resume cannot be served (the last event is unknown or too far behind): the
client reloads what it shows, then carries on from the live events."""


async def events(
    hub: StreamHub,
    actor: OfficeContext,
    last_event_id: str | None,
    *,
    heartbeat: float,
    lifetime: float,
) -> AsyncIterator[str]:
    subscriber = hub.subscribe(actor)
    try:
        yield f"retry: {RETRY_MILLISECONDS}\n\n"
        await hub.ready()
        sent: set[str] = set()
        if last_event_id:
            missed = await hub.whole(hub.replay(actor, last_event_id))
            if missed is None:
                yield RESET
            for event in missed or ():
                sent.add(event.id)
                yield event.frame
        if not sent:
            # Where this stream starts, so that a reconnect resumes from here.
            start = await hub.whole(hub.newest_id(actor))
            if start is not None and start != last_event_id:
                yield f"id: {start}\nevent: ready\ndata: {{}}\n\n"
        ends = time.monotonic() + lifetime
        while (left := ends - time.monotonic()) > 0:
            try:
                async with asyncio.timeout(min(heartbeat, left)):
                    item = await subscriber.queue.get()
            except TimeoutError:
                if time.monotonic() < ends:
                    yield ": keep-alive\n\n"
                continue
            if isinstance(item, Overflowed):
                return
            if item.id in sent:
                continue
            yield item.frame
    finally:
        hub.unsubscribe(subscriber)
