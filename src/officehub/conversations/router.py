from __future__ import annotations

from typing import Annotated

from fastapi import Path, Query, Response

from officehub.contacts.visibility import require_visible_contact
from officehub.conversations import service
from officehub.conversations.schemas import (
    ConversationIn,
    ConversationOut,
    ConversationPatch,
    ConversationStatus,
    EndHumanSupport,
    NoteIn,
    NoteOut,
    TagAdd,
)
from officehub.conversations.visibility import (
    VisibleConversation,
    check_assignment,
    require_own_inbox,
    seen_in_list,
    visible_conversation,
)
from officehub.kit.auth import ActorDep, OfficeDep
from officehub.kit.db import SessionDep
from officehub.kit.errors import error_responses
from officehub.kit.id_params import Id, PathId
from officehub.kit.indexed_router import Router
from officehub.kit.pagination import Page, PageDep

router = Router(tags=["Conversations"])


@router.post(
    "/conversation",
    status_code=201,
    response_model=ConversationOut,
    responses={
        200: {"model": ConversationOut, "description": "The contact's open conversation"},
        **error_responses(400, 401, 404, 409, 413),
    },
    summary="Open a conversation (or find the open one)",
)
async def open_conversation(
    body: ConversationIn, response: Response, office: OfficeDep, session: SessionDep
) -> ConversationOut:
    require_own_inbox(office.who, body.inbox_id)
    # A contact the caller cannot read cannot be named either (404, issue 39): opening a
    # conversation in one's own inbox would make another inbox's client readable.
    await require_visible_contact(session, office.who, body.person_id)
    out, created = await service.open_conversation(session, office.office_id, body)
    if not created:
        response.status_code = 200
    return out


@router.get(
    "/conversation",
    response_model=Page[ConversationOut],
    responses=error_responses(400, 401, 404),
    summary="List conversations: pinned first, then by last message",
)
async def list_conversations(
    actor: ActorDep,
    office: OfficeDep,
    session: SessionDep,
    params: PageDep,
    inbox_id: Annotated[str | None, Query(alias="inboxId", max_length=32)] = None,
    person_id: Annotated[Id | None, Query(alias="personId")] = None,
    status: Annotated[ConversationStatus | None, Query()] = None,
    assignee_id: Annotated[
        Id | None,
        Query(
            alias="assigneeId",
            description="Assigned to this user of the office (another office's user: 404)",
        ),
    ] = None,
    tag_id: Annotated[
        str | None,
        Query(
            alias="tagId",
            min_length=1,
            max_length=64,
            description="Carrying this tag of the office (another office's tag: 404)",
        ),
    ] = None,
    legal_area_id: Annotated[
        str | None,
        Query(
            alias="legalAreaId",
            min_length=1,
            max_length=32,
            description="About this legal area (the office's or a default one; else 404)",
        ),
    ] = None,
    q: Annotated[
        str | None,
        Query(
            min_length=1,
            max_length=100,
            description=(
                "Search: a fragment of the contact's name (accents and case ignored), of its "
                "phone's digits or WhatsApp username, or of a message's text (case ignored); "
                "blank is refused"
            ),
        ),
    ] = None,
    mine: Annotated[bool, Query(description="Assigned to the signed-in user")] = False,
    unassigned: Annotated[bool, Query(description="Assigned to nobody")] = False,
    is_archived: Annotated[bool | None, Query(alias="isArchived")] = None,
) -> Response:
    # Written by the service (FastAPI's own writing skipped): the bytes it would write.
    page = await service.list_conversations(
        session,
        office.office_id,
        params,
        inbox_id=inbox_id,
        person_id=person_id,
        status=status,
        mine=mine,
        unassigned=unassigned,
        is_archived=is_archived,
        assignee_id=assignee_id,
        tag_id=tag_id,
        legal_area_id=legal_area_id,
        search=q,
        user_id=service.reader_of(actor),
        seen=seen_in_list(actor),
    )
    return Response(page, media_type="application/json")


@router.post(
    "/conversation/note",
    status_code=201,
    response_model=NoteOut,
    responses=error_responses(400, 401, 404, 413),
    summary="Add a private note for operators",
)
async def add_note(
    body: NoteIn, actor: ActorDep, office: OfficeDep, session: SessionDep
) -> NoteOut:
    await visible_conversation(session, actor, body.conversation_id)
    return await service.add_note(session, office.office_id, body)


@router.get(
    "/conversation/notes",
    response_model=Page[NoteOut],
    responses=error_responses(400, 401, 404),
    summary="A conversation's notes, newest first",
)
async def list_notes(
    conversation_id: Annotated[Id, Query(alias="conversationId")],
    actor: ActorDep,
    office: OfficeDep,
    session: SessionDep,
    params: PageDep,
) -> Page[NoteOut]:
    await visible_conversation(session, actor, conversation_id)
    items, total = await service.list_notes(session, office.office_id, conversation_id, params)
    return Page[NoteOut].of(items, total, params)


@router.post(
    "/conversation/end-human-support",
    response_model=ConversationOut,
    responses=error_responses(400, 401, 404, 413),
    summary="Clear the assignment and hand the conversation back to its flow",
)
async def end_human_support(
    body: EndHumanSupport, actor: ActorDep, office: OfficeDep, session: SessionDep
) -> ConversationOut:
    conversation = await visible_conversation(session, actor, body.conversation_id)
    check_assignment(actor, conversation, None)
    return await service.end_human_support(session, office.office_id, body.conversation_id)


@router.get(
    "/conversation/{id}",
    response_model=ConversationOut,
    responses=error_responses(400, 401, 404),
    summary="Read a conversation",
)
async def read_conversation(
    id: PathId, _visible: VisibleConversation, office: OfficeDep, session: SessionDep
) -> ConversationOut:
    return await service.read_conversation(session, office.office_id, id, service.reader_of(office))


@router.patch(
    "/conversation/{id}",
    response_model=ConversationOut,
    responses=error_responses(400, 401, 404, 409, 413),
    summary="Change status, priority, assignment, tags, pinned or archived",
)
async def update_conversation(
    id: PathId, body: ConversationPatch, actor: ActorDep, office: OfficeDep, session: SessionDep
) -> ConversationOut:
    conversation = await visible_conversation(session, actor, id)
    if "assigned_user_id" in body.model_fields_set:
        check_assignment(actor, conversation, body.assigned_user_id)
    # The request writes nothing after the change (the audit trail is written apart).
    return await service.update_conversation(
        session, office.office_id, id, body, service.reader_of(office), last_write=True
    )


@router.post(
    "/conversation/{id}/tags",
    response_model=ConversationOut,
    responses=error_responses(400, 401, 404, 409, 413),
    summary="Tag a conversation",
)
async def add_tag(
    id: PathId, body: TagAdd, _visible: VisibleConversation, office: OfficeDep, session: SessionDep
) -> ConversationOut:
    return await service.add_tag(session, office.office_id, id, body.tag_id)


@router.delete(
    "/conversation/{id}/tags/{tagId}",
    response_model=ConversationOut,
    responses=error_responses(400, 401, 404),
    summary="Remove a tag from a conversation",
)
async def remove_tag(
    id: PathId,
    tagId: Annotated[str, Path(max_length=64)],
    _visible: VisibleConversation,
    office: OfficeDep,
    session: SessionDep,
) -> ConversationOut:
    return await service.remove_tag(session, office.office_id, id, tagId)
