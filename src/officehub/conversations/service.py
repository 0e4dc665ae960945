from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.conversations import repository
from officehub.conversations.models import Conversation
from officehub.errors import NotFound
from officehub.tags.models import Tag


async def get_conversation(session: AsyncSession, office_id: str, ident: str) -> Conversation:
    record = await repository.get_conversation(session, office_id, ident)
    if record is None:
        raise NotFound.of("Conversation", ident)
    return record


async def tags_of(session: AsyncSession, office_id: str, conversation_id: str) -> list[Tag]:
    """The conversation's tags, by name."""
    return await repository.tags_of(session, office_id, conversation_id)
