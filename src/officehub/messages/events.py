"""The chat.message.* events: the message as the API returns it."""

from __future__ import annotations

from pydantic import Field

from officehub.events.catalogue import declare
from officehub.messages.schemas import MessageOut


class MessageStatusPayload(MessageOut):
    previous_status: str = Field(description="The status before this change")


RECEIVED = declare("chat.message.received", MessageOut)
SENT = declare("chat.message.sent", MessageOut)
STATUS = declare("chat.message.status", MessageStatusPayload)
UPDATED = declare("chat.message.updated", MessageOut)
