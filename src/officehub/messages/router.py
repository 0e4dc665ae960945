from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Path, Request

from officehub.conversations import service as conversations
from officehub.conversations.visibility import visible_path_conversation
from officehub.kit.auth import ROLES, OfficeDep, role_override
from officehub.kit.db import SessionDep
from officehub.kit.errors import error_responses
from officehub.kit.id_params import PathId
from officehub.kit.ids import ID_PATTERN
from officehub.kit.indexed_router import Router
from officehub.kit.middleware import MULTIPART_ALLOWANCE, body_limit
from officehub.kit.multipart_upload import file_field_openapi, receive_file
from officehub.kit.pagination import Page, PageDep
from officehub.kit.storage import StorageDep
from officehub.messages import inbound as inbound_messages
from officehub.messages import outbound as outbound_messages
from officehub.messages import statuses as message_statuses
from officehub.messages import transcripts as message_transcripts
from officehub.messages.schemas import (
    InboundIn,
    MediaUploadOut,
    MessageOut,
    OutboundIn,
    ReactionIn,
    ReadIn,
    ReadOut,
)
from officehub.templates import header_media

# Every route names a conversation ({id}): one the caller may see, else 404.
router = Router(tags=["Messages"], dependencies=[Depends(visible_path_conversation)])
MessageId = Annotated[str, Path(alias="messageId", pattern=ID_PATTERN)]


@router.post(
    "/conversation/{id}/messages/inbound",
    status_code=201,
    response_model=MessageOut,
    responses=error_responses(400, 401, 404, 413),
    summary="Store a message the contact sent (called by a channel adapter)",
)
async def receive_message(
    id: PathId, body: InboundIn, office: OfficeDep, session: SessionDep
) -> MessageOut:
    return await inbound_messages.receive(session, office.office_id, id, body)


@router.post(
    "/conversation/{id}/messages",
    status_code=201,
    response_model=MessageOut,
    responses=error_responses(400, 401, 404, 409, 413),
    summary="Send a message to the contact",
    description=(
        "One of: `{text}` (free text), `{templateName, language, variables, "
        "headerMediaPath}` (an APPROVED template), or `{mediaPath, caption, fileName}` (a "
        "file uploaded with `POST /conversation/{id}/media`, sent as an image, video, audio "
        "or document by the type read from its bytes). On the official channel free text "
        "and files need the client's last message within 24 hours (409 "
        "`OUTSIDE_SERVICE_WINDOW`); templates do not."
    ),
)
async def send_message(
    id: PathId, body: OutboundIn, office: OfficeDep, session: SessionDep, storage: StorageDep
) -> MessageOut:
    return await outbound_messages.send(session, office.office_id, id, body, storage)


_MEDIA_BODY = file_field_openapi(
    "JPEG/PNG image ≤ 5 MB, MP4/3GPP video ≤ 16 MB, AAC, AMR, "
    "MP3, M4A or OGG (Opus) audio ≤ 16 MB, or PDF, Office or "
    "plain-text document ≤ 100 MB"
)


@router.post(
    "/conversation/{id}/media",
    status_code=201,
    response_model=MediaUploadOut,
    responses=error_responses(400, 401, 404, 413, 415, 507),
    openapi_extra={
        **_MEDIA_BODY,
        **body_limit(header_media.DOCUMENT + MULTIPART_ALLOWANCE),
        **role_override(*ROLES),  # part of sending a message: every operator
    },
    summary="Upload a file to send the client in this conversation (type read from the bytes)",
    description=(
        "Multipart field `file`. The type is read from the bytes, never trusted from the "
        "client (anything else: 415); each kind has the official channel's own limit (413 "
        "as soon as it is passed, nothing kept). Send it with `POST "
        "/conversation/{id}/messages` `{mediaPath, caption, fileName}`; the file is deleted "
        "with the conversation's client's data."
    ),
)
async def upload_media(
    id: PathId, request: Request, office: OfficeDep, session: SessionDep, storage: StorageDep
) -> MediaUploadOut:
    await conversations.get_conversation(session, office.office_id, id)
    upload = await receive_file(request, "file")
    stored = await header_media.store(storage, office.office_id, id, upload, attachment=True)
    assert stored.kind is not None  # noqa: S101 (store names the kind it read)
    media_kind, mime = header_media.kind_of_key(stored.storage_path) or (stored.kind.name, "")
    return MediaUploadOut(
        storage_path=stored.storage_path,
        url=stored.url,
        file_name=stored.file_name,
        media_kind=media_kind,
        mime_type=mime,
    )


@router.post(
    "/conversation/{id}/read",
    response_model=ReadOut,
    responses=error_responses(400, 401, 404, 413),
    summary="The operator read the conversation: the client sees the blue ticks",
    description=(
        "Marks the contact's messages read up to `messageId` (default: the newest inbound "
        "message). On the official WhatsApp channel the platform is told by the worker "
        "(`status` `PENDING`, then `SENT` or `FAILED`); marking a message read marks the "
        "earlier ones. Other channels only record it (`RECORDED`). Repeating it changes "
        "nothing."
    ),
)
async def mark_read(
    id: PathId, office: OfficeDep, session: SessionDep, body: ReadIn | None = None
) -> ReadOut:
    reader = conversations.reader_of(office)
    return await message_statuses.mark_read(session, office.office_id, id, body or ReadIn(), reader)


@router.get(
    "/conversation/{id}/messages",
    response_model=Page[MessageOut],
    responses=error_responses(400, 401, 404),
    summary="A conversation's messages, newest first",
)
async def list_messages(
    id: PathId, office: OfficeDep, session: SessionDep, params: PageDep
) -> Page[MessageOut]:
    items, total = await message_transcripts.list_messages(session, office.office_id, id, params)
    return Page[MessageOut].of(items, total, params)


@router.post(
    "/conversation/{id}/messages/{messageId}/reaction",
    response_model=MessageOut,
    responses=error_responses(400, 401, 404, 409),
    summary="React to a contact's message with an emoji (an empty emoji removes the office's)",
)
async def react_to_message(
    id: PathId, message_id: MessageId, body: ReactionIn, office: OfficeDep, session: SessionDep
) -> MessageOut:
    return await message_statuses.react(session, office.office_id, id, message_id, body)
