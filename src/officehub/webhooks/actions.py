"""``FIRE_WEBHOOK`` (automation actions, flow steps) through the delivery machinery.

``enqueue`` records an ``ActionDelivery`` in the caller's transaction (the rule's run or
the flow's turn). ``deliver_actions_due`` claims due ones in a short transaction and
commits, makes each HTTP call with no transaction open (SSRF-guarded client, signed when
the action has a ``secret``), then records each outcome in a new short transaction,
only while its claim still holds. A worker that dies between leaves the delivery leased;
when the lease ends it is due again (at least once, the same ``X-Service-Delivery``).
Failures are retried on the webhook schedule (5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import httpx
from sqlalchemy import delete, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.kit.db import is_sqlite
from officehub.kit.ids import new_id
from officehub.kit.pagination import PageParams, paginate
from officehub.kit.repository import scoped
from officehub.kit.timeutil import isoformat
from officehub.kit.worker import PeriodicJob, WorkerContext
from officehub.webhooks.delivery import (
    ATTEMPT_SECONDS,
    ATTEMPTS,
    OUR_HEADERS,
    RESPONSE_BODY_CHARS,
    describe_failure,
    lease_for,
    new_claim_token,
    next_delay,
    parse_retry_after,
    read_start,
)
from officehub.webhooks.models import (
    FAILED,
    OPEN_STATUSES,
    PENDING,
    RETRYING,
    SUCCESS,
    ActionDelivery,
)
from officehub.webhooks.signing import SIGNATURE_HEADER, signature_header
from officehub.webhooks.ssrf import delivery_client

logger = logging.getLogger("officehub.webhooks")

ATTEMPT_EXCERPT_CHARS = 1000
"""Each kept attempt's response excerpt; the delivery keeps its last 10,000 characters."""
MAX_KEPT_ATTEMPTS = 20
_PURGE_BATCH = 1000


async def enqueue(
    session: AsyncSession,
    office_id: str,
    *,
    url: str,
    method: str,
    headers: dict[str, Any],
    secret: str | None,
    event: str,
    event_id: str | None,
    payload: dict[str, Any],
    now: datetime,
    retention_days: int,
    rule_id: str | None = None,
    flow_id: str | None = None,
) -> ActionDelivery:
    """Adds the delivery to the session, due now; it commits with the caller's change."""
    record = ActionDelivery(
        id=new_id(),
        office_id=office_id,
        rule_id=rule_id,
        flow_id=flow_id,
        event_id=event_id,
        event=event[:64],
        url=url,
        method=method.upper(),
        headers={str(k): str(v) for k, v in headers.items()},
        secret=secret or None,
        payload=payload,
        status=PENDING,
        attempt_count=0,
        attempts=[],
        next_retry_at=now,
        created_at=now,
        expires_at=now + timedelta(days=retention_days),
    )
    session.add(record)
    await session.flush()
    return record


# The API's reads ------------------------------------------------------------------------


async def list_for(
    session: AsyncSession,
    office_id: str,
    params: PageParams,
    *,
    rule_id: str | None = None,
    flow_id: str | None = None,
    status: str | None,
) -> tuple[list[ActionDelivery], int]:
    """A rule's or a flow's deliveries, newest first, through the (office, owner, created)
    index."""
    stmt = scoped(ActionDelivery, office_id)
    if rule_id is not None:
        stmt = stmt.where(ActionDelivery.rule_id == rule_id)
    else:
        stmt = stmt.where(ActionDelivery.flow_id == flow_id)
    if status is not None:
        stmt = stmt.where(ActionDelivery.status == status)
    stmt = stmt.order_by(ActionDelivery.created_at.desc(), ActionDelivery.id.desc())
    return await paginate(session, stmt, params)


# Sending --------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Claimed:
    id: str
    office_id: str
    url: str
    method: str
    headers: dict[str, str]
    secret: str | None
    event: str
    payload: dict[str, Any]
    attempt_count: int


@dataclass(frozen=True)
class _Outcome:
    status_code: int | None
    response_body: str | None
    error: str | None
    duration_ms: int
    retry_after: float | None
    at: datetime

    @property
    def succeeded(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300


async def _claim(
    session: AsyncSession,
    now: datetime,
    lease_until: datetime,
    token: str,
    limit: int,
    *,
    skip_locked: bool,
) -> list[_Claimed]:
    due = (
        select(ActionDelivery.id)
        .where(ActionDelivery.status.in_(OPEN_STATUSES), ActionDelivery.next_retry_at <= now)
        .order_by(ActionDelivery.next_retry_at, ActionDelivery.id)
        .limit(limit)
    )
    if skip_locked:
        due = due.with_for_update(skip_locked=True)
    ids = [
        row[0]
        for row in await session.execute(
            update(ActionDelivery)
            .where(ActionDelivery.id.in_(due.scalar_subquery()))
            .values(next_retry_at=lease_until, claim_token=token)
            .returning(ActionDelivery.id)
            .execution_options(synchronize_session=False)
        )
    ]
    if not ids:
        return []
    rows = await session.scalars(
        select(ActionDelivery).where(
            ActionDelivery.id.in_(ids), ActionDelivery.claim_token == token
        )
    )
    return [
        _Claimed(
            r.id,
            r.office_id,
            r.url,
            r.method,
            dict(r.headers or {}),
            r.secret,
            r.event,
            r.payload,
            r.attempt_count,
        )
        for r in sorted(rows, key=lambda r: (r.created_at, r.id))
    ]


def _headers(delivery: _Claimed, body: bytes) -> dict[str, str]:
    custom = {k: v for k, v in delivery.headers.items() if k.lower() not in OUR_HEADERS}
    headers = {
        **custom,
        "Content-Type": "application/json",
        "X-Service-Event": delivery.event,
        "X-Service-Delivery": delivery.id,
    }
    if delivery.secret:
        headers[SIGNATURE_HEADER] = signature_header([delivery.secret], int(time.time()), body)
    return headers


async def _send(
    client: httpx.AsyncClient, delivery: _Claimed, seconds: float, clock: WorkerContext
) -> _Outcome:
    """One attempt; whatever goes wrong is its outcome (it never raises)."""
    started = time.perf_counter()
    status: int | None = None
    text: str | None = None
    error: str | None = None
    retry_after: float | None = None
    try:
        body = json.dumps(delivery.payload, separators=(",", ":"), ensure_ascii=False).encode()
        content = None if delivery.method == "GET" else body
        async with (
            asyncio.timeout(seconds),
            client.stream(
                delivery.method, delivery.url, content=content, headers=_headers(delivery, body)
            ) as response,
        ):
            status = response.status_code
            retry_after = parse_retry_after(response.headers.get("retry-after"), time.time())
            text = await read_start(response)
    except Exception as exc:
        status, text, error = None, None, describe_failure(exc, seconds)
    elapsed = time.perf_counter() - started
    ATTEMPT_SECONDS.observe(elapsed)
    ATTEMPTS.labels("success" if status is not None and 200 <= status < 300 else "failure").inc()
    if status is not None and not 200 <= status < 300 and error is None:
        error = f"HTTP {status}"
    return _Outcome(status, text, error, int(elapsed * 1000), retry_after, clock.now())


async def deliver_actions_due(ctx: WorkerContext) -> int:
    """Claims due action deliveries (committed), sends them with no transaction open,
    then records each outcome in its own short transaction."""
    settings = ctx.settings
    token = new_claim_token()
    async with ctx.sessionmaker() as session, session.begin():
        now = await ctx.time_in(session)
        claimed = await _claim(
            session,
            now,
            now + lease_for(settings),
            token,
            settings.delivery_batch_size,
            skip_locked=not is_sqlite(settings.database_url),
        )
    if not claimed:
        return 0
    limit = asyncio.Semaphore(settings.delivery_concurrency)
    timeout = settings.webhook_timeout_seconds

    async def one(delivery: _Claimed) -> None:
        async with limit:
            outcome = await _send(client, delivery, timeout, ctx)
        await _record(ctx, token, delivery, outcome)

    async with delivery_client(
        allow_private=settings.webhook_allow_private,
        timeout=timeout,
        connections=settings.delivery_concurrency,
    ) as client:
        await asyncio.gather(*(one(d) for d in claimed))
    return len(claimed)


async def _record(ctx: WorkerContext, token: str, delivery: _Claimed, outcome: _Outcome) -> None:
    """Writes the outcome if this worker still holds the claim (else another worker took
    the delivery over after the lease and its outcome counts)."""
    async with ctx.sessionmaker() as session, session.begin():
        # Written first: the row lock (PostgreSQL) or the write lock (SQLite) before reading.
        await session.execute(
            update(ActionDelivery)
            .where(ActionDelivery.id == delivery.id, ActionDelivery.claim_token == token)
            .values(claim_token=token)
            .execution_options(synchronize_session=False)
        )
        now = await ctx.time_in(session)
        record = await session.scalar(
            select(ActionDelivery).where(
                ActionDelivery.id == delivery.id, ActionDelivery.claim_token == token
            )
        )
        if record is None:
            return
        number = record.attempt_count + 1
        attempt = {
            "number": number,
            "statusCode": outcome.status_code,
            "errorMessage": outcome.error,
            "durationMs": outcome.duration_ms,
            "responseBody": (outcome.response_body or "")[:ATTEMPT_EXCERPT_CHARS] or None,
            "createdAt": isoformat(outcome.at),
        }
        values: dict[str, Any] = {
            "attempt_count": number,
            "attempts": [*(record.attempts or []), attempt][-MAX_KEPT_ATTEMPTS:],
            "status_code": outcome.status_code,
            "response_body": (outcome.response_body or None)
            and outcome.response_body[:RESPONSE_BODY_CHARS],
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
        await session.execute(
            update(ActionDelivery)
            .where(ActionDelivery.id == record.id, ActionDelivery.claim_token == token)
            .values(**values)
            .execution_options(synchronize_session=False)
        )


# Retention ------------------------------------------------------------------------------


async def purge_expired(ctx: WorkerContext) -> int:
    """Deletes action deliveries past their ``expiresAt`` (90 days, as deliveries)."""
    total = 0
    while True:
        async with ctx.sessionmaker() as session, session.begin():
            now = await ctx.time_in(session)
            ids: Sequence[str] = list(
                await session.scalars(
                    select(ActionDelivery.id)
                    .where(ActionDelivery.expires_at <= now)
                    .limit(_PURGE_BATCH)
                )
            )
            if ids:
                await session.execute(delete(ActionDelivery).where(ActionDelivery.id.in_(ids)))
        total += len(ids)
        if len(ids) < _PURGE_BATCH:
            return total


ACTION_PURGE_JOB = PeriodicJob("action-deliveries-purge", timedelta(hours=1), purge_expired)
