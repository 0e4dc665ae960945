"""The official channel's template catalogue, one per integration.

A catalogue is replaced entry by entry (``PUT`` or a sync): entries are matched on name and
language, changed in place (a status change is recorded), new ones inserted, missing ones
deleted; the unique index on (integration, name, language) holds the rule.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.events.service import emit
from officehub.inboxes import service as inboxes
from officehub.kit.errors import Conflict, NotFound, ValidationFailed
from officehub.kit.repository import flush_or_conflict
from officehub.kit.timeutil import utcnow
from officehub.templates import events, repository
from officehub.templates.models import WhatsAppTemplate
from officehub.templates.schemas import TemplateIn, TemplateOut

if TYPE_CHECKING:
    from officehub.inboxes.models import Integration

_PLACEHOLDER = re.compile(r"\{\{\s*(\d+)\s*\}\}")
MEDIA_HEADERS = ("IMAGE", "VIDEO", "DOCUMENT")


def template_out(record: WhatsAppTemplate) -> TemplateOut:
    return TemplateOut(
        name=record.name,
        status=record.status,
        category=record.category,
        language=record.language,
        components=record.components,
        id=record.external_id or record.id,
    )


async def official_integration(
    session: AsyncSession, office_id: str, integration_id: str
) -> Integration:
    integration = await inboxes.get_integration(session, office_id, integration_id)
    if integration.type != inboxes.OFFICIAL:
        raise NotFound(
            "Integration not found",
            details=f"No WHATSAPP_OFFICIAL integration with id {integration_id}",
        )
    return integration


async def list_by_device(
    session: AsyncSession, office_id: str, device_id: str, status: str
) -> list[TemplateOut]:
    integration = await inboxes.find_by_device_id(session, office_id, device_id)
    if integration is None or integration.type != inboxes.OFFICIAL:
        raise NotFound(
            "Integration not found",
            details=f"No WHATSAPP_OFFICIAL integration with deviceId {device_id}",
        )
    rows = await repository.list_templates(session, office_id, integration.id, status)
    return [template_out(r) for r in rows]


async def list_all(session: AsyncSession, office_id: str, integration_id: str) -> list[TemplateOut]:
    return [
        template_out(r) for r in await repository.list_templates(session, office_id, integration_id)
    ]


async def replace_catalogue(
    session: AsyncSession, office_id: str, integration_id: str, entries: Sequence[TemplateIn]
) -> list[TemplateOut]:
    await official_integration(session, office_id, integration_id)
    seen: set[tuple[str, str]] = set()
    for index, entry in enumerate(entries):
        key = (entry.name, entry.language)
        if key in seen:
            raise ValidationFailed.field(
                f"body.data.{index}", f"template {entry.name!r} ({entry.language}) appears twice"
            )
        seen.add(key)
    await upsert_catalogue(session, office_id, integration_id, entries)
    return await list_all(session, office_id, integration_id)


async def upsert_catalogue(
    session: AsyncSession, office_id: str, integration_id: str, entries: Sequence[TemplateIn]
) -> int:
    """Makes the stored catalogue equal to ``entries``; answers how many statuses changed."""
    await inboxes.lock_integration(session, office_id, integration_id)
    stored = {
        (t.name, t.language): t
        for t in await repository.list_templates(session, office_id, integration_id)
    }
    now = utcnow()
    changed = 0
    for entry in entries:
        record = stored.pop((entry.name, entry.language), None)
        if record is None:
            await repository.add(
                session,
                WhatsAppTemplate(
                    office_id=office_id,
                    integration_id=integration_id,
                    name=entry.name,
                    language=entry.language,
                    status=entry.status,
                    category=entry.category,
                    components=entry.components,
                    external_id=entry.id,
                    status_changed_at=now,
                ),
            )
            continue
        if record.status != entry.status:
            record.status = entry.status
            record.status_changed_at = now
            changed += 1
        record.category = entry.category
        record.components = entry.components
        record.external_id = entry.id or record.external_id
    await repository.delete_templates(
        session, office_id, integration_id, [t.id for t in stored.values()]
    )
    await flush_or_conflict(
        session, Conflict("Template catalogue changed meanwhile", details="Try again")
    )
    return changed


# The platform's template statuses outside the catalogue's four: still in review, or not
# sendable. FLAGGED keeps the status (still sendable, quality low); REINSTATED is APPROVED.
PLATFORM_STATUS = {
    "IN_APPEAL": "PENDING",
    "PENDING_DELETION": "PAUSED",
    "DISABLED": "PAUSED",
    "DELETED": "PAUSED",
    "ARCHIVED": "PAUSED",
    "LIMIT_EXCEEDED": "PAUSED",
    "REINSTATED": "APPROVED",
}
UPDATE_FIELDS = ("status", "platformStatus", "rejectedReason", "qualityScore", "category")


@dataclass(frozen=True)
class PlatformUpdate:
    """What an account notification says of one template (None: not said)."""

    template_id: str | None
    name: str | None
    language: str | None
    platform_status: str | None = None
    rejected_reason: str | None = None
    quality_score: str | None = None
    category: str | None = None


def catalogue_status(platform_status: str, current: str) -> str:
    word = platform_status.upper()
    if word in ("APPROVED", "PENDING", "REJECTED", "PAUSED"):
        return word
    return PLATFORM_STATUS.get(word, current)


async def apply_platform_update(
    session: AsyncSession, office_id: str, integration_id: str, update: PlatformUpdate
) -> dict[str, Any] | None:
    """Applies an account notification to the stored catalogue entry (found by the
    platform's template id, else by name and language) and emits ``template.updated``
    naming what changed. None when the catalogue has no such entry (the next sync brings
    it) or nothing changed."""
    record = None
    if update.template_id:
        record = await repository.find_by_platform_id(
            session, office_id, integration_id, update.template_id
        )
    if record is None and update.name and update.language:
        found = await repository.find_template(
            session, office_id, integration_id, update.name, update.language
        )
        record = found[0] if found else None
    if record is None:
        return None
    before = _platform_fields(record)
    if update.platform_status is not None:
        status = catalogue_status(update.platform_status, record.status)
        if status != record.status:
            record.status = status
            record.status_changed_at = utcnow()
        record.platform_status = update.platform_status[:32]
        record.rejected_reason = (
            (update.rejected_reason or None) if update.platform_status == "REJECTED" else None
        )
    if update.quality_score is not None:
        record.quality_score = update.quality_score[:16]
    if update.category is not None:
        record.category = update.category[:64]
    after = _platform_fields(record)
    changes = [key for key in UPDATE_FIELDS if before[key] != after[key]]
    if not changes:
        return None
    record.updated_at = utcnow()
    await session.flush()
    data = events.TemplateUpdatedPayload.model_validate(
        {
            **template_out(record).model_dump(by_alias=True),
            **after,
            "integrationId": integration_id,
            "changes": changes,
        }
    )
    await emit(session, office_id, events.UPDATED, data, integration_id=integration_id)
    return data.model_dump(mode="json", by_alias=True)


def _platform_fields(record: WhatsAppTemplate) -> dict[str, Any]:
    return {
        "status": record.status,
        "platformStatus": record.platform_status,
        "rejectedReason": record.rejected_reason,
        "qualityScore": record.quality_score,
        "category": record.category,
    }


def placeholders(components: Sequence[dict[str, Any]], kind: str) -> int:
    """The highest ``{{n}}`` in the text of the component of ``kind`` (BODY, HEADER)."""
    for component in components:
        if str(component.get("type", "")).upper() == kind:
            numbers = [int(n) for n in _PLACEHOLDER.findall(str(component.get("text", "")))]
            return max(numbers, default=0)
    return 0


def header_format(components: Sequence[dict[str, Any]]) -> str | None:
    for component in components:
        if str(component.get("type", "")).upper() == "HEADER":
            return str(component.get("format", "TEXT")).upper()
    return None


async def approved_template(
    session: AsyncSession,
    office_id: str,
    integration_id: str,
    name: str,
    language: str | None,
) -> WhatsAppTemplate:
    """The APPROVED template of that integration, name and language (any language when
    none is given and only one is approved); else 409 ``TEMPLATE_NOT_APPROVED``."""
    found = [
        t
        for t in await repository.find_template(session, office_id, integration_id, name, language)
        if t.status == "APPROVED"
    ]
    if len(found) != 1:
        raise Conflict(
            "The template is not approved",
            details=(
                f"Template {name!r}"
                + (f" ({language})" if language else "")
                + f" is not an APPROVED template of integration {integration_id}"
                + ("; send its language" if len(found) > 1 else "")
            ),
            code="TEMPLATE_NOT_APPROVED",
        )
    return found[0]


async def has_approved_template(
    session: AsyncSession, office_id: str, integration_id: str | None, name: str
) -> bool:
    """Whether a rule may name the template: an APPROVED one of the integration (of any of
    the office's official integrations when the rule applies to all)."""
    return await repository.approved_exists(session, office_id, integration_id, name)
