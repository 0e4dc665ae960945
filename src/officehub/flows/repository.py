from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.flows.models import Flow
from officehub.pagination import PageParams, paginate
from officehub.repository import get_scoped, scoped


async def get_flow(session: AsyncSession, office_id: str, ident: str) -> Flow | None:
    return await get_scoped(session, Flow, office_id, ident)


async def list_flows(
    session: AsyncSession, office_id: str, params: PageParams, *, inbox_id: str | None = None
) -> tuple[list[Flow], int]:
    stmt = scoped(Flow, office_id)
    if inbox_id is not None:
        stmt = stmt.where(Flow.inbox_id == inbox_id)
    return await paginate(session, stmt.order_by(Flow.created_at, Flow.id), params)


async def delete(session: AsyncSession, record: Flow) -> None:
    await session.delete(record)
    await session.flush()
