"""The official channel's webhook: the platform's verification and its notifications.

No API key: the GET proves the caller knows the integration's verify token, the POST
carries ``X-Hub-Signature-256`` (HMAC-SHA256 of the raw body under the app secret), checked
in constant time before the body is parsed.
"""

from __future__ import annotations

import hmac
import json
import logging
from typing import TYPE_CHECKING, Annotated

from fastapi import Path, Query, Request
from fastapi.responses import PlainTextResponse
from pydantic import BaseModel

from officehub.channels import account, service, template_sync
from officehub.channels.account_schemas import AccountNoticeOut
from officehub.channels.whatsapp import SIGNATURE_HEADER, signature_valid
from officehub.inboxes import service as inboxes
from officehub.kit.auth import OfficeDep
from officehub.kit.db import SessionDep
from officehub.kit.errors import Forbidden, NotFound, Unauthorized, error_responses
from officehub.kit.id_params import PathId
from officehub.kit.ids import ID_PATTERN
from officehub.kit.indexed_router import Router
from officehub.kit.pagination import Page, PageDep
from officehub.templates.schemas import TemplateList

if TYPE_CHECKING:
    from officehub.inboxes.models import Integration

logger = logging.getLogger("officehub.channels")
router = Router(tags=["Channels"])
PATH = "/channels/whatsapp/{integrationId}/webhook"
IntegrationId = Annotated[str, Path(alias="integrationId", pattern=ID_PATTERN)]


class Received(BaseModel):
    stored: int


async def _integration(session: SessionDep, ident: str) -> Integration:
    integration = await inboxes.get_official_by_id(session, ident)
    if integration is None:
        raise NotFound(
            "Integration not found",
            details=f"No configured WHATSAPP_OFFICIAL integration with id {ident}",
        )
    return integration


@router.get(
    PATH,
    response_class=PlainTextResponse,
    responses={
        200: {"description": "The challenge, echoed", "content": {"text/plain": {}}},
        **error_responses(400, 403, 404),
    },
    summary="The platform's webhook verification (no API key)",
)
async def verify_webhook(
    integration_id: IntegrationId,
    session: SessionDep,
    mode: Annotated[str, Query(alias="hub.mode", max_length=32)],
    verify_token: Annotated[str, Query(alias="hub.verify_token", max_length=512)],
    challenge: Annotated[str, Query(alias="hub.challenge", max_length=512)],
) -> PlainTextResponse:
    integration = await _integration(session, integration_id)
    expected = str((integration.whatsapp or {}).get("verifyToken", ""))
    if mode != "subscribe" or not hmac.compare_digest(expected.encode(), verify_token.encode()):
        raise Forbidden("Verification refused", details="Wrong hub.mode or hub.verify_token")
    return PlainTextResponse(challenge)


@router.post(
    PATH,
    response_model=Received,
    responses=error_responses(400, 401, 404),
    summary="The platform's notifications: messages and delivery statuses (no API key)",
    description=(
        "Only a bad signature is refused (401). Every signed body answers 200: each message "
        "and status is read on its own; one that cannot be read is kept as an UNSUPPORTED "
        "message, a body of the wrong shape is logged and nothing stored."
    ),
)
async def receive_webhook(
    integration_id: IntegrationId,
    request: Request,
    session: SessionDep,
) -> Received:
    integration = await _integration(session, integration_id)
    body = await request.body()
    secret = str((integration.whatsapp or {}).get("appSecret", ""))
    if not secret or not signature_valid(secret, body, request.headers.get(SIGNATURE_HEADER)):
        raise Unauthorized(
            "Invalid signature", details="X-Hub-Signature-256 does not match the body"
        )
    try:
        notification = json.loads(body)
    except ValueError:
        # Signed, so the platform's: refusing it would only make it retry for days.
        logger.warning("notification of integration %s is not JSON; nothing stored", integration.id)
        return Received(stored=0)
    stored = await service.receive_notification(session, integration, notification)
    return Received(stored=stored)


@router.post(
    "/integration/{id}/whatsapp-templates/sync",
    response_model=TemplateList,
    responses=error_responses(400, 401, 404, 409, 502),
    tags=["Official-channel templates"],
    summary="Pull the official integration's template catalogue from the platform",
)
async def sync_whatsapp_templates(
    id: PathId, office: OfficeDep, session: SessionDep, request: Request
) -> TemplateList:
    rows = await template_sync.sync_integration(
        session, request.app.state.settings, office.office_id, id
    )
    return TemplateList(data=rows)


@router.get(
    "/integration/{id}/whatsapp-account-notices",
    response_model=Page[AccountNoticeOut],
    responses=error_responses(400, 401, 404),
    tags=["Official-channel templates"],
    summary="The official integration's account notices (phone number quality, account "
    "updates and alerts, capability changes), newest first",
)
async def list_account_notices(
    id: PathId, office: OfficeDep, session: SessionDep, page: PageDep
) -> Page[AccountNoticeOut]:
    items, total = await account.list_notices(session, office.office_id, id, page)
    return Page[AccountNoticeOut].of(items, total, page)
