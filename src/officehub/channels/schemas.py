"""The platform's webhook notification, as much of it as the service reads.

Plain models (snake_case as the platform sends it); unknown fields are ignored so new
platform fields never break reception.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class _Platform(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)


class Profile(_Platform):
    name: str | None = None


class SenderContact(_Platform):
    wa_id: str
    profile: Profile | None = None


class Text(_Platform):
    body: str


class Reply(_Platform):
    id: str
    title: str
    description: str | None = None


class Interactive(_Platform):
    type: str
    button_reply: Reply | None = None
    list_reply: Reply | None = None


class Button(_Platform):
    text: str
    payload: str | None = None


class Media(_Platform):
    id: str
    mime_type: str | None = None
    caption: str | None = None
    filename: str | None = None


class Referral(_Platform):
    """Where a Click-to-WhatsApp client came from (an ad or a post)."""

    source_url: str | None = None
    source_type: str | None = None
    source_id: str | None = None
    headline: str | None = None
    body: str | None = None
    media_type: str | None = None
    image_url: str | None = None
    video_url: str | None = None
    thumbnail_url: str | None = None
    ctwa_clid: str | None = None


class PlatformMessage(_Platform):
    sender: str = Field(alias="from", min_length=1, max_length=32)
    id: str = Field(min_length=1, max_length=128)
    timestamp: str | None = None
    type: str
    text: Text | None = None
    interactive: Interactive | None = None
    button: Button | None = None
    image: Media | None = None
    audio: Media | None = None
    video: Media | None = None
    document: Media | None = None
    sticker: Media | None = None
    referral: Referral | None = None


class ErrorData(_Platform):
    details: str | None = None


class PlatformError(_Platform):
    code: int | str | None = None
    title: str | None = None
    message: str | None = None
    error_data: ErrorData | None = None


class Pricing(_Platform):
    billable: bool | None = None
    pricing_model: str | None = None
    category: str | None = None
    type: str | None = None


class Origin(_Platform):
    type: str | None = None


class PlatformConversation(_Platform):
    id: str | None = None
    expiration_timestamp: str | int | None = None
    origin: Origin | None = None


class Status(_Platform):
    id: str = Field(min_length=1, max_length=128)
    status: str
    timestamp: str | None = None
    recipient_id: str | None = None
    errors: list[PlatformError] = Field(default_factory=list)
    pricing: Pricing | None = None
    conversation: PlatformConversation | None = None


class Value(_Platform):
    """A change's value. For ``messages`` the fields below; for the account's other fields
    (template status, quality...) the platform's keys are kept as sent in ``model_extra``."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)

    contacts: list[SenderContact] = Field(default_factory=list)
    messages: list[PlatformMessage] = Field(default_factory=list)
    statuses: list[Status] = Field(default_factory=list)


class Change(_Platform):
    field: str
    value: Value


class Entry(_Platform):
    id: str | None = None
    changes: list[Change] = Field(default_factory=list)


class Notification(_Platform):
    object: str | None = None
    entry: list[Entry] = Field(default_factory=list)
