"""The reactive core: per-consumer progress, order per conversation, act once, wake-up,
leases after a crash, durable scheduled work, outbox and run-log retention."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import httpx
from fastapi import FastAPI
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.automation.consumer import RUNS_PURGE_JOB
from officehub.automation.models import AutomationRun
from officehub.events import repository as events_repository
from officehub.events.models import ConsumerEvent, OutboxEvent
from officehub.events.retention import OUTBOX_PURGE_JOB
from officehub.events.service import emit
from officehub.kit.config import Settings
from officehub.kit.scheduled_jobs import ScheduledJob
from officehub.kit.worker import WorkerContext
from tests import factories as f
from tests.automation_helpers import automation_worker, create_rule, runs
from tests.crm_world import make_world
from tests.helpers import OfficeFixture
from tests.webhook_helpers import Clock

LATER = [{"action": "SCHEDULE_MESSAGE", "actionParams": {"text": "depois", "delayMinutes": 600}}]


async def _conversations(session: AsyncSession, office_id: str, count: int) -> list[str]:
    world = await make_world(session, office_id)
    ids = [world.conversation.id]
    for n in range(count - 1):
        contact = await f.make_contact(session, office_id, name=f"C {n}", phone=None)
        ids.append(
            (await f.make_conversation(session, office_id, contact.id, world.integration)).id
        )
    await session.commit()
    return ids


async def _emit_messages(
    app: FastAPI, office_id: str, conversations: list[str], per_conversation: int
) -> list[str]:
    """``per_conversation`` chat.message.received events for each, interleaved."""
    ids: list[str] = []
    async with app.state.sessionmaker() as s:
        for n in range(per_conversation):
            for conversation in conversations:
                event = await emit(
                    s,
                    office_id,
                    "chat.message.received",
                    {"text": f"m{n}", "conversationId": conversation},
                    conversation_id=conversation,
                )
                ids.append(event.id)
        await s.commit()
    return ids


def _ctx(app: FastAPI, settings: Settings, clock: Clock, name: str = "t") -> WorkerContext:
    return WorkerContext(
        settings, app.state.engine, app.state.sessionmaker, clock=clock, worker_id=name
    )


async def test_every_event_gets_a_progress_row_per_consumer_in_its_transaction(
    app: FastAPI, office_a: OfficeFixture
) -> None:
    """Rows for the consumers that want the event (here flows: an inbound message),
    written with it: a rolled-back event leaves none."""
    async with app.state.sessionmaker() as s:
        kept = (
            await emit(
                s,
                office_a.id,
                "chat.message.received",
                {"id": "c1234567890"},
                conversation_id="c0000000000conversation",
            )
        ).id
        await s.commit()
        await emit(
            s,
            office_a.id,
            "chat.message.received",
            {"id": "c1234567891"},
            conversation_id="c0000000000conversation",
        )
        await s.rollback()
        rows = list(await s.scalars(select(ConsumerEvent)))
    assert sorted((r.consumer, r.event_id, r.done_at) for r in rows) == [("flows", kept, None)]


async def test_one_conversations_events_are_claimed_one_at_a_time_in_order(
    app: FastAPI, settings: Settings, session: AsyncSession, office_a: OfficeFixture
) -> None:
    x, y = await _conversations(session, office_a.id, 2)
    ids = await _emit_messages(app, office_a.id, [x, y], 3)
    clock = Clock()
    now = clock()
    async with app.state.sessionmaker() as s, s.begin():
        first = await events_repository.claim(s, "flows", now, now + timedelta(minutes=1), "a", 50)
        again = await events_repository.claim(s, "flows", now, now + timedelta(minutes=1), "b", 50)
        by_seq = {r.seq: r.event_id for r in await s.scalars(select(ConsumerEvent))}
    assert [by_seq[q] for q in first] == ids[:2]  # x's first and y's first, nothing more
    assert again == []
    async with app.state.sessionmaker() as s, s.begin():
        await events_repository.finish(s, first[0], now)
        nxt = await events_repository.claim(s, "flows", now, now + timedelta(minutes=1), "c", 50)
    assert [by_seq[q] for q in nxt] == [ids[2]]  # x's second, once x's first is done


async def test_rule_runs_follow_event_order_within_each_conversation(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    conversations = await _conversations(session, office_a.id, 3)
    rule = await create_rule(client, office_a, actions=LATER)
    ids = await _emit_messages(app, office_a.id, conversations, 4)
    await automation_worker(app, settings, Clock()).run_until_idle()
    logged = list(
        reversed(
            (
                await client.get(
                    f"/automation-rules/{rule['id']}/runs",
                    params={"limit": 100},
                    headers=office_a.headers,
                )
            ).json()["data"]
        )
    )
    assert sorted(r["eventId"] for r in logged) == sorted(ids)
    for conversation in conversations:
        mine = [r["eventId"] for r in logged if r["conversationId"] == conversation]
        assert mine == [e for e in ids if e in set(mine)]


async def test_concurrent_workers_run_each_rule_once_per_event(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    conversations = await _conversations(session, office_a.id, 5)
    await create_rule(client, office_a, actions=LATER)
    await create_rule(client, office_a, actions=LATER, priority=2)
    ids = await _emit_messages(app, office_a.id, conversations, 8)
    clock = Clock()
    workers = [automation_worker(app, settings, clock, name=f"w{n}") for n in range(8)]
    await asyncio.gather(*(w.run_until_idle() for w in workers))
    await automation_worker(app, settings, clock).run_until_idle()
    async with app.state.sessionmaker() as s:
        run_events = list(await s.scalars(select(AutomationRun.event_id)))
        jobs = await s.scalar(select(func.count()).select_from(ScheduledJob))
        undone = await s.scalar(
            select(func.count()).select_from(ConsumerEvent).where(ConsumerEvent.done_at.is_(None))
        )
    assert sorted(run_events) == sorted(ids * 2)
    assert jobs == len(ids) * 2 and undone == 0


async def test_a_dead_workers_claim_is_taken_over_when_its_lease_ends(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    [conversation] = await _conversations(session, office_a.id, 1)
    rule = await create_rule(client, office_a, actions=LATER)
    [event_id] = await _emit_messages(app, office_a.id, [conversation], 1)
    clock = Clock()
    now = clock()
    async with app.state.sessionmaker() as s, s.begin():  # a worker claims, then dies
        assert await events_repository.claim(
            s, "automation", now, now + timedelta(seconds=60), "dead", 50
        )
    await automation_worker(app, settings, clock).run_until_idle()
    assert await runs(client, office_a, rule["id"]) == []
    clock.advance(seconds=61)
    await automation_worker(app, settings, clock).run_until_idle()
    assert [r["eventId"] for r in await runs(client, office_a, rule["id"])] == [event_id]


async def test_a_running_worker_wakes_when_an_event_commits_not_at_the_next_poll(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    [conversation] = await _conversations(session, office_a.id, 1)
    rule = await create_rule(client, office_a, actions=LATER)
    settings.worker_poll_seconds = 60.0
    worker = automation_worker(app, settings)
    task = asyncio.create_task(worker.run())
    try:
        async with asyncio.timeout(5):
            await worker.idle.wait()  # idle: waiting on the wake-up or the 60 s poll
        r = await client.post(
            f"/conversation/{conversation}/messages/inbound",
            json={"text": "oi"},
            headers=office_a.headers,
        )
        assert r.status_code == 201
        async with asyncio.timeout(5):
            while not await runs(client, office_a, rule["id"]):  # noqa: ASYNC110
                await asyncio.sleep(0.02)
    finally:
        worker.stop()
        await task


async def test_dispatched_outbox_events_are_purged_after_the_retention(
    app: FastAPI, settings: Settings, office_a: OfficeFixture
) -> None:
    async with app.state.sessionmaker() as s:
        old = await emit(s, office_a.id, "crm.lead.created", {"id": "c1234567890"})
        await s.commit()
    clock = Clock()
    await automation_worker(app, settings, clock).run_until_idle()
    async with app.state.sessionmaker() as s:
        pending = await emit(s, office_a.id, "crm.lead.created", {"id": "c1234567891"})
        await s.commit()
    clock.advance(days=settings.outbox_retention_days, seconds=1)
    ctx = _ctx(app, settings, clock)
    await OUTBOX_PURGE_JOB.run(ctx)
    async with app.state.sessionmaker() as s:
        left = set(await s.scalars(select(OutboxEvent.id)))
    assert old.id not in left
    assert pending.id in left  # not yet processed by every consumer: kept


async def test_recent_processed_events_are_kept(
    app: FastAPI, settings: Settings, office_a: OfficeFixture
) -> None:
    async with app.state.sessionmaker() as s:
        event = await emit(s, office_a.id, "crm.lead.created", {"id": "c1234567890"})
        await s.commit()
    clock = Clock()
    await automation_worker(app, settings, clock).run_until_idle()
    clock.advance(days=settings.outbox_retention_days - 1)
    await OUTBOX_PURGE_JOB.run(_ctx(app, settings, clock))
    async with app.state.sessionmaker() as s:
        assert await s.get(OutboxEvent, event.id) is not None


async def test_run_log_is_kept_30_days(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    [conversation] = await _conversations(session, office_a.id, 1)
    rule = await create_rule(client, office_a, actions=LATER)
    await _emit_messages(app, office_a.id, [conversation], 1)
    clock = Clock()
    await automation_worker(app, settings, clock).run_until_idle()
    clock.advance(days=29)
    await RUNS_PURGE_JOB.run(_ctx(app, settings, clock))
    assert len(await runs(client, office_a, rule["id"])) == 1
    clock.advance(days=1, seconds=1)
    await RUNS_PURGE_JOB.run(_ctx(app, settings, clock))
    assert await runs(client, office_a, rule["id"]) == []
