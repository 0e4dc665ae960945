"""The platform's webhook notification, as much of it as the service reads.

Plain models (snake_case as the platform sends it); unknown fields are ignored so new
platform fields never break reception. The envelope is walked leniently by the service
(``entry`` → ``changes`` → ``value``) and each message and status validated on its own, so
one part that cannot be read never costs the others.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from officehub.contacts.whatsapp_identity import user_id_or_none, username_or_none


class _Platform(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)


class Profile(_Platform):
    name: str | None = None
    username: str | None = None

    @field_validator("name", "username", mode="before")
    @classmethod
    def _text_or_none(cls, value: Any) -> Any:
        return value if isinstance(value, str) else None

    @field_validator("username")
    @classmethod
    def _username(cls, value: str | None) -> str | None:
        return username_or_none(value)


class SenderContact(_Platform):
    """An entry of ``contacts``: the phone (``wa_id``) and the business-scoped user id
    (``user_id``, since April 2026), either may be missing; a malformed one reads as
    missing."""

    wa_id: str | None = Field(default=None, max_length=32)
    user_id: str | None = None
    parent_user_id: str | None = None
    profile: Profile | None = None

    @field_validator("wa_id", mode="before")
    @classmethod
    def _digits_or_none(cls, value: Any) -> Any:
        return value if isinstance(value, str) and value and len(value) <= 32 else None

    @field_validator("user_id", "parent_user_id", mode="before")
    @classmethod
    def _user_id(cls, value: Any) -> Any:
        return user_id_or_none(value)

    @field_validator("profile", mode="before")
    @classmethod
    def _object_or_none(cls, value: Any) -> Any:
        return value if isinstance(value, dict) else None


class Text(_Platform):
    body: str


class Reply(_Platform):
    id: str | None = None
    title: str
    description: str | None = None


class FlowReply(_Platform):
    name: str | None = None
    body: str | None = None
    response_json: str | None = None


class Interactive(_Platform):
    type: str
    button_reply: Reply | None = None
    list_reply: Reply | None = None
    nfm_reply: FlowReply | None = None


class Button(_Platform):
    text: str
    payload: str | None = None


class Media(_Platform):
    id: str
    mime_type: str | None = None
    caption: str | None = None
    filename: str | None = None
    animated: bool | None = None
    voice: bool | None = None


class Location(_Platform):
    latitude: float
    longitude: float
    name: str | None = None
    address: str | None = None
    url: str | None = None


class SharedName(_Platform):
    formatted_name: str | None = None
    first_name: str | None = None
    last_name: str | None = None


class SharedPhone(_Platform):
    phone: str | None = None
    wa_id: str | None = None
    type: str | None = None


class SharedEmail(_Platform):
    email: str
    type: str | None = None


class SharedOrg(_Platform):
    company: str | None = None


class SharedContact(_Platform):
    name: SharedName | None = None
    phones: list[SharedPhone] = Field(default_factory=list)
    emails: list[SharedEmail] = Field(default_factory=list)
    org: SharedOrg | None = None


class Reaction(_Platform):
    message_id: str = Field(min_length=1, max_length=128)
    emoji: str | None = None


class OrderItem(_Platform):
    product_retailer_id: str | None = None
    quantity: float | None = None
    item_price: float | None = None
    currency: str | None = None


class Order(_Platform):
    catalog_id: str | None = None
    text: str | None = None
    product_items: list[OrderItem] = Field(default_factory=list)


class System(_Platform):
    body: str | None = None
    type: str | None = None
    wa_id: str | None = None
    new_wa_id: str | None = None
    customer: str | None = None
    # ``user_changed_user_id`` (and ``user_changed_number`` since BSUIDs): the new BSUID.
    user_id: str | None = None
    new_user_id: str | None = None

    @field_validator("user_id", "new_user_id", mode="before")
    @classmethod
    def _user_id(cls, value: Any) -> Any:
        return user_id_or_none(value)


class Context(_Platform):
    id: str | None = None
    forwarded: bool | None = None
    frequently_forwarded: bool | None = None


class Edit(_Platform):
    original_message_id: str = Field(min_length=1, max_length=128)
    message: dict[str, Any] | None = None


class Revoke(_Platform):
    original_message_id: str = Field(min_length=1, max_length=128)


class Referral(_Platform):
    """Where a Click-to-WhatsApp client came from (an ad or a post). Any JSON value is
    taken (and cleaned where it is used): an odd referral never refuses the message."""

    source_url: Any = None
    source_type: Any = None
    source_id: Any = None
    headline: Any = None
    body: Any = None
    media_type: Any = None
    image_url: Any = None
    video_url: Any = None
    thumbnail_url: Any = None
    ctwa_clid: Any = None


class PlatformMessage(_Platform):
    """One of ``messages``. The sender is ``from`` (the phone digits) and/or
    ``from_user_id`` (the BSUID; the only one for a user with a username whose phone the
    platform withholds); a message with neither cannot be attributed."""

    sender: str | None = Field(default=None, alias="from", min_length=1, max_length=32)
    from_user_id: str | None = None
    from_parent_user_id: str | None = None
    id: str = Field(min_length=1, max_length=128)
    timestamp: str | None = None
    type: str
    context: Context | None = None
    text: Text | None = None
    interactive: Interactive | None = None
    button: Button | None = None
    image: Media | None = None
    audio: Media | None = None
    video: Media | None = None
    document: Media | None = None
    sticker: Media | None = None
    location: Location | None = None
    contacts: list[SharedContact] | None = None
    reaction: Reaction | None = None
    order: Order | None = None
    system: System | None = None
    edit: Edit | None = None
    revoke: Revoke | None = None
    errors: list[PlatformError] = Field(default_factory=list)
    referral: Referral | None = None

    @field_validator("sender", mode="before")
    @classmethod
    def _phone_or_none(cls, value: Any) -> Any:
        # a phone of another shape than documented reads as missing: the BSUID may still
        # name the sender (the model check below refuses a message naming none)
        return value if isinstance(value, str) and 0 < len(value) <= 32 else None

    @field_validator("from_user_id", "from_parent_user_id", mode="before")
    @classmethod
    def _user_id(cls, value: Any) -> Any:
        return user_id_or_none(value)

    @model_validator(mode="after")
    def _attributed(self) -> PlatformMessage:
        if self.sender is None and self.from_user_id is None:
            raise ValueError("neither from nor from_user_id names the sender")
        return self


class ErrorData(_Platform):
    details: Any = None


class PlatformError(_Platform):
    code: int | str | None = None
    title: str | None = None
    message: str | None = None
    error_data: ErrorData | None = None

    @field_validator("error_data", mode="before")
    @classmethod
    def _object_or_none(cls, value: Any) -> Any:
        return value if isinstance(value, dict) else None


# What statuses carry beyond the status word: any JSON value is taken and cleaned where it
# is used (``channels.platform_status``), so an odd pricing never refuses a notification.
class Pricing(_Platform):
    billable: Any = None
    pricing_model: Any = None
    category: Any = None
    type: Any = None


class PlatformConversation(_Platform):
    id: Any = None
    expiration_timestamp: Any = None
    origin: Any = None


class Status(_Platform):
    id: str = Field(min_length=1, max_length=128)
    status: str
    recipient_id: str | None = None
    recipient_user_id: str | None = None
    errors: list[PlatformError] = Field(default_factory=list)
    pricing: Pricing | None = None
    conversation: PlatformConversation | None = None

    @field_validator("pricing", "conversation", mode="before")
    @classmethod
    def _object_or_none(cls, value: Any) -> Any:
        return value if isinstance(value, dict) else None

    @field_validator("recipient_id", mode="before")
    @classmethod
    def _digits_or_none(cls, value: Any) -> Any:
        return value if isinstance(value, str) and 0 < len(value) <= 32 else None

    @field_validator("recipient_user_id", mode="before")
    @classmethod
    def _user_id(cls, value: Any) -> Any:
        return user_id_or_none(value)


class Echo(PlatformMessage):
    """One of ``message_echoes`` (``smb_message_echoes``): a message the business typed in
    the WhatsApp Business app, ``from`` its own number, ``to`` the client (by phone and/or,
    since BSUIDs, ``to_user_id``)."""

    to: str | None = None
    to_user_id: str | None = None

    @field_validator("to", mode="before")
    @classmethod
    def _to_or_none(cls, value: Any) -> Any:
        return value if isinstance(value, str) and 0 < len(value) <= 32 else None

    @field_validator("to_user_id", mode="before")
    @classmethod
    def _to_user_id(cls, value: Any) -> Any:
        return user_id_or_none(value)
