"""Messages: inbound from a channel adapter, outbound text, template sends, the paged list."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy.ext.asyncio import AsyncSession

from tests import factories as f
from tests.helpers import OfficeFixture, error_of, outbox

pytestmark = pytest.mark.anyio
MISSING = "c" + "0" * 24


async def _conversation(session: AsyncSession, office: OfficeFixture) -> tuple[str, str]:
    inbox = await f.make_inbox(session, office.id)
    integration = await f.make_integration(session, office.id, inbox.id)
    contact = await f.make_contact(session, office.id)
    conversation = await f.make_conversation(session, office.id, contact.id, integration)
    await session.commit()
    return conversation.id, integration.id


async def _messages(
    client: httpx.AsyncClient, office: OfficeFixture, conversation_id: str, **params: Any
) -> dict[str, Any]:
    r = await client.get(
        f"/conversation/{conversation_id}/messages", params=params, headers=office.headers
    )
    assert r.status_code == 200, r.text
    page: dict[str, Any] = r.json()
    return page


# POST /conversation/{id}/messages/inbound


async def test_inbound_message_emits_chat_message_received(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    conversation_id, integration_id = await _conversation(session, office_a)
    r = await client.post(
        f"/conversation/{conversation_id}/messages/inbound",
        json={"text": "Bom dia, preciso de ajuda"},
        headers=office_a.headers,
    )
    assert r.status_code == 201
    message = r.json()
    assert message["conversationId"] == conversation_id
    assert (message["direction"], message["type"]) == ("INBOUND", "TEXT")
    assert message["text"] == "Bom dia, preciso de ajuda"
    assert message["status"] == "RECEIVED" and message["createdAt"].endswith("Z")
    assert message["templateName"] is None and message["mediaUrl"] is None
    [event] = await outbox(app, office_a.id, "chat.message.received")
    assert event.data == message
    assert (event.conversation_id, event.integration_id) == (conversation_id, integration_id)
    conversation = await client.get(f"/conversation/{conversation_id}", headers=office_a.headers)
    assert conversation.json()["lastMessageAt"] == message["createdAt"]


async def test_inbound_media_message(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    conversation_id, _ = await _conversation(session, office_a)
    r = await client.post(
        f"/conversation/{conversation_id}/messages/inbound",
        json={"mediaUrl": "https://cdn.example.com/a.jpg", "text": "foto do contrato"},
        headers=office_a.headers,
    )
    assert r.status_code == 201
    assert r.json()["type"] == "MEDIA"
    assert r.json()["mediaUrl"] == "https://cdn.example.com/a.jpg"


async def test_inbound_bad_input_is_400(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    conversation_id, _ = await _conversation(session, office_a)
    path = f"/conversation/{conversation_id}/messages/inbound"
    for body, field in (
        ({}, "body.text"),
        ({"text": ""}, "body.text"),
        ({"text": "x" * 4097}, "body.text"),
        ({"mediaUrl": "file:///etc/passwd"}, "body.mediaUrl"),
        ({"text": "oi\x00"}, "body.text"),
    ):
        r = await client.post(path, json=body, headers=office_a.headers)
        assert r.status_code == 400, body
        assert field in error_of(r)["details"]
    r = await client.post(
        "/conversation/nope/messages/inbound", json={"text": "oi"}, headers=office_a.headers
    )
    assert "path.id" in error_of(r)["details"]
    assert (await _messages(client, office_a, conversation_id))["totalResults"] == 0
    assert await outbox(app, office_a.id) == []


# POST /conversation/{id}/messages


async def test_outbound_text_emits_chat_message_sent(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    conversation_id, integration_id = await _conversation(session, office_a)
    r = await client.post(
        f"/conversation/{conversation_id}/messages",
        json={"text": "Olá! Como podemos ajudar?"},
        headers=office_a.headers,
    )
    assert r.status_code == 201
    message = r.json()
    assert (message["direction"], message["type"], message["status"]) == (
        "OUTBOUND",
        "TEXT",
        "QUEUED",
    )
    [event] = await outbox(app, office_a.id, "chat.message.sent")
    assert event.data == message
    assert (event.conversation_id, event.integration_id) == (conversation_id, integration_id)


async def test_template_send_without_an_approved_template_is_409(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    conversation_id, _ = await _conversation(session, office_a)
    r = await client.post(
        f"/conversation/{conversation_id}/messages",
        json={"templateName": "boas_vindas", "language": "pt_BR", "variables": ["Maria"]},
        headers=office_a.headers,
    )
    assert r.status_code == 409
    body = error_of(r)
    assert body["code"] == "TEMPLATE_NOT_APPROVED"
    assert "boas_vindas" in body["details"]
    assert (await _messages(client, office_a, conversation_id))["totalResults"] == 0
    assert await outbox(app, office_a.id, "chat.message.sent") == []


async def test_outbound_bad_input_is_400(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    conversation_id, _ = await _conversation(session, office_a)
    path = f"/conversation/{conversation_id}/messages"
    for body, field in (
        ({}, "body.text"),
        ({"text": "oi", "templateName": "boas_vindas"}, "body.text"),
        ({"text": 12}, "body.text"),
        ({"templateName": ""}, "body.templateName"),
    ):
        r = await client.post(path, json=body, headers=office_a.headers)
        assert r.status_code == 400, body
        assert field in error_of(r)["details"]
    assert (await _messages(client, office_a, conversation_id))["totalResults"] == 0


# GET /conversation/{id}/messages


async def test_list_messages_newest_first_and_paged(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    conversation_id, _ = await _conversation(session, office_a)
    sent = []
    for i in range(3):
        r = await client.post(
            f"/conversation/{conversation_id}/messages/inbound",
            json={"text": f"mensagem {i}"},
            headers=office_a.headers,
        )
        sent.append(r.json())
    reply = await client.post(
        f"/conversation/{conversation_id}/messages", json={"text": "ok"}, headers=office_a.headers
    )
    sent.append(reply.json())
    page = await _messages(client, office_a, conversation_id, limit=3)
    assert page["totalResults"] == 4 and page["totalPages"] == 2
    assert page["data"] == sent[::-1][:3]
    assert (await _messages(client, office_a, conversation_id, limit=3, page=2))["data"] == [
        sent[0]
    ]


async def test_list_messages_bad_query_is_400(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    conversation_id, _ = await _conversation(session, office_a)
    r = await client.get(
        f"/conversation/{conversation_id}/messages",
        params={"limit": 101},
        headers=office_a.headers,
    )
    assert r.status_code == 400
    assert "query.limit" in error_of(r)["details"]
    r = await client.get("/conversation/x/messages", headers=office_a.headers)
    assert "path.id" in error_of(r)["details"]


async def test_message_routes_for_another_offices_conversation_are_404(
    app: FastAPI,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    theirs, _ = await _conversation(session, office_b)
    for method, path, body in (
        ("POST", f"/conversation/{theirs}/messages/inbound", {"text": "oi"}),
        ("POST", f"/conversation/{theirs}/messages", {"text": "oi"}),
        ("POST", f"/conversation/{theirs}/messages", {"templateName": "boas_vindas"}),
        ("GET", f"/conversation/{theirs}/messages", None),
    ):
        r = await client.request(method, path, json=body, headers=office_a.headers)
        assert r.status_code == 404, (method, path)
        assert error_of(r)["code"] == "NOT_FOUND"
    assert (await _messages(client, office_b, theirs))["totalResults"] == 0
    assert await outbox(app, office_b.id) == []


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", f"/conversation/{MISSING}/messages/inbound"),
        ("POST", f"/conversation/{MISSING}/messages"),
        ("GET", f"/conversation/{MISSING}/messages"),
    ],
)
async def test_message_routes_without_key_are_401(
    client: httpx.AsyncClient, method: str, path: str
) -> None:
    r = await client.request(method, path, json={"text": "oi"})
    assert r.status_code == 401
    assert error_of(r)["code"] == "UNAUTHORIZED"


async def test_inbound_body_over_1_mib_is_413(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    conversation_id, _ = await _conversation(session, office_a)
    r = await client.post(
        f"/conversation/{conversation_id}/messages/inbound",
        json={"text": "x" * (1024 * 1024 + 1)},
        headers=office_a.headers,
    )
    assert r.status_code == 413
    assert error_of(r)["code"] == "PAYLOAD_TOO_LARGE"
    assert (await _messages(client, office_a, conversation_id))["totalResults"] == 0
