"""The web chat's visitor API: widget, start, send, history, live replies (SSE), tokens,
CORS per integration, rate and body limits."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import event, select
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.app import create_app
from officehub.contacts.models import Contact
from officehub.conversations.models import Conversation
from officehub.jobs import queue_jobs
from officehub.kit.config import Settings
from officehub.kit.timeutil import utcnow
from officehub.kit.worker import Worker, WorkerContext
from officehub.messages.models import Message
from officehub.webchat.models import WebchatVisitor
from officehub.webchat.service import hash_token
from tests.helpers import OfficeFixture, error_of, outbox
from tests.server import running_server
from tests.webchat_world import (
    SITE,
    dispatcher,
    make_webchat,
    start_visitor,
    visitor_headers,
)


async def test_webchat_settings_are_validated_and_returned(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    chat = await make_webchat(
        client, office_a, origins=["https://Escritorio.example:443", "http://localhost:8080"]
    )
    assert chat["webchat"] == {
        "allowedOrigins": ["https://escritorio.example", "http://localhost:8080"],
        "ask": "PHONE",
        "greeting": "Olá! Em que podemos ajudar?",
        "verification": None,
    }
    inbox_id = chat["inboxId"]
    for origins, field in (
        (["https://escritorio.example/path"], "body.webchat.allowedOrigins.0"),
        (["http://escritorio.example"], "body.webchat.allowedOrigins.0"),
        ([], "body.webchat.allowedOrigins"),
    ):
        bad = await client.post(
            "/integration",
            json={
                "inboxId": inbox_id,
                "type": "WEBCHAT",
                "name": "x",
                "webchat": {"allowedOrigins": origins},
            },
            headers=office_a.headers,
        )
        assert bad.status_code == 400, bad.text
        assert field in error_of(bad)["details"]
    wrong_type = await client.post(
        "/integration",
        json={
            "inboxId": inbox_id,
            "type": "WHATSAPP",
            "name": "x",
            "webchat": {"allowedOrigins": [SITE]},
        },
        headers=office_a.headers,
    )
    assert wrong_type.status_code == 400
    assert "body.webchat" in error_of(wrong_type)["details"]
    patched = await client.patch(
        f"/integration/{chat['id']}",
        json={"webchat": {"allowedOrigins": [SITE], "ask": "EMAIL", "greeting": "Oi"}},
        headers=office_a.headers,
    )
    assert patched.status_code == 200
    assert patched.json()["webchat"]["ask"] == "EMAIL"


async def test_the_widget_script_is_served_without_a_key(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    chat = await make_webchat(client, office_a, greeting="Bem-vindo </script><b>")
    answer = await client.get(f"/webchat/{chat['id']}/widget.js")
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/javascript")
    script = answer.text
    assert chat["id"] in script and "attachShadow" in script
    assert "</script>" not in script and "\\u003c/script\\u003e" in script
    assert office_a.key not in script and "x-service-api-key" not in script
    # No third-party asset: nothing fetched but the visitor API of the script's own origin.
    assert "cdn" not in script.lower() and "@import" not in script and "<link" not in script
    assert "fetch(api" in script and script.count("fetch(api") == script.count("fetch(") - 1
    missing = await client.get("/webchat/cmissing0000000000/widget.js")
    assert missing.status_code == 404
    other = await client.post(
        "/integration",
        json={"inboxId": chat["inboxId"], "type": "INSTAGRAM", "name": "ig"},
        headers=office_a.headers,
    )
    not_webchat = await client.get(f"/webchat/{other.json()['id']}/widget.js")
    assert not_webchat.status_code == 404


async def test_a_visitor_starts_writes_and_reads_the_history(
    client: httpx.AsyncClient, office_a: OfficeFixture, app: FastAPI
) -> None:
    chat = await make_webchat(client, office_a)
    started = await start_visitor(client, chat["id"])
    token = started["token"]
    assert len(token) >= 40
    sent = await client.post(
        f"/webchat/{chat['id']}/messages",
        json={"text": "Preciso de ajuda com um contrato", "clientId": "m1"},
        headers=visitor_headers(token),
    )
    assert sent.status_code == 201, sent.text
    assert sent.json()["direction"] == "INBOUND"
    again = await client.post(
        f"/webchat/{chat['id']}/messages",
        json={"text": "Preciso de ajuda com um contrato", "clientId": "m1"},
        headers=visitor_headers(token),
    )
    assert again.status_code == 201 and again.json()["id"] == sent.json()["id"]
    history = await client.get(f"/webchat/{chat['id']}/messages", headers=visitor_headers(token))
    assert history.status_code == 200
    assert history.json()["conversationId"] == started["conversationId"]
    assert [m["text"] for m in history.json()["data"]] == ["Preciso de ajuda com um contrato"]
    async with app.state.sessionmaker() as s:
        contact = (await s.scalars(select(Contact).where(Contact.office_id == office_a.id))).one()
        assert (contact.name, contact.phone, contact.claimed_phone, contact.verified) == (
            "Maria Souza",
            None,
            "+5511987654321",
            False,
        )
        conversation = await s.get(Conversation, started["conversationId"])
        assert conversation is not None and conversation.integration_id == chat["id"]
        visitor = await s.get(WebchatVisitor, started["visitorId"])
        assert visitor is not None and visitor.token_hash == hash_token(token)
        assert token not in visitor.token_hash
    received = await outbox(app, office_a.id, "chat.message.received")
    assert [e.data["text"] for e in received] == ["Preciso de ajuda com um contrato"]
    assert await outbox(app, office_a.id, "chat.conversation.created")
    # The same browser comes back: the same conversation, through the stored token.
    back = await client.get(f"/webchat/{chat['id']}/messages", headers=visitor_headers(token))
    assert back.json()["conversationId"] == started["conversationId"]


async def test_start_asks_what_the_office_set(
    client: httpx.AsyncClient, office_a: OfficeFixture, app: FastAPI
) -> None:
    chat = await make_webchat(client, office_a)
    url = f"/webchat/{chat['id']}/start"
    for body, field in (
        ({"name": "Ana"}, "body.phone"),
        ({"name": "Ana", "phone": "123"}, "body.phone"),
        ({"name": "", "phone": "11987654321"}, "body.name"),
        ({"name": "Ana", "phone": 11987654321}, "body.phone"),
    ):
        answer = await client.post(url, json=body, headers={"origin": SITE})
        assert answer.status_code == 400, body
        assert field in error_of(answer)["details"]
    by_email = await make_webchat(client, office_a, ask="EMAIL")
    refused = await client.post(
        f"/webchat/{by_email['id']}/start", json={"name": "Ana", "phone": "11987654321"}
    )
    assert refused.status_code == 400 and "body.email" in error_of(refused)["details"]
    ok = await client.post(
        f"/webchat/{by_email['id']}/start", json={"name": "Ana", "email": "ana@example.com"}
    )
    assert ok.status_code == 201
    async with app.state.sessionmaker() as s:
        emails = await s.scalars(
            select(Contact.claimed_email).where(Contact.office_id == office_a.id)
        )
        assert list(emails) == ["ana@example.com"]


async def test_the_visitor_token_is_required_and_checked(
    client: httpx.AsyncClient, office_a: OfficeFixture, office_b: OfficeFixture, app: FastAPI
) -> None:
    chat = await make_webchat(client, office_a)
    started = await start_visitor(client, chat["id"])
    base = f"/webchat/{chat['id']}"
    for method, path in (("POST", "/messages"), ("GET", "/messages"), ("GET", "/events")):
        body = {"text": "oi"} if method == "POST" else None
        missing = await client.request(method, base + path, json=body)
        assert missing.status_code == 401, path
        wrong = await client.request(
            method, base + path, json=body, headers={"x-visitor-token": "not-a-token"}
        )
        assert wrong.status_code == 401, path
        assert error_of(wrong)["code"] == "UNAUTHORIZED"
    # Another chat of the office does not know the visitor: 404; another office's chat
    # does not know the token at all: 401.
    same_office = await make_webchat(client, office_a)
    other_office = await make_webchat(client, office_b)
    for other, status in ((same_office, 404), (other_office, 401)):
        for method in ("POST", "GET"):
            answer = await client.request(
                method,
                f"/webchat/{other['id']}/messages",
                json={"text": "oi"} if method == "POST" else None,
                headers={"x-visitor-token": started["token"]},
            )
            assert answer.status_code == status, (other["id"], method)
    async with app.state.sessionmaker() as s:
        count = await s.scalars(select(Message.id).where(Message.office_id == office_a.id))
        assert list(count) == []
    assert (await client.get("/webchat/cmissing0000000000/messages")).status_code == 404


async def test_cors_answers_only_the_integrations_origins(
    client: httpx.AsyncClient, office_a: OfficeFixture, app: FastAPI
) -> None:
    chat = await make_webchat(client, office_a)
    url = f"/webchat/{chat['id']}/start"
    preflight = await client.options(
        url,
        headers={
            "origin": SITE,
            "access-control-request-method": "POST",
            "access-control-request-headers": "content-type",
        },
    )
    assert preflight.status_code == 204
    assert preflight.headers["access-control-allow-origin"] == SITE
    assert "x-visitor-token" in preflight.headers["access-control-allow-headers"]
    evil = "https://evil.example"
    refused = await client.options(
        url, headers={"origin": evil, "access-control-request-method": "POST"}
    )
    assert refused.status_code == 403
    assert "access-control-allow-origin" not in refused.headers
    posted = await client.post(
        url, json={"name": "Eve", "phone": "11912345678"}, headers={"origin": evil}
    )
    assert posted.status_code == 403 and error_of(posted)["code"] == "ORIGIN_NOT_ALLOWED"
    assert "access-control-allow-origin" not in posted.headers
    async with app.state.sessionmaker() as s:
        assert list(await s.scalars(select(Contact.id))) == []
    allowed = await client.post(
        url, json={"name": "Ana", "phone": "11912345678"}, headers={"origin": SITE}
    )
    assert allowed.status_code == 201
    assert allowed.headers["access-control-allow-origin"] == SITE
    # Errors carry the header too, so the widget can read a 401 and start over.
    unauthorized = await client.get(
        f"/webchat/{chat['id']}/messages", headers={"origin": SITE, "x-visitor-token": "x"}
    )
    assert unauthorized.status_code == 401
    assert unauthorized.headers["access-control-allow-origin"] == SITE
    # The API itself stays closed to browsers.
    api = await client.options(
        "/people", headers={"origin": SITE, "access-control-request-method": "GET"}
    )
    assert "access-control-allow-origin" not in api.headers


async def test_visitors_and_ips_are_rate_limited(
    database_url: str, tmp_path: Path, office_a: OfficeFixture
) -> None:
    settings = Settings(
        database_url=database_url,
        data_dir=tmp_path / "limited",
        signing_key="test-signing-key",
        webchat_visitor_rate_limits="3/minute",
        webchat_ip_rate_limits="8/minute",
    )
    limited = create_app(settings)
    async with (
        limited.router.lifespan_context(limited),
        httpx.AsyncClient(
            transport=httpx.ASGITransport(app=limited), base_url="http://officehub.test"
        ) as client,
    ):
        chat = await make_webchat(client, office_a)
        token = (await start_visitor(client, chat["id"]))["token"]
        answers = [
            await client.post(
                f"/webchat/{chat['id']}/messages",
                json={"text": f"m{i}"},
                headers=visitor_headers(token),
            )
            for i in range(4)
        ]
        assert [a.status_code for a in answers] == [201, 201, 201, 429]
        assert error_of(answers[-1])["code"] == "RATE_LIMITED"
        assert int(answers[-1].headers["retry-after"]) >= 1
        starts = [
            await client.post(
                f"/webchat/{chat['id']}/start",
                json={"name": "X", "phone": f"1191234560{i}"},
                headers={"origin": SITE},
            )
            for i in range(5)
        ]
        # 1 start + 4 sends + these: the IP's 8 per minute run out at the fourth start.
        assert [a.status_code for a in starts] == [201, 201, 201, 429, 429]


async def test_bodies_are_bounded(client: httpx.AsyncClient, office_a: OfficeFixture) -> None:
    chat = await make_webchat(client, office_a)
    token = (await start_visitor(client, chat["id"]))["token"]
    huge = await client.post(
        f"/webchat/{chat['id']}/messages",
        content=json.dumps({"text": "x" * 20_000}).encode(),
        headers={**visitor_headers(token), "content-type": "application/json"},
    )
    assert huge.status_code == 413
    long_text = await client.post(
        f"/webchat/{chat['id']}/messages",
        json={"text": "x" * 5000},
        headers=visitor_headers(token),
    )
    assert long_text.status_code == 400 and "body.text" in error_of(long_text)["details"]


async def test_a_closed_conversation_reopens_when_the_visitor_writes(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    chat = await make_webchat(client, office_a)
    started = await start_visitor(client, chat["id"])
    closed = await client.patch(
        f"/conversation/{started['conversationId']}",
        json={"status": "CLOSED"},
        headers=office_a.headers,
    )
    assert closed.status_code == 200
    sent = await client.post(
        f"/webchat/{chat['id']}/messages",
        json={"text": "Voltei"},
        headers=visitor_headers(started["token"]),
    )
    assert sent.status_code == 201
    history = await client.get(
        f"/webchat/{chat['id']}/messages", headers=visitor_headers(started["token"])
    )
    assert history.json()["conversationId"] != started["conversationId"]
    assert [m["text"] for m in history.json()["data"]] == ["Voltei"]


async def _next_message(lines: AsyncIterator[str]) -> dict[str, object]:
    """The next ``message`` event of the stream (within 10 s)."""
    event = ""
    async with asyncio.timeout(10):
        async for line in lines:
            if line.startswith("event:"):
                event = line[6:].strip()
            elif line.startswith("data:") and event == "message":
                found: dict[str, object] = json.loads(line[5:])
                return found
    raise AssertionError("the stream ended")


async def test_the_stream_brings_the_offices_reply_live(
    app: FastAPI, settings: Settings, office_a: OfficeFixture, session: AsyncSession
) -> None:
    async with (
        running_server(app) as base_url,
        httpx.AsyncClient(base_url=base_url, timeout=15) as client,
    ):
        chat = await make_webchat(client, office_a)
        started = await start_visitor(client, chat["id"])
        token = started["token"]
        await client.post(
            f"/webchat/{chat['id']}/messages",
            json={"text": "Olá"},
            headers=visitor_headers(token),
        )
        async with client.stream(
            "GET", f"/webchat/{chat['id']}/events", headers=visitor_headers(token)
        ) as stream:
            assert stream.status_code == 200
            assert stream.headers["content-type"].startswith("text/event-stream")
            assert stream.headers["access-control-allow-origin"] == SITE
            lines = stream.aiter_lines()
            first = await _next_message(lines)
            assert first["text"] == "Olá" and first["direction"] == "INBOUND"
            reply = await client.post(
                f"/conversation/{started['conversationId']}/messages",
                json={"text": "Bom dia, Maria! Em que posso ajudar?"},
                headers=office_a.headers,
            )
            assert reply.status_code == 201, reply.text
            assert await dispatcher(app, settings).run_once() == 1
            live = await _next_message(lines)
            assert live["id"] == reply.json()["id"]
            assert live["text"] == "Bom dia, Maria! Em que posso ajudar?"
            assert live["direction"] == "OUTBOUND"
        for _ in range(50):
            message = await session.get(Message, reply.json()["id"], populate_existing=True)
            if message is not None and message.status == "DELIVERED":
                break
            await asyncio.sleep(0.1)
        assert message is not None and message.status == "DELIVERED"
        statuses = await outbox(app, office_a.id, "chat.message.status")
        assert [e.data["status"] for e in statuses] == ["SENT", "DELIVERED"]


async def test_an_idle_stream_reads_nothing_and_the_event_path_wakes_it(
    app: FastAPI, settings: Settings, office_a: OfficeFixture
) -> None:
    """No polling every half second: an idle stream sends the database no statement for
    two seconds, and the office's reply, stored and released in this process, reaches the
    visitor at once (well under the 20 s safety poll), woken by the commit."""
    assert settings.webchat_poll_seconds >= 15
    statements: list[str] = []

    def count(*args: object) -> None:
        statements.append(str(args[2]))

    async with (
        running_server(app) as base_url,
        httpx.AsyncClient(base_url=base_url, timeout=15) as client,
    ):
        chat = await make_webchat(client, office_a)
        started = await start_visitor(client, chat["id"])
        token = started["token"]
        await client.post(
            f"/webchat/{chat['id']}/messages", json={"text": "Olá"}, headers=visitor_headers(token)
        )
        async with client.stream(
            "GET", f"/webchat/{chat['id']}/events", headers=visitor_headers(token)
        ) as stream:
            lines = stream.aiter_lines()
            assert (await _next_message(lines))["text"] == "Olá"
            await asyncio.sleep(0.3)
            engine = app.state.engine.sync_engine
            event.listen(engine, "before_cursor_execute", count)
            try:
                await asyncio.sleep(2)
            finally:
                event.remove(engine, "before_cursor_execute", count)
            assert statements == []

            reply = await client.post(
                f"/conversation/{started['conversationId']}/messages",
                json={"text": "Bom dia, Maria!"},
                headers=office_a.headers,
            )
            assert reply.status_code == 201, reply.text
            assert await dispatcher(app, settings).run_once() == 1
            released = time.monotonic()
            live = await _next_message(lines)
            assert time.monotonic() - released < 2
            assert (live["id"], live["text"]) == (reply.json()["id"], "Bom dia, Maria!")


async def test_a_message_another_process_wrote_arrives_at_the_safety_poll(
    settings: Settings, office_a: OfficeFixture, session: AsyncSession
) -> None:
    """What another process wrote wakes nothing here: the stream's slow safety poll
    (``OFFICEHUB_WEBCHAT_POLL_SECONDS``, 1 s in this test) brings it. The row is written
    with no event, as this process never hears of another's commits."""
    quick = create_app(settings.model_copy(update={"webchat_poll_seconds": 1.0}))
    async with (
        quick.router.lifespan_context(quick),
        running_server(quick) as base_url,
        httpx.AsyncClient(base_url=base_url, timeout=15) as client,
    ):
        chat = await make_webchat(client, office_a)
        started = await start_visitor(client, chat["id"])
        token = started["token"]
        async with client.stream(
            "GET", f"/webchat/{chat['id']}/events", headers=visitor_headers(token)
        ) as stream:
            lines = stream.aiter_lines()
            await asyncio.sleep(0.5)
            written = Message(
                office_id=office_a.id,
                conversation_id=started["conversationId"],
                direction="OUTBOUND",
                type="TEXT",
                text="Escrito por outro processo",
                status="SENT",
                external_id="webchat:outro",
                created_at=utcnow(),
            )
            session.add(written)
            await session.commit()
            live = await _next_message(lines)
            assert (live["id"], live["text"]) == (written.id, "Escrito por outro processo")


async def test_a_flow_answers_what_the_visitor_writes(
    client: httpx.AsyncClient, office_a: OfficeFixture, app: FastAPI, settings: Settings
) -> None:
    chat = await make_webchat(client, office_a)
    flow = await client.post(
        "/flow",
        json={
            "name": "Boas-vindas",
            "inboxId": chat["inboxId"],
            "content": {
                "initialStepId": "s1",
                "steps": [
                    {"id": "s1", "type": "text", "content": "Já vamos atender!", "nextStepId": None}
                ],
            },
        },
        headers=office_a.headers,
    )
    assert flow.status_code == 201, flow.text
    started = await start_visitor(client, chat["id"])
    await client.post(
        f"/webchat/{chat['id']}/messages",
        json={"text": "Oi"},
        headers=visitor_headers(started["token"]),
    )
    ctx = WorkerContext(settings, app.state.engine, app.state.sessionmaker)
    await Worker(ctx, queue_jobs()).run_until_idle()
    history = await client.get(
        f"/webchat/{chat['id']}/messages", headers=visitor_headers(started["token"])
    )
    assert [(m["direction"], m["text"]) for m in history.json()["data"]] == [
        ("INBOUND", "Oi"),
        ("OUTBOUND", "Já vamos atender!"),
    ]


async def test_a_visitor_typing_a_clients_phone_cannot_read_or_write_the_clients_chat(
    client: httpx.AsyncClient, office_a: OfficeFixture, app: FastAPI
) -> None:
    """What a visitor types is a claim, not a proof: a second visitor giving the same phone
    (or the email) gets an unverified contact and a conversation of their own, and
    never sees what the office writes to the client, nor writes into the client's chat."""
    chat = await make_webchat(client, office_a)
    client_visitor = await start_visitor(client, chat["id"], name="Maria Souza")
    intruder = await start_visitor(client, chat["id"], name="Maria S.")
    assert intruder["conversationId"] != client_visitor["conversationId"]

    url = f"/conversation/{client_visitor['conversationId']}/messages"
    reply = await client.post(
        url, json={"text": "Sua audiência é amanhã"}, headers=office_a.headers
    )
    assert reply.status_code == 201, reply.text
    wrote = await client.post(
        f"/webchat/{chat['id']}/messages",
        json={"text": "Sou eu, a Maria"},
        headers=visitor_headers(intruder["token"]),
    )
    assert wrote.status_code == 201
    seen = await client.get(
        f"/webchat/{chat['id']}/messages", headers=visitor_headers(intruder["token"])
    )
    assert [m["text"] for m in seen.json()["data"]] == ["Sou eu, a Maria"]
    assert seen.json()["conversationId"] == intruder["conversationId"]

    async with app.state.sessionmaker() as s:
        in_clients_chat = await s.scalars(
            select(Message.text).where(Message.conversation_id == client_visitor["conversationId"])
        )
        assert "Sou eu, a Maria" not in list(in_clients_chat)
        contacts = {
            c.id: c
            for c in await s.scalars(select(Contact).where(Contact.office_id == office_a.id))
        }
        assert len(contacts) == 2
        first = await s.get(Conversation, client_visitor["conversationId"])
        second = await s.get(Conversation, intruder["conversationId"])
        assert first is not None and second is not None
        for claimant in (contacts[first.person_id], contacts[second.person_id]):
            assert (claimant.phone, claimant.claimed_phone, claimant.verified) == (
                None,
                "+5511987654321",
                False,
            )


async def test_an_email_chat_does_not_link_a_visitor_to_an_existing_contact(
    client: httpx.AsyncClient, office_a: OfficeFixture, app: FastAPI
) -> None:
    created = await client.post(
        "/people",
        json={"name": "Cliente Antigo", "email": "cliente@example.com"},
        headers=office_a.headers,
    )
    assert created.status_code == 201, created.text
    chat = await make_webchat(client, office_a, ask="EMAIL")
    started = await client.post(
        f"/webchat/{chat['id']}/start",
        json={"name": "Alguém", "email": "CLIENTE@example.com"},
        headers={"origin": SITE},
    )
    assert started.status_code == 201, started.text
    async with app.state.sessionmaker() as s:
        conversation = await s.get(Conversation, started.json()["conversationId"])
        assert conversation is not None
        assert conversation.person_id != created.json()["id"]
        contact = await s.get(Contact, conversation.person_id)
        assert contact is not None and contact.email is None


async def test_a_refused_origin_is_named_in_the_access_log(
    client: httpx.AsyncClient, office_a: OfficeFixture, caplog: pytest.LogCaptureFixture
) -> None:
    chat = await make_webchat(client, office_a)
    evil = "https://evil.example"
    with caplog.at_level(logging.INFO, logger="officehub.request"):
        refused = await client.options(
            f"/webchat/{chat['id']}/start",
            headers={"origin": evil, "access-control-request-method": "POST"},
        )
    assert refused.status_code == 403
    lines = [r for r in caplog.records if r.getMessage() == "request"]
    assert [getattr(r, "refused_origin", None) for r in lines] == [evil]
    assert getattr(lines[0], "status", None) == 403


async def test_the_widget_says_in_portuguese_that_its_page_origin_is_not_allowed(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    chat = await make_webchat(client, office_a)
    script = (await client.get(f"/webchat/{chat['id']}/widget.js")).text
    config = json.loads(script.split("var CONFIG = ", 1)[1].split(";\n", 1)[0])
    assert config["allowedOrigins"] == [SITE]
    assert "não está autorizado a usar" in script
    assert script.count("error.textContent = unreachable();") == 2  # not "Sem conexão"
