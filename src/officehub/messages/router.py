from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Path

from officehub.conversations import service as conversations
from officehub.conversations.visibility import visible_path_conversation
from officehub.kit.auth import OfficeDep
from officehub.kit.db import SessionDep
from officehub.kit.errors import error_responses
from officehub.kit.id_params import PathId
from officehub.kit.ids import ID_PATTERN
from officehub.kit.indexed_router import Router
from officehub.kit.pagination import Page, PageDep
from officehub.kit.storage import StorageDep
from officehub.messages import inbound as inbound_messages
from officehub.messages import outbound as outbound_messages
from officehub.messages import statuses as message_statuses
from officehub.messages import transcripts as message_transcripts
from officehub.messages.schemas import (
    InboundIn,
    MessageOut,
    OutboundIn,
    ReactionIn,
    ReadIn,
    ReadOut,
)

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
)
async def send_message(
    id: PathId, body: OutboundIn, office: OfficeDep, session: SessionDep, storage: StorageDep
) -> MessageOut:
    return await outbound_messages.send(session, office.office_id, id, body, storage)


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
