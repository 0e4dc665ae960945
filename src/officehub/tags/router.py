from __future__ import annotations

from typing import Annotated

from fastapi import Query

from officehub.kit.auth import OfficeDep
from officehub.kit.db import SessionDep
from officehub.kit.errors import error_responses
from officehub.kit.id_params import Id, PathId
from officehub.kit.indexed_router import Router
from officehub.kit.pagination import Page, PageDep
from officehub.tags import service
from officehub.tags.schemas import TagCreate, TagModule, TagOut, TagUpdate

router = Router(tags=["Tags"])


@router.post(
    "/tag",
    status_code=201,
    response_model=TagOut,
    responses=error_responses(400, 401, 404, 409),
    summary="Create a tag (409 when its inbox has one of that name)",
)
async def create_tag(body: TagCreate, office: OfficeDep, session: SessionDep) -> TagOut:
    return TagOut.model_validate(await service.create_tag(session, office.office_id, body))


@router.get("/tag", response_model=Page[TagOut], responses=error_responses(400, 401, 404))
async def list_tags(
    office: OfficeDep,
    session: SessionDep,
    page: PageDep,
    module: Annotated[TagModule | None, Query()] = None,
    inbox_id: Annotated[Id | None, Query(alias="inboxId")] = None,
) -> Page[TagOut]:
    items, total = await service.list_tags(
        session, office.office_id, page, module=module, inbox_id=inbox_id
    )
    return Page[TagOut].of([TagOut.model_validate(t) for t in items], total, page)


@router.get("/tag/{id}", response_model=TagOut, responses=error_responses(400, 401, 404))
async def read_tag(id: PathId, office: OfficeDep, session: SessionDep) -> TagOut:
    return TagOut.model_validate(await service.read_tag(session, office.office_id, id))


@router.patch("/tag/{id}", response_model=TagOut, responses=error_responses(400, 401, 404, 409))
async def update_tag(id: PathId, body: TagUpdate, office: OfficeDep, session: SessionDep) -> TagOut:
    return TagOut.model_validate(await service.update_tag(session, office.office_id, id, body))


@router.delete(
    "/tag/{id}",
    response_model=TagOut,
    responses=error_responses(400, 401, 404),
    summary="Delete a tag (taken off the conversations and contacts that carry it)",
)
async def delete_tag(id: PathId, office: OfficeDep, session: SessionDep) -> TagOut:
    return TagOut.model_validate(await service.delete_tag(session, office.office_id, id))
