"""Worker processes sending outbound messages: a send a killed worker held is taken over by
another worker within a few seconds (a short lease renewed by a heartbeat, ``kit.queue``),
not after a long lease; the message is sent, and not lost."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import select
from starlette.types import Receive, Scope, Send

from officehub.kit.outbound.signing import signature_header
from officehub.messages.models import Message
from tests.helpers import OfficeFixture
from tests.server import serving

SECRET = "bridge-secret-of-the-test-0123456789"
TAKEN_OVER_WITHIN = 12.0
"""Seconds from the kill to the message sent by the other worker: the lease (6 s by
default) and a few polls; the lease this replaced held it for two minutes."""


@dataclass
class SlowGateway:
    """A bridge gateway stand-in whose first request hangs until ``release`` (the worker
    holding it gets killed meanwhile); later ones answer at once with an id."""

    url: str = ""
    arrivals: list[tuple[float, str]] = field(default_factory=list)
    arrived: asyncio.Event = field(default_factory=asyncio.Event)
    release: asyncio.Event = field(default_factory=asyncio.Event)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        self.arrivals.append((time.monotonic(), json.loads(body)["messageId"]))
        self.arrived.set()
        if len(self.arrivals) == 1:
            await self.release.wait()
        answer = json.dumps({"id": f"gw-out-{len(self.arrivals)}"}).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"application/json")],
            }
        )
        await send({"type": "http.response.body", "body": answer})


@pytest.fixture
async def gateway() -> AsyncIterator[SlowGateway]:
    stand_in = SlowGateway()
    async with serving(stand_in) as port:
        stand_in.url = f"http://127.0.0.1:{port}/send"
        try:
            yield stand_in
        finally:
            stand_in.release.set()


async def _worker(database_url: str) -> asyncio.subprocess.Process:
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("OFFICEHUB_")},
        "OFFICEHUB_DATABASE_URL": database_url,
        # The test's data folder (conftest): the secrets key the app sealed tokens with.
        "OFFICEHUB_DATA_DIR": os.environ["OFFICEHUB_DATA_DIR"],
        "OFFICEHUB_WEBHOOK_ALLOW_PRIVATE": "true",
        "OFFICEHUB_WORKER_POLL_SECONDS": "0.1",
        "OFFICEHUB_WHATSAPP_TIMEOUT_SECONDS": "60",
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


async def _outbound(client: httpx.AsyncClient, office: OfficeFixture, url: str) -> str:
    """A bridged channel, a client's message on it, and the reply queued to send."""
    inbox = await client.post("/inbox", json={"name": "Gateway"}, headers=office.headers)
    bridged = await client.post(
        "/integration",
        json={
            "inboxId": inbox.json()["id"],
            "type": "WHATSAPP",
            "name": "Gateway",
            "bridge": {"bridgeUrl": url, "secret": SECRET},
        },
        headers=office.headers,
    )
    assert bridged.status_code == 201, bridged.text
    raw = json.dumps(
        {"type": "message", "id": f"gw-in-{uuid.uuid4().hex}", "from": "5511987654321"}
        | {"name": "João", "text": "Olá"}
    ).encode()
    inbound = await client.post(
        f"/channels/bridge/{bridged.json()['id']}/inbound",
        content=raw,
        headers={
            "content-type": "application/json",
            "X-Service-Signature": signature_header([SECRET], int(time.time()), raw),
        },
    )
    assert inbound.json() == {"stored": 1}, inbound.text
    conversation = (await client.get("/conversation", headers=office.headers)).json()["data"][0]
    reply = await client.post(
        f"/conversation/{conversation['id']}/messages",
        json={"text": "Bom dia, João"},
        headers=office.headers,
    )
    assert reply.status_code == 201, reply.text
    ident: str = reply.json()["id"]
    return ident


async def test_a_send_held_by_a_killed_worker_is_sent_by_another_within_seconds(
    app: FastAPI,
    database_url: str,
    client: httpx.AsyncClient,
    office_a: OfficeFixture,
    gateway: SlowGateway,
) -> None:
    first = await _worker(database_url)
    try:
        ident = await _outbound(client, office_a, gateway.url)
        async with asyncio.timeout(30):  # the first worker's send reaches the gateway
            await gateway.arrived.wait()
    finally:
        first.send_signal(signal.SIGKILL)  # mid-send: no cleanup, its claim left leased
        await first.wait()
    killed_at = time.monotonic()
    assert first.returncode == -signal.SIGKILL
    second = await _worker(database_url)
    try:
        status = None
        async with asyncio.timeout(60):
            while status != "SENT":
                async with app.state.sessionmaker() as s:
                    status = await s.scalar(select(Message.status).where(Message.id == ident))
                await asyncio.sleep(0.1)
        sent_after = time.monotonic() - killed_at
    finally:
        await _stop(second)
    assert sent_after < TAKEN_OVER_WITHIN, f"taken over after {sent_after:.1f} s"
    # The killed worker's attempt and the second worker's: the same message, sent once more
    # (at least once), and the second answer recorded on it.
    assert [m for _, m in gateway.arrivals] == [ident, ident]
    async with app.state.sessionmaker() as s:
        message = await s.get(Message, ident)
        assert message is not None
        assert message.status == "SENT" and message.external_id is not None
        assert message.external_id.endswith("gw-out-2")
