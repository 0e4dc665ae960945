"""The web chat's key-less routes: the widget script and the visitor API.

``GET /webchat/{integrationId}/widget.js`` is the script an office pastes into its site.
The visitor API (``start``, ``messages``, ``events``) is authenticated by the visitor token
(``X-Visitor-Token``), answers CORS only for the integration's allowed origins
(``officehub.webchat.cors``) and is rate-limited per IP and per visitor.
"""

from __future__ import annotations

import json
import time
from importlib import resources
from typing import TYPE_CHECKING, Annotated

from fastapi import Header, Path, Request
from fastapi.responses import Response, StreamingResponse
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.contacts.texts import WIDGET
from officehub.events.service import emit
from officehub.kit.db import SessionDep
from officehub.kit.errors import RateLimited, error_responses
from officehub.kit.ids import ID_PATTERN
from officehub.kit.indexed_router import Router
from officehub.kit.middleware import body_limit
from officehub.kit.ratelimit import RateLimiter
from officehub.kit.stream_slots import StreamSlots, event_stream
from officehub.webchat import live, service, verification
from officehub.webchat.events import FLOODED, WebchatFloodedPayload
from officehub.webchat.models import WebchatVisitor
from officehub.webchat.schemas import (
    CodeIn,
    CodeSentOut,
    StartIn,
    StartOut,
    VerificationState,
    VisitorHistory,
    VisitorMessage,
    VisitorMessageIn,
)

if TYPE_CHECKING:
    from officehub.inboxes.models import Integration

router = Router(prefix="/webchat/{integrationId}", tags=["Web chat"])
IntegrationId = Annotated[str, Path(alias="integrationId", pattern=ID_PATTERN)]
VisitorToken = Annotated[
    str | None, Header(alias="x-visitor-token", max_length=128, include_in_schema=True)
]
VISITOR_BODY_LIMIT = 16 * 1024


async def _limit(request: Request, limiter_name: str, key: str) -> None:
    limiter: RateLimiter | None = getattr(request.app.state, limiter_name, None)
    refusal = None if limiter is None else await limiter.hit(key)
    if refusal is not None:
        raise RateLimited(
            details=refusal.details(),
            headers={k.decode(): v.decode() for k, v in refusal.headers()},
        )


async def _per_ip(request: Request) -> None:
    host = request.client.host if request.client else "unknown"
    await _limit(request, "webchat_ip_limiter", f"ip:{host}")


FLOOD_ALERT_EVERY = 600.0
"""Seconds between two ``chat.webchat.flooded`` alerts of one integration in a process: a
flood refused a thousand times is one alert, not a thousand events."""


async def _per_integration(
    request: Request, session: AsyncSession, integration: Integration
) -> None:
    """The integration's cap on starts (``OFFICEHUB_WEBCHAT_STARTS_PER_INTEGRATION``): one
    office's widget flooded from many addresses cannot fill the office with contacts. Past
    it: 429, and the office is alerted (an event on the console's live stream and to its
    webhooks), committed by the refused request, which has changed nothing (on SQLite a
    second writing session would wait for this one's lock)."""
    limiter: RateLimiter | None = getattr(request.app.state, "webchat_integration_limiter", None)
    refusal = None if limiter is None else await limiter.hit(f"integration:{integration.id}")
    if refusal is None:
        return
    state = request.app.state
    alerted: dict[str, float] = getattr(state, "webchat_flood_alerts", None) or {}
    state.webchat_flood_alerts = alerted
    now = time.monotonic()
    if now - alerted.get(integration.id, -FLOOD_ALERT_EVERY) >= FLOOD_ALERT_EVERY:
        alerted[integration.id] = now
        payload = WebchatFloodedPayload(
            integration_id=integration.id,
            inbox_id=integration.inbox_id,
            limit=str(refusal.limit),
            retry_after_seconds=refusal.retry_after,
        )
        await emit(session, integration.office_id, FLOODED, payload, integration_id=integration.id)
        await session.commit()
    raise RateLimited(
        details=refusal.details(),
        headers={k.decode(): v.decode() for k, v in refusal.headers()},
    )


async def _per_visitor(request: Request, visitor: WebchatVisitor) -> None:
    await _limit(request, "webchat_visitor_limiter", f"visitor:{visitor.id}")


async def _visitor(
    request: Request, session: AsyncSession, integration_id: str, token: str | None
) -> tuple[Integration, WebchatVisitor]:
    await _per_ip(request)
    integration = await service.integration_for(session, integration_id)
    visitor = await service.authenticate(session, integration, token)
    await _per_visitor(request, visitor)
    return integration, visitor


def _widget_source() -> str:
    return resources.files("officehub.webchat").joinpath("widget.js").read_text("utf-8")


@router.get(
    "/widget.js",
    response_class=Response,
    responses={
        200: {"description": "The widget script", "content": {"text/javascript": {}}},
        **error_responses(400, 404),
    },
    summary="The chat widget an office pastes into its site (no API key)",
)
async def widget(integration_id: IntegrationId, session: SessionDep) -> Response:
    integration = await service.integration_for(session, integration_id)
    settings = service.settings_of(integration)
    config = json.dumps(
        {
            "integrationId": integration.id,
            "ask": settings.get("ask", "PHONE"),
            "greeting": settings.get("greeting", ""),
            "title": integration.name,
            # Public anyway (the CORS answers): lets the widget say why another page fails.
            "allowedOrigins": list(settings.get("allowedOrigins") or []),
            "texts": {
                k: v.replace("{minutes}", str(verification.CODE_MINUTES)) for k, v in WIDGET.items()
            },
        }
    )
    # Inside a <script> the JSON must not close the element nor open a comment.
    config = config.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    script = _widget_source().replace("/*CONFIG*/{}", config, 1)
    return Response(
        script,
        media_type="text/javascript; charset=utf-8",
        headers={
            "cache-control": "public, max-age=300",
            "x-content-type-options": "nosniff",
            "cross-origin-resource-policy": "cross-origin",
        },
    )


@router.post(
    "/start",
    response_model=StartOut,
    status_code=201,
    responses=error_responses(400, 403, 404, 413, 429),
    summary="Start a chat: the visitor's name and phone or email; answers the visitor token",
    openapi_extra=body_limit(VISITOR_BODY_LIMIT),
)
async def start(
    integration_id: IntegrationId, body: StartIn, request: Request, session: SessionDep
) -> StartOut:
    await _per_ip(request)
    integration = await service.integration_for(session, integration_id)
    await _per_integration(request, session, integration)
    return await service.start(session, integration, body)


@router.post(
    "/messages",
    response_model=VisitorMessage,
    status_code=201,
    responses=error_responses(400, 401, 403, 404, 413, 429),
    summary="The visitor writes (stored as the conversation's inbound message)",
    openapi_extra=body_limit(VISITOR_BODY_LIMIT),
)
async def send_message(
    integration_id: IntegrationId,
    body: VisitorMessageIn,
    request: Request,
    session: SessionDep,
    token: VisitorToken = None,
) -> VisitorMessage:
    integration, visitor = await _visitor(request, session, integration_id, token)
    return await service.send(session, integration, visitor, body.text, body.client_id)


@router.get(
    "/messages",
    response_model=VisitorHistory,
    responses=error_responses(400, 401, 403, 404, 429),
    summary="The visitor's conversation since the visitor started",
)
async def history(
    integration_id: IntegrationId,
    request: Request,
    session: SessionDep,
    token: VisitorToken = None,
) -> VisitorHistory:
    _, visitor = await _visitor(request, session, integration_id, token)
    rows = await service.history(session, visitor)
    await live.mark_delivered(request.app.state, visitor.office_id, rows)
    return VisitorHistory(
        conversation_id=visitor.conversation_id,
        data=[VisitorMessage.model_validate(m) for m in rows],
    )


@router.get(
    "/events",
    response_class=StreamingResponse,
    responses={
        200: {"description": "Server-sent events", "content": {"text/event-stream": {}}},
        **error_responses(400, 401, 403, 404, 429),
    },
    summary="Live messages of the visitor's conversation (server-sent events)",
)
async def events(
    integration_id: IntegrationId,
    request: Request,
    session: SessionDep,
    token: VisitorToken = None,
) -> StreamingResponse:
    _, visitor = await _visitor(request, session, integration_id, token)
    settings = request.app.state.settings
    host = request.client.host if request.client else "unknown"
    keys = [f"visitor:{visitor.id}", f"ip:{host}"]
    slots: StreamSlots = request.app.state.webchat_streams
    caps = [settings.webchat_streams_per_visitor, settings.webchat_streams_per_address]
    if not slots.take(list(zip(keys, caps, strict=True))):
        raise RateLimited(
            details="Too many live streams open for this visitor or address; close one first"
        )
    return event_stream(request, slots, keys, live.stream(request, visitor.id))


async def _visitor_apart(
    request: Request, integration_id: str, token: str | None
) -> tuple[Integration, WebchatVisitor]:
    """The visitor, read in a session of its own: the verification routes write in their
    own transactions (the platform is called between them)."""
    async with request.app.state.read_sessionmaker() as session:
        return await _visitor(request, session, integration_id, token)


@router.get(
    "/verification",
    response_model=VerificationState,
    responses=error_responses(400, 401, 403, 404, 429),
    summary="Whether the visitor's phone is verified",
)
async def verification_state(
    integration_id: IntegrationId,
    request: Request,
    session: SessionDep,
    token: VisitorToken = None,
) -> VerificationState:
    _, visitor = await _visitor(request, session, integration_id, token)
    verified, ending = await verification.state_of(session, visitor)
    return VerificationState(verified=verified, phone_ending=ending)


@router.post(
    "/verification",
    response_model=CodeSentOut,
    status_code=201,
    responses=error_responses(400, 401, 403, 404, 409, 429, 502),
    summary="Send a one-time code to the visitor's claimed phone through WhatsApp",
    description=(
        "Six digits go to the phone the visitor typed, through the office's WhatsApp channel "
        "(its authentication template when the chat names one). Valid 10 minutes, 5 wrong "
        "tries, used once; a new code makes the earlier one stop working. At most one code a "
        "minute and 3 an hour per visitor's contact, 5 an hour per phone (429 with "
        "`Retry-After`). 409 `ALREADY_VERIFIED`; 409 `VERIFICATION_UNAVAILABLE` when the "
        "chat asks for an email (no email channel) or the office has no usable WhatsApp "
        "channel; 502 `PLATFORM_ERROR` when WhatsApp refused it. The code is never answered."
    ),
)
async def request_code(
    integration_id: IntegrationId, request: Request, token: VisitorToken = None
) -> CodeSentOut:
    integration, visitor = await _visitor_apart(request, integration_id, token)
    sent = await verification.request_code(request.app.state, integration, visitor)
    return CodeSentOut(
        channel="WHATSAPP",
        phone_ending=sent.phone_ending,
        expires_at=sent.expires_at,
        attempts=verification.MAX_ATTEMPTS,
    )


@router.post(
    "/verification/confirm",
    response_model=VerificationState,
    responses=error_responses(400, 401, 403, 404, 409, 413, 429),
    summary="Confirm the code received: the visitor's phone is verified",
    description=(
        "The right code verifies the visitor's contact: merged into the office's contact "
        "holding that phone (the client), else the claimed phone becomes its own. A wrong "
        "code is 400 `WRONG_CODE` naming `body.code` (a try spent); 409 `CODE_EXPIRED`, "
        "`CODE_ATTEMPTS_EXHAUSTED`, `CODE_USED` or `NO_CODE_REQUESTED` otherwise. Of two "
        "confirmations of one code at once exactly one succeeds."
    ),
    openapi_extra=body_limit(VISITOR_BODY_LIMIT),
)
async def confirm_code(
    integration_id: IntegrationId, body: CodeIn, request: Request, token: VisitorToken = None
) -> VerificationState:
    _, visitor = await _visitor_apart(request, integration_id, token)
    await verification.confirm_code(request.app.state, visitor, body.code)
    async with request.app.state.read_sessionmaker() as session:
        fresh = await service.visitor_by_id(session, visitor.id)
        verified, ending = await verification.state_of(session, fresh or visitor)
    return VerificationState(verified=verified, phone_ending=ending)
