from __future__ import annotations

from typing import Annotated

from fastapi import Query

from officehub.kit.auth import OfficeDep
from officehub.kit.db import SessionDep
from officehub.kit.errors import error_responses
from officehub.kit.id_params import PathId
from officehub.kit.indexed_router import Router
from officehub.kit.pagination import Page, PageDep
from officehub.sla import service
from officehub.sla.schemas import SlaPolicyCreate, SlaPolicyOut, SlaPolicyUpdate

router = Router(tags=["SLA policies"])


@router.post(
    "/sla-policies",
    status_code=201,
    response_model=SlaPolicyOut,
    responses=error_responses(400, 401, 404),
    summary="Create an SLA policy of an inbox (open conversations' due times are recomputed)",
)
async def create_sla_policy(
    body: SlaPolicyCreate, office: OfficeDep, session: SessionDep
) -> SlaPolicyOut:
    record = await service.create_policy(session, office.office_id, body)
    return SlaPolicyOut.model_validate(record)


@router.get(
    "/sla-policies", response_model=Page[SlaPolicyOut], responses=error_responses(400, 401, 404)
)
async def list_sla_policies(
    office: OfficeDep,
    session: SessionDep,
    page: PageDep,
    inbox_id: Annotated[str | None, Query(alias="inboxId", max_length=32)] = None,
) -> Page[SlaPolicyOut]:
    items, total = await service.list_policies(session, office.office_id, page, inbox_id)
    return Page[SlaPolicyOut].of([SlaPolicyOut.model_validate(i) for i in items], total, page)


@router.get(
    "/sla-policies/{id}", response_model=SlaPolicyOut, responses=error_responses(400, 401, 404)
)
async def read_sla_policy(id: PathId, office: OfficeDep, session: SessionDep) -> SlaPolicyOut:
    record = await service.get_policy(session, office.office_id, id)
    return SlaPolicyOut.model_validate(record)


@router.patch(
    "/sla-policies/{id}", response_model=SlaPolicyOut, responses=error_responses(400, 401, 404)
)
async def update_sla_policy(
    id: PathId, body: SlaPolicyUpdate, office: OfficeDep, session: SessionDep
) -> SlaPolicyOut:
    record = await service.update_policy(session, office.office_id, id, body)
    return SlaPolicyOut.model_validate(record)


@router.delete(
    "/sla-policies/{id}",
    response_model=SlaPolicyOut,
    responses=error_responses(400, 401, 404),
    summary="Delete an SLA policy (open conversations' due times are recomputed)",
)
async def delete_sla_policy(id: PathId, office: OfficeDep, session: SessionDep) -> SlaPolicyOut:
    record = await service.delete_policy(session, office.office_id, id)
    return SlaPolicyOut.model_validate(record)
