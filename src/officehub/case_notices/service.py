"""Case notices: a new movement worth telling becomes a notice to the case's client, which
the lawyer approves (or the office's settings send at once), sent as text inside the
client's 24-hour window and as the office's utility template outside it, never at night
or on a Sunday (quiet hours), never to an unverified contact."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from sqlalchemy import ColumnElement
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.case_notices import events, repository, texts
from officehub.case_notices.models import CaseNotice, CaseNoticeSettings
from officehub.case_notices.quiet import Quiet, next_allowed, parse_clock
from officehub.case_notices.schemas import (
    CaseNoticeOut,
    CaseNoticeSettingsIn,
    CaseNoticeSettingsOut,
    CaseNoticeUpdate,
    CategoryPolicies,
    QuietHours,
)
from officehub.cases import service as cases
from officehub.cases.explain import explain
from officehub.cases.hooks import MovementsAnnounced
from officehub.contacts import service as contacts
from officehub.conversations import service as conversations
from officehub.events.service import emit
from officehub.inboxes import service as inboxes
from officehub.kit.errors import Conflict, NotFound, ServiceError, ValidationFailed
from officehub.kit.pagination import PageParams
from officehub.kit.repository import flush_or_conflict
from officehub.kit.timeutil import utcnow
from officehub.messages import outbound as outbound_messages
from officehub.messages import statuses as message_statuses
from officehub.messages.schemas import FallbackTemplate, OutboundIn
from officehub.offices.settings import DEFAULT_TIME_ZONE, office_zone_name
from officehub.templates import service as templates

PENDING, APPROVED, SENT, DISCARDED, FAILED = "PENDING", "APPROVED", "SENT", "DISCARDED", "FAILED"
NOTICE_CLOSED = "NOTICE_CLOSED"
NOTICE_NOT_SENT = "NOTICE_NOT_SENT"
CONTACT_NOT_VERIFIED = "CONTACT_NOT_VERIFIED"
NO_CONVERSATION = "NO_CONVERSATION"
SETTINGS_CHANGED = "SETTINGS_CHANGED"
OWN_REFUSALS = (NO_CONVERSATION, CONTACT_NOT_VERIFIED, NOTICE_NOT_SENT)
TEMPLATE_VARIABLES = 4
"""First name, case number, explanation, date: what the office's template is filled with."""


@dataclass(frozen=True)
class Rules:
    """The office's settings as the service uses them (the defaults where none are saved)."""

    policies: dict[str, str]
    template_name: str | None
    template_language: str | None
    quiet: Quiet


def _defaults(zone_name: str) -> CaseNoticeSettingsIn:
    """No settings saved: the defaults, in the office's time zone."""
    return CaseNoticeSettingsIn(time_zone=zone_name)


def _zone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ValidationFailed.field("body.timeZone", "not an IANA time zone") from exc


def _rules(body: CaseNoticeSettingsIn) -> Rules:
    quiet = body.quiet_hours
    return Rules(
        policies=body.categories.model_dump(),
        template_name=body.template_name,
        template_language=body.template_language,
        quiet=Quiet(
            quiet.enabled,
            parse_clock(quiet.from_),
            parse_clock(quiet.until),
            quiet.sundays,
            _zone(body.time_zone or DEFAULT_TIME_ZONE),
        ),
    )


def _settings_in(row: CaseNoticeSettings | None, zone_name: str) -> CaseNoticeSettingsIn:
    if row is None:
        return _defaults(zone_name)
    return CaseNoticeSettingsIn(
        categories=CategoryPolicies.model_validate(row.categories),
        template_name=row.template_name,
        template_language=row.template_language,
        quiet_hours=QuietHours(
            enabled=row.quiet_hours,
            **{"from": row.quiet_from},
            until=row.quiet_until,
            sundays=row.quiet_sundays,
        ),
        time_zone=row.time_zone,
    )


async def _stored(session: AsyncSession, office_id: str) -> CaseNoticeSettingsIn:
    row = await repository.get_settings(session, office_id)
    return _settings_in(row, "" if row else await office_zone_name(session, office_id))


async def rules_of(session: AsyncSession, office_id: str) -> Rules:
    return _rules(await _stored(session, office_id))


def _settings_out(row: CaseNoticeSettings | None, zone_name: str) -> CaseNoticeSettingsOut:
    body = _settings_in(row, zone_name)
    return CaseNoticeSettingsOut(
        categories=body.categories,
        template_name=body.template_name,
        template_language=body.template_language,
        quiet_hours=body.quiet_hours,
        time_zone=body.time_zone or zone_name,
        updated_at=None if row is None else row.updated_at,
    )


async def read_settings(session: AsyncSession, office_id: str) -> CaseNoticeSettingsOut:
    row = await repository.get_settings(session, office_id)
    return _settings_out(row, await office_zone_name(session, office_id))


async def put_settings(
    session: AsyncSession, office_id: str, body: CaseNoticeSettingsIn
) -> CaseNoticeSettingsOut:
    # Not sent: the office's time zone (GET|PATCH /office) as it is now.
    zone_name = body.time_zone or await office_zone_name(session, office_id)
    _zone(zone_name)
    values: dict[str, Any] = {
        "categories": body.categories.model_dump(),
        "template_name": body.template_name,
        "template_language": body.template_language,
        "quiet_hours": body.quiet_hours.enabled,
        "quiet_from": body.quiet_hours.from_,
        "quiet_until": body.quiet_hours.until,
        "quiet_sundays": body.quiet_hours.sundays,
        "time_zone": zone_name,
    }
    row = await repository.lock_settings(session, office_id)
    if row is None:
        row = CaseNoticeSettings(office_id=office_id, **values)
        await repository.add_settings(session, row)
        await flush_or_conflict(
            session,
            Conflict(
                "Settings changed meanwhile",
                details="Another request saved the case notice settings at the same time",
                code=SETTINGS_CHANGED,
            ),
        )
    else:
        for key, value in values.items():
            setattr(row, key, value)
        await session.flush()
    return _settings_out(row, zone_name)


def local_date(at: datetime, zone: ZoneInfo) -> str:
    return at.astimezone(zone).strftime("%d/%m/%Y")


def first_name(name: str | None) -> str | None:
    words = (name or "").split()
    return words[0] if words else None


def compose(first: str | None, number: str, date: str, explanation: str) -> str:
    greeting = texts.GREETING.format(first_name=first) if first else texts.GREETING_NO_NAME
    text = texts.NOTICE.format(greeting=greeting, number=number, date=date, explanation=explanation)
    return text[:1024]


async def notice_out(
    session: AsyncSession, notice: CaseNotice, description: str | None = None
) -> CaseNoticeOut:
    """``description``: the movement's name when the caller has it (a list reads them at
    once), else read here."""
    status = None
    if notice.message_id is not None:
        status = await message_statuses.delivery_status(
            session, notice.office_id, notice.message_id
        )
    if description is None:
        found = await cases.movements_by_ids(session, notice.office_id, (notice.movement_id,))
        description = found[0].description if found else ""
    return CaseNoticeOut(
        movement_description=description,
        id=notice.id,
        case_id=notice.case_id,
        movement_id=notice.movement_id,
        person_id=notice.person_id,
        conversation_id=notice.conversation_id,
        case_number=notice.case_number,
        category=notice.category,
        explanation=notice.explanation,
        text=notice.text,
        status=notice.status,
        send_after=notice.send_after if notice.status == APPROVED else None,
        sent_as=notice.sent_as,
        message_id=notice.message_id,
        message_status=status,
        error=notice.error,
        occurred_at=notice.occurred_at,
        approved_at=notice.approved_at,
        sent_at=notice.sent_at,
        created_at=notice.created_at,
        updated_at=notice.updated_at,
    )


async def _emit(session: AsyncSession, notice: CaseNotice, event: Any) -> None:
    integration_id = None
    if notice.conversation_id is not None:
        conversation = await conversations.get_conversation(
            session, notice.office_id, notice.conversation_id
        )
        integration_id = conversation.integration_id
    await emit(
        session,
        notice.office_id,
        event,
        await notice_out(session, notice),
        conversation_id=notice.conversation_id,
        integration_id=integration_id,
    )


async def create_for_movements(event: MovementsAnnounced) -> None:
    """A notice per new movement worth telling whose category the office does not set to
    NEVER: PENDING (ASK), or APPROVED and due at the next allowed time (SEND)."""
    session, office_id = event.session, event.office_id
    found = await cases.movements_by_ids(session, office_id, event.movement_ids)
    if not found:
        return
    rules = await rules_of(session, office_id)
    known = await repository.notified_movements(session, office_id, [m.id for m in found])
    names: dict[str, str | None] = {}
    for movement in found:
        explained = explain(movement.code, movement.description, movement.complements)
        if explained is None or not explained.tell or movement.id in known:
            continue
        policy = rules.policies.get(explained.category, "ASK")
        if policy == "NEVER":
            continue
        if movement.person_id not in names:
            contact = await contacts.get_contact(session, office_id, movement.person_id)
            names[movement.person_id] = first_name(contact.name)
        at_once = policy == "SEND"
        notice = CaseNotice(
            office_id=office_id,
            case_id=event.case_id,
            movement_id=movement.id,
            person_id=movement.person_id,
            conversation_id=event.conversation_id,
            case_number=movement.case_number,
            occurred_at=movement.occurred_at,
            category=explained.category,
            explanation=explained.text,
            text=compose(
                names[movement.person_id],
                movement.case_number,
                local_date(movement.occurred_at, rules.quiet.zone),
                explained.text,
            ),
            status=APPROVED if at_once else PENDING,
            send_after=next_allowed(event.now, rules.quiet) if at_once else None,
            approved_at=event.now if at_once else None,
        )
        await repository.add(session, notice)
        await session.flush()
        await _emit(session, notice, events.CREATED)


async def get_notice(
    session: AsyncSession, office_id: str, ident: str, *, for_change: bool = False
) -> CaseNotice:
    notice = await repository.get_notice(session, office_id, ident, for_change=for_change)
    if notice is None:
        raise NotFound.of("Case notice", ident)
    return notice


async def read_notice(session: AsyncSession, office_id: str, ident: str) -> CaseNoticeOut:
    return await notice_out(session, await get_notice(session, office_id, ident))


async def list_notices(
    session: AsyncSession,
    office_id: str,
    params: PageParams,
    *,
    status: str | None = None,
    case_id: str | None = None,
    visible: ColumnElement[bool] | None = None,
) -> tuple[list[CaseNoticeOut], int]:
    """``visible``: the caller's visibility clause (``case_notices.visibility``)."""
    if case_id is not None:
        await cases.get_case(session, office_id, case_id)
    rows, total = await repository.list_notices(
        session, office_id, params, status=status, case_id=case_id, visible=visible
    )
    moves = await cases.movements_by_ids(session, office_id, tuple(n.movement_id for n in rows))
    names = {m.id: m.description for m in moves}
    return [await notice_out(session, n, names.get(n.movement_id)) for n in rows], total


def _closed(notice: CaseNotice, action: str) -> Conflict:
    return Conflict(
        "Case notice not open",
        details=f"The notice is {notice.status}: it cannot be {action}",
        code=NOTICE_CLOSED,
    )


async def update_notice(
    session: AsyncSession, office_id: str, ident: str, body: CaseNoticeUpdate
) -> CaseNoticeOut:
    notice = await get_notice(session, office_id, ident, for_change=True)
    if notice.status not in (PENDING, APPROVED, FAILED):
        raise _closed(notice, "edited")
    if body.text is None and body.explanation is None:
        raise ValidationFailed.field("body.text", "send text or explanation")
    if body.text is not None:
        notice.text = body.text
    if body.explanation is not None:
        notice.explanation = body.explanation
    await session.flush()
    return await notice_out(session, notice)


async def discard_notice(session: AsyncSession, office_id: str, ident: str) -> CaseNoticeOut:
    notice = await get_notice(session, office_id, ident, for_change=True)
    if notice.status not in (PENDING, APPROVED, FAILED):
        raise _closed(notice, "discarded")
    notice.status = DISCARDED
    notice.send_after = None
    await session.flush()
    return await notice_out(session, notice)


async def approve_notice(
    session: AsyncSession, office_id: str, ident: str, now: datetime | None = None
) -> CaseNoticeOut:
    """Approved: sent now, or at the end of the quiet hours. A send that cannot be made
    (no conversation, an unverified contact, the window closed with no usable template)
    is a 409 and changes nothing."""
    now = now or utcnow()
    notice = await get_notice(session, office_id, ident, for_change=True)
    if notice.status not in (PENDING, FAILED):
        raise _closed(notice, "approved")
    rules = await rules_of(session, office_id)
    notice.status, notice.approved_at, notice.error = APPROVED, now, None
    notice.send_after = next_allowed(now, rules.quiet)
    if notice.send_after <= now:
        try:
            await deliver(session, notice, rules, now)
        except ServiceError as exc:
            if exc.code in OWN_REFUSALS:
                raise
            raise Conflict(
                "Case notice not sent",
                details=f"{exc.code}: {exc.details or exc.message}",
                code=NOTICE_NOT_SENT,
            ) from exc
    await session.flush()
    return await notice_out(session, notice)


async def deliver(session: AsyncSession, notice: CaseNotice, rules: Rules, now: datetime) -> None:
    """Sends the notice through the conversation's channel (``outbound_messages.send``): its text,
    with the office's template as the fallback outside the 24-hour window."""
    office_id = notice.office_id
    if notice.conversation_id is None:
        raise Conflict(
            "No conversation",
            details="The client has no conversation to send the notice to",
            code=NO_CONVERSATION,
        )
    if not await contacts.is_verified(session, office_id, notice.person_id):
        raise Conflict(
            "Contact not verified",
            details="The contact is not verified: a notice about a case is not sent to it",
            code=CONTACT_NOT_VERIFIED,
        )
    fallback = await _fallback(session, notice, rules)
    sent = await outbound_messages.send(
        session,
        office_id,
        notice.conversation_id,
        OutboundIn(text=notice.text, fallback_template=fallback),
    )
    notice.status, notice.sent_at, notice.send_after = SENT, now, None
    notice.sent_as = "TEMPLATE" if sent.type == "TEMPLATE" else "TEXT"
    notice.message_id = sent.id
    await session.flush()
    await _emit(session, notice, events.SENT)


async def _fallback(
    session: AsyncSession, notice: CaseNotice, rules: Rules
) -> FallbackTemplate | None:
    if rules.template_name is None or notice.conversation_id is None:
        return None
    conversation = await conversations.get_conversation(
        session, notice.office_id, notice.conversation_id
    )
    integration = await inboxes.get_integration(
        session, notice.office_id, conversation.integration_id
    )
    if integration.type != inboxes.OFFICIAL:
        return None
    template = await templates.approved_template(
        session,
        notice.office_id,
        integration.id,
        rules.template_name,
        rules.template_language,
    )
    wanted = templates.placeholders(template.components, "BODY")
    if wanted > TEMPLATE_VARIABLES:
        raise Conflict(
            "Template does not fit",
            details=f"The template {rules.template_name} has {wanted} placeholders; a case "
            f"notice fills {TEMPLATE_VARIABLES}",
            code=NOTICE_NOT_SENT,
        )
    contact = await contacts.get_contact(session, notice.office_id, notice.person_id)
    values = [
        first_name(contact.name) or texts.NO_NAME,
        notice.case_number,
        notice.explanation,
        local_date(notice.occurred_at, rules.quiet.zone),
    ]
    return FallbackTemplate(
        name=rules.template_name,
        language=template.language,
        variables=[v[:1024] for v in values[:wanted]] or None,
    )


async def follow_merge(session: AsyncSession, office_id: str, kept_id: str, other_id: str) -> None:
    await repository.follow_merge(session, office_id, kept_id, other_id)
