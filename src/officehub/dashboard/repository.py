from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.contacts.models import Contact
from officehub.conversations.models import Conversation


async def conversations_by_ddd(session: AsyncSession, office_id: str) -> dict[str, int]:
    """The office's conversations counted by the DDD of their contact's phone: one grouped
    query (contacts by ``(office_id, ddd)``, conversations by ``(office_id, person_id…)``)."""
    stmt = (
        select(Contact.ddd, func.count())
        .select_from(Conversation)
        .join(Contact, Contact.id == Conversation.person_id)
        .where(
            Conversation.office_id == office_id,
            Contact.office_id == office_id,
            Contact.ddd.is_not(None),
        )
        .group_by(Contact.ddd)
    )
    return {str(ddd): int(count) for ddd, count in (await session.execute(stmt)).all()}
