"""The flows consumer's registration with the outbox (``events.registry``).

It wants what a conversation's flow reacts to (``flows.runtime.handle_event``): an inbound
message or an assignment in a conversation. ``install`` is called by
``officehub.hook_subscriptions.install`` only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.events import registry
from officehub.flows.runtime import FLOWS

if TYPE_CHECKING:
    from officehub.events.models import OutboxEvent

EVENTS = frozenset({"chat.message.received", "chat.conversation.assigned"})


def _wanted(event: OutboxEvent) -> bool:
    return event.name in EVENTS and event.conversation_id is not None


async def wants(_session: AsyncSession, events: Sequence[OutboxEvent]) -> list[bool]:
    return [_wanted(e) for e in events]


def sql_params(event: OutboxEvent) -> dict[str, Any]:
    return {"flows_wanted": _wanted(event)}


REGISTRATION = registry.Registration(FLOWS, wants, ":flows_wanted", sql_params)


def install() -> None:
    registry.register(REGISTRATION)
