from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from officehub.auth import OfficeDep
from officehub.db import SessionDep
from officehub.errors import error_responses
from officehub.params import PathId
from officehub.templates import service
from officehub.templates.schemas import TemplateCatalogueIn, TemplateList, TemplateStatus

router = APIRouter(tags=["Official-channel templates"])


@router.get(
    "/integration/partner/whatsapp-templates",
    response_model=TemplateList,
    responses=error_responses(400, 401, 404),
    summary="The official integration's templates of one status (default APPROVED)",
)
async def list_whatsapp_templates(
    office: OfficeDep,
    session: SessionDep,
    device_id: Annotated[str, Query(alias="deviceId", min_length=1, max_length=200)],
    status: Annotated[TemplateStatus, Query()] = "APPROVED",
) -> TemplateList:
    rows = await service.list_by_device(session, office.office_id, device_id, status)
    return TemplateList(data=rows)


@router.put(
    "/integration/{id}/whatsapp-templates",
    response_model=TemplateList,
    responses=error_responses(400, 401, 404, 409),
    summary="Replace the official integration's template catalogue",
)
async def replace_whatsapp_templates(
    id: PathId, body: TemplateCatalogueIn, office: OfficeDep, session: SessionDep
) -> TemplateList:
    rows = await service.replace_catalogue(session, office.office_id, id, body.data)
    return TemplateList(data=rows)
