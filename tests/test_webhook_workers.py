"""Worker processes: a SIGKILL mid-delivery loses nothing; two workers share the work."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections import Counter

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import select

from officehub.events.service import emit
from officehub.webhooks.models import WebhookDeliveryAttempt
from tests.conftest import PG_URL
from tests.helpers import OfficeFixture
from tests.receiver import Reply, running_receiver
from tests.webhook_helpers import create_webhook, deliveries


async def _start_worker(database_url: str, **env: str) -> asyncio.subprocess.Process:
    settings = {
        "OFFICEHUB_DATABASE_URL": database_url,
        "OFFICEHUB_WEBHOOK_ALLOW_PRIVATE": "true",
        "OFFICEHUB_WORKER_POLL_SECONDS": "0.05",
        "OFFICEHUB_LOG_LEVEL": "WARNING",
        **{f"OFFICEHUB_{k.upper()}": v for k, v in env.items()},
    }
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "officehub",
        "worker",
        env={**os.environ, **settings},
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


async def _emit_many(app: FastAPI, office_id: str, count: int) -> set[str]:
    async with app.state.sessionmaker() as s:
        ids = {(await emit(s, office_id, "contact.created", {"n": n})).id for n in range(count)}
        await s.commit()
    return ids


async def test_a_worker_killed_mid_delivery_loses_no_event(
    app: FastAPI, database_url: str, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    async with running_receiver(lambda _n: Reply(delay=0.3)) as receiver:
        hook = await create_webhook(client, office_a, receiver.url)
        emitted = await _emit_many(app, office_a.id, 40)
        options = {
            "delivery_lease_seconds": "2",
            "webhook_timeout_seconds": "1",
            "delivery_batch_size": "10",
            "delivery_concurrency": "5",
        }
        first = await _start_worker(database_url, **options)
        try:
            await receiver.wait_for(3, seconds=60)  # a process start: 20 s under load
        finally:
            first.kill()  # SIGKILL: no cleanup, deliveries left leased mid-flight
            await first.wait()
        assert first.returncode == -signal.SIGKILL
        before = set(receiver.event_ids())
        assert len(before) < len(emitted)
        leased = [d for d in await deliveries(app, hook["id"]) if d.claim_token is not None]
        assert leased, "the kill should have caught deliveries in flight"
        second = await _start_worker(database_url, **options)
        try:
            await receiver.wait_for_events(emitted, seconds=25)
            # Those the killed worker sent are sent again once their lease ends.
            async with asyncio.timeout(15):
                while any(d.status != "SUCCESS" for d in await deliveries(app, hook["id"])):  # noqa: ASYNC110
                    await asyncio.sleep(0.1)
        finally:
            await _stop(second)
    assert set(receiver.event_ids()) == emitted
    records = await deliveries(app, hook["id"])
    assert len(records) == len(emitted)
    assert {d.status for d in records} == {"SUCCESS"}


# PostgreSQL-specific by nature: several workers claim with FOR UPDATE SKIP LOCKED. On
# SQLite one writer at a time makes the question moot, so the test runs only when the
# suite runs against PostgreSQL (OFFICEHUB_TEST_DATABASE_URL set).
@pytest.mark.skipif(not PG_URL, reason="PostgreSQL-specific: needs OFFICEHUB_TEST_DATABASE_URL")
async def test_two_postgresql_workers_deliver_1000_events_exactly_once(
    app: FastAPI, database_url: str, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    async with running_receiver() as receiver:
        hook = await create_webhook(client, office_a, receiver.url)
        emitted = await _emit_many(app, office_a.id, 1000)
        options = {"delivery_batch_size": "25", "delivery_concurrency": "10"}
        workers = [await _start_worker(database_url, **options) for _ in range(2)]
        try:
            await receiver.wait_for_events(emitted, seconds=60)
            async with asyncio.timeout(15):
                while any(d.status != "SUCCESS" for d in await deliveries(app, hook["id"])):  # noqa: ASYNC110
                    await asyncio.sleep(0.1)
        finally:
            for worker in workers:
                await _stop(worker)
    assert all(w.returncode == 0 for w in workers)
    by_delivery = Counter(r.headers["x-service-delivery"] for r in receiver.received)
    assert len(by_delivery) == 1000
    assert set(by_delivery.values()) == {1}
    assert Counter(receiver.event_ids()) == Counter(dict.fromkeys(emitted, 1))
    async with app.state.sessionmaker() as s:
        per_worker = Counter(await s.scalars(select(WebhookDeliveryAttempt.worker_id)))
    assert sum(per_worker.values()) == 1000
    assert len(per_worker) == 2, per_worker  # both workers took a share


@pytest.mark.skipif(not PG_URL, reason="PostgreSQL-specific: needs OFFICEHUB_TEST_DATABASE_URL")
async def test_two_postgresql_workers_hold_one_webhooks_pace_and_drop_nothing(
    app: FastAPI, database_url: str, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    """``rateLimitPerSecond`` is counted in the webhook's row, so two worker processes
    begin at most that many attempts in any second between them; the rest wait."""
    limit, count = 4, 20
    async with running_receiver() as receiver:
        hook = await create_webhook(client, office_a, receiver.url, rateLimitPerSecond=limit)
        emitted = await _emit_many(app, office_a.id, count)
        options = {"delivery_batch_size": "3", "delivery_concurrency": "10"}
        workers = [await _start_worker(database_url, **options) for _ in range(2)]
        try:
            await receiver.wait_for_events(emitted, seconds=60)
            async with asyncio.timeout(15):
                while any(d.status != "SUCCESS" for d in await deliveries(app, hook["id"])):  # noqa: ASYNC110
                    await asyncio.sleep(0.1)
        finally:
            for worker in workers:
                await _stop(worker)
    assert Counter(receiver.event_ids()) == Counter(dict.fromkeys(emitted, 1))
    async with app.state.sessionmaker() as s:
        attempts = list(await s.scalars(select(WebhookDeliveryAttempt)))
    assert len(attempts) == count
    per_second = Counter(int(a.created_at.timestamp()) for a in attempts)
    assert max(per_second.values()) <= limit, per_second
    assert len(per_second) >= count // limit  # it took at least five seconds
    arrivals = sorted(r.at for r in receiver.received)
    # five seconds of slots: the first may come at the end of its second, the last at the
    # start of its own
    assert arrivals[-1] - arrivals[0] >= count / limit - 2
