"""The case.* events: a case's new movement, a changed case."""

from __future__ import annotations

from pydantic import Field

from officehub.cases.schemas import CaseMovementOut, CaseOut
from officehub.events.catalogue import declare
from officehub.kit.id_params import ServerId


class CaseMovementPayload(CaseMovementOut):
    court: str = Field(description="The DataJud alias of the case's court")
    conversation_id: ServerId | None = Field(
        description="The case's conversation, else the contact's latest; null when none"
    )


class CaseUpdatedPayload(CaseOut):
    changes: list[str] = Field(
        description="What changed: conversationId, legalAreaId, watch, movements, checkStatus"
    )


MOVEMENT_CREATED = declare("case.movement.created", CaseMovementPayload)
UPDATED = declare("case.updated", CaseUpdatedPayload)
