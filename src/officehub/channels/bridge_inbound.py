"""``POST /channels/bridge/{integrationId}/inbound``: what a gateway posts for a bridged
channel (``WHATSAPP`` through an unofficial gateway, ``INSTAGRAM``).

No API key: the body is signed with the integration's secret (``X-Service-Signature``, our
webhooks' scheme), checked in constant time, with a 5-minute tolerance, before it is
parsed. A message is stored once per gateway message id (the messages' unique index on
the external id); a status moves an outbound message forward.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from fastapi import Path, Request
from pydantic import ValidationError
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.channels import bridge_service
from officehub.channels.bridge import BRIDGED, TOLERANCE_SECONDS, external_id
from officehub.channels.bridge_schemas import BridgeMessage, BridgeReceived, BridgeStatus
from officehub.inboxes import service as inboxes
from officehub.kit.db import SessionDep
from officehub.kit.errors import NotFound, Unauthorized, ValidationFailed, error_responses
from officehub.kit.ids import ID_PATTERN
from officehub.kit.indexed_router import Router
from officehub.kit.middleware import body_limit
from officehub.kit.outbound.signing import WebhookVerificationError, verify
from officehub.messages import statuses as message_statuses

if TYPE_CHECKING:
    from officehub.inboxes.models import Integration

router = Router(tags=["Channels"])
IntegrationId = Annotated[str, Path(alias="integrationId", pattern=ID_PATTERN)]
BRIDGE_BODY_LIMIT = 64 * 1024


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
            await message_statuses.apply_channel_status(
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
    return BridgeReceived(stored=await bridge_service.receive(session, integration, message))
