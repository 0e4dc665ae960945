from __future__ import annotations

import math
from typing import Annotated

from fastapi import Depends, Query, Request
from starlette.exceptions import HTTPException as StarletteHTTPException

from officehub.kit.auth import OfficeDep
from officehub.kit.db import SessionDep
from officehub.kit.errors import error_responses
from officehub.kit.id_params import PathId, ServerId
from officehub.kit.indexed_router import Router
from officehub.kit.pagination import MAX_LIMIT, PageDep, PageNumber, PageParams
from officehub.kit.schemas import ApiModel
from officehub.kit.timeutil import as_utc
from officehub.webhooks import service
from officehub.webhooks.schemas import (
    DeliveryAttemptOut,
    DeliveryDetail,
    DeliveryList,
    DeliveryOut,
    DeliveryStatus,
    RecoverIn,
    RecoverOut,
    ReplayIn,
    WebhookCreate,
    WebhookList,
    WebhookListItem,
    WebhookOut,
    WebhookUpdate,
    WebhookWithSecret,
)

router = Router(tags=["Webhooks"])


class TestSent(ApiModel):
    event_id: ServerId
    webhook_id: ServerId


def _allow_private(request: Request) -> bool:
    return bool(request.app.state.settings.webhook_allow_private)


async def delivery_page(
    page: PageNumber = 1,
    limit: Annotated[int, Query(ge=1, le=MAX_LIMIT, description="Items per page")] = 20,
) -> PageParams:
    return PageParams(page, limit)


@router.post(
    "/webhooks",
    status_code=201,
    response_model=WebhookOut,
    responses=error_responses(400, 401),
    summary="Create a webhook (its secret is generated when absent)",
)
async def create_webhook(
    body: WebhookCreate, office: OfficeDep, session: SessionDep, request: Request
) -> WebhookOut:
    record = await service.create_webhook(
        session, office.office_id, body, allow_private=_allow_private(request)
    )
    return WebhookOut.model_validate(record)


@router.get(
    "/webhooks",
    response_model=WebhookList,
    responses=error_responses(400, 401),
    summary="List webhooks (without secrets), each with its delivery stats",
)
async def list_webhooks(office: OfficeDep, session: SessionDep, params: PageDep) -> WebhookList:
    items, total = await service.list_webhooks(session, office.office_id, params)
    data = [
        WebhookListItem.model_validate({**WebhookOut.model_validate(w).model_dump(), "stats": s})
        for w, s in items
    ]
    return WebhookList(data=data, total_results=total, total_pages=math.ceil(total / params.limit))


@router.api_route("/webhooks/events", methods=["PATCH", "DELETE"], include_in_schema=False)
async def events_are_read_only() -> None:
    """``/webhooks/events`` is the catalogue, not a webhook id: 405 rather than a bad id."""
    raise StarletteHTTPException(405, headers={"Allow": "GET"})


@router.post(
    "/webhooks/deliveries/{deliveryId}/retry",
    response_model=DeliveryOut,
    responses=error_responses(400, 401, 404, 409),
    summary="Send a FAILED or RETRYING delivery again now",
)
async def retry_delivery(deliveryId: PathId, office: OfficeDep, session: SessionDep) -> DeliveryOut:
    record = await service.retry_delivery(session, office.office_id, deliveryId)
    return DeliveryOut.model_validate(record)


@router.get(
    "/webhooks/{webhookId}",
    response_model=WebhookWithSecret,
    responses=error_responses(400, 401, 404),
    summary="Read a webhook, including its secret",
)
async def get_webhook(
    webhookId: PathId, office: OfficeDep, session: SessionDep
) -> WebhookWithSecret:
    record = await service.get_webhook(session, office.office_id, webhookId)
    return WebhookWithSecret.model_validate(record)


@router.patch(
    "/webhooks/{webhookId}",
    response_model=WebhookOut,
    responses=error_responses(400, 401, 404),
    summary="Change a webhook; only the fields sent change",
)
async def update_webhook(
    webhookId: PathId,
    body: WebhookUpdate,
    office: OfficeDep,
    session: SessionDep,
    request: Request,
) -> WebhookOut:
    record = await service.update_webhook(
        session,
        office.office_id,
        webhookId,
        body,
        allow_private=_allow_private(request),
        retention_days=request.app.state.settings.delivery_retention_days,
    )
    return WebhookOut.model_validate(record)


@router.delete(
    "/webhooks/{webhookId}",
    response_model=WebhookOut,
    responses=error_responses(400, 401, 404),
    summary="Delete a webhook and its delivery log",
)
async def delete_webhook(webhookId: PathId, office: OfficeDep, session: SessionDep) -> WebhookOut:
    record = await service.delete_webhook(session, office.office_id, webhookId)
    return WebhookOut.model_validate(record)


@router.post(
    "/webhooks/{webhookId}/test",
    response_model=TestSent,
    responses=error_responses(400, 401, 404),
    summary="Send a webhook.test event to this webhook only",
)
async def send_test(webhookId: PathId, office: OfficeDep, session: SessionDep) -> TestSent:
    event_id = await service.send_test(session, office.office_id, webhookId)
    return TestSent(event_id=event_id, webhook_id=webhookId)


@router.post(
    "/webhooks/{webhookId}/recover",
    response_model=RecoverOut,
    status_code=202,
    responses=error_responses(400, 401, 404),
    summary="Send again, in order, every delivery of this webhook that failed in a window",
)
async def recover(
    webhookId: PathId, body: RecoverIn, office: OfficeDep, session: SessionDep
) -> RecoverOut:
    until = None if body.until is None else as_utc(body.until)
    queued = await service.recover(session, office.office_id, webhookId, as_utc(body.since), until)
    return RecoverOut(queued=queued)


@router.post(
    "/webhooks/{webhookId}/replay",
    response_model=DeliveryOut,
    status_code=202,
    responses=error_responses(400, 401, 404, 409),
    summary="Send one event to this webhook again, whether it was delivered or not",
)
async def replay(
    webhookId: PathId, body: ReplayIn, office: OfficeDep, session: SessionDep
) -> DeliveryOut:
    record = await service.replay(session, office.office_id, webhookId, body.event_id)
    return DeliveryOut.model_validate(record)


@router.get(
    "/webhooks/{webhookId}/deliveries",
    response_model=DeliveryList,
    responses=error_responses(400, 401, 404),
    summary="A webhook's deliveries, newest first",
)
async def list_deliveries(
    webhookId: PathId,
    office: OfficeDep,
    session: SessionDep,
    params: Annotated[PageParams, Depends(delivery_page)],
    status: Annotated[DeliveryStatus | None, Query(description="Only this status")] = None,
    event: Annotated[str | None, Query(max_length=64, description="Only this event")] = None,
) -> DeliveryList:
    records, total = await service.list_deliveries(
        session, office.office_id, webhookId, params, status=status, event=event
    )
    return DeliveryList(
        data=[DeliveryOut.model_validate(r) for r in records],
        total=total,
        page=params.page,
        limit=params.limit,
        total_pages=math.ceil(total / params.limit),
    )


@router.get(
    "/webhooks/{webhookId}/deliveries/{deliveryId}",
    response_model=DeliveryDetail,
    responses=error_responses(400, 401, 404),
    summary="One delivery with every attempt",
)
async def get_delivery(
    webhookId: PathId,
    deliveryId: PathId,
    office: OfficeDep,
    session: SessionDep,
) -> DeliveryDetail:
    record, attempts = await service.get_delivery(session, office.office_id, deliveryId, webhookId)
    return DeliveryDetail.model_validate(
        {
            **DeliveryOut.model_validate(record).model_dump(),
            "attempts": [DeliveryAttemptOut.model_validate(a) for a in attempts],
        }
    )
