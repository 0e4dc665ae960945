"""The platform's webhook notification, as much of it as the service reads.

Plain models (snake_case as the platform sends it); unknown fields are ignored so new
platform fields never break reception.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator


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


class PlatformConversation(_Platform):
    id: Any = None
    expiration_timestamp: Any = None
    origin: Any = None


class Status(_Platform):
    id: str = Field(min_length=1, max_length=128)
    status: str
    recipient_id: str | None = None
    errors: list[PlatformError] = Field(default_factory=list)
    pricing: Pricing | None = None
    conversation: PlatformConversation | None = None

    @field_validator("pricing", "conversation", mode="before")
    @classmethod
    def _object_or_none(cls, value: Any) -> Any:
        return value if isinstance(value, dict) else None


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
