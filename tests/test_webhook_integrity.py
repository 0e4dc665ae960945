"""Issue 8, part 1: a delivery worker no webhook can stall, with real receivers.

Poisoned webhooks are stored straight into the database (the API now refuses them), as
records saved before the checks existed would be.
"""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta
from typing import Any

import httpx
from fastapi import FastAPI
from sqlalchemy import String, func, select, text

from officehub.kit.config import Settings
from officehub.kit.timeutil import as_utc, utcnow
from officehub.kit.worker import Worker, WorkerContext
from officehub.webhooks.delivery import UNSENDABLE, deliver_due, fan_out_events, new_claim_token
from officehub.webhooks.models import (
    CLAIM_TOKEN_LENGTH,
    Webhook,
    WebhookDelivery,
    WebhookDeliveryAttempt,
)
from tests.conftest import PG_URL
from tests.helpers import OfficeFixture, error_of, make_office
from tests.receiver import Reply, running_receiver
from tests.webhook_helpers import (
    Clock,
    create_webhook,
    deliveries,
    delivery_worker,
    emit_event,
)


async def _store_webhook(app: FastAPI, office_id: str, url: str, **fields: Any) -> str:
    async with app.state.sessionmaker() as s:
        record = Webhook(
            office_id=office_id,
            name="stored before the checks",
            url=url,
            secret="s3cret-value",
            events=["contact.created"],
            is_active=True,
            **fields,
        )
        s.add(record)
        await s.commit()
        return record.id


async def test_one_webhook_that_cannot_be_sent_does_not_stall_other_offices_deliveries(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    others = [await make_office(app, f"Office {n}") for n in range(3)]
    async with running_receiver() as good, running_receiver() as trap:
        poisoned = [
            await _store_webhook(app, office_a.id, trap.url, headers={"X-Name": "José"}),
            await _store_webhook(app, office_a.id, trap.url, headers={"Content-Length": "0"}),
            await _store_webhook(app, office_a.id, "http://0177.0.0.1/hook"),
            await _store_webhook(app, office_a.id, f"http://127.0.0.1:{trap.port}/a\x01b"),
            await _store_webhook(app, office_a.id, "http://xn--a.com/hook"),
            await _store_webhook(app, office_a.id, "http://127.0.0.1:99999/hook"),
        ]
        healthy = [(await create_webhook(client, o, good.url))["id"] for o in others]
        await emit_event(app, office_a.id)
        expected = {await emit_event(app, o.id) for o in others}
        await delivery_worker(app, settings).run_once()  # one pass: fan-out, then one batch
        assert set(good.event_ids()) == expected
        assert len(good.received) == len(others)
    for webhook_id in healthy:
        [delivery] = await deliveries(app, webhook_id)
        assert delivery.status == "SUCCESS" and delivery.attempt_count == 1
    for webhook_id in poisoned:
        [delivery] = await deliveries(app, webhook_id)
        assert delivery.status == "RETRYING" and delivery.attempt_count == 1
        assert delivery.status_code is None and delivery.claim_token is None
        assert delivery.error_message == UNSENDABLE
    async with app.state.sessionmaker() as s:
        attempts = await s.scalar(
            select(func.count())
            .select_from(WebhookDeliveryAttempt)
            .where(WebhookDeliveryAttempt.office_id == office_a.id)
        )
    assert attempts == len(poisoned)


async def test_an_unsendable_delivery_is_shown_with_a_generic_error_through_the_api(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    webhook_id = await _store_webhook(app, office_a.id, "http://127.0.0.1:99999/hook")
    await emit_event(app, office_a.id)
    await delivery_worker(app, settings).run_once()
    [delivery] = await deliveries(app, webhook_id)
    response = await client.get(
        f"/webhooks/{webhook_id}/deliveries/{delivery.id}", headers=office_a.headers
    )
    body = response.json()
    assert body["errorMessage"] == UNSENDABLE
    assert body["attempts"][0]["errorMessage"] == UNSENDABLE
    assert "Traceback" not in response.text and "99999" not in body["errorMessage"]


# Manual retries and the claim


async def test_retry_of_a_delivery_a_worker_holds_is_409_delivery_in_flight(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    replies = [Reply(500), Reply(200, delay=2.0)]
    async with running_receiver(lambda n: replies[min(n, 1)]) as receiver:
        hook = await create_webhook(client, office_a, receiver.url)
        await emit_event(app, office_a.id)
        clock = Clock()
        worker = delivery_worker(app, settings, clock)
        await worker.run_until_idle()
        [delivery] = await deliveries(app, hook["id"])
        assert delivery.status == "RETRYING"
        clock.advance(seconds=10)
        sending = asyncio.create_task(worker.run_once())
        await receiver.wait_for(2)  # the worker holds it, waiting for the answer
        response = await client.post(
            f"/webhooks/deliveries/{delivery.id}/retry", headers=office_a.headers
        )
        assert response.status_code == 409
        assert error_of(response)["code"] == "DELIVERY_IN_FLIGHT"
        await sending
    [delivery] = await deliveries(app, hook["id"])
    assert delivery.status == "SUCCESS" and delivery.attempt_count == 2
    assert len(receiver.received) == 2


async def test_a_retry_after_the_lease_ended_takes_the_delivery_back(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    """A worker that died holding a delivery does not block a manual retry forever."""
    hook = await create_webhook(client, office_a, "https://hooks.example.com/x")
    await emit_event(app, office_a.id)
    ctx = WorkerContext(
        settings, app.state.engine, app.state.sessionmaker, worker_id="dead", database_clock=False
    )
    await fan_out_events(ctx)
    [delivery] = await deliveries(app, hook["id"])
    past = utcnow() - timedelta(minutes=5)
    async with app.state.sessionmaker() as s:
        stored = await s.get(WebhookDelivery, delivery.id)
        assert stored is not None
        stored.status, stored.claim_token, stored.next_retry_at = "RETRYING", "gone", past
        await s.commit()
    response = await client.post(
        f"/webhooks/deliveries/{delivery.id}/retry", headers=office_a.headers
    )
    assert response.status_code == 200 and response.json()["status"] == "PENDING"
    [delivery] = await deliveries(app, hook["id"])
    assert delivery.claim_token is None


async def test_eight_concurrent_retries_of_one_failed_delivery_make_one_retry(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    async with running_receiver(lambda _n: Reply(500)) as receiver:
        hook = await create_webhook(client, office_a, receiver.url)
        await emit_event(app, office_a.id)
        await delivery_worker(app, settings).run_until_idle()
    [delivery] = await deliveries(app, hook["id"])
    assert delivery.status == "RETRYING"
    responses = await asyncio.gather(
        *(
            client.post(f"/webhooks/deliveries/{delivery.id}/retry", headers=office_a.headers)
            for _ in range(8)
        )
    )
    statuses = sorted(r.status_code for r in responses)
    assert statuses == [200] + [409] * 7, [r.text for r in responses]
    assert {error_of(r)["code"] for r in responses if r.status_code == 409} == {"CONFLICT"}


async def test_claim_tokens_are_whole_even_for_long_worker_names(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    """Two workers whose names share 200 characters never hold the same claim token."""
    settings = settings.model_copy(update={"delivery_batch_size": 1})
    length = CLAIM_TOKEN_LENGTH
    async with running_receiver(lambda _n: Reply(delay=2.0)) as receiver:
        hook = await create_webhook(client, office_a, receiver.url)
        await emit_event(app, office_a.id)
        await emit_event(app, office_a.id)
        workers = [
            WorkerContext(
                settings,
                app.state.engine,
                app.state.sessionmaker,
                worker_id="worker-host-" + "x" * 200 + f"-{n}",
            )
            for n in (1, 2)
        ]
        await fan_out_events(workers[0])
        first = asyncio.create_task(deliver_due(workers[0]))
        await receiver.wait_for(1)
        second = asyncio.create_task(deliver_due(workers[1]))
        await receiver.wait_for(2)
        tokens = [d.claim_token for d in await deliveries(app, hook["id"])]
        await asyncio.gather(first, second)
    assert all(t is not None and 0 < len(t) <= length for t in tokens), tokens
    assert len(set(tokens)) == 2, tokens
    assert {d.status for d in await deliveries(app, hook["id"])} == {"SUCCESS"}


# The clock


async def _database_now(app: FastAPI) -> datetime:
    if not PG_URL:
        return utcnow()
    async with app.state.sessionmaker() as s:
        return as_utc((await s.execute(text("SELECT now()"))).scalar_one())


async def test_lease_and_retry_times_come_from_the_database_clock_on_postgresql(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    """A worker whose host clock is 2 hours fast still writes times by the shared clock.

    On PostgreSQL the shared clock is the database's ``now()``; SQLite lives on one
    host, so there the host's clock is the clock (and a test's injected clock works).
    """
    skew = timedelta(hours=2)
    async with running_receiver(lambda _n: Reply(500)) as receiver:
        hook = await create_webhook(client, office_a, receiver.url)
        await emit_event(app, office_a.id)
        ctx = WorkerContext(
            settings,
            app.state.engine,
            app.state.sessionmaker,
            clock=lambda: utcnow() + skew,
            worker_id="fast-clock",
        )
        before = await _database_now(app)
        await Worker(ctx, [fan_out_events, deliver_due]).run_once()
        after = await _database_now(app)
        assert len(receiver.received) == 1
    [delivery] = await deliveries(app, hook["id"])
    assert delivery.next_retry_at is not None
    shift = timedelta(0) if PG_URL else skew
    assert before + shift - timedelta(seconds=1) <= delivery.created_at <= after + shift
    wait = delivery.next_retry_at - delivery.created_at
    assert timedelta(seconds=3) <= wait <= timedelta(seconds=10), wait


async def test_a_claim_compares_due_times_with_the_database_clock_on_postgresql(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    """A delivery due in 30 minutes is not taken early by a worker whose clock is fast."""
    async with running_receiver() as receiver:
        hook = await create_webhook(client, office_a, receiver.url)
        await emit_event(app, office_a.id)
        honest = WorkerContext(settings, app.state.engine, app.state.sessionmaker)
        await fan_out_events(honest)
        [delivery] = await deliveries(app, hook["id"])
        due = await _database_now(app) + timedelta(minutes=30)
        async with app.state.sessionmaker() as s:
            stored = await s.get(WebhookDelivery, delivery.id)
            assert stored is not None
            stored.status, stored.next_retry_at = "RETRYING", due
            await s.commit()
        fast = WorkerContext(
            settings,
            app.state.engine,
            app.state.sessionmaker,
            clock=lambda: utcnow() + timedelta(hours=1),
        )
        taken = await deliver_due(fast)
    assert taken == (0 if PG_URL else 1)
    assert len(receiver.received) == taken


def test_the_claim_token_column_holds_a_whole_token() -> None:
    column = WebhookDelivery.__table__.c.claim_token
    assert isinstance(column.type, String) and column.type.length == CLAIM_TOKEN_LENGTH
    assert len(new_claim_token()) <= CLAIM_TOKEN_LENGTH
