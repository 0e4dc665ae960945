"""What the webhook tests share: a worker on a clock the test controls, and setup calls."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
from fastapi import FastAPI
from sqlalchemy import select

from officehub.events.service import emit
from officehub.kit.config import Settings
from officehub.kit.timeutil import utcnow
from officehub.kit.worker import Worker, WorkerContext
from officehub.webhooks.delivery import PURGE_JOB, deliver_due, fan_out_events
from officehub.webhooks.models import WebhookDelivery
from tests.helpers import OfficeFixture


class Clock:
    def __init__(self) -> None:
        self.now = datetime.now(UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **kwargs: float) -> None:
        self.now += timedelta(**kwargs)


def delivery_worker(
    app: FastAPI, settings: Settings, clock: Clock | None = None, name: str = "test"
) -> Worker:
    """A worker on the database's clock, or on ``clock`` when the test drives time."""
    ctx = WorkerContext(
        settings,
        app.state.engine,
        app.state.sessionmaker,
        clock=clock or utcnow,
        worker_id=name,
        database_clock=clock is None,
    )
    return Worker(ctx, [fan_out_events, deliver_due], [PURGE_JOB])


async def create_webhook(
    client: httpx.AsyncClient, office: OfficeFixture, url: str, **fields: Any
) -> dict[str, Any]:
    body = {"name": "CRM sync", "url": url, "events": ["contact.created"], **fields}
    response = await client.post("/webhooks", json=body, headers=office.headers)
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    return created


async def secret_of(client: httpx.AsyncClient, office: OfficeFixture, webhook_id: str) -> str:
    response = await client.get(f"/webhooks/{webhook_id}", headers=office.headers)
    secret: str = response.json()["secret"]
    return secret


async def emit_event(
    app: FastAPI, office_id: str, name: str = "contact.created", data: dict[str, Any] | None = None
) -> str:
    async with app.state.sessionmaker() as s:
        event = await emit(s, office_id, name, data or {"id": "c0000000001", "name": "Maria"})
        await s.commit()
        return event.id


async def deliveries(app: FastAPI, webhook_id: str | None = None) -> list[WebhookDelivery]:
    async with app.state.sessionmaker() as s:
        stmt = select(WebhookDelivery).order_by(WebhookDelivery.created_at, WebhookDelivery.id)
        if webhook_id is not None:
            stmt = stmt.where(WebhookDelivery.webhook_id == webhook_id)
        return list(await s.scalars(stmt))


async def pause_by_failures(
    app: FastAPI, settings: Settings, office: OfficeFixture, worker: Worker, clock: Clock
) -> None:
    """Two events 5 days and an hour apart, both failing at the webhook's receiver: the
    delivery worker (on ``clock``) pauses a webhook that answers only failures."""
    await emit_event(app, office.id)
    await worker.run_until_idle()
    clock.advance(days=5, hours=1)
    await emit_event(app, office.id)
    await worker.run_until_idle()
