"""Inboxes and their channels (integrations)."""

from __future__ import annotations

import httpx
import pytest
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.inboxes.models import Inbox, Integration
from officehub.tags.models import Tag
from tests import factories as f
from tests.helpers import OfficeFixture, error_of

ROUTES = [
    ("POST", "/inbox"),
    ("GET", "/inbox"),
    ("GET", "/inbox/cxxxxxxxxxxxx"),
    ("PATCH", "/inbox/cxxxxxxxxxxxx"),
    ("DELETE", "/inbox/cxxxxxxxxxxxx"),
    ("POST", "/integration"),
    ("GET", "/integration"),
    ("GET", "/integration/cxxxxxxxxxxxx"),
    ("PATCH", "/integration/cxxxxxxxxxxxx"),
    ("DELETE", "/integration/cxxxxxxxxxxxx"),
]


@pytest.mark.parametrize(("method", "path"), ROUTES)
async def test_routes_need_a_key(client: httpx.AsyncClient, method: str, path: str) -> None:
    r = await client.request(method, path, json={})
    assert r.status_code == 401
    assert error_of(r)["code"] == "UNAUTHORIZED"


async def test_create_read_update_list_inbox(
    client: httpx.AsyncClient, office_a: OfficeFixture, office_b: OfficeFixture
) -> None:
    h = office_a.headers
    r = await client.post("/inbox", json={"name": "Atendimento"}, headers=h)
    assert r.status_code == 201
    inbox = r.json()
    assert inbox["name"] == "Atendimento" and inbox["officeId"] == office_a.id
    assert inbox["createdAt"].endswith("Z")
    r = await client.get(f"/inbox/{inbox['id']}", headers=h)
    assert r.status_code == 200 and r.json() == inbox
    r = await client.patch(f"/inbox/{inbox['id']}", json={"name": "Comercial"}, headers=h)
    assert r.status_code == 200 and r.json()["name"] == "Comercial"
    await client.post("/inbox", json={"name": "Jurídico"}, headers=h)
    await client.post("/inbox", json={"name": "Outro"}, headers=office_b.headers)
    r = await client.get("/inbox?limit=1&page=2", headers=h)
    assert r.status_code == 200
    body = r.json()
    assert body["totalResults"] == 2 and body["totalPages"] == 2
    assert [i["name"] for i in body["data"]] == ["Jurídico"]


@pytest.mark.parametrize(
    ("method", "path", "body", "field"),
    [
        ("POST", "/inbox", {"name": ""}, "body.name"),
        ("POST", "/inbox", {}, "body.name"),
        ("GET", "/inbox?limit=101", None, "query.limit"),
        ("GET", "/inbox/not-an-id", None, "path.id"),
        ("PATCH", "/inbox/not-an-id", {"name": "x"}, "path.id"),
        ("DELETE", "/inbox/not-an-id", None, "path.id"),
        (
            "POST",
            "/integration",
            {"inboxId": "bad", "type": "WHATSAPP", "name": "x"},
            "body.inboxId",
        ),
        ("GET", "/integration?inboxId=bad", None, "query.inboxId"),
        ("GET", "/integration?type=SMS", None, "query.type"),
        ("GET", "/integration/not-an-id", None, "path.id"),
        ("PATCH", "/integration/not-an-id", {"name": "x"}, "path.id"),
        ("DELETE", "/integration/not-an-id", None, "path.id"),
    ],
)
async def test_bad_input_names_the_field(
    client: httpx.AsyncClient,
    office_a: OfficeFixture,
    method: str,
    path: str,
    body: object,
    field: str,
) -> None:
    r = await client.request(method, path, json=body, headers=office_a.headers)
    assert r.status_code == 400
    assert field in error_of(r)["details"]


async def test_bad_patch_changes_nothing(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    inbox = await f.make_inbox(session, office_a.id, "Atendimento")
    integration = await f.make_integration(
        session, office_a.id, inbox.id, "WHATSAPP_OFFICIAL", "d1"
    )
    await session.commit()
    r = await client.patch(f"/inbox/{inbox.id}", json={"name": ""}, headers=office_a.headers)
    assert r.status_code == 400 and "body.name" in error_of(r)["details"]
    r = await client.patch(
        f"/integration/{integration.id}", json={"deviceId": None}, headers=office_a.headers
    )
    assert r.status_code == 400 and "body.deviceId" in error_of(r)["details"]
    r = await client.get(f"/integration/{integration.id}", headers=office_a.headers)
    assert r.json()["deviceId"] == "d1"
    assert (await client.get(f"/inbox/{inbox.id}", headers=office_a.headers)).json()["name"] == (
        "Atendimento"
    )


async def test_another_offices_records_are_not_found(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    inbox = await f.make_inbox(session, office_b.id)
    integration = await f.make_integration(session, office_b.id, inbox.id)
    await session.commit()
    h = office_a.headers
    calls = [
        ("GET", f"/inbox/{inbox.id}", None),
        ("PATCH", f"/inbox/{inbox.id}", {"name": "mine"}),
        ("DELETE", f"/inbox/{inbox.id}", None),
        ("POST", "/integration", {"inboxId": inbox.id, "type": "WHATSAPP", "name": "x"}),
        ("GET", f"/integration/{integration.id}", None),
        ("PATCH", f"/integration/{integration.id}", {"name": "mine"}),
        ("DELETE", f"/integration/{integration.id}", None),
    ]
    for method, path, body in calls:
        r = await client.request(method, path, json=body, headers=h)
        assert r.status_code == 404, (method, path)
        assert error_of(r)["code"] == "NOT_FOUND"
    assert (await client.get("/integration", headers=h)).json()["data"] == []
    assert (await client.get("/inbox", headers=h)).json()["totalResults"] == 0
    stored = await session.get(Inbox, inbox.id)
    assert stored is not None and stored.name == "Atendimento"


async def test_create_read_update_list_integration(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    inbox = await f.make_inbox(session, office_a.id)
    other = await f.make_inbox(session, office_a.id, "Outra")
    await session.commit()
    h = office_a.headers
    r = await client.post(
        "/integration",
        json={
            "inboxId": inbox.id,
            "type": "WHATSAPP_OFFICIAL",
            "name": "Oficial",
            "deviceId": "55119",
        },
        headers=h,
    )
    assert r.status_code == 201
    official = r.json()
    assert official["type"] == "WHATSAPP_OFFICIAL" and official["deviceId"] == "55119"
    r = await client.post(
        "/integration", json={"inboxId": other.id, "type": "INSTAGRAM", "name": "IG"}, headers=h
    )
    assert r.status_code == 201 and r.json()["deviceId"] is None
    assert (await client.get(f"/integration/{official['id']}", headers=h)).json() == official
    r = await client.patch(
        f"/integration/{official['id']}", json={"name": "Oficial 2", "deviceId": "55118"}, headers=h
    )
    assert r.status_code == 200 and r.json()["deviceId"] == "55118"
    listed = (await client.get(f"/integration?inboxId={inbox.id}", headers=h)).json()
    assert [i["id"] for i in listed["data"]] == [official["id"]]
    listed = (await client.get("/integration?type=INSTAGRAM", headers=h)).json()
    assert [i["name"] for i in listed["data"]] == ["IG"]
    assert (await client.get("/integration", headers=h)).json()["totalResults"] == 2


async def test_an_official_integration_requires_a_device_id(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    inbox = await f.make_inbox(session, office_a.id)
    await session.commit()
    r = await client.post(
        "/integration",
        json={"inboxId": inbox.id, "type": "WHATSAPP_OFFICIAL", "name": "Oficial"},
        headers=office_a.headers,
    )
    assert r.status_code == 400
    assert "body.deviceId" in error_of(r)["details"]
    assert (await session.scalars(select(Integration))).all() == []


async def test_a_device_id_is_unique_per_office(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    inbox_a = await f.make_inbox(session, office_a.id)
    inbox_b = await f.make_inbox(session, office_b.id)
    await f.make_integration(session, office_a.id, inbox_a.id, "WHATSAPP_OFFICIAL", "dev-1")
    await session.commit()
    body = {"type": "WHATSAPP_OFFICIAL", "name": "Oficial", "deviceId": "dev-1"}
    r = await client.post(
        "/integration", json={**body, "inboxId": inbox_a.id}, headers=office_a.headers
    )
    assert r.status_code == 409
    assert error_of(r)["code"] == "DEVICE_ID_TAKEN"
    r = await client.post(
        "/integration", json={**body, "inboxId": inbox_b.id}, headers=office_b.headers
    )
    assert r.status_code == 201


async def test_deleting_an_inbox_with_conversations_is_refused(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    inbox = await f.make_inbox(session, office_a.id)
    integration = await f.make_integration(session, office_a.id, inbox.id)
    contact = await f.make_contact(session, office_a.id)
    await f.make_conversation(session, office_a.id, contact.id, integration)
    await session.commit()
    h = office_a.headers
    r = await client.delete(f"/inbox/{inbox.id}", headers=h)
    assert r.status_code == 409 and error_of(r)["code"] == "INBOX_IN_USE"
    r = await client.delete(f"/integration/{integration.id}", headers=h)
    assert r.status_code == 409 and error_of(r)["code"] == "INTEGRATION_IN_USE"
    assert (await client.get(f"/inbox/{inbox.id}", headers=h)).status_code == 200
    assert (await client.get(f"/integration/{integration.id}", headers=h)).status_code == 200


async def test_deleting_an_inbox_whose_funnel_holds_cards_is_refused(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    inbox = await f.make_inbox(session, office_a.id)
    funnel, columns = await f.make_funnel(session, office_a.id, inbox.id, columns=1)
    contact = await f.make_contact(session, office_a.id)
    card = await f.make_card(session, columns[0], contact.id)
    await session.commit()
    h = office_a.headers
    r = await client.delete(f"/inbox/{inbox.id}", headers=h)
    assert r.status_code == 409 and error_of(r)["code"] == "INBOX_IN_USE"
    assert (await client.get(f"/funnel/{funnel.id}", headers=h)).status_code == 200
    assert (await client.get(f"/funnel-column-card/{card.id}", headers=h)).status_code == 200
    deleted = await client.request(
        "DELETE", "/funnel-column-card", json={"ids": [card.id]}, headers=h
    )
    assert deleted.status_code == 200
    assert (await client.delete(f"/inbox/{inbox.id}", headers=h)).status_code == 200
    assert (await client.get(f"/funnel/{funnel.id}", headers=h)).status_code == 404


async def test_deleting_an_unused_inbox_removes_its_channels_and_tags(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    inbox = await f.make_inbox(session, office_a.id)
    integration = await f.make_integration(session, office_a.id, inbox.id)
    tag = await f.make_tag(session, office_a.id, inbox.id)
    await session.commit()
    h = office_a.headers
    r = await client.delete(f"/inbox/{inbox.id}", headers=h)
    assert r.status_code == 200 and r.json()["id"] == inbox.id
    assert (await client.get(f"/inbox/{inbox.id}", headers=h)).status_code == 404
    assert (await client.get(f"/integration/{integration.id}", headers=h)).status_code == 404
    session.expunge_all()
    assert await session.get(Tag, tag.id) is None


async def test_deleting_an_unused_integration(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    inbox = await f.make_inbox(session, office_a.id)
    integration = await f.make_integration(session, office_a.id, inbox.id)
    await session.commit()
    r = await client.delete(f"/integration/{integration.id}", headers=office_a.headers)
    assert r.status_code == 200 and r.json()["id"] == integration.id
    r = await client.get(f"/integration/{integration.id}", headers=office_a.headers)
    assert r.status_code == 404
