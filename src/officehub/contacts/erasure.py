"""A client's data erased at their request (LGPD art. 18, VI: ``POST /people/{id}/erase``),
and the legal hold that forbids it (``PUT /people/{id}/legal-hold``).

Erasing a contact deletes it and every personal datum derived from it, in one transaction:
the upper domains answer the ``contact_erasing`` hook (conversations name their ids and the
contact's stored files; crm its cards; cases its cases; automation deletes its rule runs),
then ``contact_deleting`` and the database cascades take conversations, messages, notes,
cards, cases, flow sessions, partner links, tags and channel identities; then the outbox
events, webhook and ``FIRE_WEBHOOK`` deliveries (payloads, attempts, receivers' answers)
and scheduled jobs naming any of those records are deleted. ``contact.deleted`` is emitted
with ids only. A scheduled job (``ERASED_JOB``) deletes the files and, on PostgreSQL,
vacuums the tables; on SQLite ``secure_delete`` zeroes the deleted rows and the route
checkpoints the WAL after commit (``kit.db.checkpoint_wal``). Counts that carry no personal
data (the clients map's) may stay; its cached copy is dropped (dashboard).
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.contacts import events, repository
from officehub.contacts.hooks import (
    ContactDeleting,
    ContactErasing,
    ContactLocking,
    contact_deleting,
    contact_erasing,
    contact_locking,
)
from officehub.contacts.models import Contact
from officehub.contacts.normalize import phone_forms
from officehub.contacts.schemas import (
    ContactDeletedPayload,
    ContactErasedOut,
    ContactOut,
    LegalHoldIn,
)
from officehub.contacts.service import lock_contact, read_contact, refuse_held
from officehub.events.service import emit, events_mentioning, forget_events, forget_subjects
from officehub.kit.db import vacuum
from officehub.kit.errors import ValidationFailed
from officehub.kit.scheduled_jobs import ScheduledJob, add_job, forget_jobs_mentioning
from officehub.kit.storage import storage_from_settings
from officehub.kit.timeutil import utcnow
from officehub.kit.worker import WorkerContext
from officehub.webhooks.service import forget_deliveries

logger = logging.getLogger("officehub.contacts")

ERASED_JOB = "contacts.erased"
"""The scheduled job an erasure leaves: its files deleted, PostgreSQL's tables vacuumed."""

VACUUMED = (
    "contacts",
    "contact_tags",
    "partner_links",
    "conversations",
    "conversation_notes",
    "conversation_tags",
    "messages",
    "read_receipts",
    "crm_cards",
    "cases",
    "case_movements",
    "flow_sessions",
    "automation_runs",
    "channel_peers",
    "webchat_visitors",
    "claim_codes",
    "outbox_events",
    "outbox_consumer_events",
    "webhook_deliveries",
    "webhook_delivery_attempts",
    "action_deliveries",
    "scheduled_jobs",
)
"""The tables an erasure deletes from: what the scheduled ``VACUUM`` reclaims."""


async def set_legal_hold(
    session: AsyncSession, office_id: str, ident: str, body: LegalHoldIn
) -> ContactOut:
    """Holds or releases the contact's data (``contact.updated`` when it changes). Holding
    needs a reason; releasing drops it."""
    if body.legal_hold and body.legal_hold_reason is None:
        raise ValidationFailed.field("body.legalHoldReason", "required when legalHold is true")
    contact = await lock_contact(session, office_id, ident)
    reason = body.legal_hold_reason if body.legal_hold else None
    if (contact.legal_hold, contact.legal_hold_reason) == (body.legal_hold, reason):
        return await read_contact(session, office_id, ident)
    contact.legal_hold, contact.legal_hold_reason = body.legal_hold, reason
    contact.updated_at = utcnow()
    await session.flush()
    out = await read_contact(session, office_id, ident)
    await emit(session, office_id, events.UPDATED, out)
    return out


async def erase_contact(session: AsyncSession, office_id: str, ident: str) -> ContactErasedOut:
    """Erases the contact and what derives from it (the module says what); 409
    ``LEGAL_HOLD`` under a legal hold. Emits ``contact.deleted`` with ids only."""
    await contact_locking.fire(ContactLocking(session, office_id, ident))
    contact = await lock_contact(session, office_id, ident)
    refuse_held(contact)
    erasing = ContactErasing(session, office_id, contact.id, {contact.id})
    await contact_erasing.fire(erasing)
    await contact_deleting.fire(ContactDeleting(session, office_id, contact.id))
    phones, emails = _personal_values(contact)
    await repository.delete_contact(session, contact)
    await repository.drop_claims(session, office_id, phones, emails)
    # The phone and email themselves are mentions too: the events and deliveries that
    # carry them as another contact's claim (a visitor's contact.created) go as well.
    mentions = sorted(erasing.mentions | set(phones) | set(emails))
    # After the cascades: the events they emitted (crm.lead.deleted) name the records too.
    now = utcnow()
    forgotten = await forget_derived(session, office_id, mentions, erasing.files, now)
    await emit(
        session,
        office_id,
        events.DELETED,
        ContactDeletedPayload(id=contact.id, erased=True, merged_into_id=None),
    )
    logger.info(
        "contact %s erased: %d records named, %d events and %d files forgotten",
        contact.id,
        len(mentions),
        forgotten,
        len(erasing.files),
    )
    return ContactErasedOut(id=contact.id, erased_at=now)


def _personal_values(contact: Contact) -> tuple[list[str], list[str]]:
    """The contact's phones (every form: ``phone_forms``) and emails, own or claimed."""
    phones: set[str] = set()
    for phone in (contact.phone, contact.claimed_phone):
        if phone:
            phones.update(phone_forms(phone))
    emails = {e for e in (contact.email, contact.claimed_email) if e}
    return sorted(phones), sorted(emails)


async def forget_derived(
    session: AsyncSession,
    office_id: str,
    mentions: list[str],
    files: set[str],
    now: datetime,
) -> int:
    """What an erasure leaves behind once its rows are deleted: the outbox events, webhook
    and ``FIRE_WEBHOOK`` deliveries and scheduled jobs naming any of ``mentions`` are
    deleted, and ``ERASED_JOB`` is queued for ``files`` (and the vacuum). Also the
    retention job's path (``conversations.retention``). Returns the events forgotten."""
    forgotten = await events_mentioning(session, office_id, mentions)
    await forget_deliveries(session, office_id, forgotten, mentions)
    await forget_events(session, office_id, forgotten)
    await forget_subjects(session, office_id, mentions)
    await forget_jobs_mentioning(session, office_id, mentions)
    add_job(session, office_id, ERASED_JOB, {"files": sorted(files)}, now, now)
    await session.flush()
    return len(forgotten)


async def clean_up_erased(session: AsyncSession, job: ScheduledJob, ctx: WorkerContext) -> None:
    """The ``ERASED_JOB``: deletes the erased contact's files and folders (a file already
    gone is no error) and, on PostgreSQL, vacuums the tables the erasure deleted from."""
    storage = storage_from_settings(ctx.settings)
    files: list[Any] = list(job.payload.get("files") or [])
    for key in files:
        if isinstance(key, str) and key.endswith("/"):
            await storage.delete_under(key)
        elif isinstance(key, str):
            await storage.delete(key)
    await vacuum(ctx.engine, VACUUMED)
    # The keys name the erased records (a folder per conversation): the done job keeps none.
    job.payload = {"files": len(files)}
