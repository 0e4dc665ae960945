"""Shared arrangements of the official-channel tests: settings pointing at the stand-in
platform, a configured official integration, signed notifications."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import httpx
from fastapi import FastAPI
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.channels.dispatcher import download_media, send_queued
from officehub.channels.whatsapp import sign
from officehub.inboxes.models import Integration
from officehub.kit.config import Settings
from officehub.kit.timeutil import utcnow
from officehub.kit.worker import Worker, WorkerContext
from tests import factories as f
from tests.whatsapp_platform import TOKEN

APP_SECRET = "app-secret-of-the-test"
VERIFY_TOKEN = "verify-me-please"
PHONE_NUMBER_ID = "106540352242922"
WABA_ID = "102290129340398"
SETTINGS = {
    "phoneNumberId": PHONE_NUMBER_ID,
    "businessAccountId": WABA_ID,
    "accessToken": TOKEN,
    "appSecret": APP_SECRET,
    "verifyToken": VERIFY_TOKEN,
}


async def official_integration(
    session: AsyncSession, office_id: str, device_id: str = "5511999990000"
) -> Integration:
    inbox = await f.make_inbox(session, office_id)
    integration = await f.make_integration(
        session, office_id, inbox.id, type="WHATSAPP_OFFICIAL", device_id=device_id
    )
    integration.whatsapp = dict(SETTINGS)
    await session.flush()
    await session.commit()
    return integration


def text_message(
    wamid: str, sender: str = "5511987654321", body: str = "Olá, preciso de ajuda"
) -> dict[str, Any]:
    return {
        "from": sender,
        "id": wamid,
        "timestamp": "1767268800",
        "type": "text",
        "text": {"body": body},
    }


def notification(
    messages: list[dict[str, Any]] | None = None,
    statuses: list[dict[str, Any]] | None = None,
    name: str = "Maria Souza",
    sender: str = "5511987654321",
) -> dict[str, Any]:
    value: dict[str, Any] = {
        "messaging_product": "whatsapp",
        "metadata": {"display_phone_number": "5511999990000", "phone_number_id": PHONE_NUMBER_ID},
    }
    if messages is not None:
        value["contacts"] = [{"profile": {"name": name}, "wa_id": sender}]
        value["messages"] = messages
    if statuses is not None:
        value["statuses"] = statuses
    return {
        "object": "whatsapp_business_account",
        "entry": [{"id": WABA_ID, "changes": [{"field": "messages", "value": value}]}],
    }


def status(wamid: str, state: str, errors: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "id": wamid,
        "status": state,
        "timestamp": "1767268801",
        "recipient_id": "5511987654321",
    }
    if errors is not None:
        body["errors"] = errors
    return body


async def post_notification(
    client: httpx.AsyncClient,
    integration_id: str,
    body: dict[str, Any],
    secret: str = APP_SECRET,
) -> httpx.Response:
    raw = json.dumps(body).encode()
    return await client.post(
        f"/channels/whatsapp/{integration_id}/webhook",
        content=raw,
        headers={"Content-Type": "application/json", "X-Hub-Signature-256": sign(secret, raw)},
    )


def worker(
    app: FastAPI, settings: Settings, at: datetime | None = None, *, media: bool = False
) -> Worker:
    moment = at or utcnow()
    ctx = WorkerContext(settings, app.state.engine, app.state.sessionmaker, clock=lambda: moment)
    return Worker(ctx, [download_media] if media else [send_queued])
