"""GET /homepage-v2/get-clients-map: counts by state of the contact's DDD, the DDD table,
the DDD kept with the phone, the five-minute cache."""

from __future__ import annotations

from datetime import timedelta

import httpx
from fastapi import FastAPI
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.contacts.models import Contact
from officehub.dashboard.service import states
from officehub.kit.timeutil import utcnow
from tests import factories as f
from tests.helpers import OfficeFixture, error_of


async def _arrange(session: AsyncSession, office_id: str, phones: list[str | None]) -> None:
    """One conversation per entry; the same phone twice is one contact with two (the
    earlier one closed: a contact has one open conversation per channel)."""
    inbox = await f.make_inbox(session, office_id)
    integration = await f.make_integration(session, office_id, inbox.id)
    contacts: dict[str | None, Contact] = {}
    for n, phone in enumerate(phones):
        contact = contacts.get(phone) if phone is not None else None
        status = "CLOSED"
        if contact is None:
            contact = await f.make_contact(session, office_id, name=f"Pessoa {n}", phone=phone)
            contacts[phone] = contact
            status = "OPEN"
        await f.make_conversation(session, office_id, contact.id, integration, status=status)
    await session.commit()


def test_the_ddd_table_has_67_area_codes_in_27_states() -> None:
    table = states()
    assert len(table) == 27
    ddds = [d for s in table for d in s.ddds]
    assert len(ddds) == 67 and len(set(ddds)) == 67
    by_uf = {s.uf: s for s in table}
    assert by_uf["SP"].name == "São Paulo" and by_uf["SP"].ddds[0] == "11"
    assert by_uf["DF"].ddds == ("61",) and by_uf["RS"].ddds == ("51", "53", "54", "55")


async def test_clients_map_counts_conversations_by_state_against_hand_computed_counts(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    await _arrange(
        session,
        office_a.id,
        [
            "+5511987654321",
            "+5511987654321",  # the same contact, a second conversation
            "+5511912345678",
            "+5519998887777",
            "+552133334444",  # a landline: 10 digits after +55
            "+5571988776655",
            "+5571977665544",
            None,  # no phone: left out
            "+12025550123",  # not Brazilian: left out
            "+5520999998888",  # 20 is no DDD: left out
        ],
    )
    await _arrange(session, office_b.id, ["+5511900001111", "+5561900001111"])
    r = await client.get("/homepage-v2/get-clients-map", headers=office_a.headers)
    assert r.status_code == 200
    data = r.json()["data"]
    assert data["cacheAt"].endswith("Z")
    assert data["total"] == 7
    assert data["states"] == [
        {
            "uf": "SP",
            "name": "São Paulo",
            "total": 4,
            "ddds": [{"ddd": "11", "total": 3}, {"ddd": "19", "total": 1}],
        },
        {"uf": "BA", "name": "Bahia", "total": 2, "ddds": [{"ddd": "71", "total": 2}]},
        {"uf": "RJ", "name": "Rio de Janeiro", "total": 1, "ddds": [{"ddd": "21", "total": 1}]},
    ]


async def test_clients_map_of_an_office_without_conversations_is_empty(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    r = await client.get("/homepage-v2/get-clients-map", headers=office_a.headers)
    assert r.status_code == 200
    assert r.json()["data"]["total"] == 0 and r.json()["data"]["states"] == []


async def test_clients_map_is_cached_per_office_for_five_minutes(
    app: FastAPI,
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    now = utcnow()
    first = await client.get("/homepage-v2/get-clients-map", headers=office_a.headers)
    app.state.clients_map_cache.clock = lambda: now
    await _arrange(session, office_a.id, ["+5511987654321"])
    app.state.clients_map_cache.entries.clear()
    first = await client.get("/homepage-v2/get-clients-map", headers=office_a.headers)
    await _arrange(session, office_a.id, ["+5521987654321"])
    app.state.clients_map_cache.clock = lambda: now + timedelta(minutes=4, seconds=59)
    cached = await client.get("/homepage-v2/get-clients-map", headers=office_a.headers)
    assert cached.json() == first.json()
    other = await client.get("/homepage-v2/get-clients-map", headers=office_b.headers)
    assert other.json()["data"]["total"] == 0
    app.state.clients_map_cache.clock = lambda: now + timedelta(minutes=5)
    fresh = await client.get("/homepage-v2/get-clients-map", headers=office_a.headers)
    assert fresh.json()["data"]["total"] == 2
    assert fresh.json()["data"]["cacheAt"] > first.json()["data"]["cacheAt"]


async def test_clients_map_without_a_key_is_401(client: httpx.AsyncClient) -> None:
    for headers in ({}, {"x-service-api-key": "ohk_wrong"}):
        r = await client.get("/homepage-v2/get-clients-map", headers=headers)
        assert r.status_code == 401
        assert error_of(r)["code"] == "UNAUTHORIZED"


async def test_the_ddd_is_kept_with_the_phone(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    r = await client.post(
        "/people", json={"name": "Ana", "phone": "(31) 98765-4321"}, headers=office_a.headers
    )
    person = r.json()
    contact = await session.get(Contact, person["id"])
    assert contact is not None and contact.ddd == "31"
    await client.patch(
        f"/people/{person['id']}", json={"phone": "+14155550123"}, headers=office_a.headers
    )
    session.expire_all()
    contact = await session.get(Contact, person["id"])
    assert contact is not None and contact.ddd is None
