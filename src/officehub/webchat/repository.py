"""The web chat's queries: visitors by token (within an office) and what a visitor sees."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import ColumnElement, and_, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.conversations.models import Message
from officehub.webchat.models import WebchatVisitor


async def visitor_by_token(
    session: AsyncSession, office_id: str, token_hash: str
) -> WebchatVisitor | None:
    stmt = select(WebchatVisitor).where(
        WebchatVisitor.office_id == office_id, WebchatVisitor.token_hash == token_hash
    )
    return (await session.scalars(stmt)).first()


async def visitor_by_id(session: AsyncSession, visitor_id: str) -> WebchatVisitor | None:
    """By id alone: the live stream's own visitor, authenticated when it opened."""
    return await session.get(WebchatVisitor, visitor_id)


async def message_by_external_id(
    session: AsyncSession, office_id: str, external_id: str
) -> Message:
    stmt = select(Message).where(Message.office_id == office_id, Message.external_id == external_id)
    return (await session.scalars(stmt)).one()


async def messages_by_id(
    session: AsyncSession, office_id: str, ids: Sequence[str]
) -> list[Message]:
    if not ids:
        return []
    stmt = select(Message).where(Message.office_id == office_id, Message.id.in_(ids))
    return list(await session.scalars(stmt))


def _of_visitor(visitor: WebchatVisitor) -> ColumnElement[bool]:
    return and_(
        Message.office_id == visitor.office_id,
        Message.conversation_id == visitor.conversation_id,
        Message.created_at >= visitor.created_at,
        Message.type != "NOTE",
    )


async def visible_messages(
    session: AsyncSession, visitor: WebchatVisitor, outbound: Sequence[str], limit: int
) -> list[Message]:
    """The latest ``limit`` messages the visitor may see, oldest first."""
    rows = await session.scalars(
        select(Message)
        .where(
            _of_visitor(visitor),
            or_(Message.direction == "INBOUND", Message.status.in_(outbound)),
        )
        .order_by(Message.created_at.desc(), Message.id.desc())
        .limit(limit)
    )
    return list(reversed(list(rows)))


async def messages_since(
    session: AsyncSession,
    visitor: WebchatVisitor,
    since: datetime,
    pending: set[str],
    limit: int,
) -> list[Message]:
    condition = Message.created_at >= since
    if pending:
        condition = or_(condition, Message.id.in_(pending))
    rows = await session.scalars(
        select(Message)
        .where(_of_visitor(visitor), condition)
        .order_by(Message.created_at, Message.id)
        .limit(limit)
    )
    return list(rows)
