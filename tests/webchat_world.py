"""Shared arrangements of the web chat and bridge tests: channels made through the API,
visitors started through the visitor API, a worker that runs the dispatcher."""

from __future__ import annotations

from typing import Any

import httpx
from fastapi import FastAPI

from officehub.channels.dispatcher import send_queued
from officehub.kit.config import Settings
from officehub.kit.worker import Worker, WorkerContext
from tests.helpers import OfficeFixture

SITE = "https://escritorio.example"


async def make_webchat(
    client: httpx.AsyncClient,
    office: OfficeFixture,
    *,
    origins: list[str] | None = None,
    ask: str = "PHONE",
    greeting: str = "Olá! Em que podemos ajudar?",
) -> dict[str, Any]:
    inbox = await client.post("/inbox", json={"name": "Site"}, headers=office.headers)
    assert inbox.status_code == 201, inbox.text
    answer = await client.post(
        "/integration",
        json={
            "inboxId": inbox.json()["id"],
            "type": "WEBCHAT",
            "name": "Chat do site",
            "webchat": {"allowedOrigins": origins or [SITE], "ask": ask, "greeting": greeting},
        },
        headers=office.headers,
    )
    assert answer.status_code == 201, answer.text
    created: dict[str, Any] = answer.json()
    return created


async def start_visitor(
    client: httpx.AsyncClient,
    integration_id: str,
    name: str = "Maria Souza",
    phone: str = "+55 11 98765-4321",
    origin: str = SITE,
) -> dict[str, Any]:
    answer = await client.post(
        f"/webchat/{integration_id}/start",
        json={"name": name, "phone": phone},
        headers={"origin": origin},
    )
    assert answer.status_code == 201, answer.text
    started: dict[str, Any] = answer.json()
    return started


def visitor_headers(token: str, origin: str = SITE) -> dict[str, str]:
    return {"x-visitor-token": token, "origin": origin}


def dispatcher(app: FastAPI, settings: Settings) -> Worker:
    ctx = WorkerContext(settings, app.state.engine, app.state.sessionmaker)
    return Worker(ctx, [send_queued])
