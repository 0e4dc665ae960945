"""Rules that behave (issue 43): runOncePerConversation, skipWhileHumanAssigned, actions
refused when saved for a trigger whose record they cannot act on, ASSIGN_LEGAL_AREA on a
conversation without a card, and a failing rule told through its read."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
from fastapi import FastAPI
from sqlalchemy import func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.automation.consumer import handle_event
from officehub.automation.models import AutomationRule, AutomationRun
from officehub.conversations.models import Conversation
from officehub.events.service import emit
from officehub.kit.config import Settings
from officehub.kit.timeutil import utcnow
from officehub.kit.worker import WorkerContext
from tests import factories as f
from tests.automation_helpers import automation_worker, create_rule, runs
from tests.crm_world import World, make_world
from tests.helpers import OfficeFixture, error_of
from tests.webhook_helpers import Clock

TRIAGE = "Sobre o que é o seu caso?"


async def _inbound(
    client: httpx.AsyncClient, office: OfficeFixture, conversation_id: str, text: str
) -> None:
    r = await client.post(
        f"/conversation/{conversation_id}/messages/inbound",
        json={"text": text},
        headers=office.headers,
    )
    assert r.status_code == 201, r.text


async def _outbound(
    client: httpx.AsyncClient, office: OfficeFixture, conversation_id: str
) -> list[str]:
    r = await client.get(
        f"/conversation/{conversation_id}/messages", params={"limit": 100}, headers=office.headers
    )
    return [m["text"] for m in reversed(r.json()["data"]) if m["direction"] == "OUTBOUND"]


async def _work(app: FastAPI, settings: Settings) -> None:
    await automation_worker(app, settings, Clock()).run_until_idle()


def _triage_rule(**fields: Any) -> dict[str, Any]:
    """The newcomer's rule: a keyword answered, the rest asked the triage question."""
    return {
        "conditions": {"messageText": "agendar"},
        "actions": [{"action": "SCHEDULE_MESSAGE", "actionParams": {"text": "Agendado"}}],
        "elseActions": [{"action": "SCHEDULE_MESSAGE", "actionParams": {"text": TRIAGE}}],
        **fields,
    }


async def _rule(client: httpx.AsyncClient, office: OfficeFixture, rule_id: str) -> dict[str, Any]:
    r = await client.get(f"/automation-rules/{rule_id}", headers=office.headers)
    assert r.status_code == 200, r.text
    found: dict[str, Any] = r.json()
    return found


async def test_run_once_per_conversation_asks_the_triage_question_once(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    world = await make_world(session, office_a.id)
    rule = await create_rule(client, office_a, **_triage_rule(runOncePerConversation=True))
    assert rule["runOncePerConversation"] is True and rule["skipWhileHumanAssigned"] is False
    conversation = world.conversation.id
    for text in ("Olá", "Preciso de ajuda", "Alguém?"):
        await _inbound(client, office_a, conversation, text)
        await _work(app, settings)
    assert await _outbound(client, office_a, conversation) == [TRIAGE]
    logged = await runs(client, office_a, rule["id"])
    assert [r["branch"] for r in logged] == ["skipped", "skipped", "else"]
    assert "runOncePerConversation" in logged[0]["reason"]
    # another conversation is another once
    other = await f.make_conversation(
        session,
        office_a.id,
        (await f.make_contact(session, office_a.id, phone=None)).id,
        world.integration,
    )
    await session.commit()
    await _inbound(client, office_a, other.id, "Oi")
    await _work(app, settings)
    assert await _outbound(client, office_a, other.id) == [TRIAGE]


async def test_without_run_once_per_conversation_the_rule_acts_on_every_event(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    world = await make_world(session, office_a.id)
    rule = await create_rule(client, office_a, **_triage_rule())
    assert rule["runOncePerConversation"] is False
    for text in ("Olá", "Alguém?"):
        await _inbound(client, office_a, world.conversation.id, text)
        await _work(app, settings)
    assert await _outbound(client, office_a, world.conversation.id) == [TRIAGE, TRIAGE]


async def test_run_once_per_conversation_holds_when_two_events_are_handled_at_once(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    """Two workers handling two events of one conversation at the same moment: the
    primary key of automation_rule_conversations lets one act, the other logs a skip."""
    world = await make_world(session, office_a.id)
    later = [{"action": "SCHEDULE_MESSAGE", "actionParams": {"text": "x", "delayMinutes": 600}}]
    rule = await create_rule(client, office_a, actions=later, runOncePerConversation=True)
    async with app.state.sessionmaker() as s:
        events = [
            await emit(
                s,
                office_a.id,
                "chat.message.received",
                {"text": f"m{n}"},
                conversation_id=world.conversation.id,
            )
            for n in range(2)
        ]
        await s.commit()
    ctx = WorkerContext(settings, app.state.engine, app.state.sessionmaker, worker_id="race")

    async def handle(index: int) -> None:
        async with app.state.sessionmaker() as s, s.begin():
            await handle_event(s, events[index], ctx)

    await asyncio.gather(handle(0), handle(1))
    logged = await runs(client, office_a, rule["id"])
    assert sorted(r["branch"] for r in logged) == ["skipped", "then"]
    async with app.state.sessionmaker() as s:
        total = await s.scalar(select(func.count()).select_from(AutomationRun))
    assert total == 2


async def test_skip_while_human_assigned_stands_aside_once_a_person_has_the_conversation(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    world = await make_world(session, office_a.id)
    rule = await create_rule(client, office_a, **_triage_rule(skipWhileHumanAssigned=True))
    conversation = world.conversation.id
    await _inbound(client, office_a, conversation, "Olá")
    await _work(app, settings)
    await session.execute(
        update(Conversation)
        .where(Conversation.id == conversation)
        .values(assigned_user_id=world.user.id)
    )
    await session.commit()
    await _inbound(client, office_a, conversation, "Doutor, obrigado")
    await _work(app, settings)
    assert await _outbound(client, office_a, conversation) == [TRIAGE]
    newest = (await runs(client, office_a, rule["id"]))[0]
    assert newest["branch"] == "skipped" and "skipWhileHumanAssigned" in newest["reason"]


async def test_an_action_on_the_conversation_is_refused_for_a_trigger_without_one(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await make_world(session, office_a.id)
    h = office_a.headers
    tag = {"action": "TAG_CONVERSATION", "actionParams": {"tagId": world.tag.id}}
    body = {"name": "x", "triggerEvent": "contact.created", "actions": [tag]}
    r = await client.post("/automation-rules", json=body, headers=h)
    assert r.status_code == 400
    assert error_of(r)["details"].startswith("body.actions.0.action:")
    pause = {"action": "PAUSE_AUTOMATION", "actionParams": {}}
    rule = await create_rule(client, office_a, triggerEvent="contact.created", actions=[pause])
    r = await client.patch(
        f"/automation-rules/{rule['id']}", json={"actions": [pause, tag]}, headers=h
    )
    assert r.status_code == 400
    assert error_of(r)["details"].startswith("body.actions.1.action:")
    # a trigger changed under stored actions is checked too
    tagging = await create_rule(client, office_a, actions=[tag])
    r = await client.patch(
        f"/automation-rules/{tagging['id']}", json={"triggerEvent": "template.updated"}, headers=h
    )
    assert r.status_code == 400
    assert error_of(r)["details"].startswith("body.actions.0.action:")


async def test_move_card_is_refused_on_a_deleted_card(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await make_world(session, office_a.id)
    move = {"action": "MOVE_CARD", "actionParams": {"targetFunnelColumnId": world.columns[1].id}}
    r = await client.post(
        "/automation-rules",
        json={"name": "x", "triggerEvent": "crm.lead.deleted", "actions": [move]},
        headers=office_a.headers,
    )
    assert r.status_code == 400
    assert error_of(r)["details"].startswith("body.actions.0.action:")
    assert await create_rule(client, office_a, triggerEvent="crm.lead.moved", actions=[move])


async def test_pause_automation_without_a_conversation_is_a_skipped_outcome_not_a_failure(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    rule = await create_rule(client, office_a, triggerEvent="contact.created")
    r = await client.post("/people", json={"name": "Ana"}, headers=office_a.headers)
    assert r.status_code == 201, r.text
    await _work(app, settings)
    [run] = await runs(client, office_a, rule["id"])
    assert run["actions"][0]["status"] == "skipped"
    assert (await _rule(client, office_a, rule["id"]))["failureCount"] == 0


async def test_assign_legal_area_sets_the_conversations_area_when_there_is_no_card(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    world = await make_world(session, office_a.id)
    area = await f.make_legal_area(session, office_a.id)
    await session.commit()
    rule = await create_rule(
        client,
        office_a,
        actions=[{"action": "ASSIGN_LEGAL_AREA", "actionParams": {"legalAreaId": area.id}}],
    )
    await _inbound(client, office_a, world.conversation.id, "Oi")
    await _work(app, settings)
    r = await client.get(f"/conversation/{world.conversation.id}", headers=office_a.headers)
    assert r.json()["legalAreaId"] == area.id
    [run] = await runs(client, office_a, rule["id"])
    assert run["actions"][0]["status"] == "done"


async def _failing_world(session: AsyncSession, office: OfficeFixture) -> tuple[World, str]:
    """A world whose card sits in one funnel and a column of another funnel."""
    world = await make_world(session, office.id)
    await f.make_card(session, world.columns[0], world.contact.id, world.conversation.id)
    _other, other_columns = await f.make_funnel(session, office.id, world.inbox.id, 1, name="B")
    await session.commit()
    return world, other_columns[0].id


async def test_a_failed_run_shows_on_the_rules_read_until_a_run_goes_through(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    world, elsewhere = await _failing_world(session, office_a)
    bad = {"action": "MOVE_CARD", "actionParams": {"targetFunnelColumnId": elsewhere}}
    rule = await create_rule(client, office_a, actions=[bad])
    assert rule["failureCount"] == 0 and rule["lastFailure"] is None
    for text in ("Oi", "Olá"):
        await _inbound(client, office_a, world.conversation.id, text)
        await _work(app, settings)
    read = await _rule(client, office_a, rule["id"])
    newest = (await runs(client, office_a, rule["id"]))[0]
    assert read["failureCount"] == 2
    failure = read["lastFailure"]
    assert failure["runId"] == newest["id"] and failure["eventId"] == newest["eventId"]
    assert failure["action"] == "MOVE_CARD" and "COLUMN_OF_ANOTHER_FUNNEL" in failure["error"]
    assert failure["event"] == "chat.message.received" and failure["at"].endswith("Z")
    listed = (await client.get("/automation-rules", headers=office_a.headers)).json()["data"]
    assert listed[0]["failureCount"] == 2
    good = {"action": "MOVE_CARD", "actionParams": {"targetFunnelColumnId": world.columns[2].id}}
    r = await client.patch(
        f"/automation-rules/{rule['id']}", json={"actions": [good]}, headers=office_a.headers
    )
    assert r.status_code == 200
    await _inbound(client, office_a, world.conversation.id, "De novo")
    await _work(app, settings)
    read = await _rule(client, office_a, rule["id"])
    assert read["failureCount"] == 0 and read["lastFailure"]["runId"] == newest["id"]


async def test_patch_rule_behaviour_fields(
    client: httpx.AsyncClient,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    rule = await create_rule(client, office_a)
    url = f"/automation-rules/{rule['id']}"
    r = await client.patch(
        url,
        json={"runOncePerConversation": True, "skipWhileHumanAssigned": True},
        headers=office_a.headers,
    )
    assert r.status_code == 200
    assert r.json()["runOncePerConversation"] is True and r.json()["skipWhileHumanAssigned"]
    for field, value in (
        ("runOncePerConversation", "yes"),
        ("skipWhileHumanAssigned", None),
        ("runOnce", True),
    ):
        r = await client.patch(url, json={field: value}, headers=office_a.headers)
        assert r.status_code == 400, field
        assert f"body.{field}" in error_of(r)["details"], field
    r = await client.patch(url, json={"runOncePerConversation": False}, headers=office_b.headers)
    assert r.status_code == 404
    r = await client.patch(url, json={"runOncePerConversation": False})
    assert r.status_code == 401
    r = await client.patch(
        url,
        json={"runOncePerConversation": False},
        headers={"x-service-api-key": "not-a-key"},
    )
    assert r.status_code == 401
    assert (await _rule(client, office_a, rule["id"]))["runOncePerConversation"] is True


async def test_create_rule_behaviour_fields_are_checked(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    body = {
        "name": "x",
        "triggerEvent": "chat.message.received",
        "actions": [{"action": "PAUSE_AUTOMATION", "actionParams": {}}],
    }
    for field in ("runOncePerConversation", "skipWhileHumanAssigned"):
        r = await client.post(
            "/automation-rules", json={**body, field: "sim"}, headers=office_a.headers
        )
        assert r.status_code == 400 and f"body.{field}" in error_of(r)["details"]
    r = await client.post("/automation-rules", json={**body, "runOncePerConversation": True})
    assert r.status_code == 401


async def test_a_rule_saved_before_the_check_can_still_be_disabled(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    """A rule stored before actions were checked against the trigger: disabling or renaming
    it is taken; changing its actions or trigger is checked."""
    world = await make_world(session, office_a.id)
    now = utcnow()
    tag = {"action": "TAG_CONVERSATION", "actionParams": {"tagId": world.tag.id}}
    rule = AutomationRule(
        office_id=office_a.id,
        integration_id=None,
        name="Antiga",
        enabled=True,
        trigger_event="contact.created",
        conditions={},
        actions=[tag],
        else_actions=None,
        priority=0,
        created_at=now,
        updated_at=now,
    )
    session.add(rule)
    await session.commit()
    url = f"/automation-rules/{rule.id}"
    r = await client.patch(url, json={"enabled": False}, headers=office_a.headers)
    assert r.status_code == 200 and r.json()["enabled"] is False
    r = await client.patch(url, json={"priority": 2, "actions": [tag]}, headers=office_a.headers)
    assert r.status_code == 400
    assert error_of(r)["details"].startswith("body.actions.0.action:")
