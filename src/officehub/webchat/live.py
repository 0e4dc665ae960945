"""A visitor's live stream (server-sent events) and the DELIVERED mark of what was shown.

The stream reads the database when the event path wakes it: a commit in this process that
emitted an event of the visitor's office (a message stored, a status changed) sets its
signal (``kit.wakeup.watch``). A slow safety poll (``OFFICEHUB_WEBCHAT_POLL_SECONDS``,
20 s by default) brings what another process wrote (several ``serve --workers``, a
separate worker) without a shared message bus.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from fastapi import Request
from sqlalchemy import text

from officehub.kit import wakeup
from officehub.webchat import service
from officehub.webchat.models import WebchatVisitor
from officehub.webchat.schemas import VisitorMessage

if TYPE_CHECKING:
    from officehub.messages.models import Message

STREAM_SECONDS = 300.0
HEARTBEAT_SECONDS = 15.0


async def stream(request: Request, visitor_id: str) -> AsyncIterator[str]:
    """Every visible message since the visitor started, then each new one as it appears
    (read when the event path wakes the stream, or at the slow safety poll); a comment
    line keeps the connection alive, and after five minutes the stream ends (the widget
    reconnects and is sent the history again, which it de-duplicates by id)."""
    state = request.app.state
    poll = float(getattr(state.settings, "webchat_poll_seconds", 20.0))
    yield "retry: 2000\n\n"
    signal = asyncio.Event()
    watched: str | None = None
    try:
        async for part in _stream(state, visitor_id, signal, poll):
            if isinstance(part, str):
                yield part
            elif watched is None:
                watched = part.office_id
                wakeup.watch(watched, signal)
    finally:
        if watched is not None:
            wakeup.unwatch(watched, signal)


async def _stream(
    state: Any, visitor_id: str, signal: asyncio.Event, poll: float
) -> AsyncIterator[str | WebchatVisitor]:
    """The stream's parts; first the visitor (so the caller watches its office before the
    first read: nothing committed after that read is missed)."""
    pending: set[str] = set()
    shown: set[str] = set()
    since = None
    started = last_beat = last_read = time.monotonic()
    first = True
    while time.monotonic() - started < STREAM_SECONDS:
        signal.clear()
        async with state.read_sessionmaker() as session:
            visitor = await service.visitor_by_id(session, visitor_id)
            if visitor is None:
                return
            if first:
                first = False
                yield visitor
                continue
            since = since or visitor.created_at
            rows = await service.changes(session, visitor, since, pending)
            out = []
            for message in rows:
                if message.id in shown:
                    continue
                if message.direction == "OUTBOUND" and message.status not in (
                    service.VISIBLE_OUTBOUND
                ):
                    if message.status == "QUEUED":
                        pending.add(message.id)
                    else:
                        pending.discard(message.id)
                    continue
                pending.discard(message.id)
                shown.add(message.id)
                out.append(message)
                since = max(since, message.created_at)
            office_id = visitor.office_id
        last_read = time.monotonic()
        if out:
            await mark_delivered(state, office_id, out)
            for message in out:
                data = VisitorMessage.model_validate(message).model_dump_json(by_alias=True)
                yield f"id: {message.id}\nevent: message\ndata: {data}\n\n"
        while not signal.is_set():
            now = time.monotonic()
            if now - last_read >= poll or now - started >= STREAM_SECONDS:
                break
            if now - last_beat >= HEARTBEAT_SECONDS:
                last_beat = now
                yield ": keep-alive\n\n"
                continue
            wait = min(
                poll - (now - last_read),
                HEARTBEAT_SECONDS - (now - last_beat),
                STREAM_SECONDS - (now - started),
            )
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(signal.wait(), max(wait, 0.01))


async def mark_delivered(state: Any, office_id: str, rows: list[Message]) -> None:
    """Shown outbound messages become DELIVERED, in a write transaction of their own (the
    history's session reads only; the stream holds none)."""
    ids = [m.id for m in rows if m.direction == "OUTBOUND" and m.status == "SENT"]
    if not ids:
        return
    async with state.sessionmaker() as session:
        if session.get_bind().dialect.name == "sqlite":
            await session.execute(text("BEGIN IMMEDIATE"))
        await service.mark_delivered(session, office_id, ids)
        await session.commit()
