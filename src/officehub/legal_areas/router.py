from __future__ import annotations

from officehub.kit.auth import OfficeDep
from officehub.kit.db import SessionDep
from officehub.kit.errors import error_responses
from officehub.kit.id_params import PathId
from officehub.kit.indexed_router import Router
from officehub.kit.pagination import Page, PageDep
from officehub.legal_areas import service
from officehub.legal_areas.schemas import LegalAreaCreate, LegalAreaOut, LegalAreaUpdate

router = Router(tags=["Legal areas"])


@router.get(
    "/legal-areas",
    response_model=Page[LegalAreaOut],
    responses=error_responses(400, 401),
    summary="The default legal areas (officeId null) and the office's own",
)
async def list_legal_areas(
    office: OfficeDep, session: SessionDep, page: PageDep
) -> Page[LegalAreaOut]:
    items, total = await service.list_legal_areas(session, office.office_id, page)
    return Page[LegalAreaOut].of([LegalAreaOut.model_validate(a) for a in items], total, page)


@router.post(
    "/legal-areas",
    status_code=201,
    response_model=LegalAreaOut,
    responses=error_responses(400, 401),
)
async def create_legal_area(
    body: LegalAreaCreate, office: OfficeDep, session: SessionDep
) -> LegalAreaOut:
    area = await service.create_legal_area(session, office.office_id, body)
    return LegalAreaOut.model_validate(area)


@router.get(
    "/legal-areas/{id}", response_model=LegalAreaOut, responses=error_responses(400, 401, 404)
)
async def read_legal_area(id: PathId, office: OfficeDep, session: SessionDep) -> LegalAreaOut:
    area = await service.get_legal_area(session, office.office_id, id)
    return LegalAreaOut.model_validate(area)


@router.patch(
    "/legal-areas/{id}",
    response_model=LegalAreaOut,
    responses=error_responses(400, 401, 403, 404),
    summary="Change an office's legal area (403 for a default area)",
)
async def update_legal_area(
    id: PathId, body: LegalAreaUpdate, office: OfficeDep, session: SessionDep
) -> LegalAreaOut:
    area = await service.update_legal_area(session, office.office_id, id, body)
    return LegalAreaOut.model_validate(area)


@router.delete(
    "/legal-areas/{id}",
    response_model=LegalAreaOut,
    responses=error_responses(400, 401, 403, 404),
    summary="Delete an office's legal area (403 for a default area)",
)
async def delete_legal_area(id: PathId, office: OfficeDep, session: SessionDep) -> LegalAreaOut:
    area = await service.delete_legal_area(session, office.office_id, id)
    return LegalAreaOut.model_validate(area)
