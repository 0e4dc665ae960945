from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.fast_messages.models import FastMessage
from officehub.kit.pagination import PageParams, paginate
from officehub.kit.repository import get_scoped, scoped


async def get_fast_message(
    session: AsyncSession, office_id: str, ident: str, *, for_change: bool = False
) -> FastMessage | None:
    return await get_scoped(session, FastMessage, office_id, ident, for_change=for_change)


async def list_fast_messages(
    session: AsyncSession,
    office_id: str,
    params: PageParams,
    *,
    inbox_id: str | None = None,
    kind: str | None = None,
) -> tuple[list[FastMessage], int]:
    stmt = scoped(FastMessage, office_id)
    if inbox_id is not None:
        stmt = stmt.where(FastMessage.inbox_id == inbox_id)
    if kind is not None:
        stmt = stmt.where(FastMessage.kind == kind)
    return await paginate(session, stmt.order_by(FastMessage.title, FastMessage.id), params)


async def delete(session: AsyncSession, record: FastMessage) -> None:
    await session.delete(record)
    await session.flush()
