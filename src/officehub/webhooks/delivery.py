"""The delivery worker: fan events out to webhooks, send due deliveries, purge old ones.

One pipeline sends every kind of delivery (``DeliveryKind``: a webhook's, and a
``FIRE_WEBHOOK`` action's in ``webhooks.actions``) on the one queue (``kit.queue``).
At-least-once: a delivery is leased (``next_retry_at`` moved past a short lease, a claim
token set) and its attempt logged as begun, in one transaction; it is sent with no
transaction open while a heartbeat renews the lease; its outcome is written on its own,
only by the holder of the claim. A worker that dies mid-delivery leaves it leased and the
attempt in the log; when the lease ends (seconds) another worker sends it again, with the
same event id. Each endpoint holds at most ``delivery_endpoint_concurrency`` of a worker's
slots (one for a minute after it timed out), so a hanging receiver delays no other's.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import time
from collections.abc import Callable, Collection, Hashable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Protocol

import httpx
from prometheus_client import Counter, Histogram
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.events.consumers import Consumer, consumer_job
from officehub.events.service import emit
from officehub.kit.config import Settings
from officehub.kit.ids import new_id
from officehub.kit.outbound.retry import retry_after as parse_retry_after
from officehub.kit.outbound.signing import (
    SIGNATURE_HEADER,
    STANDARD_ID_HEADER,
    STANDARD_SIGNATURE_HEADER,
    STANDARD_TIMESTAMP_HEADER,
    signature_header,
    standard_signature,
)
from officehub.kit.outbound.ssrf import AddressNotAllowed, delivery_client
from officehub.kit.queue import (
    Backoff,
    Claimed,
    Pool,
    Recorder,
    WorkQueue,
    drain,
    pool_of,
)
from officehub.kit.scheduled_jobs import add_job
from officehub.kit.timeutil import isoformat
from officehub.kit.worker import PeriodicJob, WorkerContext
from officehub.webhooks import events, repository
from officehub.webhooks.models import (
    FAILED,
    PENDING,
    RETRYING,
    SUCCESS,
    Webhook,
    WebhookDelivery,
)
from officehub.webhooks.service import SECRET_GRACE

if TYPE_CHECKING:
    from officehub.events.models import OutboxEvent

logger = logging.getLogger("officehub.webhooks")
ATTEMPTS = Counter(
    "officehub_webhook_attempts_total", "Webhook delivery attempts (per process)", ["outcome"]
)
ATTEMPT_SECONDS = Histogram("officehub_webhook_attempt_seconds", "Webhook delivery attempt time")

RETRY_SCHEDULE: tuple[timedelta, ...] = tuple(
    timedelta(seconds=s) for s in (5, 5 * 60, 30 * 60, 2 * 3600, 5 * 3600, 10 * 3600, 10 * 3600)
)
"""The wait after the 1st, 2nd, … failed attempt; after the last, the delivery is FAILED."""
JITTER = 0.2
BACKOFF = Backoff(RETRY_SCHEDULE, JITTER)
RETRY_WINDOW = sum(RETRY_SCHEDULE, timedelta()) * (1 + JITTER)
"""The longest a delivery's retries can last, jitter included."""
FAILING_PAUSE_AFTER = repository.FAILING_PAUSE_AFTER
RESPONSE_BODY_CHARS = 10_000
_FAN_OUT_BATCH = 500
_PURGE_BATCH = 1000
OUR_HEADERS = frozenset(
    h.lower()
    for h in (
        "Content-Type",
        "X-Service-Event",
        "X-Service-Delivery",
        SIGNATURE_HEADER,
        STANDARD_ID_HEADER,
        STANDARD_TIMESTAMP_HEADER,
        STANDARD_SIGNATURE_HEADER,
    )
)


def next_delay(
    attempt: int, retry_after: float | None, rand: Callable[[], float] = random.random
) -> timedelta | None:
    """The wait after failed attempt number ``attempt`` (1-based); None when it was the last.

    The schedule's step with ±20 % jitter; a ``Retry-After`` is honoured between the step
    and twice the step.
    """
    return BACKOFF.after(attempt, retry_after, rand)


def lease_for(settings: Settings) -> timedelta:
    """The claim lease: short (``delivery_lease_seconds``); the heartbeat renews it while
    the attempt runs, so a killed worker's deliveries are taken over within it."""
    return timedelta(seconds=settings.delivery_lease_seconds)


def event_body(event: OutboxEvent) -> dict[str, Any]:
    return {
        "id": event.id,
        "event": event.name,
        "createdAt": isoformat(event.created_at),
        "officeId": event.office_id,
        "subjectId": event.subject,
        "sequence": event.sequence,
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
        rows.extend(_delivery_row(event, body, w, now, now, expires) for w in recipients)
    await repository.add_deliveries(session, rows)


def _delivery_row(
    event: OutboxEvent,
    body: dict[str, Any],
    webhook: Webhook,
    due: datetime,
    now: datetime,
    expires: datetime,
) -> dict[str, Any]:
    return {
        "id": new_id(),
        "office_id": event.office_id,
        "webhook_id": webhook.id,
        "event_id": event.id,
        "event": event.name,
        "payload": body,
        "status": PENDING,
        "attempt_count": 0,
        "next_retry_at": due,
        "created_at": now,
        "expires_at": expires,
    }


def delivery_rows(
    events: list[OutboxEvent], webhook: Webhook, now: datetime, retention_days: int
) -> list[dict[str, Any]]:
    """Deliveries to ``webhook`` of events it missed (a paused webhook set active again),
    each due at its event's time so the queue sends them oldest first."""
    expires = now + timedelta(days=retention_days)
    return [_delivery_row(e, event_body(e), webhook, e.created_at, now, expires) for e in events]


WEBHOOKS = Consumer("webhooks", fan_out, batch=_FAN_OUT_BATCH, handle_batch=fan_out_batch)
fan_out_events = consumer_job(WEBHOOKS)
"""The queue job: claims events not yet fanned out and fans each out."""


# Sending: one pipeline for every kind of delivery ---------------------------------------

INTERRUPTED = "no answer recorded: the worker stopped during this attempt"
"""An attempt's error until its outcome is written: what the log keeps of an attempt whose
worker was killed mid-call (the attempt is recorded when the delivery is claimed for it,
before the request is sent)."""


@dataclass(frozen=True)
class Outcome:
    status_code: int | None
    response_body: str | None
    error: str | None
    duration_ms: int
    retry_after: float | None
    aborted: bool = False
    """The receiver asked for no retry (``webhook-delivery: abort``, or 410 Gone)."""

    @property
    def succeeded(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300

    @property
    def timed_out(self) -> bool:
        return self.error is not None and self.error.startswith("timed out")


@dataclass(frozen=True)
class Delivery:
    """One attempt of a delivery as it is sent: a webhook's, or a ``FIRE_WEBHOOK``
    action's (``DeliveryKind``); ``number`` is the attempt, already in the log."""

    id: str
    office_id: str
    url: str
    method: str
    headers: dict[str, str]
    secrets: list[str]
    event: str
    payload: dict[str, Any]
    number: int
    attempt_id: str | None = None
    webhook_id: str | None = None
    failing_since: datetime | None = None
    message_id: str | None = None
    """``webhook-id``: the same on every attempt, so a receiver drops a retry it already
    took: a webhook's is the event's id; a ``FIRE_WEBHOOK`` action's (None) the delivery's id
    (two actions of one rule may post the same event to one URL)."""


def delivery_queue(name: str, model: Any, open_: Any, order_by: tuple[Any, ...]) -> WorkQueue:
    """A table of deliveries on the one queue: ``next_retry_at`` is due time and lease;
    failed for good (``FAILED``) after the retry schedule."""
    return WorkQueue(
        name,
        key=model.id,
        lease=model.next_retry_at,
        token=model.claim_token,
        open=open_,
        backoff=BACKOFF,
        attempts=model.attempt_count,
        error=model.error_message,
        gave_up={"status": FAILED, "next_retry_at": None},
        order_by=order_by,
    )


Recorded = tuple[Delivery, str, Outcome]
"""An attempt's outcome to write: the delivery, the claim token it was sent under."""


class DeliveryKind(Protocol):
    """A table of deliveries on the one queue (``kit.queue``): how its due ones are
    claimed (each attempt logged as begun) and how an attempt's outcome is written."""

    queue: WorkQueue

    async def claim(
        self,
        session: AsyncSession,
        ctx: WorkerContext,
        now: datetime,
        token: str,
        limit: int,
        full: Collection[Hashable],
    ) -> list[Delivery]: ...

    async def begin(
        self, session: AsyncSession, ctx: WorkerContext, now: datetime, started: list[Delivery]
    ) -> None: ...

    async def record(
        self,
        session: AsyncSession,
        ctx: WorkerContext,
        outcomes: list[Recorded],
        now: datetime,
    ) -> None: ...


def outcome_values(number: int, outcome: Outcome, now: datetime) -> dict[str, Any]:
    """What a delivery row keeps of attempt ``number``: its answer, the status, the next try."""
    values: dict[str, Any] = {
        "attempt_count": number,
        "status_code": outcome.status_code,
        "response_body": outcome.response_body,
        "error_message": outcome.error,
        "duration_ms": outcome.duration_ms,
    }
    if outcome.succeeded:
        values.update(status=SUCCESS, next_retry_at=None)
    elif outcome.aborted:
        values.update(status=FAILED, next_retry_at=None)
    else:
        delay = next_delay(number, outcome.retry_after)
        if delay is None:
            values.update(status=FAILED, next_retry_at=None)
        else:
            values.update(status=RETRYING, next_retry_at=now + delay)
    return values


def request_headers(delivery: Delivery, body: bytes) -> dict[str, str]:
    custom = {k: v for k, v in delivery.headers.items() if k.lower() not in OUR_HEADERS}
    timestamp = int(time.time())
    message_id = delivery.message_id or delivery.id
    headers = {
        **custom,
        "Content-Type": "application/json",
        "X-Service-Event": delivery.event,
        "X-Service-Delivery": delivery.id,
        STANDARD_ID_HEADER: message_id,
        STANDARD_TIMESTAMP_HEADER: str(timestamp),
    }
    if delivery.secrets:
        headers[SIGNATURE_HEADER] = signature_header(delivery.secrets, timestamp, body)
        headers[STANDARD_SIGNATURE_HEADER] = standard_signature(
            delivery.secrets, message_id, timestamp, body
        )
    return headers


def webhook_secrets(webhook: Webhook, now: datetime) -> list[str]:
    """The secret, and the previous one for 24 h after a rotation."""
    secrets = [webhook.secret]
    rotated = webhook.secret_rotated_at
    if webhook.previous_secret and rotated is not None and now < rotated + SECRET_GRACE:
        secrets.append(webhook.previous_secret)
    return secrets


UNSENDABLE = (
    "the request could not be made from the webhook's URL and headers; "
    "correct them with PATCH /webhooks/{id}"
)


NOT_CONNECTED = "ConnectError: could not connect to the receiver, or its address is not allowed"
"""One answer for a name that does not resolve, a receiver that refuses, and an address the
SSRF guard refuses (issue 39): the log of a webhook or a FIRE_WEBHOOK action tells nobody
which internal names resolve to private addresses."""


def describe_failure(exc: Exception, seconds: float) -> str:
    """A failure as the office may read it: no resolved address, no stack trace, and no
    word on whether the host resolved to an address the guard refuses."""
    if isinstance(exc, TimeoutError | httpx.TimeoutException):
        return f"timed out after {seconds:g} s"
    if isinstance(exc.__cause__, AddressNotAllowed) or isinstance(exc, httpx.ConnectError):
        return NOT_CONNECTED
    if isinstance(exc, httpx.LocalProtocolError | httpx.UnsupportedProtocol):
        return UNSENDABLE  # our side refused to frame the request
    if isinstance(exc, httpx.ProtocolError):
        return f"{type(exc).__name__}: the receiver did not answer with valid HTTP"
    if isinstance(exc, httpx.HTTPError):
        return f"{type(exc).__name__}: the connection failed"
    return UNSENDABLE


async def send(client: httpx.AsyncClient, delivery: Delivery, seconds: float) -> Outcome:
    """One attempt. Whatever goes wrong (a setting httpx cannot send included) is its
    outcome: it never raises, so one delivery cannot take others down."""
    started = time.perf_counter()
    status: int | None = None
    text: str | None = None
    error: str | None = None
    retry_after: float | None = None
    aborted = False
    try:
        body = json.dumps(delivery.payload, separators=(",", ":"), ensure_ascii=False).encode()
        content = None if delivery.method == "GET" else body
        headers = request_headers(delivery, body)
        async with (
            asyncio.timeout(seconds),
            client.stream(delivery.method, delivery.url, content=content, headers=headers) as r,
        ):
            status = r.status_code
            retry_after = parse_retry_after(r.headers.get("retry-after"))
            aborted = _asks_to_abort(status, r.headers.get("webhook-delivery"))
            text = await read_start(r)
    except Exception as exc:
        status, text, error = None, None, describe_failure(exc, seconds)
        if error == UNSENDABLE:
            logger.warning("delivery %s could not be sent: %s", delivery.id, type(exc).__name__)
        elif error == NOT_CONNECTED:
            # The office's log says no more than NOT_CONNECTED; the operator's says which.
            refused = isinstance(exc.__cause__, AddressNotAllowed)
            cause = "address refused by the SSRF guard" if refused else type(exc).__name__
            logger.info("delivery %s not connected: %s", delivery.id, cause)
    elapsed = time.perf_counter() - started
    ATTEMPT_SECONDS.observe(elapsed)
    ATTEMPTS.labels("success" if status is not None and 200 <= status < 300 else "failure").inc()
    if status is not None and not 200 <= status < 300 and error is None:
        error = f"HTTP {status}"
        if aborted:
            error += ABORTED
    return Outcome(
        status, text, error, int(elapsed * 1000), retry_after, aborted and error is not None
    )


ABORTED = "; the receiver asked for no retry (webhook-delivery: abort or 410 Gone)"


def _asks_to_abort(status: int, header: str | None) -> bool:
    """Svix's and Convoy's convention: a receiver that answers 410 Gone, or a failure with
    ``webhook-delivery: abort``, does not want this delivery retried."""
    return status == 410 or (header or "").strip().lower() == "abort"


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
    """A fresh, whole token per claim (the worker's name is kept on each attempt)."""
    return new_id()


class _Client:
    """The pool's HTTP client: opened when its first delivery starts, closed when the last
    in flight ends (connections are reused while deliveries keep coming)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.client: httpx.AsyncClient | None = None
        self.users = 0

    def take(self) -> httpx.AsyncClient:
        if self.client is None:
            settings = self.settings
            self.client = delivery_client(
                allow_private=settings.webhook_allow_private,
                timeout=settings.webhook_timeout_seconds,
                connections=settings.delivery_concurrency,
            )
        self.users += 1
        return self.client

    async def give_back(self) -> None:
        self.users -= 1
        if self.users == 0 and self.client is not None:
            client, self.client = self.client, None
            await client.aclose()


def delivery_pool(ctx: WorkerContext, kind: DeliveryKind) -> Pool[Delivery]:
    """The worker's pool of ``kind``'s deliveries: ``delivery_concurrency`` slots, at most
    ``delivery_endpoint_concurrency`` of them per endpoint (URL), one while an endpoint
    that timed out is in its breaker's minute."""
    settings = ctx.settings
    client = _Client(settings)

    async def write(session: AsyncSession, outcomes: list[Recorded]) -> None:
        await kind.record(session, ctx, outcomes, await ctx.time_in(session))

    recorder = Recorder(ctx.sessionmaker, write, kind.queue.name)

    async def claim(
        session: AsyncSession, now: datetime, token: str, limit: int, full: Collection[Hashable]
    ) -> list[Claimed[Delivery]]:
        found = await kind.claim(session, ctx, now, token, limit, full)
        return [Claimed(d, d.id, d.url) for d in found]

    async def work(delivery: Delivery, token: str) -> bool:
        try:
            outcome = await send(client.take(), delivery, settings.webhook_timeout_seconds)
        finally:
            await client.give_back()
        await recorder.record((delivery, token, outcome))
        return outcome.timed_out

    async def begin(session: AsyncSession, now: datetime, started: list[Delivery]) -> None:
        await kind.begin(session, ctx, now, started)

    return Pool(
        kind.queue,
        claim,
        work,
        slots=settings.delivery_concurrency,
        per_group=settings.delivery_endpoint_concurrency,
        batch=settings.delivery_batch_size,
        lease=lease_for(settings),
        on_free=ctx.nudge,
        begin=begin,
    )


async def deliver(ctx: WorkerContext, kind: DeliveryKind) -> int:
    """The queue job of a kind of delivery: claims due ones for the free slots and sends
    each; each outcome is recorded on its own as soon as it is known."""
    pool = pool_of(ctx, kind.queue.name, lambda: delivery_pool(ctx, kind))
    return await drain(ctx, pool)


# Webhook deliveries ---------------------------------------------------------------------


async def _paced(
    session: AsyncSession,
    deliveries: list[WebhookDelivery],
    webhooks: dict[str, Webhook],
    now: datetime,
    token: str,
) -> list[WebhookDelivery]:
    """The claimed deliveries whose webhooks' pace (``rateLimitPerSecond``) has room in this
    second; the others go back to the queue, due at the next second, unsent and uncounted
    (never dropped). Other webhooks' deliveries are not held back."""
    wanted: dict[str, int] = {}
    for d in deliveries:
        if webhooks[d.webhook_id].rate_limit_per_second is not None:
            wanted[d.webhook_id] = wanted.get(d.webhook_id, 0) + 1
    if not wanted:
        return deliveries
    second = repository.pace_second_of(now)
    granted = await repository.reserve_pace(session, wanted, second)
    kept: list[WebhookDelivery] = []
    later: list[str] = []
    for d in deliveries:  # oldest first (``claimed``'s order): the oldest go now
        if d.webhook_id not in granted:
            kept.append(d)
        elif granted[d.webhook_id] > 0:
            granted[d.webhook_id] -= 1
            kept.append(d)
        else:
            later.append(d.id)
    next_second = datetime.fromtimestamp(second + 1, tz=now.tzinfo or UTC)
    await repository.release(session, later, token, next_second)
    return kept


class WebhookDeliveries:
    """The deliveries of the webhooks (``webhook_deliveries``): each attempt is a row of
    ``webhook_delivery_attempts``, inserted when the attempt begins."""

    queue = delivery_queue(
        "webhook_deliveries", WebhookDelivery, repository.OPEN, (WebhookDelivery.next_retry_at,)
    )

    async def claim(
        self,
        session: AsyncSession,
        ctx: WorkerContext,
        now: datetime,
        token: str,
        limit: int,
        full: Collection[Hashable],
    ) -> list[Delivery]:
        ids = await repository.claim_due(
            session,
            self.queue,
            now,
            lease_for(ctx.settings),
            token,
            limit,
            full_urls=[str(u) for u in full],
        )
        if not ids:
            return []
        deliveries = await repository.claimed(session, ids, token)
        webhooks = await repository.webhooks_by_id(
            session, sorted({d.webhook_id for d in deliveries})
        )
        deliveries = await _paced(session, deliveries, webhooks, now, token)
        found: list[Delivery] = []
        for d in deliveries:
            webhook = webhooks[d.webhook_id]
            found.append(
                Delivery(
                    d.id,
                    d.office_id,
                    webhook.url,
                    "POST",
                    {str(k): str(v) for k, v in (webhook.headers or {}).items()},
                    webhook_secrets(webhook, now),
                    d.event,
                    d.payload,
                    d.attempt_count + 1,
                    new_id(),
                    webhook.id,
                    webhook.failing_since,
                    d.event_id,
                )
            )
        return found

    async def begin(
        self, session: AsyncSession, ctx: WorkerContext, now: datetime, started: list[Delivery]
    ) -> None:
        """Each attempt counted and logged before its request is sent."""
        await repository.begin_attempts(
            session,
            [
                {
                    "id": d.attempt_id,
                    "office_id": d.office_id,
                    "delivery_id": d.id,
                    "number": d.number,
                    "status_code": None,
                    "response_body": None,
                    "error_message": INTERRUPTED,
                    "duration_ms": 0,
                    "worker_id": ctx.worker_id[:128],
                    "created_at": now,
                }
                for d in started
            ],
        )

    async def record(
        self,
        session: AsyncSession,
        ctx: WorkerContext,
        outcomes: list[Recorded],
        now: datetime,
    ) -> None:
        """Each attempt's row gets its answer; each delivery its status, if this worker
        still holds it (else it was taken over, or deleted: nothing is written to it).
        One conditional statement per row, run as one batch each."""
        await repository.record_outcomes(
            session,
            [
                {
                    "b_id": d.id,
                    "b_token": token,
                    **outcome_values(d.number, o, now),
                    "claim_token": None,
                }
                for d, token, o in outcomes
            ],
            [
                {
                    "b_id": d.attempt_id,
                    "status_code": o.status_code,
                    "response_body": o.response_body,
                    "error_message": o.error,
                    "duration_ms": o.duration_ms,
                }
                for d, _t, o in outcomes
            ],
        )
        # A webhook's health changes on a success after failures, a failure after
        # successes, or after 5 days of failures (its state as read at the claim).
        ok, failed = set(), set()
        for d, _t, o in outcomes:
            since = d.failing_since
            if d.webhook_id is None:
                continue
            if o.succeeded and since is not None:
                ok.add(d.webhook_id)
            elif not o.succeeded and (since is None or since <= now - FAILING_PAUSE_AFTER):
                failed.add(d.webhook_id)
        if ok or failed:
            paused = await repository.track_health(session, ok, failed - ok, now)
            for webhook in paused:
                add_job(
                    session,
                    webhook.office_id,
                    events.PAUSED_MAIL_JOB,
                    {
                        "webhookId": webhook.id,
                        "name": webhook.name,
                        "failingSince": isoformat(webhook.failing_since)
                        if webhook.failing_since
                        else None,
                        "disabledAt": isoformat(now),
                    },
                    now,
                    now,
                )
                await emit(
                    session,
                    webhook.office_id,
                    events.DISABLED,
                    events.disabled_payload(
                        webhook.id,
                        webhook.name,
                        webhook.disabled_reason or "",
                        webhook.failing_since,
                        now,
                    ),
                )


WEBHOOK_DELIVERIES = WebhookDeliveries()


async def deliver_due(ctx: WorkerContext) -> int:
    """The queue job: sends due webhook deliveries, each outcome recorded on its own."""
    return await deliver(ctx, WEBHOOK_DELIVERIES)


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
