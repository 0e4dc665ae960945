"""Each action end to end: an event through the worker, observed through the public API."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx
from fastapi import FastAPI
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.crm.models import Card
from officehub.kit.config import Settings
from officehub.webhooks import verify
from tests import factories as f
from tests.automation_helpers import automation_worker, create_rule, runs
from tests.crm_world import World, make_world
from tests.helpers import OfficeFixture
from tests.receiver import Reply, running_receiver
from tests.webhook_helpers import Clock


@dataclass
class Setup:
    world: World
    card: Card
    clock: Clock


async def _setup(session: AsyncSession, office: OfficeFixture, columns: int = 3) -> Setup:
    world = await make_world(session, office.id, columns)
    card = await f.make_card(session, world.columns[0], world.contact.id, world.conversation.id)
    await session.commit()
    return Setup(world, card, Clock())


async def _inbound(
    client: httpx.AsyncClient, office: OfficeFixture, conversation_id: str, text: str
) -> None:
    r = await client.post(
        f"/conversation/{conversation_id}/messages/inbound",
        json={"text": text},
        headers=office.headers,
    )
    assert r.status_code == 201, r.text


async def _work(app: FastAPI, settings: Settings, clock: Clock) -> None:
    await automation_worker(app, settings, clock).run_until_idle()


async def _outbound(
    client: httpx.AsyncClient, office: OfficeFixture, conversation_id: str
) -> list[str]:
    r = await client.get(
        f"/conversation/{conversation_id}/messages", params={"limit": 100}, headers=office.headers
    )
    newest_first = [m["text"] for m in r.json()["data"] if m["direction"] == "OUTBOUND"]
    return list(reversed(newest_first))


async def _card(client: httpx.AsyncClient, office: OfficeFixture, card_id: str) -> dict[str, Any]:
    r = await client.get(f"/funnel-column-card/{card_id}", headers=office.headers)
    assert r.status_code == 200
    card: dict[str, Any] = r.json()
    return card


async def test_move_card_action_moves_the_conversations_card(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    s = await _setup(session, office_a)
    target = s.world.columns[2].id
    rule = await create_rule(
        client,
        office_a,
        actions=[{"action": "MOVE_CARD", "actionParams": {"targetFunnelColumnId": target}}],
    )
    await _inbound(client, office_a, s.world.conversation.id, "Bom dia")
    await _work(app, settings, s.clock)
    assert (await _card(client, office_a, s.card.id))["columnId"] == target
    [run] = await runs(client, office_a, rule["id"])
    assert run["branch"] == "then" and run["event"] == "chat.message.received"
    assert run["actions"][0]["status"] == "done"


async def test_tag_conversation_action_tags_the_conversation(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    s = await _setup(session, office_a)
    tag = await f.make_tag(session, office_a.id, s.world.inbox.id, name="novo-lead")
    await session.commit()
    await create_rule(
        client,
        office_a,
        actions=[{"action": "TAG_CONVERSATION", "actionParams": {"tagId": tag.id}}],
    )
    await _inbound(client, office_a, s.world.conversation.id, "Oi")
    await _work(app, settings, s.clock)
    r = await client.get(f"/conversation/{s.world.conversation.id}", headers=office_a.headers)
    assert tag.id in {t["id"] for t in r.json()["tags"]}


async def test_assign_legal_area_action_sets_the_cards_area(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    s = await _setup(session, office_a)
    area = await f.make_legal_area(session, office_a.id)
    await session.commit()
    await create_rule(
        client,
        office_a,
        actions=[{"action": "ASSIGN_LEGAL_AREA", "actionParams": {"legalAreaId": area.id}}],
    )
    await _inbound(client, office_a, s.world.conversation.id, "Oi")
    await _work(app, settings, s.clock)
    assert (await _card(client, office_a, s.card.id))["legalArea"]["id"] == area.id


async def test_create_ticket_action_creates_a_ticket_of_the_conversation(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    s = await _setup(session, office_a)
    status = (
        await client.post("/ticket-statuses", json={"name": "Aberto"}, headers=office_a.headers)
    ).json()
    params = {"title": "Retornar cliente", "ticketStatusId": status["id"], "priority": "HIGH"}
    await create_rule(
        client, office_a, actions=[{"action": "CREATE_TICKET", "actionParams": params}]
    )
    await _inbound(client, office_a, s.world.conversation.id, "Oi")
    await _work(app, settings, s.clock)
    [ticket] = (await client.get("/ticket", headers=office_a.headers)).json()["data"]
    assert ticket["title"] == "Retornar cliente" and ticket["priority"] == "HIGH"
    assert ticket["conversationId"] == s.world.conversation.id


async def test_schedule_message_action_sends_after_its_delay(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    s = await _setup(session, office_a)
    params = {"text": "Ainda precisa de ajuda?", "delayMinutes": 10}
    await create_rule(
        client, office_a, actions=[{"action": "SCHEDULE_MESSAGE", "actionParams": params}]
    )
    conversation = s.world.conversation.id
    await _inbound(client, office_a, conversation, "Oi")
    await _work(app, settings, s.clock)
    assert await _outbound(client, office_a, conversation) == []
    s.clock.advance(minutes=9, seconds=59)
    await _work(app, settings, s.clock)
    assert await _outbound(client, office_a, conversation) == []
    s.clock.advance(seconds=1)
    await _work(app, settings, s.clock)
    assert await _outbound(client, office_a, conversation) == ["Ainda precisa de ajuda?"]


async def test_send_fast_message_action_sends_a_text_fast_message(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    s = await _setup(session, office_a)
    fast = (
        await client.post(
            "/fast-message",
            json={"inboxId": s.world.inbox.id, "title": "Oi", "kind": "TEXT", "text": "Olá!"},
            headers=office_a.headers,
        )
    ).json()
    await create_rule(
        client,
        office_a,
        actions=[{"action": "SEND_FAST_MESSAGE", "actionParams": {"fastMessageId": fast["id"]}}],
    )
    await _inbound(client, office_a, s.world.conversation.id, "Oi")
    await _work(app, settings, s.clock)
    assert await _outbound(client, office_a, s.world.conversation.id) == ["Olá!"]


async def test_send_fast_message_sequence_sends_blocks_in_order_at_their_pace(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    s = await _setup(session, office_a)
    blocks = [
        {"kind": "TEXT", "text": "um", "typingSeconds": 2, "waitSeconds": 5},
        {"kind": "TEXT", "text": "dois", "typingSeconds": 3, "waitSeconds": 4},
        {"kind": "TEXT", "text": "três", "typingSeconds": 0, "waitSeconds": 0},
    ]
    fast = (
        await client.post(
            "/fast-message",
            json={
                "inboxId": s.world.inbox.id,
                "title": "Seq",
                "kind": "SEQUENCE",
                "blocks": blocks,
            },
            headers=office_a.headers,
        )
    ).json()
    await create_rule(
        client,
        office_a,
        actions=[{"action": "SEND_FAST_MESSAGE", "actionParams": {"fastMessageId": fast["id"]}}],
    )
    conversation = s.world.conversation.id
    await _inbound(client, office_a, conversation, "Oi")
    expected: list[tuple[float, list[str]]] = [
        (0, []),
        (1.9, []),
        (0.1, ["um"]),  # after typing 2 s
        (7.9, ["um"]),
        (0.1, ["um", "dois"]),  # wait 5 s, then typing 3 s
        (3.9, ["um", "dois"]),
        (0.1, ["um", "dois", "três"]),  # wait 4 s, no typing
    ]
    for step, texts in expected:
        s.clock.advance(seconds=step)
        await _work(app, settings, s.clock)
        assert await _outbound(client, office_a, conversation) == texts, step


async def test_fire_webhook_action_reaches_a_real_receiver_signed_and_retried(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    s = await _setup(session, office_a)
    replies = [Reply(status=503), Reply()]
    async with running_receiver(lambda n: replies[min(n, 1)]) as receiver:
        params = {
            "url": receiver.url,
            "secret": "rule-secret-1",
            "headers": {"X-Office": "a"},
        }
        rule = await create_rule(
            client, office_a, actions=[{"action": "FIRE_WEBHOOK", "actionParams": params}]
        )
        await _inbound(client, office_a, s.world.conversation.id, "Oi")
        await _work(app, settings, s.clock)
        assert len(receiver.received) == 1  # 503: retried after the schedule's first step
        s.clock.advance(seconds=7)
        await _work(app, settings, s.clock)
        assert len(receiver.received) == 2
        s.clock.advance(minutes=60)
        await _work(app, settings, s.clock)
    assert len(receiver.received) == 2
    got = receiver.received[1]
    body = verify("rule-secret-1", got.headers, got.body)
    assert body["event"] == "chat.message.received" and body["rule"]["id"] == rule["id"]
    assert body["data"]["text"] == "Oi" and got.headers["x-office"] == "a"
    assert receiver.received[0].json["id"] == body["id"]


async def test_fire_webhook_action_is_ssrf_guarded_when_sent(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    s = await _setup(session, office_a)
    async with running_receiver() as receiver:
        await create_rule(
            client,
            office_a,
            actions=[{"action": "FIRE_WEBHOOK", "actionParams": {"url": receiver.url}}],
        )
        settings.webhook_allow_private = False  # saved while allowed; refused when sent
        await _inbound(client, office_a, s.world.conversation.id, "Oi")
        await _work(app, settings, s.clock)
    assert receiver.received == []


async def test_pause_automation_stops_rules_for_the_conversation_for_its_duration(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    s = await _setup(session, office_a)
    pause = await create_rule(
        client,
        office_a,
        priority=10,
        actions=[{"action": "PAUSE_AUTOMATION", "actionParams": {"durationMinutes": 60}}],
    )
    conversation = s.world.conversation.id
    await _inbound(client, office_a, conversation, "1")
    await _work(app, settings, s.clock)
    await _inbound(client, office_a, conversation, "2")
    await _work(app, settings, s.clock)
    s.clock.advance(minutes=61)
    await _inbound(client, office_a, conversation, "3")
    await _work(app, settings, s.clock)
    logged = list(reversed(await runs(client, office_a, pause["id"])))
    assert [r["branch"] for r in logged] == ["then", "skipped", "then"]
    assert "paused" in logged[1]["reason"]


async def test_then_and_else_branches(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    s = await _setup(session, office_a)
    yes = await f.make_tag(session, office_a.id, s.world.inbox.id, name="processo")
    no = await f.make_tag(session, office_a.id, s.world.inbox.id, name="outro")
    await session.commit()
    rule = await create_rule(
        client,
        office_a,
        conditions={"messageText": "ação"},
        actions=[{"action": "TAG_CONVERSATION", "actionParams": {"tagId": yes.id}}],
        elseActions=[{"action": "TAG_CONVERSATION", "actionParams": {"tagId": no.id}}],
    )
    conversation = s.world.conversation.id
    await _inbound(client, office_a, conversation, "Quero mover uma ACAO trabalhista")
    await _work(app, settings, s.clock)
    tags = {
        t["id"]
        for t in (
            await client.get(f"/conversation/{conversation}", headers=office_a.headers)
        ).json()["tags"]
    }
    assert yes.id in tags and no.id not in tags
    await _inbound(client, office_a, conversation, "Bom dia")
    await _work(app, settings, s.clock)
    tags = {
        t["id"]
        for t in (
            await client.get(f"/conversation/{conversation}", headers=office_a.headers)
        ).json()["tags"]
    }
    assert no.id in tags
    latest, first = await runs(client, office_a, rule["id"])
    assert first["branch"] == "then" and latest["branch"] == "else"
    assert "messageText" in latest["reason"]


async def test_conditions_without_else_branch_log_a_skipped_run(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    s = await _setup(session, office_a)
    rule = await create_rule(client, office_a, conditions={"assignedToUserId": s.world.user.id})
    await _inbound(client, office_a, s.world.conversation.id, "Oi")
    await _work(app, settings, s.clock)
    [run] = await runs(client, office_a, rule["id"])
    assert run["branch"] == "skipped" and "no else-branch" in run["reason"]
    assert run["actions"] == []


async def test_null_integration_id_applies_to_all_integrations(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    s = await _setup(session, office_a)
    other = await f.make_integration(session, office_a.id, s.world.inbox.id, type="WEBCHAT")
    await session.commit()
    contact = await f.make_contact(session, office_a.id, "João Lima")
    on_other = await f.make_conversation(session, office_a.id, contact.id, other)
    await session.commit()
    everywhere = await create_rule(client, office_a, integrationId=None)
    this_one = await create_rule(client, office_a, integrationId=s.world.integration.id)
    elsewhere = await create_rule(client, office_a, integrationId=other.id)
    await _inbound(client, office_a, s.world.conversation.id, "Oi")
    await _inbound(client, office_a, on_other.id, "Olá")
    await _work(app, settings, s.clock)

    async def ran_on(rule: dict[str, Any]) -> set[str]:
        return {run["conversationId"] for run in await runs(client, office_a, rule["id"])}

    assert await ran_on(everywhere) == {s.world.conversation.id, on_other.id}
    assert await ran_on(this_one) == {s.world.conversation.id}
    assert await ran_on(elsewhere) == {on_other.id}


async def test_priority_orders_rules_higher_first_ties_by_creation(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    s = await _setup(session, office_a, columns=4)
    c = s.world.columns

    def move(column: int) -> list[dict[str, Any]]:
        return [{"action": "MOVE_CARD", "actionParams": {"targetFunnelColumnId": c[column].id}}]

    await create_rule(client, office_a, priority=1, actions=move(3))  # last: lowest priority
    await create_rule(client, office_a, priority=5, actions=move(1))
    await create_rule(client, office_a, priority=5, actions=move(2))  # tie: created later
    await _inbound(client, office_a, s.world.conversation.id, "Oi")
    await _work(app, settings, s.clock)
    r = await client.get(f"/funnel-column-card/{s.card.id}", headers=office_a.headers)
    assert r.json()["columnId"] == c[3].id
    moved = (await client.get("/automation-rules", headers=office_a.headers)).json()["data"]
    order = sorted(  # run ids are time-ordered: the order the rules ran in
        [
            (run["id"], rule["priority"], rule["id"])
            for rule in moved
            for run in await runs(client, office_a, rule["id"])
        ]
    )
    ids = [x["id"] for x in moved]
    assert [(p, r) for _run, p, r in order] == [(5, ids[1]), (5, ids[2]), (1, ids[0])]


async def test_restart_on_return_false_fires_on_the_first_entry_only(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    s = await _setup(session, office_a)
    c = s.world.columns
    tag = [{"action": "TAG_CONVERSATION", "actionParams": {"tagId": s.world.tag.id}}]
    once = await create_rule(
        client,
        office_a,
        triggerEvent="crm.lead.moved",
        conditions={"toFunnelColumnId": c[1].id},
        actions=tag,
    )
    every = await create_rule(
        client,
        office_a,
        triggerEvent="crm.lead.moved",
        conditions={"toFunnelColumnId": c[1].id, "restartOnReturn": True},
        actions=tag,
    )
    for column in (c[1], c[0], c[1]):
        r = await client.patch(
            f"/funnel-column-card/{s.card.id}",
            json={"columnId": column.id},
            headers=office_a.headers,
        )
        assert r.status_code == 200
        await _work(app, settings, s.clock)
    once_runs = [r for r in await runs(client, office_a, once["id"])]
    assert [r["branch"] for r in once_runs] == ["skipped", "skipped", "then"]
    assert "restartOnReturn" in once_runs[0]["reason"]
    assert [r["branch"] for r in await runs(client, office_a, every["id"])] == [
        "then",
        "skipped",
        "then",
    ]


async def test_two_rules_moving_a_card_back_and_forth_stop_at_the_loop_guard(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    s = await _setup(session, office_a)
    a, b = s.world.columns[0], s.world.columns[1]
    to_a = await create_rule(
        client,
        office_a,
        triggerEvent="crm.lead.moved",
        conditions={"toFunnelColumnId": b.id, "restartOnReturn": True},
        actions=[{"action": "MOVE_CARD", "actionParams": {"targetFunnelColumnId": a.id}}],
    )
    to_b = await create_rule(
        client,
        office_a,
        triggerEvent="crm.lead.moved",
        conditions={"toFunnelColumnId": a.id, "restartOnReturn": True},
        actions=[{"action": "MOVE_CARD", "actionParams": {"targetFunnelColumnId": b.id}}],
    )
    r = await client.patch(
        f"/funnel-column-card/{s.card.id}", json={"columnId": b.id}, headers=office_a.headers
    )
    assert r.status_code == 200
    await _work(app, settings, s.clock)
    assert (await _card(client, office_a, s.card.id))["columnId"] == b.id
    a_runs = await runs(client, office_a, to_a["id"])
    assert [(x["branch"], x["depth"]) for x in reversed(a_runs)] == [
        ("then", 0),
        ("skipped", 1),  # moved to A: its condition does not hold
        ("skipped", 2),  # moved to B again: it would act, but it already did in this chain
    ]
    assert "already ran in this causal chain" in a_runs[0]["reason"]
    b_runs = await runs(client, office_a, to_b["id"])
    assert [(x["branch"], x["depth"]) for x in reversed(b_runs)] == [
        ("skipped", 0),
        ("then", 1),
        ("skipped", 2),
    ]


async def test_a_chain_stops_at_depth_5_and_the_run_log_says_so(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    s = await _setup(session, office_a, columns=8)
    c = s.world.columns
    rules = [
        await create_rule(
            client,
            office_a,
            triggerEvent="crm.lead.moved",
            conditions={"toFunnelColumnId": c[i].id},
            actions=[
                {"action": "MOVE_CARD", "actionParams": {"targetFunnelColumnId": c[i + 1].id}}
            ],
        )
        for i in range(1, 7)
    ]
    r = await client.patch(
        f"/funnel-column-card/{s.card.id}", json={"columnId": c[1].id}, headers=office_a.headers
    )
    assert r.status_code == 200
    await _work(app, settings, s.clock)
    assert (await _card(client, office_a, s.card.id))["columnId"] == c[6].id
    for depth, rule in enumerate(rules[:5]):
        acted = [x for x in await runs(client, office_a, rule["id"]) if x["branch"] == "then"]
        assert [x["depth"] for x in acted] == [depth]
    stopped = [x for x in await runs(client, office_a, rules[5]["id"]) if x["depth"] == 5]
    assert [x["branch"] for x in stopped] == ["skipped"]
    assert "depth 5" in stopped[0]["reason"]


async def test_a_failing_action_is_logged_and_the_rest_still_run(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    s = await _setup(session, office_a)
    _other, other_columns = await f.make_funnel(
        session, office_a.id, s.world.inbox.id, 1, name="Outro"
    )
    tag = await f.make_tag(session, office_a.id, s.world.inbox.id, name="depois-da-falha")
    await session.commit()
    rule = await create_rule(
        client,
        office_a,
        actions=[
            {"action": "MOVE_CARD", "actionParams": {"targetFunnelColumnId": other_columns[0].id}},
            {"action": "TAG_CONVERSATION", "actionParams": {"tagId": tag.id}},
        ],
    )
    await _inbound(client, office_a, s.world.conversation.id, "Oi")
    await _work(app, settings, s.clock)
    [run] = await runs(client, office_a, rule["id"])
    failed, done = run["actions"]
    assert failed["status"] == "failed" and "COLUMN_OF_ANOTHER_FUNNEL" in failed["error"]
    assert done["status"] == "done"
    assert (await _card(client, office_a, s.card.id))["columnId"] == s.world.columns[0].id
    r = await client.get(f"/conversation/{s.world.conversation.id}", headers=office_a.headers)
    assert tag.id in {t["id"] for t in r.json()["tags"]}


async def test_pause_with_resume_on_template_sent_lifts_when_a_template_is_sent(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    s = await _setup(session, office_a)
    params = {"resumeOnTemplateSent": True}
    pause = await create_rule(
        client, office_a, actions=[{"action": "PAUSE_AUTOMATION", "actionParams": params}]
    )
    # A conversation of the same contact on the official channel, whose catalogue holds an
    # approved template: the template goes through the API as an operator would send it.
    official = await f.make_integration(
        session, office_a.id, s.world.inbox.id, "WHATSAPP_OFFICIAL", device_id="5511900000009"
    )
    conversation = await f.make_conversation(
        session, office_a.id, s.world.conversation.person_id, official
    )
    await session.commit()
    template = {
        "name": "boas_vindas",
        "status": "APPROVED",
        "category": "UTILITY",
        "language": "pt_BR",
        "components": [{"type": "BODY", "text": "Olá!"}],
        "id": "tpl-boas-vindas",
    }
    r = await client.put(
        f"/integration/{official.id}/whatsapp-templates",
        json={"data": [template]},
        headers=office_a.headers,
    )
    assert r.status_code == 200, r.text
    await _inbound(client, office_a, conversation.id, "1")
    await _work(app, settings, s.clock)
    await _inbound(client, office_a, conversation.id, "2")
    await _work(app, settings, s.clock)
    r = await client.post(
        f"/conversation/{conversation.id}/messages",
        json={"templateName": "boas_vindas", "language": "pt_BR"},
        headers=office_a.headers,
    )
    assert r.status_code == 201, r.text
    await _inbound(client, office_a, conversation.id, "3")
    await _work(app, settings, s.clock)
    logged = list(reversed(await runs(client, office_a, pause["id"])))
    assert [r["branch"] for r in logged] == ["then", "skipped", "then"]
