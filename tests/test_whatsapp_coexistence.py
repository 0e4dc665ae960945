"""The WhatsApp Business app beside the API (coexistence, issue 40): what the office types
in the app on its phone is stored as outbound messages of the client's conversation
(``smb_message_echoes``), and the app's contacts are the office's (``smb_app_state_sync``).
The notifications are the fixtures of ``tests/fixtures/whatsapp/coexistence/``, signed and
posted to a running server."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.channels.whatsapp import sign
from officehub.contacts.models import Contact
from officehub.conversations.models import Conversation
from officehub.kit.config import Settings
from officehub.messages.models import Message
from tests import factories as f
from tests.helpers import OfficeFixture, outbox
from tests.whatsapp_fixtures import FIXTURES
from tests.whatsapp_platform import Platform
from tests.whatsapp_world import APP_SECRET, official_integration, worker

ECHO = "wamid.HBgNNTUxMTk4NzY1NDMyMRUCABEYEkVDSE8wMDAwMDAwMDAwMDAwMQA="
IMAGE_ECHO = "wamid.HBgLQlNVSUQtRUNITxUCABEYEkVDSE8wMDAwMDAwMDAwMDAwMgA="


@pytest.fixture
def settings(whatsapp_settings: Settings) -> Settings:
    return whatsapp_settings


@pytest.fixture
async def served(server_url: str) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=server_url, timeout=30) as c:
        yield c


async def _post(served: httpx.AsyncClient, integration_id: str, folder: str, name: str) -> int:
    raw = (FIXTURES / folder / f"{name}.json").read_bytes()
    r = await served.post(
        f"/channels/whatsapp/{integration_id}/webhook",
        content=raw,
        headers={"Content-Type": "application/json", "X-Hub-Signature-256": sign(APP_SECRET, raw)},
    )
    assert r.status_code == 200, r.text
    stored: int = r.json()["stored"]
    return stored


async def _contacts(session: AsyncSession, office_id: str) -> list[Contact]:
    stmt = select(Contact).where(Contact.office_id == office_id).order_by(Contact.created_at)
    return list(await session.scalars(stmt.execution_options(populate_existing=True)))


async def test_what_the_office_types_in_the_app_is_stored_as_outbound_and_never_sent_again(
    app: FastAPI,
    settings: Settings,
    served: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    platform: Platform,
) -> None:
    integration = await official_integration(session, office_a.id)
    assert await _post(served, integration.id, "identity", "phone_and_user_id_text") == 1
    assert await _post(served, integration.id, "coexistence", "echoes") == 2
    [maria] = await _contacts(session, office_a.id)
    stmt = select(Message).where(Message.office_id == office_a.id).order_by(Message.created_at)
    stored = list(await session.scalars(stmt))
    assert {m.conversation_id for m in stored} == {stored[0].conversation_id}
    listed = await served.get(
        f"/conversation/{stored[0].conversation_id}/messages", headers=office_a.headers
    )
    by_id = {m["externalId"]: m for m in listed.json()["data"]}
    echo, image = by_id[ECHO], by_id[IMAGE_ECHO]
    assert (echo["direction"], echo["status"], echo["type"]) == ("OUTBOUND", "SENT", "TEXT")
    assert echo["text"] == "Oi Maria, aqui é o Dr. Paulo, pelo celular do escritório"
    assert (image["direction"], image["type"], image["text"]) == (
        "OUTBOUND",
        "MEDIA",
        "Procuração assinada",
    )
    kept = {m.external_id: m for m in stored}
    assert kept[ECHO].payload == {"origin": "business_app"}
    assert kept[ECHO].sent_by is None
    assert kept[IMAGE_ECHO].media_external_id == "1479537139650973"
    # Retried: nothing new; never handed to the platform again.
    assert await _post(served, integration.id, "coexistence", "echoes") == 0
    assert await worker(app, settings).run_once() == 0
    assert platform.sent == []
    sent = await outbox(app, office_a.id, "chat.message.sent")
    assert {e.data["externalId"] for e in sent} == {ECHO, IMAGE_ECHO}
    assert [c.id for c in await _contacts(session, office_a.id)] == [maria.id]


async def test_an_echo_to_a_client_the_office_never_heard_from_opens_their_conversation(
    served: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    assert await _post(served, integration.id, "coexistence", "echoes") == 2
    contacts = await _contacts(session, office_a.id)
    assert sorted((c.phone or "", c.whatsapp_user_id or "") for c in contacts) == [
        ("", "BR.1502576394655843"),
        ("+5511987654321", ""),
    ]


async def test_the_apps_contacts_become_the_offices_without_renaming_or_deleting(
    app: FastAPI, served: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    known = await f.make_contact(session, office_a.id, name="Maria Souza", phone="+5511987654321")
    removed = await f.make_contact(session, office_a.id, name="Pedro", phone="+5511900001111")
    await session.commit()
    assert await _post(served, integration.id, "coexistence", "app_state_sync") == 0
    contacts = {c.phone: c for c in await _contacts(session, office_a.id)}
    assert set(contacts) == {"+5511987654321", "+5511900001111", "+5511955554444"}
    assert contacts["+5511987654321"].name == "Maria Souza"  # the office's name kept
    assert contacts["+5511900001111"].id == removed.id  # a removal in the app deletes nothing
    assert contacts["+5511955554444"].name == "Carlos Lima"
    [created] = await outbox(app, office_a.id, "contact.created")
    assert created.data["phone"] == "+5511955554444"
    assert known.id in {c.id for c in contacts.values()}


async def test_history_is_imported_once_at_its_own_times_and_starts_no_automation(
    app: FastAPI,
    settings: Settings,
    served: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    platform: Platform,
) -> None:
    integration = await official_integration(session, office_a.id)
    assert await _post(served, integration.id, "coexistence", "history") == 0
    stmt = select(Message).where(Message.office_id == office_a.id).order_by(Message.created_at)
    imported = list(await session.scalars(stmt))
    assert [(m.external_id, m.direction, m.status) for m in imported] == [
        ("wamid.HISTORY-JOSE-1", "INBOUND", "RECEIVED"),
        ("wamid.HISTORY-MARIA-1", "INBOUND", "RECEIVED"),
        ("wamid.HISTORY-MARIA-2", "OUTBOUND", "DELIVERED"),
        ("wamid.HISTORY-MARIA-3", "INBOUND", "RECEIVED"),
    ]
    assert imported[1].created_at == datetime(2025, 11, 24, 16, 0, tzinfo=UTC)
    conversations = list(
        await session.scalars(select(Conversation).where(Conversation.office_id == office_a.id))
    )
    assert len(conversations) == 2
    for conversation in conversations:
        assert conversation.status == "CLOSED"
        assert (conversation.assigned_user_id, conversation.queued_at) == (None, None)
        assert conversation.first_response_due_at is None and conversation.sla_check_at is None
    # No message or conversation event: no flow, rule, routing or webhook starts.
    names = {e.name for e in await outbox(app, office_a.id)}
    assert names == {"contact.created"}
    assert await worker(app, settings).run_once() == 0
    assert platform.sent == []
    # Delivered again (the platform retries): nothing new.
    assert await _post(served, integration.id, "coexistence", "history") == 0
    assert len(list(await session.scalars(stmt))) == 4
    listed = await served.get(
        f"/conversation/{imported[1].conversation_id}/messages", headers=office_a.headers
    )
    assert [m["externalId"] for m in listed.json()["data"]] == [
        "wamid.HISTORY-MARIA-3",
        "wamid.HISTORY-MARIA-2",
        "wamid.HISTORY-MARIA-1",
    ]


async def test_history_of_a_client_with_a_conversation_joins_it_quietly(
    app: FastAPI, served: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    assert await _post(served, integration.id, "identity", "phone_and_user_id_text") == 1
    [current_id] = list(
        await session.scalars(select(Conversation.id).where(Conversation.office_id == office_a.id))
    )
    before = {e.id for e in await outbox(app, office_a.id)}
    await _post(served, integration.id, "coexistence", "history")
    maria = await session.scalars(
        select(Message.conversation_id).where(Message.external_id.like("wamid.HISTORY-MARIA-%"))
    )
    assert set(maria) == {current_id}
    refreshed = await session.get(Conversation, current_id, populate_existing=True)
    assert refreshed is not None and refreshed.status == "OPEN"
    assert refreshed.inbound_count == 1  # the history is not unread
    new = [e.name for e in await outbox(app, office_a.id) if e.id not in before]
    assert new == ["contact.created"]  # José, met through the history only
