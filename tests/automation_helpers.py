"""What the automation tests share: a worker on a clock the test controls, and a rule call."""

from __future__ import annotations

from typing import Any

import httpx
from fastapi import FastAPI

from officehub.jobs import queue_jobs
from officehub.kit.config import Settings
from officehub.kit.worker import Worker, WorkerContext
from tests.helpers import OfficeFixture
from tests.webhook_helpers import Clock


def automation_worker(
    app: FastAPI, settings: Settings, clock: Clock | None = None, name: str = "test"
) -> Worker:
    """Every queue job of a real worker (fan-out, automation, scheduled work, deliveries).

    Given a ``clock``, the delivery queue reads it too (not the database's ``now()``)."""
    ctx = WorkerContext(
        settings,
        app.state.engine,
        app.state.sessionmaker,
        worker_id=name,
        database_clock=clock is None,
    )
    if clock is not None:
        ctx.clock = clock
    return Worker(ctx, queue_jobs(), [])


async def create_rule(
    client: httpx.AsyncClient, office: OfficeFixture, **fields: Any
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "name": "Regra",
        "triggerEvent": "chat.message.received",
        "actions": [{"action": "PAUSE_AUTOMATION", "actionParams": {}}],
        **fields,
    }
    response = await client.post("/automation-rules", json=body, headers=office.headers)
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    return created


async def runs(
    client: httpx.AsyncClient, office: OfficeFixture, rule_id: str
) -> list[dict[str, Any]]:
    response = await client.get(f"/automation-rules/{rule_id}/runs", headers=office.headers)
    assert response.status_code == 200, response.text
    data: list[dict[str, Any]] = response.json()["data"]
    return data
