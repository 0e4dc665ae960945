from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Select, delete, exists, func, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.contacts.models import Contact, ContactTag
from officehub.repository import get_scoped, insert_ignoring_duplicates, scoped
from officehub.tags.models import Tag


async def get_contact(session: AsyncSession, office_id: str, ident: str) -> Contact | None:
    return await get_scoped(session, Contact, office_id, ident)


async def lock_contact(session: AsyncSession, office_id: str, ident: str) -> Contact | None:
    """The contact, its row write-locked to the end of the transaction.

    A no-op UPDATE rather than ``SELECT … FOR UPDATE``: it locks the row on PostgreSQL and
    takes the write lock on SQLite, where ``FOR UPDATE`` does not exist.
    """
    await session.execute(
        update(Contact)
        .where(Contact.office_id == office_id, Contact.id == ident)
        .values(updated_at=Contact.updated_at)
        .execution_options(synchronize_session=False)
    )
    return await get_contact(session, office_id, ident)


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


def contacts_query(
    office_id: str,
    *,
    inbox_id: str | None = None,
    name_fragment: str | None = None,
    phone_fragment: str | None = None,
    tag_ids: Sequence[str] = (),
    fenced: bool = False,
) -> Select[Any]:
    """The office's contacts, by name; the search matches the name or the phone's digits.

    ``fenced`` (PostgreSQL): the matches are found first, in a materialised CTE, a fence
    the planner cannot see through, so it finds them by the trigram indexes (0007_trgm)
    instead of walking the office's names in order and filtering, which reads every contact
    before the page of a rare or absent fragment. The count reads every match anyway.
    SQLite has no trigram index: its search reads the office's names either way.
    """
    stmt = scoped(Contact, office_id)
    if inbox_id is not None:
        stmt = stmt.where(Contact.inbox_id == inbox_id)
    matches = []
    if name_fragment:
        matches.append(Contact.search_name.contains(name_fragment, autoescape=True))
    if phone_fragment:
        matches.append(Contact.phone.contains(phone_fragment, autoescape=True))
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
    if tag_ids:
        stmt = stmt.where(
            exists().where(
                ContactTag.office_id == office_id,
                ContactTag.contact_id == Contact.id,
                ContactTag.tag_id.in_(tag_ids),
            )
        )
    return stmt.order_by(Contact.search_name, Contact.id)


async def tags_by_contact(
    session: AsyncSession, office_id: str, contact_ids: Sequence[str]
) -> dict[str, list[Tag]]:
    if not contact_ids:
        return {}
    stmt = (
        select(ContactTag.contact_id, Tag)
        .join(Tag, Tag.id == ContactTag.tag_id)
        .where(
            ContactTag.office_id == office_id,
            Tag.office_id == office_id,
            ContactTag.contact_id.in_(contact_ids),
        )
        .order_by(Tag.name, Tag.id)
    )
    found: dict[str, list[Tag]] = defaultdict(list)
    for contact_id, tag in await session.execute(stmt):
        found[contact_id].append(tag)
    return found


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
