"""``POST /channels/bridge/{integrationId}/inbound``: what a gateway posts for a bridged
channel (``WHATSAPP`` through an unofficial gateway, ``INSTAGRAM``).

No API key: the body is signed with the integration's secret (``X-Service-Signature``, our
webhooks' scheme), checked in constant time, with a 5-minute tolerance, before it is
parsed. A message is stored once per gateway message id (the messages' unique index on
the external id); a status moves an outbound message forward.
"""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Path, Request
from pydantic import BaseModel, Field, StringConstraints, ValidationError, field_validator
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.channels.bridge import BRIDGED, TOLERANCE_SECONDS, external_id
from officehub.contacts import service as contacts
from officehub.contacts.normalize import digits
from officehub.conversations import service as conversations
from officehub.conversations.schemas import ConversationIn
from officehub.db import SessionDep
from officehub.errors import NotFound, Unauthorized, ValidationFailed, error_responses
from officehub.ids import ID_PATTERN
from officehub.inboxes import service as inboxes
from officehub.inboxes.models import Integration
from officehub.messages import service as messages
from officehub.middleware import body_limit
from officehub.repository import insert_ignoring_duplicates
from officehub.webchat.models import ChannelPeer
from officehub.webhooks.signing import WebhookVerificationError, verify
from officehub.webhooks.validation import check_url

router = APIRouter(tags=["Channels"])
IntegrationId = Annotated[str, Path(alias="integrationId", pattern=ID_PATTERN)]
GatewayId = Annotated[str, StringConstraints(pattern=r"^[\x21-\x7e]{1,64}$")]
BRIDGE_BODY_LIMIT = 64 * 1024


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


async def _integration(session: AsyncSession, ident: str) -> Integration:
    found = await inboxes.get_typed_by_id(session, ident, BRIDGED)
    if found is None or not found.bridge or not found.bridge.get("secret"):
        raise NotFound(
            "Integration not found",
            details=f"No WHATSAPP or INSTAGRAM integration with bridge settings has id {ident}",
        )
    return found


@router.post(
    "/channels/bridge/{integrationId}/inbound",
    response_model=BridgeReceived,
    responses=error_responses(400, 401, 404, 413),
    summary="A gateway's message or status for a bridged channel (signed; no API key)",
    openapi_extra=body_limit(BRIDGE_BODY_LIMIT),
)
async def bridge_inbound(
    integration_id: IntegrationId, request: Request, session: SessionDep
) -> BridgeReceived:
    integration = await _integration(session, integration_id)
    raw = await request.body()
    secret = str((integration.bridge or {}).get("secret", ""))
    try:
        decoded = verify(secret, request.headers, raw, TOLERANCE_SECONDS)
    except WebhookVerificationError as exc:
        raise Unauthorized("Invalid signature", details=str(exc)) from exc
    except ValueError as exc:  # signed, but not JSON
        raise ValidationFailed("Malformed body", details="body: not JSON") from exc
    try:
        if isinstance(decoded, dict) and decoded.get("type") == "status":
            status = BridgeStatus.model_validate(decoded)
            await messages.apply_channel_status(
                session,
                integration.office_id,
                external_id(integration.id, status.id),
                status.status,
                status.error,
            )
            return BridgeReceived(stored=0)
        message = BridgeMessage.model_validate(decoded)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "body"
        raise ValidationFailed("Malformed body", details=f"body.{where}: {first['msg']}") from exc
    if message.text is None and message.media_url is None:
        raise ValidationFailed.field("body.text", "send text, mediaUrl or both")
    return BridgeReceived(stored=await _receive(session, integration, message))


async def _receive(session: AsyncSession, integration: Integration, message: BridgeMessage) -> int:
    office_id = integration.office_id
    await inboxes.lock_integration(session, office_id, integration.id)
    stored_id = external_id(integration.id, message.id)
    if await messages.external_id_known(session, office_id, stored_id):
        return 0
    contact_id = await _contact(session, integration, message)
    opened, _ = await conversations.open_conversation(
        session,
        office_id,
        ConversationIn(
            person_id=contact_id, inbox_id=integration.inbox_id, integration_id=integration.id
        ),
    )
    conversation = await conversations.get_conversation(session, office_id, opened.id)
    text = message.text.replace("\x00", "\ufffd") if message.text else None
    out = await messages.receive_from_channel(
        session,
        conversation,
        external_id=stored_id,
        type="MEDIA" if message.media_url else "TEXT",
        text=text,
        media_url=message.media_url,
    )
    return 0 if out is None else 1


async def _contact(session: AsyncSession, integration: Integration, message: BridgeMessage) -> str:
    """The contact behind the sender: known peer, else (WhatsApp) the contact with that
    phone, else a new contact; the peer is recorded for replies."""
    office_id = integration.office_id
    known = (
        await session.scalars(
            select(ChannelPeer.contact_id).where(
                ChannelPeer.office_id == office_id,
                ChannelPeer.integration_id == integration.id,
                ChannelPeer.peer_id == message.sender,
            )
        )
    ).first()
    if known is not None:
        return known
    if integration.type == "WHATSAPP" and 8 <= len(digits(message.sender)) <= 15:
        contact = await contacts.find_or_create_by_phone(
            session, office_id, message.sender, message.name, integration.inbox_id
        )
    else:
        contact = await contacts.create_channel_contact(
            session, office_id, message.name, integration.inbox_id, fallback_name=message.sender
        )
    await insert_ignoring_duplicates(
        session,
        ChannelPeer,
        [
            {
                "office_id": office_id,
                "integration_id": integration.id,
                "contact_id": contact.id,
                "peer_id": message.sender,
            }
        ],
    )
    return contact.id
