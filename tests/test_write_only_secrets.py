"""Write-only secrets (issue 39, items 2 and 3): a FIRE_WEBHOOK's secret and header values,
a flow step's webhook header values and a webhook's custom header values are never read back
(reads show ``********`` in their place, an update sending that back keeps the stored
value) and are stored sealed, as are the URLs that may carry credentials; deliveries still
send them."""

from __future__ import annotations

import json
from base64 import b64encode
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.kit.config import Settings
from officehub.kit.db import create_engine
from officehub.kit.encryption import MASK, is_sealed, load_secrets_keys
from officehub.offices import service as offices
from officehub.webhooks import verify
from tests.accounts_helpers import signed_in
from tests.automation_helpers import automation_worker, create_rule
from tests.crm_world import World, make_world
from tests.helpers import OfficeFixture, error_of
from tests.receiver import running_receiver
from tests.test_scopes import _to, empty_database_url  # noqa: F401 - the fixture
from tests.webhook_helpers import Clock

pytestmark = pytest.mark.anyio
RULE_SECRET = "rule-secret-of-the-office-0123"
BEARER = "Bearer tok-of-the-receiver-4567"
FLOW_TOKEN = "flow-header-token-89ab"
HOOK_HEADER = "hook-header-value-cdef"
URL_TOKEN = "url-token-0f1e2d3c"
URL_PASSWORD = "url-password-9a8b7c"
CLEAR = (RULE_SECRET, BEARER, FLOW_TOKEN, HOOK_HEADER, URL_TOKEN)


async def _read_key(app: FastAPI, office: OfficeFixture) -> dict[str, str]:
    async with app.state.sessionmaker() as s:
        created = await offices.create_api_key(s, office.id, "reader", ["read"])
        await s.commit()
    return {"x-service-api-key": created.key}


def _fire(url: str, **params: Any) -> dict[str, Any]:
    return {"action": "FIRE_WEBHOOK", "actionParams": {"url": url, **params}}


async def _raw_rows(app: FastAPI, *only: str) -> str:
    """Every stored row that may hold one of the secrets, as the database has it."""
    queries = only or (
        "SELECT actions, else_actions FROM automation_rules",
        "SELECT content FROM flows",
        "SELECT url, headers, secret, payload, attempts, error_message FROM action_deliveries",
        "SELECT url, headers, secret FROM webhooks",
        "SELECT data FROM outbox_events",
        "SELECT payload FROM webhook_deliveries",
        "SELECT * FROM audit_entries",
        "SELECT outcomes FROM automation_runs",
    )
    found: list[Any] = []
    async with app.state.sessionmaker() as s:
        for query in queries:
            found += [tuple(row) for row in await s.execute(text(query))]
    return json.dumps(found, default=str)


async def _world(session: AsyncSession, office: OfficeFixture) -> World:
    world = await make_world(session, office.id)
    await session.commit()
    return world


async def test_a_fire_webhooks_secret_and_header_values_are_not_read_back_by_any_key(
    app: FastAPI, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    reader = await _read_key(app, office_a)
    action = _fire(
        "https://hooks.example.com/x",
        secret=RULE_SECRET,
        headers={"Authorization": BEARER},
    )
    created = await create_rule(client, office_a, actions=[action])
    listed = await client.get("/automation-rules", headers=reader)
    one = await client.get(f"/automation-rules/{created['id']}", headers=reader)
    admin = await client.get(f"/automation-rules/{created['id']}", headers=office_a.headers)
    for answer in (listed, one, admin):
        assert answer.status_code == 200, answer.text
    for shown in (created, listed.json(), one.json(), admin.json()):
        assert RULE_SECRET not in json.dumps(shown) and BEARER not in json.dumps(shown)
    params = one.json()["actions"][0]["actionParams"]
    assert params == {
        "url": "https://hooks.example.com/x",
        "secret": MASK,
        "headers": {"Authorization": MASK},
    }


async def test_a_rule_updated_with_the_values_read_keeps_its_secrets_and_still_signs(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    world = await _world(session, office_a)
    async with running_receiver() as receiver:
        url = f"{receiver.url}?token={URL_TOKEN}"
        action = _fire(url, secret=RULE_SECRET, headers={"Authorization": BEARER, "X-A": "1"})
        rule = await create_rule(client, office_a, actions=[action])
        read = (
            await client.get(f"/automation-rules/{rule['id']}", headers=office_a.headers)
        ).json()
        read["actions"][0]["actionParams"]["headers"]["X-A"] = "2"
        r = await client.patch(
            f"/automation-rules/{rule['id']}",
            json={"actions": read["actions"], "name": "Outra"},
            headers=office_a.headers,
        )
        assert r.status_code == 200, r.text
        r = await client.post(
            f"/conversation/{world.conversation.id}/messages/inbound",
            json={"text": "Oi"},
            headers=office_a.headers,
        )
        assert r.status_code == 201, r.text
        await automation_worker(app, settings, Clock()).run_until_idle()
        stored = await _raw_rows(app)
    [got] = receiver.received
    assert got.headers["authorization"] == BEARER and got.headers["x-a"] == "2"
    reader = await _read_key(app, office_a)
    log = await client.get(f"/automation-rules/{rule['id']}/deliveries", headers=reader)
    assert log.status_code == 200, log.text
    assert log.json()["data"][0]["url"] == receiver.url + "?[withheld]"
    assert not any(s in log.text for s in (RULE_SECRET, BEARER, URL_TOKEN))
    assert verify(RULE_SECRET, got.headers, got.body)["rule"]["id"] == rule["id"]
    for secret in (RULE_SECRET, BEARER, URL_TOKEN):
        assert secret not in stored
    assert MASK not in stored


async def test_a_masked_value_with_no_stored_secret_behind_it_is_refused(
    app: FastAPI, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    body = {
        "name": "Regra",
        "triggerEvent": "chat.message.received",
        "actions": [_fire("https://hooks.example.com/x", secret=MASK)],
    }
    r = await client.post("/automation-rules", json=body, headers=office_a.headers)
    assert r.status_code == 400
    assert "actions.0.actionParams.secret" in error_of(r)["details"]
    rule = await create_rule(client, office_a, actions=[_fire("https://hooks.example.com/x")])
    sent = [_fire("https://hooks.example.com/x", headers={"Authorization": MASK})]
    r = await client.patch(
        f"/automation-rules/{rule['id']}", json={"actions": sent}, headers=office_a.headers
    )
    assert r.status_code == 400
    assert "actionParams.headers.Authorization" in error_of(r)["details"]
    unchanged = await client.get(f"/automation-rules/{rule['id']}", headers=office_a.headers)
    assert unchanged.json()["actions"][0]["actionParams"] == {"url": "https://hooks.example.com/x"}


def _flow_body(world: World, headers: list[dict[str, str]]) -> dict[str, Any]:
    step = {
        "id": "s1",
        "type": "system",
        "content": "Avisar o sistema",
        "systemAction": "FIRE_WEBHOOK",
        "nextStepId": None,
        "metadata": {
            "webhookUrl": f"https://hooks.example.com/flow?token={URL_TOKEN}",
            "webhookHeaders": headers,
        },
    }
    return {
        "name": "Atendimento",
        "inboxId": world.inbox.id,
        "isSocialFlow": False,
        "content": {"steps": [step], "initialStepId": "s1"},
    }


async def test_a_flows_webhook_header_values_are_not_read_back_by_a_read_key_nor_a_supervisor(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    world = await _world(session, office_a)
    reader = await _read_key(app, office_a)
    headers = [{"key": "Authorization", "value": FLOW_TOKEN}, {"key": "X-B", "value": "b"}]
    r = await client.post("/flow", json=_flow_body(world, headers), headers=office_a.headers)
    assert r.status_code == 201, r.text
    flow_id = r.json()["id"]
    answers = [
        r,
        await client.get(f"/flow/{flow_id}", headers=reader),
        await client.get("/flow", headers=reader),
    ]
    async with signed_in(app, office_a, "SUPERVISOR", inbox_ids=[world.inbox.id]) as user:
        answers.append(await user.request("GET", f"/flow/{flow_id}"))
    for answer in answers:
        assert answer.status_code in (200, 201), answer.text
        assert FLOW_TOKEN not in answer.text
    step = answers[1].json()["content"]["steps"][0]
    assert step["metadata"]["webhookHeaders"] == [
        {"key": "Authorization", "value": MASK},
        {"key": "X-B", "value": MASK},
    ]
    # Sent back as read, with one header changed: the other keeps its stored value.
    content = answers[1].json()["content"]
    content["steps"][0]["metadata"]["webhookHeaders"][1]["value"] = "c"
    r = await client.patch(f"/flow/{flow_id}", json={"content": content}, headers=office_a.headers)
    assert r.status_code == 200, r.text
    async with app.state.sessionmaker() as s:
        from officehub.flows.models import Flow

        flow = await s.get(Flow, flow_id)
        assert flow is not None
        kept = flow.content["steps"][0]["metadata"]["webhookHeaders"]
    assert kept == [{"key": "Authorization", "value": FLOW_TOKEN}, {"key": "X-B", "value": "c"}]
    stored = await _raw_rows(app)
    assert FLOW_TOKEN not in stored and MASK not in stored
    assert URL_TOKEN not in await _raw_rows(app, "SELECT content FROM flows")


async def test_a_webhooks_custom_header_values_and_url_credentials_are_sealed_and_still_sent(
    app: FastAPI, settings: Settings, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    async with running_receiver() as receiver:
        r = await client.post(
            "/webhooks",
            json={
                "name": "CRM",
                "url": receiver.url.replace("://", f"://crm:{URL_PASSWORD}@")
                + f"?token={URL_TOKEN}",
                "events": ["contact.created"],
                "secret": "whsec_" + "a" * 32,
                "headers": {"X-Office-Token": HOOK_HEADER},
            },
            headers=office_a.headers,
        )
        assert r.status_code == 201, r.text
        person = await client.post(
            "/people", json={"name": "Ana", "phone": "5511988887777"}, headers=office_a.headers
        )
        assert person.status_code == 201, person.text
        await automation_worker(app, settings, Clock()).run_until_idle()
        stored = await _raw_rows(app)
    [got] = receiver.received
    assert got.headers["x-office-token"] == HOOK_HEADER
    assert (
        got.headers["authorization"]
        == "Basic " + b64encode(f"crm:{URL_PASSWORD}".encode()).decode()
    )
    for secret in (HOOK_HEADER, URL_PASSWORD, URL_TOKEN):
        assert secret not in stored


async def test_the_migration_seals_the_secrets_of_rows_stored_before(
    empty_database_url: str,  # noqa: F811
    tmp_path: Any,
) -> None:
    settings = Settings(database_url=empty_database_url, data_dir=tmp_path, signing_key="k")
    load_secrets_keys(settings)
    actions = [_fire(f"https://h.example.com/?token={URL_TOKEN}", secret=RULE_SECRET)]
    actions[0]["actionParams"]["headers"] = {"Authorization": BEARER}
    content = {
        "steps": [
            {"id": "s1", "metadata": {"webhookHeaders": [{"key": "A", "value": FLOW_TOKEN}]}}
        ],
        "initialStepId": "s1",
    }
    engine = create_engine(empty_database_url)
    try:
        async with engine.begin() as conn:
            await conn.run_sync(_to("0025_reports"))
            await conn.execute(
                text(
                    "INSERT INTO offices (id, name, created_at, updated_at)"
                    " VALUES ('o', 'O', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"
                )
            )
            await conn.execute(
                text(
                    "INSERT INTO inboxes (id, office_id, name, created_at, updated_at)"
                    " VALUES ('i', 'o', 'i', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"
                )
            )
            await conn.execute(
                text(
                    "INSERT INTO automation_rules (id, office_id, name, enabled, trigger_event,"
                    " conditions, actions, priority, created_at, updated_at) VALUES ('r', 'o',"
                    " 'n', true, 'tag.created', '{}', :a, 0, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"
                ),
                {"a": json.dumps(actions)},
            )
            await conn.execute(
                text(
                    "INSERT INTO flows (id, office_id, inbox_id, name, description,"
                    " is_social_flow, content, created_at, updated_at) VALUES ('f', 'o', 'i',"
                    " 'n', '', false, :c, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"
                ),
                {"c": json.dumps(content)},
            )
            await conn.execute(
                text(
                    "INSERT INTO webhooks (id, office_id, name, url, secret, events, is_active,"
                    " headers, created_at, updated_at) VALUES ('w', 'o', 'n', :u, 's',"
                    " '[]', true, :h, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)"
                ),
                {"h": json.dumps({"X-Token": HOOK_HEADER}), "u": f"http://u:{URL_PASSWORD}@x/"},
            )
            await conn.run_sync(_to("0027_sealed_secrets"))
            rows = [
                tuple(r)
                for q in (
                    "SELECT actions FROM automation_rules",
                    "SELECT content FROM flows",
                    "SELECT url, headers FROM webhooks",
                )
                for r in await conn.execute(text(q))
            ]
            stored = json.dumps(rows, default=str)
            await conn.run_sync(_to("0025_reports", down=True))
            opened = json.dumps(
                [
                    tuple(r)
                    for r in await conn.execute(text("SELECT actions FROM automation_rules"))
                ],
                default=str,
            )
    finally:
        await engine.dispose()
    for secret in (RULE_SECRET, BEARER, URL_TOKEN, FLOW_TOKEN, HOOK_HEADER, URL_PASSWORD):
        assert secret not in stored
    assert stored.count("enc:v1:") == 6
    assert RULE_SECRET in opened and BEARER in opened and not is_sealed(opened)
