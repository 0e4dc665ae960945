from __future__ import annotations

from typing import Annotated

from fastapi import Path, Query, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from officehub.conversations import service as conversations
from officehub.conversations.visibility import visible_conversation
from officehub.kit.auth import ROLES, ActorDep, OfficeDep, role_override
from officehub.kit.db import SessionDep
from officehub.kit.errors import ServiceError, ValidationFailed, error_responses
from officehub.kit.id_params import PathId
from officehub.kit.ids import ID_MISMATCH, ID_PATTERN, ID_RE
from officehub.kit.indexed_router import Router
from officehub.kit.middleware import MULTIPART_ALLOWANCE, body_limit
from officehub.kit.multipart_upload import file_field_openapi, receive_file
from officehub.kit.schemas import ApiModel
from officehub.kit.storage import StorageDep
from officehub.templates import header_media, service
from officehub.templates.schemas import TemplateCatalogueIn, TemplateList, TemplateStatus

router = Router(tags=["Official-channel templates"])


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


class HeaderMediaOut(ApiModel):
    storage_path: str
    url: str
    file_name: str


class UploadErrorBody(BaseModel):
    """This route's error body: as the spec says, without ``code``."""

    message: str
    statusCode: int
    details: str


_UPLOAD_BODY = file_field_openapi(
    "JPEG/PNG image ≤ 5 MB, MP4/3GPP video ≤ 16 MB, or PDF, Office or plain-text document ≤ 100 MB"
)


@router.post(
    "/conversation/{conversationId}/template-header-media",
    status_code=201,
    response_model=HeaderMediaOut,
    responses={
        **error_responses(401),
        **{
            s: {"model": UploadErrorBody, "description": d}
            for s, d in (
                (400, "Bad input"),
                (404, "Conversation not found"),
                (413, "Too large for its kind"),
                (415, "Not an accepted type"),
                (507, "The server's storage is full"),
            )
        },
    },
    openapi_extra={
        **_UPLOAD_BODY,
        **body_limit(header_media.DOCUMENT + MULTIPART_ALLOWANCE),
        **role_override(*ROLES),  # part of sending a message: every operator
    },
    summary="Upload the header media of a template send (type read from the bytes)",
)
async def upload_template_header_media(
    # Checked in the body of the route (after the key, before the upload is read); the
    # document states the pattern.
    conversation_id: Annotated[
        str, Path(alias="conversationId", json_schema_extra={"pattern": ID_PATTERN})
    ],
    request: Request,
    actor: ActorDep,
    office: OfficeDep,
    session: SessionDep,
    storage: StorageDep,
) -> HeaderMediaOut | JSONResponse:
    try:
        if not ID_RE.match(conversation_id):
            raise ValidationFailed.field("path.conversationId", ID_MISMATCH)
        await conversations.get_conversation(session, office.office_id, conversation_id)
        await visible_conversation(session, actor, conversation_id)
        upload = await receive_file(request, "file")
        stored = await header_media.store(storage, office.office_id, conversation_id, upload)
    except ServiceError as exc:
        return JSONResponse(
            {"message": exc.message, "statusCode": exc.status_code, "details": exc.details},
            exc.status_code,
            headers=exc.headers,
        )
    return HeaderMediaOut(
        storage_path=stored.storage_path, url=stored.url, file_name=stored.file_name
    )
