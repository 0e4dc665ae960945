from __future__ import annotations

from sqlalchemy import String, cast
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.kit.pagination import PageParams, paginate
from officehub.kit.repository import get_scoped, scoped
from officehub.tags.models import Tag


async def get_tag(
    session: AsyncSession, office_id: str, ident: str, *, for_change: bool = False
) -> Tag | None:
    return await get_scoped(session, Tag, office_id, ident, for_change=for_change)


async def get_tags(session: AsyncSession, office_id: str, idents: list[str]) -> list[Tag]:
    """The office's tags of these ids, in one select (those not found are left out)."""
    if not idents:
        return []
    return list(await session.scalars(scoped(Tag, office_id).where(Tag.id.in_(idents))))


async def get_by_name(
    session: AsyncSession, office_id: str, inbox_id: str, name_key: str
) -> Tag | None:
    stmt = scoped(Tag, office_id).where(Tag.inbox_id == inbox_id, Tag.name_key == name_key)
    return (await session.scalars(stmt)).first()


async def list_tags(
    session: AsyncSession,
    office_id: str,
    params: PageParams,
    *,
    module: str | None = None,
    inbox_id: str | None = None,
) -> tuple[list[Tag], int]:
    stmt = scoped(Tag, office_id)
    if inbox_id is not None:
        stmt = stmt.where(Tag.inbox_id == inbox_id)
    if module is not None:
        # ``modules`` holds names from a fixed list, none a part of another: matching the
        # quoted name in the JSON text works alike on SQLite and PostgreSQL.
        stmt = stmt.where(cast(Tag.modules, String).like(f'%"{module}"%'))
    return await paginate(session, stmt.order_by(Tag.name_key, Tag.id), params)


async def delete(session: AsyncSession, record: Tag) -> None:
    """Conversations and contacts lose the tag (foreign keys cascade)."""
    await session.delete(record)
    await session.flush()
