"""What the one queue fixed in webhook delivery, measured from outside: worker processes
(``officehub worker``) against real local receivers.

- one office's hanging receiver does not hold back another office's deliveries;
- a killed worker's deliveries are taken over within seconds (short leases, heartbeat);
- a webhook deleted while its deliveries are in flight fails nothing else;
- attempts a killed worker made are in the delivery log.
"""

from __future__ import annotations

import asyncio
import statistics
import threading
import time
from collections import Counter
from typing import Any

import httpx
from fastapi import FastAPI
from sqlalchemy import event, select
from sqlalchemy.engine import Connection

from officehub.events.service import emit
from officehub.kit.config import Settings
from officehub.kit.worker import WorkerContext
from officehub.webhooks.delivery import deliver_due, fan_out_events
from officehub.webhooks.models import WebhookDeliveryAttempt
from tests.helpers import OfficeFixture, delete_from_elsewhere, quiet_writers
from tests.receiver import Reply, running_receiver
from tests.test_webhook_workers import _start_worker, _stop
from tests.webhook_helpers import create_webhook, deliveries


async def _emit(app: FastAPI, office_id: str, n: int) -> str:
    async with app.state.sessionmaker() as s:
        ident = (await emit(s, office_id, "contact.created", {"n": n})).id
        await s.commit()
    return ident


async def test_a_hanging_receiver_does_not_hold_back_another_offices_deliveries(
    app: FastAPI,
    database_url: str,
    client: httpx.AsyncClient,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    """Office A's receiver never answers (each attempt times out after 10 s) and has 120
    deliveries due; office B's answers at once. With two workers on the default settings,
    B's events, emitted one by one meanwhile, arrive within 2 s each (p95)."""
    async with (
        running_receiver(lambda _n: Reply(delay=20.0)) as hanging,
        running_receiver() as quick,
    ):
        await create_webhook(client, office_a, hanging.url)
        await create_webhook(client, office_b, quick.url)
        async with app.state.sessionmaker() as s:
            for n in range(120):
                await emit(s, office_a.id, "contact.created", {"n": n})
            await s.commit()
        workers = [await _start_worker(database_url) for _ in range(2)]
        try:
            await hanging.wait_for(4, seconds=60)  # new processes, at A's deliveries
            sent: dict[str, float] = {}
            for n in range(20):
                sent[await _emit(app, office_b.id, n)] = time.time()
                await asyncio.sleep(0.25)
            await quick.wait_for_events(set(sent), seconds=90)
        finally:
            for worker in workers:
                await _stop(worker)
    arrived = {r.json["id"]: r.at for r in quick.received}
    latencies = sorted(arrived[e] - t for e, t in sent.items())
    p50 = statistics.median(latencies)
    p95 = latencies[int(0.95 * (len(latencies) - 1))]
    print(f"office B while A hangs: p50 {p50:.2f} s, p95 {p95:.2f} s")
    assert p95 < 2.0, (p50, p95)


async def test_a_killed_workers_deliveries_are_taken_over_within_seconds(
    app: FastAPI, database_url: str, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    """Default settings: a worker is SIGKILLed with four deliveries in flight; another
    worker delivers them once their 6-s lease runs out (it waited out a 60-s lease
    before). The bound is 30 s, not 10: the new worker's own start (2.6 s of CPU) took
    20 s of it with CI's two legs at once (issue 41); a 60-s lease would still fail it."""
    async with running_receiver(lambda n: Reply(delay=5.0 if n < 4 else 0.0)) as receiver:
        await create_webhook(client, office_a, receiver.url)
        emitted = {await _emit(app, office_a.id, n) for n in range(4)}
        first = await _start_worker(database_url)
        try:
            await receiver.wait_for(4, seconds=60)  # a process start: 20 s under load
        finally:
            first.kill()
            await first.wait()
        killed = time.monotonic()
        second = await _start_worker(database_url)
        try:
            await receiver.wait_for(8, seconds=90)
            taken_over = time.monotonic() - killed
        finally:
            await _stop(second)
    assert Counter(receiver.event_ids()) == Counter(dict.fromkeys(emitted, 2))
    assert taken_over < 30.0, taken_over


async def test_attempts_a_killed_worker_made_are_in_the_delivery_log(
    app: FastAPI, database_url: str, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    """Every request the receiver got is an attempt in the log, and ``attemptCount``
    counts them, even those whose worker was SIGKILLed before it could record them."""
    options = {
        "delivery_lease_seconds": "2",
        "webhook_timeout_seconds": "4",
        "delivery_batch_size": "5",
        "delivery_concurrency": "5",
    }
    async with running_receiver(lambda n: Reply(delay=3.0 if n < 4 else 0.0)) as receiver:
        hook = await create_webhook(client, office_a, receiver.url)
        for n in range(4):
            await _emit(app, office_a.id, n)
        first = await _start_worker(database_url, **options)
        try:
            await receiver.wait_for(4, seconds=60)  # a process start: 20 s under load
        finally:
            first.kill()
            await first.wait()
        second = await _start_worker(database_url, **options)
        try:
            await receiver.wait_for(8, seconds=30)
            async with asyncio.timeout(15):
                while any(d.status != "SUCCESS" for d in await deliveries(app, hook["id"])):  # noqa: ASYNC110
                    await asyncio.sleep(0.1)
        finally:
            await _stop(second)
    received = Counter(r.headers["x-service-delivery"] for r in receiver.received)
    records = await deliveries(app, hook["id"])
    assert {d.id: d.attempt_count for d in records} == dict(received)
    for record in records:
        response = await client.get(
            f"/webhooks/{hook['id']}/deliveries/{record.id}", headers=office_a.headers
        )
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        assert body["attemptCount"] == 2
    async with app.state.sessionmaker() as s:
        logged = Counter(await s.scalars(select(WebhookDeliveryAttempt.delivery_id)))
    assert logged == received


async def test_a_webhook_deleted_mid_flight_fails_no_other_outcome(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    """Office A's webhook is deleted while four of its deliveries are in flight, at the
    worst moment: just before the worker writes their outcomes. Office B's delivery, sent
    alongside, is recorded; A's vanish quietly; nothing raises."""
    async with (
        running_receiver(lambda _n: Reply(delay=1.0)) as slow,
        running_receiver(lambda _n: Reply(delay=1.0)) as other,
    ):
        doomed = await create_webhook(client, office_a, slow.url)
        kept = await create_webhook(client, office_b, other.url)
        for n in range(4):
            await _emit(app, office_a.id, n)
        await _emit(app, office_b.id, 0)
        ctx = WorkerContext(settings, app.state.engine, app.state.sessionmaker)
        await fan_out_events(ctx)
        deleted: list[str] = []
        threads: list[threading.Thread] = []
        await quiet_writers(app)
        _delete_before_outcomes(app, settings, doomed["id"], deleted, threads)
        await deliver_due(ctx)
        for thread in threads:
            await asyncio.to_thread(thread.join)
    assert deleted == [doomed["id"]]
    assert len(slow.received) == 4 and len(other.received) == 1
    assert await deliveries(app, doomed["id"]) == []
    [outcome] = await deliveries(app, kept["id"])
    assert outcome.status == "SUCCESS" and outcome.attempt_count == 1
    assert outcome.claim_token is None


def _delete_before_outcomes(
    app: FastAPI,
    settings: Settings,
    webhook_id: str,
    deleted: list[str],
    threads: list[threading.Thread],
) -> None:
    """Deletes the webhook (its deliveries go with it, by cascade) from another connection
    just before the worker's first write of an outcome: a concurrent ``DELETE /webhooks``
    landing in the worst place."""
    engine = app.state.engine.sync_engine

    @event.listens_for(engine, "before_cursor_execute")
    def before(conn: Connection, _cursor: Any, statement: str, *_args: Any) -> None:
        text = statement.lower()
        if deleted or not text.lstrip().startswith("update webhook_deliveries"):
            return
        if "status" not in text.split(" where ", 1)[0]:
            return  # a claim (or a hold), not an outcome
        deleted.append(webhook_id)
        threads.extend(delete_from_elsewhere(settings.database_url, "webhooks", webhook_id))
