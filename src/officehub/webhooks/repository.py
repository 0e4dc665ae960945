"""Every query of webhooks and their deliveries; the API's are scoped by office id."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any, cast

from sqlalchemy import (
    Select,
    Table,
    bindparam,
    case,
    delete,
    func,
    insert,
    literal,
    or_,
    select,
    true,
    update,
)
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.events.models import OutboxEvent
from officehub.kit.pagination import PageParams, paginate
from officehub.kit.queue import WorkQueue, lock_skipping
from officehub.kit.repository import (
    batches,
    get_scoped,
    insert_ignoring_duplicates,
    mentioning,
    scoped,
)
from officehub.kit.timeutil import isoformat
from officehub.webhooks.models import (
    FAILED,
    OPEN_STATUSES,
    PENDING,
    RETRYING,
    SUCCESS,
    ActionDelivery,
    Webhook,
    WebhookDelivery,
    WebhookDeliveryAttempt,
)


async def get_webhook(
    session: AsyncSession, office_id: str, ident: str, *, for_change: bool = False
) -> Webhook | None:
    return await get_scoped(session, Webhook, office_id, ident, for_change=for_change)


async def list_webhooks(
    session: AsyncSession, office_id: str, params: PageParams
) -> tuple[list[Webhook], int]:
    stmt = scoped(Webhook, office_id).order_by(Webhook.created_at.desc(), Webhook.id.desc())
    return await paginate(session, stmt, params)


async def delivery_counts(
    session: AsyncSession, office_id: str, webhook_ids: Sequence[str]
) -> dict[str, tuple[int, int, int]]:
    """``{webhook id: (total, succeeded, failed)}``."""
    if not webhook_ids:
        return {}
    rows = await session.execute(
        select(
            WebhookDelivery.webhook_id,
            func.count(),
            func.sum(case((WebhookDelivery.status == SUCCESS, 1), else_=0)),
            func.sum(case((WebhookDelivery.status == FAILED, 1), else_=0)),
        )
        .where(
            WebhookDelivery.office_id == office_id,
            WebhookDelivery.webhook_id.in_(webhook_ids),
        )
        .group_by(WebhookDelivery.webhook_id)
    )
    return {r[0]: (int(r[1]), int(r[2] or 0), int(r[3] or 0)) for r in rows}


def _deliveries(office_id: str, webhook_id: str) -> Select[Any]:
    return scoped(WebhookDelivery, office_id).where(WebhookDelivery.webhook_id == webhook_id)


async def list_deliveries(
    session: AsyncSession,
    office_id: str,
    webhook_id: str,
    params: PageParams,
    *,
    status: str | None,
    event: str | None,
) -> tuple[list[WebhookDelivery], int]:
    stmt = _deliveries(office_id, webhook_id)
    if status is not None:
        stmt = stmt.where(WebhookDelivery.status == status)
    if event is not None:
        stmt = stmt.where(WebhookDelivery.event == event)
    stmt = stmt.order_by(WebhookDelivery.created_at.desc(), WebhookDelivery.id.desc())
    return await paginate(session, stmt, params)


async def get_delivery(
    session: AsyncSession, office_id: str, ident: str, webhook_id: str | None = None
) -> WebhookDelivery | None:
    stmt = scoped(WebhookDelivery, office_id).where(WebhookDelivery.id == ident)
    if webhook_id is not None:
        stmt = stmt.where(WebhookDelivery.webhook_id == webhook_id)
    return (await session.scalars(stmt)).first()


async def attempts_of(
    session: AsyncSession, office_id: str, delivery_id: str
) -> list[WebhookDeliveryAttempt]:
    stmt = (
        scoped(WebhookDeliveryAttempt, office_id)
        .where(WebhookDeliveryAttempt.delivery_id == delivery_id)
        .order_by(WebhookDeliveryAttempt.number)
    )
    return list(await session.scalars(stmt))


def in_flight(delivery: WebhookDelivery, now: datetime) -> bool:
    """A worker holds it: claimed, and the lease (``next_retry_at``) not over at ``now``."""
    return (
        delivery.claim_token is not None
        and delivery.next_retry_at is not None
        and delivery.next_retry_at > now
    )


async def mark_for_retry(session: AsyncSession, office_id: str, ident: str, now: datetime) -> bool:
    """``FAILED``/``RETRYING`` and not held by a worker → ``PENDING`` due ``now``, atomically."""
    result = await session.execute(
        update(WebhookDelivery)
        .where(
            WebhookDelivery.office_id == office_id,
            WebhookDelivery.id == ident,
            WebhookDelivery.status.in_((FAILED, RETRYING)),
            or_(
                WebhookDelivery.claim_token.is_(None),
                WebhookDelivery.next_retry_at.is_(None),
                WebhookDelivery.next_retry_at <= now,
            ),
        )
        .values(status=PENDING, next_retry_at=now, claim_token=None)
        .execution_options(synchronize_session=False)
    )
    return bool(result.rowcount)  # type: ignore[attr-defined]


async def mark_failed_for_recovery(
    session: AsyncSession,
    office_id: str,
    webhook_id: str,
    since: datetime,
    until: datetime | None,
) -> int:
    """Every ``FAILED`` delivery of the webhook made in ``[since, until)`` → ``PENDING``, due
    at its own creation time (already past): the queue takes due rows by ``next_retry_at``,
    so they go out in the order their events happened (``until`` None: no end). One
    UPDATE: a second recovery finds them ``PENDING``, not ``FAILED``, and queues none twice."""
    result = await session.execute(
        update(WebhookDelivery)
        .where(
            WebhookDelivery.office_id == office_id,
            WebhookDelivery.webhook_id == webhook_id,
            WebhookDelivery.status == FAILED,
            WebhookDelivery.created_at >= since,
            WebhookDelivery.created_at < until if until is not None else true(),
        )
        .values(status=PENDING, next_retry_at=WebhookDelivery.created_at, claim_token=None)
        .execution_options(synchronize_session=False)
    )
    return int(result.rowcount)  # type: ignore[attr-defined]


async def events_missed_since(
    session: AsyncSession, webhook: Webhook, since: datetime, limit: int
) -> list[OutboxEvent]:
    """The office's events since ``since`` that the webhook subscribes to and has no
    delivery of (those recorded while it was paused), oldest first, at most ``limit``."""
    delivered = select(WebhookDelivery.id).where(
        WebhookDelivery.office_id == webhook.office_id,
        WebhookDelivery.webhook_id == webhook.id,
        WebhookDelivery.event_id == OutboxEvent.id,
    )
    stmt = (
        select(OutboxEvent)
        .where(
            OutboxEvent.office_id == webhook.office_id,
            OutboxEvent.created_at >= since,
            OutboxEvent.name.in_(list(webhook.events)),
            OutboxEvent.target_webhook_id.is_(None),
            ~delivered.exists(),
        )
        .order_by(OutboxEvent.created_at, OutboxEvent.id)
        .limit(limit)
    )
    return list(await session.scalars(stmt))


async def delivery_of_event(
    session: AsyncSession, office_id: str, webhook_id: str, event_id: str
) -> WebhookDelivery | None:
    stmt = scoped(WebhookDelivery, office_id).where(
        WebhookDelivery.webhook_id == webhook_id, WebhookDelivery.event_id == event_id
    )
    return (await session.scalars(stmt)).first()


async def mark_for_replay(session: AsyncSession, office_id: str, ident: str, now: datetime) -> bool:
    """Any finished delivery (``SUCCESS`` or ``FAILED``) or a waiting retry → ``PENDING`` due
    ``now``, unless a worker holds it; atomically, as ``mark_for_retry``."""
    result = await session.execute(
        update(WebhookDelivery)
        .where(
            WebhookDelivery.office_id == office_id,
            WebhookDelivery.id == ident,
            WebhookDelivery.status.in_((SUCCESS, FAILED, RETRYING)),
            or_(
                WebhookDelivery.claim_token.is_(None),
                WebhookDelivery.next_retry_at.is_(None),
                WebhookDelivery.next_retry_at <= now,
            ),
        )
        .values(status=PENDING, next_retry_at=now, claim_token=None)
        .execution_options(synchronize_session=False)
    )
    return bool(result.rowcount)  # type: ignore[attr-defined]


FAILING_PAUSE_AFTER = timedelta(days=5)

# The worker's queries: they span offices by nature (the queue), never serve a request.


async def active_webhooks_of(session: AsyncSession, office_ids: Sequence[str]) -> list[Webhook]:
    stmt = select(Webhook).where(Webhook.office_id.in_(office_ids), Webhook.is_active.is_(True))
    return list(await session.scalars(stmt))


async def webhooks_by_id(session: AsyncSession, ids: Sequence[str]) -> dict[str, Webhook]:
    if not ids:
        return {}
    return {w.id: w for w in await session.scalars(select(Webhook).where(Webhook.id.in_(ids)))}


OPEN = WebhookDelivery.status.in_(
    bindparam("open_statuses", list(OPEN_STATUSES), expanding=True, literal_execute=True)
)
"""``status IN ('PENDING', 'RETRYING')`` written out, as the due index's ``WHERE`` is: a
bound list would keep SQLite (and PostgreSQL's generic plans) from using the partial index
(``tests/test_query_plans.py``)."""


async def claim_due(
    session: AsyncSession,
    queue: WorkQueue,
    now: datetime,
    lease: timedelta,
    token: str,
    limit: int,
    *,
    full_urls: Sequence[str] = (),
) -> list[str]:
    """Leases up to ``limit`` due deliveries of active webhooks (``queue``: the one
    queue's statement) whose URL is not among ``full_urls``."""
    second = pace_second_of(now)
    where = [
        or_(Webhook.is_active.is_(True), WebhookDelivery.event == "webhook.test"),
        # A webhook whose pace is used up in this second waits for the next one.
        or_(
            Webhook.rate_limit_per_second.is_(None),
            Webhook.pace_second.is_(None),
            Webhook.pace_second != second,
            Webhook.pace_used < Webhook.rate_limit_per_second,
        ),
    ]
    if full_urls:
        where.append(Webhook.url.not_in(list(full_urls)))
    return list(
        await queue.claim(
            session,
            now,
            lease,
            token,
            limit,
            join=(Webhook, Webhook.id == WebhookDelivery.webhook_id),
            where=where,
        )
    )


def pace_second_of(now: datetime) -> int:
    return int(now.timestamp())


async def reserve_pace(
    session: AsyncSession, wanted: dict[str, int], second: int
) -> dict[str, int]:
    """How many of ``wanted[webhook_id]`` attempts may begin in ``second``, each paced
    webhook's count taken in its row: locked (PostgreSQL ``FOR NO KEY UPDATE``, which lets
    deliveries referring to it be inserted; SQLite: the claim already holds the write lock)
    until the claim commits, so workers in other processes count the same slots."""
    if not wanted:
        return {}
    stmt = (
        select(Webhook.id, Webhook.rate_limit_per_second, Webhook.pace_second, Webhook.pace_used)
        .where(Webhook.id.in_(sorted(wanted)))
        .order_by(Webhook.id)
        .with_for_update(key_share=True)
    )
    granted: dict[str, int] = {}
    for ident, limit, counted_second, used in (await session.execute(stmt)).all():
        if limit is None:
            granted[ident] = wanted[ident]
            continue
        used_now = used if counted_second == second else 0
        granted[ident] = max(0, min(wanted[ident], limit - used_now))
        await session.execute(
            update(Webhook)
            .where(Webhook.id == ident)
            .values(
                pace_second=second,
                pace_used=used_now + granted[ident],
                updated_at=Webhook.updated_at,  # the pace is no change of the webhook
            )
        )
    return granted


async def release(session: AsyncSession, ids: Sequence[str], token: str, due: datetime) -> None:
    """Claimed deliveries handed back unsent, due at ``due``; no attempt is counted."""
    if ids:
        await session.execute(
            update(WebhookDelivery)
            .where(WebhookDelivery.id.in_(list(ids)), WebhookDelivery.claim_token == token)
            .values(claim_token=None, next_retry_at=due)
            .execution_options(synchronize_session=False)
        )


async def claimed(session: AsyncSession, ids: Sequence[str], token: str) -> list[WebhookDelivery]:
    stmt = (
        select(WebhookDelivery)
        .where(WebhookDelivery.id.in_(ids), WebhookDelivery.claim_token == token)
        .order_by(WebhookDelivery.created_at, WebhookDelivery.id)
    )
    return list(await session.scalars(stmt))


async def begin_attempts(session: AsyncSession, attempts: list[dict[str, Any]]) -> None:
    """Counts and logs attempts as they begin (before any request is sent)."""
    if not attempts:
        return
    await session.execute(
        update(WebhookDelivery)
        .where(WebhookDelivery.id.in_([a["delivery_id"] for a in attempts]))
        .values(attempt_count=WebhookDelivery.attempt_count + 1)
        .execution_options(synchronize_session=False)
    )
    await session.execute(insert(WebhookDeliveryAttempt), attempts)


_DELIVERIES = cast(Table, WebhookDelivery.__table__)
_ATTEMPTS = cast(Table, WebhookDeliveryAttempt.__table__)


async def record_outcomes(
    session: AsyncSession, deliveries: list[dict[str, Any]], attempts: list[dict[str, Any]]
) -> None:
    """Writes attempts' outcomes: each delivery's only while ``b_token`` still holds it
    (a row taken over, or deleted, is left alone: no error), each attempt's by id."""
    if not deliveries:
        return
    names = [k for k in deliveries[0] if not k.startswith("b_")]
    await session.execute(
        update(_DELIVERIES)
        .where(
            _DELIVERIES.c.id == bindparam("b_id"),
            _DELIVERIES.c.claim_token == bindparam("b_token"),
            # Written out, not IN (…): an expanding list cannot go with executemany.
            or_(*(_DELIVERIES.c.status == literal(s) for s in OPEN_STATUSES)),
        )
        .values({n: bindparam(n) for n in names}),
        deliveries,
    )
    names = [k for k in attempts[0] if not k.startswith("b_")]
    await session.execute(
        update(_ATTEMPTS)
        .where(_ATTEMPTS.c.id == bindparam("b_id"))
        .values({n: bindparam(n) for n in names}),
        attempts,
    )


async def add_deliveries(session: AsyncSession, rows: list[dict[str, Any]]) -> None:
    """A delivery already made for the same (office, webhook, event) is left as it is."""
    await insert_ignoring_duplicates(session, WebhookDelivery, rows)


async def track_health(
    session: AsyncSession, succeeded: set[str], failed: set[str], now: datetime
) -> list[Webhook]:
    """Remembers when webhooks started failing; pauses one after 5 days of only failures.

    ``failed`` holds the webhooks with no success in this batch. Returns the webhooks this
    call paused (an active one, paused once: a second worker's UPDATE finds it inactive).
    """
    if succeeded:
        await session.execute(
            update(Webhook)
            .where(Webhook.id.in_(sorted(succeeded)), Webhook.failing_since.is_not(None))
            .values(failing_since=None)
        )
    if not failed:
        return []
    ids = sorted(failed)
    await session.execute(
        update(Webhook)
        .where(Webhook.id.in_(ids), Webhook.failing_since.is_(None))
        .values(failing_since=now)
    )
    days = FAILING_PAUSE_AFTER.days
    paused = await session.scalars(
        update(Webhook)
        .where(
            Webhook.id.in_(ids),
            Webhook.is_active.is_(True),
            Webhook.failing_since <= now - FAILING_PAUSE_AFTER,
        )
        .values(
            is_active=False,
            disabled_reason=f"Paused automatically: every delivery failed for {days} days "
            f"(last failure at {isoformat(now)}). Fix the endpoint, then set isActive to true.",
            updated_at=now,
        )
        .returning(Webhook)
        .execution_options(populate_existing=True)
    )
    return list(paused)


async def purge_expired(session: AsyncSession, now: datetime, limit: int) -> int:
    ids = select(WebhookDelivery.id).where(WebhookDelivery.expires_at <= now).limit(limit)
    found = list(await session.scalars(ids))
    if not found:
        return 0
    await session.execute(
        delete(WebhookDeliveryAttempt).where(WebhookDeliveryAttempt.delivery_id.in_(found))
    )
    await session.execute(delete(WebhookDelivery).where(WebhookDelivery.id.in_(found)))
    return len(found)


async def purge_logs_before(
    session: AsyncSession, office_id: str, before: datetime, limit: int
) -> int:
    """Deletes up to ``limit`` of the office's finished webhook and ``FIRE_WEBHOOK``
    delivery logs (with their attempts) made at or before ``before``; a delivery still
    pending or retrying stays. Rows another worker holds are skipped (PostgreSQL)."""
    removed = 0
    for model in (WebhookDelivery, ActionDelivery):
        table: Any = model.__table__
        stmt = (
            select(table.c.id)
            .where(
                table.c.office_id == office_id,
                table.c.created_at <= before,
                table.c.status.not_in(("PENDING", "RETRYING")),
            )
            .limit(limit - removed)
        )
        ids = list(await session.scalars(lock_skipping(session, stmt)))
        if ids:
            await _forget(session, model, table.c.id.in_(ids))
        removed += len(ids)
        if removed >= limit:
            break
    return removed


async def forget_deliveries(
    session: AsyncSession, office_id: str, event_ids: Sequence[str], mentions: Sequence[str]
) -> None:
    """Deletes the office's webhook and ``FIRE_WEBHOOK`` deliveries (with their attempts
    and the receivers' answers) of these events or whose payload names any of
    ``mentions``: an erasure."""
    for model in (WebhookDelivery, ActionDelivery):
        table: Any = model.__table__
        for chunk in batches(sorted(event_ids), 500):
            await _forget(
                session, model, table.c.office_id == office_id, table.c.event_id.in_(chunk)
            )
        for chunk in batches(sorted(mentions)):
            await _forget(
                session, model, table.c.office_id == office_id, mentioning(table.c.payload, chunk)
            )


async def _forget(session: AsyncSession, model: Any, *where: Any) -> None:
    ids = list(await session.scalars(select(model.id).where(*where)))
    for chunk in batches(ids, 500):
        if model is WebhookDelivery:
            await session.execute(
                delete(WebhookDeliveryAttempt).where(WebhookDeliveryAttempt.delivery_id.in_(chunk))
            )
        await session.execute(delete(model).where(model.id.in_(chunk)))
