from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from sqlalchemy import ColumnElement, Table
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.contacts import events, repository
from officehub.contacts.hooks import (
    ContactDeleting,
    ContactLocking,
    contact_deleting,
    contact_locking,
)
from officehub.contacts.models import Contact
from officehub.contacts.normalize import (
    brazilian_ddd,
    digits,
    fold,
    phone_forms,
    search_phone_digits,
    to_e164,
)
from officehub.contacts.schemas import (
    ContactDeletedPayload,
    ContactIn,
    ContactOut,
    ContactPatch,
    TagRef,
)
from officehub.events.service import NewRow, emit
from officehub.inboxes import service as inboxes
from officehub.kit.db import column_values
from officehub.kit.errors import Conflict, NotFound, ValidationFailed
from officehub.kit.ids import new_id
from officehub.kit.pagination import Page, PageParams
from officehub.kit.repository import conflicts_as, flush_or_conflict
from officehub.kit.timeutil import utcnow, written_timestamps
from officehub.tags import service as tags
from officehub.tags.repository import tag_refs

if TYPE_CHECKING:
    from officehub.tags.models import Tag

logger = logging.getLogger("officehub.contacts")

_CONTACTS = cast("Table", Contact.__table__)
_CONTACT_BLANK: dict[str, Any] = dict.fromkeys(c.key for c in _CONTACTS.columns)
"""A new contact's row before its values: every column None."""


async def get_contact(
    session: AsyncSession, office_id: str, ident: str, *, for_change: bool = False
) -> Contact:
    record = await repository.get_contact(session, office_id, ident, for_change=for_change)
    if record is None:
        raise NotFound.of("Contact", ident)
    return record


async def lock_contact(session: AsyncSession, office_id: str, ident: str) -> Contact:
    """The contact, locked until the transaction ends: serialises work per contact."""
    return await get_contact(session, office_id, ident, for_change=True)


def contact_out(contact: Contact, contact_tags: Sequence[Tag]) -> ContactOut:
    return contact_row_out(column_values(contact), contact_tags)


def contact_row_out(
    contact: Mapping[str, Any], contact_tags: Sequence[Tag] | Sequence[Mapping[str, Any]]
) -> ContactOut:
    """``contact_out`` of a contact's column values by name (a record's or a row's)."""
    tag_refs = [TagRef.model_validate(t) for t in contact_tags]
    return ContactOut.model_validate(contact_fields(contact, tag_refs))


def contact_fields(contact: Mapping[str, Any], tag_refs: Sequence[Any]) -> dict[str, Any]:
    """A contact's answer fields (what ``ContactOut`` takes) from its column values by name
    and its tag references."""
    return {
        **contact,
        "username": contact["whatsapp_username"],
        "marketing_opt_out": bool(contact["marketing_opt_out"]),
        "legal_hold": bool(contact["legal_hold"]),
        "tags": tag_refs,
    }


async def read_contact(session: AsyncSession, office_id: str, ident: str) -> ContactOut:
    contact = await get_contact(session, office_id, ident)
    return contact_out(contact, await tags_of(session, office_id, contact.id))


async def tags_of(session: AsyncSession, office_id: str, contact_id: str) -> list[Tag]:
    found = await repository.tags_by_contact(session, office_id, [contact_id])
    return found.get(contact_id, [])


ContactPageWritten = written_timestamps(Page[ContactOut])
"""``Page[ContactOut]`` with its contacts' timestamps already written
(``kit.timeutil.written_timestamps``): what the raw search page is written with."""


async def list_contacts(
    session: AsyncSession,
    office_id: str,
    params: PageParams,
    *,
    inbox_id: str | None = None,
    search: str | None = None,
    tag_ids: Sequence[str] = (),
    scope: ColumnElement[bool] | None = None,
) -> bytes:
    """A page of contacts as ``Page[ContactOut]`` JSON (the bytes FastAPI would write of
    it). ``scope``: the contacts the caller may see (``contacts.visibility``); None: all.

    PostgreSQL's search page (read through the raw driver) comes with its timestamps
    written by the database (``repository.SEARCH_TIMES``) and its contacts' tag
    references beside them (``tags.repository.TAG_REFS``: one statement), written through
    ``ContactPageWritten``, validated once as a whole page: no ``ContactOut`` made per
    contact first, no Python call per timestamp."""
    if inbox_id is not None:
        await inboxes.get_inbox(session, office_id, inbox_id)
    await tags.get_tags(session, office_id, tag_ids)
    name_fragment = fold(search.strip()) if search else None
    rows, total = await repository.contacts_page(
        session,
        office_id,
        params,
        inbox_id=inbox_id,
        name_fragment=name_fragment,
        phone_fragments=search_phone_digits(search) if search else [],
        tag_ids=tag_ids,
        scope=scope,
    )
    pages = math.ceil(total / params.limit)
    if rows and isinstance(rows[0], dict):  # PostgreSQL's search, through the raw driver
        contacts = []
        for contact in rows:
            contacts.append(contact_fields(contact, tag_refs(contact)))
        page = {"data": contacts, "total_results": total, "total_pages": pages}
        return ContactPageWritten.model_validate(page).model_dump_json(by_alias=True).encode()
    records = cast("list[Contact]", rows)
    found = await repository.tags_by_contact(session, office_id, [c.id for c in records])
    items = [contact_out(c, found.get(c.id, [])) for c in records]
    return Page[ContactOut].of(items, total, params).model_dump_json(by_alias=True).encode()


async def create_contact(session: AsyncSession, office_id: str, body: ContactIn) -> ContactOut:
    phone = await _checked_phone(session, office_id, body.phone)
    if body.inbox_id is not None:
        await inboxes.get_inbox(session, office_id, body.inbox_id)
    contact_tags = await _checked_tags(session, office_id, body.tags)
    now = utcnow()
    # The new row as the insert takes it (every column; those not given None, as an unset
    # attribute of a new ``Contact`` read), no ORM object: it never enters the session.
    contact_id = new_id()
    row: dict[str, Any] = {
        **_CONTACT_BLANK,
        "id": contact_id,
        "office_id": office_id,
        "inbox_id": body.inbox_id,
        "name": body.name,
        "search_name": fold(body.name)[:200],
        "phone": phone,
        "ddd": brazilian_ddd(phone),  # as ``Contact``'s validator derives it from the phone
        "email": body.email,
        "document": body.document,
        "description": body.description,
        "is_blocked": body.is_blocked,
        "marketing_opt_out": False,
        "legal_hold": False,
        "verified": True,
        "created_at": now,
        "updated_at": now,
    }
    out = contact_row_out(row, contact_tags)
    # The contact and its event in one statement (on PostgreSQL), its tags after it.
    with conflicts_as(_phone_taken(f"Another contact has the phone {phone}")):
        await emit(
            session,
            office_id,
            events.CREATED,
            out,
            new_subject=True,
            inserting=NewRow(_CONTACTS, row),
        )
    await repository.add_tags(session, office_id, contact_id, [t.id for t in contact_tags])
    return out


def channel_phone(wa_id: str) -> str:
    """The E.164 phone of a channel's sender id (digits): canonical (a Brazilian mobile
    with its ninth digit), or as given with ``+`` when the numbering plan does not know it."""
    raw = "+" + digits(wa_id)
    return to_e164(raw) or raw


async def find_or_create_by_phone(
    session: AsyncSession,
    office_id: str,
    wa_id: str,
    name: str | None,
    inbox_id: str | None,
    *,
    whatsapp_id: str | None = None,
) -> Contact:
    """The contact with this channel sender's phone, else a new one (``contact.created``).

    ``wa_id`` is the digits a channel identifies the sender by; it is stored in E.164
    (``channel_phone``), and found in either form of a Brazilian mobile. A new contact keeps
    ``whatsapp_id`` as its WhatsApp address. The caller serialises concurrent calls (the
    channel webhook locks its integration).
    """
    phone = channel_phone(wa_id)
    existing = await repository.find_by_phone(session, office_id, phone)
    if existing is not None:
        return existing
    return await add_met_contact(
        session, office_id, inbox_id, name, phone, phone=phone, whatsapp_id=whatsapp_id
    )


async def find_by_whatsapp_id(session: AsyncSession, office_id: str, wa_id: str) -> Contact | None:
    """The office's contact with this WhatsApp id's phone (either form), or None."""
    raw = "+" + digits(wa_id)
    return await repository.find_by_phone(session, office_id, to_e164(raw) or raw)


async def out(session: AsyncSession, contact: Contact) -> ContactOut:
    """The contact as the API and its events show it."""
    return contact_out(contact, await tags_of(session, contact.office_id, contact.id))


async def has_phone(session: AsyncSession, office_id: str, phone: str) -> bool:
    """Whether a contact of the office has this E.164 phone."""
    return await repository.find_by_phone(session, office_id, phone) is not None


async def phone_holder(
    session: AsyncSession, office_id: str, phone: str, *, other_than: str | None = None
) -> Contact | None:
    """The contact of the office holding this phone (in either form of a Brazilian mobile)."""
    return await repository.find_by_phone(session, office_id, phone, other_than=other_than)


async def has_email(session: AsyncSession, office_id: str, email: str) -> bool:
    """Whether a contact of the office has this email (case-insensitive)."""
    return await repository.find_by_email(session, office_id, email) is not None


async def find_or_create_by_email(
    session: AsyncSession, office_id: str, email: str, name: str, inbox_id: str | None
) -> Contact:
    """The office's contact with this email (the oldest), else a new one
    (``contact.created``). The caller serialises concurrent calls (it locks the channel)."""
    existing = await repository.find_by_email(session, office_id, email)
    if existing is not None:
        return existing
    return await create_channel_contact(session, office_id, name, inbox_id, email=email)


async def create_channel_contact(
    session: AsyncSession,
    office_id: str,
    name: str | None,
    inbox_id: str | None,
    *,
    email: str | None = None,
    description: str | None = None,
    fallback_name: str = "Visitor",
) -> Contact:
    """A contact a channel met (no phone): ``contact.created`` is emitted."""
    return await add_met_contact(
        session, office_id, inbox_id, name, fallback_name, email=email, description=description
    )


async def add_met_contact(
    session: AsyncSession,
    office_id: str,
    inbox_id: str | None,
    name: str | None,
    fallback_name: str,
    **identity: Any,
) -> Contact:
    """Inserts a contact a channel met, named as the channel said (NULs and runs of blanks
    folded, else ``fallback_name``), and emits ``contact.created``."""
    clean = " ".join((name or "").replace("\x00", "").split())[:200] or fallback_name
    contact = Contact(
        office_id=office_id,
        inbox_id=inbox_id,
        name=clean,
        search_name=fold(clean)[:200],
        is_blocked=False,
        **identity,
    )
    session.add(contact)
    await session.flush()
    await emit(session, office_id, events.CREATED, contact_out(contact, []), new_subject=True)
    return contact


async def update_contact(
    session: AsyncSession, office_id: str, ident: str, body: ContactPatch
) -> ContactOut:
    """Applies the fields sent; emits ``contact.updated`` only when something changed."""
    contact = await get_contact(session, office_id, ident, for_change=True)
    before = contact_out(contact, await tags_of(session, office_id, contact.id))
    sent = body.model_fields_set
    body.refuse_sent_nulls()
    changes: dict[str, Any] = {}
    if body.name is not None:
        changes["name"] = body.name
        changes["search_name"] = fold(body.name)[:200]
    if "phone" in sent:
        changes["phone"] = await _checked_phone(session, office_id, body.phone, other_than=ident)
        if contact.whatsapp_id and not _same_number(contact.whatsapp_id, changes["phone"]):
            changes["whatsapp_id"] = None  # a new number: the platform's old id no longer
    if body.inbox_id is not None:
        await inboxes.get_inbox(session, office_id, body.inbox_id)
    for field in ("email", "document", "description", "inbox_id", "is_blocked"):
        if field in sent:
            changes[field] = getattr(body, field)
    changed = {k: v for k, v in changes.items() if getattr(contact, k) != v}
    new_tags = None
    if body.tags is not None:
        checked = await _checked_tags(session, office_id, body.tags)
        if [t.id for t in checked] != [t.id for t in before.tags]:
            new_tags = checked
    if not changed and new_tags is None:
        return before
    for key, value in changed.items():
        setattr(contact, key, value)
    if new_tags is not None:
        wanted = {t.id for t in new_tags}
        held = {t.id for t in before.tags}
        await repository.remove_tags(session, office_id, contact.id, sorted(held - wanted))
        await repository.add_tags(session, office_id, contact.id, sorted(wanted - held))
    contact.updated_at = utcnow()
    await flush_or_conflict(session, _phone_taken(f"Another contact has the phone {contact.phone}"))
    out = await read_contact(session, office_id, ident)
    await emit(session, office_id, events.UPDATED, out)
    return out


async def delete_contact(session: AsyncSession, office_id: str, ident: str) -> ContactOut:
    """Deletes the contact with its conversations, messages, notes, partner links and CRM
    cards; each card emits its ``crm.lead.deleted`` first (the crm domain's subscriber to
    ``contact_deleting``). 409 ``LEGAL_HOLD`` under a legal hold."""
    await contact_locking.fire(ContactLocking(session, office_id, ident))
    contact = await get_contact(session, office_id, ident, for_change=True)
    refuse_held(contact)
    out = contact_out(contact, await tags_of(session, office_id, contact.id))
    await contact_deleting.fire(ContactDeleting(session, office_id, contact.id))
    await repository.delete_contact(session, contact)
    await emit(
        session,
        office_id,
        events.DELETED,
        ContactDeletedPayload(id=contact.id, erased=False, merged_into_id=None),
    )
    return out


def refuse_held(contact: Contact) -> None:
    """A contact under legal hold is neither erased nor deleted (409 ``LEGAL_HOLD``)."""
    if contact.legal_hold:
        raise Conflict(
            "The contact is under legal hold",
            details="An admin holds this contact's data (legalHold); release it first",
            code="LEGAL_HOLD",
        )


async def _checked_phone(
    session: AsyncSession, office_id: str, raw: str | None, *, other_than: str | None = None
) -> str | None:
    if raw is None:
        return None
    phone = to_e164(raw)
    if phone is None:
        raise ValidationFailed.field(
            "body.phone", f"{raw!r} is not a valid phone number (Brazil unless +country given)"
        )
    existing = await repository.find_by_phone(session, office_id, phone, other_than=other_than)
    if existing is not None:
        raise _phone_taken(f"Contact {existing.id} already has the phone {phone}")
    return phone


def _same_number(whatsapp_id: str, phone: str | None) -> bool:
    return phone is not None and channel_phone(whatsapp_id) in phone_forms(phone)


def _phone_taken(details: str) -> Conflict:
    return Conflict("A contact with this phone already exists", details=details, code="PHONE_TAKEN")


async def _checked_tags(session: AsyncSession, office_id: str, tag_ids: Sequence[str]) -> list[Tag]:
    found = await tags.get_tags(session, office_id, tag_ids)
    return sorted(found, key=lambda t: (t.name, t.id))


# Web-chat identity: what a web chat visitor types is a claim, never an identity.


async def create_claimant(
    session: AsyncSession,
    office_id: str,
    name: str | None,
    inbox_id: str | None,
    *,
    claimed_phone: str | None = None,
    claimed_email: str | None = None,
) -> Contact:
    """An unverified contact of a web chat visitor (``contact.created``): the phone or email
    typed is kept as a claim, so it matches, merges with and blocks no other contact."""
    return await add_met_contact(
        session,
        office_id,
        inbox_id,
        name,
        "Visitante",
        claimed_phone=claimed_phone,
        claimed_email=claimed_email,
        verified=False,
    )


async def verify_contact(session: AsyncSession, office_id: str, ident: str) -> ContactOut:
    """An operator who checked the visitor's claim: the claimed phone and email become the
    contact's own (``contact.updated``). A claimed phone another contact holds is 409
    ``PHONE_TAKEN``: the visitor is that contact, to be merged into it, not a second one."""
    contact = await lock_contact(session, office_id, ident)
    if contact.verified:
        return await read_contact(session, office_id, ident)
    if contact.claimed_phone is not None and contact.phone is None:
        holder = await repository.find_by_phone(
            session, office_id, contact.claimed_phone, other_than=ident
        )
        if holder is not None:
            raise _phone_taken(
                f"Contact {holder.id} already has the phone {contact.claimed_phone}: "
                "merge the visitor into it instead"
            )
        contact.phone = contact.claimed_phone
    if contact.claimed_email is not None and contact.email is None:
        contact.email = contact.claimed_email
    contact.claimed_phone = None
    contact.claimed_email = None
    contact.verified = True
    contact.updated_at = utcnow()
    await flush_or_conflict(session, _phone_taken(f"Another contact has the phone {contact.phone}"))
    out = await read_contact(session, office_id, ident)
    await emit(session, office_id, events.UPDATED, out)
    return out


async def is_verified(session: AsyncSession, office_id: str, ident: str) -> bool:
    """Whether the contact is one the office or a verified channel vouches for."""
    return (await get_contact(session, office_id, ident)).verified
