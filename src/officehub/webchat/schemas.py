from __future__ import annotations

from typing import Annotated

from pydantic import AliasPath, Field, StringConstraints

from officehub.contacts.schemas import Email
from officehub.kit.id_params import ServerId
from officehub.kit.schemas import ApiModel, BodyModel, LongText, non_blank_schema
from officehub.kit.timeutil import Timestamp

VisitorName = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=200),
    non_blank_schema(200),
]
Phone = Annotated[str, StringConstraints(min_length=8, max_length=32, pattern=r"^[0-9+() .-]+$")]
ClientId = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_-]{1,64}$")]


class StartIn(BodyModel):
    """What the widget asks first: the name, and the phone or email (as the office set)."""

    name: VisitorName
    phone: Phone | None = None
    email: Email | None = None


class StartOut(ApiModel):
    token: str = Field(description="The visitor's token: send it in X-Visitor-Token")
    visitor_id: ServerId
    conversation_id: ServerId


class VisitorMessageIn(BodyModel):
    text: Annotated[LongText, StringConstraints(min_length=1, max_length=4096)]
    client_id: ClientId | None = Field(
        None, description="The widget's id of the message: a retried send is stored once"
    )


class VisitorMessage(ApiModel):
    """A message as the visitor sees it: no delivery internals, no notes."""

    id: ServerId
    direction: str
    type: str
    text: str | None
    media_url: str | None
    file_name: str | None = Field(
        default=None,
        validation_alias=AliasPath("content", "fileName"),
        description="The name of the file a media message carries, when known",
    )
    created_at: Timestamp


class VisitorHistory(ApiModel):
    conversation_id: ServerId
    data: list[VisitorMessage]


class CodeIn(BodyModel):
    code: Annotated[str, StringConstraints(pattern=r"^[0-9]{6}$")] = Field(
        description="The six digits received on WhatsApp"
    )


class CodeSentOut(ApiModel):
    """A code went to the claimed phone's WhatsApp (the code itself is never answered)."""

    channel: str = Field(description="WHATSAPP")
    phone_ending: str = Field(description="The last four digits of the phone it went to")
    expires_at: Timestamp
    attempts: int = Field(description="Wrong tries the code takes")


class VerificationState(ApiModel):
    verified: bool
    phone_ending: str | None = Field(description="The last four digits of the claimed phone")
