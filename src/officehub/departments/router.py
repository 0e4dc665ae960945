from __future__ import annotations

from officehub.departments import service
from officehub.departments.schemas import DepartmentCreate, DepartmentOut, DepartmentUpdate
from officehub.kit.auth import OfficeDep
from officehub.kit.db import SessionDep
from officehub.kit.errors import error_responses
from officehub.kit.id_params import PathId
from officehub.kit.indexed_router import Router
from officehub.kit.pagination import Page, PageDep

router = Router(tags=["Departments"])


@router.post(
    "/department",
    status_code=201,
    response_model=DepartmentOut,
    responses=error_responses(400, 401),
)
async def create_department(
    body: DepartmentCreate, office: OfficeDep, session: SessionDep
) -> DepartmentOut:
    record = await service.create_department(session, office.office_id, body)
    return DepartmentOut.model_validate(record)


@router.get("/department", response_model=Page[DepartmentOut], responses=error_responses(400, 401))
async def list_departments(
    office: OfficeDep, session: SessionDep, page: PageDep
) -> Page[DepartmentOut]:
    items, total = await service.list_departments(session, office.office_id, page)
    return Page[DepartmentOut].of([DepartmentOut.model_validate(i) for i in items], total, page)


@router.get(
    "/department/{id}", response_model=DepartmentOut, responses=error_responses(400, 401, 404)
)
async def read_department(id: PathId, office: OfficeDep, session: SessionDep) -> DepartmentOut:
    record = await service.get_department(session, office.office_id, id)
    return DepartmentOut.model_validate(record)


@router.patch(
    "/department/{id}", response_model=DepartmentOut, responses=error_responses(400, 401, 404)
)
async def update_department(
    id: PathId, body: DepartmentUpdate, office: OfficeDep, session: SessionDep
) -> DepartmentOut:
    record = await service.update_department(session, office.office_id, id, body)
    return DepartmentOut.model_validate(record)


@router.delete(
    "/department/{id}",
    response_model=DepartmentOut,
    responses=error_responses(400, 401, 404),
    summary="Delete a department (conversations and tickets let go of it)",
)
async def delete_department(id: PathId, office: OfficeDep, session: SessionDep) -> DepartmentOut:
    record = await service.delete_department(session, office.office_id, id)
    return DepartmentOut.model_validate(record)
