from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Select, bindparam, delete, func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.conversations.models import Conversation, ConversationNote, ConversationTag
from officehub.kit.integrity import violates
from officehub.kit.repository import get_scoped, insert_ignoring_duplicates, scoped
from officehub.tags.models import Tag

OPEN_CONVERSATION_INDEX = "ux_conversations_office_id_person_id_integration_id_open"


async def get_conversation(
    session: AsyncSession, office_id: str, ident: str, *, for_change: bool = False
) -> Conversation | None:
    return await get_scoped(session, Conversation, office_id, ident, for_change=for_change)


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


def conversations_query(
    office_id: str,
    *,
    inbox_id: str | None = None,
    person_id: str | None = None,
    status: str | None = None,
) -> Select[Any]:
    """Newest first."""
    stmt = scoped(Conversation, office_id)
    if inbox_id is not None:
        stmt = stmt.where(Conversation.inbox_id == inbox_id)
    if person_id is not None:
        stmt = stmt.where(Conversation.person_id == person_id)
    if status is not None:
        stmt = stmt.where(Conversation.status == status)
    return stmt.order_by(Conversation.created_at.desc(), Conversation.id.desc())


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


async def tags_of(session: AsyncSession, office_id: str, conversation_id: str) -> list[Tag]:
    return (await tags_by_conversation(session, office_id, [conversation_id])).get(
        conversation_id, []
    )


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
