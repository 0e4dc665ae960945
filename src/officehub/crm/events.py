"""The crm.lead.* events and their payloads."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import Field
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.crm.models import Card
from officehub.events.catalogue import Event, declare
from officehub.events.service import emit
from officehub.kit.id_params import ServerId
from officehub.kit.schemas import ApiModel
from officehub.kit.timeutil import Timestamp


class LeadPayload(ApiModel):
    """A CRM card (lead), as every crm.lead.* event carries it."""

    id: ServerId
    funnel_id: ServerId
    column_id: ServerId
    person_id: ServerId
    conversation_id: ServerId | None
    user_id: ServerId | None
    legal_area_id: ServerId | None
    column_changed_at: Timestamp


class LeadUpdatedPayload(LeadPayload):
    changes: list[str] = Field(
        description="What changed: userId, legalAreaId, customFields, tags, leadOrigin"
    )


class LeadMovedPayload(LeadPayload):
    from_column_id: ServerId
    to_column_id: ServerId


class LeadOverduePayload(LeadPayload):
    time_limit_days: int = Field(description="The column's limit the card went past")


L = TypeVar("L", bound=LeadPayload)

LEAD_CREATED = declare("crm.lead.created", LeadPayload)
LEAD_UPDATED = declare("crm.lead.updated", LeadUpdatedPayload)
LEAD_DELETED = declare("crm.lead.deleted", LeadPayload)
LEAD_MOVED = declare("crm.lead.moved", LeadMovedPayload)
LEAD_OVERDUE = declare("crm.lead.overdue", LeadOverduePayload)


def card_payload(card: Card) -> dict[str, Any]:
    return {
        "id": card.id,
        "funnelId": card.funnel_id,
        "columnId": card.column_id,
        "personId": card.person_id,
        "conversationId": card.conversation_id,
        "userId": card.user_id,
        "legalAreaId": card.legal_area_id,
        "columnChangedAt": card.column_changed_at,
    }


async def emit_lead(session: AsyncSession, card: Card, event: Event[L], **extra: Any) -> None:
    """``event`` for ``card``; ``extra`` the payload's own fields beyond the card's
    (``changes``, ``fromColumnId``...), checked by its model."""
    await emit(
        session,
        card.office_id,
        event,
        event.payload.model_validate({**card_payload(card), **extra}),
        conversation_id=card.conversation_id,
        integration_id=card.integration_id,
    )
