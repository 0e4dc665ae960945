"""The CRM's rules: funnels, columns, cards, moves and the board read."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.contacts import service as contacts
from officehub.conversations import service as conversations
from officehub.crm import events, repository
from officehub.crm.models import CLOSING_KINDS, Card, Funnel, FunnelColumn
from officehub.crm.schemas import (
    CardCreate,
    CardDetail,
    CardUpdate,
    ColumnCreate,
    ColumnIn,
    ColumnOut,
    ColumnUpdate,
    FunnelBoardWritten,
    FunnelCreate,
    FunnelOut,
    FunnelUpdate,
    LeadOrigin,
    LeadOriginOut,
)
from officehub.inboxes import service as inboxes
from officehub.kit.errors import Conflict, NotFound, ValidationFailed
from officehub.kit.pagination import PageParams
from officehub.kit.raw_read import Row, on_raw_driver
from officehub.kit.repository import flush_or_conflict, read_scoped
from officehub.kit.timeutil import isoformat, utcnow
from officehub.legal_areas import service as legal_areas
from officehub.users import service as users

# Funnels


async def get_funnel(
    session: AsyncSession, office_id: str, ident: str, *, for_change: bool = False
) -> Funnel:
    funnel = await repository.get_funnel(session, office_id, ident, for_change=for_change)
    if funnel is None:
        raise NotFound.of("Funnel", ident)
    return funnel


def column_out(column: FunnelColumn) -> ColumnOut:
    return ColumnOut.model_validate(_column_fields(column))


def _fields_of(record: Any) -> Any:
    """A record's or a row's values by column name (attributes of a record, as before)."""
    return record.__getitem__ if isinstance(record, dict) else record.__getattribute__


def _column_fields(column: FunnelColumn | Row) -> dict[str, Any]:
    get = _fields_of(column)
    return {
        "id": get("id"),
        "funnel_id": get("funnel_id"),
        "name": get("name"),
        "color": get("color"),
        "index": get("position"),
        "kind": get("kind"),
        "time_limit_days": get("time_limit_days"),
        "show_badge_progress": get("show_badge_progress"),
        "created_at": get("created_at"),
        "updated_at": get("updated_at"),
    }


def _funnel_fields(funnel: Funnel | Row) -> dict[str, Any]:
    get = _fields_of(funnel)
    return {
        "id": get("id"),
        "name": get("name"),
        "card_config": get("card_config"),
        "inbox_id": get("inbox_id"),
        "created_at": get("created_at"),
        "updated_at": get("updated_at"),
    }


def funnel_out(funnel: Funnel, columns: Sequence[FunnelColumn]) -> FunnelOut:
    return FunnelOut.model_validate(
        {**_funnel_fields(funnel), "columns": [_column_fields(c) for c in columns]}
    )


async def funnels_out(
    session: AsyncSession, office_id: str, funnels: Sequence[Funnel]
) -> list[FunnelOut]:
    columns = await repository.columns_of(session, office_id, [f.id for f in funnels])
    by_funnel: dict[str, list[FunnelColumn]] = {}
    for column in columns:
        by_funnel.setdefault(column.funnel_id, []).append(column)
    return [funnel_out(f, by_funnel.get(f.id, [])) for f in funnels]


async def create_funnel(session: AsyncSession, office_id: str, body: FunnelCreate) -> FunnelOut:
    await inboxes.get_inbox(session, office_id, body.inbox_id)
    funnel = Funnel(
        office_id=office_id,
        inbox_id=body.inbox_id,
        name=body.name,
        card_config=_card_config(body.card_config),
    )
    session.add(funnel)
    await session.flush()
    columns = [_new_column(office_id, funnel.id, c, i) for i, c in enumerate(body.columns)]
    session.add_all(columns)
    await session.flush()
    return funnel_out(funnel, columns)


def _card_config(config: Sequence[Any] | None) -> list[dict[str, Any]] | None:
    return None if config is None else [item.model_dump() for item in config]


def _new_column(office_id: str, funnel_id: str, body: ColumnIn, position: int) -> FunnelColumn:
    return FunnelColumn(
        office_id=office_id,
        funnel_id=funnel_id,
        name=body.name,
        color=body.color,
        position=position,
        kind=body.kind,
        time_limit_days=body.time_limit_days,
        show_badge_progress=body.show_badge_progress,
    )


async def update_funnel(
    session: AsyncSession, office_id: str, ident: str, body: FunnelUpdate
) -> FunnelOut:
    funnel = await get_funnel(session, office_id, ident, for_change=True)
    body.refuse_sent_nulls()
    if body.name is not None:
        funnel.name = body.name
    if "card_config" in body.model_fields_set:
        funnel.card_config = _card_config(body.card_config)
    await session.flush()
    return (await funnels_out(session, office_id, [funnel]))[0]


async def inbox_has_cards(session: AsyncSession, office_id: str, inbox_id: str) -> bool:
    """Whether a funnel of the inbox holds cards (the inbox may not be deleted then)."""
    return await repository.inbox_has_cards(session, office_id, inbox_id)


async def delete_funnel(session: AsyncSession, office_id: str, ident: str) -> FunnelOut:
    funnel = await get_funnel(session, office_id, ident, for_change=True)
    if await repository.funnel_has_cards(session, office_id, funnel.id):
        raise Conflict(
            "The funnel holds cards",
            details="Move or delete the funnel's cards before deleting it",
            code="FUNNEL_NOT_EMPTY",
        )
    out = (await funnels_out(session, office_id, [funnel]))[0]
    await session.delete(funnel)
    await session.flush()
    return out


@dataclass(frozen=True)
class BoardQuery:
    user_ids: list[str] | None
    page: PageParams


async def funnel_board(
    session: AsyncSession, office_id: str, ident: str, query: BoardQuery
) -> bytes:
    """The funnel with one page of cards per column, as ``FunnelBoard`` JSON: whatever its
    size, two statements on PostgreSQL (the funnel with its columns and their totals, then
    the page), four elsewhere. Its timestamps come written (the cards' by the database,
    ``repository.board_page``) and the answer through ``FunnelBoardWritten``: the same
    bytes as ``FunnelBoard`` writes, without a Python call per timestamp."""
    funnel_fields, column_fields, totals = await _board_head(session, office_id, ident, query)
    column_ids = [c["id"] for c in column_fields]
    rows = await repository.board_page(session, office_id, column_ids, query.user_ids, query.page)
    items: dict[str, list[dict[str, Any]]] = {c: [] for c in column_ids}
    for row in rows:
        items[row["column_id"]].append(
            {
                "id": row["id"],
                "channel": row["channel"],
                "funnel_id": row["funnel_id"],
                "column_id": row["column_id"],
                "person": {
                    "id": row["person_id"],
                    "created_at": row["person_created_at"],
                    "updated_at": row["person_updated_at"],
                    "name": row["person_name"],
                    "email": row["person_email"],
                    "phone": row["person_phone"],
                },
                "custom_fields": row["custom_fields"],
                "created_at": row["created_at"],
                "updated_at": row["updated_at"],
                "user_id": row["user_id"],
            }
        )
    page = query.page
    board_columns = []
    for column in column_fields:
        total = totals.get(column["id"], 0)
        board_columns.append(
            {
                **column,
                "items": items[column["id"]],
                "total": total,
                "page": page.page,
                "has_more": page.page * page.limit < total,
            }
        )
    board = {**funnel_fields, "columns": board_columns}
    return FunnelBoardWritten.model_validate(board).model_dump_json(by_alias=True).encode()


async def _board_head(
    session: AsyncSession, office_id: str, ident: str, query: BoardQuery
) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, int]]:
    """The board's funnel and columns (their answers' fields, timestamps written) and the
    columns' totals: on PostgreSQL in one statement (``repository.board_head``), elsewhere
    in three. 404 for a funnel the office does not have, then for an unknown owner."""
    if on_raw_driver(session):
        head = await repository.board_head(session, office_id, ident, query.user_ids)
        if head is None:
            raise NotFound.of("Funnel", ident)
        if query.user_ids:
            await users.require_users(session, office_id, query.user_ids)
        return head
    record = await read_scoped(session, Funnel, office_id, ident)
    if record is None:
        raise NotFound.of("Funnel", ident)
    if query.user_ids:
        await users.require_users(session, office_id, query.user_ids)
    found = await repository.board_columns(session, office_id, ident)
    column_ids = [c["id"] for c in found]
    totals = await repository.board_totals(session, office_id, column_ids, query.user_ids)
    return (
        _written(_funnel_fields(record)),
        [_written(_column_fields(c)) for c in found],
        totals,
    )


def _written(fields: dict[str, Any]) -> dict[str, Any]:
    """A record's fields with its two timestamps written as the API writes them."""
    fields["created_at"] = isoformat(fields["created_at"])
    fields["updated_at"] = isoformat(fields["updated_at"])
    return fields


# Columns


async def get_column(
    session: AsyncSession, office_id: str, ident: str, *, for_change: bool = False
) -> FunnelColumn:
    column = await repository.get_column(session, office_id, ident, for_change=for_change)
    if column is None:
        raise NotFound.of("Column", ident)
    return column


def _placed(
    columns: list[FunnelColumn], column: FunnelColumn, index: int | None
) -> list[FunnelColumn]:
    """The funnel's columns in order with ``column`` at ``index`` (the end when None)."""
    others = [c for c in columns if c.id != column.id]
    at = len(others) if index is None else min(index, len(others))
    others.insert(at, column)
    return others


async def create_column(session: AsyncSession, office_id: str, body: ColumnCreate) -> ColumnOut:
    """Positions are read and assigned under the funnel's lock: concurrent creates queue."""
    funnel = await get_funnel(session, office_id, body.funnel_id)
    await repository.lock_funnel(session, office_id, funnel.id)
    columns = await repository.columns_of(session, office_id, [funnel.id])
    column = _new_column(office_id, funnel.id, body, -1)
    session.add(column)
    await repository.renumber(session, _placed(columns, column, body.index))
    return column_out(column)


async def update_column(
    session: AsyncSession, office_id: str, ident: str, body: ColumnUpdate
) -> ColumnOut:
    # The funnel's lock first, then the column's: the order creates and renumbering take.
    column = await get_column(session, office_id, ident)
    if body.index is not None:
        await repository.lock_funnel(session, office_id, column.funnel_id)
    column = await get_column(session, office_id, ident, for_change=True)
    sent = body.model_fields_set
    body.refuse_sent_nulls()
    if body.name is not None:
        column.name = body.name
    if body.color is not None:
        column.color = body.color
    if body.show_badge_progress is not None:
        column.show_badge_progress = body.show_badge_progress
    limit_before = _effective_limit(column)
    if body.kind is not None:
        column.kind = body.kind
    if "time_limit_days" in sent:
        column.time_limit_days = body.time_limit_days
    if body.index is not None:
        await session.flush()  # the changes above, before the columns are read afresh
        columns = await repository.columns_of(session, office_id, [column.funnel_id])
        await repository.renumber(session, _placed(columns, column, body.index))
    await session.flush()
    limit_after = _effective_limit(column)
    if limit_after != limit_before:
        await repository.reschedule_overdue(session, office_id, column.id, limit_after)
    return column_out(column)


def _effective_limit(column: FunnelColumn) -> int | None:
    """Days a card may stay; none in a closing (WON/LOST) column, where the lead is closed."""
    return None if column.kind in CLOSING_KINDS else column.time_limit_days


def _overdue_at(column: FunnelColumn, since: datetime) -> datetime | None:
    limit = _effective_limit(column)
    return None if limit is None else since + timedelta(days=limit)


async def delete_column(session: AsyncSession, office_id: str, ident: str) -> ColumnOut:
    column = await get_column(session, office_id, ident)
    await repository.lock_funnel(session, office_id, column.funnel_id)
    column = await get_column(session, office_id, ident, for_change=True)
    if await repository.column_has_cards(session, office_id, column.id):
        raise Conflict(
            "The column holds cards",
            details="Move or delete the column's cards before deleting it",
            code="COLUMN_NOT_EMPTY",
        )
    out = column_out(column)
    columns = await repository.columns_of(session, office_id, [column.funnel_id])
    await session.delete(column)
    await repository.renumber(session, [c for c in columns if c.id != column.id])
    return out


# Cards


async def get_card(
    session: AsyncSession, office_id: str, ident: str, *, for_change: bool = False
) -> Card:
    card = await repository.get_card(session, office_id, ident, for_change=for_change)
    if card is None:
        raise NotFound.of("Card", ident)
    return card


async def create_card(session: AsyncSession, office_id: str, body: CardCreate) -> CardDetail:
    column = await get_column(session, office_id, body.column_id)
    funnel = await get_funnel(session, office_id, column.funnel_id)
    await contacts.get_contact(session, office_id, body.person_id)
    channel: str | None = None
    integration_id: str | None = None
    if body.conversation_id is not None:
        conversation = await conversations.get_conversation(
            session, office_id, body.conversation_id
        )
        if conversation.person_id != body.person_id:
            raise ValidationFailed.field(
                "body.conversationId", "the conversation belongs to another contact"
            )
        if conversation.inbox_id != funnel.inbox_id:
            raise ValidationFailed.field(
                "body.conversationId", "the conversation is in another inbox than the funnel's"
            )
        integration = await inboxes.get_integration(session, office_id, conversation.integration_id)
        channel, integration_id = integration.type, integration.id
        if body.lead_origin is None and conversation.lead_origin is not None:
            # The ad the conversation came from (a Click-to-WhatsApp referral).
            body = body.model_copy(
                update={"lead_origin": LeadOrigin.model_validate(conversation.lead_origin)}
            )
    if body.user_id is not None:
        await users.get_user(session, office_id, body.user_id)
    if body.legal_area_id is not None:
        await legal_areas.get_legal_area(session, office_id, body.legal_area_id)
    existing = await repository.find_card(session, office_id, body.person_id, body.conversation_id)
    if existing is not None:
        raise _duplicate(existing.id)
    now = utcnow()
    card = Card(
        office_id=office_id,
        funnel_id=funnel.id,
        column_id=column.id,
        person_id=body.person_id,
        conversation_id=body.conversation_id,
        integration_id=integration_id,
        user_id=body.user_id,
        legal_area_id=body.legal_area_id,
        channel=channel,
        custom_fields=[f.model_dump() for f in body.custom_fields],
        lead_origin=_lead_origin(body),
        column_changed_at=now,
        overdue_at=_overdue_at(column, now),
        overdue_emitted_at=None,
        created_at=now,
        updated_at=now,
    )
    await repository.hold_funnel(session, office_id, funnel.id)
    session.add(card)
    await flush_or_conflict(session, _duplicate(""))
    await events.emit_lead(session, card, events.LEAD_CREATED)
    return await card_detail(session, office_id, card, column)


def _duplicate(existing_id: str) -> Conflict:
    details = "A contact has one card per conversation"
    if existing_id:
        details += f"; the existing card is {existing_id}"
    return Conflict("The card already exists", details=details, code="CARD_EXISTS")


def _lead_origin(body: CardCreate | CardUpdate) -> dict[str, Any] | None:
    if body.lead_origin is None:
        return None
    return body.lead_origin.model_dump(mode="json", by_alias=True)


async def card_detail(
    session: AsyncSession, office_id: str, card: Card, column: FunnelColumn | None = None
) -> CardDetail:
    if column is None or column.id != card.column_id:
        column = await get_column(session, office_id, card.column_id)
    person = await contacts.get_contact(session, office_id, card.person_id)
    user = None if card.user_id is None else await users.get_user(session, office_id, card.user_id)
    area = None
    if card.legal_area_id is not None:
        area = await legal_areas.get_legal_area(session, office_id, card.legal_area_id)
    tags = []
    if card.conversation_id is not None:
        tags = await conversations.tags_of(session, office_id, card.conversation_id)
    return CardDetail.model_validate(
        {
            "id": card.id,
            "column_changed_at": card.column_changed_at,
            "show_badge_progress": column.show_badge_progress,
            "time_limit_days": column.time_limit_days,
            "channel": card.channel,
            "column_id": card.column_id,
            "funnel_id": card.funnel_id,
            "conversation_id": card.conversation_id,
            "lead_origin": None
            if card.lead_origin is None
            else LeadOriginOut.model_validate(card.lead_origin),
            "user": user,
            "person": person,
            "custom_fields": card.custom_fields,
            "tags": tags,
            "legal_area": area,
            "created_at": card.created_at,
            "updated_at": card.updated_at,
        }
    )


async def get_card_detail(session: AsyncSession, office_id: str, ident: str) -> CardDetail:
    return await card_detail(session, office_id, await get_card(session, office_id, ident))


async def record_ad_origin(
    session: AsyncSession, office_id: str, conversation_id: str, origin: dict[str, Any]
) -> None:
    """A client came from an ad: the conversation keeps the origin (the first ad wins), so
    the card its inbox's rules create later takes it; a card of the conversation that
    already exists without an origin gets it now (``crm.lead.updated``)."""
    conversation = await conversations.get_conversation(session, office_id, conversation_id)
    checked = LeadOrigin.model_validate(origin)
    if conversation.lead_origin is None:
        conversation.lead_origin = checked.model_dump(mode="json", by_alias=True)
        await session.flush()
    try:
        card = await card_of_conversation(
            session, office_id, conversation.person_id, conversation.id
        )
    except NotFound:
        return
    if card.lead_origin is None:
        await update_card(session, office_id, card.id, CardUpdate(lead_origin=checked))


async def card_of_conversation(
    session: AsyncSession, office_id: str, person_id: str, conversation_id: str
) -> CardDetail:
    """The contact's card in the conversation, in a funnel of the conversation's inbox."""
    conversation = await conversations.get_conversation(session, office_id, conversation_id)
    integration = await inboxes.get_integration(session, office_id, conversation.integration_id)
    funnel_ids = await repository.funnel_ids_of_inbox(session, office_id, integration.inbox_id)
    card = None
    if funnel_ids and conversation.person_id == person_id:
        card = await repository.find_card_in_funnels(
            session, office_id, person_id, conversation_id, funnel_ids
        )
    if card is None:
        raise NotFound(
            "Card not found",
            details=f"No card of contact {person_id} in conversation {conversation_id}",
        )
    return await card_detail(session, office_id, card)


async def update_card(
    session: AsyncSession,
    office_id: str,
    ident: str,
    body: CardUpdate,
) -> CardDetail:
    """Moves (``columnId``) and changes a card. An automation's change runs inside
    ``officehub.events.service.caused_by``, so the events it emits carry the chain."""
    card = await get_card(session, office_id, ident, for_change=True)
    sent = body.model_fields_set
    changes: list[str] = []
    from_column_id = card.column_id
    column: FunnelColumn | None = None
    body.refuse_sent_nulls()
    if body.column_id is not None:
        column = await get_column(session, office_id, body.column_id)
        if column.funnel_id != card.funnel_id:
            raise ValidationFailed.field(
                "body.columnId",
                "a card moves only between columns of its own funnel",
                code="COLUMN_OF_ANOTHER_FUNNEL",
            )
    if "user_id" in sent and body.user_id != card.user_id:
        if body.user_id is not None:
            await users.get_user(session, office_id, body.user_id)
        card.user_id = body.user_id
        changes.append("userId")
    if "legal_area_id" in sent and body.legal_area_id != card.legal_area_id:
        if body.legal_area_id is not None:
            await legal_areas.get_legal_area(session, office_id, body.legal_area_id)
        card.legal_area_id = body.legal_area_id
        changes.append("legalAreaId")
    if "custom_fields" in sent:
        fields = [f.model_dump() for f in body.custom_fields or []]
        if fields != card.custom_fields:
            card.custom_fields = fields
            changes.append("customFields")
    if "lead_origin" in sent:
        origin = _lead_origin(body)
        if origin != card.lead_origin:
            card.lead_origin = origin
            changes.append("leadOrigin")
    moved = column is not None and column.id != card.column_id
    if column is not None and moved:
        now = utcnow()
        card.column_id = column.id
        card.column_changed_at = now
        card.overdue_at = _overdue_at(column, now)
        card.overdue_emitted_at = None
    if moved or changes:
        card.updated_at = utcnow()
    await session.flush()
    if moved:
        await events.emit_lead(
            session,
            card,
            events.LEAD_MOVED,
            fromColumnId=from_column_id,
            toColumnId=card.column_id,
        )
    if changes:
        await events.emit_lead(session, card, events.LEAD_UPDATED, changes=changes)
    return await card_detail(session, office_id, card, column)


async def delete_cards(
    session: AsyncSession,
    office_id: str,
    ids: Sequence[str],
    seen: ColumnElement[bool] | None = None,
) -> int:
    """Removes the office's cards among ``ids`` that the caller may see (``seen``,
    ``crm.visibility``); ids of other offices or inboxes are left alone."""
    cards = await repository.cards_by_ids(session, office_id, sorted(set(ids)), seen)
    return await _delete(session, office_id, cards)


async def conversation_tags_changed(
    session: AsyncSession, office_id: str, conversation_id: str
) -> None:
    """A card's tags are its conversation's: when they change (the ``conversation_tags_changed``
    hook, ``crm.subscribers``) each card of the conversation emits ``crm.lead.updated``."""
    for card in await repository.cards_of_conversation(session, office_id, conversation_id):
        await events.emit_lead(session, card, events.LEAD_UPDATED, changes=["tags"])


async def delete_cards_of_contact(session: AsyncSession, office_id: str, contact_id: str) -> int:
    """Before a contact is deleted (the ``contact_deleting`` hook, ``crm.subscribers``): its
    cards go with their ``crm.lead.deleted`` events (the database cascade alone would emit
    none)."""
    cards = await repository.cards_of_person(session, office_id, contact_id)
    return await _delete(session, office_id, cards)


async def card_ids_of_person(session: AsyncSession, office_id: str, person_id: str) -> list[str]:
    return [c.id for c in await repository.cards_of_person(session, office_id, person_id)]


async def cards_follow_merge(
    session: AsyncSession, office_id: str, kept_id: str, other_id: str
) -> None:
    """When ``other_id`` is merged into ``kept_id`` (the ``contact_merging`` hook): its cards
    move to the kept contact. A contact holds one card without a conversation, so where
    both have one the other's goes (``crm.lead.deleted``). A moved card's contact is not a
    change the contract announces (``crm.lead.updated`` is owner, area, fields, tags, origin)."""
    kept_cards = await repository.cards_of_person(session, office_id, kept_id)
    if any(c.conversation_id is None for c in kept_cards):
        other_cards = await repository.cards_of_person(session, office_id, other_id)
        await _delete(session, office_id, [c for c in other_cards if c.conversation_id is None])
    await repository.move_cards_of_person(session, office_id, other_id, kept_id)


async def _delete(session: AsyncSession, office_id: str, cards: Sequence[Card]) -> int:
    for card in cards:
        await events.emit_lead(session, card, events.LEAD_DELETED)
    if cards:
        await repository.delete_cards(session, office_id, [c.id for c in cards])
    return len(cards)


async def list_funnels(
    session: AsyncSession,
    office_id: str,
    inbox_id: str | None,
    params: PageParams,
    seen: ColumnElement[bool] | None = None,
) -> tuple[list[FunnelOut], int]:
    """``seen``: the WHERE clause of the funnels the caller may see (``crm.visibility``)."""
    if inbox_id is not None:
        await inboxes.get_inbox(session, office_id, inbox_id)
    funnels, total = await repository.list_funnels(session, office_id, inbox_id, params, seen)
    return await funnels_out(session, office_id, funnels), total


async def list_columns(
    session: AsyncSession,
    office_id: str,
    funnel_id: str | None,
    params: PageParams,
    seen: ColumnElement[bool] | None = None,
) -> tuple[list[ColumnOut], int]:
    """``seen``: the columns the caller may see (``crm.visibility``); None: all."""
    if funnel_id is not None:
        await get_funnel(session, office_id, funnel_id)
    columns, total = await repository.list_columns(session, office_id, funnel_id, params, seen)
    return [column_out(c) for c in columns], total


async def get_funnel_out(session: AsyncSession, office_id: str, ident: str) -> FunnelOut:
    return (await funnels_out(session, office_id, [await get_funnel(session, office_id, ident)]))[0]
