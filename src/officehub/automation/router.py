from __future__ import annotations

from typing import Annotated

from fastapi import Query, Request

from officehub.automation import dry_run, service
from officehub.automation.schemas import (
    RuleCreate,
    RuleOut,
    RulePatch,
    RuleTestIn,
    RuleTestOut,
    RunOut,
)
from officehub.events.catalogue import EVENT_ENUM, EVENT_NAMES
from officehub.kit.auth import OfficeDep
from officehub.kit.config import Settings
from officehub.kit.db import SessionDep
from officehub.kit.errors import ValidationFailed, error_responses
from officehub.kit.id_params import PathId
from officehub.kit.indexed_router import Router
from officehub.kit.pagination import Page, PageDep
from officehub.webhooks.schemas import ActionDeliveryOut, DeliveryStatus

router = Router(tags=["Automation rules"])


def _settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


@router.post(
    "/automation-rules",
    status_code=201,
    response_model=RuleOut,
    responses=error_responses(400, 401),
    summary="Create an automation rule (400 ELSE_ACTIONS_WITHOUT_CONDITIONS, 400 naming an "
    "action's param)",
)
async def create_rule(
    body: RuleCreate, request: Request, office: OfficeDep, session: SessionDep
) -> RuleOut:
    return await service.create_rule(session, office.office_id, body, _settings(request))


@router.get("/automation-rules", response_model=Page[RuleOut], responses=error_responses(400, 401))
async def list_rules(
    office: OfficeDep,
    session: SessionDep,
    page: PageDep,
    trigger_event: Annotated[
        str | None, Query(alias="triggerEvent", json_schema_extra=EVENT_ENUM)
    ] = None,
    enabled: Annotated[bool | None, Query()] = None,
) -> Page[RuleOut]:
    if trigger_event is not None and trigger_event not in EVENT_NAMES:
        raise ValidationFailed.field("query.triggerEvent", "not an event of the catalogue")
    items, total = await service.list_rules(
        session, office.office_id, page, trigger_event=trigger_event, enabled=enabled
    )
    return Page[RuleOut].of(items, total, page)


@router.get(
    "/automation-rules/{id}", response_model=RuleOut, responses=error_responses(400, 401, 404)
)
async def read_rule(id: PathId, office: OfficeDep, session: SessionDep) -> RuleOut:
    return await service.read_rule(session, office.office_id, id)


@router.patch(
    "/automation-rules/{id}",
    response_model=RuleOut,
    responses=error_responses(400, 401, 404),
    summary="Change a rule (partial); removing every condition clears the else-branch",
)
async def update_rule(
    id: PathId, body: RulePatch, request: Request, office: OfficeDep, session: SessionDep
) -> RuleOut:
    return await service.update_rule(session, office.office_id, id, body, _settings(request))


@router.delete(
    "/automation-rules/{id}", response_model=RuleOut, responses=error_responses(400, 401, 404)
)
async def delete_rule(id: PathId, office: OfficeDep, session: SessionDep) -> RuleOut:
    return await service.delete_rule(session, office.office_id, id)


@router.get(
    "/automation-rules/{id}/runs",
    response_model=Page[RunOut],
    responses=error_responses(400, 401, 404),
    summary="The rule's execution log, newest first (kept 30 days)",
)
async def list_runs(
    id: PathId, office: OfficeDep, session: SessionDep, page: PageDep
) -> Page[RunOut]:
    items, total = await service.list_runs(session, office.office_id, id, page)
    return Page[RunOut].of(items, total, page)


@router.get(
    "/automation-rules/{id}/deliveries",
    response_model=Page[ActionDeliveryOut],
    responses=error_responses(400, 401, 404),
    summary="The rule's FIRE_WEBHOOK deliveries, newest first: status, HTTP code, duration, "
    "response excerpt, every attempt, next attempt (kept 90 days)",
)
async def list_deliveries(
    id: PathId,
    office: OfficeDep,
    session: SessionDep,
    page: PageDep,
    status: Annotated[DeliveryStatus | None, Query(description="Only this status")] = None,
) -> Page[ActionDeliveryOut]:
    items, total = await service.list_deliveries(session, office.office_id, id, page, status=status)
    return Page[ActionDeliveryOut].of(items, total, page)


@router.post(
    "/automation-rules/{id}/test",
    response_model=RuleTestOut,
    responses=error_responses(400, 401, 404),
    summary="Dry run: which branch and actions an event would take, nothing done",
)
async def test_rule(
    id: PathId, body: RuleTestIn, office: OfficeDep, session: SessionDep
) -> RuleTestOut:
    return await dry_run.test_rule(session, office.office_id, id, body)
