from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import ColumnElement, Select, and_, func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.conversations.models import Conversation
from officehub.kit.repository import Keyset, insert_ignoring_duplicates, keyset_page, scoped
from officehub.messages.models import Message, ReadReceipt


async def add_message(session: AsyncSession, message: Message) -> Message:
    session.add(message)
    await session.flush()
    return message


def record_query(office_id: str, conversation_id: str) -> Select[Any]:
    """Every message of the conversation, reactions included, oldest first."""
    return (
        scoped(Message, office_id)
        .where(Message.conversation_id == conversation_id)
        .order_by(Message.created_at, Message.id)
    )


def messages_query(office_id: str, conversation_id: str) -> Select[Any]:
    """Newest first."""
    return (
        scoped(Message, office_id)
        .where(Message.conversation_id == conversation_id, Message.type != "REACTION")
        .order_by(Message.created_at.desc(), Message.id.desc())
    )


async def last_inbound_at(
    session: AsyncSession, office_id: str, conversation_id: str
) -> datetime | None:
    stmt = select(func.max(Message.created_at)).where(
        Message.office_id == office_id,
        Message.conversation_id == conversation_id,
        Message.direction == "INBOUND",
    )
    value: datetime | None = await session.scalar(stmt)
    return value


async def find_by_external_id(
    session: AsyncSession, office_id: str, external_id: str, *, lock: bool = False
) -> Message | None:
    stmt = scoped(Message, office_id).where(Message.external_id == external_id)
    if lock:
        stmt = stmt.with_for_update()
    return (await session.scalars(stmt)).first()


async def find_in_conversation(
    session: AsyncSession,
    office_id: str,
    conversation_id: str,
    message_id: str,
    *,
    lock: bool = False,
) -> Message | None:
    stmt = scoped(Message, office_id).where(
        Message.conversation_id == conversation_id, Message.id == message_id
    )
    if lock:
        stmt = stmt.with_for_update()
    return (await session.scalars(stmt)).first()


async def first_inbound_id(
    session: AsyncSession, office_id: str, conversation_id: str
) -> str | None:
    stmt = (
        select(Message.id)
        .where(
            Message.office_id == office_id,
            Message.conversation_id == conversation_id,
            Message.direction == "INBOUND",
        )
        .order_by(Message.created_at, Message.id)
        .limit(1)
    )
    value: str | None = await session.scalar(stmt)
    return value


async def get_message(session: AsyncSession, office_id: str, message_id: str) -> Message | None:
    stmt = scoped(Message, office_id).where(Message.id == message_id)
    return (await session.scalars(stmt)).first()


async def newest_inbound(
    session: AsyncSession, office_id: str, conversation_id: str
) -> Message | None:
    stmt = (
        scoped(Message, office_id)
        .where(Message.conversation_id == conversation_id, Message.direction == "INBOUND")
        .order_by(Message.created_at.desc(), Message.id.desc())
        .limit(1)
    )
    return (await session.scalars(stmt)).first()


async def inbound_up_to(
    session: AsyncSession, office_id: str, conversation_id: str, message: Message
) -> int:
    """How many inbound messages of the conversation there are up to ``message`` (itself
    included): the read mark a read of it sets."""
    stmt = select(func.count()).where(
        Message.office_id == office_id,
        Message.conversation_id == conversation_id,
        Message.direction == "INBOUND",
        or_(
            Message.created_at < message.created_at,
            and_(Message.created_at == message.created_at, Message.id <= message.id),
        ),
    )
    return int(await session.scalar(stmt) or 0)


async def receipt_covering(
    session: AsyncSession, office_id: str, conversation_id: str, message: Message
) -> ReadReceipt | None:
    """The newest read mark of the conversation at or after ``message``."""
    stmt = (
        scoped(ReadReceipt, office_id)
        .join(Message, Message.id == ReadReceipt.message_id)
        .where(
            ReadReceipt.conversation_id == conversation_id,
            or_(
                Message.created_at > message.created_at,
                and_(Message.created_at == message.created_at, Message.id >= message.id),
            ),
        )
        .order_by(Message.created_at.desc(), Message.id.desc())
        .limit(1)
    )
    return (await session.scalars(stmt)).first()


async def add_receipt(session: AsyncSession, row: dict[str, Any]) -> None:
    """One read mark per message: a concurrent second one is dropped."""
    await insert_ignoring_duplicates(session, ReadReceipt, [row])


async def media_links_of(
    session: AsyncSession, office_id: str, person_id: str
) -> list[tuple[str, str]]:
    """``(message id, media URL)`` of every message of the person's conversations that has
    a media link."""
    rows = await session.execute(
        select(Message.id, Message.media_url)
        .join(Conversation, Conversation.id == Message.conversation_id)
        .where(
            Conversation.office_id == office_id,
            Conversation.person_id == person_id,
            Message.office_id == office_id,
            Message.media_url.is_not(None),
        )
    )
    return [(row[0], row[1]) for row in rows if row[1] is not None]


async def media_links_of_conversations(
    session: AsyncSession, office_id: str, conversation_ids: Sequence[str]
) -> list[tuple[str, str]]:
    """``(message id, media URL)`` of every message of these conversations with a link."""
    rows = await session.execute(
        select(Message.id, Message.media_url).where(
            Message.office_id == office_id,
            Message.conversation_id.in_(conversation_ids),
            Message.media_url.is_not(None),
        )
    )
    return [(row[0], row[1]) for row in rows if row[1] is not None]


def conversations_saying(office_id: str, pattern: str) -> Select[Any]:
    """The ids of the office's conversations with a message whose text is LIKE ``pattern``
    (escaped with "/"), any case: the conversation list's search (``GET /conversation?q=``,
    wired into conversations by ``hook_subscriptions``; a trigram GIN index on PostgreSQL,
    ``0034_conversation_filters``)."""
    return select(Message.conversation_id).where(
        Message.office_id == office_id, Message.text.ilike(pattern, escape="/")
    )


def messages_page(
    office_id: str, conversation_id: str, after: Keyset | None, limit: int
) -> Select[Any]:
    """The conversation's messages, oldest first, a page after ``after``."""
    return keyset_page(
        Message,
        office_id,
        Message.conversation_id == conversation_id,
        Message.created_at,
        after,
        limit,
    )


def _utc_month(session: AsyncSession) -> ColumnElement[Any]:
    if session.get_bind().dialect.name == "postgresql":
        return func.to_char(func.timezone("UTC", Message.created_at), "YYYY-MM")
    return func.strftime("%Y-%m", Message.created_at)


async def priced_sends(
    session: AsyncSession,
    office_id: str,
    since: datetime,
    before: datetime | None,
    integration_id: str | None,
    inbox_ids: frozenset[str] | set[str] | None,
) -> list[tuple[Any, Any, Any, Any, int]]:
    """The office's sends with pricing from ``since`` to ``before`` (``None``: no end),
    counted by UTC month (``YYYY-MM``) and pricing words (category, type, billable); of one
    integration, of some inboxes, or every one."""
    pricing = Message.pricing
    # Each send's month and pricing words, grouped outside: PostgreSQL binds the JSON keys as
    # parameters, and a GROUP BY of the same expression would bind them again (another
    # expression to it).
    priced = (
        select(
            _utc_month(session).label("month"),
            pricing["category"].as_string().label("category"),
            pricing["type"].as_string().label("kind"),
            pricing["billable"].as_boolean().label("flag"),
        )
        .join(Conversation, Conversation.id == Message.conversation_id)
        .where(
            Message.office_id == office_id,
            Conversation.office_id == office_id,
            Message.direction == "OUTBOUND",
            Message.pricing.is_not(None),
            Message.created_at >= since,
        )
    )
    if before is not None:
        priced = priced.where(Message.created_at < before)
    if integration_id is not None:
        priced = priced.where(Conversation.integration_id == integration_id)
    if inbox_ids is not None:
        priced = priced.where(Conversation.inbox_id.in_(sorted(inbox_ids)))
    rows_of = priced.subquery("priced")
    columns = (rows_of.c.month, rows_of.c.category, rows_of.c.kind, rows_of.c.flag)
    stmt = select(*columns, func.count()).group_by(*columns)
    return [tuple(row) for row in (await session.execute(stmt)).all()]
