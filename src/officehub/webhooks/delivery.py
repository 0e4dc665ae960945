"""The delivery worker: fan events out to webhooks, send due deliveries, purge old ones.

At-least-once: a delivery is leased (``next_retry_at`` moved past the lease, a claim
token set) in one statement, sent, and its outcome written only by the holder of the
claim. A worker that dies mid-delivery leaves it leased; when the lease ends it is due
again and another worker sends it, with the same event id.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import logging
import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import httpx
from prometheus_client import Counter, Histogram
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.events.consumers import Consumer, consumer_job
from officehub.events.models import OutboxEvent
from officehub.kit.config import Settings
from officehub.kit.db import is_sqlite
from officehub.kit.ids import new_id
from officehub.kit.timeutil import isoformat
from officehub.kit.worker import PeriodicJob, WorkerContext
from officehub.webhooks import repository
from officehub.webhooks.models import (
    FAILED,
    PENDING,
    RETRYING,
    SUCCESS,
    Webhook,
    WebhookDelivery,
)
from officehub.webhooks.service import SECRET_GRACE
from officehub.webhooks.signing import SIGNATURE_HEADER, signature_header
from officehub.webhooks.ssrf import AddressNotAllowed, delivery_client

logger = logging.getLogger("officehub.webhooks")
ATTEMPTS = Counter(
    "officehub_webhook_attempts_total", "Webhook delivery attempts (per process)", ["outcome"]
)
ATTEMPT_SECONDS = Histogram("officehub_webhook_attempt_seconds", "Webhook delivery attempt time")

RETRY_SCHEDULE = tuple(
    timedelta(seconds=s) for s in (5, 5 * 60, 30 * 60, 2 * 3600, 5 * 3600, 10 * 3600, 10 * 3600)
)
"""The wait after the 1st, 2nd, … failed attempt; after the last, the delivery is FAILED."""
JITTER = 0.2
FAILING_PAUSE_AFTER = repository.FAILING_PAUSE_AFTER
RESPONSE_BODY_CHARS = 10_000
_FAN_OUT_BATCH = 500
_PURGE_BATCH = 1000
OUR_HEADERS = frozenset(
    h.lower() for h in ("Content-Type", "X-Service-Event", "X-Service-Delivery", SIGNATURE_HEADER)
)


def next_delay(
    attempt: int, retry_after: float | None, rand: Callable[[], float] = random.random
) -> timedelta | None:
    """The wait after failed attempt number ``attempt`` (1-based); None when it was the last.

    The schedule's step with ±20 % jitter; a ``Retry-After`` is honoured between the step
    and twice the step.
    """
    if attempt > len(RETRY_SCHEDULE):
        return None
    step = RETRY_SCHEDULE[attempt - 1].total_seconds()
    if retry_after is not None:
        return timedelta(seconds=min(max(retry_after, step), 2 * step))
    return timedelta(seconds=step * (1 - JITTER + 2 * JITTER * rand()))


def lease_for(settings: Settings) -> timedelta:
    """The claim lease: the setting, but never shorter than sending a whole batch can take."""
    rounds = math.ceil(settings.delivery_batch_size / max(1, settings.delivery_concurrency))
    worst = rounds * settings.webhook_timeout_seconds + 1
    return timedelta(seconds=max(settings.delivery_lease_seconds, worst))


def parse_retry_after(value: str | None, now: float) -> float | None:
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - now)


def event_body(event: OutboxEvent) -> dict[str, Any]:
    return {
        "id": event.id,
        "event": event.name,
        "createdAt": isoformat(event.created_at),
        "officeId": event.office_id,
        "data": event.data,
    }


# Fan-out ------------------------------------------------------------------------------


async def fan_out(session: AsyncSession, event: OutboxEvent, ctx: WorkerContext) -> None:
    """The ``webhooks`` consumer's handler for one event (see ``fan_out_batch``)."""
    await fan_out_batch(session, [event], ctx)


async def fan_out_batch(
    session: AsyncSession, events: list[OutboxEvent], ctx: WorkerContext
) -> None:
    """One delivery per active webhook of the office subscribed to the event and created
    no later than it (``webhook.test``: its target alone).

    Runs in the consumer's transaction, so the deliveries and the events' done marks
    commit together; the unique (office, webhook, event) index makes a second fan-out of
    the same event write nothing. A batch reads its offices' webhooks once.
    """
    now = await ctx.time_in(session)
    expires = now + timedelta(days=ctx.settings.delivery_retention_days)
    by_office: dict[str, list[Webhook]] = {}
    for webhook in await repository.active_webhooks_of(
        session, sorted({e.office_id for e in events if not e.target_webhook_id})
    ):
        by_office.setdefault(webhook.office_id, []).append(webhook)
    targets = await repository.webhooks_by_id(
        session, sorted({e.target_webhook_id for e in events if e.target_webhook_id})
    )
    rows: list[dict[str, Any]] = []
    for event in events:
        if event.target_webhook_id:
            target = targets.get(event.target_webhook_id)
            recipients = [target] if target and target.office_id == event.office_id else []
        else:
            recipients = [
                w
                for w in by_office.get(event.office_id, [])
                if event.name in w.events and w.created_at <= event.created_at
            ]
        body = event_body(event)
        rows.extend(
            {
                "id": new_id(),
                "office_id": event.office_id,
                "webhook_id": w.id,
                "event_id": event.id,
                "event": event.name,
                "payload": body,
                "status": PENDING,
                "attempt_count": 0,
                "next_retry_at": now,
                "created_at": now,
                "expires_at": expires,
            }
            for w in recipients
        )
    await repository.add_deliveries(session, rows)


WEBHOOKS = Consumer("webhooks", fan_out, batch=_FAN_OUT_BATCH, handle_batch=fan_out_batch)
fan_out_events = consumer_job(WEBHOOKS)
"""The queue job: claims events not yet fanned out and fans each out."""


# Sending ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    status_code: int | None
    response_body: str | None
    error: str | None
    duration_ms: int
    retry_after: float | None

    @property
    def succeeded(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300


def delivery_headers(
    webhook: Webhook, delivery: WebhookDelivery, body: bytes, now: datetime
) -> dict[str, str]:
    secrets = [webhook.secret]
    rotated = webhook.secret_rotated_at
    if webhook.previous_secret and rotated is not None and now < rotated + SECRET_GRACE:
        secrets.append(webhook.previous_secret)
    custom = {k: v for k, v in (webhook.headers or {}).items() if k.lower() not in OUR_HEADERS}
    return {
        **custom,
        "Content-Type": "application/json",
        "X-Service-Event": delivery.event,
        "X-Service-Delivery": delivery.id,
        SIGNATURE_HEADER: signature_header(secrets, int(time.time()), body),
    }


UNSENDABLE = (
    "the request could not be made from the webhook's URL and headers; "
    "correct them with PATCH /webhooks/{id}"
)


def describe_failure(exc: Exception, seconds: float) -> str:
    """A failure as the office may read it: no resolved address, no stack trace."""
    if isinstance(exc, TimeoutError | httpx.TimeoutException):
        return f"timed out after {seconds:g} s"
    if isinstance(exc.__cause__, AddressNotAllowed):
        return str(exc.__cause__)  # names the URL's host only, never what it resolved to
    if isinstance(exc, httpx.LocalProtocolError | httpx.UnsupportedProtocol):
        return UNSENDABLE  # our side refused to frame the request
    if isinstance(exc, httpx.ConnectError):
        return "ConnectError: could not connect to the receiver"
    if isinstance(exc, httpx.ProtocolError):
        return f"{type(exc).__name__}: the receiver did not answer with valid HTTP"
    if isinstance(exc, httpx.HTTPError):
        return f"{type(exc).__name__}: the connection failed"
    return UNSENDABLE


async def send(
    client: httpx.AsyncClient,
    webhook: Webhook,
    delivery: WebhookDelivery,
    now: datetime,
    seconds: float,
) -> Outcome:
    """One attempt. Whatever goes wrong (a setting httpx cannot send included) is its
    outcome: it never raises, so one webhook cannot take its batch down."""
    started = time.perf_counter()
    status: int | None = None
    text: str | None = None
    error: str | None = None
    retry_after: float | None = None
    try:
        body = json.dumps(delivery.payload, separators=(",", ":"), ensure_ascii=False).encode()
        headers = delivery_headers(webhook, delivery, body, now)
        async with (
            asyncio.timeout(seconds),
            client.stream("POST", webhook.url, content=body, headers=headers) as response,
        ):
            status = response.status_code
            retry_after = parse_retry_after(response.headers.get("retry-after"), time.time())
            text = await read_start(response)
    except Exception as exc:
        status, text, error = None, None, describe_failure(exc, seconds)
        if error == UNSENDABLE:
            logger.warning(
                "delivery %s of webhook %s could not be sent: %s",
                delivery.id,
                webhook.id,
                type(exc).__name__,
            )
    elapsed = time.perf_counter() - started
    duration = int(elapsed * 1000)
    ATTEMPT_SECONDS.observe(elapsed)
    ATTEMPTS.labels("success" if status is not None and 200 <= status < 300 else "failure").inc()
    if status is not None and not 200 <= status < 300 and error is None:
        error = f"HTTP {status}"
    return Outcome(status, text, error, duration, retry_after)


async def read_start(response: httpx.Response) -> str:
    """The first 10,000 characters of the body, without reading a huge one whole.

    NUL becomes U+FFFD: PostgreSQL text cannot hold it, and the outcome must be stored.
    """
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        chunks.append(chunk)
        size += len(chunk)
        if size >= RESPONSE_BODY_CHARS * 4:
            break
    text = b"".join(chunks).decode(errors="replace")[:RESPONSE_BODY_CHARS]
    return text.replace("\x00", "\ufffd")


def new_claim_token() -> str:
    """A fresh, whole token per claimed batch (the worker's name is kept on each attempt)."""
    return new_id()


async def deliver_due(ctx: WorkerContext) -> int:
    """Claims a batch of due deliveries, sends them concurrently, records every attempt."""
    settings = ctx.settings
    token = new_claim_token()
    async with ctx.sessionmaker() as session, session.begin():
        now = await ctx.time_in(session)
        lease_until = now + lease_for(settings)
        ids = await repository.claim_due(
            session,
            now,
            lease_until,
            token,
            settings.delivery_batch_size,
            skip_locked=not is_sqlite(settings.database_url),
        )
        if not ids:
            return 0
        deliveries = await repository.claimed(session, ids, token)
        webhooks = await repository.webhooks_by_id(
            session, sorted({d.webhook_id for d in deliveries})
        )
    pairs = [(d, webhooks[d.webhook_id]) for d in deliveries if d.webhook_id in webhooks]
    limit = asyncio.Semaphore(settings.delivery_concurrency)
    timeout = settings.webhook_timeout_seconds

    async def one(delivery: WebhookDelivery, webhook: Webhook) -> Outcome:
        async with limit:
            return await send(client, webhook, delivery, now, timeout)

    async with delivery_client(
        allow_private=settings.webhook_allow_private,
        timeout=timeout,
        connections=settings.delivery_concurrency,
    ) as client:
        outcomes = await asyncio.gather(*(one(d, w) for d, w in pairs))
    await record_outcomes(ctx, token, list(zip(pairs, outcomes, strict=True)))
    return len(ids)


async def record_outcomes(
    ctx: WorkerContext,
    token: str,
    results: list[tuple[tuple[WebhookDelivery, Webhook], Outcome]],
) -> None:
    """Writes the outcomes this worker still holds the claim of, in a few statements."""
    async with ctx.sessionmaker() as session, session.begin():
        now = await ctx.time_in(session)
        held = await repository.still_held(
            session,
            [d.id for (d, _w), _o in results],
            token,
            lock=not is_sqlite(ctx.settings.database_url),
        )
        updates: list[dict[str, Any]] = []
        attempts: list[dict[str, Any]] = []
        succeeded: set[str] = set()
        failed: set[str] = set()
        for (delivery, webhook), outcome in results:
            if delivery.id not in held:
                continue  # the lease ran out and another worker took it over
            number = delivery.attempt_count + 1
            values: dict[str, Any] = {
                "id": delivery.id,
                "attempt_count": number,
                "status_code": outcome.status_code,
                "response_body": outcome.response_body,
                "error_message": outcome.error,
                "duration_ms": outcome.duration_ms,
                "claim_token": None,
            }
            if outcome.succeeded:
                values.update(status=SUCCESS, next_retry_at=None)
            else:
                delay = next_delay(number, outcome.retry_after)
                if delay is None:
                    values.update(status=FAILED, next_retry_at=None)
                else:
                    values.update(status=RETRYING, next_retry_at=now + delay)
            updates.append(values)
            attempts.append(
                {
                    "id": new_id(),
                    "office_id": delivery.office_id,
                    "delivery_id": delivery.id,
                    "number": number,
                    "status_code": outcome.status_code,
                    "response_body": outcome.response_body,
                    "error_message": outcome.error,
                    "duration_ms": outcome.duration_ms,
                    "worker_id": ctx.worker_id[:128],
                    "created_at": now,
                }
            )
            (succeeded if outcome.succeeded else failed).add(webhook.id)
        await repository.save_outcomes(session, updates, attempts)
        await repository.track_health(session, succeeded, failed - succeeded, now)


# Retention ----------------------------------------------------------------------------


async def purge_expired_deliveries(ctx: WorkerContext) -> int:
    """Deletes delivery records (and their attempts) past their ``expiresAt``."""
    total = 0
    while True:
        async with ctx.sessionmaker() as session, session.begin():
            now = await ctx.time_in(session)
            removed = await repository.purge_expired(session, now, _PURGE_BATCH)
        total += removed
        if removed < _PURGE_BATCH:
            return total


PURGE_JOB = PeriodicJob("webhook-deliveries-purge", timedelta(hours=1), purge_expired_deliveries)
