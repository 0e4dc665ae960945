"""A contact's consent records per purpose (``service``, ``marketing``): append-only; the
current state of a purpose is its latest record, and ``contacts.marketing_opt_out``
follows the latest ``marketing`` one. Every write locks the contact's row first, so two
concurrent changes of one contact queue and each sees the one before it: a change of the
current state emits ``contact.updated`` once."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.contacts import events, repository, service
from officehub.contacts.models import ConsentRecord, Contact
from officehub.contacts.schemas import ConsentIn, ConsentOut
from officehub.events.service import emit
from officehub.kit.ids import new_id
from officehub.kit.pagination import PageParams
from officehub.kit.timeutil import utcnow

MARKETING = "marketing"
SERVICE = "service"
KEYWORD_SOURCE = "keyword"
WHATSAPP_SOURCE = "whatsapp"


@dataclass(frozen=True)
class Recorded:
    record: ConsentRecord
    changed: bool
    """Whether the purpose's current state changed (``contact.updated`` was emitted)."""


def consent_out(record: ConsentRecord) -> ConsentOut:
    return ConsentOut(
        id=record.id,
        person_id=record.contact_id,
        purpose=record.purpose,
        granted=record.granted,
        source=record.source,
        text_version=record.text_version,
        recorded_at=record.recorded_at,
    )


async def _latest(
    session: AsyncSession, office_id: str, contact_id: str, purpose: str
) -> ConsentRecord | None:
    stmt = (
        select(ConsentRecord)
        .where(
            ConsentRecord.office_id == office_id,
            ConsentRecord.contact_id == contact_id,
            ConsentRecord.purpose == purpose,
        )
        .order_by(ConsentRecord.recorded_at.desc(), ConsentRecord.id.desc())
        .limit(1)
    )
    return (await session.scalars(stmt)).first()


def _current(contact: Contact, latest: ConsentRecord | None, purpose: str) -> bool | None:
    """The purpose's current state: its latest record; with none, marketing is what the
    contact's flag says (granted unless opted out) and service is unknown."""
    if latest is not None:
        return latest.granted
    if purpose == MARKETING:
        return not contact.marketing_opt_out
    return None


async def record(
    session: AsyncSession,
    office_id: str,
    contact_id: str,
    *,
    purpose: str,
    granted: bool,
    source: str,
    text_version: str | None = None,
    only_if_changed: bool = False,
) -> Recorded | None:
    """Appends a record (locking the contact first); when it changes the purpose's current
    state, the contact follows it and ``contact.updated`` goes. ``only_if_changed``: a
    record that would repeat the current state is not appended (a client's keyword): None."""
    contact = await service.lock_contact(session, office_id, contact_id)
    before = _current(contact, await _latest(session, office_id, contact.id, purpose), purpose)
    changed = before != granted
    if only_if_changed and not changed:
        return None
    now = utcnow()
    entry = ConsentRecord(
        id=new_id(),
        office_id=office_id,
        contact_id=contact.id,
        purpose=purpose,
        granted=granted,
        source=source,
        text_version=text_version,
        recorded_at=now,
    )
    session.add(entry)
    if changed:
        if purpose == MARKETING:
            contact.marketing_opt_out = not granted
        contact.updated_at = now
    await session.flush()
    if changed:
        out = service.contact_out(contact, await service.tags_of(session, office_id, contact.id))
        await emit(session, office_id, events.UPDATED, out)
    return Recorded(entry, changed)


async def add_consent(
    session: AsyncSession, office_id: str, contact_id: str, body: ConsentIn
) -> ConsentOut:
    done = await record(
        session,
        office_id,
        contact_id,
        purpose=body.purpose,
        granted=body.granted,
        source=body.source,
        text_version=body.text_version,
    )
    if done is None:  # not only_if_changed: always appended
        raise RuntimeError("a consent record was not appended")
    return consent_out(done.record)


async def list_consents(
    session: AsyncSession, office_id: str, contact_id: str, params: PageParams
) -> tuple[list[ConsentOut], int]:
    """The contact's records, newest first."""
    contact = await service.get_contact(session, office_id, contact_id)
    where = (ConsentRecord.office_id == office_id, ConsentRecord.contact_id == contact.id)
    total = await session.scalar(select(func.count()).select_from(ConsentRecord).where(*where))
    stmt = (
        select(ConsentRecord)
        .where(*where)
        .order_by(ConsentRecord.recorded_at.desc(), ConsentRecord.id.desc())
        .limit(params.limit)
        .offset(params.offset)
    )
    return [consent_out(r) for r in await session.scalars(stmt)], int(total or 0)


async def marketing_withdrawn(session: AsyncSession, office_id: str, contact_id: str) -> bool:
    """Whether the contact's current marketing consent is withdrawn."""
    contact = await service.get_contact(session, office_id, contact_id)
    return bool(contact.marketing_opt_out)


async def set_marketing_opt_out(
    session: AsyncSession,
    office_id: str,
    wa_id: str | None,
    opted_out: bool,
    *,
    user_id: str | None = None,
) -> Recorded | None:
    """The client of this WhatsApp user id (BSUID), else phone, stopped (or resumed)
    marketing messages on WhatsApp: a ``marketing`` record of source ``whatsapp`` when it
    changes the current state. None when the office has no such contact."""
    found = (
        await repository.find_by_whatsapp_user_id(session, office_id, user_id) if user_id else None
    )
    if found is None and wa_id:
        found = await service.find_by_whatsapp_id(session, office_id, wa_id)
    if found is None:
        return None
    return await record(
        session,
        office_id,
        found.id,
        purpose=MARKETING,
        granted=not opted_out,
        source=WHATSAPP_SOURCE,
        only_if_changed=True,
    )


async def marketing_opt_out_after_merge(
    session: AsyncSession, office_id: str, contact_id: str, either_opted_out: bool
) -> bool:
    """The kept contact's flag once both contacts' records are its own: its latest
    marketing record's, else whether either contact had opted out."""
    latest = await _latest(session, office_id, contact_id, MARKETING)
    return either_opted_out if latest is None else not latest.granted
