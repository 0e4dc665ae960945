"""The chat.conversation.* events: the conversation as the API returns it."""

from __future__ import annotations

from pydantic import Field

from officehub.conversations.schemas import ConversationOut
from officehub.events.catalogue import declare
from officehub.kit.id_params import ServerId


class ConversationAssignedPayload(ConversationOut):
    previous_assigned_user_id: ServerId | None = Field(description="The user assigned before")
    previous_department_id: ServerId | None = Field(description="The department before")


CREATED = declare("chat.conversation.created", ConversationOut)
UPDATED = declare("chat.conversation.updated", ConversationOut)
ASSIGNED = declare("chat.conversation.assigned", ConversationAssignedPayload)
