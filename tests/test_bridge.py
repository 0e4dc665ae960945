"""Bridged channels (WHATSAPP through a gateway, INSTAGRAM): signed inbound stored once,
outbound posted to a real local gateway stand-in, signed, retried on 5xx; SSRF checks."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import select, update
from starlette.types import Receive, Scope, Send

from officehub.app import create_app
from officehub.channels.dispatcher import send_queued
from officehub.contacts.models import Contact
from officehub.kit.config import Settings
from officehub.kit.outbound.signing import signature_header, verify
from officehub.kit.timeutil import utcnow
from officehub.kit.worker import Worker, WorkerContext
from officehub.messages.models import Message
from tests.helpers import OfficeFixture, error_of, outbox
from tests.server import serving

SECRET = "bridge-secret-of-the-test-0123456789"


@dataclass
class Gateway:
    """A gateway stand-in: records what it is sent, answers the scripted statuses (then
    200 with an id)."""

    url: str = ""
    received: list[tuple[dict[str, str], bytes]] = field(default_factory=list)
    script: list[int] = field(default_factory=list)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        headers = {k.decode(): v.decode() for k, v in scope["headers"]}
        self.received.append((headers, body))
        status = self.script.pop(0) if self.script else 200
        answer = json.dumps({"id": f"gw-out-{len(self.received)}"} if status == 200 else {})
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [(b"content-type", b"application/json")],
            }
        )
        await send({"type": "http.response.body", "body": answer.encode()})


@pytest.fixture
async def gateway() -> AsyncIterator[Gateway]:
    stand_in = Gateway()
    async with serving(stand_in) as port:
        stand_in.url = f"http://127.0.0.1:{port}/send"
        yield stand_in


async def _bridged(
    client: httpx.AsyncClient, office: OfficeFixture, url: str, type: str = "WHATSAPP"
) -> dict[str, Any]:
    inbox = await client.post("/inbox", json={"name": "Gateway"}, headers=office.headers)
    answer = await client.post(
        "/integration",
        json={
            "inboxId": inbox.json()["id"],
            "type": type,
            "name": "Gateway",
            "bridge": {"bridgeUrl": url, "secret": SECRET},
        },
        headers=office.headers,
    )
    assert answer.status_code == 201, answer.text
    created: dict[str, Any] = answer.json()
    return created


def _signed(body: dict[str, Any], secret: str = SECRET, at: float | None = None) -> dict[str, Any]:
    raw = json.dumps(body).encode()
    stamp = int(time.time() if at is None else at)
    return {
        "content": raw,
        "headers": {
            "content-type": "application/json",
            "X-Service-Signature": signature_header([secret], stamp, raw),
        },
    }


def _message(gateway_id: str = "gw-in-1", text: str = "Olá, vi o anúncio") -> dict[str, Any]:
    return {
        "type": "message",
        "id": gateway_id,
        "from": "5511987654321",
        "name": "João",
        "text": text,
    }


def _worker(app: FastAPI, settings: Settings) -> Worker:
    return Worker(WorkerContext(settings, app.state.engine, app.state.sessionmaker), [send_queued])


async def test_a_signed_inbound_message_is_stored_once(
    client: httpx.AsyncClient, office_a: OfficeFixture, app: FastAPI, gateway: Gateway
) -> None:
    bridged = await _bridged(client, office_a, gateway.url)
    assert bridged["bridge"] == {"bridgeUrl": gateway.url, "secretSet": True}
    assert SECRET not in json.dumps(bridged)
    url = f"/channels/bridge/{bridged['id']}/inbound"
    first = await client.post(url, **_signed(_message()))
    assert first.status_code == 200, first.text
    assert first.json() == {"stored": 1}
    again = await client.post(url, **_signed(_message()))
    assert again.json() == {"stored": 0}
    async with app.state.sessionmaker() as s:
        rows = list(await s.scalars(select(Message).where(Message.office_id == office_a.id)))
        assert [(m.direction, m.text, m.status) for m in rows] == [
            ("INBOUND", "Olá, vi o anúncio", "RECEIVED")
        ]
        contact = (await s.scalars(select(Contact).where(Contact.office_id == office_a.id))).one()
        assert (contact.name, contact.phone) == ("João", "+5511987654321")
    received = await outbox(app, office_a.id, "chat.message.received")
    assert len(received) == 1
    photo = {
        "type": "message",
        "id": "gw-in-2",
        "from": "5511987654321",
        "text": "Segue o documento",
        "mediaUrl": "https://gateway.example/media/abc.jpg",
    }
    assert (await client.post(url, **_signed(photo))).json() == {"stored": 1}
    async with app.state.sessionmaker() as s:
        media = (await s.scalars(select(Message).where(Message.type == "MEDIA"))).one()
        assert media.media_url == "https://gateway.example/media/abc.jpg"
    bad_link = {**photo, "id": "gw-in-3", "mediaUrl": "javascript:alert(1)"}
    refused = await client.post(url, **_signed(bad_link))
    assert refused.status_code == 400 and "body.mediaUrl" in error_of(refused)["details"]


async def test_forged_unsigned_or_stale_inbound_is_refused(
    client: httpx.AsyncClient, office_a: OfficeFixture, app: FastAPI, gateway: Gateway
) -> None:
    bridged = await _bridged(client, office_a, gateway.url, type="INSTAGRAM")
    url = f"/channels/bridge/{bridged['id']}/inbound"
    raw = json.dumps(_message()).encode()
    unsigned = await client.post(url, content=raw, headers={"content-type": "application/json"})
    assert unsigned.status_code == 401 and error_of(unsigned)["code"] == "UNAUTHORIZED"
    forged = await client.post(url, **_signed(_message(), secret="another-secret-entirely!"))
    assert forged.status_code == 401
    stale = await client.post(url, **_signed(_message(), at=time.time() - 3600))
    assert stale.status_code == 401
    tampered = _signed(_message())
    tampered["content"] = json.dumps(_message(text="outra coisa")).encode()
    assert (await client.post(url, **tampered)).status_code == 401
    async with app.state.sessionmaker() as s:
        assert list(await s.scalars(select(Message.id))) == []
    missing = await client.post(
        "/channels/bridge/cmissing0000000000/inbound", **_signed(_message())
    )
    assert missing.status_code == 404
    bad = await client.post(url, **_signed({"type": "message", "id": "x", "from": "y"}))
    assert bad.status_code == 400 and "body.text" in error_of(bad)["details"]
    shapeless = await client.post(url, **_signed({"type": "message", "from": "y", "text": "t"}))
    assert shapeless.status_code == 400 and "body.id" in error_of(shapeless)["details"]


async def test_an_instagram_sender_becomes_a_contact_and_is_answered_by_its_id(
    client: httpx.AsyncClient,
    office_a: OfficeFixture,
    app: FastAPI,
    settings: Settings,
    gateway: Gateway,
) -> None:
    bridged = await _bridged(client, office_a, gateway.url, type="INSTAGRAM")
    body = {"type": "message", "id": "ig-1", "from": "17841400000000", "name": "Ana", "text": "Oi"}
    answer = await client.post(f"/channels/bridge/{bridged['id']}/inbound", **_signed(body))
    assert answer.json() == {"stored": 1}
    conversation = (await client.get("/conversation", headers=office_a.headers)).json()["data"][0]
    reply = await client.post(
        f"/conversation/{conversation['id']}/messages",
        json={"text": "Olá Ana!"},
        headers=office_a.headers,
    )
    assert reply.status_code == 201
    assert await _worker(app, settings).run_once() == 1
    [(headers, raw)] = gateway.received
    sent = verify(SECRET, headers, raw)
    assert sent["to"] == "17841400000000" and sent["channel"] == "INSTAGRAM"
    assert sent["text"] == "Olá Ana!" and sent["messageId"] == reply.json()["id"]


async def test_outbound_reaches_the_gateway_signed_and_statuses_move_it(
    client: httpx.AsyncClient,
    office_a: OfficeFixture,
    app: FastAPI,
    settings: Settings,
    gateway: Gateway,
) -> None:
    bridged = await _bridged(client, office_a, gateway.url)
    url = f"/channels/bridge/{bridged['id']}/inbound"
    await client.post(url, **_signed(_message()))
    conversation = (await client.get("/conversation", headers=office_a.headers)).json()["data"][0]
    reply = await client.post(
        f"/conversation/{conversation['id']}/messages",
        json={"text": "Bom dia, João"},
        headers=office_a.headers,
    )
    assert await _worker(app, settings).run_once() == 1
    [(headers, raw)] = gateway.received
    assert verify(SECRET, headers, raw) == {
        "type": "message",
        "integrationId": bridged["id"],
        "channel": "WHATSAPP",
        "messageId": reply.json()["id"],
        "to": "5511987654321",
        "messageType": "TEXT",
        "text": "Bom dia, João",
        "mediaUrl": None,
    }
    listed = (
        await client.get(f"/conversation/{conversation['id']}/messages", headers=office_a.headers)
    ).json()["data"]
    [message] = [m for m in listed if m["id"] == reply.json()["id"]]
    assert message["status"] == "SENT" and message["externalId"].endswith(":gw-out-1")
    delivered = await client.post(
        url, **_signed({"type": "status", "id": "gw-out-1", "status": "DELIVERED"})
    )
    assert delivered.status_code == 200
    statuses = await outbox(app, office_a.id, "chat.message.status")
    assert [e.data["status"] for e in statuses] == ["SENT", "DELIVERED"]


async def test_a_gateway_5xx_is_retried(
    client: httpx.AsyncClient,
    office_a: OfficeFixture,
    app: FastAPI,
    settings: Settings,
    gateway: Gateway,
) -> None:
    bridged = await _bridged(client, office_a, gateway.url)
    await client.post(f"/channels/bridge/{bridged['id']}/inbound", **_signed(_message()))
    conversation = (await client.get("/conversation", headers=office_a.headers)).json()["data"][0]
    reply = await client.post(
        f"/conversation/{conversation['id']}/messages",
        json={"text": "Retorno"},
        headers=office_a.headers,
    )
    gateway.script = [503]
    assert await _worker(app, settings).run_once() == 1
    async with app.state.sessionmaker() as s:
        message = await s.get(Message, reply.json()["id"])
        assert message is not None
        assert (message.status, message.attempts) == ("QUEUED", 1)
        assert message.error == "gateway answered 503"
        assert message.next_attempt_at is not None and message.next_attempt_at > utcnow()
        await s.execute(
            update(Message)
            .where(Message.id == message.id)
            .values(next_attempt_at=utcnow() - timedelta(seconds=1))
        )
        await s.commit()
    assert await _worker(app, settings).run_once() == 1
    assert len(gateway.received) == 2
    async with app.state.sessionmaker() as s:
        message = await s.get(Message, reply.json()["id"])
        assert message is not None and message.status == "SENT"
    gateway.script = [400]
    rejected = await client.post(
        f"/conversation/{conversation['id']}/messages",
        json={"text": "Outra"},
        headers=office_a.headers,
    )
    assert await _worker(app, settings).run_once() == 1
    async with app.state.sessionmaker() as s:
        failed = await s.get(Message, rejected.json()["id"])
        assert failed is not None and failed.status == "FAILED"
        assert failed.error is not None and failed.error.startswith("gateway answered 400")


async def test_a_private_bridge_url_is_refused(
    database_url: str, tmp_path: Path, office_a: OfficeFixture
) -> None:
    settings = Settings(
        database_url=database_url,
        data_dir=tmp_path / "guarded",
        signing_key="test-signing-key",
        webhook_allow_private=False,
    )
    guarded = create_app(settings)
    async with (
        guarded.router.lifespan_context(guarded),
        httpx.AsyncClient(
            transport=httpx.ASGITransport(app=guarded), base_url="http://officehub.test"
        ) as client,
    ):
        inbox = await client.post("/inbox", json={"name": "G"}, headers=office_a.headers)
        body: dict[str, Any] = {"inboxId": inbox.json()["id"], "type": "WHATSAPP", "name": "G"}
        for url, code in (
            ("http://127.0.0.1:8080/send", "BRIDGE_URL_NOT_ALLOWED"),
            ("http://10.0.0.5/send", "BRIDGE_URL_NOT_ALLOWED"),
            ("http://localhost/send", "BRIDGE_URL_NOT_ALLOWED"),
            ("ftp://gateway.example/send", "VALIDATION_ERROR"),
        ):
            answer = await client.post(
                "/integration",
                json={**body, "bridge": {"bridgeUrl": url, "secret": SECRET}},
                headers=office_a.headers,
            )
            assert answer.status_code == 400, url
            problem = error_of(answer)
            assert problem["code"] == code and "body.bridge.bridgeUrl" in problem["details"]
        short = await client.post(
            "/integration",
            json={**body, "bridge": {"bridgeUrl": "https://gw.example/s", "secret": "short"}},
            headers=office_a.headers,
        )
        assert short.status_code == 400 and "body.bridge.secret" in error_of(short)["details"]
        webchat = await client.post(
            "/integration",
            json={
                **body,
                "type": "WEBCHAT",
                "bridge": {"bridgeUrl": "https://gw.example/s", "secret": SECRET},
            },
            headers=office_a.headers,
        )
        assert webchat.status_code == 400 and "body.bridge" in error_of(webchat)["details"]
        listed = await client.get("/integration", headers=office_a.headers)
        assert listed.json()["data"] == []
