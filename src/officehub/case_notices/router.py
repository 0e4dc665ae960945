from __future__ import annotations

from typing import Annotated

from fastapi import Query

from officehub.case_notices import service
from officehub.case_notices.schemas import (
    CaseNoticeOut,
    CaseNoticeSettingsIn,
    CaseNoticeSettingsOut,
    CaseNoticeUpdate,
    NoticeStatus,
)
from officehub.case_notices.visibility import VisibleCaseNotice, notices_seen
from officehub.kit.auth import ADMIN, ActorDep, OfficeDep, role_override
from officehub.kit.db import SessionDep
from officehub.kit.errors import error_responses
from officehub.kit.id_params import Id, PathId
from officehub.kit.indexed_router import Router
from officehub.kit.pagination import Page, PageDep

router = Router(tags=["Case notices"])


@router.get(
    "/case-notices",
    response_model=Page[CaseNoticeOut],
    responses=error_responses(400, 401, 404),
    summary="The notices of new case movements to clients, newest first",
)
async def list_case_notices(
    actor: ActorDep,
    office: OfficeDep,
    session: SessionDep,
    page: PageDep,
    status: NoticeStatus | None = None,
    case_id: Annotated[Id | None, Query(alias="caseId")] = None,
) -> Page[CaseNoticeOut]:
    items, total = await service.list_notices(
        session, office.office_id, page, status=status, case_id=case_id, visible=notices_seen(actor)
    )
    return Page[CaseNoticeOut].of(items, total, page)


@router.get(
    "/case-notices/{id}", response_model=CaseNoticeOut, responses=error_responses(400, 401, 404)
)
async def read_case_notice(
    id: PathId, _visible: VisibleCaseNotice, office: OfficeDep, session: SessionDep
) -> CaseNoticeOut:
    return await service.read_notice(session, office.office_id, id)


@router.patch(
    "/case-notices/{id}",
    response_model=CaseNoticeOut,
    responses=error_responses(400, 401, 404, 409),
    summary="Edit what the client is told (before it is sent)",
)
async def update_case_notice(
    id: PathId,
    body: CaseNoticeUpdate,
    _visible: VisibleCaseNotice,
    office: OfficeDep,
    session: SessionDep,
) -> CaseNoticeOut:
    return await service.update_notice(session, office.office_id, id, body)


@router.post(
    "/case-notices/{id}/approve",
    response_model=CaseNoticeOut,
    responses=error_responses(400, 401, 404, 409),
    summary="Approve a notice: sent now, or when the quiet hours end",
)
async def approve_case_notice(
    id: PathId, _visible: VisibleCaseNotice, office: OfficeDep, session: SessionDep
) -> CaseNoticeOut:
    return await service.approve_notice(session, office.office_id, id)


@router.post(
    "/case-notices/{id}/discard",
    response_model=CaseNoticeOut,
    responses=error_responses(400, 401, 404, 409),
    summary="Discard a notice: the client is not told",
)
async def discard_case_notice(
    id: PathId, _visible: VisibleCaseNotice, office: OfficeDep, session: SessionDep
) -> CaseNoticeOut:
    return await service.discard_notice(session, office.office_id, id)


@router.get(
    "/case-notice-settings",
    response_model=CaseNoticeSettingsOut,
    responses=error_responses(401),
    summary="The office's case notice settings (the defaults until saved)",
)
async def read_case_notice_settings(
    office: OfficeDep, session: SessionDep
) -> CaseNoticeSettingsOut:
    return await service.read_settings(session, office.office_id)


@router.put(
    "/case-notice-settings",
    response_model=CaseNoticeSettingsOut,
    responses=error_responses(400, 401, 409),
    summary="Save the office's case notice settings (absent keys take their defaults)",
    openapi_extra=role_override(ADMIN),
)
async def put_case_notice_settings(
    body: CaseNoticeSettingsIn, office: OfficeDep, session: SessionDep
) -> CaseNoticeSettingsOut:
    return await service.put_settings(session, office.office_id, body)
