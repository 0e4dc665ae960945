"""What a person cannot read they cannot name in a body either, and every list is scoped as
its records are (issue 39, item 6). The world is test_contact_scoping's: a family inbox
with its client, a labour inbox with its own, a contact with no conversation yet."""

from __future__ import annotations

import httpx
from fastapi import FastAPI
from sqlalchemy.ext.asyncio import AsyncSession

from tests.accounts_helpers import signed_in
from tests.helpers import OfficeFixture, error_of
from tests.test_contact_scoping import _someone, _world


async def _integration_of(client: httpx.AsyncClient, office: OfficeFixture, inbox: str) -> str:
    r = await client.get("/integration", params={"inboxId": inbox}, headers=office.headers)
    assert r.status_code == 200, r.text
    found: str = r.json()["data"][0]["id"]
    return found


async def _conversations_of(client: httpx.AsyncClient, office: OfficeFixture, person: str) -> int:
    r = await client.get("/conversation", params={"personId": person}, headers=office.headers)
    assert r.status_code == 200, r.text
    total: int = r.json()["totalResults"]
    return total


async def test_an_agent_cannot_open_a_conversation_with_a_contact_they_cannot_read(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    w = await _world(session, office_a, await _someone(app, office_a))
    channel = await _integration_of(client, office_a, w.family_inbox)
    async with signed_in(app, office_a, "AGENT", inbox_ids=[w.family_inbox]) as agent:
        assert (await agent.request("GET", f"/people/{w.labour_client}")).status_code == 404
        body = {"personId": w.labour_client, "inboxId": w.family_inbox, "integrationId": channel}
        r = await agent.request("POST", "/conversation", json=body)
        assert r.status_code == 404, r.text
        assert error_of(r)["code"] == "NOT_FOUND" and w.labour_client in error_of(r)["details"]
        # Nothing opened, and the contact stays unreadable.
        assert await _conversations_of(client, office_a, w.labour_client) == 1
        assert (await agent.request("GET", f"/people/{w.labour_client}")).status_code == 404
        # A contact nobody serves yet is still found and served.
        body["personId"] = w.new_contact
        r = await agent.request("POST", "/conversation", json=body)
        assert r.status_code == 201, r.text
        assert (await agent.request("GET", f"/people/{w.new_contact}")).status_code == 200


async def test_a_key_and_an_admin_open_conversations_with_any_contact(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    w = await _world(session, office_a, await _someone(app, office_a))
    channel = await _integration_of(client, office_a, w.family_inbox)
    body = {"personId": w.labour_client, "inboxId": w.family_inbox, "integrationId": channel}
    async with signed_in(app, office_a, "ADMIN") as admin:
        r = await admin.request("POST", "/conversation", json=body)
        assert r.status_code == 201, r.text
    assert await _conversations_of(client, office_a, w.labour_client) == 2


async def _movement(client: httpx.AsyncClient, office: OfficeFixture, person: str) -> str:
    body = {
        "personId": person,
        "caseNumber": "0001234-56.2024.8.26.0100",
        "description": "Juntada de petição",
        "occurredAt": "2026-01-05T12:00:00Z",
    }
    r = await client.post("/case-movements", json=body, headers=office.headers)
    assert r.status_code == 201, r.text
    made: str = r.json()["id"]
    return made


async def test_a_supervisor_lists_only_the_case_movements_of_contacts_they_may_see(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    w = await _world(session, office_a, await _someone(app, office_a))
    family = await _movement(client, office_a, w.family_client)
    await _movement(client, office_a, w.labour_client)
    fresh = await _movement(client, office_a, w.new_contact)
    async with signed_in(app, office_a, "SUPERVISOR", inbox_ids=[w.family_inbox]) as boss:
        r = await boss.request("GET", "/case-movements", params={"limit": 100})
        assert r.status_code == 200, r.text
        assert {m["id"] for m in r.json()["data"]} == {family, fresh}
        assert r.json()["totalResults"] == 2
        r = await boss.request("GET", "/case-movements", params={"personId": w.labour_client})
        assert r.status_code == 404 and error_of(r)["code"] == "NOT_FOUND", r.text
        r = await boss.request("GET", "/case-movements", params={"personId": w.family_client})
        assert [m["id"] for m in r.json()["data"]] == [family]
    everything = (await client.get("/case-movements", headers=office_a.headers)).json()
    assert everything["totalResults"] == 3  # a key sees the office's every movement
