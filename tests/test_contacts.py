"""Contacts (``/people``): phones in E.164, accent-free name search, tags, events."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy.ext.asyncio import AsyncSession

from officehub.contacts.models import ContactTag
from officehub.contacts.schemas import ContactOut
from officehub.conversations import repository as conversations
from officehub.kit.pagination import Page
from officehub.kit.timeutil import isoformat
from tests import factories as f
from tests.helpers import OfficeFixture, error_of, outbox

MISSING = "c" + "0" * 24


async def _create(client: httpx.AsyncClient, office: OfficeFixture, **body: Any) -> dict[str, Any]:
    r = await client.post("/people", json={"name": "Maria Souza", **body}, headers=office.headers)
    assert r.status_code == 201, r.text
    created: dict[str, Any] = r.json()
    return created


async def _count(client: httpx.AsyncClient, office: OfficeFixture) -> int:
    r = await client.get("/people", headers=office.headers)
    assert r.status_code == 200
    total: int = r.json()["totalResults"]
    return total


# POST /people


async def test_create_contact(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    inbox = await f.make_inbox(session, office_a.id)
    tag = await f.make_tag(session, office_a.id, inbox.id, name="cliente")
    await session.commit()
    body = await _create(
        client,
        office_a,
        name="José Ávila",
        phone="(11) 98765-4321",
        email="jose@example.com",
        document="123.456.789-00",
        description="Indicado pelo Dr. Lima",
        inboxId=inbox.id,
        tags=[tag.id],
    )
    assert body["phone"] == "+5511987654321"
    assert body["name"] == "José Ávila"
    assert body["inboxId"] == inbox.id
    assert body["isBlocked"] is False
    assert body["imageUrl"] is None
    assert body["tags"] == [{"id": tag.id, "name": "cliente", "color": "#FF0000"}]
    assert body["createdAt"].endswith("Z")
    read = await client.get(f"/people/{body['id']}", headers=office_a.headers)
    assert read.json() == body


async def test_create_contact_emits_contact_created(
    app: FastAPI, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    body = await _create(client, office_a)
    events = await outbox(app, office_a.id, "contact.created")
    assert [e.data for e in events] == [body]


@pytest.mark.parametrize("phone", ["12345", "not a phone", "+55 11 1234", ""])
async def test_invalid_phone_is_400_naming_body_phone(
    client: httpx.AsyncClient, office_a: OfficeFixture, phone: str
) -> None:
    r = await client.post(
        "/people", json={"name": "Maria", "phone": phone}, headers=office_a.headers
    )
    assert r.status_code == 400
    assert "body.phone" in error_of(r)["details"]
    assert await _count(client, office_a) == 0


async def test_create_contact_without_name_is_400(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    r = await client.post("/people", json={"phone": "11987654321"}, headers=office_a.headers)
    assert r.status_code == 400
    assert "body.name" in error_of(r)["details"]
    r = await client.post(
        "/people", json={"name": "Ana", "email": "not-an-email"}, headers=office_a.headers
    )
    assert r.status_code == 400
    assert "body.email" in error_of(r)["details"]
    assert await _count(client, office_a) == 0


async def test_create_contact_with_another_offices_inbox_or_tag_is_404(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    inbox_b = await f.make_inbox(session, office_b.id)
    tag_b = await f.make_tag(session, office_b.id, inbox_b.id)
    await session.commit()
    for extra in ({"inboxId": inbox_b.id}, {"tags": [tag_b.id]}):
        r = await client.post("/people", json={"name": "Ana", **extra}, headers=office_a.headers)
        assert r.status_code == 404
        assert error_of(r)["message"].endswith("not found")
    assert await _count(client, office_a) == 0


async def test_same_contact_phone_in_any_brazilian_format(
    client: httpx.AsyncClient, office_a: OfficeFixture, office_b: OfficeFixture
) -> None:
    """`(11) 98765-4321`, `11987654321` and `+55 11 98765-4321` are one phone."""
    first = await _create(client, office_a, phone="(11) 98765-4321")
    for same in ("11987654321", "+55 11 98765-4321"):
        r = await client.post(
            "/people", json={"name": "Outra", "phone": same}, headers=office_a.headers
        )
        assert r.status_code == 409
        assert first["id"] in error_of(r)["details"]
        found = await client.get("/people", params={"search": same}, headers=office_a.headers)
        assert [c["id"] for c in found.json()["data"]] == [first["id"]]
    other_office = await _create(client, office_b, phone="+55 11 98765-4321")
    assert other_office["phone"] == first["phone"] == "+5511987654321"


# GET /people


async def test_the_search_writes_its_answer_as_the_page_model_does(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    """The search page's timestamps come written by PostgreSQL (``kit.db.api_timestamp``;
    on SQLite the records' are written by ``isoformat``) and the page is written through
    ``ContactPageWritten``: the bytes ``Page[ContactOut]`` writes, milliseconds truncated."""
    inbox = await f.make_inbox(session, office_a.id)
    vip = await f.make_tag(session, office_a.id, inbox.id, name="vip")
    moments = [
        datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
        datetime(2026, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
        datetime(2026, 6, 1, 9, 0, 0, 500, tzinfo=timezone(timedelta(hours=-3))),
    ]
    for n, moment in enumerate(moments):
        contact = await f.make_contact(session, office_a.id, name=f"Zélia {n}", phone=None)
        contact.created_at, contact.updated_at = moment, moments[n - 1]
        if n:
            session.add(ContactTag(office_id=office_a.id, contact_id=contact.id, tag_id=vip.id))
    await session.commit()
    r = await client.get("/people", params={"search": "zelia"}, headers=office_a.headers)
    assert r.status_code == 200, r.text
    assert r.headers["content-type"] == "application/json"
    assert (
        Page[ContactOut].model_validate_json(r.content).model_dump_json(by_alias=True).encode()
        == r.content
    )
    found = r.json()
    assert [(c["createdAt"], c["updatedAt"]) for c in found["data"]] == [
        (isoformat(m), isoformat(moments[n - 1])) for n, m in enumerate(moments)
    ]
    assert [[t["name"] for t in c["tags"]] for c in found["data"]] == [[], ["vip"], ["vip"]]
    assert (found["totalResults"], found["totalPages"]) == (3, 1)


async def test_list_contacts_filters(
    client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    inbox = await f.make_inbox(session, office_a.id)
    vip = await f.make_tag(session, office_a.id, inbox.id, name="vip")
    await session.commit()
    jose = await _create(
        client, office_a, name="José Ávila", phone="11987654321", inboxId=inbox.id, tags=[vip.id]
    )
    ana = await _create(client, office_a, name="Ana Lima", phone="21 99876-5432")
    await _create(client, office_a, name="Carla 100%", phone=None)

    async def ids(**params: Any) -> list[str]:
        r = await client.get("/people", params=params, headers=office_a.headers)
        assert r.status_code == 200, r.text
        return [c["id"] for c in r.json()["data"]]

    assert len(await ids()) == 3
    assert await ids(search="jose avila") == [jose["id"]]
    assert await ids(search="ÁVILA") == [jose["id"]]
    assert await ids(search="87654321") == [jose["id"]]
    assert await ids(search="(21) 99876") == [ana["id"]]
    assert await ids(search="%") == [c for c in await ids() if c not in (jose["id"], ana["id"])]
    assert await ids(inboxId=inbox.id) == [jose["id"]]
    assert await ids(tagIds=vip.id) == [jose["id"]]
    assert await ids(tagIds=f"{vip.id},{vip.id}") == [jose["id"]]
    page = await client.get("/people", params={"limit": 2, "page": 2}, headers=office_a.headers)
    assert page.json()["totalResults"] == 3 and page.json()["totalPages"] == 2
    assert len(page.json()["data"]) == 1
    past = await client.get("/people", params={"limit": 2, "page": 3}, headers=office_a.headers)
    assert past.json() == {"data": [], "totalResults": 3, "totalPages": 2}  # still counted
    none = await client.get("/people", params={"search": "nobody"}, headers=office_a.headers)
    assert none.json() == {"data": [], "totalResults": 0, "totalPages": 0}
    # a search's pages: the total beside the page, and counted past the last page too
    a: dict[str, str | int] = {
        "search": "a",
        "limit": 2,
    }  # every name has an "a", in the order of the list
    page = await client.get("/people", params={**a, "page": 2}, headers=office_a.headers)
    assert page.json()["totalResults"] == 3 and page.json()["totalPages"] == 2
    assert [c["id"] for c in page.json()["data"]] == (await ids())[2:]
    past = await client.get("/people", params={**a, "page": 3}, headers=office_a.headers)
    assert past.json() == {"data": [], "totalResults": 3, "totalPages": 2}


async def test_list_contacts_bad_query_is_400(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    r = await client.get("/people", params={"limit": 0}, headers=office_a.headers)
    assert r.status_code == 400
    assert "query.limit" in error_of(r)["details"]
    r = await client.get("/people", params={"search": "x" * 201}, headers=office_a.headers)
    assert "query.search" in error_of(r)["details"]
    many = ",".join(f"c{i:09d}" for i in range(51))
    r = await client.get("/people", params={"tagIds": many}, headers=office_a.headers)
    assert r.status_code == 400
    assert "query.tagIds" in error_of(r)["details"]


async def test_list_contacts_of_another_offices_inbox_is_404(
    client: httpx.AsyncClient,
    session: AsyncSession,
    office_a: OfficeFixture,
    office_b: OfficeFixture,
) -> None:
    inbox_b = await f.make_inbox(session, office_b.id)
    tag_b = await f.make_tag(session, office_b.id, inbox_b.id)
    await session.commit()
    await _create(client, office_b, inboxId=inbox_b.id, tags=[tag_b.id])
    r = await client.get("/people", params={"inboxId": inbox_b.id}, headers=office_a.headers)
    assert r.status_code == 404
    r = await client.get("/people", params={"tagIds": tag_b.id}, headers=office_a.headers)
    assert r.status_code == 404
    assert await _count(client, office_a) == 0


# GET /people/{id}


async def test_read_contact_bad_id_is_400(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    r = await client.get("/people/not-an-id", headers=office_a.headers)
    assert r.status_code == 400
    assert "path.id" in error_of(r)["details"]


async def test_another_offices_contact_is_404(
    client: httpx.AsyncClient, office_a: OfficeFixture, office_b: OfficeFixture
) -> None:
    theirs = await _create(client, office_b)
    for method in ("GET", "PATCH", "DELETE"):
        kwargs: dict[str, Any] = {"json": {"name": "Mine"}} if method == "PATCH" else {}
        r = await client.request(
            method, f"/people/{theirs['id']}", headers=office_a.headers, **kwargs
        )
        assert r.status_code == 404, method
        assert error_of(r)["code"] == "NOT_FOUND"
    r = await client.get(f"/people/{theirs['id']}", headers=office_b.headers)
    assert r.json() == theirs
    assert (await client.get(f"/people/{MISSING}", headers=office_a.headers)).status_code == 404


# PATCH /people/{id}


async def test_update_contact(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    inbox = await f.make_inbox(session, office_a.id)
    old = await f.make_tag(session, office_a.id, inbox.id, name="antigo")
    new = await f.make_tag(session, office_a.id, inbox.id, name="novo")
    await session.commit()
    contact = await _create(client, office_a, phone="11987654321", tags=[old.id])
    r = await client.patch(
        f"/people/{contact['id']}",
        json={
            "name": "Maria S. Lima",
            "phone": "+55 21 99876-5432",
            "isBlocked": True,
            "tags": [new.id],
            "email": None,
        },
        headers=office_a.headers,
    )
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["name"] == "Maria S. Lima"
    assert body["phone"] == "+5521998765432"
    assert body["isBlocked"] is True
    assert [t["id"] for t in body["tags"]] == [new.id]
    assert body["updatedAt"] >= contact["updatedAt"]
    assert (await client.get(f"/people/{contact['id']}", headers=office_a.headers)).json() == body
    found = await client.get("/people", params={"search": "s. lima"}, headers=office_a.headers)
    assert [c["id"] for c in found.json()["data"]] == [contact["id"]]
    events = await outbox(app, office_a.id, "contact.updated")
    assert [e.data for e in events] == [body]


async def test_update_that_changes_nothing_emits_nothing(
    app: FastAPI, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    contact = await _create(client, office_a, phone="11987654321")
    r = await client.patch(
        f"/people/{contact['id']}",
        json={"name": "Maria Souza", "phone": "(11) 98765-4321", "tags": []},
        headers=office_a.headers,
    )
    assert r.status_code == 200
    assert r.json() == contact
    assert await outbox(app, office_a.id, "contact.updated") == []


async def test_update_contact_bad_input_is_400_and_changes_nothing(
    app: FastAPI, client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    contact = await _create(client, office_a, phone="11987654321")
    for body, field in (
        ({"name": "Ana", "phone": "999"}, "body.phone"),
        ({"name": None}, "body.name"),
        ({"tags": None}, "body.tags"),
        ({"isBlocked": "maybe"}, "body.isBlocked"),
    ):
        r = await client.patch(f"/people/{contact['id']}", json=body, headers=office_a.headers)
        assert r.status_code == 400, body
        assert field in error_of(r)["details"]
    r = await client.patch("/people/x-1", json={"name": "Ana"}, headers=office_a.headers)
    assert "path.id" in error_of(r)["details"]
    assert (
        await client.get(f"/people/{contact['id']}", headers=office_a.headers)
    ).json() == contact
    assert await outbox(app, office_a.id, "contact.updated") == []


async def test_update_to_another_contacts_phone_is_409(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    first = await _create(client, office_a, phone="11987654321")
    second = await _create(client, office_a, name="Ana", phone="21998765432")
    r = await client.patch(
        f"/people/{second['id']}", json={"phone": "(11) 98765-4321"}, headers=office_a.headers
    )
    assert r.status_code == 409
    assert first["id"] in error_of(r)["details"]


# DELETE /people/{id}


async def test_delete_contact_cascades_to_its_conversations(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    inbox = await f.make_inbox(session, office_a.id)
    integration = await f.make_integration(session, office_a.id, inbox.id)
    tag = await f.make_tag(session, office_a.id, inbox.id)
    await session.commit()
    contact = await _create(client, office_a, tags=[tag.id])
    other = await _create(client, office_a, name="Ana", phone="21998765432")
    conversation = await f.make_conversation(session, office_a.id, contact["id"], integration)
    kept = await f.make_conversation(session, office_a.id, other["id"], integration)
    await session.commit()

    r = await client.delete(f"/people/{contact['id']}", headers=office_a.headers)
    assert r.status_code == 200
    assert r.json() == contact
    assert (
        await client.get(f"/people/{contact['id']}", headers=office_a.headers)
    ).status_code == 404
    session.expunge_all()
    assert await conversations.get_conversation(session, office_a.id, conversation.id) is None
    assert await conversations.get_conversation(session, office_a.id, kept.id) is not None
    events = await outbox(app, office_a.id, "contact.deleted")
    # Ids only: the deleted contact's data does not live on in the outbox.
    assert [e.data for e in events] == [
        {"id": contact["id"], "erased": False, "mergedIntoId": None}
    ]


async def test_deleting_a_contact_deletes_its_cards_with_their_events(
    app: FastAPI, client: httpx.AsyncClient, session: AsyncSession, office_a: OfficeFixture
) -> None:
    inbox = await f.make_inbox(session, office_a.id)
    integration = await f.make_integration(session, office_a.id, inbox.id)
    _funnel, columns = await f.make_funnel(session, office_a.id, inbox.id, columns=2)
    await session.commit()
    contact = await _create(client, office_a)
    other = await _create(client, office_a, name="Ana", phone="21998765432")
    conversation = await f.make_conversation(session, office_a.id, contact["id"], integration)
    card = await f.make_card(session, columns[0], contact["id"], conversation.id)
    kept = await f.make_card(session, columns[1], other["id"])
    await session.commit()

    r = await client.delete(f"/people/{contact['id']}", headers=office_a.headers)
    assert r.status_code == 200
    assert (
        await client.get(f"/funnel-column-card/{card.id}", headers=office_a.headers)
    ).status_code == 404
    assert (
        await client.get(f"/funnel-column-card/{kept.id}", headers=office_a.headers)
    ).status_code == 200
    deleted = await outbox(app, office_a.id, "crm.lead.deleted")
    assert [e.data["id"] for e in deleted] == [card.id]


async def test_delete_contact_bad_id_is_400(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    await _create(client, office_a)
    r = await client.delete("/people/bad id", headers=office_a.headers)
    assert r.status_code == 400
    assert "path.id" in error_of(r)["details"]
    assert await _count(client, office_a) == 1


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "/people"),
        ("GET", "/people"),
        ("GET", f"/people/{MISSING}"),
        ("PATCH", f"/people/{MISSING}"),
        ("DELETE", f"/people/{MISSING}"),
    ],
)
async def test_contact_routes_without_key_are_401(
    client: httpx.AsyncClient, method: str, path: str
) -> None:
    r = await client.request(method, path, json={"name": "Ana"})
    assert r.status_code == 401
    assert error_of(r)["code"] == "UNAUTHORIZED"


async def test_nul_characters_are_refused_with_400(
    client: httpx.AsyncClient, office_a: OfficeFixture
) -> None:
    """PostgreSQL cannot store NUL in text: it is refused before any query, never a 500."""
    r = await client.post("/people", json={"name": "Ma\x00ria"}, headers=office_a.headers)
    assert r.status_code == 400
    assert "body.name" in error_of(r)["details"]
    r = await client.post(
        "/people", json={"name": "Maria", "tags": ["c\x00"]}, headers=office_a.headers
    )
    assert "body.tags" in error_of(r)["details"]
    for params in ({"search": "a\x00b"}, {"inboxId": "\x00"}, {"tagIds": "\x00"}):
        r = await client.get("/people", params=params, headers=office_a.headers)
        assert r.status_code == 400, params
        assert error_of(r)["code"] == "VALIDATION_ERROR"
    r = await client.get("/people/c12345678%00", headers=office_a.headers)
    assert r.status_code == 400
    assert await _count(client, office_a) == 0
