from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.conversations.models import Conversation, ConversationTag
from officehub.repository import get_scoped, scoped
from officehub.tags.models import Tag


async def get_conversation(
    session: AsyncSession, office_id: str, ident: str
) -> Conversation | None:
    return await get_scoped(session, Conversation, office_id, ident)


async def tags_of(session: AsyncSession, office_id: str, conversation_id: str) -> list[Tag]:
    stmt = (
        scoped(Tag, office_id)
        .join(ConversationTag, ConversationTag.tag_id == Tag.id)
        .where(ConversationTag.conversation_id == conversation_id)
        .order_by(Tag.name)
    )
    return list(await session.scalars(stmt))
