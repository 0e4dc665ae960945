"""Outbound as people use it: read marks (blue ticks), reply buttons and lists for flow
questions, privately stored media uploaded through the media API, and a fallback
template when the 24-hour window is closed."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import func, select
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.channels.dispatcher import send_read_receipts
from officehub.channels.models import ReadReceipt
from officehub.inboxes.models import Integration
from officehub.kit.config import Settings
from officehub.kit.timeutil import utcnow
from officehub.kit.worker import Worker, WorkerContext
from officehub.messages.models import Message
from officehub.templates.models import WhatsAppTemplate
from tests import factories as f
from tests.automation_helpers import automation_worker, create_rule
from tests.helpers import OfficeFixture, error_of
from tests.server import concurrent_client, fire, running_server
from tests.whatsapp_platform import VERSION, Platform, error
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


def reads_worker(app: FastAPI, settings: Settings) -> Worker:
    ctx = WorkerContext(settings, app.state.engine, app.state.sessionmaker, clock=utcnow)
    return Worker(ctx, [send_read_receipts])


async def _client_wrote(
    client: httpx.AsyncClient, session: AsyncSession, office: OfficeFixture, *wamids: str
) -> tuple[str, str]:
    """An official integration and a conversation where the client wrote ``wamids``."""
    integration = await official_integration(session, office.id)
    for wamid in wamids:
        r = await post_notification(client, integration.id, notification([text_message(wamid)]))
        assert r.status_code == 200, r.text
    conversation_id = await session.scalar(
        select(Message.conversation_id).where(Message.office_id == office.id)
    )
    assert conversation_id is not None
    return integration.id, conversation_id


async def _inbound_id(session: AsyncSession, wamid: str) -> str:
    ident = await session.scalar(select(Message.id).where(Message.external_id == wamid))
    assert ident is not None
    return ident


# Read marks


async def test_reading_a_conversation_tells_the_platform_the_newest_message_was_read(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    platform: Platform,
) -> None:
    _, conversation_id = await _client_wrote(
        client, session, office_a, "wamid.in1", "wamid.in2", "wamid.in3"
    )
    r = await client.post(f"/conversation/{conversation_id}/read", headers=office_a.headers)
    assert r.status_code == 200, r.text
    newest = await _inbound_id(session, "wamid.in3")
    assert r.json() == {
        "conversationId": conversation_id,
        "messageId": newest,
        "status": "PENDING",
        "error": None,
    }
    assert platform.reads == []  # never inline in the request
    assert await reads_worker(app, settings).run_once() == 1
    assert platform.reads == [
        {
            "messaging_product": "whatsapp",
            "status": "read",
            "message_id": "wamid.in3",
            "typing_indicator": {"type": "text"},
        }
    ]
    again = await client.post(f"/conversation/{conversation_id}/read", headers=office_a.headers)
    assert again.json()["status"] == "SENT"


async def test_reading_a_conversation_again_changes_nothing(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    platform: Platform,
) -> None:
    _, conversation_id = await _client_wrote(client, session, office_a, "wamid.in1", "wamid.in2")
    for _ in range(3):
        r = await client.post(f"/conversation/{conversation_id}/read", headers=office_a.headers)
        assert r.status_code == 200
    older = await _inbound_id(session, "wamid.in1")
    r = await client.post(
        f"/conversation/{conversation_id}/read",
        json={"messageId": older},
        headers=office_a.headers,
    )
    assert r.json()["messageId"] == await _inbound_id(session, "wamid.in2")  # already covered
    assert await session.scalar(select(func.count()).select_from(ReadReceipt)) == 1
    await reads_worker(app, settings).run_once()
    await reads_worker(app, settings).run_once()
    assert [body["message_id"] for body in platform.reads] == ["wamid.in2"]


async def test_simultaneous_reads_of_a_conversation_make_one_read_mark(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    platform: Platform,
) -> None:
    _, conversation_id = await _client_wrote(client, session, office_a, "wamid.in1")
    async with running_server(app) as url, concurrent_client(url) as c:
        answers = await fire(
            6, lambda i: c.post(f"/conversation/{conversation_id}/read", headers=office_a.headers)
        )
    assert [a.status_code for a in answers] == [200] * 6, [a.text for a in answers]
    assert {a.json()["messageId"] for a in answers} == {await _inbound_id(session, "wamid.in1")}
    assert await session.scalar(select(func.count()).select_from(ReadReceipt)) == 1
    await reads_worker(app, settings).run_once()
    assert len(platform.reads) == 1


async def test_a_newer_message_read_later_is_told_again(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    platform: Platform,
) -> None:
    integration_id, conversation_id = await _client_wrote(client, session, office_a, "wamid.in1")
    await client.post(f"/conversation/{conversation_id}/read", headers=office_a.headers)
    await reads_worker(app, settings).run_once()
    await post_notification(client, integration_id, notification([text_message("wamid.in2")]))
    r = await client.post(f"/conversation/{conversation_id}/read", headers=office_a.headers)
    assert r.json()["status"] == "PENDING"
    await reads_worker(app, settings).run_once()
    assert [body["message_id"] for body in platform.reads] == ["wamid.in1", "wamid.in2"]


async def test_a_read_mark_the_platform_refuses_is_failed_with_its_error(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    platform: Platform,
) -> None:
    _, conversation_id = await _client_wrote(client, session, office_a, "wamid.in1")
    await client.post(f"/conversation/{conversation_id}/read", headers=office_a.headers)
    platform.script["read"] = [error(400, 100, "Invalid parameter")]
    await reads_worker(app, settings).run_once()
    r = await client.post(f"/conversation/{conversation_id}/read", headers=office_a.headers)
    assert (r.json()["status"], r.json()["error"]) == ("FAILED", "400 100: Invalid parameter")


async def test_reading_a_conversation_of_a_channel_without_read_receipts_only_records_it(
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
    empty = await client.post(f"/conversation/{conversation.id}/read", headers=office_a.headers)
    assert empty.json() == {
        "conversationId": conversation.id,
        "messageId": None,
        "status": None,
        "error": None,
    }
    wrote = await client.post(
        f"/conversation/{conversation.id}/messages/inbound",
        json={"text": "Olá"},
        headers=office_a.headers,
    )
    r = await client.post(f"/conversation/{conversation.id}/read", headers=office_a.headers)
    assert (r.json()["messageId"], r.json()["status"]) == (wrote.json()["id"], "RECORDED")
    assert await reads_worker(app, settings).run_once() == 0
    assert platform.reads == []


async def test_reading_up_to_a_message_of_another_conversation_is_400(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration_id, conversation_id = await _client_wrote(client, session, office_a, "wamid.in1")
    await post_notification(
        client,
        integration_id,
        notification([text_message("wamid.other", sender="5511912345678")], sender="5511912345678"),
    )
    elsewhere = await _inbound_id(session, "wamid.other")
    for message_id in (elsewhere, "not an id"):
        r = await client.post(
            f"/conversation/{conversation_id}/read",
            json={"messageId": message_id},
            headers=office_a.headers,
        )
        assert r.status_code == 400, r.text
        assert "body.messageId" in error_of(r)["details"]
    assert await session.scalar(select(func.count()).select_from(ReadReceipt)) == 0


async def test_reading_another_offices_conversation_is_404(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    _, conversation_id = await _client_wrote(client, session, office_a, "wamid.in1")
    r = await client.post(f"/conversation/{conversation_id}/read", headers=office_b.headers)
    assert r.status_code == 404
    assert await session.scalar(select(func.count()).select_from(ReadReceipt)) == 0


async def test_reading_a_conversation_without_a_valid_key_is_401(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    _, conversation_id = await _client_wrote(client, session, office_a, "wamid.in1")
    for headers in ({}, {"Authorization": "Bearer not-a-key"}):
        r = await client.post(f"/conversation/{conversation_id}/read", headers=headers)
        assert r.status_code == 401
    assert await session.scalar(select(func.count()).select_from(ReadReceipt)) == 0


# Reply buttons and lists for a flow's questions


def _option(title: str, next_step_id: str | None, text: str | None = None) -> dict[str, Any]:
    return {
        "text": text or title,
        "title": title,
        "value": title.lower(),
        "nextStepId": next_step_id,
    }


async def _flow_on(
    client: httpx.AsyncClient, office: OfficeFixture, inbox_id: str, options: list[dict[str, Any]]
) -> None:
    steps = [
        {"id": "menu", "content": "Como podemos ajudar?", "type": "list", "options": options},
        {"id": "bye", "content": "Até logo!", "type": "text", "nextStepId": None},
        {"id": "lawyer", "content": "Um advogado já vai falar com você.", "type": "text"},
    ]
    body = {
        "name": "Atendimento",
        "inboxId": inbox_id,
        "isSocialFlow": False,
        "content": {"steps": steps, "initialStepId": "menu"},
    }
    r = await client.post("/flow/", json=body, headers=office.headers)
    assert r.status_code == 201, r.text


def _interactive_reply(wamid: str, kind: str, reply_id: str, title: str) -> dict[str, Any]:
    return {
        "from": "5511987654321",
        "id": wamid,
        "timestamp": "1767268900",
        "type": "interactive",
        "interactive": {"type": kind, kind: {"id": reply_id, "title": title}},
    }


async def test_a_flow_question_with_up_to_three_options_goes_out_as_reply_buttons(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    platform: Platform,
) -> None:
    integration = await official_integration(session, office_a.id)
    options = [
        _option("Consultar meu processo judicial", "bye"),
        _option("Falar com advogado", "lawyer"),
    ]
    await _flow_on(client, office_a, integration.inbox_id, options)
    await post_notification(client, integration.id, notification([text_message("wamid.in1")]))
    await automation_worker(app, settings).run_until_idle()
    [question] = platform.sent
    assert question == {
        "messaging_product": "whatsapp",
        "recipient_type": "individual",
        "to": "5511987654321",
        "type": "interactive",
        "interactive": {
            "type": "button",
            "body": {"text": "Como podemos ajudar?"},
            "action": {
                "buttons": [
                    {"type": "reply", "reply": {"id": "menu:1", "title": "Consultar meu proce…"}},
                    {"type": "reply", "reply": {"id": "menu:2", "title": "Falar com advogado"}},
                ]
            },
        },
    }
    assert all(len(b["reply"]["title"]) <= 20 for b in question["interactive"]["action"]["buttons"])
    # the client taps the first button: its cut title still picks the option, by its id
    reply = _interactive_reply("wamid.in2", "button_reply", "menu:1", "Consultar meu proce…")
    await post_notification(client, integration.id, notification([reply]))
    await automation_worker(app, settings).run_until_idle()
    assert platform.sent[-1]["text"]["body"] == "Até logo!"


async def test_a_flow_question_with_more_than_three_options_goes_out_as_a_list(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    platform: Platform,
) -> None:
    integration = await official_integration(session, office_a.id)
    titles = ["Direito de família e sucessões", "Trabalhista", "Previdenciário", "Falar agora"]
    options = [_option(t, "lawyer" if t == "Falar agora" else "bye") for t in titles]
    await _flow_on(client, office_a, integration.inbox_id, options)
    await post_notification(client, integration.id, notification([text_message("wamid.in1")]))
    await automation_worker(app, settings).run_until_idle()
    [question] = platform.sent
    assert question["type"] == "interactive"
    assert question["interactive"] == {
        "type": "list",
        "body": {"text": "Como podemos ajudar?"},
        "action": {
            "button": "Ver opções",
            "sections": [
                {
                    "title": "Escolha uma opção",
                    "rows": [
                        {
                            "id": "menu:1",
                            "title": "Direito de família e su…",
                            "description": "Direito de família e sucessões",
                        },
                        {"id": "menu:2", "title": "Trabalhista"},
                        {"id": "menu:3", "title": "Previdenciário"},
                        {"id": "menu:4", "title": "Falar agora"},
                    ],
                }
            ],
        },
    }
    reply = _interactive_reply("wamid.in2", "list_reply", "menu:4", "Falar agora")
    await post_notification(client, integration.id, notification([reply]))
    await automation_worker(app, settings).run_until_idle()
    assert platform.sent[-1]["text"]["body"] == "Um advogado já vai falar com você."


async def test_a_flow_question_with_more_than_ten_options_goes_out_as_numbered_text(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    platform: Platform,
) -> None:
    integration = await official_integration(session, office_a.id)
    options = [_option(f"Assunto {n}", "bye") for n in range(1, 12)]
    await _flow_on(client, office_a, integration.inbox_id, options)
    await post_notification(client, integration.id, notification([text_message("wamid.in1")]))
    await automation_worker(app, settings).run_until_idle()
    [question] = platform.sent
    assert question["type"] == "text"
    assert question["text"]["body"].splitlines()[:2] == ["Como podemos ajudar?", "1. Assunto 1"]
    assert question["text"]["body"].splitlines()[-1] == "11. Assunto 11"


# A template when the window is closed

FALLBACK = {"name": "retorno_atendimento", "language": "pt_BR", "variables": ["Maria"]}


async def _catalogue(session: AsyncSession, office_id: str, integration_id: str) -> None:
    for name, state in (("retorno_atendimento", "APPROVED"), ("aviso_pendente", "PENDING")):
        session.add(
            WhatsAppTemplate(
                office_id=office_id,
                integration_id=integration_id,
                name=name,
                language="pt_BR",
                status=state,
                category="UTILITY",
                components=[{"type": "BODY", "text": "Olá {{1}}, temos novidades."}],
            )
        )
    await session.commit()


async def _closed_window(session: AsyncSession, office: OfficeFixture) -> tuple[Integration, str]:
    """An official integration with its catalogue and a conversation whose contact never
    wrote."""
    integration = await official_integration(session, office.id)
    await _catalogue(session, office.id, integration.id)
    contact = await f.make_contact(session, office.id)
    conversation = await f.make_conversation(session, office.id, contact.id, integration)
    await session.commit()
    return integration, conversation.id


async def _messages(session: AsyncSession, office_id: str) -> list[Message]:
    session.expire_all()
    stmt = (
        select(Message)
        .where(Message.office_id == office_id, Message.direction == "OUTBOUND")
        .order_by(Message.created_at, Message.id)
    )
    return list(await session.scalars(stmt))


TEMPLATE_SENT = {
    "name": "retorno_atendimento",
    "language": {"code": "pt_BR"},
    "components": [{"type": "body", "parameters": [{"type": "text", "text": "Maria"}]}],
}


async def test_a_free_form_send_outside_the_window_sends_its_fallback_template_instead(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    platform: Platform,
) -> None:
    _, conversation_id = await _closed_window(session, office_a)
    r = await client.post(
        f"/conversation/{conversation_id}/messages",
        json={"text": "Olá Maria, temos novidades.", "fallbackTemplate": FALLBACK},
        headers=office_a.headers,
    )
    assert r.status_code == 201, r.text
    assert (r.json()["type"], r.json()["templateName"], r.json()["status"]) == (
        "TEMPLATE",
        "retorno_atendimento",
        "QUEUED",
    )
    await worker(app, settings).run_once()
    [sent] = platform.sent
    assert (sent["type"], sent["template"]) == ("template", TEMPLATE_SENT)


async def test_a_fallback_template_that_is_not_approved_is_400_naming_fallbacktemplate_name(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    _, conversation_id = await _closed_window(session, office_a)
    for name in ("aviso_pendente", "nao_existe"):
        r = await client.post(
            f"/conversation/{conversation_id}/messages",
            json={"text": "Olá", "fallbackTemplate": {**FALLBACK, "name": name}},
            headers=office_a.headers,
        )
        assert r.status_code == 400, r.text
        assert "body.fallbackTemplate.name" in error_of(r)["details"]
    wrong = {**FALLBACK, "variables": []}
    r = await client.post(
        f"/conversation/{conversation_id}/messages",
        json={"text": "Olá", "fallbackTemplate": wrong},
        headers=office_a.headers,
    )
    assert r.status_code == 400
    assert "body.fallbackTemplate.variables" in error_of(r)["details"]
    r = await client.post(
        f"/conversation/{conversation_id}/messages",
        json={"text": "Olá", "fallbackTemplate": {"language": "pt_BR"}},
        headers=office_a.headers,
    )
    assert r.status_code == 400
    assert "fallbackTemplate.name" in error_of(r)["details"]
    assert await _messages(session, office_a.id) == []


async def test_a_free_form_send_outside_the_window_without_a_fallback_is_still_409(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    _, conversation_id = await _closed_window(session, office_a)
    r = await client.post(
        f"/conversation/{conversation_id}/messages", json={"text": "Olá"}, headers=office_a.headers
    )
    assert r.status_code == 409
    assert error_of(r)["code"] == "OUTSIDE_SERVICE_WINDOW"


async def test_a_send_inside_the_window_with_a_fallback_goes_out_as_text(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    platform: Platform,
) -> None:
    integration_id, conversation_id = await _client_wrote(client, session, office_a, "wamid.in1")
    await _catalogue(session, office_a.id, integration_id)
    r = await client.post(
        f"/conversation/{conversation_id}/messages",
        json={"text": "Olá", "fallbackTemplate": FALLBACK},
        headers=office_a.headers,
    )
    assert (r.status_code, r.json()["type"]) == (201, "TEXT")
    await worker(app, settings).run_once()
    assert [s["type"] for s in platform.sent] == ["text"]
    assert await worker(app, settings).run_once() == 0


async def test_a_send_the_platform_fails_with_131047_is_marked_and_its_fallback_goes_out_once(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    platform: Platform,
) -> None:
    integration_id, conversation_id = await _client_wrote(client, session, office_a, "wamid.in1")
    await _catalogue(session, office_a.id, integration_id)
    r = await client.post(
        f"/conversation/{conversation_id}/messages",
        json={"text": "Olá", "fallbackTemplate": FALLBACK},
        headers=office_a.headers,
    )
    platform.script["send"] = [
        error(400, 131047, "Re-engagement message"),
    ]
    # One pass sends until nothing is due: the text, then the fallback it queued.
    assert await worker(app, settings).run_once() == 2
    text, template = await _messages(session, office_a.id)
    assert (text.id, text.status) == (r.json()["id"], "FAILED")
    assert text.error is not None and "131047" in text.error
    assert (template.type, template.status, template.template_name) == (
        "TEMPLATE",
        "SENT",
        "retorno_atendimento",
    )
    assert template.payload is not None and template.payload["fallbackFor"] == text.id
    for _ in range(3):
        await worker(app, settings).run_once()
    assert [s["type"] for s in platform.sent] == ["text", "template"]
    assert platform.sent[1]["template"] == TEMPLATE_SENT
    assert len(await _messages(session, office_a.id)) == 2


async def test_a_131047_failed_status_sends_the_fallback_once_however_often_it_comes(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    platform: Platform,
) -> None:
    integration_id, conversation_id = await _client_wrote(client, session, office_a, "wamid.in1")
    await _catalogue(session, office_a.id, integration_id)
    await client.post(
        f"/conversation/{conversation_id}/messages",
        json={"text": "Olá", "fallbackTemplate": FALLBACK},
        headers=office_a.headers,
    )
    await worker(app, settings).run_once()
    failed = notification(
        statuses=[
            status(
                "wamid.test0001",
                "failed",
                [{"code": 131047, "title": "Re-engagement message"}],
            )
        ]
    )
    async with running_server(app) as url, concurrent_client(url) as c:
        answers = await fire(5, lambda i: post_notification(c, integration_id, failed))
    assert [a.status_code for a in answers] == [200] * 5
    text, template = await _messages(session, office_a.id)
    assert text.status == "FAILED" and text.error is not None and "131047" in text.error
    assert (template.type, template.template_name) == ("TEMPLATE", "retorno_atendimento")
    for _ in range(3):
        await worker(app, settings).run_once()
    assert [s["type"] for s in platform.sent] == ["text", "template"]


async def test_a_131047_failure_without_a_fallback_is_only_marked(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    platform: Platform,
) -> None:
    _, conversation_id = await _client_wrote(client, session, office_a, "wamid.in1")
    await client.post(
        f"/conversation/{conversation_id}/messages", json={"text": "Olá"}, headers=office_a.headers
    )
    platform.script["send"] = [error(400, 131047, "Re-engagement message")]
    await worker(app, settings).run_once()
    await worker(app, settings).run_once()
    [text] = await _messages(session, office_a.id)
    assert text.status == "FAILED" and text.error is not None and "131047" in text.error
    assert len(platform.sent) == 1


async def _window_closes(session: AsyncSession, office_id: str) -> None:
    """The contact's messages are 25 hours old."""
    session.expire_all()
    for message in await session.scalars(
        select(Message).where(Message.office_id == office_id, Message.direction == "INBOUND")
    ):
        message.created_at = utcnow() - timedelta(hours=25)
    await session.commit()


async def test_an_automation_text_action_sends_its_fallback_template_when_the_window_is_closed(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    platform: Platform,
) -> None:
    integration = await official_integration(session, office_a.id)
    await _catalogue(session, office_a.id, integration.id)
    fast = await client.post(
        "/fast-message",
        json={"inboxId": integration.inbox_id, "title": "Oi", "kind": "TEXT", "text": "Olá!"},
        headers=office_a.headers,
    )
    params = {"fastMessageId": fast.json()["id"], "fallbackTemplate": FALLBACK}
    await create_rule(
        client, office_a, actions=[{"action": "SEND_FAST_MESSAGE", "actionParams": params}]
    )
    await post_notification(client, integration.id, notification([text_message("wamid.in1")]))
    await _window_closes(session, office_a.id)
    await automation_worker(app, settings).run_until_idle()
    [sent] = platform.sent
    assert (sent["type"], sent["template"]) == ("template", TEMPLATE_SENT)


async def test_an_automation_rule_with_a_fallback_that_is_not_approved_is_400(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    integration = await official_integration(session, office_a.id)
    await _catalogue(session, office_a.id, integration.id)
    for fallback, field in (
        ({**FALLBACK, "name": "aviso_pendente"}, "fallbackTemplate.name"),
        ({"variables": "x"}, "fallbackTemplate."),
    ):
        params = {"text": "Ainda precisa de ajuda?", "fallbackTemplate": fallback}
        r = await client.post(
            "/automation-rules",
            json={
                "name": "Regra",
                "triggerEvent": "chat.message.received",
                "actions": [{"action": "SCHEDULE_MESSAGE", "actionParams": params}],
            },
            headers=office_a.headers,
        )
        assert r.status_code == 400, r.text
        assert field in error_of(r)["details"]


async def test_a_flow_text_step_sends_its_fallback_template_when_the_window_is_closed(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    platform: Platform,
) -> None:
    integration = await official_integration(session, office_a.id)
    await _catalogue(session, office_a.id, integration.id)
    step = {
        "id": "hello",
        "content": "Olá! Recebemos sua mensagem.",
        "type": "text",
        "metadata": {"fallbackTemplate": FALLBACK},
    }
    body = {
        "name": "Atendimento",
        "inboxId": integration.inbox_id,
        "isSocialFlow": False,
        "content": {"steps": [step], "initialStepId": "hello"},
    }
    r = await client.post("/flow/", json=body, headers=office_a.headers)
    assert r.status_code == 201, r.text
    await post_notification(client, integration.id, notification([text_message("wamid.in1")]))
    await _window_closes(session, office_a.id)
    await automation_worker(app, settings).run_until_idle()
    [sent] = platform.sent
    assert (sent["type"], sent["template"]) == ("template", TEMPLATE_SENT)


# Media uploaded through the platform's media API when the file is stored privately

JPEG = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01" + b"x" * 2000


async def _header_template_send(
    client: httpx.AsyncClient, session: AsyncSession, office: OfficeFixture
) -> None:
    """A template with an image header, sent with an uploaded image."""
    integration = await official_integration(session, office.id)
    session.add(
        WhatsAppTemplate(
            office_id=office.id,
            integration_id=integration.id,
            name="boas_vindas",
            language="pt_BR",
            status="APPROVED",
            category="MARKETING",
            components=[
                {"type": "HEADER", "format": "IMAGE"},
                {"type": "BODY", "text": "Bem-vindo ao escritório."},
            ],
        )
    )
    contact = await f.make_contact(session, office.id)
    conversation = await f.make_conversation(session, office.id, contact.id, integration)
    await session.commit()
    stored = await client.post(
        f"/conversation/{conversation.id}/template-header-media",
        files={"file": ("logo.jpg", JPEG, "application/octet-stream")},
        headers=office.headers,
    )
    assert stored.status_code == 201, stored.text
    r = await client.post(
        f"/conversation/{conversation.id}/messages",
        json={
            "templateName": "boas_vindas",
            "language": "pt_BR",
            "headerMediaPath": stored.json()["storagePath"],
        },
        headers=office.headers,
    )
    assert r.status_code == 201, r.text


async def test_a_privately_stored_file_is_uploaded_through_the_media_api_and_sent_by_id(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    platform: Platform,
) -> None:
    assert settings.public_url.startswith("http://127.0.0.1")  # local storage, loopback links
    await _header_template_send(client, session, office_a)
    assert await worker(app, settings).run_once() == 1
    [upload] = platform.uploads
    assert upload["path"] == f"/{VERSION}/{PHONE_NUMBER_ID}/media"
    assert (upload["type"], upload["content"]) == ("image/jpeg", JPEG)
    assert upload["filename"].endswith(".jpg")
    [sent] = platform.sent
    assert sent["template"]["components"] == [
        {"type": "header", "parameters": [{"type": "image", "image": {"id": upload["id"]}}]}
    ]


async def test_a_publicly_reachable_file_is_sent_as_a_link(
    app: FastAPI,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    platform: Platform,
    tmp_path: Path,
    database_url: str,
) -> None:
    public = Settings(
        database_url=database_url,
        data_dir=tmp_path / "data",
        signing_key="test-signing-key",
        whatsapp_api_url=platform.url,
        public_url="https://escritorio.example.com",
    )
    await _header_template_send(client, session, office_a)
    await worker(app, public).run_once()
    assert platform.uploads == []
    [sent] = platform.sent
    [header] = sent["template"]["components"][0]["parameters"]
    assert header["image"]["link"].startswith("https://escritorio.example.com/media/")


async def test_a_media_step_with_a_link_to_a_privately_stored_file_is_uploaded(
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
    await session.commit()
    stored = await client.post(
        f"/conversation/{conversation.id}/template-header-media",
        files={"file": ("procuracao.jpg", JPEG, "application/octet-stream")},
        headers=office_a.headers,
    )
    step = {"id": "m", "content": stored.json()["url"], "type": "media", "nextStepId": None}
    body = {
        "name": "Atendimento",
        "inboxId": integration.inbox_id,
        "isSocialFlow": False,
        "content": {"steps": [step], "initialStepId": "m"},
    }
    r = await client.post("/flow/", json=body, headers=office_a.headers)
    assert r.status_code == 201, r.text
    await post_notification(client, integration.id, notification([text_message("wamid.in1")]))
    await automation_worker(app, settings).run_until_idle()
    [upload] = platform.uploads
    assert upload["content"] == JPEG
    [sent] = [s for s in platform.sent if s["type"] != "text"]
    assert sent["type"] == "document"
    assert sent["document"] == {"id": upload["id"]}


async def test_two_workers_at_once_send_a_131047_fallback_once(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    platform: Platform,
) -> None:
    integration_id, conversation_id = await _client_wrote(client, session, office_a, "wamid.in1")
    await _catalogue(session, office_a.id, integration_id)
    await client.post(
        f"/conversation/{conversation_id}/messages",
        json={"text": "Olá", "fallbackTemplate": FALLBACK},
        headers=office_a.headers,
    )
    platform.script["send"] = [error(400, 131047, "Re-engagement message")]
    for _ in range(3):
        await asyncio.gather(*(worker(app, settings).run_once() for _ in range(3)))
    assert [s["type"] for s in platform.sent] == ["text", "template"]
    assert [m.type for m in await _messages(session, office_a.id)] == ["TEXT", "TEMPLATE"]
