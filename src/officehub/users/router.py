from __future__ import annotations

from typing import Annotated

from fastapi import BackgroundTasks, Query, Request

from officehub.kit.auth import ADMIN_SCOPE, OfficeDep, scope_override
from officehub.kit.db import SessionDep
from officehub.kit.errors import error_responses
from officehub.kit.id_params import Id, PathId
from officehub.kit.indexed_router import Router
from officehub.kit.middleware import MULTIPART_ALLOWANCE, body_limit
from officehub.kit.multipart_upload import file_field_openapi, receive_file
from officehub.kit.pagination import Page, PageDep
from officehub.kit.storage import StorageDep
from officehub.users import service
from officehub.users.schemas import AvatarRemoved, UserCreate, UserOut, UserUpdate
from officehub.users.service import AVATAR_MAX_BYTES

router = Router(tags=["Users"])

# Managing people (make, change, deactivate, their pictures) needs the admin scope, and the
# caller must hold every scope of the role made or changed (issue 39): docs/security.md.
_PEOPLE = scope_override(ADMIN_SCOPE)

_AVATAR_BODY = file_field_openapi("A JPEG, PNG or WebP image of at most 5 MB")


@router.post(
    "/user",
    status_code=201,
    response_model=UserOut,
    responses=error_responses(400, 401, 403, 404, 409),
    openapi_extra=_PEOPLE,
)
async def create_user(
    body: UserCreate, office: OfficeDep, session: SessionDep, storage: StorageDep
) -> UserOut:
    user = await service.create_user(session, office.office_id, body, office.require_grant)
    return (await service.present(session, storage, office.office_id, [user]))[0]


@router.get("/user", response_model=Page[UserOut], responses=error_responses(400, 401, 404))
async def list_users(
    office: OfficeDep,
    session: SessionDep,
    storage: StorageDep,
    page: PageDep,
    inbox_id: Annotated[Id | None, Query(alias="inboxId")] = None,
    search: Annotated[str | None, Query(max_length=200, description="Name or email")] = None,
) -> Page[UserOut]:
    users, total = await service.list_users(
        session, office.office_id, page, inbox_id=inbox_id, search=search
    )
    items = await service.present(session, storage, office.office_id, users)
    return Page[UserOut].of(items, total, page)


@router.get("/user/{id}", response_model=UserOut, responses=error_responses(400, 401, 404))
async def read_user(
    id: PathId, office: OfficeDep, session: SessionDep, storage: StorageDep
) -> UserOut:
    user = await service.get_user(session, office.office_id, id)
    return (await service.present(session, storage, office.office_id, [user]))[0]


@router.patch(
    "/user/{id}",
    response_model=UserOut,
    responses=error_responses(400, 401, 403, 404, 409),
    openapi_extra=_PEOPLE,
)
async def update_user(
    id: PathId, body: UserUpdate, office: OfficeDep, session: SessionDep, storage: StorageDep
) -> UserOut:
    user = await service.update_user(session, office.office_id, id, body, office.require_grant)
    return (await service.present(session, storage, office.office_id, [user]))[0]


@router.put(
    "/user/{id}/avatar",
    response_model=UserOut,
    responses=error_responses(400, 401, 403, 404, 413, 415, 507),
    openapi_extra={
        **_AVATAR_BODY,
        **body_limit(AVATAR_MAX_BYTES + MULTIPART_ALLOWANCE),
        **_PEOPLE,
    },
    summary="Upload the user's picture (multipart field file: JPEG, PNG or WebP, at most 5 MB)",
)
async def upload_avatar(
    id: PathId,
    request: Request,
    background: BackgroundTasks,
    office: OfficeDep,
    session: SessionDep,
    storage: StorageDep,
) -> UserOut:
    office.require_grant((await service.get_user(session, office.office_id, id)).role)
    upload = await receive_file(request, "file")
    user, replaced = await service.set_avatar(session, storage, office.office_id, id, upload)
    if replaced:
        background.add_task(storage.delete, replaced)
    return (await service.present(session, storage, office.office_id, [user]))[0]


@router.delete(
    "/user/{id}/avatar",
    response_model=AvatarRemoved,
    responses=error_responses(400, 401, 403, 404),
    summary="Remove the user's picture (200 also when there is none)",
    openapi_extra=_PEOPLE,
)
async def remove_avatar(
    id: PathId,
    background: BackgroundTasks,
    office: OfficeDep,
    session: SessionDep,
    storage: StorageDep,
) -> AvatarRemoved:
    """The file is deleted once the change has committed (right after the response)."""
    office.require_grant((await service.get_user(session, office.office_id, id)).role)
    user, removed = await service.remove_avatar(session, office.office_id, id)
    if removed:
        background.add_task(storage.delete, removed)
    return AvatarRemoved(image_url=user.image_url)
