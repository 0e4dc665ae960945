"""The CRM routes: ``/funnel``, ``/funnel-column``, ``/funnel-column-card``."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Query, Response

from officehub.contacts.visibility import require_visible_contact
from officehub.conversations.visibility import require_own_inbox, visible_conversation
from officehub.crm import service
from officehub.crm.schemas import (
    CardCreate,
    CardDelete,
    CardDetail,
    CardUpdate,
    ColumnCreate,
    ColumnOut,
    ColumnUpdate,
    FunnelBoard,
    FunnelCreate,
    FunnelOut,
    FunnelUpdate,
)
from officehub.crm.visibility import (
    VisibleCard,
    VisibleColumn,
    VisibleFunnel,
    cards_seen,
    columns_seen,
    funnels_seen,
    require_column,
    require_funnel,
)
from officehub.kit.auth import ADMIN, SUPERVISOR, ActorDep, OfficeDep, role_override
from officehub.kit.db import SessionDep
from officehub.kit.errors import ValidationFailed, error_responses
from officehub.kit.id_params import Id, PathId
from officehub.kit.ids import WHITESPACE_CLASS, is_valid_id
from officehub.kit.indexed_router import Router
from officehub.kit.pagination import MAX_PAGE, Page, PageDep, PageParams

router = Router(tags=["CRM"])
# Shaping funnels and columns is for supervisors and admins; cards are everyone's.
_FUNNEL_SETUP = role_override(ADMIN, SUPERVISOR)

_SPACE = r"\t-\r\u001c-\u001f \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
"""What ``str.strip`` takes off each owner (Python's whitespace)."""
_OWNER = rf"[cC][^,{WHITESPACE_CLASS}\u0000-]{{8,}}"
OWNERS_PATTERN = rf"^[,{_SPACE}]*(?:{_OWNER}(?:[{_SPACE}]*,[,{_SPACE}]*{_OWNER})*)?[,{_SPACE}]*$"
"""One value of ``userIds``: ids separated by commas (spaces around them and empty parts
are ignored), as ``board_query`` reads it."""

BOARD_DEFAULT_LIMIT = 20
BOARD_MAX_LIMIT = 100


async def board_query(
    user_ids: Annotated[
        list[str] | None,
        Query(
            alias="userIds",
            description="Owner filter: user ids, repeated or comma-separated",
            json_schema_extra={"items": {"type": "string", "pattern": OWNERS_PATTERN}},
        ),
    ] = None,
    page: Annotated[
        int, Query(ge=1, le=MAX_PAGE, description="1-based page, the same for every column")
    ] = 1,
    limit: Annotated[
        int, Query(ge=1, le=BOARD_MAX_LIMIT, description="Cards per column")
    ] = BOARD_DEFAULT_LIMIT,
) -> service.BoardQuery:
    owners: list[str] | None = None
    if user_ids is not None:
        owners = [part.strip() for value in user_ids for part in value.split(",") if part.strip()]
        for owner in owners:
            if not is_valid_id(owner):
                raise ValidationFailed.field(
                    "query.userIds", f"{owner!r} does not match the id pattern"
                )
    return service.BoardQuery(owners or None, PageParams(page, limit))


BoardQueryDep = Annotated[service.BoardQuery, Depends(board_query)]


# Funnels


@router.post(
    "/funnel",
    status_code=201,
    response_model=FunnelOut,
    responses=error_responses(400, 401, 404),
    summary="Create a funnel, optionally with its first columns",
    openapi_extra=_FUNNEL_SETUP,
)
async def create_funnel(body: FunnelCreate, office: OfficeDep, session: SessionDep) -> FunnelOut:
    require_own_inbox(office.who, body.inbox_id)
    return await service.create_funnel(session, office.office_id, body)


@router.get(
    "/funnel",
    response_model=Page[FunnelOut],
    responses=error_responses(400, 401, 404),
    summary="List funnels with their columns (without cards)",
)
async def list_funnels(
    office: OfficeDep,
    session: SessionDep,
    params: PageDep,
    actor: ActorDep,
    inbox_id: Annotated[Id | None, Query(alias="inboxId")] = None,
) -> Page[FunnelOut]:
    funnels, total = await service.list_funnels(
        session, office.office_id, inbox_id, params, funnels_seen(actor)
    )
    return Page[FunnelOut].of(funnels, total, params)


@router.get(
    "/funnel/{id}",
    response_model=FunnelBoard,
    responses=error_responses(400, 401, 404),
    summary="The funnel board: its columns, each with one page of cards",
)
async def read_funnel(
    id: PathId,
    _visible: VisibleFunnel,
    office: OfficeDep,
    session: SessionDep,
    query: BoardQueryDep,
) -> Response:
    # Written here (FastAPI's own writing skipped): the same bytes, see funnel_board.
    board = await service.funnel_board(session, office.office_id, id, query)
    return Response(board, media_type="application/json")


@router.patch(
    "/funnel/{id}",
    response_model=FunnelOut,
    responses=error_responses(400, 401, 404),
    summary="Rename a funnel or change its card configuration",
    openapi_extra=_FUNNEL_SETUP,
)
async def update_funnel(
    id: PathId, _visible: VisibleFunnel, body: FunnelUpdate, office: OfficeDep, session: SessionDep
) -> FunnelOut:
    return await service.update_funnel(session, office.office_id, id, body)


@router.delete(
    "/funnel/{id}",
    response_model=FunnelOut,
    responses=error_responses(400, 401, 404, 409),
    summary="Delete an empty funnel and its columns",
    openapi_extra=_FUNNEL_SETUP,
)
async def delete_funnel(
    id: PathId, _visible: VisibleFunnel, office: OfficeDep, session: SessionDep
) -> FunnelOut:
    return await service.delete_funnel(session, office.office_id, id)


# Columns


@router.get(
    "/funnel-column",
    response_model=Page[ColumnOut],
    responses=error_responses(400, 401, 404),
    summary="List funnel columns",
)
async def list_columns(
    office: OfficeDep,
    session: SessionDep,
    params: PageDep,
    funnel_id: Annotated[Id | None, Query(alias="funnelId")] = None,
) -> Page[ColumnOut]:
    if funnel_id is not None:
        await require_funnel(session, office.who, funnel_id)
    columns, total = await service.list_columns(
        session, office.office_id, funnel_id, params, columns_seen(office.who)
    )
    return Page[ColumnOut].of(columns, total, params)


@router.post(
    "/funnel-column",
    status_code=201,
    response_model=ColumnOut,
    responses=error_responses(400, 401, 404, 409),
    summary="Add a column to a funnel",
    openapi_extra=_FUNNEL_SETUP,
)
async def create_column(body: ColumnCreate, office: OfficeDep, session: SessionDep) -> ColumnOut:
    await require_funnel(session, office.who, body.funnel_id)
    return await service.create_column(session, office.office_id, body)


@router.patch(
    "/funnel-column/{id}",
    response_model=ColumnOut,
    responses=error_responses(400, 401, 404, 409),
    summary="Rename, reorder or reconfigure a column",
    openapi_extra=_FUNNEL_SETUP,
)
async def update_column(
    id: PathId, _visible: VisibleColumn, body: ColumnUpdate, office: OfficeDep, session: SessionDep
) -> ColumnOut:
    return await service.update_column(session, office.office_id, id, body)


@router.delete(
    "/funnel-column/{id}",
    response_model=ColumnOut,
    responses=error_responses(400, 401, 404, 409),
    summary="Delete an empty column",
    openapi_extra=_FUNNEL_SETUP,
)
async def delete_column(
    id: PathId, _visible: VisibleColumn, office: OfficeDep, session: SessionDep
) -> ColumnOut:
    return await service.delete_column(session, office.office_id, id)


# Cards


@router.post(
    "/funnel-column-card",
    status_code=201,
    response_model=CardDetail,
    responses=error_responses(400, 401, 404, 409),
    summary="Create a card (one per contact and conversation)",
)
async def create_card(body: CardCreate, office: OfficeDep, session: SessionDep) -> CardDetail:
    # A card goes on a column, about a contact and a conversation, the caller may all see.
    who = office.who
    await require_column(session, who, body.column_id)
    await require_visible_contact(session, who, body.person_id)
    if body.conversation_id is not None:
        await visible_conversation(session, who, body.conversation_id)
    return await service.create_card(session, office.office_id, body)


@router.delete(
    "/funnel-column-card",
    response_model=str,
    responses=error_responses(400, 401),
    summary="Remove the office's cards among the given ids",
)
async def delete_cards(
    body: CardDelete, actor: ActorDep, office: OfficeDep, session: SessionDep
) -> str:
    removed = await service.delete_cards(session, office.office_id, body.ids, cards_seen(actor))
    return f"{removed} card{'' if removed == 1 else 's'} removed"


@router.get(
    "/funnel-column-card/person/{personId}/conversation/{conversationId}",
    response_model=CardDetail,
    responses=error_responses(400, 401, 404),
    summary="The contact's card in a conversation (funnel found from its integration)",
)
async def card_of_conversation(
    personId: PathId,
    conversationId: PathId,
    actor: ActorDep,
    office: OfficeDep,
    session: SessionDep,
) -> CardDetail:
    await visible_conversation(session, actor, conversationId)
    return await service.card_of_conversation(session, office.office_id, personId, conversationId)


@router.get(
    "/funnel-column-card/{id}",
    response_model=CardDetail,
    responses=error_responses(400, 401, 404),
    summary="A card's detail",
)
async def read_card(
    id: PathId, _visible: VisibleCard, office: OfficeDep, session: SessionDep
) -> CardDetail:
    return await service.get_card_detail(session, office.office_id, id)


@router.patch(
    "/funnel-column-card/{id}",
    response_model=CardDetail,
    responses=error_responses(400, 401, 404, 409),
    summary="Move a card (columnId) or change its owner, legal area, fields or origin",
)
async def update_card(
    id: PathId, body: CardUpdate, _visible: VisibleCard, office: OfficeDep, session: SessionDep
) -> CardDetail:
    if body.column_id is not None:
        await require_column(session, office.who, body.column_id)
    return await service.update_card(session, office.office_id, id, body)
