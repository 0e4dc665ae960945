"""Outbound as people use it: replying to a message (the platform's ``context``) and
reacting to a client's message (``POST /conversation/{id}/messages/{messageId}/reaction``)."""

from __future__ import annotations

import json

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.channels.whatsapp import sign
from officehub.inboxes.models import Integration
from officehub.kit.config import Settings
from officehub.messages.models import Message
from tests.helpers import OfficeFixture, error_of, outbox
from tests.server import concurrent_client, fire, running_server
from tests.whatsapp_platform import Platform
from tests.whatsapp_world import (
    APP_SECRET,
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


async def _client_wrote(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office: OfficeFixture,
    wamid: str = "wamid.in1",
    sender: str = "5511987654321",
) -> tuple[str, str, str]:
    """(integration id, conversation id, message id) of a message the client just sent."""
    integration = (
        await session.scalar(select(Integration.id).where(Integration.office_id == office.id))
        or (await official_integration(session, office.id)).id
    )
    r = await post_notification(
        client, integration, notification([text_message(wamid, sender)], sender=sender)
    )
    assert r.json() == {"stored": 1}
    message = await session.scalar(select(Message).where(Message.external_id == wamid))
    assert message is not None
    return integration, message.conversation_id, message.id


def _reaction(wamid: str, target: str, emoji: str) -> dict[str, object]:
    return {
        "from": "5511987654321",
        "id": wamid,
        "timestamp": "1767268860",
        "type": "reaction",
        "reaction": {"message_id": target, "emoji": emoji},
    }


# Replies


async def test_a_reply_is_sent_with_the_platforms_context(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    platform: Platform,
) -> None:
    _, conversation_id, quoted = await _client_wrote(client, session, office_a)
    r = await client.post(
        f"/conversation/{conversation_id}/messages",
        json={"text": "Recebemos, obrigado!", "replyToMessageId": quoted},
        headers=office_a.headers,
    )
    assert r.status_code == 201, r.text
    assert r.json()["replyTo"] == quoted
    assert await worker(app, settings).run_once() == 1
    [sent] = platform.sent
    assert sent["context"] == {"message_id": "wamid.in1"}
    assert sent["text"]["body"] == "Recebemos, obrigado!"
    listed = await client.get(f"/conversation/{conversation_id}/messages", headers=office_a.headers)
    assert listed.json()["data"][0]["replyTo"] == quoted


async def test_a_reply_to_an_unknown_or_other_conversations_message_is_400_naming_the_field(
    app: FastAPI,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    _, conversation_id, _ = await _client_wrote(client, session, office_a)
    _, _, elsewhere = await _client_wrote(client, session, office_a, "wamid.in2", "5521998765432")
    for target in (MISSING, elsewhere, "not-an-id"):
        r = await client.post(
            f"/conversation/{conversation_id}/messages",
            json={"text": "Oi", "replyToMessageId": target},
            headers=office_a.headers,
        )
        assert r.status_code == 400, r.text
        assert "body.replyToMessageId" in error_of(r)["details"]
    assert await outbox(app, office_a.id, "chat.message.sent") == []


# Reactions of the office


async def test_the_office_reacts_to_a_clients_message_through_the_platform(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    platform: Platform,
) -> None:
    integration_id, conversation_id, target = await _client_wrote(client, session, office_a)
    await post_notification(
        client, integration_id, notification([_reaction("wamid.r1", "wamid.in1", "🙏")])
    )
    url = f"/conversation/{conversation_id}/messages/{target}/reaction"
    r = await client.post(url, json={"emoji": "❤️"}, headers=office_a.headers)
    assert r.status_code == 200, r.text
    assert [(x["emoji"], x["from"]) for x in r.json()["reactions"]] == [
        ("🙏", "CONTACT"),
        ("❤️", "OFFICE"),
    ]
    events = await outbox(app, office_a.id, "chat.message.updated")
    assert events[-1].data["reactions"] == r.json()["reactions"]
    listed = await client.get(f"/conversation/{conversation_id}/messages", headers=office_a.headers)
    assert [m["id"] for m in listed.json()["data"]] == [target]
    assert await worker(app, settings).run_once() == 1
    [sent] = platform.sent
    assert (sent["type"], sent["reaction"]) == (
        "reaction",
        {"message_id": "wamid.in1", "emoji": "❤️"},
    )
    r = await client.post(url, json={"emoji": ""}, headers=office_a.headers)
    assert [(x["emoji"], x["from"]) for x in r.json()["reactions"]] == [("🙏", "CONTACT")]
    assert await worker(app, settings).run_once() == 1
    assert platform.sent[-1]["reaction"] == {"message_id": "wamid.in1", "emoji": ""}


async def test_reaction_bad_input_is_400_naming_the_field(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    _, conversation_id, target = await _client_wrote(client, session, office_a)
    url = f"/conversation/{conversation_id}/messages/{target}/reaction"
    for body, field in (({}, "body.emoji"), ({"emoji": "x" * 17}, "body.emoji")):
        r = await client.post(url, json=body, headers=office_a.headers)
        assert r.status_code == 400, r.text
        assert field in error_of(r)["details"]
    r = await client.post(
        f"/conversation/{conversation_id}/messages/not-an-id/reaction",
        json={"emoji": "👍"},
        headers=office_a.headers,
    )
    assert r.status_code == 400
    assert "path.messageId" in error_of(r)["details"]
    ours = await client.post(
        f"/conversation/{conversation_id}/messages", json={"text": "Oi"}, headers=office_a.headers
    )
    r = await client.post(
        f"/conversation/{conversation_id}/messages/{ours.json()['id']}/reaction",
        json={"emoji": "👍"},
        headers=office_a.headers,
    )
    assert r.status_code == 400
    assert "path.messageId" in error_of(r)["details"]
    assert await outbox(app, office_a.id, "chat.message.updated") == []


async def test_reaction_to_another_offices_message_is_404(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    _, conversation_id, target = await _client_wrote(client, session, office_a)
    r = await client.post(
        f"/conversation/{conversation_id}/messages/{target}/reaction",
        json={"emoji": "👍"},
        headers=office_b.headers,
    )
    assert r.status_code == 404
    r = await client.post(
        f"/conversation/{conversation_id}/messages/{MISSING}/reaction",
        json={"emoji": "👍"},
        headers=office_a.headers,
    )
    assert r.status_code == 404
    message = await session.get(Message, target)
    assert message is not None and not message.reactions


async def test_reaction_without_a_key_is_401(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    _, conversation_id, target = await _client_wrote(client, session, office_a)
    url = f"/conversation/{conversation_id}/messages/{target}/reaction"
    assert (await client.post(url, json={"emoji": "👍"})).status_code == 401
    r = await client.post(url, json={"emoji": "👍"}, headers={"x-service-api-key": "wrong"})
    assert r.status_code == 401


async def test_reactions_of_the_office_and_the_client_at_once_are_both_kept(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration_id, conversation_id, target = await _client_wrote(client, session, office_a)
    url = f"/conversation/{conversation_id}/messages/{target}/reaction"
    hook = f"/channels/whatsapp/{integration_id}/webhook"

    def signed(i: int) -> tuple[bytes, dict[str, str]]:
        raw = json.dumps(notification([_reaction(f"wamid.r{i}", "wamid.in1", "👍")])).encode()
        return raw, {"X-Hub-Signature-256": sign(APP_SECRET, raw)}

    async with running_server(app) as base, concurrent_client(base) as c:

        async def one(i: int) -> httpx.Response:
            if i % 2:
                raw, headers = signed(i)
                return await c.post(hook, content=raw, headers=headers)
            return await c.post(url, json={"emoji": "❤️"}, headers=office_a.headers)

        answers = await fire(8, one)
    assert [a.status_code for a in answers] == [200] * 8, [a.text for a in answers]
    session.expire_all()
    message = await session.get(Message, target)
    assert message is not None
    assert sorted((r["from"], r["emoji"]) for r in message.reactions or []) == [
        ("CONTACT", "👍"),
        ("OFFICE", "❤️"),
    ]
    # One change each: the repeats of the same emoji change nothing.
    assert len(await outbox(app, office_a.id, "chat.message.updated")) == 2
