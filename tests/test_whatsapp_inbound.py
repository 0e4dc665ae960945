"""The official channel: its settings, the platform's webhook verification and
notifications (signature, new senders, retries, each inbound kind, media download)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.channels.whatsapp import sign
from officehub.contacts.models import Contact
from officehub.conversations.models import Conversation
from officehub.kit.config import Settings
from officehub.messages.models import Message
from tests import factories as f
from tests.helpers import OfficeFixture, error_of, outbox
from tests.whatsapp_platform import Platform
from tests.whatsapp_world import (
    APP_SECRET,
    SETTINGS,
    VERIFY_TOKEN,
    notification,
    official_integration,
    post_notification,
    text_message,
    worker,
)

MISSING = "c" + "0" * 24


@pytest.fixture
def settings(whatsapp_settings: Settings) -> Settings:
    """The test's settings with the platform stand-in as the Cloud API (``conftest``)."""
    return whatsapp_settings


async def _count(session: AsyncSession, model: Any, office_id: str) -> int:
    stmt = select(func.count()).select_from(model).where(model.office_id == office_id)
    return int(await session.scalar(stmt) or 0)


async def _messages(session: AsyncSession, office_id: str) -> list[Message]:
    stmt = select(Message).where(Message.office_id == office_id).order_by(Message.created_at)
    return list(await session.scalars(stmt))


# Integration settings


async def test_whatsapp_settings_are_write_only(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    inbox = await f.make_inbox(session, office_a.id)
    await session.commit()
    body = {
        "inboxId": inbox.id,
        "type": "WHATSAPP_OFFICIAL",
        "name": "Oficial",
        "deviceId": "5511999990000",
        "whatsapp": SETTINGS,
    }
    r = await client.post("/integration", json=body, headers=office_a.headers)
    assert r.status_code == 201, r.text
    shown = r.json()["whatsapp"]
    assert shown == {
        "phoneNumberId": SETTINGS["phoneNumberId"],
        "businessAccountId": SETTINGS["businessAccountId"],
        "accessTokenSet": True,
        "appSecretSet": True,
        "verifyTokenSet": True,
    }
    read = await client.get(f"/integration/{r.json()['id']}", headers=office_a.headers)
    listed = await client.get("/integration", headers=office_a.headers)
    for text in (r.text, read.text, listed.text):
        assert SETTINGS["accessToken"] not in text and SETTINGS["appSecret"] not in text
        assert SETTINGS["verifyToken"] not in text
    changed = {**SETTINGS, "phoneNumberId": "999"}
    patched = await client.patch(
        f"/integration/{r.json()['id']}", json={"whatsapp": changed}, headers=office_a.headers
    )
    assert patched.status_code == 200
    assert patched.json()["whatsapp"]["phoneNumberId"] == "999"


async def test_whatsapp_settings_bad_input_is_400(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    inbox = await f.make_inbox(session, office_a.id)
    await session.commit()
    base = {"inboxId": inbox.id, "name": "Canal", "deviceId": "5511999990001"}
    bad_id = {**SETTINGS, "phoneNumberId": "abc"}
    r = await client.post(
        "/integration",
        json={**base, "type": "WHATSAPP_OFFICIAL", "whatsapp": bad_id},
        headers=office_a.headers,
    )
    assert r.status_code == 400
    assert "body.whatsapp.phoneNumberId" in error_of(r)["details"]
    r = await client.post(
        "/integration",
        json={**base, "type": "WHATSAPP", "whatsapp": SETTINGS},
        headers=office_a.headers,
    )
    assert r.status_code == 400
    assert "body.whatsapp" in error_of(r)["details"]


# GET /channels/whatsapp/{integrationId}/webhook


async def test_webhook_verification_echoes_the_challenge(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    r = await client.get(
        f"/channels/whatsapp/{integration.id}/webhook",
        params={
            "hub.mode": "subscribe",
            "hub.verify_token": VERIFY_TOKEN,
            "hub.challenge": "1158201444",
        },
    )
    assert r.status_code == 200
    assert r.text == "1158201444"
    assert r.headers["content-type"].startswith("text/plain")


async def test_webhook_verification_with_a_wrong_token_is_403(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    params = {"hub.mode": "subscribe", "hub.verify_token": "wrong", "hub.challenge": "42"}
    r = await client.get(f"/channels/whatsapp/{integration.id}/webhook", params=params)
    assert r.status_code == 403
    assert error_of(r)["code"] == "FORBIDDEN"


async def test_webhook_bad_input_is_400(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    r = await client.get("/channels/whatsapp/not-an-id/webhook", params={"hub.mode": "x"})
    assert r.status_code == 400
    assert "path.integrationId" in error_of(r)["details"]
    r = await client.get(f"/channels/whatsapp/{integration.id}/webhook")
    assert r.status_code == 400
    assert "query.hub.verify_token" in error_of(r)["details"]
    r = await client.post("/channels/whatsapp/not-an-id/webhook", content=b"{}")
    assert r.status_code == 400
    assert "path.integrationId" in error_of(r)["details"]


async def test_webhook_of_an_unknown_or_other_channel_is_404(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    inbox = await f.make_inbox(session, office_a.id)
    plain = await f.make_integration(session, office_a.id, inbox.id, type="WHATSAPP")
    await session.commit()
    params = {"hub.mode": "subscribe", "hub.verify_token": VERIFY_TOKEN, "hub.challenge": "1"}
    for ident in (MISSING, plain.id):
        r = await client.get(f"/channels/whatsapp/{ident}/webhook", params=params)
        assert r.status_code == 404
        r = await post_notification(client, ident, notification([text_message("wamid.X")]))
        assert r.status_code == 404


# POST /channels/whatsapp/{integrationId}/webhook


async def test_unsigned_notification_is_401_and_stores_nothing(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    raw = json.dumps(notification([text_message("wamid.A1")])).encode()
    r = await client.post(
        f"/channels/whatsapp/{integration.id}/webhook",
        content=raw,
        headers={"Content-Type": "application/json"},
    )
    assert r.status_code == 401
    assert error_of(r)["code"] == "UNAUTHORIZED"
    assert await _count(session, Message, office_a.id) == 0
    assert await _count(session, Contact, office_a.id) == 0


async def test_forged_notification_is_401_and_stores_nothing(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    body = notification([text_message("wamid.A2")])
    r = await post_notification(client, integration.id, body, secret="someone-else")
    assert r.status_code == 401
    raw = json.dumps(body).encode()
    tampered = raw.replace(b"ajuda", b"AJUDA")
    r = await client.post(
        f"/channels/whatsapp/{integration.id}/webhook",
        content=tampered,
        headers={"X-Hub-Signature-256": sign(APP_SECRET, raw)},
    )
    assert r.status_code == 401
    assert await _count(session, Message, office_a.id) == 0


async def test_new_sender_becomes_a_contact_with_a_new_conversation(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    r = await post_notification(
        client, integration.id, notification([text_message("wamid.N1")], name="João Pereira")
    )
    assert r.status_code == 200, r.text
    assert r.json() == {"stored": 1}
    [contact] = list(await session.scalars(select(Contact).where(Contact.office_id == office_a.id)))
    assert (contact.name, contact.phone, contact.inbox_id) == (
        "João Pereira",
        "+5511987654321",
        integration.inbox_id,
    )
    [conversation] = list(
        await session.scalars(select(Conversation).where(Conversation.office_id == office_a.id))
    )
    assert (conversation.person_id, conversation.integration_id) == (contact.id, integration.id)
    [message] = await _messages(session, office_a.id)
    assert (message.direction, message.type, message.status) == ("INBOUND", "TEXT", "RECEIVED")
    assert (message.text, message.external_id) == ("Olá, preciso de ajuda", "wamid.N1")
    assert len(await outbox(app, office_a.id, "contact.created")) == 1
    assert len(await outbox(app, office_a.id, "chat.conversation.created")) == 1
    [received] = await outbox(app, office_a.id, "chat.message.received")
    assert received.data["externalId"] == "wamid.N1"


async def test_known_sender_writes_into_the_open_conversation(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    contact = await f.make_contact(session, office_a.id, phone="+5511987654321")
    conversation = await f.make_conversation(session, office_a.id, contact.id, integration)
    await session.commit()
    r = await post_notification(client, integration.id, notification([text_message("wamid.K1")]))
    assert r.status_code == 200
    [message] = await _messages(session, office_a.id)
    assert message.conversation_id == conversation.id
    assert await _count(session, Contact, office_a.id) == 1


async def test_retried_notification_is_stored_once(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    body = notification([text_message("wamid.R1")])
    first = await post_notification(client, integration.id, body)
    again = await post_notification(client, integration.id, body)
    assert (first.json(), again.json()) == ({"stored": 1}, {"stored": 0})
    assert await _count(session, Message, office_a.id) == 1


async def test_concurrent_retries_of_a_notification_store_it_once(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    body = notification([text_message("wamid.C1")], sender="5521988887777")
    answers = await asyncio.gather(
        *(post_notification(client, integration.id, body) for _ in range(8))
    )
    assert [a.status_code for a in answers] == [200] * 8
    assert sum(a.json()["stored"] for a in answers) == 1
    assert await _count(session, Message, office_a.id) == 1
    assert await _count(session, Contact, office_a.id) == 1
    assert await _count(session, Conversation, office_a.id) == 1


async def test_interactive_button_and_list_replies_are_stored_as_text(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    button = {
        "from": "5511987654321",
        "id": "wamid.I1",
        "type": "interactive",
        "interactive": {"type": "button_reply", "button_reply": {"id": "yes", "title": "Sim"}},
    }
    listed = {
        "from": "5511987654321",
        "id": "wamid.I2",
        "type": "interactive",
        "interactive": {
            "type": "list_reply",
            "list_reply": {"id": "opt-2", "title": "Trabalhista", "description": "CLT"},
        },
    }
    r = await post_notification(client, integration.id, notification([button, listed]))
    assert r.json() == {"stored": 2}
    stored = {m.external_id: m for m in await _messages(session, office_a.id)}
    assert (stored["wamid.I1"].text, stored["wamid.I1"].payload) == ("Sim", {"replyId": "yes"})
    assert (stored["wamid.I2"].text, stored["wamid.I2"].payload) == (
        "Trabalhista",
        {"replyId": "opt-2"},
    )


@pytest.mark.parametrize(
    ("kind", "content", "mime"),
    [
        ("image", b"\xff\xd8\xff\xe0" + b"jpeg" * 100, "image/jpeg"),
        ("audio", b"OggS" + b"\x00" * 200, "audio/ogg"),
        ("video", b"\x00\x00\x00\x18ftypmp42" + b"\x00" * 200, "video/mp4"),
        ("document", b"%PDF-1.7\n" + b"x" * 300, "application/pdf"),
    ],
)
async def test_inbound_media_is_fetched_into_storage(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    platform: Platform,
    kind: str,
    content: bytes,
    mime: str,
) -> None:
    integration = await official_integration(session, office_a.id)
    platform.media["media-1"] = (content, mime)
    message = {
        "from": "5511987654321",
        "id": f"wamid.M-{kind}",
        "type": kind,
        kind: {"id": "media-1", "mime_type": mime, "caption": "segue o arquivo"},
    }
    r = await post_notification(client, integration.id, notification([message]))
    assert r.json() == {"stored": 1}
    [stored] = await _messages(session, office_a.id)
    assert (stored.type, stored.media_url, stored.media_external_id) == ("MEDIA", None, "media-1")
    assert await worker(app, settings, media=True).run_once() == 1
    await session.refresh(stored)
    assert stored.media_url is not None and stored.error is None
    fetched = await client.get(stored.media_url.removeprefix(settings.public_url))
    assert fetched.status_code == 200
    assert fetched.content == content
    assert await worker(app, settings, media=True).run_once() == 0


async def test_inbound_media_link_to_a_private_address_is_refused(
    app: FastAPI,
    database_url: str,
    tmp_path: Path,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    platform: Platform,
) -> None:
    integration = await official_integration(session, office_a.id)
    platform.media["media-2"] = (b"\xff\xd8\xff" + b"x" * 50, "image/jpeg")
    message = {
        "from": "5511987654321",
        "id": "wamid.SSRF",
        "type": "image",
        "image": {"id": "media-2", "mime_type": "image/jpeg"},
    }
    await post_notification(client, integration.id, notification([message]))
    guarded = Settings(
        database_url=database_url,
        data_dir=tmp_path / "data",
        signing_key="test-signing-key",
        whatsapp_api_url=platform.url,
        webhook_allow_private=False,
    )
    assert await worker(app, guarded, media=True).run_once() == 1
    [stored] = await _messages(session, office_a.id)
    assert stored.media_url is None
    assert stored.error is not None and "private" in stored.error
    assert await worker(app, guarded, media=True).run_once() == 0
