from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import String, cast, func, select
from sqlalchemy.dialects.postgresql import aggregate_order_by
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.sql.selectable import LateralFromClause

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


TAG_REFS = ("tag_ids", "tag_names", "tag_colors")
"""The columns of ``tag_refs_lateral``: each row's tags' ids, names and colours, three
arrays in the order of the tags' own reads (by name, then id), NULL for none."""


def tag_refs_lateral(
    link: Any, link_subject: Any, subject_id: Any, office_id: Any
) -> LateralFromClause:
    """The tag references of each row of a page, as a ``LATERAL`` (PostgreSQL): ``link`` is
    the subject's link table (``ContactTag``, ``ConversationTag``), ``link_subject`` its
    column naming the subject, matched to the page's ``subject_id``; both tables scoped to
    ``office_id``. A row's references: ``tag_refs``."""
    order = (Tag.name, Tag.id)
    return (
        select(
            *(
                func.array_agg(aggregate_order_by(column, *order)).label(label)
                for column, label in zip((Tag.id, Tag.name, Tag.color), TAG_REFS, strict=True)
            )
        )
        .select_from(link)
        .join(Tag, Tag.id == link.tag_id)
        .where(link.office_id == office_id, Tag.office_id == office_id, link_subject == subject_id)
        .lateral("tags")
    )


def tag_refs(row: Mapping[str, Any]) -> list[dict[str, str]]:
    """A row's tag references from ``tag_refs_lateral``'s columns, in their order."""
    ids, names, colors = (row[key] or () for key in TAG_REFS)
    return [{"id": i, "name": n, "color": c} for i, n, c in zip(ids, names, colors, strict=True)]
