"""A delivery log tells nobody which internal names resolve to private addresses (issue 39,
item 7): a FIRE_WEBHOOK to a name the SSRF guard refuses reads exactly as one to a name
that does not resolve at all ("could not connect …, or its address is not allowed")."""

from __future__ import annotations

from typing import Any

import httpx
from fastapi import FastAPI
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.kit.config import Settings
from officehub.webhooks.delivery import NOT_CONNECTED
from tests.automation_helpers import automation_worker, create_rule
from tests.crm_world import make_world
from tests.helpers import OfficeFixture
from tests.receiver import running_receiver


async def _log(client: httpx.AsyncClient, office: OfficeFixture, rule_id: str) -> dict[str, Any]:
    r = await client.get(f"/automation-rules/{rule_id}/deliveries", headers=office.headers)
    assert r.status_code == 200, r.text
    [delivery] = r.json()["data"]
    found: dict[str, Any] = delivery
    return found


async def test_a_refused_internal_name_and_an_unknown_name_read_alike_in_the_action_log(
    app: FastAPI,
    settings: Settings,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
) -> None:
    world = await make_world(session, office_a.id)
    await session.commit()
    guarded = settings.model_copy(update={"webhook_allow_private": False})
    async with running_receiver() as receiver:
        rules = {}
        for name, url in (
            ("internal", receiver.url_at("localhost")),
            ("unknown", "http://nao-existe.invalid/hook"),
        ):
            action = {"action": "FIRE_WEBHOOK", "actionParams": {"url": url}}
            rules[name] = (await create_rule(client, office_a, actions=[action]))["id"]
        r = await client.post(
            f"/conversation/{world.conversation.id}/messages/inbound",
            json={"text": "Oi"},
            headers=office_a.headers,
        )
        assert r.status_code == 201, r.text
        await automation_worker(app, guarded).run_until_idle()
        assert receiver.received == []
    internal = await _log(client, office_a, rules["internal"])
    unknown = await _log(client, office_a, rules["unknown"])
    assert internal["status"] == unknown["status"] == "RETRYING"
    assert internal["errorMessage"] == unknown["errorMessage"] == NOT_CONNECTED
    for attempt in internal["attempts"]:
        assert attempt["errorMessage"] == NOT_CONNECTED
    assert "resolves" not in str(internal) and "127.0.0.1" not in str(internal)
