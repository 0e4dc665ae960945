"""A conversation's messages read back: the API's page of them and the whole record an
evidence transcript needs."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.conversations import service as conversations
from officehub.kit.errors import Conflict
from officehub.kit.pagination import PageParams, paginate
from officehub.messages import repository
from officehub.messages.models import Message
from officehub.messages.schemas import MessageOut


async def list_messages(
    session: AsyncSession, office_id: str, conversation_id: str, params: PageParams
) -> tuple[list[MessageOut], int]:
    await conversations.get_conversation(session, office_id, conversation_id)
    rows, total = await paginate(
        session, repository.messages_query(office_id, conversation_id), params
    )
    return [MessageOut.model_validate(m) for m in rows], total


TRANSCRIPT_LIMIT = 20_000


async def conversation_record(
    session: AsyncSession, office_id: str, conversation_id: str
) -> list[Message]:
    """Every message of the conversation, reactions included, oldest first (an evidence
    transcript); at most ``TRANSCRIPT_LIMIT`` (409 beyond: a bundle is built in one go)."""
    await conversations.get_conversation(session, office_id, conversation_id)
    rows = list(
        await session.scalars(
            repository.record_query(office_id, conversation_id).limit(TRANSCRIPT_LIMIT + 1)
        )
    )
    if len(rows) > TRANSCRIPT_LIMIT:
        raise Conflict(
            "The conversation is too long for one evidence bundle",
            code="EVIDENCE_TOO_LARGE",
            details=f"More than {TRANSCRIPT_LIMIT} messages",
        )
    return rows
