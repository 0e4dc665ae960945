from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import StringConstraints

from officehub.schemas import HTTP_URL_PATTERN, ApiModel, BodyModel, LongText
from officehub.timeutil import Timestamp

Text = Annotated[LongText, StringConstraints(min_length=1, max_length=4096)]
MediaUrl = Annotated[str, StringConstraints(max_length=2000, pattern=HTTP_URL_PATTERN)]


def _sent(field: str, absent: str | None = None) -> dict[str, Any]:
    """JSON Schema: ``field`` is sent and not null (and ``absent``, if named, is not sent
    or null)."""
    properties: dict[str, Any] = {field: {"type": "string"}}
    if absent is not None:
        properties[absent] = {"type": "null"}
    return {"required": [field], "properties": properties}


class InboundIn(BodyModel):
    """What the contact wrote: ``text``, or media (``mediaUrl``, with ``text`` as caption)."""

    SCHEMA_RULES: ClassVar[dict[str, Any]] = {"anyOf": [_sent("text"), _sent("mediaUrl")]}

    text: Text | None = None
    media_url: MediaUrl | None = None


class OutboundIn(BodyModel):
    """``{text}``, or a template send ``{templateName, language, variables, headerMediaPath}``."""

    SCHEMA_RULES: ClassVar[dict[str, Any]] = {
        "oneOf": [_sent("text", absent="templateName"), _sent("templateName", absent="text")]
    }

    text: Text | None = None
    template_name: Annotated[str, StringConstraints(min_length=1, max_length=512)] | None = None
    language: Annotated[str, StringConstraints(max_length=16)] | None = None
    variables: list[Annotated[str, StringConstraints(max_length=1024)]] | None = None
    header_media_path: Annotated[str, StringConstraints(max_length=1000)] | None = None


class MessageError(ApiModel):
    """A failure the messaging platform reported (for example ``131047``: more than 24 hours
    since the client's last message; ``131026``: the message could not be delivered)."""

    code: str | None
    title: str | None
    details: str | None


class PricingConversation(ApiModel):
    id: str | None
    origin_type: str | None
    expires_at: Timestamp | None


class MessagePricing(ApiModel):
    """What the platform said the send costs (its status notifications' ``pricing`` and
    ``conversation``)."""

    category: str | None
    billable: bool | None
    pricing_model: str | None
    conversation: PricingConversation | None


class MessageOut(ApiModel):
    id: str
    conversation_id: str
    direction: Literal["INBOUND", "OUTBOUND"]
    type: Literal["TEXT", "TEMPLATE", "MEDIA", "NOTE"]
    text: str | None
    template_name: str | None
    media_url: str | None
    status: str
    external_id: str | None = None
    error: str | None = None
    error_detail: MessageError | None = None
    pricing: MessagePricing | None = None
    created_at: Timestamp
