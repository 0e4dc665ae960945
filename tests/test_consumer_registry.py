"""Outbox consumers register themselves (``officehub.events.registry``): ``events`` names
none of them (the import contract in ``pyproject.toml`` holds that ``events`` imports no
consumer package); a consumer registered from outside gets the events it wants through the
outbox and the worker's own job list, once each; a process with no consumer registered
refuses to emit."""

from __future__ import annotations

from collections.abc import Sequence

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.events import registry
from officehub.events.consumers import Consumer
from officehub.events.models import ConsumerEvent, OutboxEvent
from officehub.events.service import emit
from officehub.jobs import queue_jobs
from officehub.kit.config import Settings
from officehub.kit.timeutil import utcnow
from officehub.kit.worker import Worker, WorkerContext
from tests.helpers import OfficeFixture

WANTED = "contact.created"


async def test_a_consumer_registered_outside_events_gets_its_events_through_the_outbox(
    app: FastAPI, client: httpx.AsyncClient, settings: Settings, office_a: OfficeFixture
) -> None:
    received: list[tuple[str, str, str]] = []

    async def handle(session: AsyncSession, event: OutboxEvent, ctx: WorkerContext) -> None:
        received.append((event.office_id, event.name, event.data["id"]))

    async def wants(session: AsyncSession, events: Sequence[OutboxEvent]) -> list[bool]:
        return [e.name == WANTED for e in events]

    audit = registry.Registration(
        Consumer("audit_trail", handle), wants, f"CAST(:name AS TEXT) = '{WANTED}'"
    )
    registry.register(audit)
    try:
        created = await client.post("/people", json={"name": "Ana"}, headers=office_a.headers)
        assert created.status_code == 201, created.text
        contact_id = created.json()["id"]
        updated = await client.patch(
            f"/people/{contact_id}", json={"name": "Ana Lima"}, headers=office_a.headers
        )
        assert updated.status_code == 200, updated.text
        async with app.state.sessionmaker() as s:
            rows = list(
                await s.execute(
                    select(OutboxEvent.name)
                    .join(ConsumerEvent, ConsumerEvent.event_id == OutboxEvent.id)
                    .where(ConsumerEvent.consumer == "audit_trail")
                )
            )
        assert [name for (name,) in rows] == [WANTED]  # contact.updated: no progress row

        ctx = WorkerContext(
            settings, app.state.engine, app.state.sessionmaker, clock=utcnow, worker_id="t"
        )
        worker = Worker(ctx, queue_jobs())  # the worker's own job list runs it
        await worker.run_until_idle()
        await worker.run_until_idle()
        assert received == [(office_a.id, WANTED, contact_id)]
        async with app.state.sessionmaker() as s:
            done = await s.scalars(
                select(ConsumerEvent.done_at).where(ConsumerEvent.consumer == "audit_trail")
            )
            assert [d is not None for d in done] == [True]
    finally:
        registry.unregister("audit_trail")


async def test_a_consumer_name_is_registered_once(app: FastAPI) -> None:
    [webhooks, *_] = registry.registered()
    registry.register(webhooks)  # the same again: nothing changes
    assert [r.name for r in registry.registered()] == ["webhooks", "automation", "flows"]
    other = registry.Registration(webhooks.consumer, webhooks.wants, "TRUE")
    with pytest.raises(ValueError, match="another consumer"):
        registry.register(other)


async def test_a_consumer_reads_only_its_own_sql_parameters(app: FastAPI) -> None:
    [webhooks, *_] = registry.registered()
    stray = registry.Registration(
        Consumer("audit_trail", webhooks.consumer.handle), webhooks.wants, ":flows_wanted"
    )
    with pytest.raises(ValueError, match="must start with audit_trail_"):
        registry.register(stray)
    assert "audit_trail" not in [r.name for r in registry.registered()]


async def test_emit_refuses_when_no_consumer_is_registered(
    app: FastAPI, office_a: OfficeFixture
) -> None:
    wired = registry.registered()
    for registration in wired:
        registry.unregister(registration.name)
    try:
        async with app.state.sessionmaker() as s:
            with pytest.raises(
                registry.ConsumersNotWired, match=r"hook_subscriptions\.install\(\)"
            ):
                await emit(s, office_a.id, WANTED, {"id": "c0000000000subject"})
            await s.rollback()
    finally:
        for registration in wired:
            registry.register(registration)
    assert registry.registered() == wired
