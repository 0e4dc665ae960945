from __future__ import annotations

from typing import Annotated

from fastapi import Query

from officehub.cases import service
from officehub.cases.schemas import CaseCreate, CaseMovementOut, CaseOut, CaseUpdate
from officehub.cases.visibility import VisibleCase, cases_seen
from officehub.contacts.visibility import require_visible_contact
from officehub.conversations.visibility import visible_conversation
from officehub.kit.auth import ActorDep, OfficeDep
from officehub.kit.db import SessionDep
from officehub.kit.errors import error_responses
from officehub.kit.id_params import Id, PathId
from officehub.kit.indexed_router import Router
from officehub.kit.pagination import Page, PageDep

router = Router(tags=["Cases"])

CourtAlias = Annotated[str, Query(pattern=r"^[a-z0-9-]{2,16}$", description="DataJud alias")]


@router.post(
    "/cases",
    status_code=201,
    response_model=CaseOut,
    responses=error_responses(400, 401, 404, 409),
    summary="Register a court case of a contact (watched on DataJud unless watch is false)",
)
async def create_case(body: CaseCreate, office: OfficeDep, session: SessionDep) -> CaseOut:
    await require_visible_contact(session, office.who, body.person_id)
    if body.conversation_id is not None:
        await visible_conversation(session, office.who, body.conversation_id)
    return await service.create_case(session, office.office_id, body)


@router.get("/cases", response_model=Page[CaseOut], responses=error_responses(400, 401, 404))
async def list_cases(
    office: OfficeDep,
    session: SessionDep,
    page: PageDep,
    actor: ActorDep,
    person_id: Annotated[Id | None, Query(alias="personId")] = None,
    conversation_id: Annotated[Id | None, Query(alias="conversationId")] = None,
    legal_area_id: Annotated[Id | None, Query(alias="legalAreaId")] = None,
    watch: bool | None = None,
    court: CourtAlias | None = None,
) -> Page[CaseOut]:
    items, total = await service.list_cases(
        session,
        office.office_id,
        page,
        person_id=person_id,
        conversation_id=conversation_id,
        legal_area_id=legal_area_id,
        watch=watch,
        court=court,
        seen=cases_seen(actor),
    )
    return Page[CaseOut].of(items, total, page)


@router.get("/cases/{id}", response_model=CaseOut, responses=error_responses(400, 401, 404))
async def read_case(
    id: PathId, _visible: VisibleCase, office: OfficeDep, session: SessionDep
) -> CaseOut:
    return await service.read_case(session, office.office_id, id)


@router.patch("/cases/{id}", response_model=CaseOut, responses=error_responses(400, 401, 404))
async def update_case(
    id: PathId, body: CaseUpdate, _visible: VisibleCase, office: OfficeDep, session: SessionDep
) -> CaseOut:
    if body.conversation_id is not None:
        await visible_conversation(session, office.who, body.conversation_id)
    return await service.update_case(session, office.office_id, id, body)


@router.delete(
    "/cases/{id}",
    response_model=CaseOut,
    responses=error_responses(400, 401, 404),
    summary="Delete a case and the movements found for it",
)
async def delete_case(
    id: PathId, _visible: VisibleCase, office: OfficeDep, session: SessionDep
) -> CaseOut:
    return await service.delete_case(session, office.office_id, id)


@router.get(
    "/cases/{id}/movements",
    response_model=Page[CaseMovementOut],
    responses=error_responses(400, 401, 404),
    summary="The case's movements, newest first",
)
async def list_case_movements(
    id: PathId, _visible: VisibleCase, office: OfficeDep, session: SessionDep, page: PageDep
) -> Page[CaseMovementOut]:
    items, total = await service.list_movements(session, office.office_id, id, page)
    return Page[CaseMovementOut].of(items, total, page)
