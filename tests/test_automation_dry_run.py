"""``POST /automation-rules/{id}/test``: which branch and why, nothing done."""

from __future__ import annotations

import httpx
from fastapi import FastAPI
from sqlalchemy.ext.asyncio import AsyncSession

from tests.automation_helpers import create_rule, runs
from tests.crm_world import make_world
from tests.helpers import OfficeFixture, error_of


async def test_dry_run_with_a_subject_answers_then_or_else_and_does_nothing(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await make_world(session, office_a.id)
    rule = await create_rule(
        client,
        office_a,
        conditions={"messageText": "divórcio"},
        actions=[{"action": "TAG_CONVERSATION", "actionParams": {"tagId": world.tag.id}}],
        elseActions=[{"action": "PAUSE_AUTOMATION", "actionParams": {}}],
    )
    h = office_a.headers
    r = await client.post(
        f"/automation-rules/{rule['id']}/test",
        json={"conversationId": world.conversation.id, "messageText": "Quero o DIVORCIO"},
        headers=h,
    )
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["branch"] == "then" and body["actions"] == rule["actions"]
    assert body["conditions"] == [
        {"key": "messageText", "expected": "divórcio", "actual": "Quero o DIVORCIO", "holds": True}
    ]
    r = await client.post(
        f"/automation-rules/{rule['id']}/test", json={"messageText": "Bom dia"}, headers=h
    )
    assert r.json()["branch"] == "else" and r.json()["actions"] == rule["elseActions"]
    assert await runs(client, office_a, rule["id"]) == []


async def test_dry_run_on_the_latest_matching_event(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await make_world(session, office_a.id)
    rule = await create_rule(client, office_a, conditions={"messageText": "audiência"})
    h = office_a.headers
    r = await client.post(f"/automation-rules/{rule['id']}/test", json={}, headers=h)
    assert r.status_code == 404 and error_of(r)["code"] == "NOT_FOUND"
    sent = await client.post(
        f"/conversation/{world.conversation.id}/messages/inbound",
        json={"text": "Quando é a audiencia?"},
        headers=h,
    )
    assert sent.status_code == 201
    r = await client.post(f"/automation-rules/{rule['id']}/test", json={}, headers=h)
    body = r.json()
    assert body["branch"] == "then" and body["event"] == "chat.message.received"
    assert body["eventId"] is not None
    r = await client.post(
        f"/automation-rules/{rule['id']}/test", json={"eventId": body["eventId"]}, headers=h
    )
    assert r.json()["branch"] == "then"


async def test_dry_run_names_a_skipped_rule_and_why(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    rule = await create_rule(client, office_a, conditions={"templateName": "boas_vindas"})
    r = await client.post(
        f"/automation-rules/{rule['id']}/test",
        json={"event": "chat.message.sent", "templateName": "outro"},
        headers=office_a.headers,
    )
    assert r.json()["branch"] == "skipped"
    assert "triggers on chat.message.received" in r.json()["reason"]
    r = await client.post(
        f"/automation-rules/{rule['id']}/test",
        json={"templateName": "outro"},
        headers=office_a.headers,
    )
    assert r.json()["branch"] == "skipped" and "no else-branch" in r.json()["reason"]


async def test_dry_run_refuses_bad_input_naming_the_field(
    client: httpx.AsyncClient, office_a: OfficeFixture, office_b: OfficeFixture
) -> None:
    rule = await create_rule(client, office_a)
    h = office_a.headers
    r = await client.post(f"/automation-rules/{rule['id']}/test", json={"event": "nope"}, headers=h)
    assert r.status_code == 400 and "body.event" in error_of(r)["details"]
    r = await client.post(
        f"/automation-rules/{rule['id']}/test", json={"conversationId": "bad id"}, headers=h
    )
    assert r.status_code == 400 and "body.conversationId" in error_of(r)["details"]
    r = await client.post(
        f"/automation-rules/{rule['id']}/test", json={"eventId": "cmissing00001"}, headers=h
    )
    assert r.status_code == 404
