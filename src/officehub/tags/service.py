from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.inboxes import service as inboxes
from officehub.kit.errors import Conflict, NotFound
from officehub.kit.pagination import PageParams
from officehub.kit.raw_read import Row
from officehub.kit.repository import flush_or_conflict, read_scoped
from officehub.tags import repository
from officehub.tags.hooks import TagDeleting, tag_deleting
from officehub.tags.models import TAG_MODULES, Tag
from officehub.tags.schemas import TagCreate, TagUpdate


async def get_tag(
    session: AsyncSession, office_id: str, ident: str, *, for_change: bool = False
) -> Tag:
    record = await repository.get_tag(session, office_id, ident, for_change=for_change)
    if record is None:
        raise NotFound.of("Tag", ident)
    return record


async def read_tag(session: AsyncSession, office_id: str, ident: str) -> Tag | Row:
    """The tag to answer ``GET /tag/{id}`` with (a dict of its columns on PostgreSQL)."""
    found = await read_scoped(session, Tag, office_id, ident)
    if found is None:
        raise NotFound.of("Tag", ident)
    return found


async def get_tags(session: AsyncSession, office_id: str, idents: Sequence[str]) -> list[Tag]:
    """The tags of these ids (each once), in one select; 404 names the first one missing."""
    unique = list(dict.fromkeys(idents))
    found = {t.id: t for t in await repository.get_tags(session, office_id, unique)}
    for ident in unique:
        if ident not in found:
            raise NotFound.of("Tag", ident)
    return [found[ident] for ident in unique]


def name_key(name: str) -> str:
    return name.strip().casefold()


def _modules(modules: list[str]) -> list[str]:
    return [m for m in TAG_MODULES if m in modules]


async def _check_name(
    session: AsyncSession, office_id: str, inbox_id: str, name: str, own_id: str | None = None
) -> None:
    other = await repository.get_by_name(session, office_id, inbox_id, name_key(name))
    if other is not None and other.id != own_id:
        raise _name_taken(f"The inbox already has the tag {other.name!r} ({other.id})")


def _name_taken(details: str) -> Conflict:
    return Conflict("Tag name already used", details=details, code="TAG_NAME_TAKEN")


async def list_tags(
    session: AsyncSession,
    office_id: str,
    params: PageParams,
    *,
    module: str | None = None,
    inbox_id: str | None = None,
) -> tuple[list[Tag], int]:
    if inbox_id is not None:
        await inboxes.get_inbox(session, office_id, inbox_id)
    return await repository.list_tags(session, office_id, params, module=module, inbox_id=inbox_id)


async def create_tag(session: AsyncSession, office_id: str, body: TagCreate) -> Tag:
    await inboxes.get_inbox(session, office_id, body.inbox_id)
    name = body.name.strip()
    await _check_name(session, office_id, body.inbox_id, name)
    tag = Tag(
        office_id=office_id,
        inbox_id=body.inbox_id,
        name=name,
        name_key=name_key(name),
        color=body.color,
        modules=_modules(list(body.modules)),
    )
    session.add(tag)
    await flush_or_conflict(session, _name_taken(f"The inbox already has a tag named {name!r}"))
    return tag


async def update_tag(session: AsyncSession, office_id: str, ident: str, body: TagUpdate) -> Tag:
    tag = await get_tag(session, office_id, ident, for_change=True)
    if body.name is not None:
        name = body.name.strip()
        await _check_name(session, office_id, tag.inbox_id, name, tag.id)
        tag.name = name
        tag.name_key = name_key(name)
    if body.color is not None:
        tag.color = body.color
    if body.modules is not None:
        tag.modules = _modules(list(body.modules))
    await flush_or_conflict(session, _name_taken(f"The inbox already has a tag named {tag.name!r}"))
    return tag


async def delete_tag(session: AsyncSession, office_id: str, ident: str) -> Tag:
    """Cascades: the tag is taken off every conversation and contact that carried it; each
    conversation (and its card) that held it emits its update event (the conversations
    domain's subscriber to ``tag_deleting``)."""
    tag = await get_tag(session, office_id, ident)
    await tag_deleting.fire(TagDeleting(session, office_id, tag.id))
    # Locked last: a conversation's change locks the conversation, then refers to the tag.
    tag = await get_tag(session, office_id, ident, for_change=True)
    await repository.delete(session, tag)
    return tag
