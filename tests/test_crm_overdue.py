"""crm.lead.overdue: once per stay past the column's limit, from a job run once per interval."""

from __future__ import annotations

from datetime import datetime, timedelta

import httpx
from fastapi import FastAPI
from sqlalchemy import select, text
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.crm.models import Card
from officehub.crm.overdue import OVERDUE_JOB
from officehub.crm.repository import due_cards
from officehub.jobs import periodic_jobs
from officehub.kit.config import Settings
from officehub.kit.timeutil import utcnow
from officehub.kit.worker import Worker, WorkerContext
from tests.crm_world import World, make_world
from tests.helpers import OfficeFixture, outbox


class Clock:
    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now


def _workers(app: FastAPI, settings: Settings, clock: Clock) -> list[Worker]:
    # The clock runs days ahead of the events' real creation times: the outbox keeps them
    # past the test's span (an event no consumer wants is otherwise purged after 7 days).
    settings = settings.model_copy(update={"outbox_retention_days": 30})
    return [
        Worker(
            WorkerContext(
                settings, app.state.engine, app.state.sessionmaker, clock=clock, worker_id=name
            ),
            [],
            periodic_jobs(),
        )
        for name in ("one", "two")
    ]


async def _run_all(workers: list[Worker]) -> None:
    for worker in workers:
        await worker.run_once()


async def _limited_world(
    client: httpx.AsyncClient, session: AsyncSession, office: OfficeFixture
) -> tuple[World, str]:
    world = await make_world(session, office.id)
    for column in world.columns[:2]:
        response = await client.patch(
            f"/funnel-column/{column.id}",
            json={"timeLimitDays": 3, "showBadgeProgress": True},
            headers=office.headers,
        )
        assert response.status_code == 200
    card = await client.post(
        "/funnel-column-card",
        json={"columnId": world.columns[0].id, "personId": world.contact.id},
        headers=office.headers,
    )
    assert card.status_code == 201
    assert card.json()["timeLimitDays"] == 3 and card.json()["showBadgeProgress"] is True
    return world, card.json()["id"]


async def test_the_overdue_job_is_registered() -> None:
    assert OVERDUE_JOB in periodic_jobs()


async def test_overdue_is_emitted_once_per_stay(
    app: FastAPI,
    client: httpx.AsyncClient,
    session: AsyncSession,
    settings: Settings,
    office_a: OfficeFixture,
) -> None:
    world, card_id = await _limited_world(client, session, office_a)
    clock = Clock(utcnow())
    workers = _workers(app, settings, clock)

    await _run_all(workers)
    clock.now += timedelta(days=2, hours=23)
    await _run_all(workers)
    assert await outbox(app, office_a.id, "crm.lead.overdue") == []

    clock.now += timedelta(hours=2)  # past the three days
    await _run_all(workers)
    await _run_all(workers)
    [event] = await outbox(app, office_a.id, "crm.lead.overdue")
    assert event.data["id"] == card_id
    assert event.data["columnId"] == world.columns[0].id
    assert event.data["timeLimitDays"] == 3

    for _ in range(3):  # later intervals: still the same stay
        clock.now += timedelta(days=1)
        await _run_all(workers)
    assert len(await outbox(app, office_a.id, "crm.lead.overdue")) == 1

    for column in (world.columns[1], world.columns[0]):  # leaves and comes back: a new stay
        moved = await client.patch(
            f"/funnel-column-card/{card_id}", json={"columnId": column.id}, headers=office_a.headers
        )
        assert moved.status_code == 200
    for _ in range(2):  # the clock is days past the new stay's limit too
        clock.now += timedelta(days=1)
        await _run_all(workers)
    events = await outbox(app, office_a.id, "crm.lead.overdue")
    assert len(events) == 2
    assert events[1].data["columnChangedAt"] > events[0].data["columnChangedAt"]


async def test_a_column_without_limit_or_closing_reports_nothing(
    app: FastAPI,
    client: httpx.AsyncClient,
    session: AsyncSession,
    settings: Settings,
    office_a: OfficeFixture,
) -> None:
    world, card_id = await _limited_world(client, session, office_a)
    closing = await client.patch(
        f"/funnel-column/{world.columns[0].id}", json={"kind": "WON"}, headers=office_a.headers
    )
    assert closing.status_code == 200
    clock = Clock(utcnow() + timedelta(days=10))
    await _run_all(_workers(app, settings, clock))
    assert await outbox(app, office_a.id, "crm.lead.overdue") == []
    reopened = await client.patch(
        f"/funnel-column/{world.columns[0].id}", json={"kind": "NORMAL"}, headers=office_a.headers
    )
    assert reopened.status_code == 200
    card = await session.scalar(select(Card).where(Card.id == card_id))
    assert card is not None and card.overdue_at is not None
    assert card.overdue_at == card.column_changed_at + timedelta(days=3)
    clock.now += timedelta(minutes=5)
    await _run_all(_workers(app, settings, clock))
    assert len(await outbox(app, office_a.id, "crm.lead.overdue")) == 1


async def test_the_overdue_job_finds_due_cards_through_its_index(session: AsyncSession) -> None:
    stmt = due_cards(utcnow(), 200)
    bind = session.get_bind()
    sql = str(stmt.compile(bind, compile_kwargs={"literal_binds": True}))
    if bind.dialect.name == "postgresql":
        await session.execute(text("SET LOCAL enable_seqscan = off"))  # tiny tables
        plan = (await session.execute(text(f"EXPLAIN {sql}"))).scalars().all()
    else:
        plan = [row[-1] for row in await session.execute(text(f"EXPLAIN QUERY PLAN {sql}"))]
    assert any("ix_crm_cards_overdue_due" in line for line in plan), plan
    assert not any("Seq Scan" in line or line.startswith("SCAN crm_cards") for line in plan), plan
