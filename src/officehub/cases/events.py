"""The case.* events: a case's new movement, a changed case."""

from __future__ import annotations

from pydantic import Field

from officehub.cases.schemas import CaseMovementOut, CaseOut
from officehub.events.catalogue import declare
from officehub.kit.id_params import ServerId
from officehub.kit.timeutil import Timestamp


class CaseMovementPayload(CaseMovementOut):
    court: str = Field(description="The DataJud alias of the case's court")
    conversation_id: ServerId | None = Field(
        description="The case's conversation, else the contact's latest; null when none"
    )


class CaseUpdatedPayload(CaseOut):
    changes: list[str] = Field(
        description="What changed: conversationId, legalAreaId, watch, movements, checkStatus, "
        "sourceStaleSince"
    )


class CaseSourceStalePayload(CaseOut):
    failing_since: Timestamp = Field(
        description="The first failed check since DataJud last answered usefully"
    )
    error: str | None = Field(description="Why the last check failed (no personal data)")


class CaseSourceRecoveredPayload(CaseOut):
    stale_from: Timestamp = Field(
        description="When the case had gone stale (its sourceStaleSince until this answer)"
    )


MOVEMENT_CREATED = declare("case.movement.created", CaseMovementPayload)
UPDATED = declare("case.updated", CaseUpdatedPayload)
SOURCE_STALE = declare("case.source.stale", CaseSourceStalePayload)
SOURCE_RECOVERED = declare("case.source.recovered", CaseSourceRecoveredPayload)
