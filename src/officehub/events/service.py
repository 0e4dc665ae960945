"""``emit``: records an event in the outbox, in the caller's transaction."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy import Table, insert, text
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.events.catalogue import EVENT_NAMES
from officehub.events.models import ConsumerEvent, OutboxEvent
from officehub.events.wakeup import NOTIFY_CHANNEL, mark_emitted
from officehub.ids import new_id
from officehub.timeutil import utcnow

_EVENT_COLUMNS = tuple(c.name for c in OutboxEvent.__table__.columns)
_INSERT_EVENT = insert(cast(Table, OutboxEvent.__table__))
_INSERT_CONSUMER_EVENT = insert(cast(Table, ConsumerEvent.__table__))

CONSUMERS = ("automation", "flows")
"""The outbox consumers that keep a progress row per event (webhook fan-out keeps its
``dispatched_at`` flag; flows will be added here)."""


@dataclass(frozen=True)
class Cause:
    """The event whose handling is making changes, and that event's depth."""

    event_id: str
    depth: int


_cause: ContextVar[Cause | None] = ContextVar("officehub_event_cause", default=None)


@contextlib.contextmanager
def caused_by(cause: Cause) -> Iterator[None]:
    """Every event emitted inside is recorded as caused by ``cause`` (one level deeper)."""
    token = _cause.set(cause)
    try:
        yield
    finally:
        _cause.reset(token)


async def emit(
    session: AsyncSession,
    office_id: str,
    name: str,
    data: dict[str, Any],
    *,
    causation_id: str | None = None,
    depth: int = 0,
    conversation_id: str | None = None,
    integration_id: str | None = None,
    target_webhook_id: str | None = None,
) -> OutboxEvent:
    """Adds the event to the session; it commits, or rolls back, with the change itself.

    ``causation_id`` and ``depth`` name the event that caused this one (automation chains;
    inside ``caused_by`` they are taken from there); ``target_webhook_id`` limits delivery
    to one webhook (``webhook.test``). Each consumer gets its progress row in the same
    transaction, and workers are woken once it commits.
    """
    if name not in EVENT_NAMES:
        raise ValueError(f"unknown event {name!r}")
    cause = _cause.get()
    if causation_id is None and cause is not None:
        causation_id, depth = cause.event_id, cause.depth + 1
    now = utcnow()
    event = OutboxEvent(
        id=new_id(),
        office_id=office_id,
        name=name,
        data=data,
        created_at=now,
        causation_id=causation_id,
        depth=depth,
        conversation_id=conversation_id,
        integration_id=integration_id,
        target_webhook_id=target_webhook_id,
        dispatched_at=None,
    )
    # What the request changed before is written first (events keep their order), then the
    # event and its consumers' rows as two prebuilt Core inserts: the unit of work's
    # bookkeeping for two objects cost more than the statements themselves. The returned
    # event is not in the session (nothing reads it back there).
    await session.flush()
    await session.execute(_INSERT_EVENT, {c: getattr(event, c) for c in _EVENT_COLUMNS})
    if target_webhook_id is None:
        await session.execute(
            _INSERT_CONSUMER_EVENT,
            [
                {
                    "office_id": office_id,
                    "consumer": consumer,
                    "event_id": event.id,
                    "ordering_key": conversation_id or event.id,
                    "created_at": now,
                    "attempts": 0,
                }
                for consumer in CONSUMERS
            ],
        )
    if mark_emitted(session) and session.get_bind().dialect.name == "postgresql":
        await session.execute(text("SELECT pg_notify(:channel, '')"), {"channel": NOTIFY_CHANNEL})
    return event


@dataclass(frozen=True)
class PendingEvent:
    office_id: str
    name: str
    data: dict[str, Any]
    conversation_id: str | None = None
    integration_id: str | None = None


async def emit_many(session: AsyncSession, events: Sequence[PendingEvent]) -> None:
    """``emit`` for a batch (a worker recording many outcomes): one flush for them all."""
    for pending in events:
        if pending.name not in EVENT_NAMES:
            raise ValueError(f"unknown event {pending.name!r}")
    if not events:
        return
    now = utcnow()
    records = [
        OutboxEvent(
            id=new_id(),
            office_id=e.office_id,
            name=e.name,
            data=e.data,
            created_at=now,
            causation_id=None,
            depth=0,
            conversation_id=e.conversation_id,
            integration_id=e.integration_id,
            target_webhook_id=None,
            dispatched_at=None,
        )
        for e in events
    ]
    session.add_all(records)
    await session.flush()
    session.add_all(
        [
            ConsumerEvent(
                office_id=record.office_id,
                consumer=consumer,
                event_id=record.id,
                ordering_key=record.conversation_id or record.id,
                created_at=now,
                attempts=0,
            )
            for record in records
            for consumer in CONSUMERS
        ]
    )
    await session.flush()
    if mark_emitted(session) and session.get_bind().dialect.name == "postgresql":
        await session.execute(text("SELECT pg_notify(:channel, '')"), {"channel": NOTIFY_CHANNEL})
