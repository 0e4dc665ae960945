"""The web chat's own event: an integration refusing new chats (a flood)."""

from __future__ import annotations

from pydantic import Field

from officehub.events.catalogue import declare
from officehub.kit.id_params import ServerId
from officehub.kit.schemas import ApiModel


class WebchatFloodedPayload(ApiModel):
    integration_id: ServerId
    inbox_id: ServerId = Field(description="The integration's inbox")
    limit: str = Field(description="The limit its starts went over, e.g. '60 per 1 minute'")
    retry_after_seconds: int = Field(description="When the next start may succeed")


FLOODED = declare("chat.webchat.flooded", WebchatFloodedPayload)
