from __future__ import annotations

from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.inboxes import repository
from officehub.inboxes.business_hours import Hours, minutes
from officehub.inboxes.hooks import (
    AwayMessageChecking,
    InboxDeleting,
    InboxRoutingChanged,
    IntegrationDeleting,
    away_message_checking,
    inbox_deleting,
    inbox_routing_changed,
    integration_deleting,
)
from officehub.inboxes.models import Inbox, InboxBusinessHours, Integration
from officehub.inboxes.schemas import (
    BridgeSettingsIn,
    BusinessHoursIn,
    InboxCreate,
    InboxUpdate,
    IntegrationCreate,
    IntegrationUpdate,
    OpenRange,
    WebchatSettingsIn,
    WhatsAppSettingsIn,
)
from officehub.kit.errors import Conflict, NotFound, ValidationFailed
from officehub.kit.outbound import refuse_private_url
from officehub.kit.pagination import PageParams
from officehub.kit.repository import flush_or_conflict, lock_office
from officehub.kit.schemas import BodyModel
from officehub.kit.timeutil import utcnow

OFFICIAL = "WHATSAPP_OFFICIAL"


async def get_inbox(
    session: AsyncSession, office_id: str, ident: str, *, for_change: bool = False
) -> Inbox:
    record = await repository.get_inbox(session, office_id, ident, for_change=for_change)
    if record is None:
        raise NotFound.of("Inbox", ident)
    return record


async def get_integration(
    session: AsyncSession, office_id: str, ident: str, *, for_change: bool = False
) -> Integration:
    record = await repository.get_integration(session, office_id, ident, for_change=for_change)
    if record is None:
        raise NotFound.of("Integration", ident)
    return record


async def list_inboxes(
    session: AsyncSession, office_id: str, params: PageParams
) -> tuple[list[Inbox], int]:
    return await repository.list_inboxes(session, office_id, params)


async def create_inbox(session: AsyncSession, office_id: str, body: InboxCreate) -> Inbox:
    inbox = Inbox(office_id=office_id, name=body.name)
    if body.assignment is not None:
        inbox.assignment_policy = body.assignment.policy
        inbox.assign_by_legal_area = body.assignment.by_legal_area
    session.add(inbox)
    await session.flush()
    return inbox


async def update_inbox(
    session: AsyncSession, office_id: str, ident: str, body: InboxUpdate
) -> Inbox:
    body.refuse_sent_nulls()
    routing = body.assignment is not None
    if routing:
        # The office's routing lock before the inbox's row (the order routing takes them).
        await get_inbox(session, office_id, ident)
        await lock_office(session, office_id)
    inbox = await get_inbox(session, office_id, ident, for_change=True)
    if body.name is not None:
        inbox.name = body.name
    if body.assignment is not None:
        inbox.assignment_policy = body.assignment.policy
        inbox.assign_by_legal_area = body.assignment.by_legal_area
    await session.flush()
    if routing and inbox.assignment_policy != "MANUAL":
        await inbox_routing_changed.fire(InboxRoutingChanged(session, office_id, inbox.id))
    return inbox


async def set_round_robin_cursor(
    session: AsyncSession, office_id: str, ident: str, user_id: str
) -> None:
    """Routing's round robin goes on after ``user_id`` next time."""
    await repository.set_round_robin_cursor(session, office_id, ident, user_id)


async def delete_inbox(session: AsyncSession, office_id: str, ident: str) -> Inbox:
    """Refused (409) while conversations live in the inbox or its funnels hold cards; else
    its channels, tags, fast messages, empty funnels and user memberships go with it. The
    checks are the conversations and crm domains' subscribers to ``inbox_deleting``."""
    inbox = await get_inbox(session, office_id, ident, for_change=True)
    await inbox_deleting.fire(InboxDeleting(session, office_id, ident))
    await repository.delete(session, inbox)
    return inbox


async def list_integrations(
    session: AsyncSession,
    office_id: str,
    params: PageParams,
    *,
    inbox_id: str | None = None,
    type: str | None = None,
) -> tuple[list[Integration], int]:
    if inbox_id is not None:
        await get_inbox(session, office_id, inbox_id)
    return await repository.list_integrations(
        session, office_id, params, inbox_id=inbox_id, type=type
    )


async def _check_device_id(
    session: AsyncSession, office_id: str, device_id: str, own_id: str | None = None
) -> None:
    other = await repository.get_by_device_id(session, office_id, device_id)
    if other is not None and other.id != own_id:
        raise _device_taken(f"Integration {other.id} already has the deviceId {device_id}")


async def find_by_device_id(
    session: AsyncSession, office_id: str, device_id: str
) -> Integration | None:
    return await repository.get_by_device_id(session, office_id, device_id)


def _device_taken(details: str) -> Conflict:
    return Conflict("Device id already used", details=details, code="DEVICE_ID_TAKEN")


async def create_integration(
    session: AsyncSession, office_id: str, body: IntegrationCreate, *, allow_private: bool = False
) -> Integration:
    if body.type == OFFICIAL and body.device_id is None:
        raise ValidationFailed.field("body.deviceId", "required for a WHATSAPP_OFFICIAL channel")
    await get_inbox(session, office_id, body.inbox_id)
    if body.device_id is not None:
        await _check_device_id(session, office_id, body.device_id)
    _check_settings_type(body.type, body.whatsapp)
    _check_channel_settings(body.type, body.webchat, body.bridge, allow_private)
    await _check_verification(session, office_id, body.webchat)
    integration = Integration(
        office_id=office_id,
        inbox_id=body.inbox_id,
        type=body.type,
        name=body.name,
        device_id=body.device_id,
        whatsapp=_stored_settings(body.whatsapp),
        webchat=_stored_settings(body.webchat),
        bridge=_stored_settings(body.bridge),
    )
    session.add(integration)
    await flush_or_conflict(
        session, _device_taken(f"Another channel has the deviceId {body.device_id}")
    )
    return integration


async def update_integration(
    session: AsyncSession,
    office_id: str,
    ident: str,
    body: IntegrationUpdate,
    *,
    allow_private: bool = False,
) -> Integration:
    integration = await get_integration(session, office_id, ident, for_change=True)
    sent = body.model_fields_set
    if body.name is not None:
        integration.name = body.name
    if "device_id" in sent:
        if body.device_id is None and integration.type == OFFICIAL:
            raise ValidationFailed.field(
                "body.deviceId", "a WHATSAPP_OFFICIAL channel must keep a device id"
            )
        if body.device_id is not None:
            await _check_device_id(session, office_id, body.device_id, integration.id)
        integration.device_id = body.device_id
    if "whatsapp" in sent:
        _check_settings_type(integration.type, body.whatsapp)
        integration.whatsapp = _stored_settings(body.whatsapp)
    if "webchat" in sent:
        _check_channel_settings(integration.type, body.webchat, None, allow_private)
        await _check_verification(session, office_id, body.webchat)
        integration.webchat = _stored_settings(body.webchat)
    if "bridge" in sent:
        _check_channel_settings(integration.type, None, body.bridge, allow_private)
        integration.bridge = _stored_settings(body.bridge)
    await flush_or_conflict(
        session, _device_taken(f"Another channel has the deviceId {integration.device_id}")
    )
    return integration


def _check_settings_type(type: str, settings: WhatsAppSettingsIn | None) -> None:
    if settings is not None and type != OFFICIAL:
        raise ValidationFailed.field("body.whatsapp", "only a WHATSAPP_OFFICIAL channel has it")


BRIDGED = ("WHATSAPP", "INSTAGRAM")


def _check_channel_settings(
    type: str,
    webchat: WebchatSettingsIn | None,
    bridge: BridgeSettingsIn | None,
    allow_private: bool,
) -> None:
    if webchat is not None and type != "WEBCHAT":
        raise ValidationFailed.field("body.webchat", "only a WEBCHAT channel has it")
    if bridge is not None:
        if type not in BRIDGED:
            raise ValidationFailed.field(
                "body.bridge", "only a WHATSAPP or INSTAGRAM channel has it"
            )
        refuse_private_url(
            bridge.bridge_url,
            allow_private=allow_private,
            field="body.bridge.bridgeUrl",
            code="BRIDGE_URL_NOT_ALLOWED",
        )


async def _check_verification(
    session: AsyncSession, office_id: str, webchat: WebchatSettingsIn | None
) -> None:
    """The channel a web chat sends its codes through is one of the office's official ones."""
    verification = webchat.verification if webchat is not None else None
    if verification is None or verification.integration_id is None:
        return
    found = await repository.get_integration(session, office_id, verification.integration_id)
    if found is None or found.type != OFFICIAL:
        raise ValidationFailed.field(
            "body.webchat.verification.integrationId",
            f"no WHATSAPP_OFFICIAL channel of this office has the id {verification.integration_id}",
        )


def _stored_settings(settings: BodyModel | None) -> dict[str, Any] | None:
    return None if settings is None else settings.model_dump(by_alias=True)


async def get_official_by_id(session: AsyncSession, ident: str) -> Integration | None:
    """An official integration with its settings, by id alone: for the platform's
    webhook, which carries no API key (the integration id names the office)."""
    record = await repository.get_integration_any_office(session, ident)
    if record is None or record.type != OFFICIAL or not record.whatsapp:
        return None
    return record


async def get_typed_by_id(
    session: AsyncSession, ident: str, types: tuple[str, ...]
) -> Integration | None:
    """An integration of one of ``types`` by id alone, for a key-less channel route (the
    integration id names the office; the caller authenticates the request)."""
    record = await repository.get_integration_any_office(session, ident)
    if record is None or record.type not in types:
        return None
    return record


async def lock_integration(session: AsyncSession, office_id: str, ident: str) -> None:
    """Write-locks the integration's row to the end of the transaction."""
    await repository.lock_integration(session, office_id, ident)


async def delete_integration(session: AsyncSession, office_id: str, ident: str) -> Integration:
    """Refused (409) while conversations run on the channel (the conversations domain's
    subscriber to ``integration_deleting``)."""
    integration = await get_integration(session, office_id, ident, for_change=True)
    await integration_deleting.fire(IntegrationDeleting(session, office_id, ident))
    await repository.delete(session, integration)
    return integration


# Business hours (issue 32).


async def get_business_hours(
    session: AsyncSession, office_id: str, inbox_id: str
) -> InboxBusinessHours | None:
    """None: the inbox has none (always open)."""
    await get_inbox(session, office_id, inbox_id)
    return await repository.get_business_hours(session, office_id, inbox_id)


def _check_week(week: list[OpenRange]) -> None:
    """Each range opens before it closes; ranges of one day do not overlap."""
    for index, item in enumerate(week):
        if minutes(item.open) >= minutes(item.close):
            raise ValidationFailed.field(f"body.week[{index}].close", "must be after open")
    for index, item in enumerate(week):
        for earlier in week[:index]:
            if earlier.day == item.day and (
                minutes(item.open) < minutes(earlier.close)
                and minutes(earlier.open) < minutes(item.close)
            ):
                raise ValidationFailed.field(
                    f"body.week[{index}].open", "overlaps another range of the same day"
                )


async def put_business_hours(
    session: AsyncSession, office_id: str, inbox_id: str, body: BusinessHoursIn
) -> InboxBusinessHours:
    _check_week(body.week)
    await get_inbox(session, office_id, inbox_id, for_change=True)
    record = await repository.get_business_hours(session, office_id, inbox_id)
    if record is None:
        record = InboxBusinessHours(office_id=office_id, inbox_id=inbox_id)
        session.add(record)
    record.timezone = body.timezone
    record.week = [r.model_dump(mode="json") for r in body.week]
    record.closed_dates = [d.isoformat() for d in body.closed_dates]
    record.open_dates = [d.isoformat() for d in body.open_dates]
    away = body.away_message
    if away is not None and away.text is None:
        await away_message_checking.fire(
            AwayMessageChecking(
                session,
                office_id,
                inbox_id,
                away.fast_message_id,
                away.template_name,
                away.language,
            )
        )
    record.away_message = away.model_dump(mode="json", exclude_none=True) if away else None
    record.updated_at = utcnow()
    await session.flush()
    return record


async def business_hours_of(
    session: AsyncSession, office_id: str, inbox_id: str
) -> tuple[Hours, dict[str, Any] | None] | None:
    """For the away message and rules: the inbox's hours and away message, None when it
    has none (always open)."""
    record = await repository.get_business_hours(session, office_id, inbox_id)
    if record is None:
        return None
    return Hours.of(record.settings()), record.away_message
