"""The rules of webhooks: subscriptions, secrets, the delivery log and manual retries."""

from __future__ import annotations

import base64
import secrets as secrets_module
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from officehub.events.service import emit
from officehub.kit.db import database_now
from officehub.kit.errors import Conflict, NotFound, ValidationFailed
from officehub.kit.outbound import HeaderRefused, check_headers, refuse_private_url
from officehub.kit.pagination import PageParams
from officehub.kit.timeutil import utcnow
from officehub.webhooks import events, repository
from officehub.webhooks.models import PENDING, Webhook, WebhookDelivery
from officehub.webhooks.schemas import WebhookCreate, WebhookStats, WebhookUpdate

URL_NOT_ALLOWED = "WEBHOOK_URL_NOT_ALLOWED"

SECRET_GRACE = timedelta(hours=24)
"""How long deliveries also carry a signature under the previous secret after a rotation."""


def new_secret() -> str:
    """``whsec_`` and 32 random bytes in standard base64: the Standard Webhooks format, which
    its libraries in every language decode to the same key (URL-safe base64, used before,
    has ``-`` and ``_``, which some of them skip and others refuse)."""
    return "whsec_" + base64.b64encode(secrets_module.token_bytes(32)).decode()


def check_url(url: str, *, allow_private: bool) -> None:
    """Refuses a literal blocked address at once; names are checked when sent."""
    refuse_private_url(url, allow_private=allow_private, field="body.url", code=URL_NOT_ALLOWED)


def check_custom_headers(headers: dict[str, str] | None) -> None:
    """400 naming the header (``body.headers.<Name>``) that could never be sent."""
    if not headers:
        return
    try:
        check_headers(headers)
    except HeaderRefused as exc:
        path = "body.headers" if exc.name is None else f"body.headers.{exc.name}"
        raise ValidationFailed.field(path, exc.reason) from exc


async def get_webhook(
    session: AsyncSession, office_id: str, ident: str, *, for_change: bool = False
) -> Webhook:
    record = await repository.get_webhook(session, office_id, ident, for_change=for_change)
    if record is None:
        raise NotFound.of("Webhook", ident)
    return record


async def create_webhook(
    session: AsyncSession, office_id: str, body: WebhookCreate, *, allow_private: bool
) -> Webhook:
    check_url(body.url, allow_private=allow_private)
    check_custom_headers(body.headers)
    record = Webhook(
        office_id=office_id,
        name=body.name,
        description=body.description,
        url=body.url,
        secret=body.secret or new_secret(),
        events=body.events,
        is_active=body.is_active,
        headers=body.headers,
        rate_limit_per_second=body.rate_limit_per_second,
    )
    session.add(record)
    await session.flush()
    return record


async def update_webhook(
    session: AsyncSession,
    office_id: str,
    ident: str,
    body: WebhookUpdate,
    *,
    allow_private: bool,
    retention_days: int = 90,
) -> Webhook:
    """``retention_days``: how long deliveries queued by a resume are kept (the setting
    ``delivery_retention_days``)."""
    record = await get_webhook(session, office_id, ident, for_change=True)
    sent = body.model_fields_set
    body.refuse_sent_nulls()
    if body.url is not None:
        check_url(body.url, allow_private=allow_private)
        record.url = body.url
    if body.name is not None:
        record.name = body.name
    if "description" in sent:
        record.description = body.description
    if body.events is not None:
        record.events = body.events
    if "headers" in sent:
        check_custom_headers(body.headers)
        record.headers = body.headers
    if "rate_limit_per_second" in sent:
        record.rate_limit_per_second = body.rate_limit_per_second
    if body.secret is not None and body.secret != record.secret:
        record.previous_secret = record.secret
        record.secret_rotated_at = utcnow()
        record.secret = body.secret
    if body.is_active is not None:
        if body.is_active and not record.is_active:
            if record.failing_since is not None:
                await _resume(session, record, record.failing_since, retention_days)
            record.disabled_reason = None
            record.failing_since = None
        record.is_active = body.is_active
    record.updated_at = utcnow()
    await session.flush()
    return record


_RESUME_BATCH = 1_000


async def _resume(
    session: AsyncSession, record: Webhook, since: datetime, retention_days: int
) -> int:
    """A webhook paused after its retry window failed, set active again, resumes from the
    oldest event it did not receive: its deliveries that failed since it began failing go
    back to the queue, and the events recorded while it was paused (still in the outbox)
    get their deliveries; each due at its event's time, so they go out oldest first.
    Returns how many were queued."""
    from officehub.webhooks.delivery import RETRY_WINDOW, delivery_rows

    now = utcnow()
    # A delivery whose retries ended in the streak may have been made up to the retry
    # window before its first failure.
    queued = await repository.mark_failed_for_recovery(
        session, record.office_id, record.id, since - RETRY_WINDOW, None
    )
    while missed := await repository.events_missed_since(session, record, since, _RESUME_BATCH):
        await repository.add_deliveries(session, delivery_rows(missed, record, now, retention_days))
        queued += len(missed)
        if len(missed) < _RESUME_BATCH:
            break
    return queued


async def delete_webhook(session: AsyncSession, office_id: str, ident: str) -> Webhook:
    record = await get_webhook(session, office_id, ident, for_change=True)
    await session.delete(record)
    await session.flush()
    return record


async def list_webhooks(
    session: AsyncSession, office_id: str, params: PageParams
) -> tuple[list[tuple[Webhook, WebhookStats]], int]:
    records, total = await repository.list_webhooks(session, office_id, params)
    counts = await repository.delivery_counts(session, office_id, [r.id for r in records])
    items = []
    for record in records:
        all_, ok, failed = counts.get(record.id, (0, 0, 0))
        finished = ok + failed
        rate = round(ok / finished, 4) if finished else 0.0
        stats = WebhookStats(
            total_deliveries=all_, success_count=ok, failed_count=failed, success_rate=rate
        )
        items.append((record, stats))
    return items, total


async def send_test(session: AsyncSession, office_id: str, ident: str) -> str:
    """Records a ``webhook.test`` event meant for this webhook alone; returns its id."""
    record = await get_webhook(session, office_id, ident)
    event = await emit(
        session,
        office_id,
        events.TEST,
        events.WebhookTestPayload(
            webhook_id=record.id, message="This is a test delivery from officehub"
        ),
        target_webhook_id=record.id,
    )
    return event.id


async def list_deliveries(
    session: AsyncSession,
    office_id: str,
    webhook_id: str,
    params: PageParams,
    *,
    status: str | None,
    event: str | None,
) -> tuple[list[WebhookDelivery], int]:
    await get_webhook(session, office_id, webhook_id)
    return await repository.list_deliveries(
        session, office_id, webhook_id, params, status=status, event=event
    )


async def get_delivery(
    session: AsyncSession, office_id: str, ident: str, webhook_id: str | None = None
) -> tuple[WebhookDelivery, list[Any]]:
    record = await repository.get_delivery(session, office_id, ident, webhook_id)
    if record is None:
        raise NotFound.of("Delivery", ident)
    return record, await repository.attempts_of(session, office_id, record.id)


async def retry_delivery(session: AsyncSession, office_id: str, ident: str) -> WebhookDelivery:
    """``FAILED`` or ``RETRYING`` → ``PENDING``, due now; never one a worker holds.

    One conditional UPDATE decides, so a worker's claim and concurrent retries cannot
    both win: a delivery leased to a worker (claim token set, lease not over by the
    database's clock) answers 409 ``DELIVERY_IN_FLIGHT``.
    """
    now = await database_now(session)
    if await repository.mark_for_retry(session, office_id, ident, now):
        record = await repository.get_delivery(session, office_id, ident)
        if record is not None:
            await session.refresh(record)
            return record
    record = await repository.get_delivery(session, office_id, ident)
    if record is None:
        raise NotFound.of("Delivery", ident)
    if repository.in_flight(record, now):
        raise Conflict(
            "The delivery is being sent right now",
            details=f"delivery {ident} is held by a worker until its attempt is recorded; "
            "retry it after that",
            code="DELIVERY_IN_FLIGHT",
        )
    raise Conflict(
        "Only a FAILED or RETRYING delivery can be retried",
        details=f"delivery {ident} is {record.status}",
    )


async def recover(
    session: AsyncSession, office_id: str, webhook_id: str, since: datetime, until: datetime | None
) -> int:
    """Sends again, in order and once each, every delivery of the webhook that failed for
    good among those made in ``[since, until)`` (``until``: now); how many."""
    await get_webhook(session, office_id, webhook_id)
    now = await database_now(session)
    end = until or now
    if end <= since:
        raise ValidationFailed.field("body.until", "must be after since")
    return await repository.mark_failed_for_recovery(session, office_id, webhook_id, since, end)


async def replay(
    session: AsyncSession, office_id: str, webhook_id: str, event_id: str
) -> WebhookDelivery:
    """Sends the event to the webhook again, whatever became of its delivery (delivered or
    failed); 404 when the event was never delivered to it."""
    await get_webhook(session, office_id, webhook_id)
    record = await repository.delivery_of_event(session, office_id, webhook_id, event_id)
    if record is None:
        raise NotFound(
            "Event not delivered to this webhook",
            details=f"event {event_id} has no delivery to webhook {webhook_id}",
        )
    if record.status == PENDING:
        return record  # already on its way: it is sent once
    now = await database_now(session)
    if not await repository.mark_for_replay(session, office_id, record.id, now):
        raise Conflict(
            "The delivery is being sent right now",
            details=f"delivery {record.id} is held by a worker until its attempt is recorded; "
            "replay it after that",
            code="DELIVERY_IN_FLIGHT",
        )
    await session.refresh(record)
    return record


async def purge_logs_before(
    session: AsyncSession, office_id: str, before: datetime, limit: int
) -> int:
    """Retention: up to ``limit`` of the office's finished delivery logs older than
    ``before`` go; how many."""
    return await repository.purge_logs_before(session, office_id, before, limit)


async def forget_deliveries(
    session: AsyncSession, office_id: str, event_ids: Sequence[str], mentions: Sequence[str]
) -> None:
    """An erasure: the deliveries of these events, or naming these records, go (payloads,
    attempts and receivers' answers with them)."""
    await repository.forget_deliveries(session, office_id, event_ids, mentions)
