from __future__ import annotations

from typing import Any

from sqlalchemy import Select, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.inboxes.models import Inbox, InboxBusinessHours, Integration
from officehub.kit.pagination import PageParams, paginate
from officehub.kit.repository import get_scoped, scoped


async def get_inbox(
    session: AsyncSession, office_id: str, ident: str, *, for_change: bool = False
) -> Inbox | None:
    return await get_scoped(session, Inbox, office_id, ident, for_change=for_change)


async def get_integration(
    session: AsyncSession, office_id: str, ident: str, *, for_change: bool = False
) -> Integration | None:
    return await get_scoped(session, Integration, office_id, ident, for_change=for_change)


async def list_inboxes(
    session: AsyncSession, office_id: str, params: PageParams
) -> tuple[list[Inbox], int]:
    return await paginate(session, scoped(Inbox, office_id).order_by(Inbox.name, Inbox.id), params)


async def list_integrations(
    session: AsyncSession,
    office_id: str,
    params: PageParams,
    *,
    inbox_id: str | None = None,
    type: str | None = None,
) -> tuple[list[Integration], int]:
    stmt = scoped(Integration, office_id)
    if inbox_id is not None:
        stmt = stmt.where(Integration.inbox_id == inbox_id)
    if type is not None:
        stmt = stmt.where(Integration.type == type)
    return await paginate(session, stmt.order_by(Integration.name, Integration.id), params)


async def get_by_device_id(
    session: AsyncSession, office_id: str, device_id: str
) -> Integration | None:
    stmt = scoped(Integration, office_id).where(Integration.device_id == device_id)
    return (await session.scalars(stmt)).first()


async def delete(session: AsyncSession, record: Inbox | Integration) -> None:
    """An inbox's channels, tags, fast messages and memberships go with it (foreign keys)."""
    await session.delete(record)
    await session.flush()


async def get_integration_any_office(session: AsyncSession, ident: str) -> Integration | None:
    """By id alone: only for the channel webhooks, where the id itself names the office."""
    return await session.get(Integration, ident)


async def lock_integration(session: AsyncSession, office_id: str, ident: str) -> None:
    """A no-op UPDATE: locks the row on PostgreSQL, takes the write lock on SQLite."""
    await session.execute(
        update(Integration)
        .where(Integration.office_id == office_id, Integration.id == ident)
        .values(updated_at=Integration.updated_at)
        .execution_options(synchronize_session=False)
    )


async def set_round_robin_cursor(
    session: AsyncSession, office_id: str, ident: str, user_id: str
) -> None:
    await session.execute(
        update(Inbox)
        .where(Inbox.office_id == office_id, Inbox.id == ident)
        .values(round_robin_cursor=user_id, updated_at=Inbox.updated_at)
        .execution_options(synchronize_session="fetch")
    )


async def get_business_hours(
    session: AsyncSession, office_id: str, inbox_id: str
) -> InboxBusinessHours | None:
    record = await session.get(InboxBusinessHours, inbox_id)
    return record if record is not None and record.office_id == office_id else None


def integration_type_query(office_id: str, integration_id: str) -> Select[Any]:
    """The integration's type (its channel), a query of one value or none."""
    return select(Integration.type).where(
        Integration.office_id == office_id, Integration.id == integration_id
    )


async def inbox_names(session: AsyncSession, office_id: str, ids: list[str]) -> dict[str, str]:
    """The names of the office's inboxes among ``ids``, by id."""
    stmt = select(Inbox.id, Inbox.name).where(Inbox.office_id == office_id, Inbox.id.in_(ids))
    return {str(i): str(n) for i, n in (await session.execute(stmt)).all()}
