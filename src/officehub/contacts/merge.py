"""Two contacts that are one person made one (``POST /people/{id}/merge``,
``officehub people duplicates --merge``).

Both rows are locked in id order (so two merges of the same pair never deadlock), then
everything of the other contact moves to the kept one: partner links and tags here, and
through the ``contact_merging`` hook what the upper domains hold: conversations (with their
messages and notes; the conversations domain), CRM cards (crm), cases, channel peers and
web-chat visitors. Where both have an open conversation on the same channel the other's is
closed first (``chat.conversation.updated``): one open thread per channel, the history of
both kept. Fields empty on the kept contact are filled from the other; the other
is deleted (``contact.deleted``) and the kept one announced (``contact.updated``).

An operator who merges has checked that the two are one person, so the kept contact is
verified afterwards (the issue's "a claim becomes verified by an operator who merges after
checking"). A web chat claim (``claimed_phone``/``claimed_email``, of either contact) fills
the kept contact's empty phone or email only when no other contact of the office holds it;
otherwise it is dropped: the holder is another person as far as the office knows, and a
claim never takes or blocks what a verified contact holds.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.contacts import consent, events, repository
from officehub.contacts import service as contacts
from officehub.contacts.hooks import ContactMerging, contact_merging
from officehub.contacts.models import Contact
from officehub.contacts.normalize import phone_forms, to_e164
from officehub.contacts.schemas import ContactDeletedPayload, ContactOut
from officehub.events.service import emit
from officehub.kit.errors import ValidationFailed
from officehub.kit.timeutil import utcnow

# Filled on the kept contact from the other when empty there.
FILLED = (
    "phone",
    "whatsapp_id",
    "whatsapp_user_id",
    "whatsapp_username",
    "email",
    "document",
    "description",
    "image_url",
    "inbox_id",
)


async def merge_contacts(
    session: AsyncSession, office_id: str, ident: str, other_id: str
) -> ContactOut:
    """Merges ``other_id`` into ``ident`` (see the module); answers the kept contact."""
    if other_id == ident:
        raise ValidationFailed.field("body.otherId", "must name another contact than the path")
    locked = {
        i: await contacts.lock_contact(session, office_id, i) for i in sorted({ident, other_id})
    }
    kept, other = locked[ident], locked[other_id]
    await contact_merging.fire(ContactMerging(session, office_id, kept.id, other.id))
    await repository.move_belongings(session, office_id, other.id, kept.id)
    claims = [(kept.claimed_phone, kept.claimed_email), (other.claimed_phone, other.claimed_email)]
    fills = {f: getattr(other, f) for f in FILLED if not getattr(kept, f) and getattr(other, f)}
    if "whatsapp_id" in fills and not _reaches(other.whatsapp_id, fills.get("phone", kept.phone)):
        del fills["whatsapp_id"]  # the other's WhatsApp address is another number's
    await repository.delete_contact(session, other)
    # Both histories are the kept one's now: the flag follows its latest marketing record;
    # with none, an opt-out of either holds.
    kept.marketing_opt_out = await consent.marketing_opt_out_after_merge(
        session, office_id, kept.id, kept.marketing_opt_out or other.marketing_opt_out
    )
    if other.legal_hold and not kept.legal_hold:  # the held data lives on in the kept one
        kept.legal_hold, kept.legal_hold_reason = True, other.legal_hold_reason
    for field, value in fills.items():
        setattr(kept, field, value)
    await _take_claims(session, kept, claims)
    await _canonical_phone(session, kept)
    kept.updated_at = utcnow()
    await session.flush()
    out = await contacts.read_contact(session, office_id, kept.id)
    await emit(
        session,
        office_id,
        events.DELETED,
        ContactDeletedPayload(id=other.id, erased=False, merged_into_id=kept.id),
    )
    await emit(session, office_id, events.UPDATED, out)
    return out


async def _take_claims(
    session: AsyncSession, kept: Contact, claims: list[tuple[str | None, str | None]]
) -> None:
    """The merged contact is verified; each claimed phone or email (the kept contact's own
    first) fills its empty phone or email when no other contact holds it, else is dropped."""
    for claimed_phone, claimed_email in claims:
        if kept.phone is None and claimed_phone is not None:
            holder = await repository.find_by_phone(
                session, kept.office_id, claimed_phone, other_than=kept.id
            )
            if holder is None:
                kept.phone = claimed_phone
        if kept.email is None and claimed_email is not None:
            holder = await repository.find_by_email(session, kept.office_id, claimed_email)
            if holder is None or holder.id == kept.id:
                kept.email = claimed_email
    kept.claimed_phone = None
    kept.claimed_email = None
    kept.verified = True


def _reaches(whatsapp_id: str | None, phone: str | None) -> bool:
    """Whether the WhatsApp id is a form of the phone."""
    if whatsapp_id is None or phone is None:
        return False
    return contacts.channel_phone(whatsapp_id) in phone_forms(phone)


async def _canonical_phone(session: AsyncSession, kept: Contact) -> None:
    """A kept phone stored before the identity rule (a Brazilian mobile without its ninth
    digit) takes its canonical form once no other contact holds that (the merged one held
    it, or none did); the old form stays the WhatsApp address when none is known."""
    if kept.phone is None:
        return
    canonical = to_e164(kept.phone)
    if canonical is None or canonical == kept.phone:
        return
    holder = await repository.find_by_phone(session, kept.office_id, canonical, other_than=kept.id)
    if holder is None:
        kept.whatsapp_id = kept.whatsapp_id or kept.phone.removeprefix("+")
        kept.phone = canonical


@dataclass(frozen=True)
class Duplicate:
    """Two contacts of an office that are one number (kept: the older)."""

    office_id: str
    kept_id: str
    other_id: str
    phone: str


async def find_duplicates(session: AsyncSession, office_id: str | None) -> list[Duplicate]:
    """Pairs of contacts (of one office, or of all) that are one Brazilian mobile with and
    without the ninth digit. Exact duplicates cannot be stored (the unique index)."""
    pairs = []
    for contact in await repository.brazilian_twelve_digit_phones(session, office_id):
        canonical = to_e164(contact.phone or "")
        if canonical is None or canonical == contact.phone:
            continue
        twin = await repository.find_by_phone(
            session, contact.office_id, canonical, other_than=contact.id
        )
        if twin is None:
            continue
        older, newer = sorted((contact, twin), key=lambda c: (c.created_at, c.id))
        pairs.append(Duplicate(contact.office_id, older.id, newer.id, canonical))
    return pairs
