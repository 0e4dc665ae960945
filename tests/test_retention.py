"""Retention (issue 30): closed conversations and webhook delivery logs removed by the worker
after the office's periods (``GET|PATCH /office`` ``retentionDays``): docs/lgpd.md."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.audit.models import AuditEntry
from officehub.audit.service import first_break
from officehub.contacts.jobs import JOBS as ERASURE_JOBS
from officehub.conversations.jobs import JOBS
from officehub.conversations.models import Conversation, ConversationNote
from officehub.conversations.retention import RETENTION_JOB, RUN_JOB, run_batch
from officehub.events.models import OutboxEvent
from officehub.kit.config import Settings
from officehub.kit.ids import new_id
from officehub.kit.scheduled_jobs import ScheduledJob, add_job, handlers_of, scheduled_runner
from officehub.kit.storage import storage_from_settings
from officehub.kit.timeutil import utcnow
from officehub.kit.worker import Worker, WorkerContext
from officehub.messages.models import Message
from officehub.webhooks.models import Webhook, WebhookDelivery
from tests import factories as f
from tests.helpers import OfficeFixture, error_of

DAY = timedelta(days=1)


def retention_worker(app: FastAPI, settings: Settings, now: datetime) -> Worker:
    """The retention job and the queue's scheduled jobs, on a clock that says ``now``."""
    ctx = WorkerContext(
        settings,
        app.state.engine,
        app.state.sessionmaker,
        clock=lambda: now,
        database_clock=False,
    )
    return Worker(ctx, [scheduled_runner(handlers_of([ERASURE_JOBS, JOBS]))], [RETENTION_JOB])


async def _chunks(data: bytes) -> AsyncIterator[bytes]:
    yield data


@dataclass
class Arranged:
    person_id: str
    conversation_id: str
    media_key: str


async def a_conversation(
    client: httpx.AsyncClient,
    session: AsyncSession,
    settings: Settings,
    office: OfficeFixture,
    *,
    name: str,
    closed_at: datetime | None,
) -> Arranged:
    """A client's conversation with a message carrying a stored photo and a note; closed
    through the API (so its events name it) and then dated ``closed_at``, or left open."""
    inbox = await f.make_inbox(session, office.id, f"Caixa {name}")
    integration = await f.make_integration(session, office.id, inbox.id)
    contact = await f.make_contact(session, office.id, name=name, phone=None)
    conversation = await f.make_conversation(session, office.id, contact.id, integration)
    message_id = new_id()
    key = f"inbound-media/{office.id}/{message_id}/foto.jpg"
    await storage_from_settings(settings).save(key, _chunks(b"FOTO " + name.encode()), 10_000)
    session.add(
        Message(
            id=message_id,
            office_id=office.id,
            conversation_id=conversation.id,
            direction="INBOUND",
            type="MEDIA",
            text=f"foto de {name}",
            media_url=f"{settings.public_url}/media/{key}",
            status="RECEIVED",
            created_at=utcnow(),
        )
    )
    await session.commit()
    note = await client.post(
        "/conversation/note",
        json={"conversationId": conversation.id, "text": f"nota sobre {name}"},
        headers=office.headers,
    )
    assert note.status_code == 201, note.text
    if closed_at is not None:
        r = await client.patch(
            f"/conversation/{conversation.id}", json={"status": "CLOSED"}, headers=office.headers
        )
        assert r.status_code == 200, r.text
        stamped = await session.scalar(
            select(Conversation.closed_at).where(Conversation.id == conversation.id)
        )
        assert stamped is not None  # closing stamps closed_at
        await session.execute(
            update(Conversation)
            .where(Conversation.id == conversation.id)
            .values(closed_at=closed_at)
        )
        await session.commit()
    return Arranged(contact.id, conversation.id, key)


async def rows_of(session: AsyncSession, model: Any, conversation_id: str) -> int:
    session.expire_all()
    count = await session.scalar(
        select(func.count()).select_from(model).where(model.conversation_id == conversation_id)
    )
    return int(count or 0)


async def conversation_exists(session: AsyncSession, ident: str) -> bool:
    session.expire_all()
    return (await session.get(Conversation, ident, populate_existing=True)) is not None


async def a_delivery(session: AsyncSession, office_id: str, webhook_id: str, at: datetime) -> str:
    delivery = WebhookDelivery(
        id=new_id(),
        office_id=office_id,
        webhook_id=webhook_id,
        event_id=new_id(),
        event="contact.updated",
        payload={"id": "x"},
        status="DELIVERED",
        attempt_count=1,
        created_at=at,
        expires_at=at + timedelta(days=365),
    )
    session.add(delivery)
    await session.commit()
    return delivery.id


async def a_webhook(session: AsyncSession, office_id: str) -> str:
    hook = Webhook(
        office_id=office_id,
        name="espelho",
        url="https://receptor.exemplo.com.br/hook",
        secret="s" * 32,
        events=["contact.updated"],
        is_active=True,
    )
    session.add(hook)
    await session.commit()
    return hook.id


async def set_retention(
    client: httpx.AsyncClient, office: OfficeFixture, **periods: int | None
) -> dict[str, Any]:
    r = await client.patch("/office", json={"retentionDays": periods}, headers=office.headers)
    assert r.status_code == 200, r.text
    body: dict[str, Any] = r.json()
    return body


# The settings


async def test_retention_is_off_by_default_and_set_per_period(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    r = await client.get("/office", headers=office_a.headers)
    assert r.json()["retentionDays"] == {"closedConversations": None, "webhookDeliveries": None}
    body = await set_retention(client, office_a, closedConversations=30)
    assert body["retentionDays"] == {"closedConversations": 30, "webhookDeliveries": None}
    body = await set_retention(client, office_a, webhookDeliveries=7)
    assert body["retentionDays"] == {"closedConversations": 30, "webhookDeliveries": 7}
    body = await set_retention(client, office_a, closedConversations=None)
    assert body["retentionDays"] == {"closedConversations": None, "webhookDeliveries": 7}
    r = await client.patch("/office", json={"retentionDays": None}, headers=office_a.headers)
    assert r.json()["retentionDays"] == {"closedConversations": None, "webhookDeliveries": None}


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"retentionDays": {"closedConversations": 0}}, "retentionDays.closedConversations"),
        ({"retentionDays": {"closedConversations": 3651}}, "retentionDays.closedConversations"),
        ({"retentionDays": {"webhookDeliveries": -1}}, "retentionDays.webhookDeliveries"),
        ({"retentionDays": {"webhookDeliveries": "30"}}, "retentionDays.webhookDeliveries"),
        ({"retentionDays": {"closedConversations": 1.5}}, "retentionDays.closedConversations"),
        ({"retentionDays": 30}, "retentionDays"),
    ],
)
async def test_bad_retention_periods_are_400_naming_the_field_and_change_nothing(
    client: httpx.AsyncClient, office_a: OfficeFixture, body: dict[str, Any], field: str
) -> None:
    r = await client.patch("/office", json=body, headers=office_a.headers)
    assert r.status_code == 400, r.text
    assert field in error_of(r)["details"]
    after = (await client.get("/office", headers=office_a.headers)).json()
    assert after["retentionDays"] == {"closedConversations": None, "webhookDeliveries": None}
    assert after["updatedAt"] is None


# The run


async def test_retention_erases_old_closed_conversations_and_keeps_the_rest(
    app: FastAPI,
    client: httpx.AsyncClient,
    session: AsyncSession,
    settings: Settings,
    office_a: OfficeFixture,
) -> None:
    now = utcnow() + timedelta(days=400)
    await set_retention(client, office_a, closedConversations=30)
    old = await a_conversation(
        client, session, settings, office_a, name="Antigo", closed_at=now - 31 * DAY
    )
    recent = await a_conversation(
        client, session, settings, office_a, name="Recente", closed_at=now - 29 * DAY
    )
    still_open = await a_conversation(
        client, session, settings, office_a, name="Aberto", closed_at=None
    )
    held = await a_conversation(
        client, session, settings, office_a, name="Guardado", closed_at=now - 90 * DAY
    )
    r = await client.put(
        f"/people/{held.person_id}/legal-hold",
        json={"legalHold": True, "legalHoldReason": "processo em curso"},
        headers=office_a.headers,
    )
    assert r.status_code == 200, r.text
    storage = storage_from_settings(settings)
    assert await storage.exists(old.media_key)

    assert await retention_worker(app, settings, now).run_until_idle() > 0

    assert not await conversation_exists(session, old.conversation_id)
    assert await rows_of(session, Message, old.conversation_id) == 0
    assert await rows_of(session, ConversationNote, old.conversation_id) == 0
    assert not await storage.exists(old.media_key)
    naming = await session.scalar(
        select(func.count())
        .select_from(OutboxEvent)
        .where(
            OutboxEvent.office_id == office_a.id, OutboxEvent.conversation_id == old.conversation_id
        )
    )
    assert naming == 0
    # The client stays: only the conversation's content goes.
    assert (
        await client.get(f"/people/{old.person_id}", headers=office_a.headers)
    ).status_code == 200
    for kept in (recent, still_open, held):
        assert await conversation_exists(session, kept.conversation_id)
        assert await rows_of(session, Message, kept.conversation_id) == 1
        assert await storage.exists(kept.media_key)


async def test_retention_deletes_old_webhook_delivery_logs(
    app: FastAPI,
    client: httpx.AsyncClient,
    session: AsyncSession,
    settings: Settings,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    now = utcnow()
    await set_retention(client, office_a, webhookDeliveries=7)
    hook = await a_webhook(session, office_a.id)
    old = await a_delivery(session, office_a.id, hook, now - 8 * DAY)
    recent = await a_delivery(session, office_a.id, hook, now - 6 * DAY)
    other_hook = await a_webhook(session, office_b.id)
    others = await a_delivery(session, office_b.id, other_hook, now - 300 * DAY)

    await retention_worker(app, settings, now).run_until_idle()

    session.expire_all()
    left = set(await session.scalars(select(WebhookDelivery.id)))
    assert old not in left
    assert {recent, others} <= left  # office B set no period


async def test_retention_runs_in_batches_and_writes_one_audit_entry_with_counts(
    app: FastAPI,
    client: httpx.AsyncClient,
    session: AsyncSession,
    settings: Settings,
    office_a: OfficeFixture,
) -> None:
    settings = settings.model_copy(update={"retention_batch_size": 2})
    now = utcnow() + timedelta(days=400)
    await set_retention(client, office_a, closedConversations=30, webhookDeliveries=10)
    erased = [
        await a_conversation(
            client, session, settings, office_a, name=f"Cliente {n}", closed_at=now - 40 * DAY
        )
        for n in range(3)
    ]
    hook = await a_webhook(session, office_a.id)
    for _ in range(2):
        await a_delivery(session, office_a.id, hook, now - 20 * DAY)

    await retention_worker(app, settings, now).run_until_idle()

    for gone in erased:
        assert not await conversation_exists(session, gone.conversation_id)
    session.expire_all()
    entries = list(
        await session.scalars(
            select(AuditEntry).where(
                AuditEntry.office_id == office_a.id, AuditEntry.action == "applyRetention"
            )
        )
    )
    [entry] = entries
    assert (entry.actor_kind, entry.actor_id, entry.actor_address) == (
        "system",
        "worker:retention",
        "",
    )
    assert entry.details == {
        "closedConversations": 3,
        "webhookDeliveries": 2,
        "closedConversationsDays": 30,
        "webhookDeliveriesDays": 10,
    }
    assert entry.person_id is None and entry.record_id is None
    r = await client.get(
        "/audit-log", params={"action": "applyRetention"}, headers=office_a.headers
    )
    assert r.status_code == 200, r.text
    [shown] = r.json()["data"]
    assert shown["actor"] == {"kind": "system", "id": "worker:retention", "address": ""}
    assert shown["details"]["closedConversations"] == 3
    checked, broken = await first_break(session, office_a.id)
    assert broken is None and checked > 0  # the details are in the entry's hash


async def test_one_offices_failing_run_does_not_stop_the_others(
    app: FastAPI,
    client: httpx.AsyncClient,
    session: AsyncSession,
    settings: Settings,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    now = utcnow() + timedelta(days=400)
    for office in (office_a, office_b):
        await set_retention(client, office, closedConversations=30)
    a = await a_conversation(
        client, session, settings, office_a, name="Cliente A", closed_at=now - 40 * DAY
    )
    b = await a_conversation(
        client, session, settings, office_b, name="Cliente B", closed_at=now - 40 * DAY
    )
    # Office A's queued run is broken (its counts are not numbers): it fails and is retried
    # on the queue's backoff; the periodic job queues no second run beside it.
    broken = add_job(session, office_a.id, RUN_JOB, {"closedConversations": "x"}, now, now).id
    await session.commit()

    await retention_worker(app, settings, now).run_until_idle()

    assert await conversation_exists(session, a.conversation_id)
    assert not await conversation_exists(session, b.conversation_id)
    session.expire_all()
    failed = await session.get(ScheduledJob, broken, populate_existing=True)
    assert failed is not None and failed.attempts == 1 and failed.done_at is None


async def test_two_workers_running_at_once_never_erase_a_conversation_twice(
    app: FastAPI,
    client: httpx.AsyncClient,
    session: AsyncSession,
    settings: Settings,
    office_a: OfficeFixture,
) -> None:
    now = utcnow() + timedelta(days=400)
    await set_retention(client, office_a, closedConversations=30)
    arranged = [
        await a_conversation(
            client, session, settings, office_a, name=f"Cliente {n}", closed_at=now - 40 * DAY
        )
        for n in range(4)
    ]
    jobs = [add_job(session, office_a.id, RUN_JOB, {}, now, now).id for _ in range(2)]
    await session.commit()
    ctx = WorkerContext(
        settings, app.state.engine, app.state.sessionmaker, clock=lambda: now, database_clock=False
    )

    async def run(job_id: str) -> None:
        # As the queue's runner does: the job's row written first (its lock), then the run.
        async with app.state.sessionmaker() as s, s.begin():
            await s.execute(
                update(ScheduledJob).where(ScheduledJob.id == job_id).values(claim_token=job_id)
            )
            job = await s.get(ScheduledJob, job_id)
            assert job is not None
            await run_batch(s, job, ctx)

    await asyncio.gather(*(run(job_id) for job_id in jobs))

    for gone in arranged:
        assert not await conversation_exists(session, gone.conversation_id)
    session.expire_all()
    details = list(
        await session.scalars(
            select(AuditEntry.details).where(
                AuditEntry.office_id == office_a.id, AuditEntry.action == "applyRetention"
            )
        )
    )
    assert len(details) == 2
    assert sum(d["closedConversations"] for d in details if d) == len(arranged)


def test_the_worker_runs_the_retention_job() -> None:
    from officehub.jobs import periodic_jobs

    assert RETENTION_JOB in periodic_jobs()
