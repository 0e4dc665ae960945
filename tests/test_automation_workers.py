"""Worker processes: scheduled work survives a SIGKILL; two PostgreSQL workers share the
rules' work, each rule running once per event, each conversation in event order."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections import defaultdict
from datetime import timedelta
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import func, select, text, update
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.automation.models import AutomationRun
from officehub.events.models import ConsumerEvent
from officehub.events.service import emit
from officehub.kit.scheduled_jobs import ScheduledJob
from officehub.kit.timeutil import utcnow
from tests import factories as f
from tests.automation_helpers import create_rule
from tests.conftest import PG_URL
from tests.crm_world import make_world
from tests.helpers import OfficeFixture


async def _start_worker(database_url: str, poll: str = "0.05") -> asyncio.subprocess.Process:
    env = {
        **os.environ,
        "OFFICEHUB_DATABASE_URL": database_url,
        "OFFICEHUB_WEBHOOK_ALLOW_PRIVATE": "true",
        "OFFICEHUB_WORKER_POLL_SECONDS": poll,
        "OFFICEHUB_LOG_LEVEL": "WARNING",
    }
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "officehub",
        "worker",
        env=env,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )


async def _stop(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is None:
        proc.send_signal(signal.SIGTERM)
        try:
            async with asyncio.timeout(15):
                await proc.wait()
        except TimeoutError:
            proc.kill()
            await proc.wait()


async def _until_listening_and_idle(app: FastAPI, seconds: float = 240) -> None:
    """A worker's LISTEN open and every connection to the database idle for half a second:
    its first pass is over, and it waits for a notification (or its poll). A started
    worker's imports and first pass (every periodic job) take 5 s of CPU: on a loaded
    machine, a minute or more."""
    listened = False
    activity = text(
        "SELECT query, state, clock_timestamp() - state_change > interval '0.5 second'"
        " AS settled FROM pg_stat_activity WHERE datname = current_database()"
        " AND backend_type = 'client backend' AND pid <> pg_backend_pid()"
    )
    rows: list[Any] = []
    try:
        # One connection for every look (its own activity left out): taking a session each
        # time rotated through the test's pooled connections, each then "just used".
        async with asyncio.timeout(seconds), app.state.engine.connect() as conn:
            while True:
                rows = list((await conn.execute(activity)).all())
                await conn.commit()
                listened = listened or any(row.query.startswith("LISTEN") for row in rows)
                if listened and all(row.state == "idle" and row.settled for row in rows):
                    return
                await asyncio.sleep(0.1)
    except TimeoutError:
        raise AssertionError(f"listening: {listened}; connections: {rows}") from None


async def _until(app: FastAPI, query: Any, wanted: int, seconds: float) -> int:
    value = -1
    async with asyncio.timeout(seconds):
        while value != wanted:
            async with app.state.sessionmaker() as s:
                value = int(await s.scalar(query) or 0)
            if value != wanted:
                await asyncio.sleep(0.1)
    return value


async def test_a_scheduled_message_survives_a_kill_9_of_the_worker(
    app: FastAPI,
    database_url: str,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    world = await make_world(session, office_a.id)
    conversation = world.conversation.id
    params = {"text": "Lembrete", "delayMinutes": 1}
    await create_rule(
        client, office_a, actions=[{"action": "SCHEDULE_MESSAGE", "actionParams": params}]
    )
    first = await _start_worker(database_url)
    try:
        r = await client.post(
            f"/conversation/{conversation}/messages/inbound",
            json={"text": "oi"},
            headers=office_a.headers,
        )
        assert r.status_code == 201
        await _until(app, select(func.count()).select_from(ScheduledJob), 1, 30)
    finally:
        first.send_signal(signal.SIGKILL)
        await first.wait()
    async with app.state.sessionmaker() as s, s.begin():  # the minute passes
        await s.execute(update(ScheduledJob).values(due_at=utcnow() - timedelta(seconds=1)))
    second = await _start_worker(database_url)
    try:
        sent = (
            select(func.count()).select_from(ScheduledJob).where(ScheduledJob.done_at.is_not(None))
        )
        await _until(app, sent, 1, 30)
    finally:
        await _stop(second)
    r = await client.get(f"/conversation/{conversation}/messages", headers=office_a.headers)
    outbound = [m["text"] for m in r.json()["data"] if m["direction"] == "OUTBOUND"]
    assert outbound == ["Lembrete"]


@pytest.mark.skipif(not PG_URL, reason="PostgreSQL-specific: needs OFFICEHUB_TEST_DATABASE_URL")
async def test_two_postgresql_workers_run_each_rule_once_per_event_in_conversation_order(
    app: FastAPI,
    database_url: str,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    world = await make_world(session, office_a.id)
    conversations = [world.conversation.id]
    for n in range(49):
        contact = await f.make_contact(session, office_a.id, name=f"C {n}", phone=None)
        conversations.append(
            (await f.make_conversation(session, office_a.id, contact.id, world.integration)).id
        )
    await session.commit()
    later = [{"action": "SCHEDULE_MESSAGE", "actionParams": {"text": "x", "delayMinutes": 600}}]
    rules = [await create_rule(client, office_a, actions=later, priority=p) for p in (1, 2)]
    order: dict[str, list[str]] = defaultdict(list)
    async with app.state.sessionmaker() as s:
        for n in range(10):
            for conversation in conversations:
                event = await emit(
                    s,
                    office_a.id,
                    "chat.message.received",
                    {"text": f"m{n}"},
                    conversation_id=conversation,
                )
                order[conversation].append(event.id)
        await s.commit()
    workers = [await _start_worker(database_url), await _start_worker(database_url)]
    try:
        undone = (
            select(func.count()).select_from(ConsumerEvent).where(ConsumerEvent.done_at.is_(None))
        )
        await _until(app, undone, 0, 120)
    finally:
        for worker in workers:
            await _stop(worker)
    async with app.state.sessionmaker() as s:
        logged = list(
            await s.execute(
                select(AutomationRun.rule_id, AutomationRun.event_id, AutomationRun.created_at)
            )
        )
    assert len(logged) == 1000
    assert {(r, e) for r, e, _t in logged} == {
        (rule["id"], e) for rule in rules for ids in order.values() for e in ids
    }
    at = {(r, e): t for r, e, t in logged}
    for ids in order.values():
        for rule in rules:
            times = [at[(rule["id"], e)] for e in ids]
            assert times == sorted(times)  # each conversation's events handled in order


@pytest.mark.skipif(not PG_URL, reason="PostgreSQL-specific: needs OFFICEHUB_TEST_DATABASE_URL")
async def test_a_separate_postgresql_worker_wakes_on_notify_not_at_its_poll(
    app: FastAPI,
    database_url: str,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    world = await make_world(session, office_a.id)
    later = [{"action": "SCHEDULE_MESSAGE", "actionParams": {"text": "x", "delayMinutes": 600}}]
    await create_rule(client, office_a, actions=later)
    worker = await _start_worker(database_url, poll="120")
    try:
        await _until_listening_and_idle(app)  # then idle until a notification or 120 s
        r = await client.post(
            f"/conversation/{world.conversation.id}/messages/inbound",
            json={"text": "oi"},
            headers=office_a.headers,
        )
        assert r.status_code == 201
        await _until(app, select(func.count()).select_from(AutomationRun), 1, 10)
    finally:
        await _stop(worker)
