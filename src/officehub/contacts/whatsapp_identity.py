"""A WhatsApp client's identity: the business-scoped user id (BSUID) first, the phone when
the platform gives it (issue 40; ``docs/decisions.md``, "WhatsApp identity").

A client who adopted a username may write with a BSUID only (``BR.1502576394655843``);
the platform adds the phone while it still has it. Both identify one contact of the office
(each unique there: ``ux_contacts_office_id_whatsapp_user_id``, ``ux_contacts_office_id_phone``):

- found by the BSUID, else by the phone (either form of a Brazilian mobile);
- a contact found by one learns the other when it is free in the office: a phone contact
  its BSUID, a BSUID-only contact its phone (and WhatsApp address);
- when the BSUID is one contact's and the phone another's that has no BSUID, they are one
  person the platform just revealed: merged as ``POST /people/{id}/merge`` does, the older
  kept; a phone contact holding another BSUID is another WhatsApp user: kept apart (logged,
  ids only);
- the username is shown and searched, never matched: it may change any time.

The callers serialise per integration (the webhook locks it); a concurrent insert through
another integration of the office loses to the unique index and is found again.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.contacts import events, merge, repository
from officehub.contacts import service as contacts
from officehub.contacts.models import Contact
from officehub.contacts.normalize import digits, phone_forms
from officehub.events.service import emit
from officehub.kit.timeutil import utcnow

logger = logging.getLogger("officehub.contacts")

# Two letters (the ISO country), a dot, then the id: ``BR.1502576394655843``, or a parent
# id of linked portfolios ``US.ENT.11815799212886844830``. Read leniently (letters, digits,
# dots, ``_`` and ``-``) so a longer or differently cut id is still one identity.
USER_ID = re.compile(r"[A-Za-z]{2}\.[A-Za-z0-9._-]{1,137}")
USERNAME_MAX = 100
FALLBACK_NAME = "Contato do WhatsApp"


def user_id_or_none(value: object) -> str | None:
    """A business-scoped user id as the platform sends it, else None (malformed)."""
    return value if isinstance(value, str) and USER_ID.fullmatch(value) else None


def username_or_none(value: object) -> str | None:
    """A username as given (without NULs or blanks around), else None."""
    if not isinstance(value, str):
        return None
    clean = value.replace("\x00", "").strip()
    return clean if 0 < len(clean) <= USERNAME_MAX and clean.isprintable() else None


@dataclass(frozen=True)
class WhatsAppUser:
    """Who a notification names: the phone digits (``wa_id``) and the BSUID, either may be
    missing (never both), with the profile name and username when given."""

    wa_id: str | None
    user_id: str | None
    name: str | None = None
    username: str | None = None


async def find_or_create(
    session: AsyncSession, office_id: str, user: WhatsAppUser, inbox_id: str | None
) -> Contact:
    """The contact this WhatsApp user is (see the module), else a new one
    (``contact.created``) with the phone, the BSUID and the username the platform gave."""
    found = await find(session, office_id, user)
    if found is not None:
        return found
    try:
        async with session.begin_nested():
            return await _create(session, office_id, user, inbox_id)
    except IntegrityError:
        # another integration of the office made it meanwhile
        again = await find(session, office_id, user)
        if again is None:
            raise
        return again


async def _create(
    session: AsyncSession, office_id: str, user: WhatsAppUser, inbox_id: str | None
) -> Contact:
    identity: dict[str, str | None] = {
        "whatsapp_user_id": user.user_id,
        "whatsapp_username": user.username,
    }
    fallback = user.username or FALLBACK_NAME
    if user.wa_id:
        phone = contacts.channel_phone(user.wa_id)
        identity.update(phone=phone, whatsapp_id=digits(user.wa_id))
        fallback = phone
    return await contacts.add_met_contact(
        session, office_id, inbox_id, user.name or user.username, fallback, **identity
    )


async def find(session: AsyncSession, office_id: str, user: WhatsAppUser) -> Contact | None:
    """The contact this WhatsApp user is, having learnt what the platform revealed (and
    merged with the contact of the other identity when that is the same person); None when
    the office has none."""
    by_user = (
        await repository.find_by_whatsapp_user_id(session, office_id, user.user_id)
        if user.user_id
        else None
    )
    by_phone = (
        await repository.find_by_phone(session, office_id, contacts.channel_phone(user.wa_id))
        if user.wa_id
        else None
    )
    if by_user is not None and by_phone is not None and by_user.id != by_phone.id:
        if by_phone.whatsapp_user_id is not None:
            logger.warning(
                "contact %s holds the WhatsApp user id, contact %s the phone under another "
                "user id: kept apart",
                by_user.id,
                by_phone.id,
            )
            return await _learn(session, by_user, WhatsAppUser(None, None, None, user.username))
        contact = await merge_same_person(session, office_id, by_user, by_phone)
    else:
        found = by_user or by_phone
        if found is None:
            return None
        contact = found
    return await _learn(session, contact, user)


async def merge_same_person(
    session: AsyncSession, office_id: str, one: Contact, other: Contact
) -> Contact:
    """Two contacts the platform revealed to be one WhatsApp user, merged as
    ``POST /people/{id}/merge`` does (the older kept); answers the kept contact."""
    kept, gone = sorted((one, other), key=lambda c: (c.created_at, c.id))
    logger.info("contact %s merged into %s: one WhatsApp user", gone.id, kept.id)
    await merge.merge_contacts(session, office_id, kept.id, gone.id)
    return await contacts.get_contact(session, office_id, kept.id)


async def _learn(session: AsyncSession, contact: Contact, user: WhatsAppUser) -> Contact:
    """Fills what the contact lacks from what the platform gave: the BSUID (when no other
    contact holds it), the phone of a contact without one (when free), the WhatsApp address
    of the same number, the username. ``contact.updated`` when anything changed."""
    office_id = contact.office_id
    changes: dict[str, str] = {}
    if user.user_id and contact.whatsapp_user_id != user.user_id:
        holder = await repository.find_by_whatsapp_user_id(
            session, office_id, user.user_id, other_than=contact.id
        )
        if holder is None:
            changes["whatsapp_user_id"] = user.user_id
    if user.wa_id:
        phone, address = contacts.channel_phone(user.wa_id), digits(user.wa_id)
        if contact.phone is None:
            holder = await repository.find_by_phone(
                session, office_id, phone, other_than=contact.id
            )
            if holder is None:
                changes.update(phone=phone, whatsapp_id=address)
        elif phone in phone_forms(contact.phone) and contact.whatsapp_id != address:
            changes["whatsapp_id"] = address
    if user.username and contact.whatsapp_username != user.username:
        changes["whatsapp_username"] = user.username
    return await _apply(session, contact, changes)


async def _apply(session: AsyncSession, contact: Contact, changes: dict[str, str]) -> Contact:
    if not changes:
        return contact
    try:
        async with session.begin_nested():
            for field, value in changes.items():
                setattr(contact, field, value)
            contact.updated_at = utcnow()
            await session.flush()
    except IntegrityError:  # taken meanwhile through another integration
        await session.refresh(contact)
        logger.warning("contact %s kept its WhatsApp identity: the new one was taken", contact.id)
        return contact
    await emit(session, contact.office_id, events.UPDATED, await contacts.out(session, contact))
    return contact


async def change_identity(
    session: AsyncSession,
    office_id: str,
    old: WhatsAppUser,
    *,
    new_wa_id: str | None = None,
    new_user_id: str | None = None,
) -> Contact | None:
    """The client's WhatsApp identity changed (``user_changed_number``,
    ``user_changed_user_id``, ``user_id_update``): the contact known by the old BSUID (else
    the old phone) takes the new BSUID and the new phone (``contact.updated``). A contact
    already holding the new BSUID is the same WhatsApp user (the platform gives BSUIDs):
    merged. A contact already holding the new phone is not merged on the platform's word
    (log, ids only): the office can merge them. None when no contact is known by the old."""
    contact = await find(session, office_id, WhatsAppUser(old.wa_id, old.user_id))
    if contact is None:
        return None
    changes: dict[str, str] = {}
    if new_user_id and new_user_id != contact.whatsapp_user_id:
        holder = await repository.find_by_whatsapp_user_id(
            session, office_id, new_user_id, other_than=contact.id
        )
        if holder is not None:
            contact = await merge_same_person(session, office_id, contact, holder)
        if contact.whatsapp_user_id != new_user_id:
            changes["whatsapp_user_id"] = new_user_id
    if new_wa_id and digits(new_wa_id):
        phone, address = contacts.channel_phone(new_wa_id), digits(new_wa_id)
        holder = await repository.find_by_phone(session, office_id, phone, other_than=contact.id)
        if holder is not None:
            logger.warning(
                "number change kept: contact %s's new number belongs to contact %s",
                contact.id,
                holder.id,
            )
        elif (contact.phone, contact.whatsapp_id) != (phone, address):
            changes.update(phone=phone, whatsapp_id=address)
    return await _apply(session, contact, changes)
