"""``FIRE_WEBHOOK`` (automation actions, flow steps) through the delivery machinery.

``enqueue`` records an ``ActionDelivery`` in the caller's transaction (the rule's run or
the flow's turn). An action delivery is a kind of delivery (``ActionDeliveries``): the
webhook delivery pipeline (``webhooks.delivery.deliver``) claims, sends (SSRF-guarded,
signed when the action has a ``secret``) and records it, each outcome in its own short
transaction, only while its claim still holds. A worker that dies between leaves the
delivery leased and the attempt logged; when the lease ends it is due again (at least
once, the same ``X-Service-Delivery``). Failures are retried on the webhook schedule
(5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h).
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Hashable, Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.kit.ids import new_id
from officehub.kit.pagination import PageParams, paginate
from officehub.kit.repository import scoped
from officehub.kit.timeutil import isoformat
from officehub.kit.worker import PeriodicJob, WorkerContext
from officehub.webhooks.delivery import (
    INTERRUPTED,
    RESPONSE_BODY_CHARS,
    Delivery,
    Outcome,
    Recorded,
    deliver,
    delivery_queue,
    lease_for,
    outcome_values,
)
from officehub.webhooks.models import OPEN_STATUSES, PENDING, ActionDelivery

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


# Sending: a kind of delivery on the delivery pipeline ------------------------------------


def _attempt(number: int, at: datetime, outcome: Outcome | None) -> dict[str, Any]:
    """An entry of the ``attempts`` log: begun (``outcome`` None), or answered."""
    if outcome is None:
        return {
            "number": number,
            "statusCode": None,
            "errorMessage": INTERRUPTED,
            "durationMs": 0,
            "responseBody": None,
            "createdAt": isoformat(at),
        }
    return {
        "number": number,
        "statusCode": outcome.status_code,
        "errorMessage": outcome.error,
        "durationMs": outcome.duration_ms,
        "responseBody": (outcome.response_body or "")[:ATTEMPT_EXCERPT_CHARS] or None,
        "createdAt": isoformat(at),
    }


class ActionDeliveries:
    """``FIRE_WEBHOOK`` deliveries (``action_deliveries``): each attempt is an entry of
    the row's ``attempts``, appended when the attempt begins."""

    queue = delivery_queue(
        "action_deliveries",
        ActionDelivery,
        ActionDelivery.status.in_(OPEN_STATUSES),
        (ActionDelivery.next_retry_at, ActionDelivery.id),
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
        where = [ActionDelivery.url.not_in([str(u) for u in full])] if full else []
        ids = await self.queue.claim(
            session,
            now,
            lease_for(ctx.settings),
            token,
            limit,
            where=where,
        )
        if not ids:
            return []
        rows = await session.scalars(
            select(ActionDelivery)
            .where(ActionDelivery.id.in_(ids), ActionDelivery.claim_token == token)
            .order_by(ActionDelivery.created_at, ActionDelivery.id)
        )
        found: list[Delivery] = []
        for r in rows:
            found.append(
                Delivery(
                    r.id,
                    r.office_id,
                    r.url,
                    r.method,
                    dict(r.headers or {}),
                    [r.secret] if r.secret else [],
                    r.event,
                    r.payload,
                    r.attempt_count + 1,
                )
            )
        return found

    async def begin(
        self, session: AsyncSession, ctx: WorkerContext, now: datetime, started: list[Delivery]
    ) -> None:
        """Each attempt counted and logged before its request is sent."""
        for delivery in started:
            row = await session.get(ActionDelivery, delivery.id)
            if row is None:  # pragma: no cover (claimed in this transaction)
                continue
            row.attempt_count = delivery.number
            log = [*(row.attempts or []), _attempt(delivery.number, ctx.now(), None)]
            row.attempts = log[-MAX_KEPT_ATTEMPTS:]
        await session.flush()

    async def record(
        self,
        session: AsyncSession,
        ctx: WorkerContext,
        outcomes: list[Recorded],
        now: datetime,
    ) -> None:
        """Writes each outcome whose claim this worker still holds (else another worker
        took the delivery over after the lease, or it was deleted: nothing to write)."""
        for delivery, token, outcome in outcomes:
            if not await self.queue.hold(session, delivery.id, token):
                continue
            record = await session.get(ActionDelivery, delivery.id, populate_existing=True)
            if record is None:
                continue
            done = _attempt(delivery.number, ctx.now(), outcome)
            log = [a for a in (record.attempts or []) if a.get("number") != delivery.number]
            values = outcome_values(delivery.number, outcome, now)
            values["attempts"] = [*log, done][-MAX_KEPT_ATTEMPTS:]
            body = values["response_body"]
            values["response_body"] = (body or None) and body[:RESPONSE_BODY_CHARS]
            await self.queue.finish(session, delivery.id, token, values)


ACTION_DELIVERIES = ActionDeliveries()


async def deliver_actions_due(ctx: WorkerContext) -> int:
    """The queue job: sends due action deliveries on the delivery pipeline."""
    return await deliver(ctx, ACTION_DELIVERIES)


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
