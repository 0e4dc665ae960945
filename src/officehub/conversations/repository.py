from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from typing import Any

from sqlalchemy import (
    ARRAY,
    BigInteger,
    ColumnElement,
    DateTime,
    Exists,
    Float,
    Integer,
    Select,
    String,
    and_,
    bindparam,
    case,
    delete,
    exists,
    func,
    literal,
    literal_column,
    null,
    or_,
    select,
    true,
    tuple_,
    type_coerce,
    union_all,
    update,
    values,
)
from sqlalchemy import (
    column as sql_column,
)
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm.attributes import set_committed_value

from officehub.contacts.models import Contact
from officehub.conversations.models import (
    Conversation,
    ConversationCount,
    ConversationNote,
    ConversationRead,
    ConversationTag,
)
from officehub.events.models import OutboxEvent
from officehub.inboxes.models import Inbox, Integration
from officehub.kit.db import api_timestamp
from officehub.kit.integrity import violates
from officehub.kit.pagination import ListQuery, PageParams
from officehub.kit.queue import lock_skipping, take
from officehub.kit.raw_read import RawSelect, Row, on_raw_driver
from officehub.kit.repository import (
    Keyset,
    get_scoped,
    insert_ignoring_duplicates,
    keyset_page,
    scoped,
)
from officehub.kit.timeutil import utcnow
from officehub.sla.repository import PolicyTerms, policy_terms_of, policy_terms_subquery
from officehub.tags.models import Tag
from officehub.tags.repository import TAG_REFS, tag_refs, tag_refs_lateral
from officehub.users.models import User, UserInbox, UserLegalArea

OPEN_CONVERSATION_INDEX = "ux_conversations_office_id_person_id_integration_id_open"


async def get_conversation(
    session: AsyncSession, office_id: str, ident: str, *, for_change: bool = False
) -> Conversation | None:
    return await get_scoped(session, Conversation, office_id, ident, for_change=for_change)


async def latest_of(
    session: AsyncSession, office_id: str, person_id: str, integration_id: str
) -> Conversation | None:
    """The contact's newest conversation on the integration, open or closed."""
    stmt = scoped(Conversation, office_id).where(
        Conversation.person_id == person_id, Conversation.integration_id == integration_id
    )
    stmt = stmt.order_by(Conversation.created_at.desc(), Conversation.id.desc()).limit(1)
    return (await session.scalars(stmt)).first()


async def find_open(
    session: AsyncSession,
    office_id: str,
    person_id: str,
    integration_id: str,
    *,
    other_than: str | None = None,
) -> Conversation | None:
    stmt = scoped(Conversation, office_id).where(
        Conversation.person_id == person_id,
        Conversation.integration_id == integration_id,
        Conversation.status == "OPEN",
    )
    if other_than is not None:
        stmt = stmt.where(Conversation.id != other_than)
    return (await session.scalars(stmt.order_by(Conversation.created_at).limit(1))).first()


@dataclass(frozen=True)
class Search:
    """``GET /conversation?q=``: the contact's folded name or WhatsApp username (``name``),
    its phone's digits (any of ``phones``, the forms of one number), a message's ``text``."""

    name: str
    text: str
    phones: tuple[str, ...] = ()


def _containing(fragment: str) -> str:
    """A LIKE pattern matching ``fragment`` anywhere, its own ``%`` and ``_`` taken literally."""
    escaped = fragment.replace("/", "//").replace("%", "/%").replace("_", "/_")
    return f"%{escaped}%"


def _searched(office_id: str, search: Search) -> ColumnElement[bool]:
    """The conversations whose contact or one of whose messages match: each arm is found
    by its own index on PostgreSQL (trigram GIN of 0007_trgm and 0034_conversation_filters)."""
    name = _containing(search.name)
    matches = [
        Contact.search_name.like(name, escape="/"),
        Contact.whatsapp_username.ilike(name, escape="/"),
        *(Contact.phone.like(_containing(p), escape="/") for p in search.phones),
    ]
    people = select(Contact.id).where(Contact.office_id == office_id, or_(*matches))
    if _saying is None:
        raise RuntimeError(
            "No message search is wired: call officehub.hook_subscriptions.install() first"
        )
    said = _saying(office_id, _containing(search.text))
    return or_(Conversation.person_id.in_(people), Conversation.id.in_(said))


MessageSearch = Callable[[str, str], Select[Any]]
"""``(office_id, LIKE pattern escaped with "/")`` → a select of the ids of the office's
conversations with a message whose text matches, any case (messages sit above
conversations: the wiring, ``hook_subscriptions``, hands it in)."""
_saying: MessageSearch | None = None


def use_message_search(search: MessageSearch) -> None:
    global _saying
    _saying = search


@dataclass(frozen=True)
class Seen:
    """What a SUPERVISOR or an AGENT may see of the list (``visibility.seen_in_list``): the
    conversations of ``inbox_ids``, and with ``user_id`` only those assigned to that user
    or to nobody. As keys (not a clause), so that the total sums the kept counts too."""

    inbox_ids: tuple[str, ...]
    user_id: str | None = None


def conversations_list(
    office_id: str,
    *,
    inbox_id: str | None = None,
    person_id: str | None = None,
    status: str | None = None,
    assigned_user_id: str | None = None,
    unassigned: bool = False,
    is_archived: bool | None = None,
    tag_id: str | None = None,
    legal_area_id: str | None = None,
    search: Search | None = None,
    visible: ColumnElement[bool] | None = None,
    seen: Seen | None = None,
) -> tuple[ListQuery, dict[str, Any]]:
    """Pinned first, then by last message (or creation, before any), newest first: the
    order of ``ix_conversations_office_id[_inbox_id]_listed``, read backwards. The list's
    statement (page and count) and the values to bind: the filters' shape is built once
    (``_listed``, ``seen`` among them); a search or a visibility clause is added per
    request."""
    query = _listed(
        by_inbox=inbox_id is not None,
        by_person=person_id is not None,
        by_status=status is not None,
        by_assignee=assigned_user_id is not None,
        unassigned=unassigned,
        is_archived=is_archived,
        by_tag=tag_id is not None,
        by_legal_area=legal_area_id is not None,
        seen=seen is not None,
        seen_own=seen is not None and seen.user_id is not None,
    )
    added = [
        clause
        for clause in (None if search is None else _searched(office_id, search), visible)
        if clause is not None
    ]
    if added:
        stmt = query.stmt.where(*added)
        query = ListQuery(stmt, deep=_page_by_ids(stmt))
    values = {
        "office_id": office_id,
        "inbox_id": inbox_id,
        "person_id": person_id,
        "status": status,
        "assigned_user_id": assigned_user_id,
        "tag_id": tag_id,
        "legal_area_id": legal_area_id,
        "seen_inboxes": None if seen is None else list(seen.inbox_ids),
        "seen_user": None if seen is None else seen.user_id,
    }
    return query, {k: v for k, v in values.items() if v is not None}


@cache
def _listed(
    *,
    by_inbox: bool,
    by_person: bool,
    by_status: bool,
    by_assignee: bool,
    unassigned: bool,
    is_archived: bool | None,
    by_tag: bool,
    by_legal_area: bool,
    seen: bool = False,
    seen_own: bool = False,
) -> ListQuery:
    """The conversation list of one shape of filter, every value bound: built once, a
    request neither builds nor hashes it (``ListQuery``). It selects the table's columns,
    not the mapped class: a page is answered from its rows (``service.conversation_out``
    takes either), without loading 20 ORM objects into the session. Kept, it is read
    through the raw driver on PostgreSQL (``KeptList.raw``, ``raw_page``): each page one
    statement carrying its tags, names, read marks and total, its rows as dicts."""
    office_id = bindparam("office_id", type_=String)
    stmt = select(*Conversation.__table__.c).where(Conversation.office_id == office_id)
    if by_inbox:
        stmt = stmt.where(Conversation.inbox_id == bindparam("inbox_id"))
    if by_person:
        stmt = stmt.where(Conversation.person_id == bindparam("person_id"))
    if by_status:
        stmt = stmt.where(Conversation.status == bindparam("status"))
    if by_assignee:
        stmt = stmt.where(Conversation.assigned_user_id == bindparam("assigned_user_id"))
    if unassigned:
        stmt = stmt.where(Conversation.assigned_user_id.is_(None))
    if is_archived is not None:
        stmt = stmt.where(Conversation.is_archived.is_(is_archived))
    if by_tag:
        stmt = stmt.where(
            exists().where(
                ConversationTag.office_id == office_id,
                ConversationTag.conversation_id == Conversation.id,
                ConversationTag.tag_id == bindparam("tag_id"),
            )
        )
    if by_legal_area:
        stmt = stmt.where(Conversation.legal_area_id == bindparam("legal_area_id"))
    if seen:
        stmt = stmt.where(Conversation.inbox_id.in_(bindparam("seen_inboxes", expanding=True)))
    if seen_own:
        stmt = stmt.where(
            or_(
                Conversation.assigned_user_id.is_(None),
                Conversation.assigned_user_id == bindparam("seen_user"),
            )
        )
    kept = not (by_person or by_tag or by_legal_area)
    stmt = stmt.order_by(
        Conversation.is_fixed.desc(), Conversation.sorted_at.desc(), Conversation.id.desc()
    )
    return KeptList(
        stmt,
        _kept_total(
            by_inbox=by_inbox,
            by_status=by_status,
            by_assignee=by_assignee,
            unassigned=unassigned,
            is_archived=is_archived,
            seen=seen,
            seen_own=seen_own,
        )
        if kept
        else None,
        _page_by_ids(stmt),
    )


LIST_TIMES = (
    "last_message_at",
    "first_inbound_at",
    "first_response_at",
    "awaiting_since",
    "closed_at",
    "created_at",
    "updated_at",
    "first_response_due_at",
    "next_response_due_at",
    "resolution_due_at",
)
"""The timestamps a conversation's answer holds, which a kept list's raw page reads as the
API writes them (``kit.db.api_timestamp``), with ``sla_breached_at``: the earliest of its
three breach stamps (``service._earliest_breach``: ``breachedAt``)."""

LIST_COLUMNS = (
    "id",
    "person_id",
    "inbox_id",
    "integration_id",
    "status",
    "priority",
    "assigned_user_id",
    "department_id",
    "legal_area_id",
    "is_fixed",
    "is_archived",
    "sla_policy_id",
    "last_message_id",
    "last_message_text",
    "last_message_type",
    "last_message_user_id",
    "inbound_count",
    "inbound_read",
)
"""The other columns a conversation's answer is made of (``service.listed_fields``)."""

_BREACHES = ("first_response_breached_at", "next_response_breached_at", "resolution_breached_at")


def _answered(table: Any) -> list[Any]:
    """A kept list's raw page's columns of ``table`` (the conversations or an alias): only
    what the answer holds, its timestamps written by PostgreSQL."""
    breached = func.least(*(table.c[name] for name in _BREACHES))
    return [
        *(table.c[name] for name in LIST_COLUMNS),
        *(api_timestamp(table.c[name], name) for name in LIST_TIMES),
        api_timestamp(breached, "sla_breached_at"),
    ]


LIST_EXTRAS = (
    *TAG_REFS,
    "assigned_user_name",
    "last_message_user_name",
    "reader_read",
    "total",
)
"""What a kept list's raw page carries beside each conversation's columns (PostgreSQL): its
tag references as three arrays in ``tags_by_conversation``'s order (by name, then id; NULL
for none), the names of the users it names (``user_names``: NULL for none or another
office's), the reader's read mark (``reads_of``: NULL for none; only in the reader's
statements) and the list's total."""


@dataclass(frozen=True, slots=True)
class RawList:
    """A kept list's statements for one kind of reader, through the raw driver: the page
    and the deep page each with ``LIST_EXTRAS`` beside the columns (one statement a page),
    and the count alone, for a page past the last (no row to carry the total)."""

    page: RawSelect
    deep: RawSelect
    count: RawSelect


class KeptList(ListQuery):
    """A list of one shape of filter, built once (``_listed``): its statements for
    SQLAlchemy (``ListQuery``: SQLite), and on PostgreSQL ``raw``, the same pages with each
    page's follow-up reads (tags, users' names, read marks) and its total in its one
    statement: ``raw[False]`` for an API key (the office's read mark), ``raw[True]`` for a
    signed-in user (theirs, ``reader`` bound)."""

    def __init__(self, stmt: Select[Any], count: Select[Any] | None, deep: Select[Any]) -> None:
        super().__init__(stmt, count, deep)
        listed = deep.get_final_froms()[0]
        self.raw = {
            reads: RawList(
                RawSelect(_with_extras(self.page, Conversation.__table__, self.count, reads)),
                RawSelect(_with_extras(self.deep, listed, self.count, reads)),
                RawSelect(self.count),
            )
            for reads in (False, True)
        }


async def raw_page(
    session: AsyncSession,
    query: KeptList,
    params: PageParams,
    values: Mapping[str, Any],
    reader: str | None,
) -> tuple[list[Row], int]:
    """A kept list's page through the raw driver (PostgreSQL): the conversations as dicts
    of their columns and ``LIST_EXTRAS`` (``reader_read`` with a ``reader``, the user who
    reads), and the total; one statement, two for a page past the last."""
    raw = query.raw[reader is not None]
    page = {**values, "page_limit": params.limit, "page_offset": params.offset}
    if reader is not None:
        page["reader"] = reader
    found = await (raw.page if params.offset == 0 else raw.deep).rows(session, page)
    if found:
        return found, int(found[0]["total"])
    [counted] = await raw.count.rows(session, values)  # one row of one column
    [total] = counted.values()
    return [], int(total or 0)


def _with_extras(page: Select[Any], table: Any, count: Select[Any], reads: bool) -> Select[Any]:
    """``page`` (rows of ``table``, the conversations or an alias of them) with
    ``LIST_EXTRAS``: the tags a ``LATERAL`` of ``tags_by_conversation``'s select per row,
    each name and the read mark a lookup by key per row, the total the count once (an
    uncorrelated subquery: PostgreSQL runs it once, as its own statement ran)."""
    office_id = bindparam("office_id", type_=String)
    tags = tag_refs_lateral(ConversationTag, ConversationTag.conversation_id, table.c.id, office_id)

    def name_of(user_id: Any, label: str) -> Any:
        named = select(User.name).where(User.office_id == office_id, User.id == user_id)
        return named.scalar_subquery().label(label)

    extras = [
        *(tags.c[key] for key in TAG_REFS),
        name_of(table.c.assigned_user_id, "assigned_user_name"),
        name_of(table.c.last_message_user_id, "last_message_user_name"),
    ]
    if reads:
        read = select(ConversationRead.inbound_read).where(
            ConversationRead.office_id == office_id,
            ConversationRead.user_id == bindparam("reader", type_=String),
            ConversationRead.conversation_id == table.c.id,
        )
        extras.append(read.scalar_subquery().label("reader_read"))
    total = count.correlate(None).scalar_subquery().label("total")
    answered = page.with_only_columns(*_answered(table), maintain_column_froms=True)
    return answered.add_columns(*extras, total).join_from(table, tags, true())


def _page_by_ids(stmt: Select[Any]) -> Select[Any]:
    """A page past the first of the list ``stmt`` (filtered and in the list's order) in
    two steps: its ids alone skip the offset, then its rows are read by id and put in the
    same order again (the order ends with the unique id: the same rows, ties and all, as
    ``stmt``'s ``LIMIT … OFFSET``). On PostgreSQL the ids' step is an index-only scan of
    ``ix_conversations_office_id[_inbox_id]_listed``, whose entries include the kept
    filters' columns (0039): page 100 of 50 open conversations walks 25,000 index entries
    (one in five open), not 25,000 rows scattered over the table to check their status;
    only the page's 50 rows are read.
    The first page stays ``stmt``'s own: it skips nothing, and the join costs it about
    0.25 ms of planning and lookups by id at any size."""
    listed = Conversation.__table__.alias("listed")
    ids = (
        stmt.with_only_columns(Conversation.id)
        .limit(bindparam("page_limit", type_=Integer))
        .offset(bindparam("page_offset", type_=Integer))
    )
    return (
        select(*listed.c)
        .where(listed.c.id.in_(ids))
        .order_by(listed.c.is_fixed.desc(), listed.c.sorted_at.desc(), listed.c.id.desc())
    )


def _kept_total(
    *,
    by_inbox: bool,
    by_status: bool,
    by_assignee: bool,
    unassigned: bool,
    is_archived: bool | None,
    seen: bool,
    seen_own: bool,
) -> Select[Any]:
    """The list's exact total for filters all among ``conversation_counts``' keys: the sum
    of the matching rows the triggers keep (a few rows per inbox, status, assignee and
    archived flag), not a count of the conversations. Same bound values as the list."""
    counts = ConversationCount
    stmt = select(func.coalesce(func.sum(counts.conversations), 0)).where(
        counts.office_id == bindparam("office_id", type_=String)
    )
    if by_inbox:
        stmt = stmt.where(counts.inbox_id == bindparam("inbox_id"))
    if by_status:
        stmt = stmt.where(counts.status == bindparam("status"))
    if by_assignee:
        stmt = stmt.where(counts.assignee_key == bindparam("assigned_user_id"))
    if unassigned:
        stmt = stmt.where(counts.assignee_key == "")
    if is_archived is not None:
        stmt = stmt.where(counts.is_archived.is_(is_archived))
    if seen:
        stmt = stmt.where(counts.inbox_id.in_(bindparam("seen_inboxes", expanding=True)))
    if seen_own:
        stmt = stmt.where(
            or_(counts.assignee_key == "", counts.assignee_key == bindparam("seen_user"))
        )
    return stmt


def newest_first(office_id: str, person_id: str) -> Select[Any]:
    return (
        scoped(Conversation, office_id)
        .where(Conversation.person_id == person_id)
        .order_by(Conversation.created_at.desc(), Conversation.id.desc())
    )


async def keep_last_message(
    session: AsyncSession,
    conversation: Conversation,
    *,
    message_id: str,
    at: datetime,
    text: str | None,
    type: str,
    user_id: str | None,
    inbound: bool,
) -> None:
    """One UPDATE, in the message's transaction: the inbound count goes up by the
    database's own arithmetic, and the last message is replaced only by a later one, so
    concurrent stores of one conversation (locked or not) keep the newest and lose no
    count. The loaded conversation is given what the row now holds."""
    table = Conversation.__table__.c
    newer = or_(table.last_message_at.is_(None), table.last_message_at <= at)

    def kept(column: Any, value: Any) -> Any:
        return case((newer, value), else_=column)

    stmt = (
        update(Conversation)
        .where(Conversation.office_id == conversation.office_id, Conversation.id == conversation.id)
        .values(
            last_message_id=kept(table.last_message_id, message_id),
            last_message_text=kept(table.last_message_text, text),
            last_message_type=kept(table.last_message_type, type),
            last_message_user_id=kept(table.last_message_user_id, user_id),
            sorted_at=kept(table.sorted_at, at),
            last_message_at=kept(table.last_message_at, at),
            inbound_count=table.inbound_count + (1 if inbound else 0),
        )
        .returning(*(table[c] for c in _KEPT))
        .execution_options(synchronize_session=False)
    )
    row = (await session.execute(stmt)).one()
    for column, value in zip(_KEPT, row, strict=True):
        set_committed_value(conversation, column, value)


_KEPT = (
    "last_message_id",
    "last_message_text",
    "last_message_type",
    "last_message_user_id",
    "sorted_at",
    "last_message_at",
    "inbound_count",
)


async def mark_read(
    session: AsyncSession, conversation: Conversation, user_id: str | None, inbound_read: int
) -> None:
    """Moves the office's read mark (and the user's, for a signed-in user) up to
    ``inbound_read`` inbound messages; never back (a mark of an older message keeps the
    newer one)."""
    table = Conversation.__table__.c
    row = (
        await session.execute(
            update(Conversation)
            .where(
                Conversation.office_id == conversation.office_id,
                Conversation.id == conversation.id,
            )
            .values(
                inbound_read=case(
                    (table.inbound_read < inbound_read, inbound_read), else_=table.inbound_read
                )
            )
            .returning(table.inbound_read)
            .execution_options(synchronize_session=False)
        )
    ).one()
    set_committed_value(conversation, "inbound_read", row[0])
    if user_id is None:
        return
    values = {
        "office_id": conversation.office_id,
        "conversation_id": conversation.id,
        "user_id": user_id,
        "inbound_read": inbound_read,
        "read_at": utcnow(),
    }
    dialect = session.get_bind().dialect.name
    insert_of: Any = pg_insert if dialect == "postgresql" else sqlite_insert
    stmt = insert_of(ConversationRead).values(values)
    excluded = stmt.excluded
    await session.execute(
        stmt.on_conflict_do_update(
            index_elements=["conversation_id", "user_id"],
            set_={
                "inbound_read": case(
                    (
                        ConversationRead.inbound_read < excluded.inbound_read,
                        excluded.inbound_read,
                    ),
                    else_=ConversationRead.inbound_read,
                ),
                "read_at": excluded.read_at,
            },
        )
    )


async def reads_of(
    session: AsyncSession, office_id: str, user_id: str, conversation_ids: Sequence[str]
) -> dict[str, int]:
    """The user's read marks on these conversations (inbound messages read)."""
    if not conversation_ids:
        return {}
    stmt = select(ConversationRead.conversation_id, ConversationRead.inbound_read).where(
        ConversationRead.office_id == office_id,
        ConversationRead.user_id == user_id,
        ConversationRead.conversation_id.in_(conversation_ids),
    )
    return {c: n for c, n in await session.execute(stmt)}


async def user_names(
    session: AsyncSession, office_id: str, user_ids: Sequence[str]
) -> dict[str, str]:
    """The names of the office's users among ``user_ids`` (one statement; none for none)."""
    wanted = sorted(set(user_ids))
    if not wanted:
        return {}
    stmt = select(User.id, User.name).where(User.office_id == office_id, User.id.in_(wanted))
    return {i: n for i, n in await session.execute(stmt)}


async def add(session: AsyncSession, record: Any) -> None:
    session.add(record)
    await session.flush()


async def tags_by_conversation(
    session: AsyncSession, office_id: str, conversation_ids: Sequence[str]
) -> dict[str, list[Tag]]:
    if not conversation_ids:
        return {}
    found: dict[str, list[Tag]] = defaultdict(list)
    values = {"office_id": office_id, "conversation_ids": list(conversation_ids)}
    for conversation_id, tag in await session.execute(_TAGS_OF_CONVERSATIONS, values):
        found[conversation_id].append(tag)
    return found


_TAGS_OF_CONVERSATIONS = (
    select(ConversationTag.conversation_id, Tag)
    .join(Tag, Tag.id == ConversationTag.tag_id)
    .where(
        ConversationTag.office_id == bindparam("office_id"),
        Tag.office_id == bindparam("office_id"),
        ConversationTag.conversation_id.in_(bindparam("conversation_ids", expanding=True)),
    )
    .order_by(Tag.name, Tag.id)
)
"""Built once: a request binds its values and SQLAlchemy finds the compiled form at once."""
_RAW_TAGS_OF_CONVERSATIONS = RawSelect(
    _TAGS_OF_CONVERSATIONS.with_only_columns(
        ConversationTag.conversation_id, Tag.id, Tag.name, Tag.color
    )
)


async def tags_of(session: AsyncSession, office_id: str, conversation_id: str) -> list[Tag]:
    return (await tags_by_conversation(session, office_id, [conversation_id])).get(
        conversation_id, []
    )


async def tag_refs_of(
    session: AsyncSession, office_id: str, conversation_id: str
) -> list[Tag] | list[Row]:
    """``tags_of`` for an answer's tag references: on PostgreSQL each tag's id, name and
    colour as a dict, through the raw driver (the same tags in the same order)."""
    if not on_raw_driver(session):
        return await tags_of(session, office_id, conversation_id)
    values = {"office_id": office_id, "conversation_ids": [conversation_id]}
    return await _RAW_TAGS_OF_CONVERSATIONS.rows(session, values)


async def tag_refs_and_policies(
    session: AsyncSession, office_id: str, conversation_id: str, inbox_id: str
) -> tuple[list[dict[str, str]], list[PolicyTerms]] | None:
    """``tag_refs_of`` and its inbox's SLA policies (``sla.repository.policies_of_inbox``,
    as ``PolicyTerms``) in one statement on PostgreSQL, for a change under the
    conversation's lock that may move its service levels; None elsewhere (the caller reads
    each apart). The same tags and policies, in the same orders."""
    if not on_raw_driver(session):
        return None
    values = {"office_id": office_id, "conversation_id": conversation_id, "inbox_id": inbox_id}
    row = await _RAW_TAGS_AND_POLICIES.one_or_none(session, values)
    if row is None:  # pragma: no cover (two aggregates answer one row)
        return [], []
    return tag_refs(row), policy_terms_of(row)


def _tags_and_policies() -> Select[Any]:
    tags = tag_refs_lateral(
        ConversationTag,
        ConversationTag.conversation_id,
        bindparam("conversation_id"),
        bindparam("office_id"),
    )
    policies = policy_terms_subquery(bindparam("office_id"), bindparam("inbox_id"))
    return select(tags, policies).select_from(tags.join(policies, true()))


_RAW_TAGS_AND_POLICIES = RawSelect(_tags_and_policies())


async def add_tags(
    session: AsyncSession, office_id: str, conversation_id: str, tag_ids: Sequence[str]
) -> int:
    """Inserts the missing tag rows (``ON CONFLICT DO NOTHING``); how many were new."""
    rows = [
        {"office_id": office_id, "conversation_id": conversation_id, "tag_id": t} for t in tag_ids
    ]
    return await insert_ignoring_duplicates(session, ConversationTag, rows)


async def remove_tags(
    session: AsyncSession, office_id: str, conversation_id: str, tag_ids: Sequence[str]
) -> int:
    if not tag_ids:
        return 0
    result = await session.execute(
        delete(ConversationTag).where(
            ConversationTag.office_id == office_id,
            ConversationTag.conversation_id == conversation_id,
            ConversationTag.tag_id.in_(tag_ids),
        )
    )
    return int(getattr(result, "rowcount", 0) or 0)


async def add_open(session: AsyncSession, conversation: Conversation) -> bool:
    """Inserts an open conversation; False when the contact's open one on the integration
    exists already (the partial unique index refused it; the transaction goes on)."""
    try:
        async with session.begin_nested():
            session.add(conversation)
            await session.flush()
    except IntegrityError as exc:
        if not violates(exc, OPEN_CONVERSATION_INDEX):
            raise
        return False
    return True


async def conversations_with_tag(
    session: AsyncSession, office_id: str, tag_id: str
) -> list[Conversation]:
    stmt = (
        scoped(Conversation, office_id)
        .join(ConversationTag, ConversationTag.conversation_id == Conversation.id)
        .where(ConversationTag.office_id == office_id, ConversationTag.tag_id == tag_id)
        .order_by(Conversation.id)
    )
    return list(await session.scalars(stmt))


def notes_query(office_id: str, conversation_id: str) -> Select[Any]:
    """Newest first."""
    return (
        scoped(ConversationNote, office_id)
        .where(ConversationNote.conversation_id == conversation_id)
        .order_by(ConversationNote.created_at.desc(), ConversationNote.id.desc())
    )


async def count_conversations(
    session: AsyncSession,
    office_id: str,
    *,
    inbox_id: str | None = None,
    integration_id: str | None = None,
) -> int:
    """Conversations held by an inbox or a channel: they block its deletion."""
    stmt = select(func.count()).where(Conversation.office_id == office_id)
    if inbox_id is not None:
        stmt = stmt.where(Conversation.inbox_id == inbox_id)
    if integration_id is not None:
        stmt = stmt.where(Conversation.integration_id == integration_id)
    return int(await session.scalar(stmt) or 0)


async def open_conversations(
    session: AsyncSession, office_id: str, person_id: str
) -> list[Conversation]:
    stmt = scoped(Conversation, office_id).where(
        Conversation.person_id == person_id, Conversation.status == "OPEN"
    )
    return list(await session.scalars(stmt.order_by(Conversation.id)))


async def move_person(session: AsyncSession, office_id: str, from_id: str, to_id: str) -> None:
    """The conversations of ``from_id`` (with their messages and notes) become ``to_id``'s."""
    await session.execute(
        update(Conversation)
        .where(Conversation.office_id == office_id, Conversation.person_id == from_id)
        .values(person_id=to_id)
        .execution_options(synchronize_session=False)
    )


async def conversation_ids_of_person(
    session: AsyncSession, office_id: str, person_id: str
) -> list[str]:
    return list(
        await session.scalars(
            select(Conversation.id).where(
                Conversation.office_id == office_id, Conversation.person_id == person_id
            )
        )
    )


async def routed_inboxes_of(session: AsyncSession, office_id: str, user_id: str) -> list[str]:
    """The inboxes of the user that route their conversations (policy other than MANUAL)."""
    stmt = (
        select(Inbox.id)
        .join(UserInbox, UserInbox.inbox_id == Inbox.id)
        .where(
            Inbox.office_id == office_id,
            UserInbox.office_id == office_id,
            UserInbox.user_id == user_id,
            Inbox.assignment_policy != "MANUAL",
        )
        .order_by(Inbox.id)
    )
    return list(await session.scalars(stmt))


async def routing_candidates(
    session: AsyncSession, office_id: str, inbox_id: str
) -> list[tuple[str, int | None, int, list[str]]]:
    """The inbox's active ONLINE users as routing weighs them, by id: (id, capacity, open
    conversations in the whole office, legal area ids). Two statements."""
    open_count = (
        select(func.count())
        .where(
            Conversation.office_id == office_id,
            Conversation.assigned_user_id == User.id,
            Conversation.status == "OPEN",
        )
        .correlate(User)
        .scalar_subquery()
    )
    stmt = (
        select(User.id, User.capacity, open_count)
        .join(UserInbox, UserInbox.user_id == User.id)
        .where(
            User.office_id == office_id,
            UserInbox.office_id == office_id,
            UserInbox.inbox_id == inbox_id,
            User.is_active.is_(True),
            User.availability == "ONLINE",
        )
        .order_by(User.id)
    )
    rows = [(i, c, int(n)) for i, c, n in (await session.execute(stmt)).all()]
    areas: dict[str, list[str]] = defaultdict(list)
    if rows:
        area_rows = await session.execute(
            select(UserLegalArea.user_id, UserLegalArea.legal_area_id).where(
                UserLegalArea.office_id == office_id,
                UserLegalArea.user_id.in_([r[0] for r in rows]),
            )
        )
        for user_id, area_id in area_rows.all():
            areas[user_id].append(area_id)
    return [(i, c, n, areas[i]) for i, c, n in rows]


async def queued(
    session: AsyncSession, office_id: str, inbox_id: str, limit: int
) -> list[Conversation]:
    """The inbox's queue in arrival order: open, unassigned conversations waiting for a
    person. Locked; on PostgreSQL one a concurrent change holds is passed over (``SKIP
    LOCKED``: it waits for the next turn rather than make the two transactions wait on each
    other)."""
    stmt = (
        scoped(Conversation, office_id)
        .where(
            Conversation.inbox_id == inbox_id,
            Conversation.queued_at.is_not(None),
            Conversation.status == "OPEN",
            Conversation.assigned_user_id.is_(None),
        )
        .order_by(Conversation.queued_at, Conversation.id)
        .limit(limit)
        .execution_options(populate_existing=True)
    )
    return list(await session.scalars(lock_skipping(session, stmt, of=Conversation)))


async def forget_legal_area(session: AsyncSession, office_id: str, legal_area_id: str) -> None:
    """The office's conversations about a deleted legal area are about none."""
    await session.execute(
        update(Conversation)
        .where(Conversation.office_id == office_id, Conversation.legal_area_id == legal_area_id)
        .values(legal_area_id=None, updated_at=Conversation.updated_at)
        .execution_options(synchronize_session=False)
    )


async def claim_away_message(
    session: AsyncSession, conversation: Conversation, period_start: datetime, at: datetime
) -> bool:
    """Marks the away message sent at ``at`` unless it already was in the closed period
    that began at ``period_start``; True when this call marked it. One conditional UPDATE:
    the row's lock makes concurrent inbound messages claim it once."""
    stmt = (
        update(Conversation)
        .where(
            Conversation.office_id == conversation.office_id,
            Conversation.id == conversation.id,
            or_(Conversation.away_sent_at.is_(None), Conversation.away_sent_at < period_start),
        )
        .values(away_sent_at=at)
        .returning(Conversation.id)
        .execution_options(synchronize_session=False)
    )
    claimed = (await session.execute(stmt)).first() is not None
    if claimed:
        set_committed_value(conversation, "away_sent_at", at)
    return claimed


async def claim_expired_closed(
    session: AsyncSession, office_id: str, closed_before: datetime, limit: int
) -> list[str]:
    """Up to ``limit`` of the office's conversations closed at or before ``closed_before``
    whose client is not under legal hold, oldest closing first, locked with their contact
    (PostgreSQL: rows another transaction holds are skipped, so two workers never take the
    same one, and a hold being set waits for this transaction or is seen)."""
    stmt = (
        select(Conversation.id)
        .join(Contact, Contact.id == Conversation.person_id)
        .where(
            Conversation.office_id == office_id,
            Conversation.status == "CLOSED",
            Conversation.closed_at <= closed_before,
            Contact.office_id == office_id,
            Contact.legal_hold.is_(False),
        )
        .order_by(Conversation.closed_at, Conversation.id)
        .limit(limit)
    )
    return list(await session.scalars(lock_skipping(session, stmt, of=[Conversation, Contact])))


async def delete_conversations(
    session: AsyncSession, office_id: str, conversation_ids: Sequence[str]
) -> None:
    """Deletes the conversations; the database cascades take their messages, notes, tags,
    read marks and flow sessions."""
    await session.execute(
        delete(Conversation).where(
            Conversation.office_id == office_id, Conversation.id.in_(conversation_ids)
        )
    )


def sla_due(now: datetime, batch: int) -> Select[str]:
    """Conversations with a due time passed and not yet reported, across offices (the
    breach job's queue), through the partial ``sla_check_at`` index."""
    return (
        select(Conversation.id)
        .where(Conversation.sla_check_at.is_not(None), Conversation.sla_check_at <= now)
        .order_by(Conversation.sla_check_at)
        .limit(batch)
    )


async def claim_sla_due(session: AsyncSession, now: datetime, batch: int) -> list[Conversation]:
    """Taken for this transaction (``kit.queue.take``: ``FOR UPDATE SKIP LOCKED`` on
    PostgreSQL, so concurrent workers take different conversations), read afresh."""
    ids = await take(session, sla_due(now, batch))
    if not ids:
        return []
    stmt = (
        select(Conversation)
        .where(Conversation.id.in_(ids))
        .order_by(Conversation.sla_check_at)
        .execution_options(populate_existing=True)
    )
    return list((await session.scalars(stmt)).all())


async def lock_of_person(session: AsyncSession, office_id: str, person_id: str) -> None:
    """Write-locks the contact's conversations in id order (PostgreSQL; SQLite's writing
    request holds the database)."""
    if session.get_bind().dialect.name != "postgresql":
        return
    stmt = (
        select(Conversation.id)
        .where(Conversation.office_id == office_id, Conversation.person_id == person_id)
        .order_by(Conversation.id)
        .with_for_update(of=Conversation)
    )
    await session.execute(stmt)


async def open_in_inbox_for_change(
    session: AsyncSession, office_id: str, inbox_id: str
) -> list[Conversation]:
    """The inbox's open conversations, write-locked in id order (``SELECT … FOR UPDATE``
    on PostgreSQL; SQLite's writing request holds the database) and read afresh."""
    stmt = (
        scoped(Conversation, office_id)
        .where(Conversation.inbox_id == inbox_id, Conversation.status == "OPEN")
        .order_by(Conversation.id)
        .execution_options(populate_existing=True)
    )
    if session.get_bind().dialect.name == "postgresql":
        stmt = stmt.with_for_update(of=Conversation)
    return list((await session.scalars(stmt)).all())


def conversations_of_person_page(
    office_id: str, person_id: str, after: Keyset | None, limit: int
) -> Select[Any]:
    """The person's conversations, oldest first, a page after ``after``."""
    return keyset_page(
        Conversation,
        office_id,
        Conversation.person_id == person_id,
        Conversation.created_at,
        after,
        limit,
    )


def notes_page(
    office_id: str, conversation_id: str, after: Keyset | None, limit: int
) -> Select[Any]:
    """The conversation's notes, oldest first, a page after ``after``."""
    return keyset_page(
        ConversationNote,
        office_id,
        ConversationNote.conversation_id == conversation_id,
        ConversationNote.created_at,
        after,
        limit,
    )


def tag_names_query(office_id: str, conversation_id: str) -> Select[Any]:
    """The names of the conversation's tags, by name."""
    return (
        select(Tag.name)
        .join(ConversationTag, ConversationTag.tag_id == Tag.id)
        .where(
            ConversationTag.office_id == office_id,
            ConversationTag.conversation_id == conversation_id,
        )
        .order_by(Tag.name_key)
    )


REPORT_OPENED, REPORT_CLOSED, REPORT_ANSWERED = "o", "c", "f"
"""The kinds of a report's rows: conversations opened, closed, first answered."""


def _report_terms(group: str) -> tuple[Any, Any, Callable[[Any, Callable[[Any], Any]], Any]]:
    """The report's shared terms: ``status = 'CLOSED'`` (spelled as the partial index's
    term), whether the SLA was met (null without a policy), and the group's key of a time."""
    c = Conversation
    closed_sql = c.status == literal_column("'CLOSED'")  # the partial index's term
    breached = or_(
        c.first_response_breached_at.is_not(None),
        c.next_response_breached_at.is_not(None),
        c.resolution_breached_at.is_not(None),
    )
    met = case(
        (c.sla_policy_id.is_(None), null()),
        (breached, literal(0)),
        else_=literal(1),
    )

    def key(stamp: Any, day_of: Callable[[Any], Any]) -> Any:
        if group == "*":
            return literal("*", String)
        if group == "day":
            return day_of(stamp)
        if group == "inbox":
            return c.inbox_id
        if group == "user":
            return c.assigned_user_id
        if group == "legalArea":
            return c.legal_area_id
        return Integration.type

    return closed_sql, met, key


def report_statement(
    office_id: str,
    start: datetime,
    end: datetime,
    inbox_ids: frozenset[str] | None,
    group: str,
    day_of: Callable[[Any], Any],
    seconds_between: Callable[[Any, Any], Any],
) -> Select[Any]:
    """The conversation report's statement on SQLite (``dashboard.reports``): per kind and
    group key (``group``: day, inbox, user, legalArea, channel, or ``"*"`` for the totals),
    the count, the nearest-rank median and 90th percentile of the seconds, and the SLA
    figures, of the events in ``[start, end)``. ``day_of`` makes a time's local day,
    ``seconds_between`` the seconds from one time to another (the dialect's)."""
    c = Conversation
    closed_sql, met, key_of = _report_terms(group)
    parts = (
        (REPORT_OPENED, c.created_at, null(), null(), ()),
        (
            REPORT_CLOSED,
            c.closed_at,
            seconds_between(c.closed_at, func.coalesce(c.resolution_started_at, c.created_at)),
            met,
            (closed_sql,),
        ),
        (
            REPORT_ANSWERED,
            c.first_response_at,
            seconds_between(c.first_response_at, c.first_inbound_at),
            null(),
            (c.first_inbound_at.is_not(None),),
        ),
    )
    selects = []
    for kind, stamp, seconds, sla_met, extra in parts:
        stmt = select(
            literal(kind, String).label("kind"),
            key_of(stamp, day_of).label("k"),
            seconds.label("seconds"),
            sla_met.label("met"),
        ).where(c.office_id == office_id, stamp >= start, stamp < end, *extra)
        if group == "channel":
            stmt = stmt.select_from(c).join(
                Integration,
                and_(Integration.id == c.integration_id, Integration.office_id == c.office_id),
            )
        if inbox_ids is not None:
            stmt = stmt.where(c.inbox_id.in_(sorted(inbox_ids)))
        selects.append(stmt)
    events = union_all(*selects).subquery("events")
    part = (events.c.kind, events.c.k)
    ranked = select(
        events.c.kind,
        events.c.k,
        events.c.seconds,
        events.c.met,
        func.row_number().over(partition_by=part, order_by=events.c.seconds).label("rn"),
        func.count(events.c.seconds).over(partition_by=part).label("n"),
    ).subquery("ranked")
    r = ranked.c
    return select(
        r.kind,
        r.k,
        func.count(),
        func.min(case((r.rn == (r.n + 1) // 2, r.seconds))),
        func.min(case((r.rn == (r.n * 9 + 9) // 10, r.seconds))),
        func.count(r.met),
        func.sum(case((r.met == 1, 1), else_=0)),
    ).group_by(r.kind, r.k)


REPORT_PERCENTILES = (0.5, 0.9)
"""The percentiles PostgreSQL's report statement picks (``percentile_disc``: rank
``ceil(p * n)``, the nearest rank; ``reports.nearest_rank`` is the same rule)."""


def report_statement_postgresql(
    office_id: str,
    start: datetime,
    end: datetime,
    inbox_ids: frozenset[str] | None,
    group: str,
    day_starts: Sequence[datetime],
    seconds_between: Callable[[Any, Any], Any],
) -> Select[Any]:
    """The conversation report's statement on PostgreSQL: the rows of ``group`` (day,
    inbox, user, legalArea, channel) and the totals in one pass over the conversations.

    Each conversation in any of the three ranges is read once and makes its three events
    (opened, closed, first answered: a ``LATERAL (VALUES …)``, an event's time null when
    it does not count); those in ``[start, end)`` are grouped by ``GROUPING SETS ((kind,
    key), (kind))`` (``whole`` is 1 on the totals' rows), each percentile by
    ``percentile_disc`` (nearest rank). A day's key is the bucket of its time among
    ``day_starts`` (the UTC instants of each local midnight of the range and of the day
    after: ``width_bucket``, 1 for the first day), cheaper than converting every time to
    the zone."""
    c = Conversation
    closed_sql, met, key_of = _report_terms(group)
    stamp_type = DateTime(timezone=True)
    events = (
        values(
            sql_column("kind", String),
            sql_column("stamp", stamp_type),
            sql_column("seconds", BigInteger),
            sql_column("met", Integer),
            name="events",
        )
        .data(
            [
                (REPORT_OPENED, c.created_at, null(), null()),
                (
                    REPORT_CLOSED,
                    case((closed_sql, c.closed_at)),
                    seconds_between(
                        c.closed_at, func.coalesce(c.resolution_started_at, c.created_at)
                    ),
                    met,
                ),
                (
                    REPORT_ANSWERED,
                    case((c.first_inbound_at.is_not(None), c.first_response_at)),
                    seconds_between(c.first_response_at, c.first_inbound_at),
                    null(),
                ),
            ]
        )
        .lateral()
    )
    starts = bindparam("day_starts", list(day_starts), type_=ARRAY(stamp_type))
    e = events.c
    inner = (
        select(
            e.kind,
            key_of(e.stamp, lambda stamp: func.width_bucket(stamp, starts)).label("k"),
            e.seconds,
            e.met,
        )
        .select_from(c)
        .join(events, true())
        .where(
            c.office_id == office_id,
            or_(
                and_(c.created_at >= start, c.created_at < end),
                and_(closed_sql, c.closed_at >= start, c.closed_at < end),
                and_(c.first_response_at >= start, c.first_response_at < end),
            ),
            e.stamp >= start,
            e.stamp < end,
        )
    )
    if group == "channel":
        inner = inner.join(
            Integration,
            and_(Integration.id == c.integration_id, Integration.office_id == c.office_id),
        )
    if inbox_ids is not None:
        inner = inner.where(c.inbox_id.in_(sorted(inbox_ids)))
    ev = inner.subquery("ev")
    pick = func.percentile_disc(
        literal(list(REPORT_PERCENTILES), ARRAY(Float(asdecimal=False)))
    ).within_group(ev.c.seconds)
    return select(
        ev.c.kind,
        ev.c.k,
        func.grouping(ev.c.k).label("whole"),
        func.count(),
        type_coerce(pick, ARRAY(BigInteger)),
        func.count(ev.c.met),
        func.sum(case((ev.c.met == 1, 1), else_=0)),
    ).group_by(func.grouping_sets(tuple_(ev.c.kind, ev.c.k), tuple_(ev.c.kind)))


def conversation_of_contact(office_id: str) -> Exists:
    """EXISTS a conversation of the office with the enclosing query's contact (correlated
    to ``contacts.id``): what the contacts list's visibility clause is made of."""
    return exists().where(Conversation.office_id == office_id, Conversation.person_id == Contact.id)


# Each outbox event with its conversation's inbox and assignee as they stand (what a live
# stream's visibility needs), in the same query (officehub.live.hub).
_EVENTS_WITH_ROUTING = select(
    OutboxEvent, Conversation.inbox_id, Conversation.assigned_user_id
).outerjoin(
    Conversation,
    and_(
        Conversation.id == OutboxEvent.conversation_id,
        Conversation.office_id == OutboxEvent.office_id,
    ),
)
EventWithRouting = tuple[OutboxEvent, str | None, str | None]
"""An event, its conversation's inbox id and its assignee's id (None without either)."""


async def events_with_routing(session: AsyncSession, ids: Sequence[str]) -> list[EventWithRouting]:
    """The events ``ids`` (any office), oldest first, each with its conversation's routing."""
    if not ids:
        return []
    rows = await session.execute(
        _EVENTS_WITH_ROUTING.where(OutboxEvent.id.in_(ids)).order_by(
            OutboxEvent.created_at, OutboxEvent.id
        )
    )
    return [(r[0], r[1], r[2]) for r in rows]


async def events_from_with_routing(
    session: AsyncSession, office_id: str, since: datetime, limit: int
) -> list[EventWithRouting]:
    """At most ``limit`` of the office's events recorded at ``since`` or later, oldest
    first, each with its conversation's routing."""
    rows = await session.execute(
        _EVENTS_WITH_ROUTING.where(
            OutboxEvent.office_id == office_id, OutboxEvent.created_at >= since
        )
        .order_by(OutboxEvent.created_at, OutboxEvent.id)
        .limit(limit)
    )
    return [(r[0], r[1], r[2]) for r in rows]
