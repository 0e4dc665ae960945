from __future__ import annotations

from typing import Annotated

from fastapi import Query

from officehub.fast_messages import service
from officehub.fast_messages.schemas import (
    FastMessageCreate,
    FastMessageKind,
    FastMessageOut,
    FastMessageUpdate,
)
from officehub.kit.auth import OfficeDep
from officehub.kit.db import SessionDep
from officehub.kit.errors import error_responses
from officehub.kit.id_params import Id, PathId
from officehub.kit.indexed_router import Router
from officehub.kit.pagination import Page, PageDep

router = Router(tags=["Fast messages"])


@router.get(
    "/fast-message",
    response_model=Page[FastMessageOut],
    responses=error_responses(400, 401, 404),
    summary="The office's fast messages, by inbox",
)
async def list_fast_messages(
    office: OfficeDep,
    session: SessionDep,
    page: PageDep,
    inbox_id: Annotated[Id | None, Query(alias="inboxId")] = None,
    kind: Annotated[FastMessageKind | None, Query()] = None,
) -> Page[FastMessageOut]:
    items, total = await service.list_fast_messages(
        session, office.office_id, page, inbox_id=inbox_id, kind=kind
    )
    return Page[FastMessageOut].of([FastMessageOut.model_validate(m) for m in items], total, page)


@router.post(
    "/fast-message",
    status_code=201,
    response_model=FastMessageOut,
    responses=error_responses(400, 401, 404),
)
async def create_fast_message(
    body: FastMessageCreate, office: OfficeDep, session: SessionDep
) -> FastMessageOut:
    record = await service.create_fast_message(session, office.office_id, body)
    return FastMessageOut.model_validate(record)


@router.get(
    "/fast-message/{id}", response_model=FastMessageOut, responses=error_responses(400, 401, 404)
)
async def read_fast_message(id: PathId, office: OfficeDep, session: SessionDep) -> FastMessageOut:
    record = await service.get_fast_message(session, office.office_id, id)
    return FastMessageOut.model_validate(record)


@router.patch(
    "/fast-message/{id}", response_model=FastMessageOut, responses=error_responses(400, 401, 404)
)
async def update_fast_message(
    id: PathId, body: FastMessageUpdate, office: OfficeDep, session: SessionDep
) -> FastMessageOut:
    record = await service.update_fast_message(session, office.office_id, id, body)
    return FastMessageOut.model_validate(record)


@router.delete(
    "/fast-message/{id}", response_model=FastMessageOut, responses=error_responses(400, 401, 404)
)
async def delete_fast_message(id: PathId, office: OfficeDep, session: SessionDep) -> FastMessageOut:
    record = await service.delete_fast_message(session, office.office_id, id)
    return FastMessageOut.model_validate(record)
