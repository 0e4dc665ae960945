from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from functools import cache

from sqlalchemy import String, bindparam, delete, exists, func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.contacts.models import Contact, ContactTag
from officehub.pagination import ListQuery, PageParams, paginate
from officehub.repository import get_scoped, insert_ignoring_duplicates, scoped
from officehub.tags.models import Tag


async def get_contact(
    session: AsyncSession, office_id: str, ident: str, *, for_change: bool = False
) -> Contact | None:
    return await get_scoped(session, Contact, office_id, ident, for_change=for_change)


async def find_by_email(session: AsyncSession, office_id: str, email: str) -> Contact | None:
    stmt = scoped(Contact, office_id).where(func.lower(Contact.email) == email.lower())
    return (await session.scalars(stmt.order_by(Contact.created_at, Contact.id).limit(1))).first()


async def find_by_phone(
    session: AsyncSession, office_id: str, phone: str, *, other_than: str | None = None
) -> Contact | None:
    stmt = scoped(Contact, office_id).where(Contact.phone == phone)
    if other_than is not None:
        stmt = stmt.where(Contact.id != other_than)
    return (await session.scalars(stmt.limit(1))).first()


async def contacts_page(
    session: AsyncSession,
    office_id: str,
    params: PageParams,
    *,
    inbox_id: str | None = None,
    name_fragment: str | None = None,
    phone_fragment: str | None = None,
    tag_ids: Sequence[str] = (),
) -> tuple[list[Contact], int]:
    """A page of the office's contacts, by name, and how many there are in all; the search
    matches the name or the phone's digits (substrings)."""
    query = _contacts_query(
        by_inbox=inbox_id is not None,
        by_name=bool(name_fragment),
        by_phone=bool(phone_fragment),
        by_tags=bool(tag_ids),
        fenced=session.get_bind().dialect.name == "postgresql",
    )
    values = {
        "office_id": office_id,
        "inbox_id": inbox_id,
        "name_pattern": _containing(name_fragment or ""),
        "phone_pattern": _containing(phone_fragment or ""),
        "tag_ids": list(tag_ids),
    }
    return await paginate(session, query, params, values)


def _containing(fragment: str) -> str:
    """A LIKE pattern matching ``fragment`` anywhere, its own ``%`` and ``_`` taken literally."""
    escaped = fragment.replace("/", "//").replace("%", "/%").replace("_", "/_")
    return f"%{escaped}%"


@cache
def _contacts_query(
    *, by_inbox: bool, by_name: bool, by_phone: bool, by_tags: bool, fenced: bool
) -> ListQuery:
    """The list's statement for one shape of filter, built once; its values are bound.

    ``fenced`` (PostgreSQL): the matches are found first, in a materialised CTE, a fence
    the planner cannot see through, so it finds them by the trigram indexes (0007_trgm)
    instead of walking the office's names in order and filtering, which reads every contact
    before the page of a rare or absent fragment. The count reads every match anyway.
    SQLite has no trigram index: its search reads the office's names either way.
    """
    office_id = bindparam("office_id", type_=String)
    stmt = select(Contact).where(Contact.office_id == office_id)
    if by_inbox:
        stmt = stmt.where(Contact.inbox_id == bindparam("inbox_id"))
    matches = []
    if by_name:
        matches.append(Contact.search_name.like(bindparam("name_pattern"), escape="/"))
    if by_phone:
        matches.append(Contact.phone.like(bindparam("phone_pattern"), escape="/"))
    if matches and not fenced:
        stmt = stmt.where(or_(*matches))
    elif matches:
        found = (
            select(Contact.id)
            .where(Contact.office_id == office_id, or_(*matches))
            .cte("matches")
            .prefix_with("MATERIALIZED")
        )
        stmt = stmt.join(found, found.c.id == Contact.id)
    if by_tags:
        stmt = stmt.where(
            exists().where(
                ContactTag.office_id == office_id,
                ContactTag.contact_id == Contact.id,
                ContactTag.tag_id.in_(bindparam("tag_ids", expanding=True)),
            )
        )
    return ListQuery(stmt.order_by(Contact.search_name, Contact.id))


async def tags_by_contact(
    session: AsyncSession, office_id: str, contact_ids: Sequence[str]
) -> dict[str, list[Tag]]:
    if not contact_ids:
        return {}
    found: dict[str, list[Tag]] = defaultdict(list)
    values = {"office_id": office_id, "contact_ids": list(contact_ids)}
    for contact_id, tag in await session.execute(_TAGS_OF_CONTACTS, values):
        found[contact_id].append(tag)
    return found


_TAGS_OF_CONTACTS = (
    select(ContactTag.contact_id, Tag)
    .join(Tag, Tag.id == ContactTag.tag_id)
    .where(
        ContactTag.office_id == bindparam("office_id"),
        Tag.office_id == bindparam("office_id"),
        ContactTag.contact_id.in_(bindparam("contact_ids", expanding=True)),
    )
    .order_by(Tag.name, Tag.id)
)


async def add_tags(
    session: AsyncSession, office_id: str, contact_id: str, tag_ids: Sequence[str]
) -> int:
    """Adds the tags the contact lacks, row by row (a concurrent change keeps its own)."""
    rows = [{"office_id": office_id, "contact_id": contact_id, "tag_id": t} for t in tag_ids]
    return await insert_ignoring_duplicates(session, ContactTag, rows)


async def remove_tags(
    session: AsyncSession, office_id: str, contact_id: str, tag_ids: Sequence[str]
) -> int:
    if not tag_ids:
        return 0
    result = await session.execute(
        delete(ContactTag).where(
            ContactTag.office_id == office_id,
            ContactTag.contact_id == contact_id,
            ContactTag.tag_id.in_(tag_ids),
        )
    )
    return int(getattr(result, "rowcount", 0) or 0)


async def delete_contact(session: AsyncSession, contact: Contact) -> None:
    await session.delete(contact)
    await session.flush()
