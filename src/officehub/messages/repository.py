from __future__ import annotations

from typing import Any

from sqlalchemy import Select
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.conversations.models import Message
from officehub.repository import scoped


async def add_message(session: AsyncSession, message: Message) -> Message:
    session.add(message)
    await session.flush()
    return message


def messages_query(office_id: str, conversation_id: str) -> Select[Any]:
    """Newest first."""
    return (
        scoped(Message, office_id)
        .where(Message.conversation_id == conversation_id)
        .order_by(Message.created_at.desc(), Message.id.desc())
    )
