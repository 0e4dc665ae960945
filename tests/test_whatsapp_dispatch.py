"""Sending on the official channel: the dispatcher, retries, failures, statuses, order,
and the 24-hour customer-service window."""

from __future__ import annotations

import asyncio
import logging
import threading
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import event, select
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.kit.config import Settings
from officehub.kit.timeutil import utcnow
from officehub.messages.models import Message
from officehub.templates.models import WhatsAppTemplate
from tests import factories as f
from tests.helpers import OfficeFixture, delete_from_elsewhere, error_of, outbox, quiet_writers
from tests.whatsapp_platform import TOKEN, VERSION, Platform, Scripted, error
from tests.whatsapp_world import (
    PHONE_NUMBER_ID,
    notification,
    official_integration,
    post_notification,
    status,
    text_message,
    worker,
)


@pytest.fixture
def settings(whatsapp_settings: Settings) -> Settings:
    """The test's settings with the platform stand-in as the Cloud API (``conftest``)."""
    return whatsapp_settings


async def _open_window(
    client: httpx.AsyncClient, session: AsyncSession, office: OfficeFixture
) -> tuple[str, str]:
    """An official integration and a conversation whose contact just wrote."""
    integration = await official_integration(session, office.id)
    await post_notification(client, integration.id, notification([text_message("wamid.in1")]))
    conversation_id = await session.scalar(
        select(Message.conversation_id).where(Message.office_id == office.id)
    )
    assert conversation_id is not None
    return integration.id, conversation_id


async def _send(
    client: httpx.AsyncClient, office: OfficeFixture, conversation_id: str, text: str
) -> str:
    r = await client.post(
        f"/conversation/{conversation_id}/messages", json={"text": text}, headers=office.headers
    )
    assert r.status_code == 201, r.text
    assert r.json()["status"] == "QUEUED"
    message_id: str = r.json()["id"]
    return message_id


async def _message(session: AsyncSession, ident: str) -> Message:
    session.expire_all()
    message = await session.get(Message, ident)
    assert message is not None
    return message


async def _conversations(
    client: httpx.AsyncClient, session: AsyncSession, office: OfficeFixture, count: int, tag: str
) -> list[str]:
    """``count`` contacts who wrote on one official integration: their conversations."""
    integration = await official_integration(session, office.id)
    for n in range(count):
        sender = f"55119876543{n:02d}"
        body = notification([text_message(f"wamid.{tag}{n}", sender=sender)], sender=sender)
        await post_notification(client, integration.id, body)
    query = select(Message.conversation_id).where(Message.office_id == office.id)
    return list(await session.scalars(query))


async def test_a_send_goes_out_and_its_statuses_reach_read(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    platform: Platform,
) -> None:
    integration_id, conversation_id = await _open_window(client, session, office_a)
    message_id = await _send(client, office_a, conversation_id, "Bom dia! Recebemos seu contato.")
    assert await worker(app, settings).run_once() == 1
    [sent] = platform.sent
    assert sent == {
        "messaging_product": "whatsapp",
        "recipient_type": "individual",
        "to": "5511987654321",
        "type": "text",
        "text": {"body": "Bom dia! Recebemos seu contato.", "preview_url": False},
    }
    assert platform.send_headers[0]["authorization"] == f"Bearer {TOKEN}"
    assert platform.send_paths == [f"/{VERSION}/{PHONE_NUMBER_ID}/messages"]
    message = await _message(session, message_id)
    assert (message.status, message.external_id) == ("SENT", "wamid.test0001")
    for state in ("delivered", "read"):
        r = await post_notification(
            client, integration_id, notification(statuses=[status("wamid.test0001", state)])
        )
        assert r.status_code == 200
    listed = await client.get(f"/conversation/{conversation_id}/messages", headers=office_a.headers)
    newest = listed.json()["data"][0]
    assert (newest["status"], newest["externalId"]) == ("READ", "wamid.test0001")
    events = await outbox(app, office_a.id, "chat.message.status")
    assert [(e.data["previousStatus"], e.data["status"]) for e in events] == [
        ("QUEUED", "SENT"),
        ("SENT", "DELIVERED"),
        ("DELIVERED", "READ"),
    ]
    assert await worker(app, settings).run_once() == 0


async def test_a_late_delivered_status_does_not_move_read_back(
    client: httpx.AsyncClient,
    app: FastAPI,
    settings: Settings,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    integration_id, conversation_id = await _open_window(client, session, office_a)
    message_id = await _send(client, office_a, conversation_id, "Olá")
    await worker(app, settings).run_once()
    for state in ("read", "delivered"):
        await post_notification(
            client, integration_id, notification(statuses=[status("wamid.test0001", state)])
        )
    assert (await _message(session, message_id)).status == "READ"


async def test_a_429_is_retried_with_backoff_then_sent(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    platform: Platform,
) -> None:
    _, conversation_id = await _open_window(client, session, office_a)
    message_id = await _send(client, office_a, conversation_id, "Olá")
    platform.script["send"] = [
        Scripted(429, error(429, 130429, "Rate limit hit").body, {"Retry-After": "30"})
    ]
    now = utcnow()
    assert await worker(app, settings, now).run_once() == 1
    message = await _message(session, message_id)
    assert (message.status, message.attempts) == ("QUEUED", 1)
    assert message.next_attempt_at is not None
    assert message.next_attempt_at >= now + timedelta(seconds=30)
    assert await worker(app, settings, now + timedelta(seconds=5)).run_once() == 0
    assert await worker(app, settings, now + timedelta(seconds=61)).run_once() == 1
    message = await _message(session, message_id)
    assert (message.status, message.external_id) == ("SENT", "wamid.test0001")
    assert len(platform.sent) == 2


async def test_a_5xx_is_retried(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    platform: Platform,
) -> None:
    _, conversation_id = await _open_window(client, session, office_a)
    message_id = await _send(client, office_a, conversation_id, "Olá")
    platform.script["send"] = [error(500, 1, "An unknown error occurred")]
    now = utcnow()
    await worker(app, settings, now).run_once()
    assert (await _message(session, message_id)).status == "QUEUED"
    await worker(app, settings, now + timedelta(minutes=10)).run_once()
    assert (await _message(session, message_id)).status == "SENT"


async def test_a_permanent_error_fails_the_message_with_the_platforms_error(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    platform: Platform,
) -> None:
    _, conversation_id = await _open_window(client, session, office_a)
    message_id = await _send(client, office_a, conversation_id, "Olá")
    platform.script["send"] = [error(400, 131026, "Message undeliverable")]
    assert await worker(app, settings).run_once() == 1
    message = await _message(session, message_id)
    assert message.status == "FAILED"
    assert message.error == "400 131026: Message undeliverable"
    [event] = await outbox(app, office_a.id, "chat.message.status")
    assert (event.data["status"], event.data["error"]) == ("FAILED", message.error)
    assert await worker(app, settings, utcnow() + timedelta(hours=1)).run_once() == 0


async def test_retries_give_up_after_the_last_attempt(
    app: FastAPI,
    database_url: str,
    tmp_path: Path,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    platform: Platform,
) -> None:
    few = Settings(
        database_url=database_url,
        data_dir=tmp_path / "data",
        signing_key="test-signing-key",
        whatsapp_api_url=platform.url,
        dispatch_max_attempts=2,
    )
    _, conversation_id = await _open_window(client, session, office_a)
    message_id = await _send(client, office_a, conversation_id, "Olá")
    platform.script["send"] = [error(503, 2, "Service unavailable")] * 2
    now = utcnow()
    await worker(app, few, now).run_once()
    await worker(app, few, now + timedelta(hours=1)).run_once()
    message = await _message(session, message_id)
    assert message.status == "FAILED"
    assert message.error is not None and "gave up after 2 tries" in message.error


async def test_sends_of_one_conversation_keep_their_order(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    platform: Platform,
) -> None:
    _, conversation_id = await _open_window(client, session, office_a)
    texts = ["primeira", "segunda", "terceira"]
    for text in texts:
        await _send(client, office_a, conversation_id, text)
    platform.script["send"] = [error(503, 2, "Service unavailable")]
    now = utcnow()
    for minutes in range(0, 60, 10):
        await worker(app, settings, now + timedelta(minutes=minutes)).run_until_idle()
    assert [s["text"]["body"] for s in platform.sent] == ["primeira", *texts]


async def test_conversations_are_sent_side_by_side(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    platform: Platform,
) -> None:
    conversation_ids = await _conversations(client, session, office_a, 3, "side")
    for conversation_id in conversation_ids:
        await _send(client, office_a, conversation_id, "Olá")
    assert await worker(app, settings).run_once() == 3
    assert len({s["to"] for s in platform.sent}) == 3


async def test_a_message_deleted_while_its_send_is_in_flight_is_dropped_quietly(
    app: FastAPI,
    settings: Settings,
    caplog: pytest.LogCaptureFixture,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    platform: Platform,
) -> None:
    """Three sends go out; one message is deleted (from another connection) just before
    the worker writes the first outcome. The other two are recorded SENT, the deleted
    one's outcome is dropped without an error, and no outcome is lost."""
    conversation_ids = await _conversations(client, session, office_a, 3, "gone")
    ids = [await _send(client, office_a, c, "Olá") for c in conversation_ids]
    doomed, kept = ids[0], ids[1:]
    deleted: list[str] = []
    threads: list[threading.Thread] = []

    await quiet_writers(app)

    @event.listens_for(app.state.engine.sync_engine, "before_cursor_execute")
    def before(_conn: Connection, _cursor: Any, statement: str, *_args: Any) -> None:
        # The recorder's first write: "do I still hold them" (a claim moves the lease).
        if not deleted and "set claim_token=messages.claim_token" in statement.lower():
            deleted.append(doomed)
            threads.extend(delete_from_elsewhere(settings.database_url, "messages", doomed))

    try:
        with caplog.at_level(logging.WARNING, logger="officehub"):
            assert await worker(app, settings).run_once() == 3
    finally:
        event.remove(app.state.engine.sync_engine, "before_cursor_execute", before)
    for thread in threads:
        await asyncio.to_thread(thread.join)
    assert deleted == [doomed] and len(platform.sent) == 3
    assert await session.get(Message, doomed) is None
    assert [(await _message(session, i)).status for i in kept] == ["SENT", "SENT"]
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING], caplog.text


async def test_concurrent_workers_send_each_message_once(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    platform: Platform,
) -> None:
    conversation_ids = await _conversations(client, session, office_a, 6, "many")
    for conversation_id in conversation_ids:
        for text in ("um", "dois"):
            await _send(client, office_a, conversation_id, text)
    await asyncio.gather(*(worker(app, settings).run_until_idle() for _ in range(8)))
    assert len(platform.sent) == 12
    by_phone: dict[str, list[str]] = {}
    for sent in platform.sent:
        by_phone.setdefault(sent["to"], []).append(sent["text"]["body"])
    assert all(texts == ["um", "dois"] for texts in by_phone.values()), by_phone
    statuses = await session.scalars(
        select(Message.status).where(
            Message.office_id == office_a.id, Message.direction == "OUTBOUND"
        )
    )
    assert set(statuses) == {"SENT"}


async def test_other_channel_types_stay_queued(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    platform: Platform,
) -> None:
    inbox = await f.make_inbox(session, office_a.id)
    integration = await f.make_integration(session, office_a.id, inbox.id, type="WHATSAPP")
    contact = await f.make_contact(session, office_a.id)
    conversation = await f.make_conversation(session, office_a.id, contact.id, integration)
    await session.commit()
    message_id = await _send(client, office_a, conversation.id, "Olá")
    assert await worker(app, settings).run_once() == 0
    assert (await _message(session, message_id)).status == "QUEUED"
    assert platform.sent == []


def _row(
    office_id: str, conversation_id: str, direction: str, ago: timedelta, external_id: str
) -> Message:
    """A message row written as if it came ``ago``: the contact's (INBOUND) or ours."""
    inbound = direction == "INBOUND"
    return Message(
        office_id=office_id,
        conversation_id=conversation_id,
        direction=direction,
        type="TEXT",
        text="Oi" if inbound else "Olá Maria",
        status="RECEIVED" if inbound else "DELIVERED",
        created_at=utcnow() - ago,
        external_id=external_id,
    )


# The 24-hour customer-service window


async def test_outside_service_window_free_text_is_409(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    contact = await f.make_contact(session, office_a.id)
    conversation = await f.make_conversation(session, office_a.id, contact.id, integration)
    await session.commit()
    r = await client.post(
        f"/conversation/{conversation.id}/messages", json={"text": "Olá"}, headers=office_a.headers
    )
    assert r.status_code == 409
    assert error_of(r)["code"] == "OUTSIDE_SERVICE_WINDOW"


async def test_the_service_window_is_opened_only_by_the_contacts_inbound_messages(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    """A conversation whose only recent message is ours (an outbound one, delivered a
    minute ago) has no open window; the contact's old inbound one does not open it either."""
    integration = await official_integration(session, office_a.id)
    contact = await f.make_contact(session, office_a.id)
    conversation = await f.make_conversation(session, office_a.id, contact.id, integration)
    session.add(_row(office_a.id, conversation.id, "OUTBOUND", timedelta(minutes=1), "wamid.out1"))
    await session.commit()
    r = await client.post(
        f"/conversation/{conversation.id}/messages", json={"text": "Olá"}, headers=office_a.headers
    )
    assert r.status_code == 409, r.text
    assert error_of(r)["code"] == "OUTSIDE_SERVICE_WINDOW"
    session.add(_row(office_a.id, conversation.id, "INBOUND", timedelta(hours=25), "wamid.in-old"))
    await session.commit()
    r = await client.post(
        f"/conversation/{conversation.id}/messages", json={"text": "Olá"}, headers=office_a.headers
    )
    assert r.status_code == 409, r.text
    assert error_of(r)["code"] == "OUTSIDE_SERVICE_WINDOW"


async def test_the_service_window_is_opened_only_by_this_conversations_contact(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    """Contacts who wrote a minute ago in the office's conversations made before and after
    this one open no window here: only this conversation's own inbound messages count."""
    integration = await official_integration(session, office_a.id)
    made = []
    for n, wrote in enumerate([True, False, True]):
        contact = await f.make_contact(session, office_a.id, f"Cliente {n}")
        conversation = await f.make_conversation(session, office_a.id, contact.id, integration)
        if wrote:
            minute = timedelta(minutes=1)
            session.add(_row(office_a.id, conversation.id, "INBOUND", minute, f"wamid.in-{n}"))
        await session.commit()
        made.append(conversation.id)
    assert made == sorted(made)  # ids in time order: one before, one after the silent one
    r = await client.post(
        f"/conversation/{made[1]}/messages", json={"text": "Olá"}, headers=office_a.headers
    )
    assert r.status_code == 409, r.text
    assert error_of(r)["code"] == "OUTSIDE_SERVICE_WINDOW"
    await _send(client, office_a, made[0], "Olá")
    await _send(client, office_a, made[2], "Olá")


async def test_outside_service_window_after_24_hours_is_409(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    _, conversation_id = await _open_window(client, session, office_a)
    inbound = await session.scalar(select(Message).where(Message.office_id == office_a.id))
    assert inbound is not None
    inbound.created_at = utcnow() - timedelta(hours=24, minutes=1)
    await session.commit()
    r = await client.post(
        f"/conversation/{conversation_id}/messages", json={"text": "Olá"}, headers=office_a.headers
    )
    assert r.status_code == 409
    assert error_of(r)["code"] == "OUTSIDE_SERVICE_WINDOW"


async def test_inside_the_service_window_free_text_is_accepted_to_its_last_minute(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    """The contact wrote 23 h 59 min ago: the window is still open, a free text is queued
    (201). (The window's edge, exactly 24 h, cannot be reached with a real clock.)"""
    _, conversation_id = await _open_window(client, session, office_a)
    inbound = await session.scalar(select(Message).where(Message.office_id == office_a.id))
    assert inbound is not None
    inbound.created_at = utcnow() - timedelta(hours=23, minutes=59)
    await session.commit()
    await _send(client, office_a, conversation_id, "Olá")


async def test_a_reaction_keeps_to_the_service_window_as_free_text_does(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    """The office's reaction to the client's message goes out while the window is open and
    is refused (409) once the client's last message is over 24 hours old."""
    _, conversation_id = await _open_window(client, session, office_a)
    inbound = await session.scalar(select(Message).where(Message.office_id == office_a.id))
    assert inbound is not None
    url = f"/conversation/{conversation_id}/messages/{inbound.id}/reaction"
    r = await client.post(url, json={"emoji": "👍"}, headers=office_a.headers)
    assert r.status_code == 200, r.text
    inbound.created_at = utcnow() - timedelta(hours=24, minutes=1)
    await session.commit()
    r = await client.post(url, json={"emoji": "🙏"}, headers=office_a.headers)
    assert r.status_code == 409, r.text
    assert error_of(r)["code"] == "OUTSIDE_SERVICE_WINDOW"


async def test_outside_service_window_an_approved_template_is_accepted_and_sent(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    platform: Platform,
) -> None:
    integration = await official_integration(session, office_a.id)
    contact = await f.make_contact(session, office_a.id)
    conversation = await f.make_conversation(session, office_a.id, contact.id, integration)
    session.add(
        WhatsAppTemplate(
            office_id=office_a.id,
            integration_id=integration.id,
            name="retorno_atendimento",
            language="pt_BR",
            status="APPROVED",
            category="UTILITY",
            components=[{"type": "BODY", "text": "Olá {{1}}, seu processo {{2}} andou."}],
        )
    )
    await session.commit()
    body = {
        "templateName": "retorno_atendimento",
        "language": "pt_BR",
        "variables": ["Maria", "0001234-56.2025.8.26.0100"],
    }
    r = await client.post(
        f"/conversation/{conversation.id}/messages", json=body, headers=office_a.headers
    )
    assert r.status_code == 201, r.text
    assert (r.json()["type"], r.json()["templateName"]) == ("TEMPLATE", "retorno_atendimento")
    assert await worker(app, settings).run_once() == 1
    [sent] = platform.sent
    assert sent["type"] == "template"
    assert sent["template"] == {
        "name": "retorno_atendimento",
        "language": {"code": "pt_BR"},
        "components": [
            {
                "type": "body",
                "parameters": [
                    {"type": "text", "text": "Maria"},
                    {"type": "text", "text": "0001234-56.2025.8.26.0100"},
                ],
            }
        ],
    }
