"""The crm.lead.* events and their payloads."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.crm.models import Card
from officehub.events.service import emit
from officehub.kit.timeutil import isoformat

LEAD_CREATED = "crm.lead.created"
LEAD_UPDATED = "crm.lead.updated"
LEAD_DELETED = "crm.lead.deleted"
LEAD_MOVED = "crm.lead.moved"
LEAD_OVERDUE = "crm.lead.overdue"


def card_payload(card: Card) -> dict[str, Any]:
    return {
        "id": card.id,
        "funnelId": card.funnel_id,
        "columnId": card.column_id,
        "personId": card.person_id,
        "conversationId": card.conversation_id,
        "userId": card.user_id,
        "legalAreaId": card.legal_area_id,
        "columnChangedAt": isoformat(card.column_changed_at),
    }


@dataclass(frozen=True)
class Cause:
    """The event whose handling made this change (automation chains), and its depth."""

    event_id: str
    depth: int


async def emit_lead(
    session: AsyncSession, card: Card, name: str, cause: Cause | None = None, **extra: Any
) -> None:
    await emit(
        session,
        card.office_id,
        name,
        {**card_payload(card), **extra},
        causation_id=None if cause is None else cause.event_id,
        depth=0 if cause is None else cause.depth + 1,
        conversation_id=card.conversation_id,
        integration_id=card.integration_id,
    )
