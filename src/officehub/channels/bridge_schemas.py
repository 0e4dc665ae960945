"""The bodies a gateway posts to ``/channels/bridge/{integrationId}/inbound``."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field, StringConstraints, field_validator

from officehub.kit.outbound.urls import check_url

GatewayId = Annotated[str, StringConstraints(pattern=r"^[\x21-\x7e]{1,64}$")]


class BridgeMessage(BaseModel):
    """A contact wrote: ``from`` is the sender's id on the channel (digits of the phone on
    WhatsApp, the user id on Instagram)."""

    type: Literal["message"] = "message"
    id: GatewayId
    sender: Annotated[str, StringConstraints(pattern=r"^[\x21-\x7e]{1,64}$")] = Field(alias="from")
    name: Annotated[str, StringConstraints(max_length=200)] | None = None
    text: Annotated[str, StringConstraints(max_length=4096)] | None = None
    media_url: Annotated[str, StringConstraints(max_length=2000)] | None = Field(
        None, alias="mediaUrl"
    )

    @field_validator("media_url")
    @classmethod
    def _sendable(cls, value: str | None) -> str | None:
        if value is not None:
            check_url(value)
        return value


class BridgeStatus(BaseModel):
    """What became of a message we posted (``id`` is the one the gateway answered)."""

    type: Literal["status"]
    id: GatewayId
    status: Literal["SENT", "DELIVERED", "READ", "FAILED"]
    error: Annotated[str, StringConstraints(max_length=2000)] | None = None


class BridgeReceived(BaseModel):
    stored: int
