from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import AliasChoices, Field, StringConstraints, field_validator
from typing_extensions import TypeAliasType

from officehub.kit.id_params import Id, ServerId
from officehub.kit.ids import ID_PATTERN
from officehub.kit.schemas import HTTP_URL_PATTERN, ApiModel, BodyModel, LongText
from officehub.kit.timeutil import Timestamp

Text = Annotated[LongText, StringConstraints(min_length=1, max_length=4096)]
MediaUrl = Annotated[str, StringConstraints(max_length=2000, pattern=HTTP_URL_PATTERN)]


def _sent(field: str, *absent: str) -> dict[str, Any]:
    """JSON Schema: ``field`` is sent and not null (and the ``absent`` fields are not sent
    or null)."""
    properties: dict[str, Any] = {field: {"type": "string"}}
    for name in absent:
        properties[name] = {"type": "null"}
    return {"required": [field], "properties": properties}


class InboundIn(BodyModel):
    """What the contact wrote: ``text``, or media (``mediaUrl``, with ``text`` as caption)."""

    SCHEMA_RULES: ClassVar[dict[str, Any]] = {"anyOf": [_sent("text"), _sent("mediaUrl")]}

    text: Text | None = None
    media_url: MediaUrl | None = None


class FallbackTemplate(BodyModel):
    """The APPROVED template (of the conversation's official integration) sent instead of
    a free-form message when the 24-hour window is closed: at once when it is closed at the
    send, or once if the platform fails the send with 131047 (re-engagement). Its body
    placeholders are filled by ``variables``; a template with a media header cannot be one."""

    name: Annotated[str, StringConstraints(min_length=1, max_length=512)]
    language: Annotated[str, StringConstraints(max_length=16)] | None = None
    variables: list[Annotated[str, StringConstraints(max_length=1024)]] | None = Field(
        None, max_length=100
    )


class OutboundIn(BodyModel):
    """``{text}`` (with an optional ``fallbackTemplate``), a template send
    ``{templateName, language, variables, headerMediaPath}``, or a file the office uploaded
    to the conversation (``POST /conversation/{id}/media``) ``{mediaPath, caption,
    fileName}``."""

    SCHEMA_RULES: ClassVar[dict[str, Any]] = {
        "oneOf": [
            _sent("text", "templateName", "mediaPath", "caption", "fileName"),
            _sent("templateName", "text", "mediaPath", "fallbackTemplate", "caption", "fileName"),
            _sent("mediaPath", "text", "templateName", "fallbackTemplate"),
        ]
    }

    text: Text | None = None
    template_name: Annotated[str, StringConstraints(min_length=1, max_length=512)] | None = None
    language: Annotated[str, StringConstraints(max_length=16)] | None = None
    variables: list[Annotated[str, StringConstraints(max_length=1024)]] | None = None
    header_media_path: Annotated[str, StringConstraints(max_length=1000)] | None = None
    reply_to_message_id: Annotated[str, StringConstraints(pattern=ID_PATTERN)] | None = Field(
        default=None,
        description="A message of this conversation to reply to (the client sees it quoted)",
    )
    fallback_template: FallbackTemplate | None = None
    media_path: Annotated[str, StringConstraints(min_length=1, max_length=1000)] | None = Field(
        default=None,
        description="The `storagePath` of a file uploaded to this conversation "
        "(`POST /conversation/{id}/media`): sent as an image, video, audio or document by "
        "its type",
    )
    caption: Annotated[LongText, StringConstraints(min_length=1, max_length=1024)] | None = Field(
        default=None, description="Text under the file (not shown for audio)"
    )
    file_name: Annotated[str, StringConstraints(min_length=1, max_length=255)] | None = Field(
        default=None,
        description="The name the client sees for a document: send the upload's "
        "`fileName` (default: the stored name)",
    )


UploadKind = TypeAliasType("UploadKind", Literal["image", "video", "audio", "document"])


class MediaUploadOut(ApiModel):
    """A file stored for this conversation: send it with ``{mediaPath: storagePath}``."""

    storage_path: str
    url: str = Field(description="An expiring signed link to the file")
    file_name: str = Field(description="The client's name for the file, cleaned")
    media_kind: UploadKind
    mime_type: str = Field(description="The type read from the bytes")


class ReactionIn(BodyModel):
    """An emoji reaction of the office to a message; an empty ``emoji`` removes it."""

    emoji: Annotated[str, StringConstraints(max_length=16)]


MessageType = TypeAliasType(
    "MessageType",
    Literal[
        "TEXT",
        "TEMPLATE",
        "MEDIA",
        "NOTE",
        "LOCATION",
        "CONTACTS",
        "INTERACTIVE",
        "ORDER",
        "SYSTEM",
        "UNSUPPORTED",
        "REACTION",
    ],
)
ReactionSender = TypeAliasType("ReactionSender", Literal["CONTACT", "OFFICE"])
MediaKind = TypeAliasType("MediaKind", Literal["image", "audio", "video", "document", "sticker"])
MessageDirection = TypeAliasType("MessageDirection", Literal["INBOUND", "OUTBOUND"])
ReadStatus = TypeAliasType("ReadStatus", Literal["PENDING", "SENT", "FAILED", "RECORDED"])


class Reaction(ApiModel):
    emoji: str
    sender: ReactionSender = Field(
        validation_alias=AliasChoices("from", "sender"),
        serialization_alias="from",
        description="Who reacted: the contact or the office",
    )
    at: Timestamp


class MediaContent(ApiModel):
    """An image, audio, video, document or sticker (the file itself: ``mediaUrl``)."""

    kind: Literal["media"]
    media_kind: MediaKind
    mime_type: str | None = None
    file_name: str | None = None
    caption: str | None = None
    animated: bool | None = None
    voice: bool | None = None


class LocationContent(ApiModel):
    kind: Literal["location"]
    name: str | None = None
    address: str | None = None
    latitude: float
    longitude: float
    url: str | None = Field(default=None, description="The place's own link, when sent")
    map_url: str = Field(description="The point on a map")


class SharedPhone(ApiModel):
    phone: str | None = None
    wa_id: str | None = None
    type: str | None = None


class SharedEmail(ApiModel):
    email: str
    type: str | None = None


class SharedContact(ApiModel):
    name: str | None = None
    phones: list[SharedPhone] = Field(default_factory=list)
    emails: list[SharedEmail] = Field(default_factory=list)
    organization: str | None = None


class ContactsContent(ApiModel):
    kind: Literal["contacts"]
    contacts: list[SharedContact]


class ReplyContent(ApiModel):
    """A button or list option the contact picked (``replyType``: ``button`` for a
    template's quick reply, ``button_reply``, ``list_reply``)."""

    kind: Literal["reply"]
    reply_type: str
    id: str | None = None
    title: str
    description: str | None = None


class FlowReplyContent(ApiModel):
    """A completed WhatsApp Flow (``nfm_reply``): the answers, as sent."""

    kind: Literal["flow"]
    name: str | None = None
    body: str | None = None
    response: Any = Field(
        description="The flow's response_json, parsed (the raw string when not JSON)"
    )


class OrderItem(ApiModel):
    product_retailer_id: str | None = None
    quantity: float | None = None
    item_price: float | None = None
    currency: str | None = None


class OrderContent(ApiModel):
    kind: Literal["order"]
    catalog_id: str | None = None
    note: str | None = None
    items: list[OrderItem]
    total: float | None = Field(default=None, description="Sum of quantity times itemPrice")
    currency: str | None = None


class SystemContent(ApiModel):
    """A notice of the platform in the conversation (e.g. the client changed number)."""

    kind: Literal["system"]
    system_type: str | None = None
    body: str | None = None
    new_wa_id: str | None = None


class PlatformErrorOut(ApiModel):
    code: int | None = None
    title: str | None = None
    message: str | None = None
    details: str | None = None


class UnsupportedContent(ApiModel):
    """A message the service could not read: the platform's type and errors."""

    kind: Literal["unsupported"]
    platform_type: str | None = None
    errors: list[PlatformErrorOut] = Field(default_factory=list)


MessageContent = Annotated[
    MediaContent
    | LocationContent
    | ContactsContent
    | ReplyContent
    | FlowReplyContent
    | OrderContent
    | SystemContent
    | UnsupportedContent,
    Field(discriminator="kind"),
]


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

    category: str | None = Field(
        description="`marketing`, `marketing_lite`, `utility`, `authentication`, "
        "`authentication_international`, `service`… as the platform says"
    )
    type: str | None = Field(
        default=None,
        description="Per-message pricing (`PMP`): `regular` (billed), `free_customer_service` "
        "or `free_entry_point`",
    )
    billable: bool | None = Field(description="Deprecated by the platform (July 2025)")
    pricing_model: str | None = Field(description="`PMP` (per message) since July 2025")
    conversation: PricingConversation | None


class MessageOut(ApiModel):
    id: ServerId
    conversation_id: ServerId
    direction: MessageDirection
    type: MessageType
    text: str | None
    template_name: str | None
    media_url: str | None
    status: str
    external_id: str | None = None
    error: str | None = None
    error_detail: MessageError | None = None
    pricing: MessagePricing | None = None
    created_at: Timestamp
    content: MessageContent | None = Field(
        default=None, description="What the channel sent beyond text, by kind"
    )
    reply_to: str | None = Field(
        default=None,
        validation_alias=AliasChoices("reply_to_id", "replyTo"),
        serialization_alias="replyTo",
        description="The id of the message of this conversation this one replies to",
    )
    reply_to_external_id: str | None = Field(
        default=None,
        description="The channel's id of the message this one quotes, kept even when that "
        "message is not stored here (`replyTo` is then null)",
    )
    forwarded: bool = False
    reactions: list[Reaction] = Field(default_factory=list)
    original_text: str | None = Field(
        default=None, description="The text before the sender edited or deleted the message"
    )
    edited_at: Timestamp | None = None
    deleted_at: Timestamp | None = None

    @field_validator("reactions", mode="before")
    @classmethod
    def _no_reactions(cls, value: Any) -> Any:
        return [] if value is None else value


class ReadIn(BodyModel):
    """Optional: the newest message the operator read (an inbound message of the
    conversation); without it, the conversation's newest inbound message."""

    message_id: Id | None = None


class ReadOut(ApiModel):
    """The conversation's read mark. ``status``: ``PENDING`` (the platform is being told),
    ``SENT`` (told: the client sees the blue ticks), ``FAILED`` (the platform refused it,
    ``error`` says why), ``RECORDED`` (a channel without read receipts: only kept);
    null with ``messageId`` null when the contact never wrote."""

    conversation_id: ServerId
    message_id: ServerId | None
    status: ReadStatus | None
    error: str | None = None
