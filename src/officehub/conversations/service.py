"""Conversations: open (or find the open one), read, list, update, tags, notes, assignment.

Every change emits what the contract's event table says, with the conversation as the API
answers it: ``chat.conversation.updated`` for status, priority or tags,
``chat.conversation.assigned`` (with the previous assignee) for user or department.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

from sqlalchemy import ColumnElement, Row
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.contacts import service as contacts
from officehub.contacts.normalize import fold, search_phone_digits
from officehub.contacts.schemas import TagRef
from officehub.conversations import events, repository, routing, sla
from officehub.conversations.hooks import ConversationTagsChanged, conversation_tags_changed
from officehub.conversations.models import Conversation, ConversationNote
from officehub.conversations.schemas import (
    ConversationIn,
    ConversationOut,
    ConversationPatch,
    NoteIn,
    NoteOut,
)
from officehub.departments import service as departments
from officehub.events.catalogue import Event
from officehub.events.service import emit
from officehub.inboxes import service as inboxes
from officehub.kit.auth import Actor, OfficeContext
from officehub.kit.db import column_values
from officehub.kit.errors import Conflict, NotFound, ValidationFailed
from officehub.kit.pagination import Page, PageParams, paginate, paginate_rows
from officehub.kit.raw_read import on_raw_driver
from officehub.kit.repository import conflicts_as, flush_or_conflict, lock_office
from officehub.kit.timeutil import as_utc, utcnow, written_timestamps
from officehub.legal_areas import service as legal_areas
from officehub.tags import service as tags
from officehub.tags.repository import tag_refs
from officehub.users import service as users

if TYPE_CHECKING:
    from typing import TypeAlias

    from officehub.sla.repository import PolicyTerms
    from officehub.tags.models import Tag

    TagRefs: TypeAlias = Sequence[Tag] | Sequence[dict[str, Any]]
    """A conversation's tags for its answer: records, or their id, name and colour as
    dicts (``repository.tag_refs_of``)."""

_UNSET: Any = object()
Record = Conversation | Row[Any]
"""A conversation as loaded (the mapped record) or as a list's row of its columns (the
same names and values): what ``present`` and ``conversation_out`` answer."""
C = TypeVar("C", bound=ConversationOut)


def reader_of(context: OfficeContext | Actor) -> str | None:
    """The signed-in user a request acts for (their read marks, ``mine``), None for an API
    key (which reads as the office: its read mark, every conversation)."""
    actor = context.who if isinstance(context, OfficeContext) else context
    return actor.id if actor.kind == "user" else None


async def get_conversation(
    session: AsyncSession, office_id: str, ident: str, *, for_change: bool = False
) -> Conversation:
    record = await repository.get_conversation(session, office_id, ident, for_change=for_change)
    if record is None:
        raise NotFound.of("Conversation", ident)
    return record


async def tags_of(session: AsyncSession, office_id: str, conversation_id: str) -> list[Tag]:
    """The conversation's tags, by name."""
    return await repository.tags_of(session, office_id, conversation_id)


def conversation_out(
    conversation: Record,
    conversation_tags: TagRefs,
    names: Mapping[str, str] | None = None,
    read: int | None = None,
    *,
    values: Mapping[str, Any] | None = None,
) -> ConversationOut:
    """The conversation as the API answers it. ``names``: the users it names (assigned,
    last message's sender); ``read``: the reader's read mark (inbound messages read), the
    office's when None (an API key, an event); ``values``: its columns' values, when the
    caller has them (``present``, for a page of rows)."""
    return conversation_row_out(
        _values(conversation) if values is None else values, conversation_tags, names, read
    )


def conversation_row_out(
    values: Mapping[str, Any],
    conversation_tags: Sequence[Tag] | Sequence[Mapping[str, Any]],
    names: Mapping[str, str] | None = None,
    read: int | None = None,
) -> ConversationOut:
    """``conversation_out`` of a conversation's column values by name (a record's, a
    row's, or a dict the raw driver read); its tags as records or as dicts of their id,
    name and colour."""
    tags = [TagRef.model_validate(t) for t in conversation_tags]
    fields = conversation_fields(values, tags, names, read, _earliest_breach(values))
    return ConversationOut.model_validate(fields)


def conversation_fields(
    values: Mapping[str, Any],
    tags: Sequence[TagRef] | Sequence[Mapping[str, Any]],
    names: Mapping[str, str] | None,
    read: int | None,
    breached_at: Any,
) -> dict[str, Any]:
    """A conversation's answer as plain values, for ``ConversationOut`` or its written twin
    (``ConversationPageWritten``): its column values by name, its ``tags``, the ``names``
    of the users it names (assigned, last message's sender), the reader's ``read`` mark
    (inbound messages read; the office's when None: an API key, an event) and its SLA's
    earliest breach (``breachedAt``)."""
    names = names or {}
    last = None
    last_id, last_at = values["last_message_id"], values["last_message_at"]
    if last_id is not None and last_at is not None:
        sender = values["last_message_user_id"]
        last = {
            "id": last_id,
            "content": values["last_message_text"],
            "type": values["last_message_type"] or "TEXT",
            "message_at": last_at,
            "user_id": sender,
            "user_name": names.get(sender or ""),
        }
    assigned = values["assigned_user_id"]
    sla = None
    if values["sla_policy_id"] is not None:
        sla = {
            "policy_id": values["sla_policy_id"],
            "first_response_due_at": values["first_response_due_at"],
            "next_response_due_at": values["next_response_due_at"],
            "resolution_due_at": values["resolution_due_at"],
            "breached_at": breached_at,
        }
    marked = values["inbound_read"] if read is None else read
    return {
        **values,
        "tags": tags,
        "unread_count": max(values["inbound_count"] - marked, 0),
        "last_message": last,
        "responsables": [{"id": assigned, "name": names.get(assigned, "")}] if assigned else [],
        "sla": sla,
    }


def _values(record: Record) -> Mapping[str, Any]:
    return record._asdict() if isinstance(record, Row) else column_values(record)


def _earliest_breach(values: Mapping[str, Any]) -> datetime | None:
    """The earliest breach stamp of a conversation's column values (its SLA's
    ``breachedAt``), None for none."""
    stamps = [
        t
        for t in (
            values["first_response_breached_at"],
            values["next_response_breached_at"],
            values["resolution_breached_at"],
        )
        if t is not None
    ]
    return min(as_utc(t) for t in stamps) if stamps else None


async def present(
    session: AsyncSession,
    office_id: str,
    rows: Sequence[Record],
    user_id: str | None = None,
    *,
    tags_of_rows: Mapping[str, TagRefs] | None = None,
) -> list[ConversationOut]:
    """The answers for ``rows`` as ``user_id`` reads them (None: an API key), in a fixed
    number of statements whatever their count: tags, the users they name, the read marks."""
    ids = [c.id for c in rows]
    if tags_of_rows is None:
        tags_of_rows = await repository.tags_by_conversation(session, office_id, ids)
    named = [u for c in rows for u in (c.assigned_user_id, c.last_message_user_id) if u]
    names = await repository.user_names(session, office_id, named)
    reads = await repository.reads_of(session, office_id, user_id, ids) if user_id else {}
    # A list's rows (one result: the same columns) are paired with their names once, not
    # per row (``Row._asdict`` looks each key up again).
    fields = rows[0]._fields if rows and isinstance(rows[0], Row) else None
    return [
        conversation_out(
            c,
            tags_of_rows.get(c.id, []),
            names,
            reads.get(c.id, 0) if user_id else None,
            values=dict(zip(fields, c, strict=True)) if fields and isinstance(c, Row) else None,
        )
        for c in rows
    ]


ConversationPageWritten = written_timestamps(Page[ConversationOut])
"""``Page[ConversationOut]`` with its timestamps already written
(``kit.timeutil.written_timestamps``): what a kept list's raw page is written with."""


def listed_fields(row: Mapping[str, Any], by_user: bool) -> dict[str, Any]:
    """``conversation_fields`` of a kept list's row read through the raw driver
    (PostgreSQL, ``repository.raw_page``): ``repository.LIST_COLUMNS``, its ``LIST_TIMES``
    and ``sla_breached_at`` as the API writes them, and ``LIST_EXTRAS``, the tags, names
    and read mark ``present`` reads in statements of their own; ``by_user``: read by a
    signed-in user (their read mark, none read: 0), else by an API key (the office's)."""
    names = {
        user: name
        for user, name in (
            (row["assigned_user_id"], row["assigned_user_name"]),
            (row["last_message_user_id"], row["last_message_user_name"]),
        )
        if user is not None and name is not None
    }
    read = (row["reader_read"] or 0) if by_user else None
    return conversation_fields(row, tag_refs(row), names, read, row["sla_breached_at"])


async def read_conversation(
    session: AsyncSession, office_id: str, ident: str, user_id: str | None = None
) -> ConversationOut:
    conversation = await get_conversation(session, office_id, ident)
    return (await present(session, office_id, [conversation], user_id))[0]


async def list_conversations(
    session: AsyncSession,
    office_id: str,
    params: PageParams,
    *,
    inbox_id: str | None = None,
    person_id: str | None = None,
    status: str | None = None,
    mine: bool = False,
    unassigned: bool = False,
    is_archived: bool | None = None,
    assignee_id: str | None = None,
    tag_id: str | None = None,
    legal_area_id: str | None = None,
    search: str | None = None,
    user_id: str | None = None,
    visible: ColumnElement[bool] | None = None,
    seen: repository.Seen | None = None,
) -> bytes:
    """A page of conversations as ``Page[ConversationOut]`` JSON (the bytes FastAPI would
    write of it); a kept list's page on PostgreSQL written through
    ``ConversationPageWritten`` from its raw rows (``listed_fields``).

    ``mine``: assigned to the signed-in user (an API key is no user: 400);
    ``unassigned``: assigned to nobody; ``visible``: the caller's visibility clause, or
    ``seen`` the same as keys (the total then sums the kept counts);
    ``search``: a fragment of the contact's name, phone, WhatsApp username or of a message."""
    if assignee_id is not None and (mine or unassigned):
        raise ValidationFailed.field("query.assigneeId", "assigneeId excludes mine and unassigned")
    if mine and user_id is None:
        raise ValidationFailed.field("query.mine", "mine needs a signed-in user, not an API key")
    if mine and unassigned:
        raise ValidationFailed.field("query.unassigned", "mine and unassigned exclude each other")
    if inbox_id is not None:
        await inboxes.get_inbox(session, office_id, inbox_id)
    if person_id is not None:
        await contacts.get_contact(session, office_id, person_id)
    if assignee_id is not None:
        await users.get_user(session, office_id, assignee_id)
    if tag_id is not None:
        await tags.get_tag(session, office_id, tag_id)
    if legal_area_id is not None:
        await legal_areas.get_legal_area(session, office_id, legal_area_id)
    found: repository.Search | None = None
    if search is not None:
        if not search.strip():
            raise ValidationFailed.field("query.q", "q must not be blank")
        found = repository.Search(
            name=fold(search.strip()),
            text=search.strip(),
            phones=tuple(search_phone_digits(search)) if _phone_like(search) else (),
        )
    query, values = repository.conversations_list(
        office_id,
        inbox_id=inbox_id,
        person_id=person_id,
        status=status,
        assigned_user_id=user_id if mine else assignee_id,
        unassigned=unassigned,
        is_archived=is_archived,
        tag_id=tag_id,
        legal_area_id=legal_area_id,
        search=found,
        visible=visible,
        seen=seen,
    )
    if isinstance(query, repository.KeptList) and on_raw_driver(session):
        listed, total = await repository.raw_page(session, query, params, values, user_id)
        page = {
            "data": [listed_fields(c, user_id is not None) for c in listed],
            "total_results": total,
            "total_pages": math.ceil(total / params.limit),
        }
        return ConversationPageWritten.model_validate(page).model_dump_json(by_alias=True).encode()
    rows, total = await paginate_rows(session, query, params, values)
    items = await present(session, office_id, rows, user_id)
    return Page[ConversationOut].of(items, total, params).model_dump_json(by_alias=True).encode()


def _phone_like(text: str) -> bool:
    """A search written as (part of) a phone number: digits, at least three, and only the
    signs numbers are written with; ``joao_9`` is a username, not a phone holding 9."""
    return sum(c.isdigit() for c in text) >= 3 and all(c.isdigit() or c in " +-()." for c in text)


async def history_conversation(
    session: AsyncSession, office_id: str, person_id: str, inbox_id: str, integration_id: str
) -> Conversation:
    """Where a channel's imported past goes (WhatsApp coexistence ``history``): the
    contact's newest conversation on the integration, else a new CLOSED one made quietly,
    no event, no routing, no SLA (it is the past: nothing is to be answered)."""
    await contacts.lock_contact(session, office_id, person_id)
    found = await repository.latest_of(session, office_id, person_id, integration_id)
    if found is not None:
        return found
    now = utcnow()
    conversation = Conversation(
        office_id=office_id,
        person_id=person_id,
        inbox_id=inbox_id,
        integration_id=integration_id,
        status="CLOSED",
        priority="MEDIUM",
        closed_at=now,
        is_fixed=False,
        is_archived=False,
        sorted_at=now,
        inbound_count=0,
        inbound_read=0,
    )
    await repository.add(session, conversation)
    return conversation


async def open_conversation(
    session: AsyncSession, office_id: str, body: ConversationIn
) -> tuple[ConversationOut, bool]:
    """The contact's open conversation on the integration, else a new one (created True).

    The contact's row is locked first, so two concurrent opens make one conversation.
    """
    await contacts.lock_contact(session, office_id, body.person_id)
    inbox = await inboxes.get_inbox(session, office_id, body.inbox_id)
    integration = await inboxes.get_integration(session, office_id, body.integration_id)
    if integration.inbox_id != inbox.id:
        raise ValidationFailed.field(
            "body.integrationId",
            f"integration {integration.id} is not a channel of inbox {inbox.id}",
        )
    existing = await repository.find_open(session, office_id, body.person_id, integration.id)
    if existing is not None:
        return await read_conversation(session, office_id, existing.id), False
    if body.legal_area_id is not None:
        await legal_areas.get_legal_area(session, office_id, body.legal_area_id)
    routed = inbox.assignment_policy != "MANUAL"
    if routed:
        # The office's routing lock before the new row: arrivals queue in this order.
        await lock_office(session, office_id)
    conversation = Conversation(
        office_id=office_id,
        person_id=body.person_id,
        inbox_id=inbox.id,
        integration_id=integration.id,
        status="OPEN",
        priority=body.priority,
        assigned_user_id=None,
        department_id=None,
        legal_area_id=body.legal_area_id,
        queued_at=utcnow() if routed else None,
        last_message_at=None,
        is_fixed=False,
        is_archived=False,
        sorted_at=utcnow(),
        inbound_count=0,
        inbound_read=0,
    )
    await sla.refresh(session, conversation)
    if not await repository.add_open(session, conversation):
        # A concurrent reopen won the partial unique index: answer its conversation.
        existing = await repository.find_open(session, office_id, body.person_id, integration.id)
        if existing is None:
            raise _already_open("")
        return await read_conversation(session, office_id, existing.id), False
    out = conversation_out(conversation, [])
    await _emit(session, office_id, events.CREATED, out)
    if routed:
        await route_queued(session, office_id, [inbox.id])
        if conversation.assigned_user_id is not None:
            out = (await present(session, office_id, [conversation]))[0]
    return out, True


ROUTED_PER_TURN = 200
"""Queued conversations of an inbox one routing turn looks at (the rest wait for the next)."""


async def route_queued(session: AsyncSession, office_id: str, inbox_ids: Sequence[str]) -> int:
    """Gives the queued conversations of ``inbox_ids`` (in arrival order) to their inbox's
    users by its policy, as long as someone can take them; each assignment emits
    ``chat.conversation.assigned``. The caller holds the office's routing lock
    (``lock_office``), so concurrent turns never count a user's open conversations
    twice. How many were assigned."""
    assigned = 0
    for inbox_id in sorted(set(inbox_ids)):
        # Read afresh (and locked): its cursor is what the last turn left.
        inbox = await inboxes.get_inbox(session, office_id, inbox_id, for_change=True)
        if inbox.assignment_policy == "MANUAL":
            continue
        candidates = [
            routing.Candidate(ident, capacity, count, frozenset(areas))
            for ident, capacity, count, areas in await repository.routing_candidates(
                session, office_id, inbox_id
            )
        ]
        cursor = inbox.round_robin_cursor
        for conversation in await repository.queued(session, office_id, inbox_id, ROUTED_PER_TURN):
            if not any(c.has_room for c in candidates):
                break
            chosen = routing.choose(
                inbox.assignment_policy,
                candidates,
                cursor,
                conversation.legal_area_id,
                inbox.assign_by_legal_area,
            )
            if chosen is None:
                continue
            await _change(
                session, office_id, conversation.id, assigned_user_id=chosen.id, route=False
            )
            chosen.open_count += 1
            cursor = chosen.id
            assigned += 1
        if cursor is not None and cursor != inbox.round_robin_cursor:
            await inboxes.set_round_robin_cursor(session, office_id, inbox_id, cursor)
    return assigned


async def route_conversation(session: AsyncSession, office_id: str, ident: str) -> ConversationOut:
    """A hand-off that names no person: an open, unassigned conversation joins its inbox's
    queue and routing runs (a MANUAL inbox leaves it unassigned, for someone to take)."""
    await lock_office(session, office_id)
    conversation = await get_conversation(session, office_id, ident, for_change=True)
    if conversation.status == "OPEN" and conversation.assigned_user_id is None:
        inbox = await inboxes.get_inbox(session, office_id, conversation.inbox_id)
        if inbox.assignment_policy != "MANUAL":
            if conversation.queued_at is None:
                conversation.queued_at = utcnow()
                await session.flush()
            await route_queued(session, office_id, [inbox.id])
    return (await present(session, office_id, [conversation]))[0]


async def update_conversation(
    session: AsyncSession,
    office_id: str,
    ident: str,
    body: ConversationPatch,
    user_id: str | None = None,
    *,
    last_write: bool = False,
) -> ConversationOut:
    """``last_write``: the caller's transaction writes nothing after it (``_change``)."""
    body.refuse_sent_nulls()
    sent = body.model_fields_set
    return await _change(
        session,
        office_id,
        ident,
        status=body.status if "status" in sent else _UNSET,
        priority=body.priority if "priority" in sent else _UNSET,
        assigned_user_id=body.assigned_user_id if "assigned_user_id" in sent else _UNSET,
        department_id=body.department_id if "department_id" in sent else _UNSET,
        legal_area_id=body.legal_area_id if "legal_area_id" in sent else _UNSET,
        tag_ids=body.tags if "tags" in sent else _UNSET,
        is_fixed=body.is_fixed if "is_fixed" in sent else _UNSET,
        is_archived=body.is_archived if "is_archived" in sent else _UNSET,
        user_id=user_id,
        last_write=last_write,
    )


async def add_tag(
    session: AsyncSession, office_id: str, ident: str, tag_id: str
) -> ConversationOut:
    """Adds one tag row: concurrent additions all keep theirs; adding a held tag is a no-op."""
    await get_conversation(session, office_id, ident)
    await tags.get_tag(session, office_id, tag_id)
    return await _change(session, office_id, ident, tags_added=[tag_id])


async def remove_tag(
    session: AsyncSession, office_id: str, ident: str, tag_id: str
) -> ConversationOut:
    """Removing a tag the conversation does not carry changes nothing."""
    await get_conversation(session, office_id, ident)
    await tags.get_tag(session, office_id, tag_id)
    return await _change(session, office_id, ident, tags_removed=[tag_id])


async def take_tag_off_all(session: AsyncSession, office_id: str, tag_id: str) -> int:
    """For the tags domain to call before deleting a tag: each conversation carrying it
    loses it with ``chat.conversation.updated``, and its card ``crm.lead.updated``
    (``changes: ["tags"]``), in the same transaction. How many conversations changed."""
    held = await repository.conversations_with_tag(session, office_id, tag_id)
    for conversation in held:
        await _change(session, office_id, conversation.id, tags_removed=[tag_id])
    return len(held)


async def end_human_support(session: AsyncSession, office_id: str, ident: str) -> ConversationOut:
    """Clears the assigned user and department; the conversation goes back to its flow."""
    return await _change(session, office_id, ident, assigned_user_id=None, department_id=None)


async def record_message(
    session: AsyncSession,
    conversation: Conversation,
    *,
    message_id: str,
    at: datetime,
    text: str | None,
    type: str,
    user_id: str | None,
    inbound: bool,
    responds: bool = False,
) -> None:
    """Keeps the message as the conversation's last (when it is the newest) and counts an
    inbound one, in the message's transaction: the list never reads messages. The service
    levels' times move too (``responds``: an outbound message a person or an API key sent;
    the caller holds the conversation's row)."""
    if inbound:
        await sla.on_inbound(session, conversation, at)
    elif responds:
        await sla.on_response(session, conversation, at)
    await session.flush()
    await repository.keep_last_message(
        session,
        conversation,
        message_id=message_id,
        at=at,
        text=text,
        type=type,
        user_id=user_id,
        inbound=inbound,
    )


async def mark_read(
    session: AsyncSession, conversation: Conversation, user_id: str | None, inbound_read: int
) -> None:
    """The reader read the conversation's first ``inbound_read`` inbound messages: the
    office's mark moves (it is what an API key's ``unreadCount`` counts from), and the
    signed-in user's own."""
    await repository.mark_read(session, conversation, user_id, inbound_read)


async def add_note(session: AsyncSession, office_id: str, body: NoteIn) -> NoteOut:
    await get_conversation(session, office_id, body.conversation_id)
    if body.user_id is not None:
        await users.get_user(session, office_id, body.user_id)
    note = ConversationNote(
        office_id=office_id,
        conversation_id=body.conversation_id,
        user_id=body.user_id,
        text=body.text,
        created_at=utcnow(),
    )
    await repository.add(session, note)
    return NoteOut.model_validate(note)


async def list_notes(
    session: AsyncSession, office_id: str, conversation_id: str, params: PageParams
) -> tuple[list[NoteOut], int]:
    await get_conversation(session, office_id, conversation_id)
    rows, total = await paginate(
        session, repository.notes_query(office_id, conversation_id), params
    )
    return [NoteOut.model_validate(n) for n in rows], total


@dataclass
class _Diff:
    updated: bool = False
    assigned: bool = False
    tags: bool = False
    sla: bool = False
    status: bool = False


async def _change(
    session: AsyncSession,
    office_id: str,
    ident: str,
    *,
    status: Any = _UNSET,
    priority: Any = _UNSET,
    assigned_user_id: Any = _UNSET,
    department_id: Any = _UNSET,
    tag_ids: Any = _UNSET,
    tags_added: Sequence[str] = (),
    tags_removed: Sequence[str] = (),
    is_fixed: Any = _UNSET,
    is_archived: Any = _UNSET,
    legal_area_id: Any = _UNSET,
    user_id: str | None = None,
    route: bool = True,
    last_write: bool = False,
) -> ConversationOut:
    """Applies what differs from the stored conversation and emits the events it calls for.

    ``route``: a change that frees a person (a close, an unassignment) or changes a queued
    conversation's legal area lets routing run in the inboxes concerned (the office's
    routing lock is taken first; ``route_queued`` itself passes False).

    ``tag_ids`` replaces the set; only the difference is written, row by row, like
    ``tags_added``/``tags_removed``, so a concurrent change to other tags is kept.

    ``last_write``: the caller writes nothing after this change in its transaction
    (``PATCH /conversation/{id}``): when the change's event is its last write, the event
    is numbered in its own statement (``emit``).
    """
    if status == "OPEN":
        # A reopen serialises with opens of the contact (the partial unique index backs
        # it): the contact's lock first, then the conversation's, as a contact's delete
        # takes them.
        person_id = (await get_conversation(session, office_id, ident)).person_id
        await contacts.lock_contact(session, office_id, person_id)
    may_route = route and any(v is not _UNSET for v in (status, assigned_user_id, legal_area_id))
    if may_route:
        await lock_office(session, office_id)
    conversation = await get_conversation(session, office_id, ident, for_change=True)
    # Under the lock (a statement after it: its snapshot is the lock's). A change that may
    # move the service levels reads the inbox's policies with the tags on PostgreSQL.
    inbox_policies: list[PolicyTerms] | None = None
    before_tags: TagRefs
    read = None
    if any(v is not _UNSET for v in (status, priority, legal_area_id)):
        read = await repository.tag_refs_and_policies(
            session, office_id, ident, conversation.inbox_id
        )
    if read is not None:
        before_tags, inbox_policies = read
    else:
        before_tags = await repository.tag_refs_of(session, office_id, ident)
    previous_user, previous_department = conversation.assigned_user_id, conversation.department_id
    diff = _Diff()
    if status is not _UNSET and status != conversation.status:
        if status == "OPEN":
            other = await repository.find_open(
                session,
                office_id,
                conversation.person_id,
                conversation.integration_id,
                other_than=conversation.id,
            )
            if other is not None:
                raise _already_open(other.id)
        conversation.status = status
        conversation.queued_at = None
        diff.updated = diff.sla = diff.status = True
    if priority is not _UNSET and priority != conversation.priority:
        conversation.priority = priority
        diff.updated = diff.sla = True
    if assigned_user_id is not _UNSET and assigned_user_id != conversation.assigned_user_id:
        if assigned_user_id is not None:
            await users.get_user(session, office_id, assigned_user_id)
            conversation.queued_at = None
        conversation.assigned_user_id = assigned_user_id
        diff.assigned = True
    if legal_area_id is not _UNSET and legal_area_id != conversation.legal_area_id:
        if legal_area_id is not None:
            await legal_areas.get_legal_area(session, office_id, legal_area_id)
        conversation.legal_area_id = legal_area_id
        diff.updated = diff.sla = True
    if department_id is not _UNSET and department_id != conversation.department_id:
        if department_id is not None:
            await departments.get_department(session, office_id, department_id)
        conversation.department_id = department_id
        diff.assigned = True
    if is_fixed is not _UNSET and is_fixed != conversation.is_fixed:
        conversation.is_fixed = is_fixed
        diff.updated = True
    if is_archived is not _UNSET and is_archived != conversation.is_archived:
        conversation.is_archived = is_archived
        diff.updated = True
    if tag_ids is not _UNSET:
        wanted = {t.id for t in await _checked_tags(session, office_id, tag_ids)}
        held = {_tag_id(t) for t in before_tags}
        tags_added, tags_removed = sorted(wanted - held), sorted(held - wanted)
    removed = await repository.remove_tags(session, office_id, ident, tags_removed)
    added = await repository.add_tags(session, office_id, ident, tags_added)
    if added or removed:
        diff.updated = diff.tags = True
    if not diff.updated and not diff.assigned:
        return (
            await present(
                session, office_id, [conversation], user_id, tags_of_rows={ident: before_tags}
            )
        )[0]
    conversation.updated_at = utcnow()
    if diff.sla:
        if diff.status:
            await sla.on_status(
                session, conversation, status, conversation.updated_at, inbox_policies
            )
        else:
            await sla.refresh(session, conversation, inbox_policies)
    # The change is written by its ``chat.conversation.updated`` event's statement on
    # PostgreSQL (``emit``'s ``updating``; the row is locked above), else flushed here. A
    # change of status is flushed first: the reopen's unique index answers there.
    by_event = diff.updated and not diff.status
    if not by_event:
        await flush_or_conflict(session, _already_open(""))
    new_tags = await repository.tag_refs_of(session, office_id, ident) if diff.tags else before_tags
    # The events carry the conversation as an API key reads it (the office's read mark).
    out = (await present(session, office_id, [conversation], tags_of_rows={ident: new_tags}))[0]
    if diff.updated:
        # Nothing after the event (no hook, no other event, no routing) and the request
        # writes nothing after this change (``last_write``): it is numbered at once.
        only = last_write and not diff.tags and not diff.assigned and not may_route
        with conflicts_as(_already_open("")):
            await _emit(
                session,
                office_id,
                events.UPDATED,
                out,
                updating=conversation if by_event else None,
                last_write=only,
            )
    if diff.tags:
        await conversation_tags_changed.fire(ConversationTagsChanged(session, office_id, ident))
    if diff.assigned:
        assigned = events.ConversationAssignedPayload(
            **dict(out),
            previous_assigned_user_id=previous_user,
            previous_department_id=previous_department,
        )
        await _emit(session, office_id, events.ASSIGNED, assigned)
    if may_route:
        routed = await _route_after_change(session, office_id, conversation, previous_user)
        if routed:
            out = (
                await present(session, office_id, [conversation], tags_of_rows={ident: new_tags})
            )[0]
    if user_id is not None:
        return (
            await present(
                session, office_id, [conversation], user_id, tags_of_rows={ident: new_tags}
            )
        )[0]
    return out


async def _route_after_change(
    session: AsyncSession, office_id: str, conversation: Conversation, previous_user: str | None
) -> int:
    """Routing after a change: the person it freed (closed, or unassigned from it) may take
    a queued conversation of their inboxes; a queued one whose legal area changed may find
    its person."""
    inbox_ids: list[str] = []
    freed = previous_user is not None and (
        conversation.status != "OPEN" or conversation.assigned_user_id != previous_user
    )
    if freed and previous_user is not None:
        inbox_ids += await repository.routed_inboxes_of(session, office_id, previous_user)
    if (
        conversation.status == "OPEN"
        and conversation.assigned_user_id is None
        and conversation.queued_at is not None
    ):
        inbox_ids.append(conversation.inbox_id)
    if not inbox_ids:
        return 0
    return await route_queued(session, office_id, inbox_ids)


def _already_open(other_id: str) -> Conflict:
    details = "One open conversation per contact and integration: close it before reopening"
    if other_id:
        details = f"Conversation {other_id} is open; close it before reopening this one"
    return Conflict(
        "The contact already has an open conversation on this integration",
        details=details,
        code="CONVERSATION_ALREADY_OPEN",
    )


def _tag_id(tag: Tag | dict[str, Any]) -> str:
    return tag["id"] if isinstance(tag, dict) else tag.id


async def _checked_tags(session: AsyncSession, office_id: str, tag_ids: Sequence[str]) -> list[Tag]:
    found = await tags.get_tags(session, office_id, tag_ids)
    return sorted(found, key=lambda t: (t.name, t.id))


async def _emit(
    session: AsyncSession,
    office_id: str,
    event: Event[C],
    out: C,
    *,
    updating: Conversation | None = None,
    last_write: bool = False,
) -> None:
    await emit(
        session,
        office_id,
        event,
        out,
        conversation_id=out.id,
        integration_id=out.integration_id,
        updating=updating,
        last_write=last_write,
    )


async def latest_of_person(
    session: AsyncSession, office_id: str, person_id: str
) -> Conversation | None:
    """The contact's newest conversation (open or not), or None."""
    stmt = repository.newest_first(office_id, person_id).limit(1)
    found: Conversation | None = (await session.scalars(stmt)).first()
    return found


async def claim_away_message(
    session: AsyncSession, conversation: Conversation, period_start: datetime, at: datetime
) -> bool:
    """Whether this inbound message is the one that gets the inbox's away message of the
    closed period that began at ``period_start`` (once per conversation per period)."""
    return await repository.claim_away_message(session, conversation, period_start, at)
