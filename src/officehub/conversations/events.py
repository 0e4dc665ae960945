"""The chat.conversation.* events: the conversation as the API returns it."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from officehub.conversations.schemas import ConversationOut
from officehub.events.catalogue import declare
from officehub.kit.id_params import ServerId
from officehub.kit.timeutil import Timestamp


class ConversationAssignedPayload(ConversationOut):
    previous_assigned_user_id: ServerId | None = Field(description="The user assigned before")
    previous_department_id: ServerId | None = Field(description="The department before")


class SlaBreachedPayload(ConversationOut):
    breach: Literal["FIRST_RESPONSE", "NEXT_RESPONSE", "RESOLUTION"] = Field(
        description="Which due time was missed"
    )
    due_at: Timestamp = Field(description="The due time that passed unmet")


CREATED = declare("chat.conversation.created", ConversationOut)
UPDATED = declare("chat.conversation.updated", ConversationOut)
ASSIGNED = declare("chat.conversation.assigned", ConversationAssignedPayload)
SLA_BREACHED = declare("chat.sla.breached", SlaBreachedPayload)
