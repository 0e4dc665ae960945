"""``emit``: records an event in the outbox, in the caller's transaction."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.events.catalogue import EVENT_NAMES
from officehub.events.models import OutboxEvent
from officehub.timeutil import utcnow


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

    ``causation_id`` and ``depth`` name the event that caused this one (automation chains);
    ``target_webhook_id`` limits delivery to one webhook (``webhook.test``).
    """
    if name not in EVENT_NAMES:
        raise ValueError(f"unknown event {name!r}")
    event = OutboxEvent(
        office_id=office_id,
        name=name,
        data=data,
        created_at=utcnow(),
        causation_id=causation_id,
        depth=depth,
        conversation_id=conversation_id,
        integration_id=integration_id,
        target_webhook_id=target_webhook_id,
        dispatched_at=None,
    )
    session.add(event)
    await session.flush()
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
    now = utcnow()
    session.add_all(
        [
            OutboxEvent(
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
    )
    await session.flush()
