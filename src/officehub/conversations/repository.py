from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Select, delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.conversations.models import Conversation, ConversationNote, ConversationTag
from officehub.repository import get_scoped, scoped
from officehub.tags.models import Tag


async def get_conversation(
    session: AsyncSession, office_id: str, ident: str
) -> Conversation | None:
    return await get_scoped(session, Conversation, office_id, ident)


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
    stmt = (
        select(ConversationTag.conversation_id, Tag)
        .join(Tag, Tag.id == ConversationTag.tag_id)
        .where(
            ConversationTag.office_id == office_id,
            Tag.office_id == office_id,
            ConversationTag.conversation_id.in_(conversation_ids),
        )
        .order_by(Tag.name, Tag.id)
    )
    found: dict[str, list[Tag]] = defaultdict(list)
    for conversation_id, tag in await session.execute(stmt):
        found[conversation_id].append(tag)
    return found


async def tags_of(session: AsyncSession, office_id: str, conversation_id: str) -> list[Tag]:
    return (await tags_by_conversation(session, office_id, [conversation_id])).get(
        conversation_id, []
    )


async def replace_tags(
    session: AsyncSession, office_id: str, conversation_id: str, tag_ids: Sequence[str]
) -> None:
    await session.execute(
        delete(ConversationTag).where(
            ConversationTag.office_id == office_id,
            ConversationTag.conversation_id == conversation_id,
        )
    )
    session.add_all(
        ConversationTag(office_id=office_id, conversation_id=conversation_id, tag_id=tag_id)
        for tag_id in tag_ids
    )
    await session.flush()


def notes_query(office_id: str, conversation_id: str) -> Select[Any]:
    """Newest first."""
    return (
        scoped(ConversationNote, office_id)
        .where(ConversationNote.conversation_id == conversation_id)
        .order_by(ConversationNote.created_at.desc(), ConversationNote.id.desc())
    )
