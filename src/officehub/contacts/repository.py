from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Integer,
    Select,
    String,
    bindparam,
    delete,
    exists,
    false,
    func,
    not_,
    or_,
    select,
    true,
    union_all,
    update,
)
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.contacts.models import ConsentRecord, Contact, ContactTag, PartnerLink
from officehub.contacts.normalize import phone_forms
from officehub.kit.db import api_timestamp
from officehub.kit.pagination import ListQuery, PageParams, paginate
from officehub.kit.raw_read import RawSelect, Row, on_raw_driver
from officehub.kit.repository import get_scoped, insert_ignoring_duplicates, scoped
from officehub.tags.models import Tag
from officehub.tags.repository import TAG_REFS, tag_refs_lateral


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
    """The contact with this E.164 phone in any of its forms (a Brazilian mobile with or
    without the ninth digit: a number stored before the rule counts too), the one stored
    in the canonical form first."""
    stmt = scoped(Contact, office_id).where(Contact.phone.in_(phone_forms(phone)))
    if other_than is not None:
        stmt = stmt.where(Contact.id != other_than)
    stmt = stmt.order_by((Contact.phone != phone), Contact.created_at, Contact.id)
    return (await session.scalars(stmt.limit(1))).first()


async def find_by_whatsapp_user_id(
    session: AsyncSession, office_id: str, user_id: str, *, other_than: str | None = None
) -> Contact | None:
    """The contact with this business-scoped WhatsApp user id (unique in the office)."""
    stmt = scoped(Contact, office_id).where(Contact.whatsapp_user_id == user_id)
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
    phone_fragments: Sequence[str] = (),
    tag_ids: Sequence[str] = (),
    scope: ColumnElement[bool] | None = None,
) -> tuple[list[Contact] | list[Row], int]:
    """A page of the office's contacts, by name, and how many there are in all; the search
    matches the name, the WhatsApp username or the phone's digits (substrings; any of
    ``phone_fragments``, the forms of one number). ``scope``: the contacts a signed-in user
    may see (page and total alike; such a list is built per request, the others are
    cached)."""
    by_inbox, by_name, by_tags = inbox_id is not None, bool(name_fragment), bool(tag_ids)
    fenced = session.get_bind().dialect.name == "postgresql"
    forms = len(phone_fragments)
    if scope is None:
        query = _contacts_query(
            by_inbox=by_inbox, by_name=by_name, phone_forms=forms, by_tags=by_tags, fenced=fenced
        )
    else:
        query = _build_query(
            by_inbox=by_inbox,
            by_name=by_name,
            phone_forms=forms,
            by_tags=by_tags,
            fenced=fenced,
            scope=scope,
        )
    values = {
        "office_id": office_id,
        "inbox_id": inbox_id,
        "name_pattern": _containing(name_fragment or ""),
        **{f"phone_pattern_{i}": _containing(f) for i, f in enumerate(phone_fragments)},
        "tag_ids": list(tag_ids),
    }
    if isinstance(query, ListQuery):
        return await paginate(session, query, params, values)
    bound = {**values, "page_limit": params.limit, "page_offset": params.offset}
    if scope is None and on_raw_driver(session):
        # the cached shapes (no caller's scope) through the raw driver: each contact a dict
        # of its columns (its ``SEARCH_TIMES`` written), ``total`` beside them
        found = await query.raw_page.rows(session, bound)
        if found:
            return found, int(found[0]["total"])
        counted = await query.raw_count.rows(session, values)
        return [], int(counted[0]["count"])
    rows = (await session.execute(query.page, bound)).all()
    if rows:
        return [contact for contact, _ in rows], int(rows[0][1])
    return [], int(await session.scalar(query.count, values) or 0)


def _containing(fragment: str) -> str:
    """A LIKE pattern matching ``fragment`` anywhere, its own ``%`` and ``_`` taken literally."""
    escaped = fragment.replace("/", "//").replace("%", "/%").replace("_", "/_")
    return f"%{escaped}%"


@cache
def _contacts_query(
    *, by_inbox: bool, by_name: bool, phone_forms: int, by_tags: bool, fenced: bool
) -> ListQuery | _Search:
    """The list's statements for one shape of filter, built once; its values are bound."""
    return _build_query(
        by_inbox=by_inbox, by_name=by_name, phone_forms=phone_forms, by_tags=by_tags, fenced=fenced
    )


def _build_query(
    *,
    by_inbox: bool,
    by_name: bool,
    phone_forms: int,
    by_tags: bool,
    fenced: bool,
    scope: ColumnElement[bool] | None = None,
) -> ListQuery | _Search:
    """The list's statements for one shape of filter (and a signed-in user's ``scope``).

    ``fenced`` (PostgreSQL): a search is a ``UNION ALL`` of one arm per match (name,
    username, each phone form), each arm found by its own trigram index (0007_trgm) and
    every arm after the first leaving out the rows an earlier arm matched, so each contact
    comes once, as the ``OR`` of the matches finds it. The arms give the ids and names of
    the rows they recheck anyway (a trigram index's candidates are rechecked on the
    table); the page is sorted from them with the total beside it (``count(*) OVER ()``,
    one pass over the matches) and its rows are then read by id: the office's other
    contacts are never read.
    An ``OR`` of the matches (the username's ``ILIKE`` beside the name's and phone's
    ``LIKE``) made the planner walk the office's names in order and filter, which reads
    every contact before the page of a rare or absent fragment; the ids of the matches
    joined back to the table made it read every contact to join them (the whole table
    hashed for the count, the primary key walked for the page: at 1,000,000 contacts a
    common name took 955 ms, docs/performance.md).
    SQLite has no trigram index: its search reads the office's names either way.
    """
    office_id = bindparam("office_id", type_=String)
    filters: list[ColumnElement[bool]] = [Contact.office_id == office_id]
    if by_inbox:
        filters.append(Contact.inbox_id == bindparam("inbox_id"))
    if by_tags:
        filters.append(
            exists().where(
                ContactTag.office_id == office_id,
                ContactTag.contact_id == Contact.id,
                ContactTag.tag_id.in_(bindparam("tag_ids", expanding=True)),
            )
        )
    if scope is not None:
        filters.append(scope)
    matches: list[ColumnElement[bool]] = []
    if by_name:
        matches.append(Contact.search_name.like(bindparam("name_pattern"), escape="/"))
        # a client known by a WhatsApp username only is found by it (any case)
        matches.append(Contact.whatsapp_username.ilike(bindparam("name_pattern"), escape="/"))
    for i in range(phone_forms):
        matches.append(Contact.phone.like(bindparam(f"phone_pattern_{i}"), escape="/"))
    if not matches or not fenced:
        stmt = select(Contact).where(*filters)
        if matches:
            stmt = stmt.where(or_(*matches))
        return ListQuery(stmt.order_by(Contact.search_name, Contact.id))
    arms = [
        select(Contact.id, Contact.search_name).where(
            *filters,
            match,
            # not found by an earlier arm (a NULL column matches nothing)
            *(not_(func.coalesce(earlier, false())) for earlier in matches[:n]),
        )
        for n, match in enumerate(matches)
    ]
    found = (union_all(*arms) if len(arms) > 1 else arms[0]).subquery("matches")
    page = (
        select(found.c.id, found.c.search_name, func.count().over().label("total"))
        .order_by(found.c.search_name, found.c.id)
        .limit(bindparam("page_limit", type_=Integer))
        .offset(bindparam("page_offset", type_=Integer))
        .subquery("page")
    )
    page_of = (
        select(Contact, page.c.total)
        .join(page, page.c.id == Contact.id)
        .where(Contact.office_id == office_id)
        .order_by(page.c.search_name, page.c.id)
    )
    count = select(func.count().label("count")).select_from(found)
    return _Search(
        page=page_of,
        count=count,
        raw_page=RawSelect(_raw_page(page, office_id)),
        raw_count=RawSelect(count),
    )


SEARCH_TIMES = ("created_at", "updated_at")
"""The raw search page's timestamps, handed back as the API writes them."""


def _written_columns() -> list[ColumnElement[Any]]:
    """The contact's columns, its ``SEARCH_TIMES`` written by PostgreSQL (``api_timestamp``:
    as ``timeutil.isoformat`` writes them, under the same names)."""
    return [api_timestamp(c, c.key) if c.key in SEARCH_TIMES else c for c in Contact.__table__.c]


def _raw_page(page: Any, office_id: Any) -> Select[Any]:
    """The search's page for the raw driver: the contacts' columns (``SEARCH_TIMES``
    written), the total, and each contact's tag references (``tags.repository.TAG_REFS``,
    a ``LATERAL`` of ``tags_by_contact``'s select per contact): the page and its tags in
    one statement."""
    tags = tag_refs_lateral(ContactTag, ContactTag.contact_id, Contact.id, office_id)
    return (
        select(*_written_columns(), page.c.total, *(tags.c[key] for key in TAG_REFS))
        .select_from(Contact)
        .join(page, page.c.id == Contact.id)
        .join(tags, true())
        .where(Contact.office_id == office_id)
        .order_by(page.c.search_name, page.c.id)
    )


@dataclass(frozen=True)
class _Search:
    """A search's statements (PostgreSQL): the page of contacts with the total beside each
    row (one pass over the matches for both), and the count alone for a page past the
    last (no row to carry the total)."""

    page: Select[Contact, int]
    count: Select[int]
    raw_page: RawSelect
    """``page`` with the contact's columns for its entity, through the raw driver; its
    ``SEARCH_TIMES`` come written (text), not as datetimes, and its ``TAG_REFS``
    beside them."""
    raw_count: RawSelect


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


async def drop_claims(
    session: AsyncSession, office_id: str, phones: Sequence[str], emails: Sequence[str]
) -> None:
    """Other contacts' claims (web chat visitors who typed them) of these phones or emails
    are dropped: an erasure."""
    if phones:
        await session.execute(
            update(Contact)
            .where(Contact.office_id == office_id, Contact.claimed_phone.in_(list(phones)))
            .values(claimed_phone=None)
        )
    if emails:
        await session.execute(
            update(Contact)
            .where(
                Contact.office_id == office_id,
                func.lower(Contact.claimed_email).in_([e.lower() for e in emails]),
            )
            .values(claimed_email=None)
        )


async def delete_contact(session: AsyncSession, contact: Contact) -> None:
    await session.delete(contact)
    await session.flush()


async def move_belongings(session: AsyncSession, office_id: str, from_id: str, to_id: str) -> None:
    """Moves what the contacts domain holds of ``from_id`` (partner links, tags, consent
    records) to ``to_id``. What the upper domains hold (conversations, cards, cases, channel
    peers, web-chat visitors) moved already: their subscribers to ``contact_merging``."""
    await session.execute(
        update(ConsentRecord)
        .where(ConsentRecord.office_id == office_id, ConsentRecord.contact_id == from_id)
        .values(contact_id=to_id)
        .execution_options(synchronize_session=False)
    )
    await session.execute(
        update(PartnerLink)
        .where(PartnerLink.office_id == office_id, PartnerLink.contact_id == from_id)
        .values(contact_id=to_id)
        .execution_options(synchronize_session=False)
    )
    held = await session.scalars(
        select(ContactTag.tag_id).where(
            ContactTag.office_id == office_id, ContactTag.contact_id == from_id
        )
    )
    await add_tags(session, office_id, to_id, list(held))
    await session.execute(
        delete(ContactTag).where(
            ContactTag.office_id == office_id, ContactTag.contact_id == from_id
        )
    )


async def brazilian_twelve_digit_phones(
    session: AsyncSession, office_id: str | None
) -> list[Contact]:
    """Contacts (of one office, or of all) whose phone is ``+55`` and 10 digits: where a
    mobile stored without its ninth digit hides (landlines look the same)."""
    stmt = select(Contact).where(Contact.phone.like("+55%"), func.length(Contact.phone) == 13)
    if office_id is not None:
        stmt = stmt.where(Contact.office_id == office_id)
    return list(await session.scalars(stmt.order_by(Contact.office_id, Contact.id)))


async def contact_exists(session: AsyncSession, office_id: str, contact_id: str) -> bool:
    found = await session.scalar(
        select(Contact.id).where(Contact.office_id == office_id, Contact.id == contact_id)
    )
    return found is not None


async def find_contact(session: AsyncSession, office_id: str, contact_id: str) -> Contact | None:
    return await session.scalar(scoped(Contact, office_id).where(Contact.id == contact_id))


async def tags_of_contact(session: AsyncSession, office_id: str, contact_id: str) -> list[Tag]:
    """The contact's tags by name."""
    return list(
        await session.scalars(
            scoped(Tag, office_id)
            .join(ContactTag, ContactTag.tag_id == Tag.id)
            .where(ContactTag.contact_id == contact_id)
            .order_by(Tag.name_key)
        )
    )


async def partner_links_of(
    session: AsyncSession, office_id: str, contact_id: str
) -> list[PartnerLink]:
    """Every link the contact has had, oldest first."""
    return list(
        await session.scalars(
            scoped(PartnerLink, office_id)
            .where(PartnerLink.contact_id == contact_id)
            .order_by(PartnerLink.linked_at, PartnerLink.id)
        )
    )


async def consents_of(
    session: AsyncSession, office_id: str, contact_id: str
) -> list[ConsentRecord]:
    """The contact's consent records, oldest first."""
    return list(
        await session.scalars(
            scoped(ConsentRecord, office_id)
            .where(ConsentRecord.contact_id == contact_id)
            .order_by(ConsentRecord.recorded_at, ConsentRecord.id)
        )
    )
