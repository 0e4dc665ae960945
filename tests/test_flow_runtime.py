"""The flow runtime: a conversation played through the public API, the worker in between."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
from fastapi import FastAPI
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.flows.runtime import match_option, normalise
from officehub.flows.schemas import Option
from officehub.kit.config import Settings
from tests import factories as f
from tests.automation_helpers import automation_worker
from tests.crm_world import World, make_world
from tests.helpers import OfficeFixture, error_of
from tests.receiver import running_receiver
from tests.server import fire
from tests.webhook_helpers import Clock


def text(ident: str, content: str, next_step_id: str | None = None) -> dict[str, Any]:
    return {"id": ident, "content": content, "type": "text", "nextStepId": next_step_id}


def option(text: str, title: str, value: str, next_step_id: str | None) -> dict[str, Any]:
    return {"text": text, "title": title, "value": value, "nextStepId": next_step_id}


def listing(ident: str, content: str, *options: dict[str, Any]) -> dict[str, Any]:
    return {"id": ident, "content": content, "type": "list", "options": list(options)}


def system(ident: str, action: str, meta: dict[str, Any], nxt: str | None) -> dict[str, Any]:
    return {
        "id": ident,
        "content": "",
        "type": "system",
        "systemAction": action,
        "metadata": meta,
        "nextStepId": nxt,
    }


async def create_flow(
    client: httpx.AsyncClient,
    office: OfficeFixture,
    inbox_id: str,
    steps: list[dict[str, Any]],
    initial: str = "s1",
    social: bool = False,
) -> dict[str, Any]:
    body = {
        "name": "Atendimento",
        "inboxId": inbox_id,
        "isSocialFlow": social,
        "content": {"steps": steps, "initialStepId": initial},
    }
    r = await client.post("/flow/", json=body, headers=office.headers)
    assert r.status_code == 201, r.text
    created: dict[str, Any] = r.json()
    return created


async def inbound(
    client: httpx.AsyncClient, office: OfficeFixture, conversation_id: str, text: str
) -> None:
    r = await client.post(
        f"/conversation/{conversation_id}/messages/inbound",
        json={"text": text},
        headers=office.headers,
    )
    assert r.status_code == 201, r.text


async def outbound(
    client: httpx.AsyncClient, office: OfficeFixture, conversation_id: str
) -> list[str]:
    """The conversation's outbound messages, oldest first (media as their URL)."""
    r = await client.get(
        f"/conversation/{conversation_id}/messages", params={"limit": 100}, headers=office.headers
    )
    data = r.json()["data"]
    newest_first = [m["text"] or m["mediaUrl"] for m in data if m["direction"] == "OUTBOUND"]
    return list(reversed(newest_first))


async def flow_session(
    client: httpx.AsyncClient, office: OfficeFixture, conversation_id: str
) -> dict[str, Any]:
    r = await client.get(f"/conversation/{conversation_id}/flow-session", headers=office.headers)
    assert r.status_code == 200, r.text
    body: dict[str, Any] = r.json()
    return body


async def work(app: FastAPI, settings: Settings, clock: Clock | None = None) -> None:
    await automation_worker(app, settings, clock).run_until_idle()


MENU = "Como podemos ajudar?\n1. Consultar processo\n2. Falar com advogado"
MORE = "Deseja falar com a equipe?\n1. Sim, por favor\n2. Não, obrigado"


async def test_a_conversation_plays_through_the_flow(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    w: World = await make_world(session, office_a.id)
    label = await f.make_tag(session, office_a.id, w.inbox.id, "Lead")
    await session.commit()
    h = office_a.headers
    conversation_id = w.conversation.id
    status = (await client.post("/ticket-statuses", json={"name": "Aberto"}, headers=h)).json()
    r = await client.post(
        "/case-movements",
        json={
            "personId": w.contact.id,
            "caseNumber": "0001234-56.2024",
            "description": "Audiência marcada",
            "occurredAt": "2026-03-02T10:00:00Z",
        },
        headers=h,
    )
    assert r.status_code == 201, r.text
    async with running_receiver() as receiver:
        steps = [
            text("s1", "Olá! Bem-vindo ao escritório.", "menu"),
            listing(
                "menu",
                "Como podemos ajudar?",
                option("Consultar processo", "Processo", "processo", "mov"),
                option("Falar com advogado", "Advogado", "advogado", "labels"),
            ),
            system("mov", "SEARCH_MOVEMENTS", {}, "more"),
            listing(
                "more",
                "Deseja falar com a equipe?",
                option("Sim, por favor", "Sím", "yes", "labels"),
                option("Não, obrigado", "Não", "no", None),
            ),
            system("labels", "ADD_LABELS", {"tagIds": [label.id]}, "crm"),
            system(
                "crm",
                "CHANGE_CRM_COLUMN",
                {"funnelId": w.funnel.id, "funnelColumnId": w.columns[1].id},
                "ticket",
            ),
            system(
                "ticket",
                "CREATE_TICKET",
                {
                    "ticketTitle": "Novo atendimento",
                    "ticketStatusId": status["id"],
                    "ticketPriority": "HIGH",
                },
                "hook",
            ),
            system(
                "hook",
                "FIRE_WEBHOOK",
                {
                    "webhookUrl": receiver.url,
                    "webhookMethod": "POST",
                    "webhookHeaders": [{"key": "X-Office", "value": "a"}],
                    "webhookBody": '{"origem": "fluxo"}',
                    "webhookIncludeContext": True,
                },
                "doc",
            ),
            {
                "id": "doc",
                "content": "https://example.com/guia.pdf",
                "type": "media",
                "nextStepId": "assign",
            },
            system("assign", "ASSIGN_USER", {"userId": w.user.id}, "back"),
            text("back", "Obrigado por aguardar!"),
        ]
        flow = await create_flow(client, office_a, w.inbox.id, steps)

        await inbound(client, office_a, conversation_id, "Oi")
        await work(app, settings)
        assert await outbound(client, office_a, conversation_id) == [
            "Olá! Bem-vindo ao escritório.",
            MENU,
        ]
        state = await flow_session(client, office_a, conversation_id)
        assert state["status"] == "WAITING" and state["waitingFor"] == "REPLY"
        assert state["currentStepId"] == "menu" and state["expiresAt"] is not None

        # a reply that matches nothing is re-asked once, then the flow keeps waiting
        await inbound(client, office_a, conversation_id, "banana")
        await work(app, settings)
        await inbound(client, office_a, conversation_id, "laranja")
        await work(app, settings)
        assert (await outbound(client, office_a, conversation_id))[2:] == [MENU]
        state = await flow_session(client, office_a, conversation_id)
        assert [s["outcome"] for s in state["steps"]][-2:] == ["REASKED", "NO_MATCH"]

        # answered by number
        await inbound(client, office_a, conversation_id, "1")
        await work(app, settings)
        assert (await outbound(client, office_a, conversation_id))[3:] == [
            "Movimentações encontradas:\n02/03/2026 - 0001234-56.2024: Audiência marcada",
            MORE,
        ]

        # answered by text, case- and accent-insensitively (the title "Sím")
        await inbound(client, office_a, conversation_id, "  SIM ")
        await work(app, settings)
        await receiver.wait_for(1)

    assert (await outbound(client, office_a, conversation_id))[5:] == [
        "https://example.com/guia.pdf"
    ]
    conversation = (await client.get(f"/conversation/{conversation_id}", headers=h)).json()
    assert conversation["assignedUserId"] == w.user.id
    assert {t["id"] for t in conversation["tags"]} == {w.tag.id, label.id}
    card = await client.get(
        f"/funnel-column-card/person/{w.contact.id}/conversation/{conversation_id}", headers=h
    )
    assert card.status_code == 200 and card.json()["columnId"] == w.columns[1].id
    tickets = (await client.get("/ticket", headers=h)).json()["data"]
    assert [(t["title"], t["priority"]) for t in tickets] == [("Novo atendimento", "HIGH")]
    hook = receiver.received[0]
    assert hook.headers["x-office"] == "a" and hook.headers["x-service-event"] == "flow.webhook"
    assert hook.json["origem"] == "fluxo"
    assert hook.json["context"]["conversationId"] == conversation_id
    assert hook.json["context"]["lastMessage"] == "  SIM "
    # the step's call is in the flow's delivery log
    log = await client.get(f"/flow/{flow['id']}/deliveries", headers=h)
    assert log.status_code == 200, log.text
    [delivery] = log.json()["data"]
    assert delivery["flowId"] == flow["id"] and delivery["ruleId"] is None
    assert delivery["status"] == "SUCCESS" and delivery["statusCode"] == 200
    assert delivery["event"] == "flow.webhook" and len(delivery["attempts"]) == 1
    assert hook.headers["x-service-delivery"] == delivery["id"]
    state = await flow_session(client, office_a, conversation_id)
    assert state["status"] == "PAUSED" and state["waitingFor"] == "HUMAN"

    # while a person has the conversation the flow says nothing
    await inbound(client, office_a, conversation_id, "alô?")
    await work(app, settings)
    assert len(await outbound(client, office_a, conversation_id)) == 6

    # hand-off back to the flow
    r = await client.post(
        "/conversation/end-human-support", json={"conversationId": conversation_id}, headers=h
    )
    assert r.status_code == 200, r.text
    await work(app, settings)
    assert (await outbound(client, office_a, conversation_id))[6:] == ["Obrigado por aguardar!"]
    state = await flow_session(client, office_a, conversation_id)
    assert state["status"] == "ENDED" and state["endReason"] == "COMPLETED"
    assert state["waitingFor"] is None and state["currentStepId"] is None


def test_a_reply_matches_an_option_by_number_value_title_or_text() -> None:
    options = [
        Option(text="Consultar processo", title="Processo", value="p1", next_step_id=None),
        Option(
            text="Falar com advogado", title="Atendimento Jurídico", value="adv", next_step_id=None
        ),
    ]
    assert match_option(options, "2") == 1
    assert match_option(options, "2.") == 1
    assert match_option(options, "3") is None
    assert match_option(options, "ADV") == 1
    assert match_option(options, "atendimento juridico") == 1
    assert match_option(options, "consultar  PROCESSO!") == 0
    assert match_option(options, "") is None
    assert normalise("Ação") == "acao"


async def _world_with_flow(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office: OfficeFixture,
    steps: list[dict[str, Any]],
) -> World:
    w = await make_world(session, office.id)
    await create_flow(client, office, w.inbox.id, steps)
    return w


async def test_a_flow_starts_only_on_the_first_inbound_message(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    w = await make_world(session, office_a.id)
    await inbound(client, office_a, w.conversation.id, "Mensagem antiga")
    await work(app, settings)  # handled while the inbox had no flow
    await create_flow(client, office_a, w.inbox.id, [text("s1", "Olá")])
    await inbound(client, office_a, w.conversation.id, "Oi")
    await work(app, settings)
    assert await outbound(client, office_a, w.conversation.id) == []
    r = await client.get(
        f"/conversation/{w.conversation.id}/flow-session", headers=office_a.headers
    )
    assert r.status_code == 404


async def test_human_support_stops_the_flow(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    steps = [listing("s1", "Escolha", option("Um", "1", "um", "s2")), text("s2", "Fim")]
    w = await _world_with_flow(client, session, office_a, steps)
    h = office_a.headers
    await inbound(client, office_a, w.conversation.id, "Oi")
    await work(app, settings)
    r = await client.patch(
        f"/conversation/{w.conversation.id}", json={"assignedUserId": w.user.id}, headers=h
    )
    assert r.status_code == 200, r.text
    await inbound(client, office_a, w.conversation.id, "1")
    await work(app, settings)
    assert await outbound(client, office_a, w.conversation.id) == ["Escolha\n1. Um"]
    assert (await flow_session(client, office_a, w.conversation.id))["status"] == "PAUSED"
    # handed back: the list is asked again, and the answer goes on
    await client.post(
        "/conversation/end-human-support", json={"conversationId": w.conversation.id}, headers=h
    )
    await work(app, settings)
    await inbound(client, office_a, w.conversation.id, "um")
    await work(app, settings)
    assert await outbound(client, office_a, w.conversation.id) == [
        "Escolha\n1. Um",
        "Escolha\n1. Um",
        "Fim",
    ]


async def test_a_turn_runs_at_most_50_steps(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    steps = [text(f"s{i}", f"m{i}", f"s{i + 1}" if i < 60 else None) for i in range(1, 61)]
    w = await _world_with_flow(client, session, office_a, steps)
    await inbound(client, office_a, w.conversation.id, "Oi")
    await work(app, settings)
    sent = await outbound(client, office_a, w.conversation.id)
    assert sent == [f"m{i}" for i in range(1, 51)]
    state = await flow_session(client, office_a, w.conversation.id)
    assert state["status"] == "ENDED" and state["endReason"] == "STEP_LIMIT"


async def test_a_waiting_session_expires_after_24_hours_of_silence(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    steps = [listing("s1", "Escolha", option("Um", "1", "um", "s2")), text("s2", "Fim")]
    w = await _world_with_flow(client, session, office_a, steps)
    clock = Clock()
    await inbound(client, office_a, w.conversation.id, "Oi")
    await work(app, settings, clock)
    clock.advance(hours=25)
    await inbound(client, office_a, w.conversation.id, "1")
    await work(app, settings, clock)
    assert await outbound(client, office_a, w.conversation.id) == ["Escolha\n1. Um"]
    state = await flow_session(client, office_a, w.conversation.id)
    assert state["status"] == "EXPIRED" and state["endReason"] == "EXPIRED"
    assert state["waitingFor"] is None


async def test_the_social_flow_runs_for_social_network_channels(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    inbox = await f.make_inbox(session, office_a.id)
    instagram = await f.make_integration(session, office_a.id, inbox.id, "INSTAGRAM")
    whatsapp = await f.make_integration(session, office_a.id, inbox.id, "WHATSAPP")
    first = await f.make_contact(session, office_a.id, "Ana")
    second = await f.make_contact(session, office_a.id, "Bia")
    social_chat = await f.make_conversation(session, office_a.id, first.id, instagram)
    chat = await f.make_conversation(session, office_a.id, second.id, whatsapp)
    await session.commit()
    await create_flow(client, office_a, inbox.id, [text("s1", "WhatsApp")])
    await create_flow(client, office_a, inbox.id, [text("s1", "Instagram")], social=True)
    await inbound(client, office_a, social_chat.id, "Oi")
    await inbound(client, office_a, chat.id, "Oi")
    await work(app, settings)
    assert await outbound(client, office_a, social_chat.id) == ["Instagram"]
    assert await outbound(client, office_a, chat.id) == ["WhatsApp"]


async def test_two_inbound_messages_together_are_handled_one_after_the_other(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    server_url: str,
) -> None:
    steps = [
        text("s1", "Olá", "menu"),
        listing("menu", "Escolha", option("Um", "Um", "um", "menu2")),
        listing("menu2", "De novo", option("Dois", "Dois", "dois", None)),
    ]
    w = await _world_with_flow(client, session, office_a, steps)
    url = f"{server_url}/conversation/{w.conversation.id}/messages/inbound"
    async with httpx.AsyncClient() as http:
        responses = await fire(
            8, lambda _i: http.post(url, json={"text": "1"}, headers=office_a.headers)
        )
    assert [r.status_code for r in responses] == [201] * 8
    await work(app, settings)
    # the first message starts the flow (it waits at the menu), the second answers the menu,
    # the third menu2 (the flow ends), the rest find it over: never two at once
    sent = await outbound(client, office_a, w.conversation.id)
    assert sent == ["Olá", "Escolha\n1. Um", "De novo\n1. Dois"]
    state = await flow_session(client, office_a, w.conversation.id)
    outcomes = [s["outcome"] for s in state["steps"]]
    assert outcomes == ["SENT", "SENT", "ANSWERED", "SENT", "ANSWERED", "COMPLETED"]


async def test_flow_session_route(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    w = await make_world(session, office_a.id)
    path = f"/conversation/{w.conversation.id}/flow-session"
    assert (await client.get(path)).status_code == 401
    r = await client.get(path, headers=office_b.headers)
    assert r.status_code == 404 and error_of(r)["code"] == "NOT_FOUND"
    r = await client.get("/conversation/bad-id/flow-session", headers=office_a.headers)
    assert r.status_code == 400 and "path.id" in error_of(r)["details"]
    r = await client.get(path, headers=office_a.headers)
    assert r.status_code == 404 and "No flow has run" in error_of(r)["details"]


async def test_case_movements_routes(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    contact = await f.make_contact(session, office_a.id)
    await session.commit()
    h = office_a.headers
    body = {
        "personId": contact.id,
        "caseNumber": "123",
        "description": "Sentença\npublicada",
        "occurredAt": "2026-01-05T12:00:00Z",
    }
    assert (await client.post("/case-movements", json=body)).status_code == 401
    r = await client.post("/case-movements", json=body, headers=h)
    assert r.status_code == 201, r.text
    movement = r.json()
    assert movement["occurredAt"] == "2026-01-05T12:00:00.000Z"
    r = await client.get("/case-movements", params={"personId": contact.id}, headers=h)
    assert [m["id"] for m in r.json()["data"]] == [movement["id"]]
    for key, value in (
        ("occurredAt", "2026-01-05T12:00:00"),
        ("personId", "x"),
        ("caseNumber", ""),
    ):
        r = await client.post("/case-movements", json={**body, key: value}, headers=h)
        assert r.status_code == 400 and f"body.{key}" in error_of(r)["details"]
    r = await client.post("/case-movements", json=body, headers=office_b.headers)
    assert r.status_code == 404
    r = await client.delete(f"/case-movements/{movement['id']}", headers=office_b.headers)
    assert r.status_code == 404
    r = await client.delete(f"/case-movements/{movement['id']}", headers=h)
    assert r.status_code == 200
    assert (await client.get("/case-movements", headers=h)).json()["totalResults"] == 0


async def test_concurrent_inbound_messages_start_one_session(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    w = await _world_with_flow(client, session, office_a, [text("s1", "Olá")])
    await asyncio.gather(*(inbound(client, office_a, w.conversation.id, f"m{i}") for i in range(8)))
    await asyncio.gather(*(work(app, settings) for _ in range(2)))
    assert await outbound(client, office_a, w.conversation.id) == ["Olá"]
